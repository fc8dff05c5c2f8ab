// Unit tests of the collector core pieces that need no injected process: configuration parsing, the trace
// clock, the pipeline (with a fake activity consumer), trace file naming, the capture window (without CUPTI).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "capture/capture_window.h"
#include "base/clock.h"
#include "base/config.h"
#include "process/process_info.h"
#include "nvtx/recorder.h"
#include "nvtx/stream.h"
#include "pipeline/pipeline.h"
#include "trace_fixture.h"

using namespace gprof::collector;
using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

std::map<std::string, std::string>* g_env = nullptr;
const char* fake_env(const char* name) {
    auto it = g_env->find(name);
    return it == g_env->end() ? nullptr : it->second.c_str();
}
Config parse(std::map<std::string, std::string> env) {
    g_env = &env;
    return parse_config(fake_env);
}

}  // namespace

TEST_CASE("config: call sites from GPROF_BACKTRACE and GPROF_CUDABACKTRACE", "[call-sites]") {
    using gprof::env::CallCategory;
    auto at = [](const Config&, CallCategory k) { return static_cast<int>(k); };
    Config off = parse({});
    CHECK(off.backtrace_depth == 0);
    CHECK(off.call_site_max_stacks == kDefaultCallSiteMaxStacks);
    // --backtrace alone: every call, whatever it takes.
    Config every = parse({{"GPROF_BACKTRACE", "1"}});
    CHECK(every.backtrace_depth == kDefaultBacktraceDepth);
    for (int i = 0; i < gprof::env::kCallCategories; ++i) {
        CHECK(every.call_sites.on[i]);
        CHECK(every.call_sites.threshold_ns[i] == 0);
    }
    // nsys's form: the categories named, each at its threshold (80 us when none is given), default depth.
    Config kernel = parse({{"GPROF_CUDABACKTRACE", "kernel,sync:0,memory:1500"}});
    CHECK(kernel.backtrace_depth == kDefaultBacktraceDepth);
    CHECK(kernel.call_sites.on[at(kernel, CallCategory::Kernel)]);
    CHECK(kernel.call_sites.threshold_ns[at(kernel, CallCategory::Kernel)] == 80000);
    CHECK(kernel.call_sites.on[at(kernel, CallCategory::Sync)]);
    CHECK(kernel.call_sites.threshold_ns[at(kernel, CallCategory::Sync)] == 0);
    CHECK(kernel.call_sites.threshold_ns[at(kernel, CallCategory::Memory)] == 1500);
    CHECK_FALSE(kernel.call_sites.on[at(kernel, CallCategory::Other)]);
    // Both: the depth from GPROF_BACKTRACE, the calls from GPROF_CUDABACKTRACE; none switches them off.
    Config both = parse({{"GPROF_BACKTRACE", "6"}, {"GPROF_CUDABACKTRACE", "other:10"}});
    CHECK(both.backtrace_depth == 6);
    CHECK(both.call_sites.on[at(both, CallCategory::Other)]);
    CHECK_FALSE(both.call_sites.on[at(both, CallCategory::Kernel)]);
    CHECK(parse({{"GPROF_BACKTRACE", "6"}, {"GPROF_CUDABACKTRACE", "none"}}).backtrace_depth == 0);
    // A later value for a category replaces an earlier one, as in nsys.
    Config later = parse({{"GPROF_CUDABACKTRACE", "kernel:0,all"}});
    CHECK(later.call_sites.threshold_ns[at(later, CallCategory::Kernel)] == 80000);
    // Malformed: ignored with a warning naming the variable (gprof-run refuses these before the app starts).
    Config bad = parse({{"GPROF_CUDABACKTRACE", "kernels"}, {"GPROF_CALL_SITE_MAX_STACKS", "0"}});
    CHECK(bad.backtrace_depth == 0);
    CHECK(bad.call_site_max_stacks == kDefaultCallSiteMaxStacks);
    REQUIRE(bad.warnings.size() == 2);
    CHECK(bad.warnings[0].find("GPROF_CUDABACKTRACE") != std::string::npos);
    CHECK(parse({{"GPROF_CALL_SITE_MAX_STACKS", "4"}}).call_site_max_stacks == 4);
}

TEST_CASE("config: defaults") {
    Config c = parse({});
    CHECK(c.trace_cuda);
    CHECK(c.trace_nvtx);
    CHECK(c.flush_ms == 100);
    CHECK(c.buffer_mb == 8);
    CHECK(c.log_level == "warn");
    CHECK(c.capture == CaptureMode::None);
    CHECK(c.capture_end == CaptureRangeEnd::Stop);
    CHECK(c.graph_trace == GraphTrace::Node);
    CHECK_FALSE(c.nested_driver_calls);
    CHECK(c.api_source == ApiSource::Activity);
    CHECK(c.cupti_device_buffer_mb == 0);
    CHECK(c.cupti_preallocate == 0);
    CHECK_FALSE(c.cupti_zeroed_buffers);
    CHECK(c.backtrace_depth == 0);
    CHECK(c.warnings.empty());
    CHECK_FALSE(c.inactive_for(123));
}

