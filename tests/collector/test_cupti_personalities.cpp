// End to end against each CUPTI release the stand-in plays (issue 34): 12.4, 12.9 and 13.0 (their record sizes, API
// versions, exports and callback-id counts: top of cupti_standin/standin.cpp). The same injected collector, one build,
// must record the same program the same way with each, say what a release cannot give, and pick the CUPTI that fits
// the driver when it searches for one itself.
#include <catch2/catch.hpp>

#include <cupti.h>

#include <filesystem>
#include <string>

#include "collector_run.h"

using namespace gprof;
using namespace gprof::testing;
namespace fs = std::filesystem;

namespace {

struct Personality {
    const char* name;
    const char* library;
    uint32_t api_version;
    bool twelve;
};

const Personality kPersonalities[] = {
    {"12.4", GPROF_TEST_CUPTI_STANDIN_12_4, 22, true},
    {"12.9", GPROF_TEST_CUPTI_STANDIN_12_9, 28, true},
    {"13.0", GPROF_TEST_CUPTI_STANDIN, CUPTI_API_VERSION, false},
};

struct Run {
    TempDir dir;
    RunResult run;

    Run(const std::string& mode, int n, std::map<std::string, std::string> extra) {
        auto env = collector_env(dir.path().string());
        env["GPROF_TEST_STANDIN_SCRIPT"] = "\x01";
        env["GPROF_CUPTI_LIB"] = "\x01";
        env["GPROF_PYTHON_SITE_PACKAGES"] = "\x01";
        env["CUDA_HOME"] = "\x01";
        for (auto& [k, v] : extra) env[k] = v;
        run = run_program({test_program("test_cupti_standin_app"), mode, std::to_string(n)}, env, dir.path().string());
    }
    LoadedTrace trace() const {
        auto paths = traces_in(dir.path().string());
        REQUIRE(paths.size() == 1);
        return load_trace(paths[0].string());
    }
};

std::map<std::string, std::string> with(const Personality& p, std::map<std::string, std::string> extra = {}) {
    extra["GPROF_CUPTI_LIB"] = p.library;
    return extra;
}

bool has_status(const LoadedTrace& t, const std::string& text) { return t.count_status(text) > 0; }

uint32_t cupti_api_version(const LoadedTrace& t) {
    for (auto& r : t.records)
        if (r.kind == trace::RecordKind::CudaInfo) return r.cuda_info.cupti_api_version;
    return 0;
}

// A fake Python environment: copies of stand-ins where pip's CUPTI wheels put libcupti (a copy, not a link: the
// dynamic loader would hand back a stand-in already mapped under its own name).
struct FakeVenv {
    TempDir dir;
    fs::path site;
    FakeVenv() : site(dir.path() / "lib/python3.12/site-packages") {}
    void put(const std::string& sub, const std::string& soname, const std::string& from) {
        fs::create_directories(site / sub);
        fs::copy_file(from, site / sub / soname, fs::copy_options::overwrite_existing);
    }
};

}  // namespace

