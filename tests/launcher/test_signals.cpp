// Signals sent to gprof-run reach the app; gprof-run survives them to report the run.
#include <catch2/catch.hpp>

#include <signal.h>

#include "launcher_harness.h"

using namespace launcher_test;

TEST_CASE("SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to gprof-run reach the app", "[launcher][signals]") {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        INFO("signal " << sig);
        gprof::testing::TempDir tmp;
        Spec spec;
        spec.argv = {kGprofRun, "-o", "run", "--log-file", "log", kApp, "wait-signal"};
        spec.cwd = tmp.path();
        Piped p(spec);
        REQUIRE(p.read_until("ready\n"));  // the app has its handlers in place
        REQUIRE(::kill(p.pid(), sig) == 0);
        CHECK(p.read_until("got " + std::to_string(sig) + "\n"));
        int st = p.wait();
        REQUIRE(WIFEXITED(st));  // gprof-run itself was not killed
        CHECK(WEXITSTATUS(st) == 100 + sig);
        CHECK(read_file(tmp.path() / "log").find("run directory:") != std::string::npos);
    }
}

TEST_CASE("an app killed by the forwarded SIGINT: gprof-run reports and exits 130", "[launcher][signals]") {
    gprof::testing::TempDir tmp;
    Spec spec;
    spec.argv = {kGprofRun, "-o", "run", "--log-file", "log", kApp, "wait-die"};
    spec.cwd = tmp.path();
    Piped p(spec);
    REQUIRE(p.read_until("ready\n"));
    REQUIRE(::kill(p.pid(), SIGINT) == 0);
    int st = p.wait();
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 128 + SIGINT);
    std::string log = read_file(tmp.path() / "log");
    CHECK(log.find("killed by signal 2") != std::string::npos);
    CHECK(log.find("run directory:") != std::string::npos);
}