TEST_CASE("config: every variable") {
    Config c = parse({{"GPROF_OUTPUT_DIR", "/tmp/run"},
                      {"GPROF_RUN_ID", "abc"},
                      {"GPROF_TRACE", "nvtx"},
                      {"GPROF_BACKTRACE", "1"},
                      {"GPROF_CAPTURE_RANGE", "nvtx:step@train"},
                      {"GPROF_DELAY_SEC", "1.5"},
                      {"GPROF_DURATION_SEC", "2"},
                      {"GPROF_NO_CHILDREN", "1"},
                      {"GPROF_ROOT_PID", "77"},
                      {"GPROF_LOG_LEVEL", "debug"},
                      {"GPROF_CAPTURE_RANGE_END", "repeat:3"},
                      {"GPROF_CUDA_GRAPH_TRACE", "graph"},
                      {"GPROF_CUDA_NESTED_DRIVER_CALLS", "1"},
                      {"GPROF_CUDA_API", "callback"},
                      {"GPROF_CUPTI_DEVICE_BUFFER_MB", "32"},
                      {"GPROF_CUPTI_PREALLOCATE", "6"},
                      {"GPROF_CUPTI_ZEROED_BUFFERS", "1"},
                      {"GPROF_FLUSH_MS", "5000"},
                      {"GPROF_BUFFER_MB", "4"}});
    CHECK(c.output_dir == "/tmp/run");
    CHECK(c.run_id == "abc");
    CHECK_FALSE(c.trace_cuda);
    CHECK(c.trace_nvtx);
    CHECK(c.backtrace_depth == kDefaultBacktraceDepth);
    CHECK(c.capture == CaptureMode::NvtxRange);
    CHECK(c.capture_nvtx_name == "step");
    CHECK(c.capture_nvtx_domain == "train");
    CHECK(c.delay_sec == 1.5);
    CHECK(c.duration_sec == 2);
    CHECK(c.inactive_for(78));
    CHECK_FALSE(c.inactive_for(77));
    CHECK(c.log_level == "debug");
    CHECK(c.capture_end == CaptureRangeEnd::Repeat);
    CHECK(c.capture_end_count == 3);
    CHECK(c.graph_trace == GraphTrace::Graph);
    CHECK(c.nested_driver_calls);
    CHECK(c.api_source == ApiSource::Callback);
    CHECK(c.cupti_device_buffer_mb == 32);
    CHECK(c.cupti_preallocate == 6);
    CHECK(c.cupti_zeroed_buffers);
    CHECK(c.flush_ms == 200);  // clamped
    CHECK(c.buffer_mb == 4);
    CHECK(c.warnings.empty());
}

TEST_CASE("config: malformed values fall back to defaults with a warning") {
    Config c = parse({{"GPROF_TRACE", "gpu"},
                      {"GPROF_FLUSH_MS", "fast"},
                      {"GPROF_BACKTRACE", "deep"},
                      {"GPROF_DELAY_SEC", "-1"},
                      {"GPROF_CAPTURE_RANGE", "sometimes"},
                      {"GPROF_CAPTURE_RANGE_END", "repeat:0"},
                      {"GPROF_CUDA_GRAPH_TRACE", "nodes"},
                      {"GPROF_CUDA_NESTED_DRIVER_CALLS", "yes"},
                      {"GPROF_CUDA_API", "both"},
                      {"GPROF_CUPTI_DEVICE_BUFFER_MB", "0"},
                      {"GPROF_CUPTI_PREALLOCATE", "many"},
                      {"GPROF_CUPTI_ZEROED_BUFFERS", "yes"},
                      {"GPROF_LOG_LEVEL", "loud"}});
    CHECK(c.trace_cuda);
    CHECK(c.trace_nvtx);
    CHECK(c.flush_ms == 100);
    CHECK(c.backtrace_depth == 0);
    CHECK(c.delay_sec == 0);
    CHECK(c.capture == CaptureMode::None);
    CHECK(c.log_level == "warn");
    CHECK(c.capture_end == CaptureRangeEnd::Stop);
    CHECK(c.graph_trace == GraphTrace::Node);
    CHECK_FALSE(c.nested_driver_calls);
    CHECK(c.api_source == ApiSource::Activity);
    CHECK(c.cupti_device_buffer_mb == 0);
    CHECK(c.cupti_preallocate == 0);
    CHECK_FALSE(c.cupti_zeroed_buffers);
    CHECK(c.warnings.size() == 13);
    CHECK(parse({{"GPROF_BACKTRACE", "200"}}).backtrace_depth == 64);
    CHECK(parse({{"GPROF_FLUSH_MS", "1"}}).flush_ms == 10);
    CHECK(parse({{"GPROF_TRACE", "none"}}).trace_cuda == false);
    CHECK(parse({{"GPROF_CAPTURE_RANGE", "cudaProfilerApi"}}).capture == CaptureMode::CudaProfilerApi);
    Config any = parse({{"GPROF_CAPTURE_RANGE", "nvtx:step@*"}});
    CHECK(any.capture_nvtx_name == "step");
    CHECK(any.capture_nvtx_any_domain);
    CHECK(any.capture_nvtx_domain.empty());
    CHECK(parse({{"GPROF_CAPTURE_RANGE_END", "none"}}).capture_end == CaptureRangeEnd::None);
    Config repeat = parse({{"GPROF_CAPTURE_RANGE_END", "repeat"}});
    CHECK(repeat.capture_end == CaptureRangeEnd::Repeat);
    CHECK(repeat.capture_end_count == 0);
}

