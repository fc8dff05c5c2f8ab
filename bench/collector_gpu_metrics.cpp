// Cost of the collector's GPU-metrics sampler for one device (issue 37, step 7): the collector's own DeviceSampler
// (collector/metrics/pm_sampler.cpp) opened on the CUPTI stand-in's PM sampling (tests/collector/cupti_standin,
// a test double) for GH100 with the gh100 set (10 metrics), drained every 50 ms as the sampler thread
// (session/gpu_metrics.cpp) does, and its samples encoded with the trace writer as the pipeline's writer thread does.
//
// What is real here and what is not:
//   - drain: ours (the loop, GetSampleInfo per sample, the gap accounting, the batch) around the stand-in's
//     DecodeData and EvaluateToGpuValues. Neither of those is CUPTI's cost: the real decode runs in the driver on
//     the GPU's records and the real evaluation in libnvperf_host on a real counter-data image; the stand-in's image
//     is its own format (start, end, the values), which the real host library cannot evaluate, so both wait for a
//     GPU. They are timed apart (`decode_ns`, `evaluate_ns`, the stand-in's) so that what is left (`ours_ns`) is the
//     collector's part.
//   - encode: the real codec (TraceWriter::add of each GpuMetricSample to /dev/null, as the writer thread does);
//     `bytes_per_sample` counts the chunks' framing too (bytes_written after a flush per drain).
//   - values: the stand-in's counters hold what the H200 gave (tests/data/h200/pm-sampling-probe.json: a copy-kernel
//     sample, busy; an idle one), because the trace's `reals` encoding takes 1-10 bytes a value by its bits. PCIe
//     bytes were not in the probe: 512-byte multiples are assumed for them.
//
// Manual time is the drain's thread CPU time (the sleep between drains costs none), per drain of ~50 ms of samples;
// the counters are per sample (ns) and per second of run at the frequency (% of one core, MB of trace).
//   collector_gpu_metrics [--benchmark_*]
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cupti_loader/loader.h"
#include "metrics/pm_sampler.h"
#include "standin_bench.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::collector;
using namespace gprof::bench;

