// Process trees end to end, without a GPU: helpers started every way a framework starts them (fork + exec,
// posix_spawn, vfork + exec, a #! script), exec of a statically linked program, an exec that fails, a forked child
// of a program that looks like CUDA but never calls it, and a program that handles a termination signal itself.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>

#include "collector_run.h"

using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

std::vector<LoadedTrace> load_all(const std::string& dir) {
    std::vector<LoadedTrace> out;
    for (auto& p : traces_in(dir)) out.push_back(load_trace(p.string()));
    return out;
}

void write_executable(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    ::chmod(path.c_str(), 0755);
}

bool no_cuda_warning(const LoadedTrace& t) { return t.count_status("CUDA", tr::StatusLevel::Warning) == 0; }

}  // namespace

TEST_CASE("helpers and a static binary: every process ends its trace, the untraceable ones are named", "[tree]") {
    for (const char* helper : {"test_static_helper", "test_static_pie_helper"}) {
        DYNAMIC_SECTION(helper) {
            TempDir dir, cwd;
            const std::string static_program = test_program(helper);
            const std::string script = cwd.file("ldconfig-like");
            write_executable(script, "#!/bin/sh\nexec " + static_program + " \"$@\"\n");
            std::vector<std::string> argv{test_program("test_process_tree_app"), "helpers", "8", static_program, script};
            RunResult bare = run_program(argv, {}, cwd.path().string());
            REQUIRE(bare.exit_code() == 0);
            RunResult r = run_program(argv, collector_env(dir.path().string()), cwd.path().string());
            INFO(r.err);
            CHECK(r.status == bare.status);
            CHECK(r.out == bare.out);

            auto traces = load_all(dir.path().string());
            std::set<int64_t> pids;
            std::map<std::string, int> by_exe;
            const LoadedTrace* parent = nullptr;
            std::vector<const LoadedTrace*> exec_static;
            for (const auto& t : traces) {
                INFO(t.header.executable << " pid " << t.header.pid);
                CHECK(t.stats.has_end);  // nothing reads as a crash
                CHECK(t.warnings.empty());
                CHECK(no_cuda_warning(t));
                pids.insert(t.header.pid);
                ++by_exe[t.exe_name()];
                if (!t.nvtx_named("parent-before").empty()) parent = &t;
                auto execs = t.execs();
                for (const auto& e : execs)
                    if (e.spawned == 0) {
                        CHECK(e.pid == static_cast<uint64_t>(t.header.pid));
                        if (e.image == tr::ExecImage::Static) exec_static.push_back(&t);
                    }
            }
            CHECK(pids.size() == traces.size());  // one trace per process: no leftover pre-exec traces
            CHECK(by_exe["true"] == 8);
            REQUIRE(parent != nullptr);
            CHECK(parent->nvtx_named("parent-before").size() == 5);
            CHECK(parent->nvtx_named("parent-after").size() == 5);

            // fork + exec, and the #! script's shell: each ends its trace with the static program it became.
            REQUIRE(exec_static.size() == 2);
            std::set<std::string> how;
            for (const LoadedTrace* t : exec_static) {
                tr::Exec e = t->execs().back();
                CHECK(t->str(e.path) == static_program);
                how.insert(t->str(e.command));
                CHECK(t->header.ppid == parent->header.pid);
            }
            CHECK(how == std::set<std::string>{static_program + " fork", static_program + " script"});

            // posix_spawn and vfork + exec: the parent names the children it could not trace.
            std::set<std::string> spawned;
            for (const auto& e : parent->execs()) {
                REQUIRE(e.spawned == 1);
                CHECK(e.image == tr::ExecImage::Static);
                CHECK(e.pid > 0);
                CHECK(pids.count(static_cast<int64_t>(e.pid)) == 0);  // no trace of their own
                CHECK(parent->str(e.path) == static_program);
                spawned.insert(parent->str(e.command));
            }
            CHECK(spawned == std::set<std::string>{static_program + " spawn", static_program + " vfork"});
        }
    }
}

