// The collector library's entry points: the only symbols it exports (see exports.map).
//
//   InitializeInjection       the CUDA driver, during cuInit, when CUDA_INJECTION64_PATH names this library
//   InitializeInjectionNvtx2  the NVTX loader of each module that uses NVTX, when NVTX_INJECTION64_PATH names it
//   constructor / destructor  process start (LD_PRELOAD) or the first dlopen, and library unload / exit
//
// One session per process, whichever comes first; all are idempotent. Nothing may throw out of here.
#include <cstdint>

#include "session.h"

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) {
    return gprof::collector::session_initialize_injection();
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* (*getExportTable)(uint32_t)) {
    return gprof::collector::session_initialize_nvtx(getExportTable);
}

}  // extern "C"

namespace {

__attribute__((constructor)) void gprof_collector_load() { gprof::collector::session_preload_init(); }

// exit() runs our atexit handler first (registered at start, so after the app's own handlers); this covers
// paths where only destructors run. session_shutdown() is idempotent.
__attribute__((destructor)) void gprof_collector_unload() { gprof::collector::session_shutdown(); }

}  // namespace
