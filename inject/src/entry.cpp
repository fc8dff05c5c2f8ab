// The collector library's entry points: the only symbols it exports (see exports.map).
//
//   InitializeInjection       the CUDA driver, during cuInit, when CUDA_INJECTION64_PATH names this library
//   InitializeInjectionNvtx2  the NVTX loader of each module that uses NVTX, when NVTX_INJECTION64_PATH names it
//   constructor / destructor  process start (LD_PRELOAD) or the first dlopen, and library unload / exit
//   _exit / _Exit             through LD_PRELOAD only: a process leaving without exit() (Python's os._exit in
//                             DataLoader and multiprocessing workers, a forked child's _exit) still finishes its
//                             trace, then leaves with the same status through the exit_group system call
//
// One session per process, whichever comes first; all are idempotent. Nothing may throw out of here.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "session/process_session.h"

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) {
    return gprof::collector::session_initialize_injection();
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* (*getExportTable)(uint32_t)) {
    return gprof::collector::session_initialize_nvtx(getExportTable);
}

__attribute__((visibility("default"), noreturn)) void _exit(int status) {
    gprof::collector::session_finish_before_exit();
    for (;;) ::syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status) {
    gprof::collector::session_finish_before_exit();
    for (;;) ::syscall(SYS_exit_group, status);
}

}  // extern "C"

namespace {

__attribute__((constructor)) void gprof_collector_load() { gprof::collector::session_preload_init(); }

// exit() runs our atexit handler first (registered at start, so after the app's own handlers); this covers
// paths where only destructors run. session_shutdown() is idempotent.
__attribute__((destructor)) void gprof_collector_unload() { gprof::collector::session_shutdown(); }

}  // namespace