TEST_CASE("an exec that fails: the process goes on, and so does its recording", "[tree]") {
    TempDir dir, cwd;
    const std::string not_a_program = cwd.file("not-a-program");
    write_executable(not_a_program, "this is neither ELF nor a #! script\n");
    SECTION("with records before the exec: that trace ends, a second one continues") {
        std::vector<std::string> argv{test_program("test_process_tree_app"), "exec-fails", not_a_program};
        RunResult bare = run_program(argv, {}, cwd.path().string());
        RunResult r = run_program(argv, collector_env(dir.path().string()), cwd.path().string());
        INFO(r.err);
        CHECK(r.status == bare.status);
        CHECK(r.out == "exec failed: Exec format error\n");
        auto traces = load_all(dir.path().string());
        REQUIRE(traces.size() == 2);
        const LoadedTrace& first = traces[0].nvtx_named("before").empty() ? traces[1] : traces[0];
        const LoadedTrace& second = &first == &traces[0] ? traces[1] : traces[0];
        CHECK(first.header.pid == second.header.pid);
        CHECK(first.nvtx_named("before").size() == 5);
        CHECK(first.nvtx_named("after").empty());
        REQUIRE(first.execs().size() == 1);
        CHECK(first.str(first.execs()[0].path) == not_a_program);
        CHECK(first.stats.has_end);
        CHECK(second.nvtx_named("after").size() == 5);
        CHECK(second.count_status("failed (Exec format error)") == 1);
        CHECK(second.stats.has_end);
    }
    SECTION("with nothing recorded before: one trace, which goes on") {
        std::vector<std::string> argv{test_program("test_process_tree_app"), "exec-fails", not_a_program, "quiet"};
        RunResult r = run_program(argv, collector_env(dir.path().string()), cwd.path().string());
        INFO(r.err);
        CHECK(r.exit_code() == 0);
        auto traces = load_all(dir.path().string());
        REQUIRE(traces.size() == 1);
        CHECK(traces[0].nvtx_named("after").size() == 5);
        CHECK(traces[0].count_status("failed (Exec format error)") == 1);
        CHECK(traces[0].stats.has_end);
    }
}

TEST_CASE("a child that recorded something before its exec keeps that trace, ended by an Exec record", "[tree]") {
    TempDir dir, cwd;
    std::vector<std::string> argv{test_program("test_process_tree_app"), "exec-traced"};
    RunResult r = run_program(argv, collector_env(dir.path().string()), cwd.path().string());
    INFO(r.err);
    CHECK(r.out == "child 0\n");
    auto traces = load_all(dir.path().string());
    REQUIRE(traces.size() == 3);
    const LoadedTrace* before = nullptr;
    const LoadedTrace* after = nullptr;
    for (const auto& t : traces) {
        CHECK(t.stats.has_end);
        if (!t.nvtx_named("child-before-exec").empty()) before = &t;
        if (t.exe_name() == "true") after = &t;
    }
    REQUIRE(before != nullptr);
    REQUIRE(after != nullptr);
    CHECK(before->header.pid == after->header.pid);
    REQUIRE(before->execs().size() == 1);
    tr::Exec e = before->execs()[0];
    CHECK(e.spawned == 0);
    CHECK(e.image == tr::ExecImage::Traced);
    CHECK(before->str(e.path) == "/bin/true");
    CHECK(before->end()->timestamp <= after->header.clock.trace_ns);  // the new image's trace starts after
}

TEST_CASE("a forked child of a program that looks like CUDA but never calls it gets no CUDA warning", "[tree]") {
    TempDir dir, cwd;
    RunResult r = run_program({test_program("test_cuda_lookalike_app"), "fork"}, collector_env(dir.path().string()),
                              cwd.path().string());
    INFO(r.err);
    CHECK(r.out == "child 0\n");
    auto traces = load_all(dir.path().string());
    REQUIRE(traces.size() == 2);
    const LoadedTrace& parent = traces[0].header.pid == traces[1].header.ppid ? traces[0] : traces[1];
    const LoadedTrace& child = &parent == &traces[0] ? traces[1] : traces[0];
    CHECK(child.header.ppid == parent.header.pid);
    CHECK(child.count_status("CUDA activity not recorded") == 0);  // not even an Info line: it made no CUDA call
    CHECK(child.stats.has_end);
    // The parent did not call CUDA either. On a machine without an NVIDIA driver (CI) it still says that no CUDA
    // program can run here, which is true of it; with a driver it says nothing.
    bool driver = ::access("/proc/driver/nvidia/version", F_OK) == 0 || ::access("/dev/nvidiactl", F_OK) == 0;
    CHECK(parent.count_status("no NVIDIA driver on this machine", tr::StatusLevel::Warning) == (driver ? 0u : 1u));
    CHECK(parent.count_status("never initialised") == 0);
}

TEST_CASE("a program that handles a termination signal itself runs as without the collector", "[tree][signals]") {
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) {
        DYNAMIC_SECTION("signal " << sig) {
            TempDir dir, cwd;
            std::vector<std::string> argv{test_program("test_process_tree_app"), "signal-handler", std::to_string(sig)};
            RunResult bare = run_program(argv, {}, cwd.path().string());
            RunResult r = run_program(argv, collector_env(dir.path().string()), cwd.path().string());
            INFO(r.err);
            CHECK(r.status == bare.status);
            CHECK(r.out == "got " + std::to_string(sig) + ", handler kept\n");
            CHECK(r.out == bare.out);
            auto traces = load_all(dir.path().string());
            REQUIRE(traces.size() == 1);
            CHECK(traces[0].stats.has_end);
            CHECK(traces[0].end()->signal == 0);  // it exited
            CHECK(traces[0].nvtx_named("after-signal").size() == 3);
        }
    }
}
