#include "session/process_session.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "capture/capture_window.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/descriptors.h"
#include "session/exec_records.h"
#include "session/gpu_metrics.h"
#include "base/log.h"
#include "process/process_info.h"
#include "process/trace_file.h"
#include "base/reentry.h"
#include "session/self_report.h"
#include "session/session_state.h"
#include "session/signals.h"
#include "cupti/session.h"
#include "gprof/version.h"
#include "nvtx/capture.h"
#include "nvtx/names.h"
#include "nvtx/recorder.h"
#include "nvtx/session_hooks.h"
#include "nvtx/stream.h"
#include "pipeline/pipeline.h"
#include "sampling/drain.h"
#include "sampling/osrt.h"
#include "sampling/sampler.h"
#include "sampling/threads.h"
#include "stacks/stack_table.h"
#include "stacks/unwind.h"

namespace gprof::collector {

namespace tr = gprof::trace;

namespace session_detail {

// Module and thread records, and the capture window's clock: a Pipeline hook on the writer thread.
struct ProcessRecorder {
    ModuleScanner modules;
    ThreadNamer threads;
    nvtx::Recorder* nvtx = nullptr;
    TraceFile* file = nullptr;
    uint64_t ticks = 0;

    static void hook(void* ctx, tr::TraceWriter& w, bool final) { static_cast<ProcessRecorder*>(ctx)->run(w, final); }

    void run(tr::TraceWriter& w, bool final) {
        if (ticks++ % 10 == 0 || final) modules.scan(w);  // libraries dlopen'ed later (CUDA, CUPTI, plugins)
        write_notes(w);  // children started by vfork + exec that cannot be traced
        if (nvtx) {
            for (uint64_t tid : nvtx->new_threads()) threads.from_comm(w, tid);
            nvtx->clear_new_threads();
            for (const auto& [tid, name] : nvtx->ended_threads()) threads.from_exit(w, tid, name);
            nvtx->clear_ended_threads();
        }
        if (final) {
            threads.scan_all(w);  // only now: a scan while the program runs opens descriptors under it (ThreadNamer)
            say_descriptors(w);
            say_end(w);
        } else {
            capture_window().tick(clock::now());  // the delay's and the duration's edges
        }
    }

    // What the end cost: the NVTX events that were waiting when it began, and the time to here (their last drain and
    // encoding; the CUPTI forced flush), of which the writer thread's CPU (the rest: waiting for a core, or for
    // CUPTI). Measured figures: docs/performance.md ("Exit").
    void say_end(tr::TraceWriter& w) {
        uint64_t began = g_end_began_ns.load(std::memory_order_acquire);
        uint64_t waiting = g_end_waiting_bytes.load(std::memory_order_relaxed);
        if (began == 0 || waiting == 0) return;
        uint64_t cpu_then = g_end_writer_cpu_ns.load(std::memory_order_relaxed);
        Pipeline* p = g_pipeline.load(std::memory_order_acquire);
        uint64_t cpu_now = p ? p->writer_cpu_ns() : 0;
        char cpu[64] = "";
        if (cpu_then && cpu_now >= cpu_then)
            std::snprintf(cpu, sizeof cpu, " (%.0f ms of the writer thread's CPU)", double(cpu_now - cpu_then) / 1e6);
        char text[240];
        std::snprintf(text, sizeof text,
                      "the end: %.1f MiB of NVTX event blocks were waiting for the writer when the process began to "
                      "end; read and written in %.0f ms%s",
                      double(waiting) / double(1 << 20), double(clock::now() - began) / 1e6, cpu);
        write_status(w, tr::Component::Collector, tr::StatusLevel::Info, text);
    }

