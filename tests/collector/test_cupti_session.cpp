// The CUPTI session against the stand-in (tests/collector/cupti_standin), loaded through GPROF_CUPTI_LIB as
// the real library would be: buffer cycle, dropped records, profiler start/stop capture range, refusals.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cupti/buffers.h"
#include "cupti/call_categories.h"
#include "cupti/session.h"
#include "pipeline/pipeline.h"
#include "standin_control.h"
#include "elf_symbols.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::collector;
using namespace gprof::collector::cupti;

namespace {

struct Standin {
    void* handle = nullptr;
    template <class F>
    F fn(const char* name) {
        auto f = reinterpret_cast<F>(dlsym(handle, name));
        if (!f) FAIL("stand-in lacks " << name);
        return f;
    }
};

Standin& standin() {
    static Standin s{dlopen(GPROF_TEST_CUPTI_STANDIN, RTLD_NOW | RTLD_LOCAL)};
    REQUIRE(s.handle != nullptr);
    return s;
}

#define SI(name) standin().fn<decltype(&name)>(#name)

uint64_t test_clock() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// One session, pipeline and trace file per test; the stand-in is reset to `script` first.
struct Fixture {
    gprof::testing::TempDir dir;
    std::string path = dir.file("s.gprof");
    Pipeline* pipeline = new Pipeline();  // leaked with the session: CUPTI keeps pointers into both
    Session* session = new Session();
    StartResult result;

    explicit Fixture(const char* script, SessionOptions options = {}) {
        if (script)
            setenv("GPROF_TEST_STANDIN_SCRIPT", script, 1);
        else
            unsetenv("GPROF_TEST_STANDIN_SCRIPT");
        SI(gprof_test_standin_reset)();
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(pipeline->start(fd, gprof::testing::test_header(), Pipeline::Options{}));
        options.load.explicit_path = GPROF_TEST_CUPTI_STANDIN;
        if (options.buffer_bytes == (8u << 20)) options.buffer_bytes = 64 * 1024;  // several buffers per test
        if (!options.timestamp) options.timestamp = test_clock;
        result = session->start(*pipeline, options);
    }

    std::vector<trace::Record> finish(trace::TraceReader** reader_out = nullptr) {
        session->flush(true);
        pipeline->finish();
        auto* reader = new trace::TraceReader(path);
        auto recs = gprof::testing::read_all_records(*reader);
        if (reader_out)
            *reader_out = reader;
        else
            delete reader;
        return recs;
    }
};

size_t count(const std::vector<trace::Record>& recs, trace::RecordKind kind) {
    size_t n = 0;
    for (const auto& r : recs) n += r.kind == kind;
    return n;
}

}  // namespace

