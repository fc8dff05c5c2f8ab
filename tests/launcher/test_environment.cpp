// What the app's environment carries: the injection variables, the collector's configuration, the user's own
// LD_PRELOAD, and nothing stale.
#include <catch2/catch.hpp>

#include "launcher_harness.h"

using namespace launcher_test;

namespace {
const std::vector<std::string> kVars = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "LD_PRELOAD",
                                        "GPROF_OUTPUT_DIR", "GPROF_RUN_ID", "GPROF_TRACE", "GPROF_BACKTRACE",
                                        "GPROF_CAPTURE_RANGE", "GPROF_DELAY_SEC", "GPROF_DURATION_SEC",
                                        "GPROF_NO_CHILDREN", "GPROF_ROOT_PID", "GPROF_LOG_LEVEL",
                                        "GPROF_FLUSH_MS", "GPROF_CAPTURE_RANGE_END", "GPROF_CUDA_GRAPH_TRACE",
                                        "GPROF_CUDA_NESTED_DRIVER_CALLS", "GPROF_SAMPLE",
                                        "GPROF_SAMPLING_FREQUENCY", "GPROF_OSRT_THRESHOLD",
                                        "GPROF_OSRT_BACKTRACE_THRESHOLD"};
std::map<std::string, std::string> app_env(const std::vector<std::string>& options, const fs::path& cwd,
                                           Spec spec = {}) {
    std::vector<std::string> args = options;
    args.push_back(kApp);
    args.push_back("info");
    args.insert(args.end(), kVars.begin(), kVars.end());
    auto r = gprof_run(args, cwd, spec);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return parse_lines(r.out);
}
}  // namespace

TEST_CASE("the collector is injected three ways and configured for the run", "[launcher][env]") {
    gprof::testing::TempDir tmp;
    auto env = app_env({"-o", "run"}, tmp.path());
    const std::string lib = fs::canonical(kDoubleCollector).string();
    CHECK(env["CUDA_INJECTION64_PATH"] == lib);
    CHECK(env["NVTX_INJECTION64_PATH"] == lib);
    CHECK(env["LD_PRELOAD"] == lib);
    CHECK(env["GPROF_OUTPUT_DIR"] == (tmp.path() / "run").string());
    CHECK(env["GPROF_RUN_ID"].size() == 32);
    CHECK(env["GPROF_TRACE"] == "cuda,nvtx,osrt");
    for (const char* unset : {"GPROF_BACKTRACE", "GPROF_CAPTURE_RANGE", "GPROF_DELAY_SEC", "GPROF_DURATION_SEC",
                              "GPROF_NO_CHILDREN", "GPROF_ROOT_PID", "GPROF_LOG_LEVEL", "GPROF_CAPTURE_RANGE_END",
                              "GPROF_CUDA_GRAPH_TRACE", "GPROF_CUDA_NESTED_DRIVER_CALLS", "GPROF_SAMPLE",
                              "GPROF_SAMPLING_FREQUENCY", "GPROF_OSRT_THRESHOLD", "GPROF_OSRT_BACKTRACE_THRESHOLD"}) {
        INFO(unset);
        CHECK(env[unset] == "(unset)");
    }
    // The run id is the one recorded in the run directory.
    auto info = parse_lines(read_file(tmp.path() / "run/gprof-run.info"));
    CHECK(info["run_id"] == env["GPROF_RUN_ID"]);
}

TEST_CASE("options become the collector's variables", "[launcher][env]") {
    gprof::testing::TempDir tmp;
    auto env = app_env({"-o", "run", "--trace", "nvtx", "--backtrace=8", "--capture-range", "nvtx:step@train",
                        "--capture-range-end", "repeat-shutdown:4", "--cuda-graph-trace", "graph",
                        "--cuda-nested-driver-calls", "--delay", "1.5", "--duration", "2", "--log-level", "error",
                        "--no-children"},
                       tmp.path());
    CHECK(env["GPROF_TRACE"] == "nvtx");
    CHECK(env["GPROF_BACKTRACE"] == "8");
    CHECK(env["GPROF_CAPTURE_RANGE"] == "nvtx:step@train");
    CHECK(env["GPROF_CAPTURE_RANGE_END"] == "repeat:4");
    CHECK(env["GPROF_CUDA_GRAPH_TRACE"] == "graph");
    CHECK(env["GPROF_CUDA_NESTED_DRIVER_CALLS"] == "1");
    CHECK(env["GPROF_DELAY_SEC"] == "1.5");
    CHECK(env["GPROF_DURATION_SEC"] == "2");
    CHECK(env["GPROF_LOG_LEVEL"] == "error");
    CHECK(env["GPROF_NO_CHILDREN"] == "1");
    CHECK(env["GPROF_ROOT_PID"] == env["pid"]);  // the app's own pid
}

