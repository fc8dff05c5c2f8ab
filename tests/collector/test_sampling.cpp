// CPU sampling and the OS-runtime trace end to end (issue 35): known answers through the collector, the trace and
// gprof-report (cpu_sample_sum, osrt_sum), and the program never noticing (no EINTR, its SIGPROF disposition and mask
// as it set them).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "collector_run.h"
#include "sample_spread.h"

using namespace gprof::testing;
namespace tr = gprof::trace;
using nlohmann::json;

namespace {

std::string report_binary() { return std::string(GPROF_BINARY_DIR) + "/bin/gprof-report"; }

// gprof-report REPORT --format json [extra...] DIR: the report's object.
json report_json(const std::string& report, const std::string& dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{report_binary(), report, "--format", "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(dir);
    TempDir cwd;
    RunResult r = run_program(argv, {}, cwd.path().string());
    INFO(r.err);
    REQUIRE(r.exit_code() == 0);
    return json::parse(r.out)["reports"][report];
}

// The row of `rows` whose `name` starts with `prefix`; null when none.
const json* row_named(const json& rows, const std::string& prefix) {
    for (const auto& row : rows)
        if (row["name"].get<std::string>().rfind(prefix, 0) == 0) return &row;
    return nullptr;
}

std::vector<tr::CpuSample> samples_of(const LoadedTrace& t) {
    std::vector<tr::CpuSample> v;
    for (const auto& r : t.records)
        if (r.kind == tr::RecordKind::CpuSample) v.push_back(r.cpu_sample);
    return v;
}

}  // namespace

TEST_CASE("CPU sampling: a C++ thread's 70/30 split between two functions comes out within 5 points",
          "[sampling][e2e]") {
    TempDir dir;
    // 4 s of CPU time: at a 250 Hz kernel tick, 1000 signals (a 70 % share has a standard error of 1.45 points; fewer
    // signals of more periods each on a loaded machine: sample_spread.h).
    RunResult r = run_program({test_program("test_cpu_split_app"), "4"}, collector_env(dir.path().string()),
                              dir.path().string());
    INFO(r.err);
    REQUIRE(r.exit_code() == 0);
    double measured_a = 0, measured_b = 0;
    REQUIRE(std::sscanf(r.out.c_str(), "measured a=%lf b=%lf", &measured_a, &measured_b) == 2);
    CHECK(std::abs(measured_a - 70) < 5);  // the program is what it says

    json rows = report_json("cpu_sample_sum", dir.path().string())["rows"];
    const json* a = row_named(rows, "work_a");
    const json* b = row_named(rows, "work_b");
    REQUIRE(a);
    REQUIRE(b);
    double self_a = (*a)["self_samples"].get<double>(), self_b = (*b)["self_samples"].get<double>();
    double share_a = 100 * self_a / (self_a + self_b);
    auto spread = sample_spread(dir.path().string(), [](const std::string& leaf) {
        return leaf.rfind("work_a", 0) == 0 ? 1 : leaf.rfind("work_b", 0) == 0 ? 2 : 0;
    }, share_a);
    INFO("sampled a=" << share_a << " measured a=" << measured_a << " (" << self_a << " + " << self_b << " periods, "
                      << spread.signals << " signals, standard error " << spread.stderr_points << " points)");
    CHECK(std::abs(share_a - measured_a) <= spread.tolerance());
    CHECK(spread.signals > 200);
    // Symbolised to the program's own source file, without frame pointers.
    CHECK((*a)["location"].get<std::string>().find("cpu_split_app.cpp") != std::string::npos);
    // main calls both: it is in every sample's stack (total), in few as the leaf (self).
    const json* m = row_named(rows, "main");
    REQUIRE(m);
    CHECK((*m)["total_percent"].get<double>() > 90);
    CHECK((*m)["self_percent"].get<double>() < 10);

    // By line: the rows name lines of the program's file, and the hottest is inside work_a.
    json lines = report_json("cpu_sample_sum", dir.path().string(), {"--by", "line"})["rows"];
    REQUIRE(!lines.empty());
    const json* top = row_named(lines, "work_");
    REQUIRE(top);
    CHECK((*top)["name"].get<std::string>().rfind("work_a", 0) == 0);
    CHECK((*top)["location"].get<std::string>().find("cpu_split_app.cpp:") != std::string::npos);
}

TEST_CASE("CPU sampling: every thread, and a forked child, is sampled", "[sampling][e2e]") {
    for (const char* mode : {"threads", "fork"}) {
        DYNAMIC_SECTION(mode) {
            TempDir dir;
            RunResult r = run_program({test_program("test_cpu_split_app"), "0.5", mode},
                                      collector_env(dir.path().string()), dir.path().string());
            INFO(r.err);
            REQUIRE(r.exit_code() == 0);
            auto traces = traces_in(dir.path().string());
            REQUIRE(traces.size() == (std::string(mode) == "fork" ? 2u : 1u));
            std::set<uint64_t> tids;
            for (const auto& path : traces) {
                LoadedTrace t = load_trace(path.string());
                uint64_t periods = 0;
                for (const auto& s : samples_of(t)) {
                    tids.insert(s.tid);
                    periods += s.periods;
                }
                // 0.5 s of CPU time each, 1 ms periods: the CPU time is all there however few ticks caught the
                // thread running (a loaded machine preempts it).
                CHECK(periods > 400);
            }
            CHECK(tids.size() == 2);
        }
    }
}

TEST_CASE("CPU sampling: a program that aborts on EINTR runs as it does bare", "[sampling][e2e][never-notice]") {
    TempDir dir;
    std::vector<std::string> argv{test_program("test_eintr_strict_app"), "200"};
    RunResult bare = run_program(argv, {}, dir.path().string());
    REQUIRE(bare.exit_code() == 0);
    RunResult r = run_program(argv, collector_env(dir.path().string()), dir.path().string());
    INFO(r.err);
    CHECK(r.status == bare.status);
    CHECK(r.out == bare.out);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    LoadedTrace t = load_trace(traces[0].string());
    // It was sampled meanwhile (both threads burn CPU between their blocking calls) and its calls traced.
    CHECK(samples_of(t).size() > 10);
    CHECK(t.count(tr::RecordKind::OsRuntimeCall) > 0);

    SECTION("the control: a timer of the program's own that interrupts its calls makes it abort") {
        // Shows the program's checks do fire on EINTR (a wall-clock timer signals the main thread while it blocks).
        RunResult control = run_program({test_program("test_eintr_strict_app"), "200", "wall"}, {},
                                        dir.path().string());
        CHECK(control.signal() == SIGABRT);
        CHECK(control.err.find("EINTR") != std::string::npos);
    }
}

TEST_CASE("CPU sampling: -s none samples nothing and leaves SIGPROF alone", "[sampling][e2e]") {
    TempDir dir;
    auto env = collector_env(dir.path().string());
    env["GPROF_SAMPLE"] = "none";
    RunResult r = run_program({test_program("test_eintr_strict_app"), "20"}, env, dir.path().string());
    CHECK(r.exit_code() == 0);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(samples_of(t).empty());
}

TEST_CASE("OS runtime: a thread blocked 1 s in read() shows in osrt_sum with its call site", "[osrt][e2e]") {
    TempDir dir;
    RunResult r = run_program({test_program("test_osrt_app"), "1"}, collector_env(dir.path().string()),
                              dir.path().string());
    INFO(r.err);
    REQUIRE(r.exit_code() == 0);
    json rows = report_json("osrt_sum", dir.path().string())["rows"];
    const json* read = row_named(rows, "read");
    REQUIRE(read);
    CHECK((*read)["max_ns"].get<double>() >= 0.9e9);
    CHECK((*read)["max_ns"].get<double>() < 3e9);
    CHECK((*read)["top_call_site"].get<std::string>().find("blocked_reader") != std::string::npos);
    CHECK((*read)["top_call_site"].get<std::string>().find("osrt_app.c:") != std::string::npos);
    // The main thread's 1 s nanosleep and the reader's wait for the mutex main held.
    const json* sleep = row_named(rows, "nanosleep");
    REQUIRE(sleep);
    CHECK((*sleep)["max_ns"].get<double>() >= 0.9e9);
    const json* lock = row_named(rows, "pthread_mutex_lock");
    REQUIRE(lock);
    CHECK((*lock)["max_ns"].get<double>() >= 40e6);
    // The poll that timed out after 20 ms.
    const json* poll = row_named(rows, "poll");
    REQUIRE(poll);
    CHECK((*poll)["max_ns"].get<double>() >= 15e6);
}

TEST_CASE("OS runtime: --trace without osrt records no calls", "[osrt][e2e]") {
    TempDir dir;
    auto env = collector_env(dir.path().string());
    env["GPROF_TRACE"] = "cuda,nvtx";
    RunResult r = run_program({test_program("test_osrt_app"), "0.1"}, env, dir.path().string());
    REQUIRE(r.exit_code() == 0);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    CHECK(load_trace(traces[0].string()).count(tr::RecordKind::OsRuntimeCall) == 0);
}