TEST_CASE("session: buffer cycle from API calls to records in the trace", "[cupti][session]") {
    Fixture f(nullptr);
    REQUIRE(f.result.ok);
    CHECK(f.result.reason.empty());
    CHECK(SI(gprof_test_standin_subscribed)() == 1);
    CHECK(SI(gprof_test_standin_timestamp_callback_registered)() == 1);  // before any kind
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1);
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_KERNEL) == 0);
    for (CUpti_ActivityKind k : traced_activity_kinds(false)) CHECK(SI(gprof_test_standin_kind_enabled)(k) == 1);
    CHECK(SI(gprof_test_standin_runtime_api_filtered)(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020) == 1);
    CHECK(f.session->recording());

    const int n = 1000;
    for (int i = 0; i < n; ++i) {
        SI(gprof_test_standin_launch_kernel)("_Z6kernelv", 7);
        SI(gprof_test_standin_memcpy)(4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
        if (i % 100 == 0) SI(gprof_test_standin_runtime_call)(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
    }
    SI(gprof_test_standin_memset)(256, 0);
    CHECK(SI(gprof_test_standin_buffers_requested)() > 3);  // 64 KiB buffers: many cycles

    trace::TraceReader* reader = nullptr;
    auto recs = f.finish(&reader);
    CHECK(count(recs, trace::RecordKind::Kernel) == n);
    CHECK(count(recs, trace::RecordKind::Memcpy) == n);
    CHECK(count(recs, trace::RecordKind::Memset) == 1);
    CHECK(count(recs, trace::RecordKind::ApiCall) == 2 * n + 1);  // cudaGetDevice filtered out
    CHECK(count(recs, trace::RecordKind::Dropped) == 0);
    CHECK(SI(gprof_test_standin_buffers_completed)() == SI(gprof_test_standin_buffers_requested)());
    CHECK(buffer_pool().stats().outstanding == 0);  // every buffer came back to the pool

    bool saw_info = false;
    for (const auto& r : recs) {
        if (r.kind == trace::RecordKind::Kernel) {
            CHECK(reader->string(r.kernel.name) == "_Z6kernelv");
            CHECK(r.kernel.start != 0);
        }
        if (r.kind == trace::RecordKind::ApiCall) {
            auto name = reader->string(r.api.name);
            CHECK((name == "cudaLaunchKernel" || name == "cudaMemcpy" || name == "cudaMemset"));
        }
        if (r.kind == trace::RecordKind::CudaInfo) {
            saw_info = true;
            CHECK(reader->string(r.cuda_info.cupti_library) == GPROF_TEST_CUPTI_STANDIN);
            CHECK(r.cuda_info.cupti_api_version == CUPTI_API_VERSION);
        }
    }
    CHECK(saw_info);
    delete reader;
}

TEST_CASE("session: dropped records are written, never lost", "[cupti][session]") {
    Fixture f("drop=5");
    REQUIRE(f.result.ok);
    SI(gprof_test_standin_launch_kernel)("_Z1kv", 1);
    SI(gprof_test_standin_complete_buffer)();     // carries the 5 of the scenario
    SI(gprof_test_standin_add_dropped)(37);
    SI(gprof_test_standin_launch_kernel)("_Z1kv", 1);
    auto recs = f.finish();
    uint64_t dropped = 0;
    for (const auto& r : recs)
        if (r.kind == trace::RecordKind::Dropped) {
            CHECK(r.dropped.source == trace::DropSource::CuptiBuffer);
            dropped += r.dropped.count;
        }
    CHECK(dropped == 42);
    CHECK(f.session->counters().dropped_reported == 42);
    CHECK(count(recs, trace::RecordKind::Kernel) == 2);
}

std::vector<bool> g_profiler_edges;

TEST_CASE("session: cudaProfilerStart/Stop call back once per range, and set_recording switches the kinds",
          "[cupti][session]") {
    g_profiler_edges.clear();
    SessionOptions o;
    o.start_paused = true;
    o.profiler_range = [](bool start) { g_profiler_edges.push_back(start); };
    Fixture f(nullptr, o);
    REQUIRE(f.result.ok);
    CHECK_FALSE(f.session->recording());
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 0);
    SI(gprof_test_standin_launch_kernel)("_Z6beforev", 1);  // kinds off: not recorded, not later either

    SI(gprof_test_standin_profiler_start)();
    CHECK(g_profiler_edges == std::vector<bool>{true});  // cudaProfilerStart and its cuProfilerStart: one edge
    CHECK(f.session->set_recording(true));
    CHECK(f.session->recording());
    CHECK(f.session->set_recording(true));  // idempotent
    for (int i = 0; i < 3; ++i) SI(gprof_test_standin_launch_kernel)("_Z6insidev", 1);
    uint64_t flushes_before = SI(gprof_test_standin_flushes)(0);
    SI(gprof_test_standin_profiler_stop)();
    CHECK(g_profiler_edges == std::vector<bool>{true, false});
    CHECK(SI(gprof_test_standin_flushes)(0) > flushes_before);  // flushed on cudaProfilerStop
    CHECK(f.session->set_recording(false));
    CHECK_FALSE(f.session->recording());
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_RUNTIME) == 0);
    SI(gprof_test_standin_launch_kernel)("_Z5afterv", 1);

    trace::TraceReader* reader = nullptr;
    auto recs = f.finish(&reader);
    std::vector<std::string> kernels;
    for (const auto& r : recs)
        if (r.kind == trace::RecordKind::Kernel) kernels.emplace_back(reader->string(r.kernel.name));
    CHECK(kernels == std::vector<std::string>(3, "_Z6insidev"));
    CHECK(count(recs, trace::RecordKind::Capture) == 0);  // the capture window writes those, not the session
    CHECK(f.session->counters().profiler_starts == 2);
    delete reader;
}

