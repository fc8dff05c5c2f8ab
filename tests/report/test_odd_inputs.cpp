// Inputs that are not trace files, and outputs at names that are not ours (issue #15): the built gprof-report gives
// a precise message and exit 2 within a time limit (a hang would be killed by `timeout`: exit 124, a failure), and
// -o never writes through a planted symbolic link nor replaces a file without --force.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "report_cli.h"
#include "report_fixture.h"

using namespace gprof::testing;
namespace fs = std::filesystem;

namespace {

// gprof-report with `args`, killed after 20 s; `as_nobody` runs it without root's right to read anything.
CliResult report(const std::string& args, const TempDir& dir, bool as_nobody = false) {
    std::string prefix = "timeout -s KILL 20 ";
    if (as_nobody && ::geteuid() == 0) prefix += "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    return run_report(args, dir, prefix);
}

void expect_refusal(const CliResult& r, const std::string& message) {
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("odd inputs: FIFO, /dev/zero, symlink loop, 0-byte file, directory: precise message, exit 2, at once") {
    TempDir dir;
    const fs::path fifo = dir.path() / "pipe.gprof";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    expect_refusal(report(fifo.string(), dir), "is a FIFO (named pipe), not a trace file");
    expect_refusal(report("timeline -o " + dir.file("t.json") + " " + fifo.string(), dir), "no readable trace");
    CHECK_FALSE(fs::exists(dir.path() / "t.json"));

    expect_refusal(report("/dev/zero", dir), "'/dev/zero' is a character device, not a trace file");

    fs::create_symlink(dir.path() / "loop-b", dir.path() / "loop-a");
    fs::create_symlink(dir.path() / "loop-a", dir.path() / "loop-b");
    CliResult loop = report(dir.file("loop-a"), dir);
    expect_refusal(loop, "a symbolic link loop");
    CHECK(loop.err.find("does not exist") == std::string::npos);

    std::ofstream(dir.file("empty.gprof")).close();
    expect_refusal(report(dir.file("empty.gprof"), dir), "is empty: not a gprof-run trace");

    // A *.gprof name that is a directory, given as a trace: read as a run directory, which holds none.
    fs::create_directory(dir.path() / "dir.gprof");
    expect_refusal(report(dir.file("dir.gprof"), dir), "holds no *.gprof traces");
}

TEST_CASE("odd inputs: a FIFO among the traces of a run is named, the others reported") {
    TempDir dir;
    write_small_run(dir);
    REQUIRE(::mkfifo((dir.path() / "zz.9.gprof").c_str(), 0600) == 0);
    CliResult r = report(dir.path().string(), dir);
    INFO(r.err);
    CHECK(r.status == 2);  // damage: one trace unreadable
    CHECK(r.err.find("zz.9.gprof") != std::string::npos);
    CHECK(r.err.find("FIFO") != std::string::npos);
    CHECK(r.out.find("GPU activities:") != std::string::npos);
}

TEST_CASE("odd inputs: a directory or trace gprof-report may not read says so") {
    TempDir dir;
    ::chmod(dir.path().c_str(), 0755);  // the unprivileged run must reach inside
    fs::create_directory(dir.path() / "locked");
    write_trace((dir.path() / "locked" / "app.1.gprof").string(), fill_small_run);
    ::chmod((dir.path() / "locked").c_str(), 0);
    expect_refusal(report(dir.file("locked"), dir, true), "cannot read the directory");
    CHECK(slurp(dir.file("cli.err")).find("Permission denied") != std::string::npos);

    write_trace(dir.file("secret.gprof"), fill_small_run);
    ::chmod(dir.file("secret.gprof").c_str(), 0);
    expect_refusal(report(dir.file("secret.gprof"), dir, true), "Permission denied");
    ::chmod((dir.path() / "locked").c_str(), 0700);
}

TEST_CASE("gprof-report -o: never through a planted symlink, never over a file without --force") {
    TempDir dir;
    write_small_run(dir);
    const std::string run = dir.path().string();
    std::ofstream(dir.file("victim")) << "not ours\n";

    fs::create_symlink(dir.path() / "victim", dir.path() / "out.txt");
    expect_refusal(report("-o " + dir.file("out.txt") + " " + run, dir), "symbolic link");
    expect_refusal(report("--force -o " + dir.file("out.txt") + " " + run, dir), "symbolic link");
    expect_refusal(report("timeline --force -o " + dir.file("out.txt") + " " + run, dir), "symbolic link");
    expect_refusal(report("analyze --force -o " + dir.file("out.txt") + " " + run, dir), "symbolic link");
    expect_refusal(report("diff --force --write-json " + dir.file("out.txt") + " " + run + " " + run, dir),
                   "symbolic link");
    CHECK(slurp(dir.file("victim")) == "not ours\n");
    CHECK(fs::is_symlink(dir.path() / "out.txt"));

    // An existing file: refused, then replaced with --force (whole, by rename).
    expect_refusal(report("-o " + dir.file("victim") + " " + run, dir), "it exists (--force replaces it)");
    expect_refusal(report("timeline -o " + dir.file("victim") + " " + run, dir), "it exists (--force replaces it)");
    CHECK(slurp(dir.file("victim")) == "not ours\n");
    CliResult forced = report("--force -o " + dir.file("victim") + " " + run, dir);
    CHECK(forced.status == 0);
    CHECK(slurp(dir.file("victim")).find("GPU activities:") != std::string::npos);
    CliResult tl = report("timeline --force -o " + dir.file("victim") + " " + run, dir);
    CHECK(tl.status == 0);
    CHECK(slurp(dir.file("victim")).rfind("{", 0) == 0);
    for (const auto& e : fs::directory_iterator(dir.path()))  // no temporary left beside it
        CHECK(e.path().filename().string().find(".victim.") == std::string::npos);

    // A directory where a file is expected, and a device that replaces nothing.
    fs::create_directory(dir.path() / "outdir");
    expect_refusal(report("-o " + dir.file("outdir") + " " + run, dir), "it is a directory");
    expect_refusal(report("timeline -o " + dir.file("outdir") + " " + run, dir), "it is a directory");
    CHECK(report("-o /dev/null " + run, dir).status == 0);

    // A new name: created, complete.
    CHECK(report("--format json -o " + dir.file("new.json") + " " + run, dir).status == 0);
    CHECK(slurp(dir.file("new.json")).find("\"reports\"") != std::string::npos);
}

TEST_CASE("gprof-report -o on a full disk: said, and no partial file left") {
    TempDir dir;
    write_small_run(dir);
    // /dev/full fails every write with ENOSPC: through a FIFO-free path the message must name the disk.
    expect_refusal(report("-o /dev/full " + dir.path().string(), dir), "disk full");
}