TEST_CASE("personalities: every record kind, field by field, with each CUPTI release", "[cupti][e2e][cupti12]") {
    for (const Personality& p : kPersonalities) {
        INFO("CUPTI " << p.name);
        Run r("mix", 40, with(p));
        INFO(r.run.err);
        REQUIRE(r.run.exit_code() == 0);
        CHECK(r.run.out == "done mix (CUPTI subscribed: 1)\n");
        LoadedTrace t = r.trace();
        CHECK(cupti_api_version(t) == p.api_version);
        CHECK_FALSE(has_status(t, "CUPTI unavailable"));
        CHECK(t.count(trace::RecordKind::Kernel) == 40);
        CHECK(t.count(trace::RecordKind::Memcpy) == 40);
        CHECK(t.count(trace::RecordKind::Memset) == 40);
        CHECK(t.count(trace::RecordKind::Memory) == 160);
        CHECK(t.count(trace::RecordKind::MemoryPool) == 2);  // created with the first cudaMallocAsync, trimmed
        size_t pool_allocations = 0;
        for (auto& rec : t.records) {
            switch (rec.kind) {
                case trace::RecordKind::Kernel:
                    CHECK(t.str(rec.kernel.name) == "_Z3mixv");
                    CHECK(rec.kernel.end - rec.kernel.start == 1000);
                    CHECK(rec.kernel.grid_x == 128);
                    CHECK(rec.kernel.block_x == 256);
                    CHECK(rec.kernel.registers_per_thread == 32);
                    CHECK(rec.kernel.stream == 7);
                    CHECK(rec.kernel.context == 1);
                    // Kernel9 (12.x) has no isDeviceLaunched: the byte after it is the next record's kind, never read.
                    CHECK(rec.kernel.device_launched == 0);
                    break;
                case trace::RecordKind::Memcpy:
                    CHECK(rec.memcpy.bytes == 4096);
                    CHECK(rec.memcpy.copy_kind == trace::MemcpyKind::HtoD);
                    CHECK(rec.memcpy.src_kind == trace::MemoryKind::Pageable);
                    CHECK(rec.memcpy.dst_kind == trace::MemoryKind::Device);
                    CHECK(rec.memcpy.end - rec.memcpy.start == 500);
                    CHECK(rec.memcpy.stream == 7);
                    break;
                case trace::RecordKind::Memset:
                    CHECK(rec.memset.bytes == 512);
                    CHECK(rec.memset.value == 0xAB);
                    CHECK(rec.memset.memory_kind == trace::MemoryKind::Device);
                    CHECK(rec.memset.end - rec.memset.start == 300);
                    break;
                case trace::RecordKind::Memory:
                    CHECK(rec.memory.memory_kind == trace::MemoryKind::Device);
                    CHECK(rec.memory.context == 1);
                    if (rec.memory.pool_type == trace::MemoryPoolType::Local) {
                        ++pool_allocations;
                        CHECK(rec.memory.async == 1);
                        CHECK(rec.memory.bytes == (1u << 20));
                        CHECK(rec.memory.pool_address == 0x7e0000000000ull);
                        CHECK(rec.memory.pool_size == (32u << 20));
                        CHECK(rec.memory.stream == 7);
                    } else {
                        CHECK(rec.memory.bytes == 4096);
                        CHECK(rec.memory.async == 0);
                    }
                    break;
                case trace::RecordKind::MemoryPool:
                    CHECK(rec.memory_pool.address == 0x7e0000000000ull);
                    CHECK(rec.memory_pool.pool_type == trace::MemoryPoolType::Local);
                    // MemoryPool2 (12.x) has no isManagedPool: the byte after it is the next record's.
                    CHECK(rec.memory_pool.managed == 0);
                    break;
                default: break;
            }
        }
        CHECK(pool_allocations == 80);
        // What a 12.x record lacks is said once, as unknown; a 13 trace says nothing of the kind.
        CHECK(has_status(t, "isDeviceLaunched") == p.twelve);
        CHECK(has_status(t, "isManagedPool") == p.twelve);
    }
}

TEST_CASE("personalities: the runtime's own driver calls are left out with each release, by CUPTI or by the collector",
          "[cupti][e2e][cupti12]") {
    for (const Personality& p : kPersonalities) {
        for (bool keep : {false, true}) {
            INFO("CUPTI " << p.name << ", GPROF_CUDA_NESTED_DRIVER_CALLS " << keep);
            Run r("basic", 200, with(p, {{"GPROF_CUDA_NESTED_DRIVER_CALLS", keep ? "1" : "0"}}));
            INFO(r.run.err);
            REQUIRE(r.run.exit_code() == 0);
            LoadedTrace t = r.trace();
            // 200 cudaLaunchKernel + 200 cudaMemcpy; the runtime's: 200 cuKernelGetName, one lazy load of the kernel.
            CHECK(t.count(trace::RecordKind::ApiCall) == (keep ? 400u + 200 + 2 : 400u));
            CHECK(t.count(trace::RecordKind::Kernel) == 200);
            // 12.4 has no cuptiActivityEnableDriverApi: the collector filters (also the noisy getters), and says so.
            CHECK(has_status(t, "no cuptiActivityEnableDriverApi") == (std::string(p.name) == "12.4"));
        }
    }
}

TEST_CASE("personalities: refused because CUPTI is taken: 12.x cannot name the holder, 13 does", "[cupti][e2e][cupti12]") {
    for (const Personality& p : kPersonalities) {
        INFO("CUPTI " << p.name);
        Run r("basic", 10, with(p, {{"GPROF_TEST_STANDIN_SCRIPT", "multiple-subscribers,holder=CUPTI for Nsight Systems"}}));
        INFO(r.run.err);
        CHECK(r.run.exit_code() == 0);
        CHECK(r.run.out == "done basic (CUPTI subscribed: 0)\n");
        LoadedTrace t = r.trace();
        CHECK(t.count(trace::RecordKind::Kernel) == 0);
        if (p.twelve) {
            // No cuptiSubscribe_v2 before 13.0: nobody can tell who holds it.
            CHECK(r.run.err.find("another profiler already uses CUPTI") != std::string::npos);
            CHECK(r.run.err.find("Nsight Systems") == std::string::npos);
        } else {
            CHECK(r.run.err.find("another tool already uses CUPTI in this process: CUPTI for Nsight Systems") !=
                  std::string::npos);
        }
    }
}

