// The app's stdin, stdout, stderr and arguments are exactly what they would be without gprof-run.
#include <catch2/catch.hpp>

#include "launcher_harness.h"

using namespace launcher_test;

namespace {
std::string binary_input() {
    std::string s;
    for (int round = 0; round < 300; ++round)
        for (int b = 0; b < 256; ++b) s += static_cast<char>((b * 7 + round) & 0xff);
    return s;
}
}  // namespace

TEST_CASE("stdin to stdout byte for byte, same as without gprof-run", "[launcher][stdio]") {
    gprof::testing::TempDir tmp;
    Spec direct;
    direct.argv = {kApp, "echo"};
    direct.stdin_data = binary_input();
    auto plain = run(direct);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(plain.out == direct.stdin_data);

    Spec spec;
    spec.stdin_data = direct.stdin_data;
    auto r = gprof_run({"-o", "run", kApp, "echo"}, tmp.path(), spec);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == plain.out);  // not a byte of gprof-run's in it
    // stderr holds the app's bytes first, gprof-run's report after them.
    CHECK(r.err.compare(0, plain.err.size(), plain.err) == 0);
    CHECK(r.err.find("gprof-run: run directory:") != std::string::npos);
}

TEST_CASE("with --log-file, stderr too is the app's alone", "[launcher][stdio]") {
    gprof::testing::TempDir tmp;
    Spec direct;
    direct.argv = {kApp, "echo"};
    direct.stdin_data = "some input\n";
    auto plain = run(direct);

    Spec spec;
    spec.stdin_data = direct.stdin_data;
    spec.umask_zero = true;
    auto r = gprof_run({"-o", "run", "--log-file", "prof.%p.log", kApp, "echo"}, tmp.path(), spec);
    CHECK(r.exit_code == 0);
    CHECK(r.out == plain.out);
    CHECK(r.err == plain.err);
    auto logs = entries_like(tmp.path(), "prof.", ".log");
    REQUIRE(logs.size() == 1);
    CHECK(mode_of(tmp.path() / logs[0]) == 0600);
    CHECK(read_file(tmp.path() / logs[0]).find("gprof-run: run directory:") != std::string::npos);
}

TEST_CASE("arguments reach the app untouched", "[launcher][stdio]") {
    gprof::testing::TempDir tmp;
    const std::vector<std::string> args = {"args", "", " spaced  out ", "--", "-o", "x", "--force", "%p", "%q{HOME}",
                                           "quote'\"", "ünïcode", "--help"};
    Spec direct;
    direct.argv = {kApp};
    direct.argv.insert(direct.argv.end(), args.begin(), args.end());
    auto plain = run(direct);
    std::vector<std::string> launcher_args = {"-o", "run", "--", kApp};
    launcher_args.insert(launcher_args.end(), args.begin(), args.end());
    auto r = gprof_run(launcher_args, tmp.path());
    CHECK(r.exit_code == 0);
    CHECK(r.out == plain.out);
    CHECK(r.out.find("[ spaced  out ]\n[--]\n[-o]\n[x]\n[--force]\n[%p]\n[%q{HOME}]") != std::string::npos);
}

TEST_CASE("an app that closes its stdout early: its reader sees EOF while the app still runs",
          "[launcher][stdio]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.argv = {kGprofRun, "-o", "run", "--summary", "none", "--log-level", "off", kApp, "close-stdout"};
    spec.cwd = tmp.path();
    Piped p(spec);
    // The app is blocked reading stdin, which stays open: EOF on stdout can only come from its close(1).
    CHECK(p.read_to_eof());
    CHECK(p.output() == "early\n");
    p.close_stdin();
    int st = p.wait();
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
}
