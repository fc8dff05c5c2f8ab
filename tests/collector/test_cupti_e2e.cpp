// End to end: libgprof-collector.so injected into a test program, with the CUPTI stand-in as its libcupti
// (GPROF_CUPTI_LIB). Exit flush, periodic flush before SIGKILL, crash, dropped records, capture ranges
// (cudaProfilerApi, NVTX through the real NVTX loader), CUDA graphs, the runtime's nested driver calls, fork,
// a hanging forced flush at exit, a refused subscription, and GPU metrics (PM sampling).
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collector_run.h"

using namespace gprof;
using namespace gprof::testing;

namespace {

struct E2E {
    TempDir dir;
    RunResult run;
    double seconds = 0;

    E2E(const std::string& mode, int n, std::map<std::string, std::string> extra = {}) {
        auto env = collector_env(dir.path().string());
        env["GPROF_CUPTI_LIB"] = GPROF_TEST_CUPTI_STANDIN;
        env["GPROF_TEST_STANDIN_SCRIPT"] = "\x01";
        for (auto& [k, v] : extra) env[k] = v;
        auto t0 = std::chrono::steady_clock::now();
        run = run_program({test_program("test_cupti_standin_app"), mode, std::to_string(n)}, env, dir.path().string());
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    std::vector<LoadedTrace> traces() const {
        std::vector<LoadedTrace> out;
        for (auto& p : traces_in(dir.path().string())) out.push_back(load_trace(p.string()));
        return out;
    }
};

std::vector<std::string> kernel_names(const std::string& path) {
    trace::TraceReader reader(path);
    std::vector<std::string> names;
    trace::Record r;
    while (reader.next(r))
        if (r.kind == trace::RecordKind::Kernel) names.emplace_back(reader.string(r.kernel.name));
    return names;
}

std::map<std::string, size_t> kernel_counts(const std::string& path) {
    std::map<std::string, size_t> counts;
    for (auto& n : kernel_names(path)) ++counts[n];
    return counts;
}

std::vector<trace::Capture> captures(const LoadedTrace& t) {
    std::vector<trace::Capture> out;
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::Capture) out.push_back(r.capture);
    return out;
}

bool has_status(const LoadedTrace& t, const std::string& text) {
    for (auto& m : t.status_messages())
        if (m.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("e2e: GPU records of the stand-in reach the trace, the exit flush completes it", "[cupti][e2e]") {
    E2E e("basic", 500);
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    CHECK(e.run.out == "done basic (CUPTI subscribed: 1)\n");
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    const auto& t = ts[0];
    CHECK(t.stats.has_end);
    CHECK(t.count(trace::RecordKind::Kernel) == 500);
    CHECK(t.count(trace::RecordKind::Memcpy) == 500);
    CHECK(t.count(trace::RecordKind::ApiCall) == 1000);
    CHECK(t.count(trace::RecordKind::CudaInfo) >= 1);
    CHECK_FALSE(has_status(t, "CUPTI unavailable"));
    CHECK(has_status(t, "loaded from"));
}

TEST_CASE("e2e: kernel names survive the caller's string (CUPTI owns the names its records point at)",
          "[cupti][e2e]") {
    E2E e("transient-names", 400);
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    auto paths = traces_in(e.dir.path().string());
    REQUIRE(paths.size() == 1);
    CHECK(kernel_counts(paths[0].string()) == std::map<std::string, size_t>{{"_Z9transientILi0EEvv", 100},
                                                                           {"_Z9transientILi1EEvv", 100},
                                                                           {"_Z9transientILi2EEvv", 100},
                                                                           {"_Z9transientILi3EEvv", 100}});
}

TEST_CASE("e2e: records dropped by CUPTI are counted in the trace", "[cupti][e2e]") {
    E2E e("dropped", 50);
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    CHECK(ts[0].dropped(trace::DropSource::CuptiBuffer) == 1000);
    CHECK(ts[0].count(trace::RecordKind::Kernel) == 51);
}

TEST_CASE("e2e: the runtime's own driver calls are left out unless asked for", "[cupti][e2e]") {
    for (bool keep : {false, true}) {
        INFO("GPROF_CUDA_NESTED_DRIVER_CALLS " << keep);
        E2E e("basic", 200, {{"GPROF_CUDA_NESTED_DRIVER_CALLS", keep ? "1" : "0"}});
        INFO(e.run.err);
        REQUIRE(e.run.exit_code() == 0);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        // 200 cudaLaunchKernel + 200 cudaMemcpy; the runtime's: 200 cuKernelGetName, one lazy load of the kernel.
        CHECK(ts[0].count(trace::RecordKind::ApiCall) == (keep ? 400u + 200 + 2 : 400u));
        CHECK(ts[0].count(trace::RecordKind::Kernel) == 200);
        // The trace says whether they were kept on purpose: the reports show them then.
        CHECK(((ts[0].header.features & trace::kFeatureNestedDriverCalls) != 0) == keep);
    }
}

TEST_CASE("e2e: CUDA graphs: every node by default, one record per launch with graph trace", "[cupti][e2e][graph]") {
    SECTION("node (default)") {
        E2E e("graph", 200);
        INFO(e.run.err);
        REQUIRE(e.run.exit_code() == 0);
        auto paths = traces_in(e.dir.path().string());
        REQUIRE(paths.size() == 1);
        auto counts = kernel_counts(paths[0].string());
        CHECK(counts["_Z7graph_kv"] == 600);
        CHECK(counts["_Z5plainv"] == 1);
        auto t = load_trace(paths[0].string());
        CHECK(t.count(trace::RecordKind::Memset) == 200);
        CHECK(t.count(trace::RecordKind::Memcpy) == 200 + 1);
        CHECK(t.count(trace::RecordKind::GraphLaunch) == 0);
        size_t in_graph = 0;
        for (auto& r : t.records)
            if (r.kind == trace::RecordKind::Kernel && r.kernel.graph_id == 3 && r.kernel.graph_node_id != 0) ++in_graph;
        CHECK(in_graph == 600);
    }
    SECTION("graph") {
        E2E e("graph", 200, {{"GPROF_CUDA_GRAPH_TRACE", "graph"}});
        INFO(e.run.err);
        REQUIRE(e.run.exit_code() == 0);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        CHECK(ts[0].count(trace::RecordKind::GraphLaunch) == 200);
        CHECK(ts[0].count(trace::RecordKind::Kernel) == 1);
        CHECK(ts[0].count(trace::RecordKind::Memset) == 0);
        CHECK(ts[0].count(trace::RecordKind::Memcpy) == 1);
        CHECK(has_status(ts[0], "per graph launch"));
    }
}

TEST_CASE("e2e: NVTX capture range: exactly the work inside the range, switched on the app's thread",
          "[cupti][e2e][nvtx-capture]") {
    // The ranges last microseconds, far less than a flush period: a decision taken anywhere but in the NVTX
    // handler itself records nothing of them (what the H100 run showed before this was fixed).
    const int n = 25;
    struct Case {
        const char* end;
        size_t ranges;
    };
    for (const Case& c : {Case{nullptr, 1}, Case{"stop", 1}, Case{"repeat", 3}, Case{"repeat:2", 2}, Case{"none", 3}}) {
        INFO("GPROF_CAPTURE_RANGE_END " << (c.end ? c.end : "(unset)"));
        std::map<std::string, std::string> env{{"GPROF_CAPTURE_RANGE", "nvtx:compute"}};
        if (c.end) env["GPROF_CAPTURE_RANGE_END"] = c.end;
        E2E e("nvtx-capture", n, env);
        INFO(e.run.err);
        REQUIRE(e.run.exit_code() == 0);
        CHECK(e.run.out == "done nvtx-capture (CUPTI subscribed: 1)\n");
        auto paths = traces_in(e.dir.path().string());
        REQUIRE(paths.size() == 1);
        auto counts = kernel_counts(paths[0].string());
        CHECK(counts["_Z6insidev"] == 3 * n * c.ranges);
        bool open_for_good = c.end && std::string(c.end) == "none";
        // "none": after the first range, the outside launches that follow it are inside the window.
        CHECK(counts["_Z7outsidev"] == (open_for_good ? 3u * n : 0u));
        auto t = load_trace(paths[0].string());
        auto caps = captures(t);
        size_t starts = 0;
        for (auto& cap : caps) {
            if (cap.action == trace::CaptureAction::Start) {
                ++starts;
                CHECK(cap.reason == trace::CaptureReason::NvtxRange);
            }
        }
        CHECK(starts == (open_for_good ? 1u : c.ranges));
        // API records follow the window too: a launch and a copy per inside iteration.
        CHECK(t.count(trace::RecordKind::ApiCall) == (open_for_good ? 2u * (3 * n * 3 + 3 * n) : 2u * 3 * n * c.ranges));
        // NVTX itself is recorded in full, inside the window or not.
        CHECK(t.nvtx_named("compute").size() == 3 * 2 + 1);
    }
}

TEST_CASE("e2e: NVTX capture range in a domain: registered strings, wide names, ended on another thread",
          "[cupti][e2e][nvtx-capture]") {
    const int n = 20;
    E2E e("nvtx-capture-ex", n, {{"GPROF_CAPTURE_RANGE", "nvtx:step@train"}, {"GPROF_CAPTURE_RANGE_END", "repeat"}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    auto paths = traces_in(e.dir.path().string());
    REQUIRE(paths.size() == 1);
    auto counts = kernel_counts(paths[0].string());
    CHECK(counts["_Z6insidev"] == 2u * n);
    CHECK(counts["_Z7outsidev"] == 0);
    auto caps = captures(load_trace(paths[0].string()));
    CHECK(caps.size() == 4);
}

TEST_CASE("e2e: NVTX capture range with NVTX itself not traced", "[cupti][e2e][nvtx-capture]") {
    const int n = 10;
    E2E e("nvtx-capture", n, {{"GPROF_CAPTURE_RANGE", "nvtx:compute@*"}, {"GPROF_TRACE", "cuda"}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    auto paths = traces_in(e.dir.path().string());
    REQUIRE(paths.size() == 1);
    auto counts = kernel_counts(paths[0].string());
    // "@*": the range of domain "other" comes first and is the one captured.
    CHECK(counts["_Z7outsidev"] == size_t(n));
    CHECK(counts["_Z6insidev"] == 0);
    CHECK(load_trace(paths[0].string()).count(trace::RecordKind::Nvtx) == 0);
}

TEST_CASE("e2e: cudaProfilerApi capture range records only inside it", "[cupti][e2e]") {
    E2E e("profiler", 40, {{"GPROF_CAPTURE_RANGE", "cudaProfilerApi"}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    auto paths = traces_in(e.dir.path().string());
    REQUIRE(paths.size() == 1);
    auto names = kernel_names(paths[0].string());
    CHECK(names == std::vector<std::string>(40, "_Z6insidev"));
    auto t = load_trace(paths[0].string());
    int starts = 0, stops = 0;
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::Capture && r.capture.reason == trace::CaptureReason::ProfilerApi)
            (r.capture.action == trace::CaptureAction::Start ? starts : stops)++;
    CHECK(starts == 1);
    CHECK(stops == 1);
}

TEST_CASE("e2e: the periodic flush saves GPU records from SIGKILL", "[cupti][e2e]") {
    E2E e("periodic", 300);
    INFO(e.run.err);
    CHECK(e.run.signal() == SIGKILL);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    CHECK_FALSE(ts[0].stats.has_end);
    CHECK(ts[0].count(trace::RecordKind::Kernel) == 300);
}

TEST_CASE("e2e: a crash keeps GPU records older than the flush period", "[cupti][e2e]") {
    E2E e("crash", 300);
    INFO(e.run.err);
    CHECK(e.run.signal() == SIGSEGV);  // exit status unchanged by the collector
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    CHECK(ts[0].count(trace::RecordKind::Kernel) == 300);
}

TEST_CASE("e2e: a forced flush that hangs cannot hang the exit", "[cupti][e2e]") {
    E2E e("exit-hang", 20, {{"GPROF_TEST_STANDIN_SCRIPT", "flush-hang"}});
    INFO(e.run.err);
    CHECK(e.run.exit_code() == 0);
    CHECK(e.run.out == "done exit-hang (CUPTI subscribed: 1)\n");
    CHECK(e.seconds < 15);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    // What the periodic flush delivered is there; the watchdog's verdict is stated.
    CHECK(has_status(ts[0], "timed out"));
}

namespace {

size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = 0; (p = text.find(what, p)) != std::string::npos; ++p) ++n;
    return n;
}

std::vector<trace::GpuMetricSample> gpu_samples(const LoadedTrace& t) {
    std::vector<trace::GpuMetricSample> v;
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::GpuMetricSample) v.push_back(r.gpu_metric_sample);
    return v;
}

std::vector<trace::GpuMetricSet> gpu_sets(const LoadedTrace& t) {
    std::vector<trace::GpuMetricSet> v;
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::GpuMetricSet) v.push_back(r.gpu_metric_set);
    return v;
}

}  // namespace

TEST_CASE("e2e: GPU metrics: the values the stand-in's counters held, per sample, in the device's set order",
          "[cupti][e2e][gpu-metrics]") {
    E2E e("gpu-metrics", 10, {{"GPROF_GPU_METRICS_DEVICES", "all"}});
    INFO(e.run.err);
    CHECK(e.run.exit_code() == 0);
    CHECK(e.run.err.find("GPU metrics") == std::string::npos);  // nothing to say
    unsigned long long busy_from = 0, busy_until = 0, idle_from = 0;
    REQUIRE(std::sscanf(e.run.out.c_str(), "busy %llu %llu idle %llu", &busy_from, &busy_until, &idle_from) == 3);
    CHECK(e.run.out.find("done gpu-metrics (CUPTI subscribed: 1)\n") != std::string::npos);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    const LoadedTrace& t = ts[0];
    CHECK(t.count(trace::RecordKind::Kernel) == 10);
    auto sets = gpu_sets(t);
    REQUIRE(sets.size() == 1);  // `all`: the stand-in's one device
    CHECK(sets[0].device == 0);
    CHECK(t.str(sets[0].name) == "gh100");
    CHECK(t.str(sets[0].chip) == "GH100");
    CHECK(sets[0].interval_ns == 100'000);  // 10 kHz, the default
    // The set's columns, in its order (metric_sets.cpp): all ten fit one pass on GH100.
    std::vector<std::string> columns;
    std::string names = t.str(sets[0].metrics);
    for (size_t at = 0; at <= names.size();) {
        size_t space = std::min(names.find(' ', at), names.size());
        columns.push_back(names.substr(at, space - at));
        at = space + 1;
    }
    REQUIRE(columns.size() == 10);
    auto column = [&](const std::string& metric) {
        auto it = std::find(columns.begin(), columns.end(), metric);
        REQUIRE(it != columns.end());
        return static_cast<size_t>(it - columns.begin());
    };
    size_t sm = column("sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
    size_t dram = column("dram__throughput.avg.pct_of_peak_sustained_elapsed");
    size_t elapsed = column("gr__cycles_elapsed.max");
    size_t tensor = column("sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed");
    CHECK(t.count_status("GPU metrics sampled on device 0 (GH100): set gh100, 10 metrics every 100000 ns") == 1);

    auto samples = gpu_samples(t);
    size_t busy = 0, idle = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        const trace::GpuMetricSample& s = samples[i];
        INFO("sample " << i << " [" << s.start << ", " << s.end << ")");
        REQUIRE(s.value_count == 10);
        CHECK(s.device == 0);
        // One interval each (the stand-in's 32 ns timer step aside), contiguous: the first sample, which begins
        // before Start, is not among them, and nothing was lost.
        CHECK(s.end - s.start >= 100'000 - 32);
        CHECK(s.end - s.start <= 100'000 + 32);
        if (i) CHECK(s.start == samples[i - 1].end);
        if (s.start >= busy_from && s.end <= busy_until) {
            ++busy;
            CHECK(s.values[sm] == 99.5);
            CHECK(s.values[dram] == 12.25);
            CHECK(s.values[elapsed] == 166400);
            CHECK(s.values[tensor] == 0);
        } else if (s.start >= idle_from) {
            ++idle;
            CHECK(s.values[sm] == 0);
            CHECK(s.values[dram] == 0);
            CHECK(s.values[elapsed] == 166400);
        }
    }
    // 300 ms busy and 200 ms idle at 10 kHz: thousands each, unless the machine stalled the program.
    CHECK(busy >= 1000);
    CHECK(idle >= 500);
}

TEST_CASE("e2e: GPU metrics: each refusal is one line, in the trace too, and the program runs on",
          "[cupti][e2e][gpu-metrics]") {
    struct Case {
        std::string devices, script, set, line;
    };
    const Case cases[] = {
        {"all", "pm-insufficient-privileges", "",
         "GPU metrics not sampled on device 0: profiling not permitted (the driver restricts GPU performance "
         "counters to administrators: NVreg_RestrictProfilingToAdminUsers=1"},
        {"0", "pm-hardware-busy", "",
         "GPU metrics not sampled on device 0: another profiler holds the GPU's performance counters"},
        {"all", "pm-mig", "",
         "GPU metrics not sampled on device 0: the device is a MIG slice: PM sampling is not supported on MIG"},
        {"3", "", "", "GPU metrics not sampled on device 3: no such device in this process"},
        {"0", "", "hopper", "GPU metrics not sampled: GPROF_GPU_METRICS_SET=\"hopper\" is no metric set (gh100, ga100"},
    };
    for (const Case& c : cases) {
        std::map<std::string, std::string> env{{"GPROF_GPU_METRICS_DEVICES", c.devices}};
        if (!c.script.empty()) env["GPROF_TEST_STANDIN_SCRIPT"] = c.script;
        if (!c.set.empty()) env["GPROF_GPU_METRICS_SET"] = c.set;
        E2E e("basic", 10, env);
        INFO(c.devices << " " << c.script << " " << c.set << "\n" << e.run.err);
        CHECK(e.run.exit_code() == 0);
        CHECK(e.run.out == "done basic (CUPTI subscribed: 1)\n");
        CHECK(occurrences(e.run.err, "GPU metrics") == 1);
        CHECK(occurrences(e.run.err, c.line) == 1);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        CHECK(ts[0].count_status(c.line, trace::StatusLevel::Warning) == 1);
        CHECK(ts[0].count_status("GPU metrics", trace::StatusLevel::Warning) == 1);
        CHECK(ts[0].count(trace::RecordKind::GpuMetricSample) == 0);
        CHECK(ts[0].count(trace::RecordKind::Kernel) == 10);  // CUDA recorded as ever
    }
    {
        // Under gprof-run the summary lists it: the collector's stderr stays quiet.
        E2E e("basic", 10, {{"GPROF_GPU_METRICS_DEVICES", "0"}, {"GPROF_STATUS_IN_SUMMARY", "1"},
                            {"GPROF_TEST_STANDIN_SCRIPT", "pm-hardware-busy"}});
        CHECK(occurrences(e.run.err, "GPU metrics") == 0);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        CHECK(ts[0].count_status("another profiler holds", trace::StatusLevel::Warning) == 1);
    }
    {
        E2E e("basic", 10, {{"GPROF_GPU_METRICS_DEVICES", "none"}});
        CHECK(occurrences(e.run.err, "GPU metrics") == 0);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        CHECK(ts[0].count_status("GPU metrics") == 0);
        CHECK(ts[0].count(trace::RecordKind::GpuMetricSet) == 0);
    }
}

TEST_CASE("e2e: GPU metrics: samples lost to a full hardware buffer are counted and said with figures",
          "[cupti][e2e][gpu-metrics]") {
    // The stand-in's hardware buffer holds 8 samples: at 10 kHz and a drain every ~50 ms, most are lost.
    E2E e("gpu-metrics", 10, {{"GPROF_GPU_METRICS_DEVICES", "0"}, {"GPROF_TEST_STANDIN_SCRIPT", "pm-small-hardware-buffer"}});
    INFO(e.run.err);
    CHECK(e.run.exit_code() == 0);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    auto samples = gpu_samples(ts[0]);
    REQUIRE(samples.size() >= 2);
    uint64_t gaps_ns = 0;
    for (size_t i = 1; i < samples.size(); ++i) gaps_ns += samples[i].start - samples[i - 1].end;
    CHECK(gaps_ns > 100'000'000);  // most of the half second
    uint64_t lost = gaps_ns / 100'000;
    // "GPU metrics on device 0: N samples (M ms) lost of T: the hardware buffer overflowed K times ..."
    size_t at = e.run.err.find("GPU metrics on device 0: ");
    REQUIRE(at != std::string::npos);
    unsigned long long said = 0, ms = 0, of = 0;
    REQUIRE(std::sscanf(e.run.err.c_str() + at, "GPU metrics on device 0: %llu samples (%llu ms) lost of %llu", &said,
                        &ms, &of) == 3);
    // The lost intervals, each gap counted in whole intervals (the 32 ns timer step aside).
    CHECK(std::llabs(static_cast<long long>(said) - static_cast<long long>(lost)) <= 1);
    CHECK(of == said + samples.size());
    CHECK(ms == gaps_ns / 1'000'000);
    CHECK(ts[0].count_status("samples (", trace::StatusLevel::Warning) == 1);
    CHECK(occurrences(e.run.err, "GPU metrics") == 1);
}

TEST_CASE("e2e: another profiler's CUPTI subscriber: one stderr line, app unharmed, reason in the trace",
          "[cupti][e2e]") {
    E2E e("basic", 10, {{"GPROF_TEST_STANDIN_SCRIPT", "multiple-subscribers"}});
    INFO(e.run.err);
    CHECK(e.run.exit_code() == 0);
    CHECK(e.run.out == "done basic (CUPTI subscribed: 0)\n");
    size_t lines = 0;
    for (size_t p = 0; (p = e.run.err.find("another profiler", p)) != std::string::npos; ++p) ++lines;
    CHECK(lines == 1);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    CHECK(has_status(ts[0], "another profiler already uses CUPTI"));
    CHECK(ts[0].count(trace::RecordKind::Kernel) == 0);
    CHECK(ts[0].stats.has_end);
}

TEST_CASE("e2e: fork: parent and child each trace their own GPU work", "[cupti][e2e]") {
    E2E e("fork", 30);
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    CHECK(e.run.out.find("child 0") != std::string::npos);
    auto paths = traces_in(e.dir.path().string());
    REQUIRE(paths.size() == 2);  // the child gets its own trace file
    size_t parent_kernels = 0, child_kernels = 0;
    for (auto& p : paths) {
        auto names = kernel_names(p.string());
        auto t = load_trace(p.string());
        bool is_child = false;
        for (auto& n : names) is_child |= n == "_Z5childv";
        size_t parents = 0;
        for (auto& n : names) parents += n == "_Z6parentv";
        if (parents > 0) {
            parent_kernels = parents;
            CHECK(names.size() == parents);  // nothing of the child in the parent's file
        } else {
            child_kernels = names.size();
            CHECK(is_child);
            // The inherited subscription is the parent's, not another profiler's.
            CHECK_FALSE(has_status(t, "another profiler"));
        }
    }
    CHECK(parent_kernels == 31);
    CHECK(child_kernels == 30);
}

// ---- process trees, other CUPTI clients, the driver -------------------------------------------------------

namespace {

size_t api_calls_named(const LoadedTrace& t, const std::string& name) {
    size_t n = 0;
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::ApiCall && t.str(r.api.name) == name) ++n;
    return n;
}

// Device records, each checked to be the libcuda stand-in's device as the driver describes it.
size_t stand_in_devices(const LoadedTrace& t) {
    size_t n = 0;
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::Device) {
            ++n;
            CHECK(t.str(r.device.name) == "Stand-in GPU");
            CHECK(r.device.sm_count == 132);
        }
    return n;
}

size_t warnings_with(const LoadedTrace& t, const std::string& text) { return t.count_status(text, trace::StatusLevel::Warning); }

}  // namespace

TEST_CASE("e2e: another CUPTI client refused because gprof-run holds CUPTI is named, with the way out",
          "[cupti][e2e][clients]") {
    E2E e("second-tool", 20, {{"GPROF_TEST_SECOND_TOOL", GPROF_TEST_SECOND_TOOL}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    // The program's tool got CUPTI's own answer, unchanged, and CUPTI named us as the holder.
    CHECK(e.run.out.find("second tool: cuptiSubscribe -> 39\n") != std::string::npos);
    CHECK(e.run.out.find("second tool: cuptiSubscribe_v2 -> 39, held by CUPTI for gprof-run\n") != std::string::npos);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    const auto& t = ts[0];
    CHECK(t.count(trace::RecordKind::Kernel) == 40);  // gprof-run kept recording
    CHECK(warnings_with(t, "a CUPTI client in libgprof-test-second-tool.so asked CUPTI for a subscription while "
                           "gprof-run held it") == 1);
    CHECK(warnings_with(t, "kineto-test (in libgprof-test-second-tool.so) asked CUPTI") == 1);
    CHECK(warnings_with(t, "run gprof-run with -t nvtx") == 2);
    CHECK(e.run.err.find("kineto-test (in libgprof-test-second-tool.so) asked CUPTI") != std::string::npos);
}

TEST_CASE("e2e: our own subscription refused: the tool holding CUPTI is named", "[cupti][e2e][clients]") {
    E2E e("basic", 10, {{"GPROF_TEST_STANDIN_SCRIPT", "multiple-subscribers,holder=CUPTI for Nsight Systems"}});
    INFO(e.run.err);
    CHECK(e.run.exit_code() == 0);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    CHECK(warnings_with(ts[0], "another tool already uses CUPTI in this process: CUPTI for Nsight Systems") == 1);
    CHECK(e.run.err.find("CUPTI for Nsight Systems") != std::string::npos);
}

TEST_CASE("e2e: the collector's own driver queries are not the program's API calls", "[cupti][e2e][driver]") {
    E2E e("app-queries-device", 50, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    CHECK(e.run.out.find("device 0: Stand-in GPU") != std::string::npos);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    const auto& t = ts[0];
    CHECK(t.count(trace::RecordKind::Kernel) == 50);
    // The Device record came from our queries (made on the writer thread, at the context-created callback) ...
    CHECK(stand_in_devices(t) == 1);
    // ... and none of them shows as a call of the program; the program's own two calls do.
    CHECK(api_calls_named(t, "cuDeviceGet") == 1);
    CHECK(api_calls_named(t, "cuDeviceGetName") == 1);
    CHECK(api_calls_named(t, "cuDeviceGetAttribute") == 0);
    CHECK(api_calls_named(t, "cuDeviceTotalMem_v2") == 0);
    CHECK(api_calls_named(t, "cuDeviceGetUuid_v2") == 0);
    CHECK(api_calls_named(t, "cuDriverGetVersion") == 0);
}

TEST_CASE("e2e: a program that ends soon after its first context still gets its Device record",
          "[cupti][e2e][driver]") {
    // The driver shuts itself down at exit before the collector's exit handler runs (the libcuda stand-in models
    // it): a device query left to the end finds no driver. A writer period far longer than the program (60 s)
    // leaves it to the end unless the context's creation has it done at once.
    E2E e("short-after-context", 5, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}, {"GPROF_FLUSH_MS", "60000"}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    const auto& t = ts[0];
    CHECK(t.count(trace::RecordKind::Kernel) == 5);
    CHECK(stand_in_devices(t) == 1);
    CHECK(t.count_status("no longer answered", trace::StatusLevel::Warning) == 0);
}

TEST_CASE("e2e: a program that exits the moment its first context exists still gets its Device record",
          "[cupti][e2e][driver]") {
    // No time for the woken writer: the query must still run before the driver's own exit handlers (the
    // collector's hook registered inside cuInit runs first). Five runs: the race is lost in some without it.
    for (int i = 0; i < 5; ++i) {
        E2E e("exit-at-context", 0,
              {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}, {"GPROF_FLUSH_MS", "60000"}});
        INFO(e.run.err);
        REQUIRE(e.run.exit_code() == 0);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        CHECK(stand_in_devices(ts[0]) == 1);
    }
}

TEST_CASE("e2e: a driver older than CUPTI's CUDA: one line with both versions, the program left alone",
          "[cupti][e2e][driver]") {
    E2E e("basic", 10, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}, {"GPROF_TEST_CUDA_DRIVER_VERSION", "12040"}});
    INFO(e.run.err);
    CHECK(e.run.exit_code() == 0);
    CHECK(e.run.out == "done basic (CUPTI subscribed: 0)\n");  // CUPTI never touched
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    const std::string line = "the CUDA driver supports CUDA 12.4 but CUPTI 13.0 (API version 130001)";
    CHECK(warnings_with(ts[0], line) == 1);
    CHECK(warnings_with(ts[0], "needs a driver for CUDA 13 or newer (r580 or later)") == 1);
    CHECK(warnings_with(ts[0], "pip install nvidia-cuda-cupti-cu12") == 1);  // the way out
    size_t said = 0;
    for (size_t p = 0; (p = e.run.err.find(line, p)) != std::string::npos; ++p) ++said;
    CHECK(said == 1);
    CHECK(ts[0].count(trace::RecordKind::Kernel) == 0);
    CHECK(ts[0].stats.has_end);
}

TEST_CASE("e2e: a forked child of a CUDA process that never calls CUDA has nothing about CUDA to report",
          "[cupti][e2e][tree]") {
    E2E e("fork-cpu-child", 20, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    CHECK(e.run.out.find("cpu child 0") != std::string::npos);
    auto ts = e.traces();
    REQUIRE(ts.size() == 2);
    const auto& parent = ts[0].count(trace::RecordKind::Kernel) > 0 ? ts[0] : ts[1];
    const auto& child = &parent == &ts[0] ? ts[1] : ts[0];
    CHECK(parent.count(trace::RecordKind::Kernel) == 40);
    CHECK(child.header.ppid == parent.header.pid);
    CHECK(child.count_status("CUDA activity not recorded") == 0);
    CHECK(child.count_status("CUDA", trace::StatusLevel::Warning) == 0);
    CHECK(child.stats.has_end);
    CHECK(e.run.err.find("never initialised") == std::string::npos);
}

TEST_CASE("e2e: libcuda loaded but no CUDA call: no warning, and CUDA initialised behind our back: one",
          "[cupti][e2e][driver]") {
    SECTION("loaded, never initialised") {
        E2E e("loaded-no-init", 0, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}});
        INFO(e.run.err);
        CHECK(e.run.exit_code() == 0);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        CHECK(ts[0].count_status("CUDA activity not recorded", trace::StatusLevel::Warning) == 0);
        CHECK(ts[0].count_status("never initialised CUDA") == 1);  // an Info line: the fact, no alarm
        CHECK(e.run.err.find("CUDA activity not recorded") == std::string::npos);
    }
    SECTION("initialised without the injection") {
        E2E e("init-without-injection", 0, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}});
        INFO(e.run.err);
        CHECK(e.run.exit_code() == 0);
        auto ts = e.traces();
        REQUIRE(ts.size() == 1);
        CHECK(warnings_with(ts[0], "without gprof-run's injection") == 1);
    }
}

TEST_CASE("e2e: the role of a process in a distributed job is recorded", "[cupti][e2e][tree]") {
    E2E e("basic", 1, {{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}, {"SLURM_PROCID", "9"}});
    INFO(e.run.err);
    REQUIRE(e.run.exit_code() == 0);
    auto ts = e.traces();
    REQUIRE(ts.size() == 1);
    size_t roles = 0;
    for (auto& r : ts[0].records)
        if (r.kind == trace::RecordKind::Role) {
            ++roles;
            CHECK(r.role.rank == 3);  // torchrun's RANK wins over Slurm's
            CHECK(r.role.local_rank == 1);
            CHECK(r.role.world_size == 8);
            CHECK(ts[0].str(r.role.variables) == "RANK=3 LOCAL_RANK=1 WORLD_SIZE=8");
        }
    CHECK(roles == 1);
}