// The names of the API records, in order.
std::vector<std::string> api_names(const std::vector<trace::Record>& recs, trace::TraceReader& reader) {
    std::vector<std::string> names;
    for (const auto& r : recs)
        if (r.kind == trace::RecordKind::ApiCall) names.emplace_back(reader.string(r.api.name));
    return names;
}

TEST_CASE("session: the runtime's own driver calls are switched off at the source, the program's are kept",
          "[cupti][session]") {
    for (bool keep : {false, true}) {
        INFO("nested_driver_calls = " << keep);
        SessionOptions o;
        o.nested_driver_calls = keep;
        o.start_paused = true;
        Fixture f(nullptr, o);
        REQUIRE(f.result.ok);
        // Enabling DRIVER resets CUPTI's per-call filters: they must be applied after every enabling.
        for (int round = 0; round < 2; ++round) {
            REQUIRE(f.session->set_recording(true));
            for (CUpti_CallbackId cbid : runtime_internal_driver_calls())
                CHECK(SI(gprof_test_standin_driver_api_filtered)(cbid) == (keep ? 0 : 1));
            CHECK(SI(gprof_test_standin_driver_api_filtered)(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) == 0);
            CHECK(SI(gprof_test_standin_driver_api_filtered)(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) == 0);
            SI(gprof_test_standin_launch_kernel)(round == 0 ? "_Z1av" : "_Z1bv", 1);
            SI(gprof_test_standin_driver_launch_kernel)("_Z6tritonv", 1);  // the program's own driver launch
            REQUIRE(f.session->set_recording(false));
        }
        trace::TraceReader* reader = nullptr;
        auto recs = f.finish(&reader);
        auto names = api_names(recs, *reader);
        std::vector<std::string> expect;
        for (int round = 0; round < 2; ++round) {
            if (keep) expect.insert(expect.end(), {"cuLibraryLoadData", "cuLibraryGetKernel", "cuKernelGetName"});
            expect.insert(expect.end(), {"cudaLaunchKernel", "cuLaunchKernel"});
        }
        CHECK(names == expect);
        CHECK(count(recs, trace::RecordKind::Kernel) == 4);
        bool said = false;
        for (const auto& r : recs)
            if (r.kind == trace::RecordKind::Status &&
                reader->string(r.status.message).find("driver calls the CUDA runtime makes internally") !=
                    std::string_view::npos)
                said = true;
        CHECK(said == !keep);
        delete reader;
    }
}

// Node records of graph launches, as the trace holds them.
struct GraphSeen {
    std::vector<trace::Kernel> kernels;
    std::vector<trace::Memcpy> memcpys;
    std::vector<trace::Memset> memsets;
    std::vector<trace::GraphLaunch> launches;
};
GraphSeen graph_records(const std::vector<trace::Record>& recs) {
    GraphSeen g;
    for (const auto& r : recs) {
        if (r.kind == trace::RecordKind::Kernel) g.kernels.push_back(r.kernel);
        if (r.kind == trace::RecordKind::Memcpy) g.memcpys.push_back(r.memcpy);
        if (r.kind == trace::RecordKind::Memset) g.memsets.push_back(r.memset);
        if (r.kind == trace::RecordKind::GraphLaunch) g.launches.push_back(r.graph_launch);
    }
    return g;
}

TEST_CASE("session: CUDA graphs node by node (default): every node of every launch, with graph and node ids",
          "[cupti][session][graph]") {
    Fixture f(nullptr);
    REQUIRE(f.result.ok);
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) == 0);
    std::vector<uint32_t> corrs;
    for (int i = 0; i < 50; ++i) corrs.push_back(SI(gprof_test_standin_graph_launch)(5, "_Z5nodesv", 3, 1, 1, 9, 0));
    corrs.push_back(SI(gprof_test_standin_graph_launch)(6, "_Z5nodesv", 2, 0, 0, 9, 1));  // the program's cuGraphLaunch
    auto g = graph_records(f.finish());
    CHECK(g.kernels.size() == 50 * 3 + 2);
    CHECK(g.memsets.size() == 50);
    CHECK(g.memcpys.size() == 50);
    CHECK(g.launches.empty());
    for (const auto& k : g.kernels) {
        CHECK((k.graph_id == 5 || k.graph_id == 6));
        CHECK(k.graph_node_id >> 32 == k.graph_id);
        CHECK(std::find(corrs.begin(), corrs.end(), k.correlation) != corrs.end());
        CHECK(k.stream == 9);
    }
    for (const auto& m : g.memsets) CHECK((m.graph_id == 5 && m.graph_node_id == (5ull << 32 | 1)));
    for (const auto& m : g.memcpys) CHECK((m.graph_id == 5 && m.graph_node_id == (5ull << 32 | 5)));
}