TEST_CASE("personalities: with no driver, each release's answer gives the same one line", "[cupti][e2e][cupti12]") {
    for (const Personality& p : kPersonalities) {
        INFO("CUPTI " << p.name);
        Run r("basic", 10, with(p, {{"GPROF_TEST_STANDIN_SCRIPT", "no-driver"}}));
        INFO(r.run.err);
        CHECK(r.run.exit_code() == 0);
        CHECK(r.run.err.find(p.twelve ? "CUPTI_ERROR_NOT_INITIALIZED" : "CUPTI_ERROR_UNKNOWN") != std::string::npos);
        CHECK(r.run.err.find("no CUDA driver in this process") != std::string::npos);
    }
}

TEST_CASE("personalities: call sites for some kinds of call enable only the ids the loaded CUPTI knows",
          "[cupti][e2e][cupti12]") {
    for (const Personality& p : kPersonalities) {
        INFO("CUPTI " << p.name);
        // Kernels and "other" calls, not all kinds: the driver callbacks are enabled id by id, and every id our
        // headers know past a 12.x CUPTI's own count is "other" to it (it has no name for them) -- and refused.
        Run r("call-sites", 20, with(p, {{"GPROF_BACKTRACE", "1"}, {"GPROF_CUDABACKTRACE", "kernel:0,other:0"}}));
        INFO(r.run.err);
        REQUIRE(r.run.exit_code() == 0);
        LoadedTrace t = r.trace();
        CHECK_FALSE(has_status(t, "call sites are missing"));
        CHECK(t.count(trace::RecordKind::CallSite) == 40);  // 20 launches, 20 cudaEventRecord
    }
}

TEST_CASE("personalities: a CUPTI newer than the driver is refused with the way out, an older one records",
          "[cupti][e2e][cupti12][driver]") {
    for (const Personality& p : kPersonalities) {
        INFO("CUPTI " << p.name);
        Run r("basic", 10, with(p, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN},
                                    {"GPROF_TEST_CUDA_DRIVER_VERSION", "12040"}}));
        INFO(r.run.err);
        CHECK(r.run.exit_code() == 0);
        LoadedTrace t = r.trace();
        if (p.twelve) {
            CHECK(r.run.out == "done basic (CUPTI subscribed: 1)\n");
            CHECK(t.count(trace::RecordKind::Kernel) == 10);
        } else {
            CHECK(r.run.out == "done basic (CUPTI subscribed: 0)\n");  // CUPTI never touched
            CHECK(t.count(trace::RecordKind::Kernel) == 0);
            CHECK(r.run.err.find("the CUDA driver supports CUDA 12.4 but CUPTI 13.0") != std::string::npos);
            CHECK(r.run.err.find("pip install nvidia-cuda-cupti-cu12") != std::string::npos);
        }
    }
}

TEST_CASE("personalities: the search picks the CUPTI the driver runs from a Python environment",
          "[cupti][e2e][cupti12][search]") {
    FakeVenv venv;
    venv.put("nvidia/cuda_cupti/lib", "libcupti.so.12", GPROF_TEST_CUPTI_STANDIN_12_9);
    venv.put("nvidia/cu13/lib", "libcupti.so.13", GPROF_TEST_CUPTI_STANDIN);
    struct Case {
        const char* driver;
        uint32_t api_version;
        const char* file;
    } cases[] = {{"12040", 28, "nvidia/cuda_cupti/lib/libcupti.so.12"},
                 {"12090", 28, "nvidia/cuda_cupti/lib/libcupti.so.12"},
                 {"13000", CUPTI_API_VERSION, "nvidia/cu13/lib/libcupti.so.13"}};
    for (const Case& c : cases) {
        INFO("driver " << c.driver);
        Run r("basic", 10, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN},
                            {"GPROF_TEST_CUDA_DRIVER_VERSION", c.driver},
                            {"GPROF_PYTHON_SITE_PACKAGES", venv.site.string()}});
        INFO(r.run.err);
        REQUIRE(r.run.exit_code() == 0);
        CHECK(r.run.out == "done basic (CUPTI subscribed: 1)\n");
        LoadedTrace t = r.trace();
        CHECK(cupti_api_version(t) == c.api_version);
        CHECK(has_status(t, (venv.site / c.file).string() + " (Python environment)"));
        CHECK(t.count(trace::RecordKind::Kernel) == 10);
    }
}