TEST_CASE("config: the variables' grammar is the one gprof-run checks its options with (gprof/env/values.h)") {
    // Values gprof-run refuses as options are malformed variables too: an empty NVTX domain, seconds in exponent
    // form, a repeat count of 0.
    for (auto [name, value] : {std::pair{"GPROF_CAPTURE_RANGE", "nvtx:step@"}, {"GPROF_CAPTURE_RANGE", "nvtx:@train"},
                               {"GPROF_DELAY_SEC", "1e3"}, {"GPROF_DURATION_SEC", ".5"},
                               {"GPROF_CAPTURE_RANGE_END", "repeat:0"}, {"GPROF_CUDA_GRAPH_TRACE", "Node"}}) {
        INFO(name << "=" << value);
        Config c = parse({{name, value}});
        CHECK(c.warnings.size() == 1);
        CHECK(c.capture == CaptureMode::None);
        CHECK(c.delay_sec == 0);
        CHECK(c.duration_sec == 0);
    }
    CHECK(parse({{"GPROF_DURATION_SEC", "0.5"}}).duration_sec == 0.5);
    CHECK(parse({{"GPROF_CAPTURE_RANGE_END", "repeat:4294967295"}}).capture_end_count == 4294967295u);
}

TEST_CASE("config: GPU metrics devices, frequency and set (issue 37)", "[gpu-metrics]") {
    Config off = parse({});
    CHECK_FALSE(off.gpu_metrics_devices.any());
    CHECK(off.gpu_metrics_hz == 10000);
    CHECK(off.gpu_metrics_set.empty());
    Config all = parse({{"GPROF_GPU_METRICS_DEVICES", "all"}, {"GPROF_GPU_METRICS_FREQUENCY", "200000"},
                        {"GPROF_GPU_METRICS_SET", "gh100"}});
    CHECK(all.gpu_metrics_devices.has(0));
    CHECK(all.gpu_metrics_devices.has(63));
    CHECK(all.gpu_metrics_hz == 200000);
    CHECK(all.gpu_metrics_set == "gh100");
    CHECK(all.warnings.empty());
    Config some = parse({{"GPROF_GPU_METRICS_DEVICES", "0,3,63"}});
    CHECK(some.gpu_metrics_devices.any());
    CHECK(some.gpu_metrics_devices.has(3));
    CHECK(some.gpu_metrics_devices.has(63));
    CHECK_FALSE(some.gpu_metrics_devices.has(1));
    CHECK_FALSE(some.gpu_metrics_devices.has(64));
    CHECK_FALSE(parse({{"GPROF_GPU_METRICS_DEVICES", "none"}}).gpu_metrics_devices.any());
    // Refused: the value falls back to its default with one warning naming the grammar.
    for (auto [name, value] : {std::pair{"GPROF_GPU_METRICS_DEVICES", "64"}, {"GPROF_GPU_METRICS_DEVICES", "0,0"},
                               {"GPROF_GPU_METRICS_DEVICES", "1,"}, {"GPROF_GPU_METRICS_DEVICES", ""},
                               {"GPROF_GPU_METRICS_DEVICES", "All"}, {"GPROF_GPU_METRICS_DEVICES", "-1"},
                               {"GPROF_GPU_METRICS_DEVICES", " 1"}, {"GPROF_GPU_METRICS_FREQUENCY", "9"},
                               {"GPROF_GPU_METRICS_FREQUENCY", "200001"}, {"GPROF_GPU_METRICS_FREQUENCY", "10k"}}) {
        INFO(name << "=" << value);
        Config c = parse({{name, value}});
        if (*value == '\0') {  // an empty variable is unset, as every other
            CHECK(c.warnings.empty());
            continue;
        }
        REQUIRE(c.warnings.size() == 1);
        CHECK(c.warnings[0].find("expected") != std::string::npos);
        CHECK_FALSE(c.gpu_metrics_devices.any());
        CHECK(c.gpu_metrics_hz == 10000);
    }
}

