// Run directories and files: O_EXCL, no symlink following, modes, --force limits.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "launcher_harness.h"
#include "safe_fs.h"

using namespace gprof::launcher;
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
        CHECK(create_private_file(tmp.path() / "log", force, error) == -1);
        CHECK(error.find("symbolic link") != std::string::npos);
        CHECK(create_private_file(tmp.path() / "dangling", force, error) == -1);
        bool exists = false;
        CHECK_FALSE(check_output_file(tmp.path() / "log", force, exists, error));
        CHECK_FALSE(check_output_file(tmp.path() / "dangling", force, exists, error));
    }
    CHECK(launcher_test::entries(tmp.path() / "victim").empty());
    CHECK(read_file(tmp.path() / "victim.txt") == "precious");
    CHECK_FALSE(fs::exists(tmp.path() / "nowhere"));
}

TEST_CASE("private files are new, 0600, and replaced only with --force", "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    mode_t old = ::umask(0);
    std::string error;
    int fd = create_private_file(tmp.path() / "sub/log.txt", false, error);
    ::umask(old);
    REQUIRE(fd >= 0);
    ::close(fd);
    CHECK(mode_of(tmp.path() / "sub/log.txt") == 0600);
    write_file(tmp.path() / "sub/log.txt", "old");
    CHECK(create_private_file(tmp.path() / "sub/log.txt", false, error) == -1);
    CHECK(read_file(tmp.path() / "sub/log.txt") == "old");
    fd = create_private_file(tmp.path() / "sub/log.txt", true, error);
    REQUIRE(fd >= 0);
    ::close(fd);
    CHECK(read_file(tmp.path() / "sub/log.txt").empty());

    bool exists = true;
    CHECK(check_output_file(tmp.path() / "new/t.json", false, exists, error));
    CHECK_FALSE(exists);
    CHECK(fs::is_directory(tmp.path() / "new"));
    CHECK_FALSE(check_output_file(tmp.path() / "sub/log.txt", false, exists, error));
    CHECK(check_output_file(tmp.path() / "sub/log.txt", true, exists, error));
    CHECK(exists);
}

TEST_CASE("write_new_file refuses to overwrite", "[launcher][fs]") {
    gprof::testing::TempDir tmp;
    std::string error;
    CHECK(write_new_file(tmp.path(), "info", "a\n", error));
    CHECK(mode_of(tmp.path() / "info") == 0600);
    CHECK_FALSE(write_new_file(tmp.path(), "info", "b\n", error));
    CHECK(read_file(tmp.path() / "info") == "a\n");
}
