// The analysis rules that read GPU metrics (issue 37, step 5d; docs/analysis.md): each with a generated run that
// must fire it and runs that must not.
#include <catch2/catch.hpp>

#include <set>

#include "analyze/analysis.h"
#include "report_fixture.h"

using namespace gprof::report;
using namespace gprof::testing;
namespace trace = gprof::trace;

namespace {

struct MetricsCase {
    double sm = 0, dram = 0, tensor = 0;  // every sample's values, percent
    const char* kernel = "elementwise_kernel";
    uint64_t kernel_us = 100;  // kernel time in each 100 us sample: 100 keeps the GPU busy all along
    uint32_t samples = 100;
};

// One device sampled every 100 us, a kernel (a large grid) in each sample.
void write_case(const std::string& path, const MetricsCase& mc) {
    write_trace(path, [&](trace::TraceWriter& w) {
        trace::Device d;
        d.id = 0;
        d.name = w.intern("NVIDIA H100 80GB HBM3");
        d.sm_count = 132;
        w.add(d);
        trace::GpuMetricSet set;
        set.name = w.intern("gh100");
        set.chip = w.intern("GH100");
        set.metrics = w.intern("sm__cycles_active.avg.pct_of_peak_sustained_elapsed "
                               "dram__throughput.avg.pct_of_peak_sustained_elapsed "
                               "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed");
        set.interval_ns = 100'000;
        w.add(set);
        const trace::StringId name = w.intern(mc.kernel);
        for (uint32_t i = 0; i < mc.samples; ++i) {
            trace::Kernel k;
            k.start = kT0 + i * 100'000ull;
            k.end = k.start + mc.kernel_us * 1000;
            k.stream = 7;
            k.correlation = i + 1;
            k.grid_x = 4096;
            k.block_x = 256;
            k.name = name;
            w.add(k);
            trace::GpuMetricSample s;
            s.start = kT0 + i * 100'000ull;
            s.end = s.start + 100'000;
            s.values[s.value_count++] = mc.sm;
            s.values[s.value_count++] = mc.dram;
            s.values[s.value_count++] = mc.tensor;
            w.add(s);
        }
    });
}

std::map<std::string, Finding> metric_findings(const MetricsCase& mc) {
    TempDir dir;
    write_case(dir.file("app.4242.gprof"), mc);
    AnalysisResult a = analyze_run(load_run({dir.path()}), {});
    std::map<std::string, Finding> out;
    for (const Finding& f : a.findings)
        if (f.rule == "sm_idle_while_busy" || f.rule == "memory_bound" || f.rule == "tensor_cores_unused")
            out.emplace(f.rule, f);
    return out;
}

std::set<std::string> rules(const std::map<std::string, Finding>& f) {
    std::set<std::string> out;
    for (const auto& [rule, _] : f) out.insert(rule);
    return out;
}

}  // namespace

TEST_CASE("GPU metrics findings: busy GPU, idle SMs", "[analyze][gpu-metrics]") {
    MetricsCase mc;
    mc.sm = 30;
    mc.dram = 20;
    mc.tensor = 40;
    auto f = metric_findings(mc);
    REQUIRE(rules(f) == std::set<std::string>{"sm_idle_while_busy"});
    const Finding& idle = f.at("sm_idle_while_busy");
    CHECK(idle.value == Approx(30));
    CHECK(idle.unit == "%");
    INFO(idle.evidence);
    CHECK(idle.evidence.find("GPU 0 is busy 100.0% after start-up, yet its SMs were active 30.0%") != std::string::npos);
    CHECK(idle.first == 0);
    CHECK(idle.last == 10'000'000);
    // Not GPU-bound (kernels 20 us of every 100 us): the launch-bound verdict says it, not this rule.
    mc.kernel_us = 20;
    CHECK(rules(metric_findings(mc)).empty());
    // Too few samples to judge.
    mc.kernel_us = 100;
    mc.samples = 5;
    CHECK(rules(metric_findings(mc)).empty());
}

TEST_CASE("GPU metrics findings: memory-bound", "[analyze][gpu-metrics]") {
    MetricsCase mc;
    mc.sm = 95;
    mc.dram = 85;
    auto f = metric_findings(mc);
    REQUIRE(rules(f) == std::set<std::string>{"memory_bound"});
    CHECK(f.at("memory_bound").value == Approx(85));
    // SMs idle and DRAM busy: memory explains it, so only memory_bound.
    mc.sm = 30;
    CHECK(rules(metric_findings(mc)) == std::set<std::string>{"memory_bound"});
    mc.dram = 59;
    mc.sm = 95;
    CHECK(rules(metric_findings(mc)).empty());
}

TEST_CASE("GPU metrics findings: tensor cores unused by matmul kernels", "[analyze][gpu-metrics]") {
    MetricsCase mc;
    mc.sm = 90;
    mc.dram = 30;
    mc.tensor = 0.2;
    mc.kernel = "ampere_sgemm_128x64_nn";
    auto f = metric_findings(mc);
    REQUIRE(rules(f) == std::set<std::string>{"tensor_cores_unused"});
    INFO(f.at("tensor_cores_unused").evidence);
    CHECK(f.at("tensor_cores_unused").value == Approx(0.2));
    CHECK(f.at("tensor_cores_unused").evidence.find("take 100.0% of kernel time on GPU 0 (most: ampere_sgemm_128x64_nn)") !=
          std::string::npos);
    mc.tensor = 45;  // the tensor pipe busy: cuBLAS picked tensor-core kernels
    CHECK(rules(metric_findings(mc)).empty());
    mc.tensor = 0;
    mc.kernel = "vectorAdd";  // no matmul: nothing to say about tensor cores
    CHECK(rules(metric_findings(mc)).empty());
}
