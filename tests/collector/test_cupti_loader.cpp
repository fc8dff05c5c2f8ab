// The CUPTI loader: explicit path, refusals with a clear reason, the default search, the buffer pool.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "cupti/buffers.h"
#include "cupti_loader/loader.h"
#include "cupti_loader/search.h"

using namespace gprof::collector::cupti;

namespace {

// Keeps the stand-in mapped for the whole process and re-reads its scenario.
void standin_scenario(const char* script) {
    static void* handle = dlopen(GPROF_TEST_CUPTI_STANDIN, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(handle != nullptr);
    if (script)
        setenv("GPROF_TEST_STANDIN_SCRIPT", script, 1);
    else
        unsetenv("GPROF_TEST_STANDIN_SCRIPT");
    auto reset = reinterpret_cast<void (*)()>(dlsym(handle, "gprof_test_standin_reset"));
    REQUIRE(reset != nullptr);
    reset();
}

}  // namespace

TEST_CASE("a bogus GPROF_CUPTI_LIB gives a clear reason and no fallback", "[cupti][loader]") {
    LoadOptions o;
    o.explicit_path = "/nonexistent/libcupti.so.13";
    LoadResult r = load_cupti(o);
    CHECK(r.api == nullptr);
    CHECK(r.reason.find("GPROF_CUPTI_LIB") != std::string::npos);
    CHECK(r.reason.find("/nonexistent/libcupti.so.13") != std::string::npos);
}

TEST_CASE("a library that is not CUPTI is refused, naming what is missing", "[cupti][loader]") {
    LoadOptions o;
    o.explicit_path = "libm.so.6";
    LoadResult r = load_cupti(o);
    CHECK(r.api == nullptr);
    CHECK(r.opened);
    CHECK(r.reason.find("not a usable CUPTI") != std::string::npos);
    CHECK(r.reason.find("cuptiGetVersion") != std::string::npos);
}

TEST_CASE("the stand-in loads through GPROF_CUPTI_LIB", "[cupti][loader]") {
    standin_scenario(nullptr);
    LoadOptions o;
    o.explicit_path = GPROF_TEST_CUPTI_STANDIN;
    LoadResult r = load_cupti(o);
    REQUIRE(r.api != nullptr);
    CHECK(r.api->found_by == std::string("GPROF_CUPTI_LIB"));
    CHECK(r.api->path == GPROF_TEST_CUPTI_STANDIN);
    CHECK(r.api->version == CUPTI_API_VERSION);
    CHECK(r.api->ActivityRegisterTimestampCallback != nullptr);
}

TEST_CASE("a CUPTI older than 12.4 is refused, naming its release and what gprof-run reads", "[cupti][loader]") {
    standin_scenario("old-version");
    LoadResult r = load_cupti_file(GPROF_TEST_CUPTI_STANDIN, "test");
    CHECK(r.api == nullptr);
    CHECK(r.version == 18);
    CHECK(r.reason.find("CUPTI 11.x (API version 18) is older than CUPTI 12.4") != std::string::npos);
    CHECK(r.reason.find("12.4 to 12.9 and 13.x") != std::string::npos);
    standin_scenario(nullptr);
}

TEST_CASE("the default search finds the toolkit's libcupti", "[cupti][loader]") {
    if (std::string(GPROF_TEST_REAL_CUPTI).empty()) return;  // no toolkit libcupti on this machine
    LoadOptions o;
    LoadResult r = load_cupti(o);
    REQUIRE(r.api != nullptr);
    CHECK(r.api->path.find("libcupti.so.13") != std::string::npos);
    CHECK(!r.api->found_by.empty());
}

TEST_CASE("CUDA_HOME is searched before /usr/local/cuda", "[cupti][loader]") {
    LoadOptions o;
    o.cuda_home = "/nonexistent-cuda-home";
    o.search_process = false;
    o.search_defaults = false;
    LoadResult r = load_cupti(o);
    CHECK(r.api == nullptr);
    CHECK(r.reason.find("not found") != std::string::npos);
    CHECK(r.reason.find("GPROF_CUPTI_LIB") != std::string::npos);  // tells the user what to set
}

TEST_CASE("buffer pool: aligned buffers, reuse, cap with refusal", "[cupti][buffers]") {
    BufferPool pool;
    pool.configure(100 * 1024 + 3, 2, true);
    CHECK(pool.buffer_size() % 8 == 0);
    CHECK(pool.buffer_size() >= 100 * 1024);
    uint8_t* a = pool.acquire();
    uint8_t* b = pool.acquire();
    REQUIRE(a);
    REQUIRE(b);
    CHECK(reinterpret_cast<uintptr_t>(a) % 8 == 0);
    CHECK(reinterpret_cast<uintptr_t>(b) % 8 == 0);
    a[0] = 1;
    a[pool.buffer_size() - 1] = 2;  // the whole size is usable
    CHECK(pool.acquire() == nullptr);  // at the cap: refused, CUPTI counts the loss
    CHECK(pool.stats().refused == 1);
    pool.release(a);
    uint8_t* c = pool.acquire();
    CHECK(c == a);  // reused, not reallocated
    CHECK(pool.stats().allocated == 2);
    pool.release(b);
    pool.release(c);
    CHECK(pool.stats().outstanding == 0);
    CHECK(pool.stats().idle == 2);
}

TEST_CASE("buffer pool: no cap enforced when refusing is unsafe", "[cupti][buffers]") {
    BufferPool pool;
    pool.configure(64 * 1024, 1, false);
    uint8_t* a = pool.acquire();
    uint8_t* b = pool.acquire();
    CHECK(a);
    CHECK(b);
    pool.release(a);
    pool.release(b);
}

TEST_CASE("the CUPTI pip put in a Python environment is found before CUDA_HOME", "[cupti][loader]") {
    // A copy of the stand-in where PyTorch's CUDA 13 wheels put libcupti (a copy, not a link: the dynamic loader
    // would hand back the stand-in already mapped under its own name).
    char tmpl[] = "/tmp/gprof-sitepkg-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string site = std::string(tmpl) + "/lib/python3.11/site-packages";
    const std::string lib_dir = site + "/nvidia/cu13/lib";
    REQUIRE(std::system(("mkdir -p " + lib_dir + " && cp " GPROF_TEST_CUPTI_STANDIN " " + lib_dir + "/libcupti.so.13")
                            .c_str()) == 0);
    standin_scenario(nullptr);

    setenv("GPROF_PYTHON_SITE_PACKAGES", ("/nonexistent-env::" + site).c_str(), 1);
    LoadOptions o = load_options_from_environment();
    unsetenv("GPROF_PYTHON_SITE_PACKAGES");
    REQUIRE(o.python_site_packages.size() == 2);  // the empty entry is dropped
    CHECK(o.python_site_packages[1] == site);
    o.cuda_home = "/usr/local/cuda";  // a toolkit CUPTI, when there is one, must lose against the environment's
    o.search_process = false;
    o.search_defaults = false;
    LoadResult r = load_cupti(o);
    REQUIRE(r.api != nullptr);
    CHECK(r.api->found_by == std::string("Python environment"));
    CHECK(r.api->path == lib_dir + "/libcupti.so.13");
    CHECK(std::system(("rm -rf " + std::string(tmpl)).c_str()) == 0);
}
