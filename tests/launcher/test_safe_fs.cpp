// Run directories and files: O_EXCL, no symlink following, modes, --force limits.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "launcher_harness.h"
#include "output/output_file.h"
#include "safe_fs.h"

using namespace gprof::launcher;
using namespace gprof::report;
using launcher_test::mode_of;
using launcher_test::read_file;
using launcher_test::write_file;
namespace fs = std::filesystem;

TEST_CASE("a run directory is created 0700, with missing parents", "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    mode_t old = ::umask(0);
    std::string error;
    auto dir = create_run_dir(tmp.path() / "a/b/run", false, false, error);
    ::umask(old);
    REQUIRE(dir);
    CHECK(*dir == tmp.path() / "a/b/run");
    CHECK(mode_of(*dir) == 0700);
}

TEST_CASE("an existing run directory is refused, or replaced with --force only if it is gprof-run's",
          "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    fs::create_directory(tmp.path() / "run");
    write_file(tmp.path() / "run/keep", "x");
    std::string error;
    CHECK_FALSE(create_run_dir(tmp.path() / "run", false, false, error));
    CHECK(error.find("already exists") != std::string::npos);
    CHECK_FALSE(create_run_dir(tmp.path() / "run", true, false, error));
    CHECK(error.find("not a gprof-run run directory") != std::string::npos);
    CHECK(read_file(tmp.path() / "run/keep") == "x");

    write_file(tmp.path() / "run" / kRunMarker, "producer=gprof-run\n");
    REQUIRE(create_run_dir(tmp.path() / "run", true, false, error));
    CHECK(launcher_test::entries(tmp.path() / "run").empty());

    write_file(tmp.path() / "file", "f");
    CHECK_FALSE(create_run_dir(tmp.path() / "file", true, false, error));
    CHECK(read_file(tmp.path() / "file") == "f");
}

TEST_CASE("the default name takes the next free suffix", "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    std::string error;
    auto a = create_run_dir(tmp.path() / "gprof-x", false, true, error);
    auto b = create_run_dir(tmp.path() / "gprof-x", false, true, error);
    auto c = create_run_dir(tmp.path() / "gprof-x", false, true, error);
    REQUIRE((a && b && c));
    CHECK(a->filename() == "gprof-x");
    CHECK(b->filename() == "gprof-x-1");
    CHECK(c->filename() == "gprof-x-2");
}

TEST_CASE("a planted symbolic link is never followed", "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    fs::create_directory(tmp.path() / "victim");
    fs::create_directory_symlink(tmp.path() / "victim", tmp.path() / "run");
    write_file(tmp.path() / "victim.txt", "precious");
    fs::create_symlink(tmp.path() / "victim.txt", tmp.path() / "log");
    fs::create_symlink(tmp.path() / "nowhere", tmp.path() / "dangling");
    std::string error;
    for (bool force : {false, true}) {
        CHECK_FALSE(create_run_dir(tmp.path() / "run", force, false, error));
        CHECK(error.find("symbolic link") != std::string::npos);
        CHECK_FALSE(create_run_dir(tmp.path() / "run", force, true, error));
        for (auto publish : {Publish::WhenComplete, Publish::Live}) {
            OutputPolicy policy{force, FileMode::Private, publish};
            CHECK_THROWS_WITH(OutputFile(tmp.path() / "log", policy), Catch::Contains("symbolic link"));
            CHECK_THROWS(OutputFile(tmp.path() / "dangling", policy));
            CHECK(OutputFile::check(tmp.path() / "log", policy).find("symbolic link") != std::string::npos);
            CHECK_FALSE(OutputFile::check(tmp.path() / "dangling", policy).empty());
        }
    }
    CHECK(launcher_test::entries(tmp.path() / "victim").empty());
    CHECK(read_file(tmp.path() / "victim.txt") == "precious");
    CHECK_FALSE(fs::exists(tmp.path() / "nowhere"));
}

TEST_CASE("gprof-run's files (log, gprof-run.info, outputs) are new, 0600, and replaced only with --force",
          "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    mode_t old = ::umask(0);
    fs::path log = tmp.path() / "sub/log.txt";
    CHECK(create_parent_directories(log).empty());
    {
        OutputFile f(log, {false, FileMode::Private, Publish::Live});
        CHECK(fs::exists(log));  // Live: there at once, for tail -f
        ::close(f.release());
    }
    ::umask(old);
    CHECK(mode_of(log) == 0600);
    write_file(log, "old");
    CHECK_THROWS_WITH(OutputFile(log, {false, FileMode::Private, Publish::Live}), Catch::Contains("--force"));
    CHECK(read_file(log) == "old");
    {
        OutputFile f(log, {true, FileMode::Private, Publish::Live});
        ::close(f.release());
    }
    CHECK(read_file(log).empty());
    CHECK(mode_of(log) == 0600);

    CHECK(OutputFile::check(tmp.path() / "sub/new.json", {}).empty());
    CHECK_FALSE(OutputFile::check(log, {}).empty());
    CHECK(OutputFile::check(log, {true}).empty());
}

TEST_CASE("a file written whole is never put over an existing one without --force", "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    auto write = [&](const std::string& text, bool force) {
        OutputFile f(tmp.path() / "info", {force, FileMode::Private});
        f.stream() << text;
        f.commit();
    };
    write("a\n", false);
    CHECK(mode_of(tmp.path() / "info") == 0600);
    CHECK_THROWS_WITH(write("b\n", false), Catch::Contains("--force"));
    CHECK(read_file(tmp.path() / "info") == "a\n");
    write("c\n", true);
    CHECK(read_file(tmp.path() / "info") == "c\n");
    CHECK(launcher_test::entries(tmp.path()).size() == 1);  // no temporary file left beside it
}
