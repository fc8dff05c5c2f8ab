// Every verdict and rule of `analyze` on a trace built here with a known answer.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>

#include "analyze/analysis.h"
#include "synthetic_trace.h"

using namespace gprof;
using namespace gprof::report;
using gprof::testing::Synth;
using gprof::testing::TempDir;

namespace {

constexpr uint64_t us = 1000;

AnalysisResult analyze(const std::function<void(Synth&)>& fill, AnalysisOptions opt = {}, bool finish = true) {
    TempDir tmp;
    auto dir = tmp.path() / "run";
    testing::write_run(dir, fill, 4242, finish);
    Run run = load_run({dir});
    return analyze_run(run, opt);
}

const Finding* finding(const AnalysisResult& a, const std::string& rule) {
    for (const auto& f : a.findings)
        if (f.rule == rule) return &f;
    return nullptr;
}

}  // namespace

TEST_CASE("interval union and gaps") {
    auto u = interval_union({{10, 20}, {0, 5}, {15, 30}, {40, 40}, {29, 35}});
    REQUIRE(u.size() == 2);
    CHECK(u[0].start == 0);
    CHECK(u[1].start == 10);
    CHECK(u[1].end == 35);
    CHECK(total_length(u) == 30);
    CHECK(length_within(u, {3, 12}) == 4);
    auto g = gaps_within(u, {-5, 50});
    REQUIRE(g.size() == 3);
    CHECK(g[0].length() == 5);
    CHECK(g[1].length() == 5);
    CHECK(g[2].length() == 15);
    CHECK(intersection_length(u, {{4, 11}, {30, 100}}) == 1 + 1 + 5);
}

TEST_CASE("GPU-bound: kernels back to back") {
    auto a = analyze([](Synth& s) {
        for (uint64_t i = 0; i < 100; ++i) s.kernel("conv", i * 101 * us, i * 101 * us + 100 * us, 7, 4096, 256, 0, 0);
        s.api("cudaLaunchKernel", 0, 2 * us);
        s.api("cudaDeviceSynchronize", 2 * us, 10100 * us);
    });
    REQUIRE(a.devices.size() == 1);
    CHECK(a.devices[0].busy_pct == Approx(100.0 * 10000 / 10100).margin(0.01));
    CHECK(a.verdict == Verdict::GpuBound);
    CHECK(a.verdict_reason.find("99.0%") != std::string::npos);
}

// Issue 30: "GPU busy 1.3 %" on torch-train was decided by 5 s of imports. The verdict is decided after start-up and
// both figures are said.
TEST_CASE("start-up does not decide the verdict: a set-up pause after the first CUDA call") {
    auto a = analyze([](Synth& s) {
        s.api("cudaMalloc", 0, 1 * us);
        s.memcpy(trace::MemcpyKind::HtoD, 4096, 1 * us, 11 * us);  // the first GPU operation, then 3.99 ms of set-up
        for (uint64_t i = 0; i < 60; ++i) s.kernel("conv", 4000 * us + i * 100 * us, 4000 * us + (i + 1) * 100 * us);
        s.api("cudaDeviceSynchronize", 10000 * us - 2 * us, 10000 * us);
    });
    REQUIRE(a.devices.size() == 1);
    const DeviceUtilisation& d = a.devices[0];
    CHECK(d.busy_pct == Approx(100.0 * 6010 / 10000).margin(0.01));  // of the whole window
    CHECK(d.steady_start - a.window.start == static_cast<int64_t>(4000 * us));  // the end of the set-up pause
    CHECK(d.steady_busy_pct == Approx(100.0).margin(0.01));
    CHECK(a.evidence.startup_ns == static_cast<int64_t>(4000 * us));
    CHECK(a.verdict == Verdict::GpuBound);
    INFO(a.verdict_reason);
    // Both figures, the verdict's first.
    CHECK(a.verdict_reason.find("GPU busy 100.0% after start-up") != std::string::npos);
    CHECK(a.verdict_reason.find("start-up: the first 4.0000ms") != std::string::npos);
    CHECK(a.verdict_reason.find("60.1% of the whole capture window") != std::string::npos);
}

