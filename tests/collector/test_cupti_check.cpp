// gprof-run --check (launcher/src/check.h) with the real CUPTI 12 libraries of the nvidia-cuda-cupti-cu12 wheels
// (scripts/setup) and the libcuda stand-in as the driver: it names a 12.x CUPTI given through GPROF_CUPTI_LIB or found
// in a venv's layout, says which one a run uses and why the others will not do, and answers with its exit status.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <string>

#include "collector_run.h"
#include "cupti12_wheels.h"

using namespace gprof::testing;
namespace fs = std::filesystem;

namespace {

std::string gprof_run() { return std::string(GPROF_BINARY_DIR) + "/bin/gprof-run"; }

// The wheel of `version` ("12.4.127"), or null (then the case says SKIPPED: scripts/setup could not fetch it).
const Cupti12Wheel* wheel(const std::string& version) {
    for (const Cupti12Wheel* w = kCupti12Wheels; w->version; ++w)
        if (version == w->version) return w;
    std::cout << "SKIPPED: no CUPTI " << version << " under .deps/cupti-wheels (scripts/setup fetches it)\n";
    return nullptr;
}

// gprof-run --check [args] with the driver stand-in on the loader path playing `driver` (empty: no driver at all),
// and nothing else of this machine's Python or CUDA in the way.
RunResult check(const TempDir& dir, const std::string& driver, std::map<std::string, std::string> env,
                std::vector<std::string> args = {}) {
    std::map<std::string, std::string> base = {
        {"GPROF_CUPTI_LIB", "\x01"},       {"GPROF_PYTHON_SITE_PACKAGES", "\x01"}, {"VIRTUAL_ENV", "\x01"},
        {"CONDA_PREFIX", "\x01"},          {"CUDA_HOME", "\x01"},                  {"NVTX_INJECTION64_PATH", "\x01"},
        {"CUDA_INJECTION64_PATH", "\x01"}, {"LD_LIBRARY_PATH", "\x01"},            {"GPROF_TEST_CUDA_DRIVER_VERSION", "\x01"},
    };
    if (!driver.empty()) {
        base["LD_LIBRARY_PATH"] = fs::path(GPROF_TEST_CUDA_STANDIN).parent_path().string();
        base["GPROF_TEST_CUDA_DRIVER_VERSION"] = driver;
    }
    for (auto& [k, v] : env) base[k] = v;
    std::vector<std::string> argv = {gprof_run(), "--check"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, base, dir.path().string());
}

// A venv as `python -m venv` makes it, with the wheel's libcupti.so.12 where nvidia-cuda-cupti-cu12 puts it.
fs::path make_venv(const fs::path& root, const std::string& library) {
    fs::create_directories(root / "bin");
    std::ofstream(root / "pyvenv.cfg") << "home = /usr/bin\n";
    fs::create_symlink("/usr/bin/python3", root / "bin/python");
    fs::path lib = root / "lib/python3.12/site-packages/nvidia/cuda_cupti/lib";
    fs::create_directories(lib);
    fs::copy_file(library, lib / "libcupti.so.12");
    return lib / "libcupti.so.12";
}

}  // namespace

TEST_CASE("gprof-run --check names a CUPTI 12.9 given through GPROF_CUPTI_LIB, usable with a CUDA 12.4 driver",
          "[check][cupti12]") {
    const Cupti12Wheel* w = wheel("12.9.79");
    if (!w) return;
    TempDir dir;
    RunResult r = check(dir, "12040", {{"GPROF_CUPTI_LIB", w->library}});
    INFO(r.out << r.err);
    CHECK(r.exit_code() == 0);
    CHECK(r.out.find("CUDA 12.4 (cuDriverGetVersion 12040)") != std::string::npos);
    CHECK(r.out.find(std::string("* CUPTI 12.9 Update 1 (API version 28)  ") + w->library + "  (GPROF_CUPTI_LIB)\n"
                     "      usable with this driver") != std::string::npos);
    // What a 12.x CUPTI cannot give, said before the run.
    CHECK(r.out.find("isDeviceLaunched") != std::string::npos);
    CHECK(r.out.find("no cuptiSubscribe_v2") != std::string::npos);
    CHECK(r.out.find("\nready\n") != std::string::npos);
}

