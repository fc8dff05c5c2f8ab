// gprof-run with the real collector of this build tree (bin/gprof-run + lib/gprof-run/libgprof-collector.so).
#include <catch2/catch.hpp>

#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <regex>
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

// ---- process trees, signals and full disks, as gprof-run reports them -------------------------------------------

namespace {
const std::string kTreeApp = GPROF_TEST_BINARY_DIR "/test_process_tree_app";
const std::string kStaticHelper = GPROF_TEST_BINARY_DIR "/test_static_helper";
const std::string kCollectorNvtxApp = GPROF_TEST_BINARY_DIR "/test_nvtx_app";
const std::string kDiskShim = GPROF_TEST_BINARY_DIR "/libtest_disk_full_shim.so";
}  // namespace

TEST_CASE("real collector: helpers and an exec of a static binary: a summary without crashes or false warnings",
          "[launcher][collector][tree]") {
    require_collector();
    gprof::testing::TempDir tmp;
    fs::path script = tmp.path() / "ldconfig-like";
    write_file(script, "#!/bin/sh\nexec " + kStaticHelper + " \"$@\"\n");
    fs::permissions(script, fs::perms::owner_all);
    auto r = build_gprof_run({"-o", "run", kTreeApp, "helpers", "24", kStaticHelper, script.string()}, tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("helpers 0 failed; static 7 7 7 7") != std::string::npos);
    CHECK(r.err.find("trace incomplete") == std::string::npos);
    CHECK(r.err.find("CUDA activity not recorded") == std::string::npos);
    // The brief summary is about the program: 24 /bin/true and the children that exec'd the static helper are
    // helpers, one line; what they could not trace is said once. The program's own spawned children are its lines.
    // 24 /bin/true; the script's shell; the forked child that exec'd the static helper (still the app's name).
    CHECK(r.err.find("\n  26 helper processes with no GPU or NVTX activity: true \u00d724, sh \u00d71, "
                     "test_process_tree_app \u00d71\n") != std::string::npos);
    CHECK(r.err.find("not traced: " + kStaticHelper + " \u00d72 (a statically linked program that cannot be traced)") !=
          std::string::npos);
    CHECK(r.err.find(kStaticHelper + " spawn (a statically linked program that cannot be traced)") != std::string::npos);
    CHECK(r.err.find(kStaticHelper + " vfork (a statically linked program that cannot be traced)") != std::string::npos);
    std::string summary = read_file(tmp.path() / "run/summary.txt");
    CHECK(summary.find("trace incomplete") == std::string::npos);
}

// Issue 30: the collector said it on stderr, the summary said it, and gprof-run said it again after the summary.
TEST_CASE("real collector: why CUDA was not recorded is said once, in the summary", "[launcher][collector]") {
    require_collector();
    gprof::testing::TempDir tmp;
    const std::string lookalike = GPROF_TEST_BINARY_DIR "/test_cuda_lookalike_app";  // a CUDA binary that never calls it
    auto r = build_gprof_run({"-o", "run", lookalike, "fork"}, tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    size_t said = 0;
    for (size_t at = r.err.find("CUDA activity not recorded: "); at != std::string::npos;
         at = r.err.find("CUDA activity not recorded: ", at + 1))
        ++said;
    CHECK(said <= 1);
    bool driver = fs::exists("/proc/driver/nvidia/version") || fs::exists("/dev/nvidiactl") || fs::exists("/dev/dxg");
    if (!driver) {
        CHECK(said == 1);  // "no NVIDIA driver on this machine", in the summary's status lines
        CHECK(r.err.find("    driver warning: CUDA activity not recorded: ") != std::string::npos);
    }
    // With --summary none no summary says it: the collector's own line does, once (and summary.txt has it).
    auto quiet = build_gprof_run({"--summary", "none", "-o", "run2", lookalike, "fork"}, tmp.path());
    INFO(quiet.err);
    REQUIRE(quiet.exit_code == 0);
    size_t said_quiet = 0;
    for (size_t at = quiet.err.find("CUDA activity not recorded: "); at != std::string::npos;
         at = quiet.err.find("CUDA activity not recorded: ", at + 1))
        ++said_quiet;
    CHECK(said_quiet <= 1);
    if (!driver) CHECK(said_quiet == 1);
}

TEST_CASE("real collector: SIGTERM to gprof-run: the app dies of it, its trace is complete and says so",
          "[launcher][collector][signals]") {
    require_collector();
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.argv = {kBuildGprofRun, "-o", "run", "--log-file", "log", kCollectorNvtxApp, "wait-signal", "3000"};
    spec.cwd = tmp.path();
    Piped p(spec);
    REQUIRE(p.read_until("ready\n"));
    REQUIRE(::kill(p.pid(), SIGTERM) == 0);  // gprof-run passes it on, as Slurm's time limit would come
    int st = p.wait();
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 128 + SIGTERM);
    std::string log = read_file(tmp.path() / "log");
    INFO(log);
    CHECK(log.find("ended by SIGTERM") != std::string::npos);
    CHECK(log.find("trace incomplete") == std::string::npos);
    auto traces = traces_in(tmp.path() / "run");
    REQUIRE(traces.size() == 1);
    gprof::trace::TraceReader reader(traces[0].string());
    size_t ranges = 0;
    for (const auto& rec : gprof::testing::read_all_records(reader))
        ranges += rec.kind == gprof::trace::RecordKind::Nvtx;
    CHECK(ranges == 3000);
    CHECK(reader.stats().has_end);
}

