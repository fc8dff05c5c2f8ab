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

#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>

TEST_CASE("Ctrl-C at a terminal ends the app and gprof-run still reports the run", "[launcher][signals]") {
    // A real terminal: gprof-run and the app in the foreground process group of a pty; ^C written to its master
    // makes the kernel send SIGINT (si_code SI_KERNEL) to both. gprof-run must not die of its own copy, even after
    // it unblocks the signal to write the report.
    gprof::testing::TempDir tmp;
    int master = -1, slave = -1;
    REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(master);
        ::setsid();
        if (::ioctl(slave, TIOCSCTTY, 0) != 0) ::_exit(253);
        ::dup2(slave, 0);
        ::dup2(slave, 1);
        ::dup2(slave, 2);
        if (slave > 2) ::close(slave);
        Spec spec;
        spec.argv = {kGprofRun, "-o", "run", kApp, "wait-die"};
        spec.cwd = tmp.path();
        exec_child(spec);
    }
    ::close(slave);
    std::string seen;
    auto read_until = [&](const std::string& text) {
        while (seen.find(text) == std::string::npos) {
            pollfd p{master, POLLIN, 0};
            if (::poll(&p, 1, 120000) <= 0) return false;
            char buf[4096];
            ssize_t n = ::read(master, buf, sizeof buf);
            if (n <= 0) return false;  // EIO: every process let go of the terminal
            seen.append(buf, static_cast<size_t>(n));
        }
        return true;
    };
    bool ready = read_until("ready");
    if (ready) {
        termios t{};
        ::tcgetattr(master, &t);
        char intr = static_cast<char>(t.c_cc[VINTR]);
        CHECK(::write(master, &intr, 1) == 1);
        CHECK(read_until("run directory:"));
    }
    if (!ready) ::kill(pid, SIGKILL);
    int st = 0;
    ::waitpid(pid, &st, 0);
    ::close(master);
    INFO(seen);
    REQUIRE(ready);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 128 + SIGINT);
    CHECK(seen.find("killed by signal 2") != std::string::npos);
}