TEST_CASE("gprof-run --check finds a CUPTI 12.4 in a venv layout, and says why a CUPTI 13 will not do on that driver",
          "[check][cupti12]") {
    const Cupti12Wheel* w = wheel("12.4.127");
    if (!w) return;
    TempDir dir;
    fs::path lib = make_venv(dir.path() / "venv", w->library);
    // The CUDA 13 CUPTI of a toolkit too: CUDA_HOME holding the stand-in's 13.0 copy.
    fs::create_directories(dir.path() / "cuda13/lib64");
    fs::copy_file(GPROF_TEST_CUPTI_STANDIN, dir.path() / "cuda13/lib64/libcupti.so.13");
    RunResult r = check(dir, "12040", {{"VIRTUAL_ENV", (dir.path() / "venv").string()},
                                       {"CUDA_HOME", (dir.path() / "cuda13").string()}});
    INFO(r.out << r.err);
    CHECK(r.exit_code() == 0);
    CHECK(r.out.find("* CUPTI 12.4 (API version 22)  " + lib.string() + "  (Python environment)\n"
                     "      usable with this driver") != std::string::npos);
    CHECK(r.out.find("  CUPTI 13.0 (API version 130001)  " + (dir.path() / "cuda13/lib64/libcupti.so.13").string() +
                     "  (CUDA_HOME)\n      not usable: the CUDA driver supports CUDA 12.4 but CUPTI 13.0") !=
          std::string::npos);
    CHECK(r.out.find("no cuptiActivityEnableDriverApi") != std::string::npos);  // 12.4: the collector filters
    CHECK(r.out.find("\nready\n") != std::string::npos);

    SECTION("with a CUDA 13 driver the CUDA 13 CUPTI comes first, the venv's 12.4 still listed") {
        RunResult r13 = check(dir, "13000", {{"VIRTUAL_ENV", (dir.path() / "venv").string()},
                                             {"CUDA_HOME", (dir.path() / "cuda13").string()}});
        INFO(r13.out << r13.err);
        CHECK(r13.exit_code() == 0);
        size_t thirteen = r13.out.find("* CUPTI 13.0 (API version 130001)");
        size_t twelve = r13.out.find("  CUPTI 12.4 (API version 22)  " + lib.string());
        CHECK(thirteen != std::string::npos);
        CHECK(twelve != std::string::npos);
        CHECK(thirteen < twelve);
    }
}

TEST_CASE("gprof-run --check is not ready without a CUPTI the driver runs, and names the way out", "[check][cupti12]") {
    TempDir dir;
    RunResult r = check(dir, "12040", {{"GPROF_CUPTI_LIB", GPROF_TEST_CUPTI_STANDIN}});
    INFO(r.out << r.err);
    CHECK(r.exit_code() == 1);
    CHECK(r.out.find("not usable: the CUDA driver supports CUDA 12.4 but CUPTI 13.0") != std::string::npos);
    CHECK(r.out.find("not ready: GPROF_CUPTI_LIB: the CUDA driver supports CUDA 12.4 but CUPTI 13.0") != std::string::npos);
    CHECK(r.out.find("pip install nvidia-cuda-cupti-cu12") != std::string::npos);
}

TEST_CASE("gprof-run --check without a driver: not ready for CUDA, ready with -t nvtx", "[check]") {
    TempDir dir;
    RunResult r = check(dir, "", {{"GPROF_CUPTI_LIB", GPROF_TEST_CUPTI_STANDIN}});
    INFO(r.out << r.err);
    CHECK(r.exit_code() == 1);
    CHECK(r.out.find("libcuda.so.1 not found") != std::string::npos);
    CHECK(r.out.find("not ready: no CUDA driver") != std::string::npos);
    RunResult nvtx = check(dir, "", {}, {"-t", "nvtx"});
    INFO(nvtx.out << nvtx.err);
    CHECK(nvtx.exit_code() == 0);
    CHECK(nvtx.out.find("no CUDA activity (-t nvtx)") != std::string::npos);
    CHECK(nvtx.out.find("NVTX ranges and marks") != std::string::npos);
}