TEST_CASE("real collector: a full disk: the figure is said, no empty result files are left", "[launcher][collector][disk]") {
    require_collector();
    gprof::testing::TempDir tmp;
    fs::create_directory(tmp.path() / "run");
    fs::path budget = tmp.path() / "budget";
    {
        int64_t bytes = 400 * 1024;
        std::ofstream out(budget, std::ios::binary);
        out.write(reinterpret_cast<const char*>(&bytes), sizeof bytes);
    }
    Spec spec;
    spec.argv = {kBuildGprofRun, "-o", "run", "--force", kCollectorNvtxApp, "many", "200000"};
    spec.cwd = tmp.path();
    spec.env["LD_PRELOAD"] = kDiskShim;  // gprof-run keeps it and puts the collector first for the app
    spec.env["GPROF_TEST_DISK_DIR"] = (tmp.path() / "run").string();
    spec.env["GPROF_TEST_DISK_BUDGET"] = budget.string();
    spec.env["GPROF_TEST_DISK_FULL_NAMES"] = "summary.txt";  // full for good by the time the report is written
    auto r = run(spec);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "many done 200000\n");
    CHECK(std::regex_search(r.err, std::regex("disk full: [0-9]+ records could not be written")));
    CHECK(r.err.find("trace incomplete") == std::string::npos);
    // No room left for summary.txt: it is not left behind empty, and that is said. (The summary itself still
    // reaches stderr.)
    CHECK_FALSE(fs::exists(tmp.path() / "run/summary.txt"));
    CHECK(r.err.find("summary.txt': No space left on device") != std::string::npos);
    CHECK(launcher_test::entries_like(tmp.path() / "run", ".summary.txt", "").empty());  // nor its temporary file
    CHECK(r.err.find("gprof-run profile:") != std::string::npos);
}

// nsys habits end to end: `-f true` is a switch value (not the app), --stats prints nsys's tables with the summary,
// --export json writes the reports beside the traces, -t with names gprof-run does not record warns in one line.
TEST_CASE("real collector: -f true --stats=true --export json -t nvtx,opengl", "[launcher][collector][nsys]") {
    require_collector();
    gprof::testing::TempDir tmp;
    fs::create_directory(tmp.path() / "run");  // -f true must replace it
    auto r = build_gprof_run({"-f", "true", "-o", "run", "--stats=true", "--timeunit", "usec", "--export=json,sqlite", "-t",
                              "nvtx,opengl", kNvtxApp},
                             tmp.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "nvtx app done\n");  // the app ran, not /usr/bin/true; nothing of ours on stdout
    CHECK(r.err.find("note: --trace: opengl not recorded (gprof-run records cuda, nvtx and osrt); recording nvtx") !=
          std::string::npos);
    CHECK(r.err.find("** NVTX Range Summary (nvtx_sum):") != std::string::npos);
    CHECK(r.err.find("Total Time (us)") != std::string::npos);
    CHECK(r.err.find(":outer") != std::string::npos);
    std::string json_text = read_file(tmp.path() / "run/report.json");
    REQUIRE_FALSE(json_text.empty());
    CHECK(json_text.find("\"nvtx_sum\"") != std::string::npos);
    CHECK(json_text.find(":inner") != std::string::npos);
    CHECK(fs::file_size(tmp.path() / "run/report.sqlite") > 0);  // its contents: tests/report/test_sqlite_export.cpp
    CHECK(r.err.find("sqlite:        ") != std::string::npos);
}
