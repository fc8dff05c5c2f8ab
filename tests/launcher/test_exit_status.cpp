// gprof-run exits as the app does, or 127/126/2 when the app never started.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include "gprof/version.h"
#include "launcher_harness.h"

using namespace launcher_test;

TEST_CASE("a normal exit passes its code", "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    for (int code : {0, 1, 42, 255}) {
        auto r = gprof_run({"-o", "run" + std::to_string(code), kApp, "exit", std::to_string(code)}, tmp.path());
        INFO(r.err);
        CHECK(r.exit_code == code);
        CHECK(r.out.empty());
    }
}

TEST_CASE("death by signal N gives 128+N, and the run is still reported", "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    for (int sig : {SIGSEGV, SIGABRT, SIGKILL, SIGTERM}) {
        std::string dir = "run" + std::to_string(sig);
        auto r = gprof_run({"-o", dir, kApp, "signal", std::to_string(sig)}, tmp.path());
        INFO(r.err);
        CHECK(r.exit_code == 128 + sig);
        CHECK(r.err.find("killed by signal " + std::to_string(sig)) != std::string::npos);
        CHECK(r.err.find("run directory: " + (tmp.path() / dir).string()) != std::string::npos);
        CHECK(r.out.empty());
    }
}

TEST_CASE("an app that is not there gives 127, one that cannot run 126, and nothing is created",
          "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    fs::path cwd = tmp.path() / "cwd";
    fs::create_directory(cwd);
    write_file(tmp.path() / "data.txt", "not a program");
    fs::create_directory(tmp.path() / "bin");
    write_file(tmp.path() / "bin/tool", "no x bit");

    struct Case { std::vector<std::string> args; int code; std::string message; };
    const std::vector<Case> cases = {
        {{(tmp.path() / "missing").string()}, 127, "No such file or directory"},
        {{"launcher-test-no-such-command"}, 127, "launcher-test-no-such-command: command not found"},
        {{(tmp.path() / "data.txt").string()}, 126, "Permission denied"},
        {{tmp.path().string()}, 126, "Is a directory"},
        {{"tool"}, 126, "Permission denied"},
    };
    for (const auto& c : cases) {
        INFO(c.args.front());
        Spec spec;
        spec.env["PATH"] = (tmp.path() / "bin").string() + ":/usr/bin:/bin";
        auto r = gprof_run(c.args, cwd, spec);
        CHECK(r.exit_code == c.code);
        CHECK(r.err.find(c.message) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.out.empty());
        CHECK(entries(cwd).empty());
    }
}

TEST_CASE("an executable script without #! runs through /bin/sh, like execvp", "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    write_file(tmp.path() / "script", "exit 7\n");
    fs::permissions(tmp.path() / "script", fs::perms::owner_all);
    auto r = gprof_run({"-o", "run", (tmp.path() / "script").string()}, tmp.path());
    INFO(r.err);
    CHECK(r.exit_code == 7);
}

TEST_CASE("a file the kernel will not run and that is not text: 126, 'cannot execute binary file', as a shell says",
          "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    // A corrupt ELF (its magic, then garbage) and a file of binary junk: never handed to /bin/sh.
    const std::string corrupt_elf("\x7f" "ELF\x02\x01\x01\x00garbage that is no program header", 40);
    for (const std::string& content : {corrupt_elf, std::string("\x01\x02\x00\x03 junk\n", 10)}) {
        fs::path file = tmp.path() / "bad-program";
        write_file(file, content);
        fs::permissions(file, fs::perms::owner_all);
        auto r = gprof_run({"-o", "run", file.string()}, tmp.path());
        INFO(r.err);
        CHECK(r.exit_code == 126);
        CHECK(r.err.find(file.string() + ": cannot execute binary file: Exec format error") != std::string::npos);
        CHECK(r.err.find("sh:") == std::string::npos);  // no shell tried to read it
        CHECK(r.out.empty());
        CHECK_FALSE(fs::exists(tmp.path() / "run"));  // nothing ran: nothing of gprof-run's is left
    }
}

TEST_CASE("gprof-run's own failures give 2 before the app starts", "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    fs::path cwd = tmp.path() / "cwd";
    fs::create_directory(cwd);
    write_file(tmp.path() / "file", "x");
    const std::string marker = (tmp.path() / "app-ran").string();
    const std::vector<std::vector<std::string>> cases = {
        {"--no-such-option"},
        {"--trace", "cuda,,nvtx"},
        {"--capture-range", "nvtx"},
        {"--kernel-filter", "(unclosed"},
        {"--summary", "everything"},
        {"--duration", "0"},
        {"-o", "run.%q{LAUNCHER_TEST_SURELY_UNSET}"},
        {"-o", "run.%y"},
        {"-o", (tmp.path() / "file/sub").string()},               // unwritable: a file in the way
        {"--log-file", (tmp.path() / "file/log").string()},
        {"--timeline", (tmp.path() / "file/t.json").string()},
        {"--log-file", "log.%q{LAUNCHER_TEST_SURELY_UNSET}"},
    };
    for (auto args : cases) {
        INFO(args.front() << " " << (args.size() > 1 ? args[1] : ""));
        args.insert(args.end(), {kApp, "touch", marker});
        auto r = gprof_run(args, cwd);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("gprof-run: ") != std::string::npos);
        CHECK(r.out.empty());
        CHECK_FALSE(fs::exists(marker));
        CHECK(entries(cwd).empty());
    }
}

TEST_CASE("no application at all is a usage error", "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    auto r = gprof_run({}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no application given") != std::string::npos);
}

TEST_CASE("help and version", "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    auto h = gprof_run({"--help"}, tmp.path());
    CHECK(h.exit_code == 0);
    CHECK(h.out.find("Examples:") != std::string::npos);
    CHECK(h.err.empty());
    auto v = gprof_run({"--version"}, tmp.path());
    CHECK(v.exit_code == 0);
    CHECK(v.out == "gprof-run " GPROF_VERSION "\n");
    CHECK(entries(tmp.path()).empty());
}

TEST_CASE("a missing collector library is a clear error, status 2", "[launcher][exit]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.argv = {kGprofRunNoLib, kApp, "exit", "0"};
    spec.cwd = tmp.path();
    auto r = run(spec);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("libgprof-collector.so") != std::string::npos);
    CHECK(r.err.find("missing") != std::string::npos);
    CHECK(entries(tmp.path()).empty());
}
