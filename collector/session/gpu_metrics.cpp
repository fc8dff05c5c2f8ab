#include "session/gpu_metrics.h"

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/reentry.h"
#include "base/thread_signals.h"
#include "metrics/metric_sets.h"
#include "metrics/pm_sampler.h"

namespace gprof::collector {

namespace tr = trace;

namespace {

constexpr auto kDrainPeriod = std::chrono::milliseconds(50);

struct GpuMetricsRun {
    Config config;
    Pipeline* pipeline = nullptr;
    metrics::PmSamplingApi api;
    std::vector<std::unique_ptr<metrics::DeviceSampler>> devices;  // the thread's until it is joined
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    bool stopping = false;
    std::atomic<bool> stopped{false};
};

// Leaked on purpose: a forked child forgets it (its thread is gone there), and the end may leave a stuck thread.
std::atomic<GpuMetricsRun*> g_run{nullptr};

// One line: stderr (unless gprof-run's summary restates the process's warnings) and a Status record.
void say(const Config& config, Pipeline& pipeline, tr::StatusLevel level, const std::string& line) {
    if (level != tr::StatusLevel::Info && !config.status_in_summary) log::warn("{}", line);
    pipeline.post_status(tr::Component::Cupti, level, 0, line);
}

void post_set(Pipeline& pipeline, const metrics::DeviceSampler& d) {
    std::string names;
    for (const std::string& m : d.metrics()) names += (names.empty() ? "" : " ") + m;
    pipeline.post([device = d.device(), set = d.set_name(), chip = d.chip(), names = std::move(names),
                   interval = d.interval_ns()](tr::TraceWriter& w) {
        tr::GpuMetricSet s;
        s.device = device;
        s.name = w.intern(set.c_str());
        s.chip = w.intern(chip.c_str());
        s.metrics = w.intern(names.c_str());
        s.interval_ns = interval;
        w.add(s);
    });
}

void post_samples(Pipeline& pipeline, std::vector<tr::GpuMetricSample>& batch) {
    if (batch.empty()) return;
    pipeline.post([samples = std::move(batch)](tr::TraceWriter& w) {
        for (const tr::GpuMetricSample& s : samples) w.add(s);
    });
    batch.clear();
}

std::string device_prefix(uint32_t device) { return "GPU metrics not sampled on device " + std::to_string(device) + ": "; }

// On the sampler thread: every device asked for, opened and started; one line for each that cannot be.
void open_devices(GpuMetricsRun& run) {
    const Config& c = run.config;
    uint64_t interval_ns = 1'000'000'000ull / (c.gpu_metrics_hz ? c.gpu_metrics_hz : env::kGpuMetricsDefaultHz);
    bool any_device = false;
    for (uint32_t device = 0; device < 64; ++device) {
        if (!c.gpu_metrics_devices.has(device)) continue;
        auto d = std::make_unique<metrics::DeviceSampler>();
        std::vector<std::string> notes;
        std::string why = d->open(run.api, device, c.gpu_metrics_set, interval_ns, notes);
        if (d->missing_device()) {
            // `all`: the devices end here (the first number CUPTI does not know); a listed one is said.
            if (c.gpu_metrics_devices.all) break;
            say(c, *run.pipeline, tr::StatusLevel::Warning, device_prefix(device) + why);
            continue;
        }
        any_device = true;
        for (const std::string& n : notes)
            say(c, *run.pipeline, tr::StatusLevel::Warning, "GPU metrics on device " + std::to_string(device) + ": " + n);
        if (why.empty()) {
            post_set(*run.pipeline, *d);
            why = d->start();
        }
        if (!why.empty()) {
            say(c, *run.pipeline, tr::StatusLevel::Warning, device_prefix(device) + why);
            continue;
        }
        say(c, *run.pipeline, tr::StatusLevel::Info,
            "GPU metrics sampled on device " + std::to_string(device) + " (" + d->chip() + "): set " + d->set_name() +
                ", " + std::to_string(d->metrics().size()) + " metrics every " + std::to_string(interval_ns) + " ns");
        run.devices.push_back(std::move(d));
    }
    if (!any_device && c.gpu_metrics_devices.all)
        say(c, *run.pipeline, tr::StatusLevel::Warning, "GPU metrics not sampled: the process has no CUDA device");
}

void sampler_thread(GpuMetricsRun* run) {
    open_devices(*run);
    std::vector<tr::GpuMetricSample> batch;
    std::unique_lock lock(run->mutex);
    while (!run->stopping) {
        run->wake.wait_for(lock, kDrainPeriod, [run] { return run->stopping; });
        if (run->stopping) break;
        lock.unlock();
        for (auto& d : run->devices) {
            d->drain(batch);
            post_samples(*run->pipeline, batch);
        }
        lock.lock();
    }
}

// What a device lost or could not evaluate, with figures; nothing when nothing was.
void say_losses(const GpuMetricsRun& run, const metrics::DeviceSampler& d) {
    const Config& c = run.config;
    Pipeline& pipeline = *run.pipeline;
    const metrics::DrainStats& s = d.stats();
    std::string on = "GPU metrics on device " + std::to_string(d.device()) + ": ";
    if (s.overflows || s.lost_samples)
        say(c, pipeline, tr::StatusLevel::Warning,
            on + std::to_string(s.lost_samples) + " samples (" + std::to_string(s.lost_ns / 1'000'000) + " ms) lost of " +
                std::to_string(s.samples + s.lost_samples) + ": the hardware buffer overflowed " +
                std::to_string(s.overflows) + " times (the sampler's thread fell behind)");
    if (s.evaluate_failures)
        say(c, pipeline, tr::StatusLevel::Warning,
            on + std::to_string(s.evaluate_failures) + " samples could not be evaluated and are left out");
    if (s.first_error != CUPTI_SUCCESS)
        say(c, pipeline, tr::StatusLevel::Warning,
            on + "decoding failed (" + cupti::result_name(run.api.host.cupti, s.first_error) + "): samples may be missing");
}

}  // namespace

void start_gpu_metrics(const Config& config, Pipeline& pipeline, const cupti::CuptiApi* cupti) {
    if (!config.gpu_metrics_devices.any() || g_run.load()) return;
    if (!config.gpu_metrics_set.empty() && !metrics::find_metric_set(config.gpu_metrics_set)) {
        say(config, pipeline, tr::StatusLevel::Warning,
            "GPU metrics not sampled: GPROF_GPU_METRICS_SET=\"" + config.gpu_metrics_set + "\" is no metric set (" +
                metrics::metric_set_names() + ")");
        return;
    }
    if (!cupti) {
        say(config, pipeline, tr::StatusLevel::Warning,
            config.trace_cuda ? "GPU metrics not sampled: no usable CUPTI (see the CUDA line)"
                              : "GPU metrics not sampled: they need CUPTI, which is loaded only when CUDA is traced");
        return;
    }
    auto run = std::make_unique<GpuMetricsRun>();
    std::string missing;
    if (!metrics::resolve_pm_sampling(*cupti, run->api, missing)) {
        say(config, pipeline, tr::StatusLevel::Warning,
            "GPU metrics not sampled: this CUPTI has no PM sampling (" + missing + " missing; CUDA 12.6 and later)");
        return;
    }
    if (std::string why = metrics::initialize_profiler(run->api); !why.empty()) {
        say(config, pipeline, tr::StatusLevel::Warning, "GPU metrics not sampled: " + why);
        return;
    }
    run->config = config;
    run->pipeline = &pipeline;
    try {
        OwnWork own;                          // the collector's own thread: never sampled or traced
        signals::BlockTermination blocked;    // inherited: the program's signals never land on it
        GpuMetricsRun* r = run.get();
        run->thread = std::thread([r] {
            t_own_work = true;
            sampler_thread(r);
        });
    } catch (...) {
        say(config, pipeline, tr::StatusLevel::Warning, "GPU metrics not sampled: no thread could be started");
        return;
    }
    g_run.store(run.release(), std::memory_order_release);
    // Registered here, inside cuInit, after the driver set up its own teardown: at exit this runs before it, so the
    // devices are stopped and drained while the driver still answers (as the CUPTI session's device queries are).
    // A process that ends otherwise (_exit, a signal, exec) is stopped by finish_session, under its watchdog.
    static bool exit_hook = false;  // once per process image (atexit handlers survive fork)
    if (!exit_hook) {
        exit_hook = true;
        std::atexit([] { stop_gpu_metrics(); });
    }
}

bool gpu_metrics_running() noexcept {
    GpuMetricsRun* run = g_run.load(std::memory_order_acquire);
    return run && !run->stopped.load();
}

void stop_gpu_metrics() noexcept {
    GpuMetricsRun* run = g_run.load(std::memory_order_acquire);
    if (!run || run->stopped.exchange(true)) return;
    try {
        {
            std::lock_guard lock(run->mutex);
            run->stopping = true;
        }
        run->wake.notify_all();
        if (run->thread.joinable()) run->thread.join();
        std::vector<tr::GpuMetricSample> batch;
        for (auto& d : run->devices) {
            d->stop(batch);
            post_samples(*run->pipeline, batch);
            say_losses(*run, *d);
        }
    } catch (...) {
    }
}

void gpu_metrics_after_fork() noexcept { g_run.store(nullptr, std::memory_order_relaxed); }

}  // namespace gprof::collector
