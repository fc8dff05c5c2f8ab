// sigaction() and signal(), interposed when the collector is LD_PRELOADed, so that the program's own handlers of
// the termination signals are chained rather than replaced, and the program always sees its own dispositions
// (session/signals.h). Every other signal goes straight to glibc.
#include <dlfcn.h>
#include <signal.h>

#include "session/signals.h"

extern "C" {

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* __restrict act,
                                                     struct sigaction* __restrict old) noexcept {
    return gprof::collector::signals::program_sigaction(sig, act, old);
}

__attribute__((visibility("default"))) __sighandler_t signal(int sig, __sighandler_t handler) noexcept {
    return gprof::collector::signals::program_signal(sig, handler);
}

}  // extern "C"

namespace {

// Whether the program's calls reach the two functions above: only when this library comes first in the global
// scope (LD_PRELOAD). Loaded by dlopen (the driver, the NVTX loader) they are not, and the collector leaves the
// termination signals alone.
__attribute__((constructor(101))) void check_interposition() {
    Dl_info global{}, ours{};
    void* found = ::dlsym(RTLD_DEFAULT, "sigaction");
    bool interposed = found && ::dladdr(found, &global) &&
                      ::dladdr(reinterpret_cast<void*>(&check_interposition), &ours) &&
                      global.dli_fbase == ours.dli_fbase;
    gprof::collector::signals::set_interposed(interposed);
}

}  // namespace