    // What the program did to the collector's descriptors (base/descriptors.h), when it did anything.
    void say_descriptors(tr::TraceWriter& w) {
        descriptors::Figures f = descriptors::figures();
        uint32_t reopened = file ? file->reopened() : 0;
        if (f.refused + f.moved + f.taken + reopened == 0) return;
        write_status(w, tr::Component::Collector, tr::StatusLevel::Info, "the program's calls on the collector's descriptors: " + std::to_string(f.refused) +
                          " close/dup refused as without gprof-run (EBADF, or the ranges around them closed), " +
                          std::to_string(f.moved) + " dup2 onto them (ours stepped aside), " +
                          std::to_string(f.taken) + " numbers given up to the program; the trace opened again " +
                          std::to_string(reopened) + (reopened == 1 ? " time" : " times"));
    }
};

std::mutex g_mutex;
State& state() {
    static State* s = new State();  // leaked: used from atexit handlers and after static destructors
    return *s;
}
std::atomic<Pipeline*> g_pipeline{nullptr};
std::atomic<bool> g_cuda_attempted{false};
std::atomic<bool> g_cuda_ok{false};
std::atomic<bool> g_shutdown_done{false};
std::atomic<bool> g_shutdown_finished{false};
std::atomic<uint64_t> g_end_began_ns{0};
std::atomic<uint64_t> g_end_waiting_bytes{0};
std::atomic<uint64_t> g_end_writer_cpu_ns{0};
std::atomic<int64_t> g_session_pid{0};
thread_local bool t_busy = false;

}  // namespace session_detail

using namespace session_detail;

namespace {

constexpr auto kExitWatchdog = std::chrono::seconds(3);
// A signal's handler waits signals::kSignalFinishWaitMs for the whole end: each step gets less.
constexpr auto kSignalWatchdog = std::chrono::milliseconds(1200);

std::atomic<bool> g_child_pending{false};
// This process image began as a fork of a traced process: what it has of CUDA (libcudart, libcuda, even an
// initialised driver) came from its parent. It is judged by its own CUDA calls only: the driver calling
// InitializeInjection in it. A child that never calls CUDA has no CUDA failure to report.
std::atomic<bool> g_cuda_inherited{false};
std::atomic<bool> g_nvtx_attached{false};

// ---- start ----

void end_by_signal(int sig);

void on_fork_prepare() { g_mutex.lock(); }
void on_fork_parent() { g_mutex.unlock(); }
void on_fork_child();

void at_exit_handler() { session_shutdown(); }

// ---- start, in steps ----

// Once per process image: the configuration, the log, the fork and exit handlers, NVTX's hooks into the session.
void read_config_once(State& s) {
    if (s.config_parsed) return;
    try {
        s.config = parse_config();
    } catch (...) {
        s.config = Config{};
    }
    s.config_parsed = true;
    log::init(s.config.log_level);
    remember_collector_name();
    static bool process_hooks = false;
    if (!process_hooks) {
        // Once per process image: both survive fork, and the child handler re-arms the session.
        process_hooks = true;
        nvtx::set_session_hooks({session_on_new_stream, session_nudge_writer, session_post_thread_name});
        ::pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
        std::atexit(at_exit_handler);
        std::at_quick_exit(at_exit_handler);  // quick_exit runs no atexit handler, and its _exit is glibc's own
    }
}

// This process records nothing (not the root under GPROF_NO_CHILDREN, or no trace file): no file, no thread, NVTX
// handlers record nothing.
void stay_inactive(State& s) {
    s.inactive = true;
    nvtx::g_recording.store(false);
}

// The trace file with its header, and the pipeline writing it. False (s inactive, said on stderr) when either fails.
bool open_trace(State& s, int64_t pid) {
    s.identity.gather();
    remove_header_only_traces(s.config.output_dir, pid);  // this pid's pre-exec image, if it left one
    int fd = create_trace_file(s.config.output_dir, s.identity.exe_basename(), pid, s.path);
    if (fd < 0) {
        int err = errno;
        log::warn("cannot create the trace file {}: {}; this process is not recorded", s.path, std::strerror(err));
        stay_inactive(s);
        return false;
    }
    tr::HeaderInfo h;
    h.features = (s.config.backtrace_depth > 0 ? static_cast<uint32_t>(tr::kFeatureBacktraces) : 0u) |
                 (s.config.nested_driver_calls ? static_cast<uint32_t>(tr::kFeatureNestedDriverCalls) : 0u) |
                 (s.config.trace_cuda ? 0u : static_cast<uint32_t>(tr::kFeatureCudaNotTraced)) |
                 (s.config.trace_nvtx ? 0u : static_cast<uint32_t>(tr::kFeatureNvtxNotTraced));
    h.producer = GPROF_PRODUCER;
    h.pid = s.identity.pid;
    h.ppid = s.identity.ppid;
    h.hostname = s.identity.hostname.c_str();
    h.boot_id = s.identity.boot_id.c_str();
    h.pid_ns = s.identity.pid_ns;
    h.executable = s.identity.executable.c_str();
    h.argv = s.identity.argv.data();
    h.argc = static_cast<uint32_t>(s.identity.argv.size());
    h.clock = clock::reference();
    h.run_id = s.config.run_id.c_str();
    s.started_at = h.clock.trace_ns;

    auto* file = new TraceFile();  // leaked with its pipeline (a forked child or a failed exec abandons both)
    file->adopt(fd, s.path);
    auto* pipeline = new Pipeline();
    Pipeline::Options po;
    po.flush_ms = s.config.flush_ms;
    po.guard = file;
    s.file = file;
    if (!pipeline->start(file->descriptor(), h, po)) {
        // A file that could not even take its header (a full disk) is no result: remove it.
        int err = pipeline->write_error();
        ::unlink(s.path.c_str());
        log::warn("cannot write the trace file {}{}{}; this process is not recorded", s.path, err ? ": " : "",
                  err ? std::strerror(err) : "");
        s.file = nullptr;  // closed by the writer
        stay_inactive(s);
        return false;  // pipeline leaked: it may hold a failed thread object
    }
    s.pipeline = pipeline;
    return true;
}

// The writer thread's periodic work: the NVTX drain, module and thread records, the self-report.
void add_recorders(State& s, const CaptureWindow::Options& window) {
    nvtx::Recorder::Options ro;
    ro.window_start = window.open_at;
    ro.window_end = window.close_at;
    auto* recorder = new nvtx::Recorder(ro);
    auto* process = new ProcessRecorder();
    process->nvtx = recorder;
    process->file = s.file;
    s.pipeline->add_periodic_hook(nvtx::Recorder::hook, recorder, /*also_on_nudge=*/true);
    s.pipeline->add_periodic_hook(ProcessRecorder::hook, process);
    if (s.config.sample || s.config.trace_osrt) {
        // CPU samples and OS-runtime calls: read from the threads' rings every period (sampling/drain.h).
        stacks::table().configure(s.config.call_site_max_stacks);
        s.pipeline->add_periodic_hook(sampling::Drain::hook, new sampling::Drain(*s.pipeline));
    }
    s.pipeline->add_periodic_hook(self_report_hook, s.pipeline);  // after the NVTX drain: its final figures
    s.recorder = recorder;
    s.process = process;
}

// The first records: the process's rank, the configuration's warnings, what is recorded.
void post_opening_records(State& s) {
    Pipeline* pipeline = s.pipeline;
    ProcessRole role = ProcessRole::from_environment();
    if (role.known()) {
        pipeline->post([role](tr::TraceWriter& w) {
            tr::Role r;
            r.rank = role.rank;
            r.local_rank = role.local_rank;
            r.world_size = role.world_size;
            r.variables = w.intern(role.variables.data(), role.variables.size());
            if (!role.job.empty()) r.job = w.intern(role.job.data(), role.job.size());
            w.add(r);
        });
    }
    for (const std::string& w : s.config.warnings) {
        log::warn("{}", w);
        pipeline->post_status(tr::Component::Collector, tr::StatusLevel::Warning, 0, w);
    }
    pipeline->post_status(tr::Component::Collector, tr::StatusLevel::Info, 0,
                          std::string("collector attached; trace clock: ") +
                              (clock::uses_tsc() ? "TSC calibrated to CLOCK_MONOTONIC" : "CLOCK_MONOTONIC") +
                              "; nvtx " + (s.config.trace_nvtx ? "on" : "off") + ", cuda " +
                              (s.config.trace_cuda ? "on" : "off"));
}

// The capture window opens (or waits for its delay or range); an NVTX capture range is armed.
void open_capture_window(State& s, const CaptureWindow::Options& window) {
    capture_window().begin(s.pipeline, window, s.started_at);
    if (s.config.capture == CaptureMode::NvtxRange) {
        nvtx::CaptureTarget target;
        target.name = s.config.capture_nvtx_name;
        target.domain = s.config.capture_nvtx_domain;
        target.any_domain = s.config.capture_nvtx_any_domain;
        nvtx::arm_capture(target);
    }
}

// CPU sampling and the OS-runtime trace, once the signals are in place. Both need the collector preloaded: the
// sampler keeps the program's SIGPROF disposition through the sigaction interposer, and the OS-runtime calls are
// interposed functions. Otherwise one Status line says why there are none.
void start_sampling(State& s) {
    Pipeline* pipeline = s.pipeline;
    // Samples, OS-runtime call sites and CUDA call sites unwind: the unwinder's first use now, its descriptors out of
    // the program's way (stacks/unwind.h).
    if (s.config.sample || s.config.trace_osrt || s.config.backtrace_depth > 0) stacks::init_unwinder();
    if (s.config.sample) {
        if (signals::take_sampling_signal(&sampling::on_signal)) {
            sampling::SamplerOptions so;
            so.frequency_hz = s.config.sampling_frequency;
            sampling::start(so);
            pipeline->post_status(tr::Component::Collector, tr::StatusLevel::Info, 0,
                                  "CPU sampling on: every thread at " + std::to_string(s.config.sampling_frequency) +
                                      " Hz of its CPU time (SIGPROF, a CPU-time timer per thread)");
        } else {
            pipeline->post_status(tr::Component::Collector, tr::StatusLevel::Warning, 0,
                                  "CPU sampling off: it needs the collector preloaded (gprof-run does this) and SIGPROF "
                                  "not ignored by the program");
        }
    }
    if (s.config.trace_osrt) {
        sampling::OsrtOptions oo;
        oo.threshold_ns = s.config.osrt_threshold_ns;
        oo.backtrace_threshold_ns = s.config.osrt_backtrace_threshold_ns;
        sampling::start_osrt(oo);
    }
}

}  // namespace

void session_detail::ensure_started_locked() {
    State& s = state();
    read_config_once(s);
    if (s.active || s.inactive) return;
    g_child_pending.store(false);

    OwnWork own;  // the session's own files and threads are not the program's
    int64_t pid = ::getpid();
    if (s.config.inactive_for(pid)) {
        stay_inactive(s);
        log::debug("pid {} is not the root process {}: not recording", pid, s.config.root_pid);
        return;
    }
    nvtx::g_recording.store(true);
    clock::init();
    try {
        if (!open_trace(s, pid)) return;
        CaptureWindow::Options window = CaptureWindow::options_for(s.config, s.started_at);
        add_recorders(s, window);
        post_opening_records(s);
        open_capture_window(s, window);
        s.active = true;
        g_pipeline.store(s.pipeline, std::memory_order_release);
        g_session_pid.store(pid, std::memory_order_release);
        signals::install(end_by_signal);
        start_sampling(s);
        log::debug("tracing pid {} into {}", pid, s.path);
    } catch (...) {
        log::warn("collector start failed (out of memory?); this process is not recorded");
        s.pipeline = nullptr;
        s.recorder = nullptr;
        s.process = nullptr;
        stay_inactive(s);
    }
}

namespace {

void on_fork_child() {
    // Only this thread exists in the child. The parent's pipeline (its thread is gone, its open chunk holds
    // the parent's records) is abandoned without writing; CUPTI state is unusable here.
    State& s = state();
    if (s.pipeline) s.pipeline->abandon_after_fork();
    descriptors::reset_after_fork();  // our copies of the parent's descriptors (the trace); the parent's stay open
    g_pipeline.store(nullptr);
    g_session_pid.store(0);
    signals::reset_after_fork();
    sampling::reset_after_fork();  // the parent's timers are gone; only this thread's slot is left, emptied
    sampling::reset_threads_after_fork();
    sampling::reset_osrt_after_fork();
    stacks::table().reset_after_fork();  // before anything locks it: a parent thread may have held its mutex
    forget_notes();
    gpu_metrics_after_fork();
    s.pipeline = nullptr;  // leaked with its writer: destroying it would write
    s.recorder = nullptr;
    s.process = nullptr;
    s.file = nullptr;
    s.path.clear();
    s.active = false;
    s.inactive = false;
    g_cuda_inherited.store(true);
    if (g_cuda_attempted.load()) {
        try {
            cupti::Session::instance().abandon_after_fork();
        } catch (...) {
        }
    }
    g_cuda_attempted.store(false);
    g_cuda_ok.store(false);
    g_shutdown_done.store(false);
    g_shutdown_finished.store(false);
    g_end_began_ns.store(0);
    capture_window().reset_after_fork();
    nvtx::reset_capture_after_fork();
    nvtx::clear_ending();
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
        std::thread t;
        {
            signals::BlockTermination blocked;  // inherited by the helper: a signal for the program never lands on it
            t = std::thread([shared, fn]() mutable {
                t_own_work = true;
                try {
                    fn();
                } catch (...) {
                }
                std::lock_guard lock(shared->m);
                shared->done = true;
                shared->cv.notify_all();
            });
        }
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
    so.call_sites = config.call_sites;
    so.call_site_max_stacks = config.call_site_max_stacks;
    so.graph_level = config.graph_trace == GraphTrace::Graph;
    so.nested_driver_calls = config.nested_driver_calls;
    so.api_records = config.api_source == ApiSource::Callback ? cupti::ApiRecords::Callback
                     : config.api_source == ApiSource::Off    ? cupti::ApiRecords::Off
                                                              : cupti::ApiRecords::Activity;
    so.device_buffer_bytes = static_cast<size_t>(config.cupti_device_buffer_mb) << 20;
    so.device_buffers_preallocated = config.cupti_preallocate;
    so.zeroed_buffers = config.cupti_zeroed_buffers;
    so.timestamp = &gprof_collector_cupti_timestamp;
    so.profiler_range = [](bool start) {
        // From inside the cudaProfilerStart/Stop callback.
        if (start) capture_window().open_range(tr::CaptureReason::ProfilerApi, clock::now());
        else capture_window().close_range(tr::CaptureReason::ProfilerApi, clock::now());
    };
    return so;
}

// The capture window's lever: the process's CUPTI session.
struct CuptiActivity final : ActivitySwitch {
    bool recording() const override { return cupti::Session::instance().recording(); }
    bool set_recording(bool on) override { return cupti::Session::instance().set_recording(on); }
};
CuptiActivity g_cupti_activity;  // constant-initialised, nothing to destroy: valid until the process ends

}  // namespace

void session_detail::attach_cuda(Pipeline& pipeline) {
    auto& session = cupti::Session::instance();
    session.rebind(pipeline);
    // The window may have moved while CUPTI was starting: from here on it switches CUPTI itself.
    capture_window().attach_activity(&g_cupti_activity);
    pipeline.add_periodic_hook(
        [](void*, tr::TraceWriter&, bool final) {
            // Periodic flush: completed buffers reach the file within one period. The forced flush at exit runs
            // separately, under a watchdog.
            if (!final) cupti::Session::instance().flush(false);
        },
        nullptr);
}

namespace {

thread_local bool t_finishing = false;  // this thread is ending the session

// Another thread is ending the session (exit() on one thread, _exit() or a signal on another): wait for its end, so
// that this one does not take the process down in the middle of it. Bounded by the end's own watchdogs.
void wait_for_end() noexcept {
    if (t_finishing) return;
    for (int ms = 0; ms < 7000 && !g_shutdown_finished.load(std::memory_order_acquire); ++ms) ::usleep(1000);
}

}  // namespace

void session_detail::finish_session(EndCause cause, int sig, void (*before_end)(void* ctx, Pipeline& pipeline),
                                    void* ctx) noexcept {
    OwnWork own;  // the end's own calls (and its wait for another thread's end) are the collector's, not timed
    if (g_shutdown_done.exchange(true)) return wait_for_end();
    t_finishing = true;
    struct EndMark {
        ~EndMark() {
            t_finishing = false;
            g_shutdown_finished.store(true, std::memory_order_release);
        }
    } end_mark;
    // The program's other threads run on until the process is gone: what they record from here on is counted, not
    // recorded, so the last drain ends (it used to chase them for seconds: issue 29).
    g_end_began_ns.store(clock::now(), std::memory_order_relaxed);
    Pipeline* recording = g_pipeline.load(std::memory_order_acquire);
    if (recording) g_end_writer_cpu_ns.store(recording->writer_cpu_ns(), std::memory_order_relaxed);
    g_end_waiting_bytes.store(nvtx::stream_memory().bytes_in_flight, std::memory_order_release);
    if (recording)
        nvtx::stop_recording(cause == EndCause::Exec     ? nvtx::Ending::Exec
                             : cause == EndCause::Signal ? nvtx::Ending::Signal
                                                         : nvtx::Ending::Exit);
    try {
        Pipeline* pipeline = nullptr;
        Config config;
        {
            std::lock_guard lock(g_mutex);
            if (!state().active) return;
            pipeline = state().pipeline;
            config = state().config;
        }
        auto limit = cause == EndCause::Signal ? std::chrono::duration_cast<std::chrono::milliseconds>(kSignalWatchdog)
                                               : std::chrono::duration_cast<std::chrono::milliseconds>(kExitWatchdog);
        if (g_cuda_ok.load()) {
            bool ok = run_with_watchdog(limit, [] { cupti::Session::instance().flush(true); });
            if (!ok) {
                log::warn("CUPTI's final flush did not return within {} ms; GPU records since the last flush are missing",
                          limit.count());
                pipeline->post_status(tr::Component::Cupti, tr::StatusLevel::Warning, 0,
                                      "CUPTI forced flush at the end timed out: recent GPU records missing");
            }
        } else if (config.trace_cuda && !g_cuda_attempted.load() && !g_cuda_inherited.load() &&
                   looks_like_cuda_program()) {
            // The driver never called InitializeInjection: say why, if this process tried CUDA at all.
            MissingCuda missing = explain_missing_cuda();
            if (!missing.text.empty()) {
                // Under gprof-run the summary says it, from the Status record below (GPROF_STATUS_IN_SUMMARY): the
                // same line here too made it twice (issue 30). Without gprof-run this line is all there is.
                if (missing.warn && !config.status_in_summary)
                    log::warn("CUDA activity not recorded: {}", missing.text);
                pipeline->post_status(tr::Component::Driver,
                                      missing.warn ? tr::StatusLevel::Warning : tr::StatusLevel::Info, 0,
                                      "CUDA activity not recorded: " + missing.text);
            }
        }
        if (gpu_metrics_running() && !run_with_watchdog(limit, [] { stop_gpu_metrics(); }))
            log::warn("the GPU metrics sampler did not stop within {} ms; its last samples are missing", limit.count());
        if (before_end) before_end(ctx, *pipeline);
        // Nothing sampled or traced after this point: the last drain (the final hooks) reads what there is.
        sampling::stop();
        sampling::stop_osrt();
        capture_window().close_at_exit(clock::now());
        uint32_t end_signal = cause == EndCause::Signal ? static_cast<uint32_t>(sig) : 0u;
        bool finished = run_with_watchdog(limit, [pipeline, end_signal] { pipeline->finish(end_signal); });
        if (!finished) log::warn("the trace writer did not finish in time; the trace may lack its end");
        g_pipeline.store(nullptr, std::memory_order_release);
        nvtx::g_recording.store(false, std::memory_order_relaxed);
        log::debug("trace written to {}", session_trace_path());
    } catch (...) {
    }
}

namespace {

void end_by_signal(int sig) { finish_session(EndCause::Signal, sig, nullptr, nullptr); }

}  // namespace

int session_initialize_injection() noexcept {
    ReentryGuard guard(t_busy);
    if (!guard.entered()) return 1;
    OwnWork own;  // CUPTI's loading and its threads are the collector's
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
            start_gpu_metrics(config, *pipeline, nullptr);  // they need CUPTI: said in one line
            return 1;
        }
        // No lock of ours is held: CUPTI may call back (buffers, resources) on this or other threads.
        auto& session = cupti::Session::instance();
        cupti::StartResult r = session.start(*pipeline, cupti_options(config));
        if (!r.ok) {
            std::string line = "CUDA activity not recorded: " + r.reason;
            log::warn("{}", line);
            pipeline->post_status(tr::Component::Cupti, tr::StatusLevel::Warning, r.code, line);
            start_gpu_metrics(config, *pipeline, nullptr);
            return 1;
        }
        g_cuda_ok.store(true);
        attach_cuda(*pipeline);
        start_gpu_metrics(config, *pipeline, session.api());
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
    finish_session(EndCause::Exit, 0, nullptr, nullptr);
}

void session_finish_before_exit() noexcept {
    if (t_busy || signals::in_fatal_signal()) return;  // inside our own code, or dying of a signal
    if (!g_mutex.try_lock()) return;
    State& s = state();
    bool ours = s.active && s.identity.pid == static_cast<int64_t>(::syscall(SYS_getpid));
    g_mutex.unlock();
    if (ours) session_shutdown();
}

Pipeline* session_pipeline() noexcept { return g_pipeline.load(std::memory_order_acquire); }

void session_nudge_writer() noexcept {
    if (Pipeline* p = g_pipeline.load(std::memory_order_acquire)) p->nudge();
}

std::string session_trace_path() {
    std::lock_guard lock(g_mutex);
    return state().path;
}

}  // namespace gprof::collector