TEST_CASE("clock: monotonic / in step with CLOCK_MONOTONIC") {
    clock::init();
    uint64_t prev = clock::now();
    for (int i = 0; i < 100000; ++i) {
        uint64_t t = clock::now();
        REQUIRE(t >= prev);
        prev = t;
    }
    uint64_t a = clock::monotonic_ns();
    uint64_t t = clock::now();
    uint64_t b = clock::monotonic_ns();
    // Calibrated over 1 ms: within a millisecond of CLOCK_MONOTONIC (not a timing assertion: an offset bound).
    CHECK(t + 1'000'000 >= a);
    CHECK(t <= b + 1'000'000);
    tr::ClockReference ref = clock::reference();
    CHECK(ref.clock == tr::TraceClock::Monotonic);
    CHECK(ref.realtime_ns > 0);
    CHECK(gprof_collector_cupti_timestamp() >= ref.trace_ns);
}

TEST_CASE("trace file: O_EXCL with a numbered suffix when the name is taken") {
    TempDir dir;
    std::string p1, p2, p3;
    int a = create_trace_file(dir.path().string(), "app", 42, p1);
    int b = create_trace_file(dir.path().string(), "app", 42, p2);
    int c = create_trace_file(dir.path().string(), "app", 42, p3);
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    REQUIRE(c >= 0);
    CHECK(p1 == dir.file("app.42.gprof"));
    CHECK(p2 == dir.file("app.42.1.gprof"));
    CHECK(p3 == dir.file("app.42.2.gprof"));
    CHECK((::fcntl(a, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(a, F_GETFL) & O_APPEND) != 0);
    ::close(a);
    ::close(b);
    ::close(c);
    // Never follows a symlink planted at the name.
    std::string dummy;
    REQUIRE(::symlink("/etc/passwd", dir.file("evil.1.gprof").c_str()) == 0);
    int d = create_trace_file(dir.path().string(), "evil", 1, dummy);
    CHECK(dummy == dir.file("evil.1.1.gprof"));
    if (d >= 0) ::close(d);
}

namespace {

struct FakeActivity {
    int consumed = 0;
    int released = 0;
    static size_t consume(void* ctx, const uint8_t* buffer, size_t size, tr::TraceWriter& w) {
        auto* self = static_cast<FakeActivity*>(ctx);
        ++self->consumed;
        // One Kernel record per 8 bytes, start = the byte value: a stand-in for translation.
        for (size_t i = 0; i < size; i += 8) {
            tr::Kernel k;
            k.start = 1000 + buffer[i];
            k.end = k.start + 1;
            k.name = w.intern("kernel");
            w.add(k);
        }
        return size / 8;
    }
    static void release(void* ctx, uint8_t* buffer) {
        ++static_cast<FakeActivity*>(ctx)->released;
        std::free(buffer);
    }
};

void count_hook(void* ctx, tr::TraceWriter&, bool final) {
    auto* n = static_cast<int*>(ctx);
    *n += final ? 1000 : 1;
}

}  // namespace

TEST_CASE("pipeline: buffers and metadata from many threads reach the file - hooks run - End written") {
    TempDir dir;
    std::string path = dir.file("p.gprof");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    FakeActivity fake;
    int hook_runs = 0;
    {
        Pipeline p;
        p.set_activity_consumer({FakeActivity::consume, FakeActivity::release, &fake});
        p.add_periodic_hook(count_hook, &hook_runs);
        Pipeline::Options o;
        o.flush_ms = 10;
        REQUIRE(p.start(fd, test_header(), o));
        std::vector<std::thread> ts;
        for (int t = 0; t < 4; ++t) {
            ts.emplace_back([&p, t] {
                for (int i = 0; i < 50; ++i) {
                    auto* b = static_cast<uint8_t*>(std::malloc(32));
                    std::memset(b, t, 32);
                    p.submit_activity_buffer(b, 32);
                }
                p.post_thread_name(100 + t, "t" + std::to_string(t));
            });
        }
        for (auto& t : ts) t.join();
        p.post_status(tr::Component::Cupti, tr::StatusLevel::Warning, 999, "CUPTI unavailable: test");
        p.post_dropped(tr::DropSource::CuptiBuffer, 17, 1, 2);
        p.post_capture(tr::CaptureAction::Start, tr::CaptureReason::ProfilerApi, 5);
        DeviceInfo dev;
        dev.id = 0;
        dev.name = "Test GPU";
        dev.uuid = "GPU-1234";
        p.post_device(dev);
        CudaVersions v;
        v.driver_version = 13000;
        v.cupti_library = "/x/libcupti.so.13";
        p.post_cuda_info(v);
        REQUIRE(p.flush(std::chrono::seconds(5)));
        p.submit_activity_buffer(nullptr, 0);  // harmless
        p.finish();
        p.finish();  // idempotent
        CHECK(p.activity_buffers() == 200);
        CHECK(p.activity_records() == 800);
    }
    CHECK(fake.consumed == 200);
    CHECK(fake.released == 200);
    CHECK(hook_runs >= 1001);  // periodic runs plus the final one

    gprof::trace::TraceReader reader(path);
    auto records = read_all_records(reader);
    size_t kernels = 0, threads = 0;
    bool status = false, dropped = false, capture = false, device = false, cuda = false;
    for (auto& r : records) {
        switch (r.kind) {
        case tr::RecordKind::Kernel: ++kernels; break;
        case tr::RecordKind::Thread: ++threads; break;
        case tr::RecordKind::Status:
            status = reader.string(r.status.message) == "CUPTI unavailable: test" && r.status.code == 999;
            break;
        case tr::RecordKind::Dropped: dropped = r.dropped.count == 17 && r.dropped.stream == 2; break;
        case tr::RecordKind::Capture: capture = r.capture.reason == tr::CaptureReason::ProfilerApi; break;
        case tr::RecordKind::Device: device = reader.string(r.device.name) == "Test GPU"; break;
        case tr::RecordKind::CudaInfo: cuda = r.cuda_info.driver_version == 13000; break;
        default: break;
        }
    }
    CHECK(kernels == 800);
    CHECK(threads == 4);
    CHECK(status);
    CHECK(dropped);
    CHECK(capture);
    CHECK(device);
    CHECK(cuda);
    CHECK(reader.stats().has_end);
}

TEST_CASE("pipeline: a buffer with no consumer wired is counted as dropped / not lost silently") {
    TempDir dir;
    std::string path = dir.file("q.gprof");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    {
        Pipeline p;
        REQUIRE(p.start(fd, test_header(), Pipeline::Options{}));
        p.submit_activity_buffer(static_cast<uint8_t*>(std::malloc(64)), 64);
        p.finish();
    }
    gprof::trace::TraceReader reader(path);
    uint64_t dropped = 0;
    for (auto& r : read_all_records(reader))
        if (r.kind == tr::RecordKind::Dropped) dropped += r.dropped.count;
    CHECK(dropped == 1);
}

TEST_CASE("pipeline: the message queue is capped / what does not fit is counted, never grows the program") {
    TempDir dir;
    std::string path = dir.file("cap.gprof");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    // A hook that holds the writer thread until released: the queue fills while nothing drains it.
    struct Gate {
        std::atomic<bool> entered{false}, released{false};
    } gate;
    const size_t posted = Pipeline::kMaxQueuedMessages + 4464;
    {
        Pipeline p;
        REQUIRE(p.start(fd, test_header(), Pipeline::Options{}));
        p.add_periodic_hook(
            [](void* ctx, tr::TraceWriter&, bool) {
                auto* g = static_cast<Gate*>(ctx);
                g->entered = true;
                while (!g->released) std::this_thread::yield();
            },
            &gate, /*also_on_nudge=*/true);
        p.nudge();
        while (!gate.entered) std::this_thread::yield();
        for (size_t i = 0; i < posted; ++i) p.post_status(tr::Component::Collector, tr::StatusLevel::Info, 0, "x");
        CHECK(p.queue_dropped() == posted - Pipeline::kMaxQueuedMessages);
        gate.released = true;
        p.finish();
    }
    gprof::trace::TraceReader reader(path);
    uint64_t dropped = 0, statuses = 0;
    for (auto& r : read_all_records(reader)) {
        if (r.kind == tr::RecordKind::Dropped && r.dropped.source == tr::DropSource::CollectorQueue)
            dropped += r.dropped.count;
        if (r.kind == tr::RecordKind::Status && reader.string(r.status.message) == "x") ++statuses;
    }
    CHECK(statuses == Pipeline::kMaxQueuedMessages);
    CHECK(dropped == posted - Pipeline::kMaxQueuedMessages);
}

// ---- the capture window, without CUPTI: its Capture records ----

namespace {

struct WindowRun {
    TempDir dir;
    std::string path = dir.file("w.gprof");
    Pipeline pipeline;
    CaptureWindow window;

    explicit WindowRun(const CaptureWindow::Options& o, tr::Timestamp started_at = 1000) {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(pipeline.start(fd, test_header(), Pipeline::Options{}));
        window.begin(&pipeline, o, started_at);
    }
    // The Capture records, in order, as "start:reason@t" / "stop:reason@t".
    std::vector<std::string> captures() {
        pipeline.finish();
        gprof::trace::TraceReader reader(path);
        std::vector<std::string> out;
        for (auto& r : read_all_records(reader))
            if (r.kind == tr::RecordKind::Capture)
                out.push_back(std::string(r.capture.action == tr::CaptureAction::Start ? "start:" : "stop:") +
                              std::to_string(static_cast<int>(r.capture.reason)) + "@" +
                              std::to_string(r.capture.timestamp));
        return out;
    }
};

constexpr int kSession = static_cast<int>(tr::CaptureReason::SessionStart);
constexpr int kProfiler = static_cast<int>(tr::CaptureReason::ProfilerApi);
constexpr int kNvtx = static_cast<int>(tr::CaptureReason::NvtxRange);
constexpr int kDelay = static_cast<int>(tr::CaptureReason::Delay);
constexpr int kDuration = static_cast<int>(tr::CaptureReason::Duration);
constexpr int kExit = static_cast<int>(tr::CaptureReason::ProcessExit);

std::string edge(bool start, int reason, uint64_t t) {
    return std::string(start ? "start:" : "stop:") + std::to_string(reason) + "@" + std::to_string(t);
}

}  // namespace

TEST_CASE("capture window: open from the start without a range or delay, closed at exit") {
    WindowRun w(CaptureWindow::Options{});
    CHECK(w.window.is_open());
    CHECK_FALSE(w.window.accepts_ranges());
    CHECK_FALSE(w.window.open_range(tr::CaptureReason::ProfilerApi, 2000));  // no capture range: not its business
    w.window.close_range(tr::CaptureReason::ProfilerApi, 2100);
    w.window.close_at_exit(5000);
    CHECK_FALSE(w.window.is_open());
    CHECK(w.captures() == std::vector<std::string>{edge(true, kSession, 1000), edge(false, kExit, 5000)});
}

TEST_CASE("capture window: range end stop / repeat:N / none") {
    SECTION("stop: the first range only") {
        CaptureWindow::Options o;
        o.mode = CaptureMode::NvtxRange;
        WindowRun w(o);
        CHECK_FALSE(w.window.is_open());
        CHECK(w.window.accepts_ranges());
        CHECK_FALSE(w.window.open_range(tr::CaptureReason::ProfilerApi, 1500));  // the other range kind
        CHECK(w.window.open_range(tr::CaptureReason::NvtxRange, 2000));
        CHECK(w.window.is_open());
        CHECK_FALSE(w.window.open_range(tr::CaptureReason::NvtxRange, 2500));  // already held
        w.window.close_range(tr::CaptureReason::NvtxRange, 3000);
        CHECK_FALSE(w.window.accepts_ranges());
        CHECK_FALSE(w.window.open_range(tr::CaptureReason::NvtxRange, 4000));
        w.window.close_at_exit(9000);  // closed already: no record
        CHECK(w.captures() == std::vector<std::string>{edge(true, kNvtx, 2000), edge(false, kNvtx, 3000)});
    }
    SECTION("repeat:2: two ranges, then no more") {
        CaptureWindow::Options o;
        o.mode = CaptureMode::CudaProfilerApi;
        o.range_end = CaptureRangeEnd::Repeat;
        o.max_ranges = 2;
        WindowRun w(o);
        for (uint64_t t : {2000, 4000, 6000}) {
            bool opened = w.window.open_range(tr::CaptureReason::ProfilerApi, t);
            CHECK(opened == (t < 6000));
            w.window.close_range(tr::CaptureReason::ProfilerApi, t + 1000);
        }
        CHECK(w.captures() == std::vector<std::string>{edge(true, kProfiler, 2000), edge(false, kProfiler, 3000),
                                                       edge(true, kProfiler, 4000), edge(false, kProfiler, 5000)});
    }
    SECTION("repeat without a limit") {
        CaptureWindow::Options o;
        o.mode = CaptureMode::NvtxRange;
        o.range_end = CaptureRangeEnd::Repeat;
        WindowRun w(o);
        for (int i = 0; i < 100; ++i) {
            REQUIRE(w.window.open_range(tr::CaptureReason::NvtxRange, 2000 + 10 * i));
            w.window.close_range(tr::CaptureReason::NvtxRange, 2005 + 10 * i);
        }
        CHECK(w.window.accepts_ranges());
        CHECK(w.captures().size() == 200);
    }
    SECTION("none: the first range opens the window for good") {
        CaptureWindow::Options o;
        o.mode = CaptureMode::NvtxRange;
        o.range_end = CaptureRangeEnd::None;
        WindowRun w(o);
        CHECK(w.window.open_range(tr::CaptureReason::NvtxRange, 2000));
        CHECK_FALSE(w.window.accepts_ranges());
        w.window.close_range(tr::CaptureReason::NvtxRange, 3000);
        CHECK(w.window.is_open());
        w.window.close_at_exit(9000);
        CHECK(w.captures() == std::vector<std::string>{edge(true, kNvtx, 2000), edge(false, kExit, 9000)});
    }
}

TEST_CASE("capture window: delay and duration edges, ranges are looked for only inside them") {
    SECTION("delay then duration, no range") {
        CaptureWindow::Options o;
        o.open_at = 5000;
        o.close_at = 8000;
        WindowRun w(o);
        CHECK_FALSE(w.window.is_open());
        w.window.tick(4999);
        CHECK_FALSE(w.window.is_open());
        w.window.tick(5100);  // the writer's tick comes late: the edge is stamped where it was due
        CHECK(w.window.is_open());
        w.window.tick(8200);
        CHECK_FALSE(w.window.is_open());
        w.window.tick(9000);
        w.window.close_at_exit(9500);
        CHECK(w.captures() == std::vector<std::string>{edge(true, kDelay, 5000), edge(false, kDuration, 8000)});
    }
    SECTION("a range during the delay does not count; one after it does; the duration ends it") {
        CaptureWindow::Options o;
        o.mode = CaptureMode::CudaProfilerApi;
        o.open_at = 5000;
        o.close_at = 8000;
        WindowRun w(o);
        CHECK_FALSE(w.window.open_range(tr::CaptureReason::ProfilerApi, 2000));
        w.window.close_range(tr::CaptureReason::ProfilerApi, 3000);
        w.window.tick(5000);
        CHECK_FALSE(w.window.is_open());  // the time gate is open, the range gate not
        CHECK(w.window.open_range(tr::CaptureReason::ProfilerApi, 6000));
        w.window.tick(8000);
        CHECK_FALSE(w.window.is_open());
        CHECK_FALSE(w.window.accepts_ranges());
        CHECK(w.captures() == std::vector<std::string>{edge(true, kProfiler, 6000), edge(false, kDuration, 8000)});
    }
    SECTION("options from the configuration") {
        Config c;
        c.delay_sec = 2;
        c.duration_sec = 0.5;
        c.capture = CaptureMode::NvtxRange;
        c.capture_end = CaptureRangeEnd::Repeat;
        c.capture_end_count = 4;
        auto o = CaptureWindow::options_for(c, 1'000'000'000);
        CHECK(o.open_at == 3'000'000'000);
        CHECK(o.close_at == 3'500'000'000);
        CHECK(o.mode == CaptureMode::NvtxRange);
        CHECK(o.range_end == CaptureRangeEnd::Repeat);
        CHECK(o.max_ranges == 4);
        c.delay_sec = 0;
        CHECK(CaptureWindow::options_for(c, 1'000'000'000).close_at == 1'500'000'000);
    }
}

// ---- the NVTX streams' memory cap ----

// What the writer thread does at the end of a run, into a trace file of its own: one final drain of every NVTX
// stream of this process (threads that have ended included).
static void drain_nvtx_into(const std::string& path) {
    tr::TraceWriter writer;
    REQUIRE(writer.open(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600),
                        test_header()));
    nvtx::Recorder recorder(nvtx::Recorder::Options{});
    recorder.drain(writer, true);
    writer.finish(1);
}

TEST_CASE("nvtx streams: the cap on unread events holds, and every event it refuses is counted in the trace") {
    // A producer the writer does not read: past the cap (lowered here from 512 MiB to 8 blocks: the same check,
    // once per block) every event is dropped and counted, the memory stays at the cap, and the drain says how many.
    clock::init();
    const size_t cap = 8 * sizeof(nvtx::Block);
    nvtx::set_bytes_in_flight_cap(cap);
    const size_t held_before = nvtx::stream_memory().bytes_in_flight;  // other streams of this process, if any
    const uint64_t refused_before = nvtx::stream_memory().blocks_refused;
    const long pairs = 200000;  // 8 MB of events: four times the cap
    long written_events = 0, complete_pairs = 0, open_pairs = 0;
    uint64_t dropped = 0;
    size_t most_held = 0;
    std::thread producer([&] {
        nvtx::ThreadStream* s = nvtx::attach_thread();
        REQUIRE(s);
        auto event = [&](nvtx::EventType type, uint64_t ts) {
            size_t size = sizeof(nvtx::EventHeader) + (type == nvtx::EventType::Push ? 8 : 0);
            uint8_t* p = nvtx::reserve(s, size);
            if (!p) return false;
            auto* h = reinterpret_cast<nvtx::EventHeader*>(p);
            *h = nvtx::EventHeader{type, 0, uint16_t(type == nvtx::EventType::Push ? 4 : 0), 0, ts};
            if (type == nvtx::EventType::Push) std::memcpy(p + sizeof *h, "step\0\0\0\0", 8);
            nvtx::commit(s, size);
            return true;
        };
        for (long i = 0; i < pairs; ++i) {
            bool pushed = event(nvtx::EventType::Push, 1000 + 100 * uint64_t(i));
            bool popped = event(nvtx::EventType::Pop, 1050 + 100 * uint64_t(i));
            written_events += pushed + popped;
            complete_pairs += pushed && popped;
            open_pairs += pushed && !popped;
            most_held = std::max(most_held, nvtx::stream_memory().bytes_in_flight);
        }
        dropped = s->dropped.load();
    });
    producer.join();
    CHECK(most_held <= std::max(cap, held_before));
    CHECK(nvtx::stream_memory().blocks_refused > refused_before);
    CHECK(dropped > 0);
    CHECK(uint64_t(written_events) + dropped == uint64_t(2 * pairs));
    CHECK(complete_pairs > 0);
    CHECK(complete_pairs < pairs / 2);

    TempDir dir;
    std::string path = dir.file("nvtx-cap.gprof");
    drain_nvtx_into(path);
    nvtx::set_bytes_in_flight_cap(nvtx::kMaxBytesInFlight);
    gprof::trace::TraceReader reader(path);
    uint64_t queue_drops = 0, ranges = 0, never_ended = 0;
    for (auto& r : read_all_records(reader)) {
        if (r.kind == tr::RecordKind::Dropped && r.dropped.source == tr::DropSource::CollectorQueue)
            queue_drops += r.dropped.count;
        if (r.kind == tr::RecordKind::Nvtx && reader.string(r.nvtx.name) == "step") {
            if (r.nvtx.end != 0) ++ranges;
            else ++never_ended;
        }
    }
    CHECK(queue_drops == dropped);
    CHECK(ranges == uint64_t(complete_pairs));
    CHECK(never_ended == uint64_t(open_pairs));
}

TEST_CASE("nvtx streams: a default-domain pop is an 8-byte event, and it closes its push as a full pop does") {
    // What the collector's nvtxRangePop writes (nvtx/handlers.cpp) and what the writer reads (nvtx/recorder.cpp),
    // byte for byte: short pops, a full Pop (a timestamp past 2^56, or another domain, takes one), a short pop
    // without a push (counted, not written), and the walk staying in step across the mixed sizes.
    clock::init();
    const uint64_t largest = nvtx::short_pop(nvtx::kShortPopMaxTimestamp);
    CHECK(nvtx::short_pop_timestamp(reinterpret_cast<const uint8_t*>(&largest)) == nvtx::kShortPopMaxTimestamp);
    CHECK(static_cast<nvtx::EventType>(largest & 0xFF) == nvtx::EventType::ShortPop);
    std::thread producer([] {
        nvtx::ThreadStream* s = nvtx::attach_thread();
        REQUIRE(s);
        auto push = [&](const char* name, uint64_t ts) {
            uint8_t* p = nvtx::reserve(s, sizeof(nvtx::EventHeader) + 8);
            REQUIRE(p);
            *reinterpret_cast<nvtx::EventHeader*>(p) =
                nvtx::EventHeader{nvtx::EventType::Push, 0, uint16_t(std::strlen(name)), 0, ts};
            std::memset(p + sizeof(nvtx::EventHeader), 0, 8);
            std::memcpy(p + sizeof(nvtx::EventHeader), name, std::strlen(name));
            nvtx::commit(s, sizeof(nvtx::EventHeader) + 8);
        };
        auto short_pop = [&](uint64_t ts) {
            uint8_t* p = nvtx::reserve(s, 8);
            REQUIRE(p);
            const uint64_t word = nvtx::short_pop(ts);
            std::memcpy(p, &word, 8);
            nvtx::commit(s, 8);
        };
        auto full_pop = [&](uint64_t ts) {
            uint8_t* p = nvtx::reserve(s, sizeof(nvtx::EventHeader));
            REQUIRE(p);
            *reinterpret_cast<nvtx::EventHeader*>(p) = nvtx::EventHeader{nvtx::EventType::Pop, 0, 0, 0, ts};
            nvtx::commit(s, sizeof(nvtx::EventHeader));
        };
        push("sp-outer", 100);
        push("sp-in1", 110);
        short_pop(120);
        push("sp-in2", 130);
        full_pop(140);
        short_pop(150);   // closes sp-outer
        short_pop(160);   // no push open: counted
        push("sp-late", 200);
        full_pop((uint64_t(1) << 56) + 5);  // beyond a short pop's 56 bits
    });
    producer.join();

    TempDir dir;
    std::string path = dir.file("nvtx-short-pop.gprof");
    drain_nvtx_into(path);
    gprof::trace::TraceReader reader(path);
    std::map<std::string, std::pair<uint64_t, uint64_t>> ranges;
    std::map<std::string, uint16_t> depth;
    uint64_t unmatched = 0;
    for (auto& r : read_all_records(reader)) {
        if (r.kind == tr::RecordKind::Dropped && r.dropped.source == tr::DropSource::NvtxOverflow)
            unmatched += r.dropped.count;
        if (r.kind == tr::RecordKind::Nvtx && reader.string(r.nvtx.name).rfind("sp-", 0) == 0) {
            ranges[std::string(reader.string(r.nvtx.name))] = {r.nvtx.start, r.nvtx.end};
            depth[std::string(reader.string(r.nvtx.name))] = r.nvtx.depth;
        }
    }
    using P = std::pair<uint64_t, uint64_t>;
    CHECK(ranges.size() == 4);
    CHECK(ranges["sp-outer"] == P{100, 150});
    CHECK(ranges["sp-in1"] == P{110, 120});
    CHECK(ranges["sp-in2"] == P{130, 140});
    CHECK(ranges["sp-late"] == P{200, (uint64_t(1) << 56) + 5});
    CHECK(depth["sp-outer"] == 0);
    CHECK(depth["sp-in1"] == 1);
    CHECK(depth["sp-in2"] == 1);
    CHECK(depth["sp-late"] == 0);
    CHECK(unmatched == 1);
}