TEST_CASE("personalities: no CUPTI the driver runs: one line naming what was found and the way out",
          "[cupti][e2e][cupti12][search]") {
    FakeVenv venv;
    venv.put("nvidia/cu13/lib", "libcupti.so.13", GPROF_TEST_CUPTI_STANDIN);
    Run r("basic", 10, {{"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN},
                        {"GPROF_TEST_CUDA_DRIVER_VERSION", "12040"},
                        {"GPROF_PYTHON_SITE_PACKAGES", venv.site.string()}});
    INFO(r.run.err);
    CHECK(r.run.exit_code() == 0);
    CHECK(r.run.out == "done basic (no CUPTI loaded)\n");
    const std::string found = (venv.site / "nvidia/cu13/lib/libcupti.so.13").string();
    CHECK(r.run.err.find("CUPTI unavailable") != std::string::npos);
    CHECK(r.run.err.find(found) != std::string::npos);
    CHECK(r.run.err.find("pip install nvidia-cuda-cupti-cu12") != std::string::npos);
    size_t lines = 0;
    for (size_t at = 0; (at = r.run.err.find("CUPTI unavailable", at)) != std::string::npos; ++at) ++lines;
    CHECK(lines == 1);
}

TEST_CASE("personalities: a CUPTI the program already loaded is the only one, usable or not", "[cupti][e2e][cupti12][search]") {
    // The program's own CUPTI (PyTorch loads libcupti at import): a 12.9 copy preloaded as libcupti.so.12.
    FakeVenv venv;
    venv.put("nvidia/cuda_cupti/lib", "libcupti.so.12", GPROF_TEST_CUPTI_STANDIN_12_9);
    venv.put("nvidia/cu13/lib", "libcupti.so.13", GPROF_TEST_CUPTI_STANDIN);
    const std::string own12 = (venv.site / "nvidia/cuda_cupti/lib/libcupti.so.12").string();
    const std::string own13 = (venv.site / "nvidia/cu13/lib/libcupti.so.13").string();
    auto preloading = [&](const std::string& own, std::map<std::string, std::string> extra) {
        extra["LD_PRELOAD"] = collector_library() + ":" + own;
        extra["GPROF_TEST_CUDA_STANDIN"] = GPROF_TEST_CUDA_STANDIN;
        extra["GPROF_PYTHON_SITE_PACKAGES"] = venv.site.string();
        return extra;
    };
    SECTION("taken, although the search would prefer the 13 a CUDA 13 driver runs") {
        Run r("basic", 10, preloading(own12, {{"GPROF_TEST_CUDA_DRIVER_VERSION", "13000"}}));
        INFO(r.run.err);
        REQUIRE(r.run.exit_code() == 0);
        CHECK(r.run.out == "done basic (CUPTI subscribed: 1)\n");
        LoadedTrace t = r.trace();
        CHECK(cupti_api_version(t) == 28);
        CHECK(has_status(t, own12 + " (already loaded)"));
        CHECK(t.count(trace::RecordKind::Kernel) == 10);
    }
    SECTION("GPROF_CUPTI_LIB naming another CUPTI is refused: never two in one process") {
        Run r("basic", 10, preloading(own12, {{"GPROF_TEST_CUDA_DRIVER_VERSION", "13000"},
                                              {"GPROF_CUPTI_LIB", GPROF_TEST_CUPTI_STANDIN}}));
        INFO(r.run.err);
        CHECK(r.run.exit_code() == 0);
        CHECK(r.run.out == "done basic (CUPTI subscribed: 0)\n");
        CHECK(r.run.err.find("but the program already loaded " + own12) != std::string::npos);
        CHECK(r.trace().count(trace::RecordKind::Kernel) == 0);
    }
    SECTION("one the driver does not run is refused, and no other is loaded beside it") {
        Run r("basic", 10, preloading(own13, {{"GPROF_TEST_CUDA_DRIVER_VERSION", "12040"}}));
        INFO(r.run.err);
        CHECK(r.run.exit_code() == 0);
        CHECK(r.run.out == "done basic (CUPTI subscribed: 0)\n");  // the app drives the loaded 13: never subscribed
        CHECK(r.run.err.find("the CUDA driver supports CUDA 12.4 but CUPTI 13.0") != std::string::npos);
        CHECK(r.run.err.find(own13) != std::string::npos);
        LoadedTrace t = r.trace();
        CHECK(t.count(trace::RecordKind::Kernel) == 0);
        CHECK_FALSE(has_status(t, "loaded from"));
    }
}
