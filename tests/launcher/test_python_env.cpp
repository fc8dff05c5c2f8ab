// The Python environments gprof-run names to the collector's CUPTI search (GPROF_PYTHON_SITE_PACKAGES).
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "python_env.h"

using namespace gprof::launcher;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/gprof-pyenv-XXXXXX";
        REQUIRE(mkdtemp(tmpl) != nullptr);
        path = fs::canonical(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

void write_file(const fs::path& p, const std::string& text, bool executable = false) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    if (executable) fs::permissions(p, fs::perms::owner_all, fs::perm_options::add);
}

// A venv as `python -m venv` makes it: pyvenv.cfg, bin/python (a link to the base interpreter), site-packages.
fs::path make_venv(const fs::path& root) {
    write_file(root / "pyvenv.cfg", "home = /usr/bin\n");
    fs::create_directories(root / "bin");
    fs::create_symlink("/usr/bin/python3", root / "bin/python");
    fs::create_directories(root / "lib/python3.11/site-packages");
    return root / "lib/python3.11/site-packages";
}

}  // namespace

TEST_CASE("a venv's python: its own site-packages, found by the path as given", "[launcher][python_env]") {
    TempDir t;
    fs::path site = make_venv(t.path / "venv");
    PythonEnvInputs in;
    in.program = t.path / "venv/bin/python";
    CHECK(python_site_packages(in) == std::vector<fs::path>{site});
    // Its python3.11 link names the same environment.
    fs::create_symlink("python", t.path / "venv/bin/python3.11");
    in.program = t.path / "venv/bin/python3.11";
    CHECK(python_site_packages(in) == std::vector<fs::path>{site});
}

TEST_CASE("a script's #! line names the interpreter, directly or through env", "[launcher][python_env]") {
    TempDir t;
    fs::path site = make_venv(t.path / "venv");
    PythonEnvInputs in;
    in.program = t.path / "venv/bin/torchrun";
    write_file(in.program, "#!" + (t.path / "venv/bin/python").string() + "\nimport sys\n", true);
    CHECK(python_site_packages(in) == std::vector<fs::path>{site});

    in.program = t.path / "train.py";
    write_file(in.program, "#!/usr/bin/env python3\nprint(1)\n", true);
    fs::create_symlink("python", t.path / "venv/bin/python3");
    in.path_env = "/nonexistent:" + (t.path / "venv/bin").string() + ":/usr/bin";
    CHECK(python_site_packages(in) == std::vector<fs::path>{site});

    in.program = t.path / "run.sh";  // not Python: nothing, whatever the PATH holds
    write_file(in.program, "#!/bin/sh\nexec python3 train.py\n", true);
    CHECK(python_site_packages(in).empty());
    in.program = "/bin/true";  // an ELF program
    CHECK(python_site_packages(in).empty());
}

TEST_CASE("an activated venv or conda environment, then gprof-run's own, in that order", "[launcher][python_env]") {
    TempDir t;
    fs::path program_site = make_venv(t.path / "app-venv");
    fs::path active_site = make_venv(t.path / "active");
    fs::create_directories(t.path / "conda/lib/python3.12/site-packages");
    fs::path own_site = t.path / "tools/lib/python3.11/site-packages";
    fs::create_directories(own_site / "gprof_run/bin");

    PythonEnvInputs in;
    in.program = t.path / "app-venv/bin/python";
    in.virtual_env = (t.path / "active").string();
    in.conda_prefix = (t.path / "conda").string();
    in.self_exe = own_site / "gprof_run/bin/gprof-run";
    CHECK(python_site_packages(in) == std::vector<fs::path>{program_site, active_site,
                                                             t.path / "conda/lib/python3.12/site-packages", own_site});

    // The same environment named twice is listed once; directories that do not exist are not listed.
    in.virtual_env = (t.path / "app-venv").string();
    in.conda_prefix = (t.path / "nonexistent").string();
    in.self_exe = t.path / "build/bin/gprof-run";  // a build tree or tarball: not inside a Python package
    CHECK(python_site_packages(in) == std::vector<fs::path>{program_site});
}

TEST_CASE("an interpreter outside any venv: its prefix's packages and the user site", "[launcher][python_env]") {
    TempDir t;
    fs::create_directories(t.path / "conda/bin");
    fs::create_symlink("/usr/bin/python3", t.path / "conda/bin/python3.12");
    fs::create_directories(t.path / "conda/lib/python3.12/site-packages");
    fs::create_directories(t.path / "home/.local/lib/python3.12/site-packages");
    PythonEnvInputs in;
    in.program = t.path / "conda/bin/python3.12";
    in.home = (t.path / "home").string();
    CHECK(python_site_packages(in) == std::vector<fs::path>{t.path / "conda/lib/python3.12/site-packages",
                                                             t.path / "home/.local/lib/python3.12/site-packages"});
}

TEST_CASE("the variable's value: ':'-separated, a directory with ':' left out", "[launcher][python_env]") {
    CHECK_FALSE(site_packages_value({}));
    CHECK(site_packages_value({"/a/site-packages", "/b/site-packages"}) ==
          std::optional<std::string>("/a/site-packages:/b/site-packages"));
    CHECK(site_packages_value({"/we:ird/site-packages", "/b/site-packages"}) ==
          std::optional<std::string>("/b/site-packages"));
    CHECK_FALSE(site_packages_value({"/we:ird/site-packages"}));
}
