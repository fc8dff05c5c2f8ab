// The process session's state, shared by its two files (process_session.cpp: start, fork, exit, signals;
// exec.cpp: exec and spawn). Not for use outside session/.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "base/config.h"
#include "process/process_info.h"

namespace gprof::collector {

class Pipeline;
class TraceFile;
namespace nvtx {
class Recorder;
}

namespace session_detail {

struct ProcessRecorder;  // module and thread records on the writer thread (process_session.cpp)

struct State {
    Config config;
    bool config_parsed = false;
    bool active = false;
    bool inactive = false;
    TraceFile* file = nullptr;  // the trace's descriptor (leaked with its pipeline)
    std::string path;
    ProcessIdentity identity;
    Pipeline* pipeline = nullptr;
    nvtx::Recorder* recorder = nullptr;
    ProcessRecorder* process = nullptr;
    trace::Timestamp started_at = 0;
};

// The one state (never destroyed: used from atexit handlers and after static destructors), guarded by g_mutex.
State& state();
extern std::mutex g_mutex;
extern std::atomic<Pipeline*> g_pipeline;
extern std::atomic<bool> g_cuda_attempted;
extern std::atomic<bool> g_cuda_ok;
extern std::atomic<bool> g_shutdown_done;
extern std::atomic<bool> g_shutdown_finished;  // ... and over: the trace has its end (or was given up)
// When the end began, the NVTX event blocks then waiting for the writer, and the writer thread's CPU time then (the
// trace's last lines say the cost).
extern std::atomic<uint64_t> g_end_began_ns;
extern std::atomic<uint64_t> g_end_waiting_bytes;
extern std::atomic<uint64_t> g_end_writer_cpu_ns;
// The pid whose session is active (0: none). A vfork child runs our exec interposer with its parent's session in
// shared memory: its own pid differs.
extern std::atomic<int64_t> g_session_pid;
extern thread_local bool t_busy;  // ReentryGuard flag: an entry point reached again from inside our own code

// Starts this process's session if it has none (g_mutex held).
void ensure_started_locked();
// The CUPTI session writes into `pipeline` from now on: capture window, periodic flush.
void attach_cuda(Pipeline& pipeline);

// Why a session ends.
enum class EndCause : uint8_t { Exit, Exec, Signal };
// Ends this process's session: the CUPTI forced flush, a word on missing CUDA activity, `before_end` (may be null),
// the capture window, the last drain and the End record. Once per session (exit, exec or signal, whichever first).
void finish_session(EndCause cause, int sig, void (*before_end)(void* ctx, Pipeline& pipeline), void* ctx) noexcept;

}  // namespace session_detail
}  // namespace gprof::collector