TEST_CASE("session: CUDA graphs per launch (graph_level): one GraphLaunch per launch, no node records",
          "[cupti][session][graph]") {
    SessionOptions o;
    o.graph_level = true;
    Fixture f(nullptr, o);
    REQUIRE(f.result.ok);
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) == 1);
    std::vector<uint32_t> corrs;
    for (int i = 0; i < 50; ++i) corrs.push_back(SI(gprof_test_standin_graph_launch)(5, "_Z5nodesv", 3, 1, 1, 9, 0));
    SI(gprof_test_standin_launch_kernel)("_Z7plain_kv", 9);  // work outside graphs is still recorded
    auto g = graph_records(f.finish());
    REQUIRE(g.launches.size() == 50);
    for (size_t i = 0; i < g.launches.size(); ++i) {
        CHECK(g.launches[i].graph_id == 5);
        CHECK(g.launches[i].correlation == corrs[i]);
        CHECK(g.launches[i].stream == 9);
        CHECK(g.launches[i].end > g.launches[i].start);
    }
    CHECK(g.kernels.size() == 1);
    CHECK(g.memsets.empty());
    CHECK(g.memcpys.empty());
}

TEST_CASE("session: memory records keep device, pinned, managed and pool memory apart", "[cupti][session][memory]") {
    Fixture f(nullptr);
    REQUIRE(f.result.ok);
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_MEMORY2) == 1);
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_MEMORY_POOL) == 1);
    const uint64_t MiB = 1ull << 20;
    uint32_t malloc_corr = SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 0,
                                                         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x1000000, 64 * MiB, 0);
    SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, 0, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                  0x2000000, 8 * MiB, 0);
    SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, 0,
                                  CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 0x3000000, 4 * MiB, 0);
    uint32_t async_corr = SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, 0,
                                                        CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x4000000, 40 * MiB, 1);
    SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, 1, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                  0x4000000, 40 * MiB, 1);
    uint32_t trim_corr = SI(gprof_test_standin_pool_trim)(0);
    SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, 1, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                  0x2000000, 8 * MiB, 0);
    std::vector<trace::Memory> mem;
    std::vector<trace::MemoryPool> pools;
    for (const auto& r : f.finish()) {
        if (r.kind == trace::RecordKind::Memory) mem.push_back(r.memory);
        if (r.kind == trace::RecordKind::MemoryPool) pools.push_back(r.memory_pool);
    }
    using trace::MemoryKind;
    using trace::MemoryOp;
    using trace::MemoryPoolType;
    REQUIRE(mem.size() == 6);
    CHECK((mem[0].op == MemoryOp::Allocation && mem[0].memory_kind == MemoryKind::Device));
    CHECK(mem[0].correlation == malloc_corr);
    CHECK((mem[0].pool_type == MemoryPoolType::None && mem[0].async == 0));
    CHECK((mem[1].op == MemoryOp::Allocation && mem[1].memory_kind == MemoryKind::Pinned && mem[1].bytes == 8 * MiB));
    CHECK((mem[2].op == MemoryOp::Allocation && mem[2].memory_kind == MemoryKind::Managed));
    // cudaMallocAsync: the pool appears (a MemoryPool record), then the allocation carved out of it.
    REQUIRE(pools.size() == 2);
    CHECK(pools[0].op == trace::MemoryPoolOp::Created);
    CHECK(pools[0].correlation == async_corr);
    CHECK((mem[3].op == MemoryOp::Allocation && mem[3].memory_kind == MemoryKind::Device && mem[3].async == 1));
    CHECK(mem[3].pool_type == MemoryPoolType::Local);
    CHECK(mem[3].pool_size == 64 * MiB);
    CHECK(mem[3].pool_used == 40 * MiB);
    CHECK(mem[3].pool_address == pools[0].address);
    CHECK((mem[4].op == MemoryOp::Release && mem[4].pool_used == 0 && mem[4].pool_size == 64 * MiB));
    // The trim gives the pool's reservation back: only visible in the MEMORY_POOL record.
    CHECK(pools[1].op == trace::MemoryPoolOp::Trimmed);
    CHECK(pools[1].correlation == trim_corr);
    CHECK(pools[1].size == 0);
    CHECK((mem[5].op == MemoryOp::Release && mem[5].memory_kind == MemoryKind::Pinned));
}