TEST_CASE("start-up ends at the device's first operation, and a short pause is not start-up") {
    auto a = analyze([](Synth& s) {
        s.api("cudaMalloc", 0, 1 * us);
        // First GPU work at 3 ms; a 1 ms pause at 6 ms is shorter than a fifth of the window: steady state.
        for (uint64_t i = 0; i < 30; ++i) s.kernel("conv", 3000 * us + i * 100 * us, 3000 * us + (i + 1) * 100 * us);
        for (uint64_t i = 0; i < 30; ++i) s.kernel("conv", 7000 * us + i * 100 * us, 7000 * us + (i + 1) * 100 * us);
        s.api("cudaDeviceSynchronize", 10000 * us - 2 * us, 10000 * us);
    });
    REQUIRE(a.devices.size() == 1);
    const DeviceUtilisation& d = a.devices[0];
    CHECK(d.busy_pct == Approx(60.0).margin(0.01));
    CHECK(d.steady_start - a.window.start == static_cast<int64_t>(3000 * us));
    CHECK(d.steady_busy_pct == Approx(100.0 * 6000 / 7000).margin(0.01));
    CHECK(a.verdict == Verdict::Balanced);  // 85.7 % after start-up: not CPU-bound, as 60 % of the window would say
    CHECK(a.verdict_reason.find("85.7% after start-up") != std::string::npos);
}

TEST_CASE("CPU/launch-bound: tiny kernels shorter than their launches") {
    auto a = analyze([](Synth& s) {
        for (uint64_t i = 0; i < 1000; ++i) {
            uint64_t t = i * 5 * us;
            s.kernel("tiny", t + 5 * us, t + 7 * us, 7, 4096, 256, t, t + 5 * us);
        }
    });
    CHECK(a.verdict == Verdict::CpuLaunchBound);
    CHECK(a.evidence.busy_pct == Approx(40.0).margin(0.2));
    CHECK(a.evidence.tiny_kernel_pct == Approx(100.0));
    CHECK(a.evidence.median_launch_ns == Approx(5000));
    CHECK(a.evidence.idle_in_api_pct > 99.0);
    CHECK(a.evidence.launch_rate_per_s == Approx(1000 / 0.005002).epsilon(0.01));
}

TEST_CASE("IO/data-bound: data loading between steps") {
    auto a = analyze([](Synth& s) {
        for (uint64_t i = 0; i < 10; ++i) {
            uint64_t t = i * 1000 * us;
            s.range("data_loading", t, t + 300 * us, 1);
            s.kernel("train", t + 310 * us, t + 910 * us, 7, 4096, 256, t + 300 * us, t + 310 * us);
            s.api("cudaStreamSynchronize", t + 310 * us, t + 910 * us);
            std::string name = "step " + std::to_string(i);
            s.range(name.c_str(), t, t + 1000 * us, 0);
        }
    });
    CHECK(a.verdict == Verdict::IoBound);
    CHECK(a.evidence.io_pct == Approx(30.0).margin(0.1));
    CHECK(a.evidence.busy_pct == Approx(60.0).margin(0.1));
    REQUIRE_FALSE(a.gaps.empty());
    // The largest gap is a data-loading phase: the main thread is in the range, outside CUDA.
    REQUIRE_FALSE(a.gaps[0].threads.empty());
    CHECK(a.gaps[0].threads[0].range == "data_loading");
    CHECK(a.gaps[0].threads[0].top_activity == "host code (no CUDA call)");
    CHECK(a.steps.steps.size() == 10);
}

