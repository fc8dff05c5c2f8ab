// Issue 37, step 2: the GPU metric sets (collector/metrics/metric_sets) made into one-pass PM-sampling config images
// by the real profiler host API (libcupti + libnvperf_host of the CUDA toolkit, no GPU needed), and by the stand-in
// (what CI's end-to-end tests will sample through). The facts asserted per chip were read from CUDA 13.0's host
// library on 2026-11-27 (the PM-sampling probe's --host-only agrees).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <set>
#include <string>
#include <vector>

#include "cupti_loader/loader.h"
#include "metrics/config_image.h"
#include "metrics/metric_sets.h"

using namespace gprof::collector;
using metrics::MetricConfig;
using metrics::MetricSet;

namespace {

const cupti::CuptiApi* load(const char* path) {
    cupti::LoadResult r = cupti::load_cupti_file(path, "test");
    INFO(r.reason);
    REQUIRE(r.api);
    return r.api;  // leaked on purpose, as the session does
}

const cupti::CuptiApi* real_cupti() {
    static const cupti::CuptiApi* api = std::string(GPROF_TEST_REAL_CUPTI).empty() ? nullptr
                                                                                    : load(GPROF_TEST_REAL_CUPTI);
    return api;
}

metrics::ProfilerHostApi host_of(const cupti::CuptiApi& api) {
    metrics::ProfilerHostApi host;
    std::string missing;
    INFO("missing " << missing);
    REQUIRE(metrics::resolve_profiler_host(api, host, missing));
    return host;
}

// The real library's host API, or null (said) on a machine without the toolkit's libcupti.
std::optional<metrics::ProfilerHostApi> real_host() {
    const cupti::CuptiApi* api = real_cupti();
    if (!api) {
        WARN("no toolkit libcupti.so.13 on this machine: the real host API is not tested");
        return std::nullopt;
    }
    return host_of(*api);
}

// The number of passes of `image`, asked of the library independently of build_metric_config.
size_t passes_of(const metrics::ProfilerHostApi& host, const std::vector<uint8_t>& image) {
    CUpti_Profiler_Host_GetNumOfPasses_Params p{};
    p.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    p.configImageSize = image.size();
    p.pConfigImage = const_cast<uint8_t*>(image.data());
    REQUIRE(host.GetNumOfPasses(&p) == CUPTI_SUCCESS);
    return p.numOfPasses;
}

std::vector<std::string> names(const std::vector<metrics::DroppedMetric>& dropped) {
    std::vector<std::string> out;
    for (const auto& d : dropped) out.push_back(d.name);
    return out;
}

}  // namespace

TEST_CASE("metric sets: unique names, each chip in one set, lookups by name and by chip", "[metrics]") {
    std::set<std::string> set_names, chips;
    for (const MetricSet& s : metrics::metric_sets()) {
        CHECK(set_names.insert(std::string(s.name)).second);
        CHECK_FALSE(s.metrics.empty());
        for (const char* c : s.chips) CHECK(chips.insert(c).second);
        CHECK(metrics::find_metric_set(s.name) == &s);
    }
    REQUIRE(metrics::default_metric_set("GH100"));
    CHECK(metrics::default_metric_set("GH100")->name == "gh100");
    CHECK(metrics::default_metric_set("GB202")->name == "gb20x");
    CHECK(metrics::default_metric_set("GV100") == nullptr);  // Volta: the host API refuses PM sampling there
    CHECK(metrics::find_metric_set("GH100") == nullptr);     // names are lower case, as nsys's
    CHECK(metrics::find_metric_set("") == nullptr);
    CHECK(metrics::metric_set_names().find("gh100, ga100") == 0);
}

TEST_CASE("real host API: every set has a one-pass config image on each of its chips", "[metrics][real]") {
    auto real = real_host();
    if (!real) return;
    const metrics::ProfilerHostApi& host = *real;
    for (const MetricSet& s : metrics::metric_sets()) {
        for (const char* chip : s.chips) {
            MetricConfig c = metrics::build_metric_config(host, chip, s, nullptr);
            INFO(s.name << " on " << chip << ": " << c.error << " " << metrics::describe_dropped(c, s, chip));
            REQUIRE(c.ok());
            CHECK(passes_of(host, c.image) == 1);
            CHECK(c.metrics.size() + c.dropped.size() == s.metrics.size());
            // The headline share is never the one left out.
            CHECK(std::find(c.metrics.begin(), c.metrics.end(),
                            std::string("sm__cycles_active.avg.pct_of_peak_sustained_elapsed")) != c.metrics.end());
        }
    }
}