TEST_CASE("session: cudaDeviceReset flushes", "[cupti][session]") {
    Fixture f(nullptr);
    REQUIRE(f.result.ok);
    SI(gprof_test_standin_launch_kernel)("_Z1kv", 1);
    uint64_t before = SI(gprof_test_standin_flushes)(0);
    SI(gprof_test_standin_device_reset)();
    CHECK(SI(gprof_test_standin_flushes)(0) == before + 1);
    f.finish();
}

TEST_CASE("session: another profiler's subscriber gives a reason and a clean failure", "[cupti][session]") {
    Fixture f("multiple-subscribers");
    CHECK_FALSE(f.result.ok);
    CHECK(f.result.code == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    CHECK(f.result.reason.find("CUPTI unavailable") == 0);
    CHECK(f.result.reason.find("another profiler") != std::string::npos);
    CHECK(f.result.reason.find("torch.profiler") != std::string::npos);
    CHECK_FALSE(f.session->started());
    CHECK(SI(gprof_test_standin_subscribed)() == 0);
    for (CUpti_ActivityKind k : traced_activity_kinds(false)) CHECK(SI(gprof_test_standin_kind_enabled)(k) == 0);
    // A second start returns the same answer without trying again.
    StartResult again = f.session->start(*f.pipeline, SessionOptions{});
    CHECK(again.reason == f.result.reason);
    auto recs = f.finish();
    CHECK(count(recs, trace::RecordKind::Kernel) == 0);
}

TEST_CASE("session: no driver / no device / no privileges name the cause", "[cupti][session]") {
    struct Case {
        const char* script;
        CUptiResult code;
        const char* text;
    };
    const Case cases[] = {
        {"no-driver", CUPTI_ERROR_UNKNOWN, "no CUDA driver"},
        {"no-device", CUPTI_ERROR_INVALID_DEVICE, "does not support"},
        {"insufficient-privileges", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "insufficient privileges"},
    };
    for (const Case& c : cases) {
        Fixture f(c.script);
        INFO(c.script << ": " << f.result.reason);
        CHECK_FALSE(f.result.ok);
        CHECK(f.result.code == c.code);
        CHECK(f.result.reason.find(c.text) != std::string::npos);
        f.finish();
    }
}

TEST_CASE("session: no activity kind enables: failure, unsubscribed", "[cupti][session]") {
    Fixture f("enable-fails");
    CHECK_FALSE(f.result.ok);
    CHECK(f.result.code == CUPTI_ERROR_NOT_SUPPORTED);
    CHECK(f.result.reason.find("cuptiActivityEnable") != std::string::npos);
    CHECK(SI(gprof_test_standin_subscribed)() == 0);
    f.finish();
}

TEST_CASE("session: one kind failing is a warning in the trace, not fatal", "[cupti][session]") {
    Fixture f("kernel-enable-fails");
    REQUIRE(f.result.ok);
    SI(gprof_test_standin_launch_kernel)("_Z1kv", 1);
    trace::TraceReader* reader = nullptr;
    auto recs = f.finish(&reader);
    bool warned = false;
    for (const auto& r : recs)
        if (r.kind == trace::RecordKind::Status && r.status.level == trace::StatusLevel::Warning &&
            reader->string(r.status.message).find("CONCURRENT_KERNEL") != std::string_view::npos)
            warned = true;
    CHECK(warned);
    CHECK(count(recs, trace::RecordKind::Kernel) == 0);
    CHECK(count(recs, trace::RecordKind::ApiCall) == 1);
    delete reader;
}

TEST_CASE("session: without the timestamp callback, CUPTI's clock is shifted onto ours", "[cupti][session]") {
    Fixture f("no-timestamp-callback");
    REQUIRE(f.result.ok);
    uint64_t before = test_clock();
    SI(gprof_test_standin_launch_kernel)("_Z1kv", 1);
    uint64_t after = test_clock();
    trace::TraceReader* reader = nullptr;
    auto recs = f.finish(&reader);
    bool warned = false;
    for (const auto& r : recs) {
        if (r.kind == trace::RecordKind::Kernel) {
            // The stand-in stamps with CLOCK_REALTIME, like CUPTI; the trace holds monotonic times.
            CHECK(r.kernel.start + 1'000'000 >= before);
            CHECK(r.kernel.start <= after + 1'000'000);
        }
        if (r.kind == trace::RecordKind::Status &&
            reader->string(r.status.message).find("TimestampCallback") != std::string_view::npos)
            warned = true;
    }
    CHECK(warned);
    delete reader;
}

// The program's call into "CUDA" (the stand-in plays CUPTI and the runtime): a function of its own whose extent the
// test reads from this binary's symbol table.
extern "C" __attribute__((noinline)) uint32_t gprof_test_call_site_launch(decltype(&gprof_test_standin_launch_kernel) launch) {
    uint32_t corr = launch("_Z1kv", 1);
    asm volatile("" ::: "memory");  // keep the call a call, not a tail jump
    return corr;
}

namespace {

bool inside_function(uint64_t address, const void* function, const char* name) {
    auto extent = gprof::testing::elf_function("/proc/self/exe", name);
    REQUIRE(extent.has_value());
    auto start = reinterpret_cast<uint64_t>(function);
    return address > start && address <= start + extent->size;  // a return address: after the call instruction
}

}  // namespace

TEST_CASE("session: call sites at API exit, interned, starting at the program's call", "[cupti][session][call-sites]") {
    SessionOptions o;
    o.backtrace_depth = 8;
    Fixture f(nullptr, o);
    REQUIRE(f.result.ok);
    auto launch = SI(gprof_test_standin_launch_kernel);
    std::vector<uint32_t> corrs;
    for (int i = 0; i < 5; ++i) corrs.push_back(gprof_test_call_site_launch(launch));
    auto recs = f.finish();
    std::map<uint32_t, trace::Stack> stacks;
    std::vector<trace::CallSite> sites;
    for (const auto& r : recs) {
        if (r.kind == trace::RecordKind::Stack) {
            CHECK(stacks.count(r.stack.id) == 0);  // each stack once
            stacks[r.stack.id] = r.stack;
        }
        if (r.kind == trace::RecordKind::CallSite) {
            CHECK(stacks.count(r.call_site.stack) == 1);  // its Stack came first
            sites.push_back(r.call_site);
        }
        CHECK(r.kind != trace::RecordKind::Backtrace);
    }
    // One site per launch (the runtime's own cuKernelGetName gets none: the stand-in makes it from its own code).
    REQUIRE(sites.size() == corrs.size());
    for (size_t i = 0; i < sites.size(); ++i) {
        CHECK(sites[i].correlation == corrs[i]);
        CHECK(sites[i].tid != 0);
        CHECK(sites[i].py_stack == 0);
        CHECK(sites[i].stack == sites[0].stack);  // one call site, one stack
    }
    REQUIRE(stacks.size() == 1);
    const trace::Stack& st = stacks.begin()->second;
    CHECK(st.frame_count > 1);
    CHECK(st.frame_count <= 8);
    CHECK(inside_function(st.frames[0], reinterpret_cast<const void*>(&gprof_test_call_site_launch),
                          "gprof_test_call_site_launch"));
    CHECK(f.session->counters().call_sites == corrs.size());
    CHECK(f.session->call_sites().counters().stacks == 1);
}

TEST_CASE("session: after abandon_after_fork nothing reaches the old pipeline", "[cupti][session]") {
    Fixture f(nullptr);
    REQUIRE(f.result.ok);
    f.session->abandon_after_fork();
    CHECK_FALSE(f.session->flush(true));
    SI(gprof_test_standin_launch_kernel)("_Z1kv", 1);
    SI(gprof_test_standin_complete_buffer)();  // CUPTI still completes: the buffer goes back to the pool
    auto recs = f.finish();
    CHECK(count(recs, trace::RecordKind::Kernel) == 0);
}

// ---- issue 17: where API calls come from, and CUPTI's buffer attributes -------------------------------------------

TEST_CASE("session: API calls from callbacks carry our stamps and the activity records' correlation ids",
          "[cupti][session][api]") {
    for (bool keep : {false, true}) {
        INFO("nested_driver_calls = " << keep);
        SessionOptions o;
        o.api_records = ApiRecords::Callback;
        o.nested_driver_calls = keep;
        Fixture f(nullptr, o);
        REQUIRE(f.result.ok);
        // No RUNTIME/DRIVER activity records: the callbacks replace them; every other kind as usual.
        CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_RUNTIME) == 0);
        CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_DRIVER) == 0);
        CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1);
        CHECK(SI(gprof_test_standin_callback_enabled)(CUPTI_CB_DOMAIN_RUNTIME_API,
                                                      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == 1);
        CHECK(SI(gprof_test_standin_callback_enabled)(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) == 1);
        // The runtime's own driver calls are not paid for: their callbacks are off unless asked for.
        CHECK(SI(gprof_test_standin_callback_enabled)(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName) ==
              (keep ? 1 : 0));
        CHECK(SI(gprof_test_standin_callback_enabled)(CUPTI_CB_DOMAIN_RUNTIME_API,
                                                      CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020) == 0);
        const int n = 10000;  // more than one block of 8192 calls
        std::vector<uint32_t> corr;
        for (int i = 0; i < n; ++i) corr.push_back(SI(gprof_test_standin_launch_kernel)("_Z1kv", 3));
        SI(gprof_test_standin_driver_launch_kernel)("_Z6tritonv", 3);
        SI(gprof_test_standin_runtime_call)(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);  // filtered
        REQUIRE(f.session->set_recording(false));
        SI(gprof_test_standin_launch_kernel)("_Z1kv", 3);  // not recorded: recording is off
        trace::TraceReader* reader = nullptr;
        auto recs = f.finish(&reader);
        std::map<std::string, std::vector<trace::ApiCall>> by_name;
        for (const auto& r : recs)
            if (r.kind == trace::RecordKind::ApiCall) by_name[std::string(reader->string(r.api.name))].push_back(r.api);
        REQUIRE(by_name["cudaLaunchKernel"].size() == n);
        CHECK(by_name["cuLaunchKernel"].size() == 1);
        CHECK(by_name.count("cudaGetDevice") == 0);
        CHECK(by_name["cuKernelGetName"].size() == (keep ? size_t(n) : 0u));
        CHECK(by_name["cuLibraryLoadData"].size() == (keep ? 1u : 0u));
        const auto& launches = by_name["cudaLaunchKernel"];
        std::vector<uint64_t> kernel_corr;
        for (const auto& r : recs)
            if (r.kind == trace::RecordKind::Kernel) kernel_corr.push_back(r.kernel.correlation);
        REQUIRE(kernel_corr.size() == n + 1);
        for (int i = 0; i < n; ++i) {
            CHECK(launches[i].correlation == corr[i]);
            CHECK(kernel_corr[i] == corr[i]);
            CHECK(launches[i].domain == trace::ApiDomain::Runtime);
            CHECK(launches[i].result == 0);
            CHECK(launches[i].start > 0);
            CHECK(launches[i].end >= launches[i].start);
            CHECK(launches[i].tid == static_cast<uint64_t>(gettid()));
        }
        CHECK(f.session->counters().api_callbacks >= static_cast<uint64_t>(n + 1));
        delete reader;
    }
}