TEST_CASE("sync-bound: the host waits after every kernel, then computes") {
    auto a = analyze([](Synth& s) {
        for (uint64_t i = 0; i < 20; ++i) {
            uint64_t t = i * 2005 * us;
            s.kernel("k", t + 5 * us, t + 1005 * us, 7, 4096, 256, t, t + 5 * us);
            s.api("cudaDeviceSynchronize", t + 5 * us, t + 1005 * us);
        }
    });
    CHECK(a.verdict == Verdict::SyncBound);
    CHECK(a.evidence.sync_blocked_pct == Approx(100.0 * 20000 / (19 * 2005 + 1005)).margin(0.1));
    CHECK(a.evidence.busy_pct == Approx(100.0 * 20000 / (19 * 2005 + 1005)).margin(0.1));
}

TEST_CASE("multi-stream overlap is not double-counted") {
    auto a = analyze([](Synth& s) {
        s.api("cudaLaunchKernel", 0, 1 * us);
        s.kernel("a", 0, 700 * us, 7);
        s.kernel("b", 300 * us, 1000 * us, 8);
        s.api("cudaDeviceSynchronize", 1 * us, 2000 * us);
    });
    REQUIRE(a.devices.size() == 1);
    const auto& d = a.devices[0];
    CHECK(d.kernel_ns == 1400 * us);     // naive sum: 70% of the window
    CHECK(d.busy_ns == 1000 * us);       // union: 50%
    CHECK(d.busy_pct == Approx(50.0));
    CHECK(d.streams == 2);

    auto full = analyze([](Synth& s) {
        s.kernel("a", 0, 700 * us, 7);
        s.kernel("b", 300 * us, 1000 * us, 8);
    });
    CHECK(full.devices[0].kernel_ns == 1400 * us);  // naive: 140%
    CHECK(full.devices[0].busy_pct == Approx(100.0));
    CHECK(full.verdict == Verdict::GpuBound);
}

TEST_CASE("findings: each rule with its number") {
    auto a = analyze([](Synth& s) {
        uint64_t t = 0;
        for (int step = 0; step < 4; ++step) {
            uint64_t step_start = t;
            // 20 small pageable synchronous H->D copies.
            for (int c = 0; c < 20; ++c) {
                s.memcpy(trace::MemcpyKind::HtoD, 4096, t + 10 * us, t + 14 * us, false, trace::MemoryKind::Pageable,
                         7, t, t + 15 * us);
                t += 15 * us;
            }
            // A kernel with 4 blocks on an 80-SM device, on stream 7; a short one on stream 8.
            s.kernel("small_grid", t + 5 * us, t + 505 * us, 7, 4, 128, t, t + 5 * us);
            s.kernel("other", t + 5 * us, t + 15 * us, 8, 4096, 128, t + 5 * us, t + 6 * us);
            t += 505 * us;
            if (step > 0) {
                s.api("cudaMalloc", t, t + 50 * us);
                s.api("cudaFree", t + 50 * us, t + 100 * us);
            }
            t += 200 * us;
            std::string name = "step " + std::to_string(step);
            s.range(name.c_str(), step_start, t);
        }
        s.dropped(5);
    });
    const Finding* f = finding(a, "pageable_memcpy");
    REQUIRE(f);
    CHECK(f->value == 80);
    f = finding(a, "small_copies");
    REQUIRE(f);
    CHECK(f->value == 80);
    f = finding(a, "sync_copies");
    REQUIRE(f);
    CHECK(f->value == 80);
    f = finding(a, "tiny_grids");
    REQUIRE(f);
    CHECK(f->value == Approx(100.0 * 500 / 510).margin(0.01));
    f = finding(a, "single_busy_stream");
    REQUIRE(f);
    CHECK(f->value > 90.0);
    f = finding(a, "alloc_in_loop");
    REQUIRE(f);
    CHECK(f->value == 6);  // 3 steady-state steps x (cudaMalloc + cudaFree)
    f = finding(a, "implicit_sync");
    REQUIRE(f);
    CHECK(f->value == 3);  // cudaFree
    f = finding(a, "dropped_records");
    REQUIRE(f);
    CHECK(f->value == 5);
    CHECK(a.findings.front().rule == "dropped_records");
    for (const auto& x : a.findings) {
        CHECK_FALSE(x.fix.empty());
        CHECK_FALSE(x.evidence.empty());
    }
}

