#include "core/session.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "core/capture_window.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/log.h"
#include "core/process_info.h"
#include "core/reentry.h"
#include "cupti/session.h"
#include "gprof/version.h"
#include "nvtx/capture.h"
#include "nvtx/names.h"
#include "nvtx/recorder.h"
#include "nvtx/stream.h"
#include "pipeline/pipeline.h"

namespace gprof::collector {

namespace tr = gprof::trace;

namespace {

constexpr auto kExitWatchdog = std::chrono::seconds(3);

// Module and thread records, and the capture window's clock: a Pipeline hook on the writer thread.
struct ProcessRecorder {
    ModuleScanner modules;
    ThreadNamer threads;
    nvtx::Recorder* nvtx = nullptr;
    uint64_t ticks = 0;

    static void hook(void* ctx, tr::TraceWriter& w, bool final) { static_cast<ProcessRecorder*>(ctx)->run(w, final); }

    void run(tr::TraceWriter& w, bool final) {
        if (ticks++ % 10 == 0 || final) modules.scan(w);  // libraries dlopen'ed later (CUDA, CUPTI, plugins)
        if (nvtx) {
            for (uint64_t tid : nvtx->new_threads()) threads.from_comm(w, tid);
            nvtx->clear_new_threads();
        }
        if (final) threads.scan_all(w);
        else capture_window().tick(clock::now());  // the delay's and the duration's edges
    }
};

struct State {
    Config config;
    bool config_parsed = false;
    bool active = false;
    bool inactive = false;
    int fd = -1;
    std::string path;
    ProcessIdentity identity;
    Pipeline* pipeline = nullptr;
    nvtx::Recorder* recorder = nullptr;
    ProcessRecorder* process = nullptr;
    tr::Timestamp started_at = 0;
    bool process_hooks_installed = false;
};

std::mutex g_mutex;
State& state() {
    static State* s = new State();  // leaked: used from atexit handlers and after static destructors
    return *s;
}
std::atomic<Pipeline*> g_pipeline{nullptr};
std::atomic<bool> g_child_pending{false};
std::atomic<bool> g_cuda_attempted{false};
std::atomic<bool> g_cuda_ok{false};
// A forked child of a process that had initialised CUDA: the driver is loaded but belongs to the parent's
// initialisation; a child that never calls CUDA is no CUDA failure.
std::atomic<bool> g_cuda_inherited{false};
std::atomic<bool> g_nvtx_attached{false};
std::atomic<bool> g_shutdown_done{false};
std::atomic<bool> g_in_fatal{false};
thread_local bool t_busy = false;  // ReentryGuard flag: an entry point reached again from inside our own code

// ---- fatal signals ----

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[NSIG];
bool g_signals_installed = false;

void on_fatal_signal(int sig, siginfo_t* info, void*) {
    // Async-signal-safe only: atomics, one write(2) inside the writer, sigaction, raise.
    int saved_errno = errno;
    if (!g_in_fatal.exchange(true)) {
        if (Pipeline* p = g_pipeline.load(std::memory_order_acquire)) p->flush_from_signal_handler();
    }
    // Put back what the app had (its handler or the default) so the signal ends the process exactly as it
    // would have without us.
    ::sigaction(sig, &g_previous[sig], nullptr);
    // A fault raised by the kernel (si_code > 0) repeats when we return; a signal sent by kill/raise/abort
    // does not, so send it again: it stays pending until we return, then takes the restored disposition.
    if (!info || info->si_code <= 0) ::raise(sig);
    errno = saved_errno;
}

void install_signal_handlers() {
    if (g_signals_installed) return;
    g_signals_installed = true;
    for (int sig : kFatalSignals) {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        struct sigaction old;
        if (::sigaction(sig, &sa, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN && sig != SIGABRT) {
            // The app ignores it: keep it that way (a fault it ignores still kills it, as before).
            ::sigaction(sig, &old, nullptr);
            continue;
        }
        g_previous[sig] = old;
    }
}

// ---- start ----

void ensure_started_locked();

void on_fork_prepare() { g_mutex.lock(); }
void on_fork_parent() { g_mutex.unlock(); }
void on_fork_child();

void at_exit_handler() { session_shutdown(); }

void ensure_started_locked() {
    State& s = state();
    if (!s.config_parsed) {
        try {
            s.config = parse_config();
        } catch (...) {
            s.config = Config{};
        }
        s.config_parsed = true;
        log::init(s.config.log_level);
        static bool process_hooks = false;
        if (!process_hooks) {
            // Once per process image: both survive fork, and the child handler re-arms the session.
            process_hooks = true;
            ::pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
            std::atexit(at_exit_handler);
        }
    }
    if (s.active || s.inactive) return;
    g_child_pending.store(false);

    int64_t pid = ::getpid();
    if (s.config.inactive_for(pid)) {
        // GPROF_NO_CHILDREN: not the root process. No file, no thread, NVTX handlers record nothing.
        s.inactive = true;
        nvtx::g_recording.store(false);
        log::debug("pid {} is not the root process {}: not recording", pid, s.config.root_pid);
        return;
    }
    nvtx::g_recording.store(true);
    clock::init();
    try {
        s.identity.gather();
        remove_header_only_traces(s.config.output_dir, pid);  // this pid's pre-exec image, if it left one
        int fd = create_trace_file(s.config.output_dir, s.identity.exe_basename(), pid, s.path);
        if (fd < 0) {
            int err = errno;
            log::warn("cannot create the trace file {}: {}; this process is not recorded", s.path, std::strerror(err));
            s.inactive = true;
            nvtx::g_recording.store(false);
            return;
        }
        tr::HeaderInfo h;
        h.features = (s.config.backtrace_depth > 0 ? static_cast<uint32_t>(tr::kFeatureBacktraces) : 0u) |
                     (s.config.nested_driver_calls ? static_cast<uint32_t>(tr::kFeatureNestedDriverCalls) : 0u);
        h.producer = GPROF_PRODUCER;
        h.pid = s.identity.pid;
        h.ppid = s.identity.ppid;
        h.hostname = s.identity.hostname.c_str();
        h.executable = s.identity.executable.c_str();
        h.argv = s.identity.argv.data();
        h.argc = static_cast<uint32_t>(s.identity.argv.size());
        h.clock = clock::reference();
        h.run_id = s.config.run_id.c_str();
        s.started_at = h.clock.trace_ns;

        auto* pipeline = new Pipeline();
        Pipeline::Options po;
        po.flush_ms = s.config.flush_ms;
        s.fd = fd;
        if (!pipeline->start(fd, h, po)) {
            log::warn("cannot start writing {}; this process is not recorded", s.path);
            s.inactive = true;
            s.fd = -1;
            nvtx::g_recording.store(false);
            return;  // pipeline leaked: it may hold a failed thread object
        }
        CaptureWindow::Options wo = CaptureWindow::options_for(s.config, s.started_at);
        nvtx::Recorder::Options ro;
        ro.window_start = wo.open_at;
        ro.window_end = wo.close_at;
        auto* recorder = new nvtx::Recorder(ro);
        auto* process = new ProcessRecorder();
        process->nvtx = recorder;
        pipeline->add_periodic_hook(nvtx::Recorder::hook, recorder);
        pipeline->add_periodic_hook(ProcessRecorder::hook, process);

        for (const std::string& w : s.config.warnings) {
            log::warn("{}", w);
            pipeline->post_status(tr::Component::Collector, tr::StatusLevel::Warning, 0, w);
        }
        pipeline->post_status(tr::Component::Collector, tr::StatusLevel::Info, 0,
                              std::string("collector attached; trace clock: ") +
                                  (clock::uses_tsc() ? "TSC calibrated to CLOCK_MONOTONIC" : "CLOCK_MONOTONIC") +
                                  "; nvtx " + (s.config.trace_nvtx ? "on" : "off") + ", cuda " +
                                  (s.config.trace_cuda ? "on" : "off"));
        capture_window().begin(pipeline, wo, s.started_at);
        if (s.config.capture == CaptureMode::NvtxRange) {
            nvtx::CaptureTarget target;
            target.name = s.config.capture_nvtx_name;
            target.domain = s.config.capture_nvtx_domain;
            target.any_domain = s.config.capture_nvtx_any_domain;
            nvtx::arm_capture(target);
        }

        s.pipeline = pipeline;
        s.recorder = recorder;
        s.process = process;
        s.active = true;
        g_pipeline.store(pipeline, std::memory_order_release);
        install_signal_handlers();
        log::debug("tracing pid {} into {}", pid, s.path);
    } catch (...) {
        log::warn("collector start failed (out of memory?); this process is not recorded");
        s.inactive = true;
        nvtx::g_recording.store(false);
    }
}

void on_fork_child() {
    // Only this thread exists in the child. The parent's pipeline (its thread is gone, its open chunk holds
    // the parent's records) is abandoned without writing; CUPTI state is unusable here.
    State& s = state();
    if (s.pipeline) {
        s.pipeline->abandon_after_fork();
        if (s.fd >= 0) ::close(s.fd);  // our copy of the descriptor; the parent's stays open
    }
    g_pipeline.store(nullptr);
    s.pipeline = nullptr;  // leaked with its writer: destroying it would write
    s.recorder = nullptr;
    s.process = nullptr;
    s.fd = -1;
    s.path.clear();
    s.active = false;
    s.inactive = false;
    g_cuda_inherited.store(g_cuda_attempted.load() || g_cuda_inherited.load());
    if (g_cuda_attempted.load()) {
        try {
            cupti::Session::instance().abandon_after_fork();
        } catch (...) {
        }
    }
    g_cuda_attempted.store(false);
    g_cuda_ok.store(false);
    g_shutdown_done.store(false);
    g_in_fatal.store(false);
    capture_window().reset_after_fork();
    nvtx::reset_capture_after_fork();
    nvtx::reset_after_fork();
    nvtx::names().reset_after_fork();
    g_mutex.unlock();  // taken in on_fork_prepare
    // Every process of the tree gets its own trace from its start, fork-only children too (a DataLoader
    // worker leaves through os._exit and may never call NVTX or CUDA). A child that execs leaves a trace that
    // holds only its header; the new image removes it as it starts (remove_header_only_traces).
    if (s.config.inactive_for(::getpid())) {
        s.inactive = true;
        nvtx::g_recording.store(false);
    } else {
        g_child_pending.store(true);
        session_preload_init();
    }
}

template <class Fn> bool run_with_watchdog(std::chrono::milliseconds limit, Fn fn) {
    struct Shared {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
    };
    auto shared = std::make_shared<Shared>();
    try {
        std::thread t([shared, fn]() mutable {
            try {
                fn();
            } catch (...) {
            }
            std::lock_guard lock(shared->m);
            shared->done = true;
            shared->cv.notify_all();
        });
        std::unique_lock lock(shared->m);
        bool ok = shared->cv.wait_for(lock, limit, [&] { return shared->done; });
        lock.unlock();
        if (ok) t.join();
        else t.detach();  // stuck in CUPTI or the disk: let exit go on without it
        return ok;
    } catch (...) {
        // No thread could be made: run inline (cannot be bounded, but must not be skipped).
        fn();
        return true;
    }
}

}  // namespace

void session_preload_init() noexcept {
    ReentryGuard guard(t_busy);
    if (!guard.entered()) return;
    try {
        std::lock_guard lock(g_mutex);
        ensure_started_locked();
    } catch (...) {
    }
}

void session_on_new_stream() noexcept {
    if (!g_child_pending.load(std::memory_order_acquire)) return;
    session_preload_init();
}

int session_initialize_nvtx(nvtx::GetExportTable table) noexcept {
    ReentryGuard guard(t_busy);
    if (!guard.entered()) return 0;
    try {
        bool events = false, capture = false;
        {
            std::lock_guard lock(g_mutex);
            ensure_started_locked();
            events = state().active && state().config.trace_nvtx;
            capture = state().active && state().config.capture == CaptureMode::NvtxRange;
        }
        // Once per module that uses NVTX (an app and each of its libraries with their own NVTX copy): every
        // module's table points at the same handlers, hence one state. An NVTX capture range needs the handlers
        // even when NVTX itself is not traced (--trace cuda -c nvtx:NAME).
        if ((events || capture) && nvtx::attach(table, events)) {
            if (!g_nvtx_attached.exchange(true)) log::debug("NVTX handlers attached");
            return 1;
        }
    } catch (...) {
    }
    return 0;  // the NVTX loader unloads the tool and NVTX calls stay no-ops
}

namespace {

cupti::SessionOptions cupti_options(const Config& config) {
    cupti::SessionOptions so;
    so.load = cupti::load_options_from_environment();
    so.buffer_bytes = static_cast<size_t>(config.buffer_mb) << 20;
    so.start_paused = !capture_window().is_open();
    so.backtrace_depth = config.backtrace_depth;
    so.graph_level = config.graph_trace == GraphTrace::Graph;
    so.nested_driver_calls = config.nested_driver_calls;
    so.timestamp = &gprof_collector_cupti_timestamp;
    so.profiler_range = [](bool start) {
        // From inside the cudaProfilerStart/Stop callback.
        if (start) capture_window().open_range(tr::CaptureReason::ProfilerApi, clock::now());
        else capture_window().close_range(tr::CaptureReason::ProfilerApi, clock::now());
    };
    return so;
}

}  // namespace

int session_initialize_injection() noexcept {
    ReentryGuard guard(t_busy);
    if (!guard.entered()) return 1;
    try {
        Pipeline* pipeline = nullptr;
        Config config;
        {
            std::lock_guard lock(g_mutex);
            ensure_started_locked();
            if (state().active) {
                pipeline = state().pipeline;
                config = state().config;
            }
        }
        if (!pipeline || g_cuda_attempted.exchange(true)) return 1;
        if (!config.trace_cuda) {
            pipeline->post_status(tr::Component::Cupti, tr::StatusLevel::Info, 0,
                                  "CUDA activity not recorded: turned off (GPROF_TRACE)");
            return 1;
        }
        // No lock of ours is held: CUPTI may call back (buffers, resources) on this or other threads.
        auto& session = cupti::Session::instance();
        cupti::StartResult r = session.start(*pipeline, cupti_options(config));
        if (!r.ok) {
            std::string line = "CUDA activity not recorded: " + r.reason;
            log::warn("{}", line);
            pipeline->post_status(tr::Component::Cupti, tr::StatusLevel::Warning, r.code, line);
            return 1;
        }
        g_cuda_ok.store(true);
        // The window may have moved while CUPTI was starting: from here on it switches CUPTI itself.
        capture_window().attach_cupti(&session);
        pipeline->add_periodic_hook(
            [](void*, tr::TraceWriter&, bool final) {
                // Periodic flush: completed buffers reach the file within one period. The forced flush at exit
                // runs separately, under a watchdog.
                if (!final) cupti::Session::instance().flush(false);
            },
            nullptr);
    } catch (...) {
    }
    return 1;
}

void session_post_thread_name(uint64_t tid, std::string_view name) noexcept {
    Pipeline* p = g_pipeline.load(std::memory_order_acquire);
    if (!p) return;
    try {
        ProcessRecorder* process = nullptr;
        {
            std::lock_guard lock(g_mutex);
            process = state().process;
        }
        if (!process) return;
        p->post([process, tid, text = std::string(name)](tr::TraceWriter& w) { process->threads.from_nvtx(w, tid, text); });
    } catch (...) {
    }
}

void session_shutdown() noexcept {
    if (g_shutdown_done.exchange(true)) return;
    try {
        Pipeline* pipeline = nullptr;
        Config config;
        {
            std::lock_guard lock(g_mutex);
            if (!state().active) return;
            pipeline = state().pipeline;
            config = state().config;
        }
        if (g_cuda_ok.load()) {
            bool ok = run_with_watchdog(kExitWatchdog, [] { cupti::Session::instance().flush(true); });
            if (!ok) {
                log::warn("CUPTI's final flush did not return within 3 s; GPU records since the last flush are missing");
                pipeline->post_status(tr::Component::Cupti, tr::StatusLevel::Warning, 0,
                                      "CUPTI forced flush at exit timed out (3 s): recent GPU records missing");
            }
        } else if (config.trace_cuda && !g_cuda_attempted.load() && !g_cuda_inherited.load() &&
                   looks_like_cuda_program()) {
            // The driver never called InitializeInjection: say why a CUDA program has no GPU activity.
            std::string reason = cuda_driver_loaded()
                                     ? "the CUDA driver was loaded but never initialised (cuInit failed or was not "
                                       "called, or CUDA_INJECTION64_PATH was not set)"
                                     : "no CUDA driver in this process (libcuda.so.1 was not loaded: no NVIDIA "
                                       "driver installed, or the program failed before initialising CUDA)";
            log::warn("CUDA activity not recorded: {}", reason);
            pipeline->post_status(tr::Component::Driver, tr::StatusLevel::Warning, 0,
                                  "CUDA activity not recorded: " + reason);
        }
        capture_window().close_at_exit(clock::now());
        bool finished = run_with_watchdog(kExitWatchdog, [pipeline] { pipeline->finish(); });
        if (!finished) log::warn("the trace writer did not finish within 3 s; the trace may lack its end");
        g_pipeline.store(nullptr, std::memory_order_release);
        nvtx::g_recording.store(false, std::memory_order_relaxed);
        log::debug("trace written to {}", session_trace_path());
    } catch (...) {
    }
}

void session_finish_before_exit() noexcept {
    if (t_busy || g_in_fatal.load()) return;  // inside our own code, or dying of a signal
    if (!g_mutex.try_lock()) return;
    State& s = state();
    bool ours = s.active && s.identity.pid == static_cast<int64_t>(::syscall(SYS_getpid));
    g_mutex.unlock();
    if (ours) session_shutdown();
}

Pipeline* session_pipeline() noexcept { return g_pipeline.load(std::memory_order_acquire); }

std::string session_trace_path() {
    std::lock_guard lock(g_mutex);
    return state().path;
}

}  // namespace gprof::collector
