// The collector under faults: termination signals (Slurm's SIGTERM, Ctrl-C, SIGHUP), a disk that runs full (an
// LD_PRELOAD shim plays it, no root needed), RLIMIT_FSIZE.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <regex>

#include "collector_run.h"

using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

// A disk of `bytes` free bytes under `dir`, shared by the process tree (tests/collector/programs/disk_full_shim.c).
std::map<std::string, std::string> full_disk_env(const TempDir& dir, const std::string& budget_file, int64_t bytes) {
    {
        std::ofstream out(budget_file, std::ios::binary);
        out.write(reinterpret_cast<const char*>(&bytes), sizeof bytes);
    }
    auto env = collector_env(dir.path().string());
    env["LD_PRELOAD"] = collector_library() + ":" + test_program("libtest_disk_full_shim.so");
    env["GPROF_TEST_DISK_DIR"] = dir.path().string();
    env["GPROF_TEST_DISK_BUDGET"] = budget_file;
    return env;
}

}  // namespace

TEST_CASE("a termination signal with the default action: the trace is finished, and the process dies of it",
          "[faults][signals]") {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
        DYNAMIC_SECTION("signal " << sig) {
            TempDir dir;
            // 2000 ranges just before the signal: all inside the last flush period (50 ms here).
            RunResult r = run_then_signal({test_program("test_nvtx_app"), "wait-signal", "2000"},
                                          collector_env(dir.path().string()), dir.path().string(), "ready\n", sig);
            INFO(r.err);
            CHECK(r.signal() == sig);  // status 128+N to a shell, as without the collector
            CHECK(r.out == "ready\n");
            auto traces = traces_in(dir.path().string());
            REQUIRE(traces.size() == 1);
            LoadedTrace t = load_trace(traces[0].string());
            CHECK(t.stats.has_end);
            REQUIRE(t.end());
            CHECK(t.end()->signal == static_cast<uint32_t>(sig));  // "ended by SIGTERM", not "incomplete"
            CHECK(t.nvtx_named("before-signal").size() == 2000);  // the last period is not lost
            CHECK(t.warnings.empty());
        }
    }
}

TEST_CASE("Python's KeyboardInterrupt path: its handler runs, then SIG_DFL and kill(SIGINT) end a finished trace",
          "[faults][signals]") {
    TempDir dir;
    std::vector<std::string> argv{test_program("test_nvtx_app"), "python-sigint", "1000"};
    RunResult bare = run_program(argv, {}, dir.path().string());
    RunResult r = run_program(argv, collector_env(dir.path().string()), dir.path().string());
    INFO(r.err);
    CHECK(r.status == bare.status);
    CHECK(r.signal() == SIGINT);
    CHECK(r.out == "interrupted 1\n");
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(t.stats.has_end);
    CHECK(t.end()->signal == static_cast<uint32_t>(SIGINT));
    CHECK(t.nvtx_named("after-interrupt").size() == 1000);
}

TEST_CASE("a disk that runs full: what fits is kept, the rest counted and said, and the trace still ends",
          "[faults][disk]") {
    TempDir dir;
    const int64_t kRanges = 200000;
    auto env = full_disk_env(dir, dir.file(".budget"), 600 * 1024);
    std::vector<std::string> argv{test_program("test_nvtx_app"), "many", std::to_string(kRanges)};
    RunResult bare = run_program(argv, {}, dir.path().string());
    RunResult r = run_program(argv, env, dir.path().string());
    INFO(r.err);
    CHECK(r.status == bare.status);
    CHECK(r.out == bare.out);
    CHECK(r.err.find("No space left on device") != std::string::npos);  // said once, while it happens
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(t.warnings.empty());  // whole chunks only: a torn write was cut off again
    CHECK(t.stats.has_end);     // the tail reserve held the End
    size_t kept = t.nvtx_named("r").size();
    uint64_t lost = t.dropped(tr::DropSource::WriteError);
    CHECK(kept > 0);
    CHECK(kept < static_cast<size_t>(kRanges));
    CHECK(kept + lost >= static_cast<uint64_t>(kRanges));  // every range is either in the file or counted
    REQUIRE(t.end());
    CHECK(t.end()->records_dropped >= lost);
    // One line for the reports, with the figure.
    bool said = false;
    for (const auto& st : t.statuses()) {
        std::string text = t.str(st.message);
        if (st.component == tr::Component::Writer && st.level == tr::StatusLevel::Error &&
            text.find("disk full: " + std::to_string(lost) + " records could not be written") != std::string::npos)
            said = true;
    }
    CHECK(said);
}

TEST_CASE("a disk already full: no trace file is left behind, the program runs as it would", "[faults][disk]") {
    TempDir dir;
    auto env = full_disk_env(dir, dir.file(".budget"), 0);
    std::vector<std::string> argv{test_program("test_nvtx_app"), "plain"};
    RunResult bare = run_program(argv, {}, dir.path().string());
    RunResult r = run_program(argv, env, dir.path().string());
    CHECK(r.status == bare.status);
    CHECK(r.out == bare.out);
    CHECK(r.err.find("No space left on device") != std::string::npos);
    CHECK(r.err.find("not recorded") != std::string::npos);
    CHECK(traces_in(dir.path().string()).empty());  // no empty file that looks like a result
}

TEST_CASE("RLIMIT_FSIZE: the collector never writes past it (SIGXFSZ would end the program)", "[faults][disk]") {
    TempDir dir;
    // The limit is the process's own, inherited through exec: set it in a shell, which then execs the program.
    std::vector<std::string> argv{"/bin/sh", "-c", "ulimit -f 400 && exec " + test_program("test_nvtx_app") + " many 200000"};
    RunResult bare = run_program(argv, {}, dir.path().string());
    REQUIRE(bare.exit_code() == 0);
    RunResult r = run_program(argv, collector_env(dir.path().string()), dir.path().string());
    INFO(r.err);
    CHECK(r.status == bare.status);  // not killed by SIGXFSZ
    CHECK(r.out == bare.out);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    CHECK(std::filesystem::file_size(traces[0]) <= 400 * 1024);
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(t.stats.has_end);
    CHECK(t.dropped(tr::DropSource::WriteError) > 0);
    CHECK(t.count_status("File too large", tr::StatusLevel::Error) == 1);
}