TEST_CASE("a clean run has no findings") {
    auto a = analyze([](Synth& s) {
        for (uint64_t i = 0; i < 10; ++i) s.kernel("conv", i * 100 * us, i * 100 * us + 99 * us, 7, 4096, 256, 0, 0);
        s.api("cudaLaunchKernel", 0, 1 * us);
    });
    CHECK(a.findings.empty());
}

TEST_CASE("an unfinished trace is reported as lost records") {
    auto a = analyze([](Synth& s) { s.kernel("k", 0, 100 * us); }, {}, false);
    REQUIRE(finding(a, "dropped_records"));
}

TEST_CASE("NVTX ranges left open at the end are not lost records (issue 30)") {
    auto a = analyze([](Synth& s) {
        for (uint64_t i = 0; i < 10; ++i) s.kernel("conv", i * 100 * us, i * 100 * us + 99 * us, 7, 4096, 256, 0, 0);
        s.api("cudaLaunchKernel", 0, 1 * us);
        s.range_never_ended("serve", 0);
        s.range_never_ended("request", 5 * us, 1);
    });
    CHECK_FALSE(finding(a, "dropped_records"));
}

TEST_CASE("lost records: each source is named with the setting that controls it") {
    auto a = analyze([](Synth& s) {
        s.kernel("k", 0, 100 * us);
        s.dropped(7, trace::DropSource::CuptiBuffer);
        s.dropped(3, trace::DropSource::WriteError);
        s.range_never_ended("open", 0);
    });
    const Finding* f = finding(a, "dropped_records");
    REQUIRE(f);
    CHECK(f->value == 10);  // the open range is not among them
    CHECK(f->evidence.find("7 records dropped by CUPTI") != std::string::npos);
    CHECK(f->evidence.find("3 records could not be written") != std::string::npos);
    CHECK(f->fix.find("GPROF_CUPTI_DEVICE_BUFFER_MB") != std::string::npos);
    CHECK(f->fix.find("buffer option") == std::string::npos);  // no option that does not exist
}

TEST_CASE("steps: distribution, IPS and the module split") {
    AnalysisOptions opt;
    opt.batch_size = 32;
    auto a = analyze(
        [](Synth& s) {
            for (uint64_t i = 0; i < 5; ++i) {
                uint64_t t = i * 1000 * us;
                uint64_t extra = i == 4 ? 1000 * us : 0;  // one slow step
                s.range("forward", t, t + 300 * us, 1);
                s.kernel("fwd", t + 10 * us, t + 210 * us, 7, 4096, 256, t, t + 10 * us);
                s.range("backward", t + 300 * us, t + 700 * us, 1);
                s.kernel("bwd", t + 310 * us, t + 610 * us, 7, 4096, 256, t + 300 * us, t + 310 * us);
                s.range("optimizer", t + 700 * us, t + 900 * us, 1);
                s.kernel("opt", t + 710 * us, t + 810 * us, 7, 4096, 256, t + 700 * us, t + 710 * us);
                std::string name = "ProfileStep#" + std::to_string(i);
                s.range(name.c_str(), t, t + 1000 * us + (i == 4 ? extra : 0), 0);
            }
        },
        opt);
    const StepView& v = a.steps;
    REQUIRE(v.source == "nvtx");
    REQUIRE(v.steps.size() == 5);
    CHECK(v.median == Approx(1000 * us));
    CHECK(v.max == Approx(2000 * us));
    CHECK(v.total_ns == 6000 * us);
    REQUIRE(v.ips);
    CHECK(*v.ips == Approx(32.0 * 5 / 0.006));
    std::map<std::string, StepModule> m;
    for (const auto& x : v.modules) m[x.name] = x;
    REQUIRE(m.count("forward"));
    CHECK(m["forward"].cpu_ns == 5 * 300 * us);
    CHECK(m["forward"].gpu_ns == 5 * 200 * us);
    CHECK(m["backward"].cpu_ns == 5 * 400 * us);
    CHECK(m["backward"].gpu_ns == 5 * 300 * us);
    CHECK(m["optimizer"].gpu_ns == 5 * 100 * us);
    CHECK(m["Others"].cpu_ns == 6000 * us - 5 * 900 * us);
    CHECK(m["Others"].gpu_ns == 0);
    CHECK(v.gpu_total_ns == 5 * 600 * us);
}

