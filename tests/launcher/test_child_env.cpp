// The environment the app is started with.
#include <catch2/catch.hpp>

#include "child_env.h"
#include "gprof/env/variables.h"

using namespace gprof::launcher;

namespace {
std::optional<std::string> value_of(const std::vector<EnvChange>& changes, const std::string& name) {
    for (const auto& c : changes)
        if (c.name == name) return c.value;
    FAIL("no change for " << name);
    return std::nullopt;
}
}  // namespace

TEST_CASE("the collector goes first in LD_PRELOAD and the rest is kept", "[launcher][env]") {
    CHECK(prepend_preload("/p/lib.so", nullptr) == "/p/lib.so");
    CHECK(prepend_preload("/p/lib.so", "") == "/p/lib.so");
    CHECK(prepend_preload("/p/lib.so", "/u/a.so") == "/p/lib.so:/u/a.so");
    CHECK(prepend_preload("/p/lib.so", "/u/a.so /u/b.so") == "/p/lib.so:/u/a.so /u/b.so");
    CHECK(prepend_preload("/p/lib.so", "/u/a.so:/p/lib.so") == "/u/a.so:/p/lib.so");
    CHECK(prepend_preload("/p/lib.so", "/p/lib.so.1") == "/p/lib.so:/p/lib.so.1");
}

TEST_CASE("options map onto the contract's variables", "[launcher][env]") {
    LaunchOptions o;
    o.trace = "nvtx";
    o.backtrace = "8";
    o.capture_range = "cudaProfilerApi";
    o.delay_sec = "1";
    o.no_children = true;
    auto c = collector_environment(o, "/p/lib/gprof-run/libgprof-collector.so", "/runs/r1", "abc", "/u/a.so");
    namespace e = gprof::env;
    CHECK(value_of(c, e::kCudaInjection) == std::optional<std::string>("/p/lib/gprof-run/libgprof-collector.so"));
    CHECK(value_of(c, e::kNvtxInjection) == std::optional<std::string>("/p/lib/gprof-run/libgprof-collector.so"));
    CHECK(value_of(c, e::kLdPreload) == std::optional<std::string>("/p/lib/gprof-run/libgprof-collector.so:/u/a.so"));
    CHECK(value_of(c, e::kOutputDir) == std::optional<std::string>("/runs/r1"));
    CHECK(value_of(c, e::kRunId) == std::optional<std::string>("abc"));
    CHECK(value_of(c, e::kTrace) == std::optional<std::string>("nvtx"));
    CHECK(value_of(c, e::kBacktrace) == std::optional<std::string>("8"));
    CHECK(value_of(c, e::kCaptureRange) == std::optional<std::string>("cudaProfilerApi"));
    CHECK(value_of(c, e::kDelay) == std::optional<std::string>("1"));
    CHECK_FALSE(value_of(c, e::kDuration));
    CHECK(value_of(c, e::kNoChildren) == std::optional<std::string>("1"));
    CHECK_FALSE(value_of(c, e::kRootPid));  // set in the child, after fork
    CHECK_FALSE(value_of(c, e::kLogLevel));
    // Options not given: their variables are removed, so a value left in the shell never changes a run.
    CHECK_FALSE(value_of(c, e::kCaptureRangeEnd));
    CHECK_FALSE(value_of(c, e::kCudaGraphTrace));
    CHECK_FALSE(value_of(c, e::kCudaNestedDriverCalls));
    CHECK_FALSE(value_of(c, e::kCudaBacktrace));
    CHECK_FALSE(value_of(c, e::kGpuMetricsDevices));
    CHECK_FALSE(value_of(c, e::kGpuMetricsFrequency));
    CHECK_FALSE(value_of(c, e::kGpuMetricsSet));
    o.gpu_metrics_devices = "0,2";
    o.gpu_metrics_frequency = "2000";
    o.gpu_metrics_set = "ga100";
    c = collector_environment(o, "/p/lib/gprof-run/libgprof-collector.so", "/runs/r1", "abc", nullptr);
    CHECK(value_of(c, e::kGpuMetricsDevices) == std::optional<std::string>("0,2"));
    CHECK(value_of(c, e::kGpuMetricsFrequency) == std::optional<std::string>("2000"));
    CHECK(value_of(c, e::kGpuMetricsSet) == std::optional<std::string>("ga100"));
    o.capture_range_end = "repeat:3";
    o.cudabacktrace = "kernel:500,sync";
    o.cuda_graph_trace = "graph";
    o.cuda_nested_driver_calls = true;
    c = collector_environment(o, "/p/lib/gprof-run/libgprof-collector.so", "/runs/r1", "abc", nullptr);
    CHECK(value_of(c, e::kCaptureRangeEnd) == std::optional<std::string>("repeat:3"));
    CHECK(value_of(c, e::kCudaGraphTrace) == std::optional<std::string>("graph"));
    CHECK(value_of(c, e::kCudaNestedDriverCalls) == std::optional<std::string>("1"));
    CHECK(value_of(c, e::kCudaBacktrace) == std::optional<std::string>("kernel:500,sync"));
}

TEST_CASE("changes apply in place, remove, and append", "[launcher][env]") {
    const char* base[] = {"PATH=/bin", "GPROF_DELAY_SEC=9", "HOME=/h", "GPROF_DELAY_SEC=10", "LD_PRELOAD=/u/a.so",
                          nullptr};
    std::vector<EnvChange> changes = {{"LD_PRELOAD", "/c.so:/u/a.so"}, {"GPROF_DELAY_SEC", std::nullopt},
                                      {"GPROF_RUN_ID", "r"}};
    auto env = apply_changes(const_cast<char* const*>(base), changes);
    CHECK(env == std::vector<std::string>{"PATH=/bin", "HOME=/h", "LD_PRELOAD=/c.so:/u/a.so", "GPROF_RUN_ID=r"});
}

TEST_CASE("run ids are 32 hex digits and differ", "[launcher][env]") {
    std::string a = new_run_id(), b = new_run_id();
    CHECK(a.size() == 32);
    CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(a != b);
}