namespace {

constexpr auto kDrainPeriod = std::chrono::milliseconds(50);  // session/gpu_metrics.cpp's kDrainPeriod

// The gh100 set's metrics (metric_sets.cpp's order is the set's; the stand-in matches by name) with a sample's
// values. Busy: the H200's copy kernel (bare run, 2026-11-27): shares not integral (10 bytes each in `reals`).
struct Value {
    const char* metric;
    double idle, busy;
};
const Value kValues[] = {
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", 0, 96.358},
    // Assumed (0 in the copy phase): every share not integral, the larger case.
    {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", 0, 41.2871},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 0.000319186, 84.0369},
    {"sm__warps_active.avg.pct_of_peak_sustained_elapsed", 0, 92.455},
    {"gr__cycles_active.sum", 485, 166327},
    {"gr__cycles_elapsed.max", 166419, 166327},
    {"dram__bytes_read.sum", 1280, 202155264},
    {"dram__bytes_write.sum", 256, 202250240},
    {"pcie__read_bytes.sum", 0, 2621440},  // assumed (not in the probe)
    {"pcie__write_bytes.sum", 0, 1310720},
};

// The stand-in's DecodeData and EvaluateToGpuValues, timed apart (their cost is the stand-in's, not CUPTI's) on the
// thread's CPU clock: wall time would count the preemptions of a loaded machine. The clock calls cost about as much
// as an evaluation, so they run only in every other drain (the split); the drain's total comes from the others.
metrics::PmSamplingApi g_real;
uint64_t g_decode_ns = 0, g_evaluate_ns = 0;
uint64_t g_clock_pair_ns = 0;  // what one pair of clock calls adds, taken off each timed call

CUptiResult timed_decode(CUpti_PmSampling_DecodeData_Params* p) {
    uint64_t t0 = thread_cpu_ns();
    CUptiResult r = g_real.DecodeData(p);
    uint64_t t = thread_cpu_ns() - t0;
    g_decode_ns += t > g_clock_pair_ns ? t - g_clock_pair_ns : 0;
    return r;
}

CUptiResult timed_evaluate(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
    uint64_t t0 = thread_cpu_ns();
    CUptiResult r = g_real.host.EvaluateToGpuValues(p);
    uint64_t t = thread_cpu_ns() - t0;
    g_evaluate_ns += t > g_clock_pair_ns ? t - g_clock_pair_ns : 0;
    return r;
}

void calibrate_clock() {
    constexpr uint64_t kPairs = 100000;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < kPairs; ++i) {
        uint64_t t0 = thread_cpu_ns();
        sum += thread_cpu_ns() - t0;
    }
    g_clock_pair_ns = sum / kPairs;
}

void time_apart(metrics::PmSamplingApi& a, bool on) {
    a.DecodeData = on ? &timed_decode : g_real.DecodeData;
    a.host.EvaluateToGpuValues = on ? &timed_evaluate : g_real.host.EvaluateToGpuValues;
}

// The stand-in loaded as the collector loads a CUPTI, its PM sampling resolved and wrapped; once per process.
metrics::PmSamplingApi& api() {
    static metrics::PmSamplingApi* a = [] {
        cupti::LoadResult r = cupti::load_cupti_file(GPROF_TEST_CUPTI_STANDIN, "bench");
        if (!r.api) {
            std::fprintf(stderr, "collector_gpu_metrics: %s\n", r.reason.c_str());
            std::exit(1);
        }
        auto* out = new metrics::PmSamplingApi();
        std::string missing;
        if (!metrics::resolve_pm_sampling(*r.api, *out, missing) || !metrics::initialize_profiler(*out).empty()) {
            std::fprintf(stderr, "collector_gpu_metrics: no PM sampling in the stand-in (%s)\n", missing.c_str());
            std::exit(1);
        }
        g_real = *out;
        calibrate_clock();
        return out;
    }();
    return *a;
}

// Args: sampling frequency (Hz), busy (1) or idle (0) values.
void BM_sampler(benchmark::State& state) {
    const uint64_t hz = static_cast<uint64_t>(state.range(0));
    const bool busy = state.range(1) != 0;
    metrics::PmSamplingApi& a = api();
    for (const Value& v : kValues) SI(gprof_test_standin_pm_set)(v.metric, busy ? v.busy : v.idle);

    metrics::DeviceSampler sampler;
    std::vector<std::string> notes;
    std::string why = sampler.open(a, 0, "gh100", 1'000'000'000ull / hz, notes);
    if (why.empty()) why = sampler.start();
    if (!why.empty() || sampler.metrics().size() != std::size(kValues)) {
        state.SkipWithError(("sampler: " + why).c_str());
        return;
    }
    trace::TraceWriter writer;
    writer.open(::open("/dev/null", O_WRONLY | O_CLOEXEC), gprof::testing::test_header());
    std::vector<trace::GpuMetricSample> batch;
    // The first drain holds the first sample (left out: it begins before Start): not a steady one.
    std::this_thread::sleep_for(kDrainPeriod);
    sampler.drain(batch);
    batch.clear();
    writer.flush();

    // Even drains: the drain as the collector runs it (manual time, the totals). Odd: the stand-in's calls timed.
    uint64_t drain_ns = 0, encode_ns = 0, samples = 0, bytes = 0;
    uint64_t split_decode_ns = 0, split_evaluate_ns = 0, split_samples = 0;
    bool split = false;
    for (auto _ : state) {
        std::this_thread::sleep_for(kDrainPeriod);
        time_apart(a, split);
        g_decode_ns = g_evaluate_ns = 0;
        uint64_t c0 = thread_cpu_ns();
        sampler.drain(batch);
        uint64_t c1 = thread_cpu_ns();
        uint64_t b0 = writer.bytes_written();  // before: a full chunk is written inside add()
        for (const trace::GpuMetricSample& s : batch) writer.add(s);
        writer.flush();  // the pipeline's writer flushes every 100 ms: a chunk per drain is close
        uint64_t c2 = thread_cpu_ns();
        state.SetIterationTime(static_cast<double>(c1 - c0) * 1e-9);
        if (split) {
            split_decode_ns += g_decode_ns;
            split_evaluate_ns += g_evaluate_ns;
            split_samples += batch.size();
        } else {
            drain_ns += c1 - c0;
            encode_ns += c2 - c1;
            bytes += writer.bytes_written() - b0;
            samples += batch.size();
        }
        split = !split;
        batch.clear();
    }
    time_apart(a, false);
    sampler.stop(batch);
    if (sampler.stats().overflows || sampler.stats().lost_samples || sampler.stats().evaluate_failures)
        state.SkipWithError("samples lost or not evaluated");
    if (!samples || !split_samples) return;

    // Per sample, then per second of run at `hz` (a drain holds ~50 ms of samples; the sleep overshoots a little).
    const double n = static_cast<double>(samples), ns = static_cast<double>(split_samples);
    const double drain = static_cast<double>(drain_ns) / n, encode = static_cast<double>(encode_ns) / n;
    const double decode = static_cast<double>(split_decode_ns) / ns;
    const double evaluate = static_cast<double>(split_evaluate_ns) / ns;
    const double per_s = static_cast<double>(hz);
    state.counters["samples_per_drain"] = n / static_cast<double>((state.iterations() + 1) / 2);
    state.counters["drain_ns"] = drain;        // per sample, all of it
    state.counters["decode_ns"] = decode;      // of which the stand-in's decode (not the driver's)
    state.counters["evaluate_ns"] = evaluate;  // of which the stand-in's evaluation (not libnvperf_host's)
    state.counters["ours_ns"] = drain - decode - evaluate;
    state.counters["encode_ns"] = encode;  // on the writer thread
    state.counters["drain_pct"] = 100 * drain * per_s / 1e9;  // of one core
    state.counters["ours_pct"] = 100 * (drain - decode - evaluate + encode) * per_s / 1e9;
    state.counters["bytes_per_sample"] = static_cast<double>(bytes) / n;
    state.counters["MB_per_s"] = static_cast<double>(bytes) / n * per_s / 1e6;
}

BENCHMARK(BM_sampler)
    ->ArgNames({"hz", "busy"})
    ->ArgsProduct({{1000, 10000, 100000}, {0, 1}})
    ->Iterations(40)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    open_standin("collector_gpu_metrics");
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