TEST_CASE("real host API: what each family keeps and leaves out (CUDA 13.0)", "[metrics][real]") {
    auto real = real_host();
    if (!real) return;
    const metrics::ProfilerHostApi& host = *real;
    auto config = [&](const char* set, const char* chip) {
        const MetricSet* s = metrics::find_metric_set(set);
        REQUIRE(s);
        return metrics::build_metric_config(host, chip, *s, nullptr);
    };
    // Hopper: the probe's eight and PCIe read/write, all in one pass.
    MetricConfig gh100 = config("gh100", "GH100");
    CHECK(gh100.metrics.size() == 10);
    CHECK(gh100.dropped.empty());
    // Ampere, Ada, Blackwell GeForce: warps active needs a second pass beside SM active, tensor active and DRAM
    // throughput; the rest fits.
    for (auto [set, chip] : {std::pair{"ga100", "GA100"}, {"ga10x", "GA102"}, {"ad10x", "AD102"}, {"gb20x", "GB202"}}) {
        MetricConfig c = config(set, chip);
        INFO(set << " on " << chip);
        CHECK(names(c.dropped) == std::vector<std::string>{"sm__warps_active.avg.pct_of_peak_sustained_elapsed"});
        REQUIRE(c.dropped.size() == 1);
        CHECK(c.dropped[0].why == "needs a second pass");
    }
    CHECK(config("gb100", "GB100").dropped.empty());
    // A metric the chip lacks is left out and said; the others stay.
    constexpr std::array with_pcie = {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "pcie__read_bytes.sum"};
    MetricSet custom{"custom", "test", {}, with_pcie};
    MetricConfig gb100 = metrics::build_metric_config(host, "GB100", custom, nullptr);
    REQUIRE(gb100.ok());
    CHECK(gb100.metrics == std::vector<std::string>{"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"});
    REQUIRE(gb100.dropped.size() == 1);
    CHECK(gb100.dropped[0].why == "not on GB100 (CUPTI_ERROR_INVALID_PARAMETER)");
    CHECK(metrics::describe_dropped(gb100, custom, "GB100") ==
          "kept 1 of 2 metrics of custom on GB100; left out pcie__read_bytes.sum (not on GB100 "
          "(CUPTI_ERROR_INVALID_PARAMETER))");
}

TEST_CASE("real host API: a chip it does not know or will not sample is one line, no image", "[metrics][real]") {
    auto real = real_host();
    if (!real) return;
    const metrics::ProfilerHostApi& host = *real;
    const MetricSet& hopper = *metrics::find_metric_set("gh100");
    MetricConfig unknown = metrics::build_metric_config(host, "GH102", hopper, nullptr);
    CHECK_FALSE(unknown.ok());
    CHECK(unknown.error == "the profiler host API does not know chip GH102 (CUPTI_ERROR_INVALID_CHIP_NAME)");
    MetricConfig volta = metrics::build_metric_config(host, "GV100", hopper, nullptr);
    CHECK_FALSE(volta.ok());
    CHECK(volta.error == "the profiler host API does not know chip GV100 (CUPTI_ERROR_NOT_SUPPORTED)");
    // A set none of whose metrics the chip has.
    constexpr std::array only_pcie = {"pcie__read_bytes.sum"};
    MetricSet none{"pcie", "test", {}, only_pcie};
    MetricConfig empty = metrics::build_metric_config(host, "GB100", none, nullptr);
    CHECK_FALSE(empty.ok());
    CHECK(empty.error == "no metric of set pcie can be sampled on GB100");
    CHECK(empty.dropped.size() == 1);
}

TEST_CASE("stand-in host API: the Hopper set as the real library configures it", "[metrics]") {
    const cupti::CuptiApi* api = load(GPROF_TEST_CUPTI_STANDIN);
    metrics::ProfilerHostApi host = host_of(*api);
    const MetricSet& hopper = *metrics::find_metric_set("gh100");
    MetricConfig c = metrics::build_metric_config(host, "GH100", hopper, nullptr);
    REQUIRE(c.ok());
    CHECK(c.metrics.size() == hopper.metrics.size());
    CHECK(c.dropped.empty());
    CHECK(passes_of(host, c.image) == 1);
    // The pair GH100 cannot count in one pass: the later one is left out.
    constexpr std::array pair = {"sm__warps_active.avg.pct_of_peak_sustained_elapsed",
                                 "sm__inst_executed_realtime.sum"};
    MetricSet two{"pair", "test", {}, pair};
    MetricConfig p = metrics::build_metric_config(host, "GH100", two, nullptr);
    CHECK(p.metrics == std::vector<std::string>{"sm__warps_active.avg.pct_of_peak_sustained_elapsed"});
    CHECK(names(p.dropped) == std::vector<std::string>{"sm__inst_executed_realtime.sum"});
    // The stand-in knows GH100 only.
    CHECK(metrics::build_metric_config(host, "GA100", hopper, nullptr).error ==
          "the profiler host API does not know chip GA100 (CUPTI_ERROR_INVALID_CHIP_NAME)");
}

TEST_CASE("a CUPTI without the host API (12.4) is said, not crashed on", "[metrics]") {
    const cupti::CuptiApi* api = load(GPROF_TEST_CUPTI_STANDIN_12_4);
    metrics::ProfilerHostApi host;
    std::string missing;
    CHECK_FALSE(metrics::resolve_profiler_host(*api, host, missing));
    CHECK(missing == "cuptiProfilerHostInitialize");
    MetricConfig c = metrics::build_metric_config(host, "GH100", *metrics::find_metric_set("gh100"), nullptr);
    CHECK_FALSE(c.ok());
    CHECK(c.error == "this CUPTI has no profiler host API (cuptiProfilerHost*, CUDA 12.6 and later)");
}
