// Process-level behaviour of the injected collector: death by signal, SIGKILL, _exit, fork, stdout untouched,
// a plain LD_PRELOAD run, GPROF_NO_CHILDREN.
#include <catch2/catch.hpp>

#include <signal.h>

#include "collector_run.h"

using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

struct Death {
    const char* how;
    int signal;     // 0: exits
    int exit_code;  // when it exits
    bool has_end;   // the trace is finished: _exit is interposed, a signal death is not
};

}  // namespace

TEST_CASE("ranges older than the flush period survive a crash / and the process dies the same way") {
    const Death cases[] = {{"segv", SIGSEGV, 0, false}, {"abort", SIGABRT, 0, false}, {"kill", SIGKILL, 0, false},
                          {"_exit", 0, 3, true}};
    for (const Death& d : cases) {
        DYNAMIC_SECTION(d.how) {
            TempDir dir;
            std::vector<std::string> argv{test_program("test_nvtx_app"), d.how, "500"};
            RunResult bare = run_program(argv, {}, dir.path().string());
            RunResult r = run_program(argv, collector_env(dir.path().string()), dir.path().string());
            // Exit status unchanged: same signal (128+sig to a shell) or same code.
            CHECK(r.status == bare.status);
            if (d.signal) CHECK(r.signal() == d.signal);
            else CHECK(r.exit_code() == d.exit_code);
            CHECK(r.out == bare.out);
            auto traces = traces_in(dir.path().string());
            REQUIRE(traces.size() == 1);
            LoadedTrace t = load_trace(traces[0].string());
            CHECK(t.nvtx_named("before-death").size() == 500);
            CHECK(t.stats.has_end == d.has_end);
        }
    }
}

TEST_CASE("fork: parent and child each write their own readable trace") {
    TempDir dir;
    RunResult r = run_program({test_program("test_nvtx_app"), "fork"}, collector_env(dir.path().string()),
                              dir.path().string());
    CHECK(r.out == "fork done 0\n");
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 2);
    LoadedTrace a = load_trace(traces[0].string()), b = load_trace(traces[1].string());
    LoadedTrace& parent = a.header.pid == b.header.ppid ? a : b;
    LoadedTrace& child = a.header.pid == b.header.ppid ? b : a;
    CHECK(child.header.ppid == parent.header.pid);
    CHECK(parent.nvtx_named("parent-before").size() == 10);
    CHECK(parent.nvtx_named("parent-after").size() == 10);
    CHECK(parent.nvtx_named("child").empty());
    CHECK(child.nvtx_named("child").size() == 20);
    CHECK(child.nvtx_named("parent-before").empty());  // never written twice
    CHECK(parent.stats.has_end);
    CHECK(child.stats.has_end);
    CHECK(parent.warnings.empty());
    CHECK(child.warnings.empty());
}

TEST_CASE("a vfork child's _exit leaves the parent's session alone") {
    TempDir dir;
    std::vector<std::string> argv{test_program("test_nvtx_app"), "vfork"};
    RunResult bare = run_program(argv, {}, dir.path().string());
    RunResult r = run_program(argv, collector_env(dir.path().string()), dir.path().string());
    CHECK(r.status == bare.status);
    CHECK(r.out == "vfork child exited 9\nvfork done\n");
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);  // the vfork child never ran a session of its own
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(t.nvtx_named("after-vfork").size() == 5);
    CHECK(t.stats.has_end);
    CHECK(t.warnings.empty());
}

TEST_CASE("stdout is byte-identical with and without the collector - nothing of ours on it") {
    for (const char* scenario : {"nested", "threads", "plain"}) {
        DYNAMIC_SECTION(scenario) {
            TempDir dir;
            std::vector<std::string> argv{test_program("test_nvtx_app"), scenario};
            RunResult bare = run_program(argv, {}, dir.path().string());
            auto env = collector_env(dir.path().string());
            env["GPROF_LOG_LEVEL"] = "debug";  // chatty: all of it must go to stderr
            RunResult r = run_program(argv, env, dir.path().string());
            CHECK(r.out == bare.out);
            CHECK(r.status == bare.status);
            CHECK(r.out.find("gprof") == std::string::npos);
            CHECK(r.err.find("gprof-run:") != std::string::npos);
        }
    }
}

TEST_CASE("LD_PRELOAD alone / no CUDA / no NVTX loader: the app is unharmed / process records are written") {
    TempDir dir;
    std::vector<std::string> argv{test_program("test_nvtx_app"), "plain"};
    RunResult bare = run_program(argv, {}, dir.path().string());
    RunResult r = run_program(argv,
                              {{"LD_PRELOAD", collector_library()}, {"GPROF_OUTPUT_DIR", dir.path().string()}},
                              dir.path().string());
    CHECK(r.status == bare.status);
    CHECK(r.exit_code() == 5);
    CHECK(r.out == bare.out);
    CHECK(r.err.empty());  // quiet by default: not a CUDA program, nothing to warn about
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(t.stats.has_end);
    CHECK(t.count(tr::RecordKind::Module) > 2);
    CHECK(t.count(tr::RecordKind::Thread) >= 1);
    CHECK(t.nvtx().empty());
}

TEST_CASE("GPROF_NO_CHILDREN: a process that is not the root stays inactive") {
    TempDir dir;
    auto env = collector_env(dir.path().string());
    env["GPROF_NO_CHILDREN"] = "1";
    env["GPROF_ROOT_PID"] = "1";  // not us
    RunResult r = run_program({test_program("test_nvtx_app"), "nested"}, env, dir.path().string());
    CHECK(r.exit_code() == 0);
    CHECK(r.out == "nested done\n");
    CHECK(traces_in(dir.path().string()).empty());
}

TEST_CASE("the trace file is private to its owner") {
    TempDir dir;
    RunResult r = run_program({test_program("test_nvtx_app"), "plain"}, collector_env(dir.path().string()),
                              dir.path().string());
    CHECK(r.exit_code() == 5);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    auto perms = std::filesystem::status(traces[0]).permissions();
    CHECK((perms & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
}