TEST_CASE("session: GPROF_CUDA_API=off records GPU work and no API call", "[cupti][session][api]") {
    SessionOptions o;
    o.api_records = ApiRecords::Off;
    Fixture f(nullptr, o);
    REQUIRE(f.result.ok);
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_RUNTIME) == 0);
    CHECK(SI(gprof_test_standin_kind_enabled)(CUPTI_ACTIVITY_KIND_DRIVER) == 0);
    CHECK(SI(gprof_test_standin_callback_enabled)(CUPTI_CB_DOMAIN_RUNTIME_API,
                                                  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == 0);
    for (int i = 0; i < 100; ++i) SI(gprof_test_standin_launch_kernel)("_Z1kv", 3);
    auto recs = f.finish();
    CHECK(count(recs, trace::RecordKind::Kernel) == 100);
    CHECK(count(recs, trace::RecordKind::ApiCall) == 0);
}

TEST_CASE("session: zeroed buffers are handed to CUPTI zeroed, so CUPTI never zeroes one itself",
          "[cupti][session][buffers]") {
    for (bool zeroed : {false, true}) {
        INFO("zeroed_buffers = " << zeroed);
        SessionOptions o;
        o.zeroed_buffers = zeroed;
        o.device_buffer_bytes = 16u << 20;
        o.device_buffers_preallocated = 5;
        Fixture f(nullptr, o);  // 64 KiB host buffers: many are reused in 20 000 launches
        REQUIRE(f.result.ok);
        uint64_t allocated_before = buffer_pool().stats().allocated;
        CHECK(SI(gprof_test_standin_attribute)(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) == (zeroed ? 1u : 0u));
        CHECK(SI(gprof_test_standin_attribute)(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE) == (16u << 20));
        CHECK(SI(gprof_test_standin_attribute)(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE) == 5u);
        const int n = 20000;
        for (int i = 0; i < n; ++i) {
            SI(gprof_test_standin_launch_kernel)("_Z1kv", 3);
            // Give the writer time to translate and give buffers back, so later requests reuse them.
            if (i % 2000 == 0) {
                f.session->flush(false);
                f.pipeline->flush(std::chrono::seconds(10));
            }
        }
        uint64_t requested = SI(gprof_test_standin_buffers_requested)();
        CHECK(requested > 10);
        CHECK(buffer_pool().stats().allocated - allocated_before < requested);  // some buffers were reused
        CHECK(SI(gprof_test_standin_dirty_buffers_supplied)() == 0);
        CHECK(SI(gprof_test_standin_buffers_zeroed_by_cupti)() == (zeroed ? 0u : requested));
        auto recs = f.finish();
        CHECK(count(recs, trace::RecordKind::Kernel) == n);
        CHECK(count(recs, trace::RecordKind::ApiCall) == n);
    }
}

