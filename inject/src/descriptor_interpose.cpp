// close, close_range, closefrom, dup, dup2 and dup3, interposed when the collector is LD_PRELOADed: the program's
// calls on a number the collector holds get what they would get without the collector (that number is not open
// there), and the collector's descriptor is never closed or replaced under it. Every other number goes straight to
// the system. See core/descriptors.h; the writer's check before each write covers what is not interposed.
#include <unistd.h>

#include "base/descriptors.h"

namespace d = gprof::collector::descriptors;

extern "C" {

__attribute__((visibility("default"))) int close(int fd) { return d::program_close(fd); }

__attribute__((visibility("default"))) int close_range(unsigned int first, unsigned int last, int flags) noexcept {
    return d::program_close_range(first, last, flags);
}

__attribute__((visibility("default"))) void closefrom(int lowest) noexcept { d::program_closefrom(lowest); }

__attribute__((visibility("default"))) int dup(int fd) noexcept { return d::program_dup(fd); }

__attribute__((visibility("default"))) int dup2(int fd, int onto) noexcept { return d::program_dup2(fd, onto); }

__attribute__((visibility("default"))) int dup3(int fd, int onto, int flags) noexcept {
    return d::program_dup3(fd, onto, flags);
}

}  // extern "C"

namespace {

// glibc's close and closefrom, found before anything can call them (a vfork child may, and must not run dlsym).
__attribute__((constructor(101))) void resolve_descriptor_functions() { d::resolve_real_functions(); }

}  // namespace
