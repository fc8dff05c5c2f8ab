// The process-wide collector session: one per process, started by whichever entry point comes first (the
// LD_PRELOAD constructor, the NVTX loader, the CUDA driver), and restarted lazily in a forked child.
//
// It owns the trace file and the Pipeline, wires the NVTX recorder, module and thread scans, the capture window
// (core/capture_window.h) and the CUPTI session into it, and handles exit (forced flush under a watchdog, End
// record), fatal signals (write what is encoded, then die of the same signal) and fork (the child abandons the
// parent's writer and gets its own).
// Every function here is noexcept: they are reached from extern "C" entry points and NVTX handlers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nvtx/handlers.h"

namespace gprof::collector {

class Pipeline;

// The three entry points (inject/ calls these).
void session_preload_init() noexcept;                             // LD_PRELOAD / dlopen constructor
int session_initialize_injection() noexcept;                      // InitializeInjection (CUDA driver)
int session_initialize_nvtx(nvtx::GetExportTable table) noexcept; // InitializeInjectionNvtx2: 1 = attached
// atexit / library destructor: forced CUPTI flush under a watchdog, final NVTX drain, End record. Idempotent.
void session_shutdown() noexcept;
// From the _exit/_Exit interposers: session_shutdown() when it is safe — only in the process that owns the
// session (never in a vfork child, which shares its parent's memory) and only when no thread of ours holds the
// session lock (the app may call _exit from a signal handler). Otherwise nothing: the periodic flush has
// already written all but the last period.
void session_finish_before_exit() noexcept;

// From NVTX handlers.
void session_post_thread_name(uint64_t tid, std::string_view name) noexcept;
// From nvtx::attach_thread (first NVTX call of a thread): starts the session of a forked child on first use.
void session_on_new_stream() noexcept;

// The running pipeline, or null (inactive, not started, or after shutdown).
Pipeline* session_pipeline() noexcept;
// Path of this process's trace file ("" when none).
std::string session_trace_path();

}  // namespace gprof::collector