TEST_CASE("steps from a custom pattern and from profiler windows") {
    auto a = analyze(
        [](Synth& s) {
            s.range("epoch-batch", 0, 100 * us);
            s.range("epoch-batch", 100 * us, 300 * us);
            s.kernel("k", 0, 50 * us);
        },
        {"epoch-batch", {}, 5});
    CHECK(a.steps.steps.size() == 2);
    auto b = analyze([](Synth& s) {
        s.kernel("k", 0, 50 * us);
        for (uint64_t i = 0; i < 3; ++i) {
            trace::Capture c;
            c.reason = trace::CaptureReason::ProfilerApi;
            c.timestamp = testing::kT0 + i * 100 * us;
            c.action = trace::CaptureAction::Start;
            s.writer().add(c);
            c.timestamp += 80 * us;
            c.action = trace::CaptureAction::Stop;
            s.writer().add(c);
        }
    });
    CHECK(b.steps.source == "profiler-api");
    REQUIRE(b.steps.steps.size() == 3);
    CHECK(b.steps.steps[0].duration() == 80 * us);
}

TEST_CASE("timeline slices: one non-overlapping track each") {
    auto a = analyze([](Synth& s) {
        for (uint64_t i = 0; i < 10; ++i) {
            uint64_t t = i * 1000 * us;
            s.range("data_loading", t, t + 300 * us, 1);
            s.kernel("train", t + 310 * us, t + 910 * us, 7, 4, 256, t + 300 * us, t + 310 * us);
            std::string name = "step " + std::to_string(i);
            s.range(name.c_str(), t, t + 1000 * us, 0);
        }
    });
    auto slices = analysis_timeline_slices(a);
    std::map<std::string, std::vector<AnalysisSlice>> tracks;
    for (auto& s : slices) tracks[s.track].push_back(s);
    CHECK(tracks.count("verdict"));
    CHECK(tracks.count("idle gaps GPU 0"));
    for (auto& [name, list] : tracks) {
        std::sort(list.begin(), list.end(), [](auto& x, auto& y) { return x.start < y.start; });
        for (size_t i = 1; i < list.size(); ++i) CHECK(list[i].start >= list[i - 1].start + list[i - 1].dur);
        for (auto& s : list) CHECK(s.dur >= 0);
    }
}

TEST_CASE("the end-of-run section names the verdict") {
    TempDir tmp;
    auto dir = tmp.path() / "run";
    testing::write_run(dir, [](Synth& s) {
        for (uint64_t i = 0; i < 100; ++i) s.kernel("conv", i * 100 * us, i * 100 * us + 100 * us);
    });
    std::ostringstream out;
    print_analysis_section(load_run({dir}), out);
    CHECK(out.str().find("Analysis: GPU-bound") != std::string::npos);
}

