// The process-wide collector session: one per process, started by whichever entry point comes first (the
// LD_PRELOAD constructor, the NVTX loader, the CUDA driver), and restarted lazily in a forked child.
//
// It owns the trace file and the Pipeline, wires the NVTX recorder, module and thread scans, the capture window
// (capture/capture_window.h) and the CUPTI session into it, and handles exit (forced flush under a watchdog, End
// record), fatal signals (write what is encoded, then die of the same signal) and fork (the child abandons the
// parent's writer and gets its own).
// Every function here is noexcept: they are reached from extern "C" entry points and NVTX handlers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "process/program_image.h"
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

// ---- exec and spawn (inject/src/process_interpose.cpp) ----
// What the session did before an exec, for session_exec_failed.
struct ExecTicket {
    enum class Action : uint8_t {
        None,       // nothing: the exec cannot work, no session, or a vfork child (see note)
        HandedOver, // the trace held nothing the new image's own trace will not: removed, the new image records
        Ended,      // the trace was finished with an Exec record and End (an untraceable image, or records to keep)
    };
    Action action = Action::None;
    int note = -1;  // a vfork child's note for its parent's writer (exec_records.h)
};
// Before this process execs `image` with `argv` (any thread; also in a vfork child, where it only leaves a note).
ExecTicket session_before_exec(const ProgramImage& image, char* const argv[]) noexcept;
// The exec returned: it failed with `error`. The process goes on, and so does its recording (a new trace file when
// the old one was ended or handed over, with a Status line saying why).
void session_exec_failed(const ExecTicket& ticket, const ProgramImage& image, int error) noexcept;
// posix_spawn started `pid` running `image`: an Exec record (spawned = 1) when it cannot be traced.
void session_spawned(int64_t pid, const ProgramImage& image, char* const argv[]) noexcept;

// From NVTX handlers.
void session_post_thread_name(uint64_t tid, std::string_view name) noexcept;
// From nvtx::attach_thread (first NVTX call of a thread): starts the session of a forked child on first use.
void session_on_new_stream() noexcept;

// The running pipeline, or null (inactive, not started, or after shutdown).
Pipeline* session_pipeline() noexcept;
// Asks the writer thread for an early drain (Pipeline::nudge): NVTX blocks are piling up.
void session_nudge_writer() noexcept;
// Path of this process's trace file ("" when none).
std::string session_trace_path();

}  // namespace gprof::collector
