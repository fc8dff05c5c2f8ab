// gprof-run with the real collector of this build tree (bin/gprof-run + lib/gprof-run/libgprof-collector.so).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <set>

#include "launcher_harness.h"

using namespace launcher_test;

namespace {
// Both are build dependencies of this test: a missing one is a failure, never a skip.
void require_collector() {
    REQUIRE(fs::exists(kBuildCollector));
    REQUIRE(fs::exists(kBuildGprofRun));
}

Result build_gprof_run(const std::vector<std::string>& args, const fs::path& cwd) {
    Spec spec;
    spec.argv = {kBuildGprofRun};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = cwd;
    return run(spec);
}

std::vector<fs::path> traces_in(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".gprof") out.push_back(e.path());
    return out;
}
}  // namespace

// The tree mixes fork+exec children and fork-only children that leave through _exit without any NVTX or CUDA
// call: each still has exactly one trace (a fork+exec child's pre-exec trace is removed by its new image).
TEST_CASE("real collector: a fork/exec tree of 32 processes leaves 32 traces of one run", "[launcher][collector]") {
    require_collector();
    gprof::testing::TempDir tmp;
    auto r = build_gprof_run({"-o", "run", kApp, "tree", "32"}, tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto traces = traces_in(tmp.path() / "run");
    CHECK(traces.size() == 32);
    std::string run_id = parse_lines(read_file(tmp.path() / "run/gprof-run.info"))["run_id"];
    std::set<int64_t> pids;
    for (const auto& t : traces) {
        gprof::trace::TraceReader reader(t.string());
        INFO(t);
        CHECK(reader.header().run_id == run_id);
        pids.insert(reader.header().pid);
        gprof::testing::read_all_records(reader);
        CHECK(reader.stats().has_end);
    }
    CHECK(pids.size() == 32);
}

TEST_CASE("real collector: an NVTX program's ranges are in its trace", "[launcher][collector]") {
    require_collector();
    gprof::testing::TempDir tmp;
    auto r = build_gprof_run({"-o", "run", kNvtxApp}, tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "nvtx app done\n");
    auto traces = traces_in(tmp.path() / "run");
    REQUIRE(traces.size() == 1);
    gprof::trace::TraceReader reader(traces[0].string());
    std::set<std::string> names;
    for (const auto& rec : gprof::testing::read_all_records(reader))
        if (rec.kind == gprof::trace::RecordKind::Nvtx) names.insert(std::string(reader.string(rec.nvtx.name)));
    CHECK(names.count("outer") == 1);
    CHECK(names.count("inner") == 1);
    CHECK(names.count("a mark") == 1);
}

TEST_CASE("real collector: a program without CUDA runs as it would, and is reported", "[launcher][collector]") {
    require_collector();
    gprof::testing::TempDir tmp;
    auto r = build_gprof_run({"-o", "run", kApp, "exit", "42"}, tmp.path());
    INFO(r.err);
    CHECK(r.exit_code == 42);
    CHECK(r.out.empty());
    CHECK(traces_in(tmp.path() / "run").size() == 1);
    CHECK(r.err.find("run directory:") != std::string::npos);
}