// Issue 33: `gprof-report summary` makes its Analysis section from a model without the NVTX ranges the section does
// not read (summary_section_reads_range). The section must be the one the whole model gives, to the byte, where those
// ranges are most of the trace and decide the capture window.
namespace {

std::string section_of(const std::filesystem::path& dir, const std::function<bool(std::string_view)>& keep,
                       Run* loaded = nullptr) {
    LoadOptions lo;
    lo.keep_nvtx_named = keep;
    Run run = load_run({dir}, lo);
    std::ostringstream out;
    print_analysis_section(run, out);
    if (loaded) *loaded = std::move(run);
    return out.str();
}

}  // namespace

TEST_CASE("the summary's section from a model without the ranges it does not read is the whole model's") {
    struct Case {
        const char* what;
        std::function<void(Synth&)> fill;
    };
    const std::vector<Case> cases = {
        {"steps, data loading and op ranges around every launch; the window is an op range's (IO-bound)",
         [](Synth& s) {
             s.range("aten::setup", 0, 40'000 * us);  // the widest record: it alone decides the capture window
             s.range("aten::mark_like", 39'990 * us, 39'990 * us);  // a zero-length range: never a host range
             for (uint64_t i = 0; i < 20; ++i) {
                 uint64_t t = 1000 * us + i * 1500 * us;
                 s.range("data_loading", t, t + 200 * us, 1);
                 s.memcpy(trace::MemcpyKind::HtoD, 1 << 20, t + 210 * us, t + 260 * us, false,
                          trace::MemoryKind::Pageable, 7, t + 200 * us, t + 270 * us);
                 for (uint64_t k = 0; k < 4; ++k) {
                     uint64_t o = t + 300 * us + k * 250 * us;
                     s.range(k % 2 ? "aten::linear" : "aten::conv2d", o, o + 200 * us, 1);
                     s.range("aten::addmm", o + 10 * us, o + 190 * us, 2);
                     s.kernel("gemm", o + 40 * us, o + 180 * us, 7, 16, 256, o + 20 * us, o + 30 * us);
                 }
                 s.api("cudaMalloc", t + 1300 * us, t + 1310 * us);
                 s.range(("ProfilerStep#" + std::to_string(i)).c_str(), t, t + 1400 * us, 0);
             }
             s.range_never_ended("aten::dangling", 39'000 * us, 3);
         }},
        {"op ranges on threads without CUDA calls, steps on the launching one (CPU/launch-bound)",
         [](Synth& s) {
             for (uint64_t i = 0; i < 30; ++i) {
                 uint64_t t = i * 1000 * us;
                 for (uint64_t tid = 200; tid < 203; ++tid)
                     for (uint64_t k = 0; k < 5; ++k)
                         s.range("worker_op", t + k * 150 * us, t + k * 150 * us + 120 * us, 0, tid);
                 s.kernel("tiny", t + 100 * us, t + 120 * us, 7, 4, 256, t + 10 * us, t + 90 * us);
                 s.range("train_step", t, t + 900 * us, 0);
             }
             s.range("worker_op", 29'990 * us, 31'000 * us, 0, 201);  // after every CUDA record: the window's end
         }},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        TempDir tmp;
        auto dir = tmp.path() / "run";
        testing::write_run(dir, c.fill);
        Run whole, reduced;
        const std::string expected = section_of(dir, {}, &whole);
        const std::string got = section_of(dir, summary_section_reads_range, &reduced);
        CHECK(got == expected);
        // The ranges were left out (else this compares the whole model with itself), yet still widen the window.
        REQUIRE(reduced.processes.size() == 1);
        CHECK(reduced.processes[0].nvtx_left_out > 0);
        CHECK(reduced.processes[0].nvtx.size() + reduced.processes[0].nvtx_left_out == whole.processes[0].nvtx.size());
        CHECK(capture_window(reduced).start == capture_window(whole).start);
        CHECK(capture_window(reduced).end == capture_window(whole).end);
        // And the section does read the ranges that are kept: without them it changes.
        CHECK(section_of(dir, [](std::string_view) { return false; }) != expected);
    }
}