TEST_CASE("call categories by CUPTI's names: kernel, memory, sync, other", "[cupti][call-sites]") {
    using gprof::env::CallCategory;
    for (const char* n : {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060", "cudaGraphLaunch_v10000",
                          "cudaLaunchCooperativeKernel_v9000", "__cudaLaunchKernel_v13000", "cuLaunchKernel",
                          "cuLaunchKernelEx", "cuGraphLaunch_ptsz", "cuLaunchGrid"})
        CHECK(classify_call(n) == CallCategory::Kernel);
    for (const char* n : {"cudaMemcpy_v3020", "cudaMemcpyAsync_ptsz_v7000", "cudaMemset2DAsync_v3020",
                          "cudaMalloc_v3020", "cudaMallocHost_v3020", "cudaMallocAsync_v11020", "cudaFree_v3020",
                          "cudaFreeHost_v3020", "cudaFreeAsync_v11020", "cudaHostAlloc_v3020", "cuMemAlloc_v2",
                          "cuMemFree_v2", "cuMemcpyHtoDAsync_v2", "cuMemsetD32_v2", "cuMemHostAlloc",
                          "cuMemAllocManaged", "cuMemFreeAsync", "cudaMemcpyBatchAsync_v13000"})
        CHECK(classify_call(n) == CallCategory::Memory);
    for (const char* n : {"cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_v3020", "cudaEventSynchronize_v3020",
                          "cudaEventQuery_v3020", "cudaStreamQuery_v3020", "cudaStreamWaitEvent_v3020",
                          "cuCtxSynchronize", "cuStreamWaitValue32_v2", "cuEventQuery"})
        CHECK(classify_call(n) == CallCategory::Sync);
    // Graph construction names copies it only describes; a host function launch runs no kernel; cuBinaryFree frees
    // no memory of the program's.
    for (const char* n : {"cudaGraphAddMemcpyNode_v10000", "cuGraphExecMemsetNodeSetParams", "cudaLaunchHostFunc_v10000",
                          "cuLaunchHostFunc", "cuBinaryFree", "cudaGetDevice_v3020", "cudaMemPrefetchAsync_v8000",
                          "cudaEventRecord_v3020", "cuCtxGetCurrent", "cudaStreamCreate_v3020"})
        CHECK(classify_call(n) == CallCategory::Other);
}
