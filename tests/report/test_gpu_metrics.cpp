// GPU metrics over time (trace format 1.7, issue 37) in the run model: a device's set gives the columns, its samples
// are kept columnar in order, and what does not fit its set (no set for the device, more values than metrics) is
// left out, counted and said in one warning line each, never indexed past its row.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/model.h"
#include "trace_fixture.h"

using namespace gprof::report;
using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

constexpr uint64_t kT0 = 1'000'000'000;

tr::GpuMetricSample sample(uint32_t device, uint64_t start, std::initializer_list<double> values) {
    tr::GpuMetricSample s;
    s.start = start;
    s.end = start + 100'000;
    s.device = device;
    for (double v : values) s.values[s.value_count++] = v;
    return s;
}

}  // namespace

TEST_CASE("GPU metric samples: columns from their device's set, rows in order, misfits left out and said",
          "[report][gpu-metrics]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_trace(trace, [](tr::TraceWriter& w) {
        w.add(sample(0, kT0, {1, 2, 3}));  // before its device's set: no columns to put it in
        tr::GpuMetricSet set;
        set.device = 0;
        set.name = w.intern("gh100");
        set.chip = w.intern("GH100");
        set.metrics = w.intern("sm__active.pct  tensor.pct dram.pct");  // two spaces: no empty column
        set.interval_ns = 100'000;
        w.add(set);
        w.add(sample(0, kT0 + 100'000, {99.5, 40, 80.25}));
        w.add(sample(1, kT0 + 100'000, {1, 2}));              // device 1 has no set
        w.add(sample(0, kT0 + 200'000, {1, 2, 3, 4}));        // 4 values for 3 metrics
        w.add(sample(0, kT0 + 300'000, {0.5}));               // fewer values: the rest are missing (NaN)
        w.add(sample(0, kT0 + 400'000, {0, 0, 0}));
    });
    Run run = load_run({trace});
    REQUIRE(run.processes.size() == 1);
    const ProcessTrace& p = run.processes[0];
    REQUIRE(p.gpu_metrics.series.size() == 1);
    const GpuMetricSeries& s = p.gpu_metrics.series[0];
    CHECK(s.device == 0);
    CHECK(p.str(s.name) == "gh100");
    CHECK(p.str(s.chip) == "GH100");
    CHECK(s.interval_ns == 100'000);
    CHECK(s.metrics == std::vector<std::string>{"sm__active.pct", "tensor.pct", "dram.pct"});
    REQUIRE(s.samples() == 3);
    CHECK(s.starts == std::vector<tr::Timestamp>{kT0 + 100'000, kT0 + 300'000, kT0 + 400'000});
    CHECK(s.ends[0] == kT0 + 200'000);
    CHECK(s.value(0, 0) == 99.5);
    CHECK(s.value(0, 2) == 80.25);
    CHECK(s.value(1, 0) == 0.5);
    CHECK(std::isnan(s.value(1, 1)));
    CHECK(std::isnan(s.value(1, 2)));
    CHECK(s.value(2, 1) == 0.0);
    CHECK(p.gpu_metrics.samples_without_set == 2);
    CHECK(p.gpu_metrics.samples_too_many_values == 1);
    std::string warnings;
    for (const auto& line : p.warnings) warnings += line + "\n";
    INFO(warnings);
    CHECK(warnings.find("2 GPU metric samples left out: their device has no metric set before them") !=
          std::string::npos);
    CHECK(warnings.find("1 GPU metric samples left out: more values than their device's metric set has metrics") !=
          std::string::npos);
    // The samples span the process's time like any timed record, and --device selects them.
    LoadOptions only_device_1;
    only_device_1.filter.devices = {1};
    Run filtered = load_run({trace}, only_device_1);
    CHECK(filtered.processes[0].gpu_metrics.series.empty());
    CHECK(filtered.processes[0].gpu_metrics.samples_without_set == 1);
}

TEST_CASE("GPU metric sets of more than kMaxGpuMetrics metrics are left out and said", "[report][gpu-metrics]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_trace(trace, [](tr::TraceWriter& w) {
        std::string names;
        for (uint32_t i = 0; i <= tr::kMaxGpuMetrics; ++i) names += "m" + std::to_string(i) + " ";
        tr::GpuMetricSet set;
        set.device = 2;
        set.metrics = w.intern(names.c_str());
        w.add(set);
        w.add(sample(2, kT0, {1}));
    });
    Run run = load_run({trace});
    const ProcessTrace& p = run.processes[0];
    CHECK(p.gpu_metrics.series.empty());
    CHECK(p.gpu_metrics.sets_too_wide == 1);
    CHECK(p.gpu_metrics.samples_without_set == 1);
    bool said = false;
    for (const auto& line : p.warnings) said |= line.find("1 GPU metric sets left out: more than 32 metrics") == 0;
    CHECK(said);
}
