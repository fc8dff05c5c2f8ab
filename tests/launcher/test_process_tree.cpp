// Every process of the tree is profiled and waited for; a process that never ends does not hang gprof-run.
#include <catch2/catch.hpp>

#include <set>

#include "launcher_harness.h"

using namespace launcher_test;

TEST_CASE("a fork/exec tree of 32 processes: the collector is in every one", "[launcher][tree]") {
    gprof::testing::TempDir tmp;
    auto r = gprof_run({"-o", "run", kApp, "tree", "32"}, tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto loaded = entries_like(tmp.path() / "run", "double.", ".loaded");
    CHECK(loaded.size() == 32);
    std::set<std::string> run_ids;
    for (const auto& name : loaded) run_ids.insert(parse_lines(read_file(tmp.path() / "run" / name))["GPROF_RUN_ID"]);
    CHECK(run_ids.size() == 1);
    CHECK(entries_like(tmp.path() / "run", "launcher_test_app.", ".gprof").size() == 32);
    CHECK(r.err.find("(32 traces)") != std::string::npos);
}

TEST_CASE("no-children names the app as the only process to record", "[launcher][tree]") {
    gprof::testing::TempDir tmp;
    auto r = gprof_run({"-o", "run", "--no-children", kApp, "tree", "4"}, tmp.path());
    REQUIRE(r.exit_code == 0);
    // The library is still loaded everywhere (children inherit LD_PRELOAD); GPROF_ROOT_PID tells it who records.
    auto loaded = entries_like(tmp.path() / "run", "double.", ".loaded");
    REQUIRE(loaded.size() == 4);
    std::set<std::string> roots;
    for (const auto& name : loaded) {
        auto seen = parse_lines(read_file(tmp.path() / "run" / name));
        CHECK(seen["GPROF_NO_CHILDREN"] == "1");
        roots.insert(seen["GPROF_ROOT_PID"]);
    }
    REQUIRE(roots.size() == 1);
    CHECK(fs::exists(tmp.path() / "run" / ("double." + *roots.begin() + ".loaded")));
}

TEST_CASE("gprof-run waits for descendants that outlive the app", "[launcher][tree]") {
    gprof::testing::TempDir tmp;
    fs::path done = tmp.path() / "orphan-finished";
    auto r = gprof_run({"-o", "run", kApp, "orphan", done.string()}, tmp.path());
    REQUIRE(r.exit_code == 0);
    // The orphan writes this only after the app has exited: gprof-run returned after it.
    CHECK(fs::exists(done));
    CHECK(entries_like(tmp.path() / "run", "launcher_test_app.", ".gprof").size() == 2);
}

TEST_CASE("a descendant that never exits is waited for only --wait-children seconds", "[launcher][tree]") {
    gprof::testing::TempDir tmp;
    auto r = gprof_run({"-o", "run", "--wait-children", "0.2", kApp, "daemon"}, tmp.path());
    auto out = parse_lines(r.out);
    long daemon = std::atol(out["daemon"].c_str());
    REQUIRE(daemon > 1);
    CHECK(::kill(static_cast<pid_t>(daemon), 0) == 0);  // still alive: gprof-run did not kill it
    ::kill(static_cast<pid_t>(daemon), SIGKILL);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("1 process(es) started by the app are still running") != std::string::npos);
    CHECK(r.err.find("run directory:") != std::string::npos);
}