TEST_CASE("sampling and OS-runtime options become the collector's variables (issue 35)", "[launcher][env]") {
    gprof::testing::TempDir tmp;
    auto env = app_env({"-o", "run", "-s", "none", "--sampling-frequency", "2000", "--osrt-threshold", "5000",
                        "--osrt-backtrace-threshold", "100000"},
                       tmp.path());
    CHECK(env["GPROF_SAMPLE"] == "none");
    CHECK(env["GPROF_SAMPLING_FREQUENCY"] == "2000");
    CHECK(env["GPROF_OSRT_THRESHOLD"] == "5000");
    CHECK(env["GPROF_OSRT_BACKTRACE_THRESHOLD"] == "100000");
}

TEST_CASE("stale GPROF_* values of the shell do not leak into a run but tuning variables pass", "[launcher][env]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.env["GPROF_DELAY_SEC"] = "99";
    spec.env["GPROF_NO_CHILDREN"] = "1";
    spec.env["GPROF_ROOT_PID"] = "1";
    spec.env["GPROF_TRACE"] = "none";
    spec.env["GPROF_OUTPUT_DIR"] = "/somewhere/else";
    spec.env["GPROF_FLUSH_MS"] = "50";
    spec.env["GPROF_CUDA_GRAPH_TRACE"] = "graph";
    spec.env["GPROF_CUDA_NESTED_DRIVER_CALLS"] = "1";
    spec.env["GPROF_SAMPLE"] = "none";  // a shell's leftover never switches sampling off unsaid: -s none does
    auto env = app_env({"-o", "run"}, tmp.path(), spec);
    CHECK(env["GPROF_SAMPLE"] == "(unset)");
    CHECK(env["GPROF_CUDA_GRAPH_TRACE"] == "(unset)");
    CHECK(env["GPROF_CUDA_NESTED_DRIVER_CALLS"] == "(unset)");
    CHECK(env["GPROF_DELAY_SEC"] == "(unset)");
    CHECK(env["GPROF_NO_CHILDREN"] == "(unset)");
    CHECK(env["GPROF_ROOT_PID"] == "(unset)");
    CHECK(env["GPROF_TRACE"] == "cuda,nvtx,osrt");
    CHECK(env["GPROF_OUTPUT_DIR"] == (tmp.path() / "run").string());
    CHECK(env["GPROF_FLUSH_MS"] == "50");
}

TEST_CASE("an app with its own LD_PRELOAD keeps it, and the collector loads too", "[launcher][env]") {
    gprof::testing::TempDir tmp;
    Spec direct;
    direct.argv = {kApp, "preload-check"};
    direct.env["LD_PRELOAD"] = kPreload;
    REQUIRE(run(direct).out == "preload: yes\n");

    Spec spec;
    spec.env["LD_PRELOAD"] = kPreload;
    auto r = gprof_run({"-o", "run", kApp, "preload-check"}, tmp.path(), spec);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "preload: yes\n");
    auto loaded = entries_like(tmp.path() / "run", "double.", ".loaded");
    REQUIRE(loaded.size() == 1);
    auto seen = parse_lines(read_file(tmp.path() / "run" / loaded[0]));
    CHECK(seen["LD_PRELOAD"] == fs::canonical(kDoubleCollector).string() + ":" + kPreload);
}

TEST_CASE("an NVTX program hands its ranges to the injected library", "[launcher][env]") {
    gprof::testing::TempDir tmp;
    auto r = gprof_run({"-o", "run", kNvtxApp}, tmp.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "nvtx app done\n");
    // NVTX_INJECTION64_PATH reached the NVTX loader, which called InitializeInjectionNvtx2.
    CHECK(entries_like(tmp.path() / "run", "double.", ".nvtx").size() == 1);
}
