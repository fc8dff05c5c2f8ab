// Translate + encode + write cost per CUPTI activity record, on the writer thread's path: a completed buffer
// walked with the real libcupti's cuptiActivityGetNextRecord, turned into records.h records and encoded by
// TraceWriter into chunks written to /dev/null. The mix is what a training step looks like: mostly kernels
// and the runtime calls launching them, some driver calls, memcpys, syncs and memsets.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cupti/translate.h"
#include "cupti_loader/loader.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::collector::cupti;

namespace {

const CuptiApi* api() {
    static LoadResult r = [] {
        LoadResult x = load_cupti_file("/usr/local/cuda/lib64/libcupti.so.13", "bench");
        if (!x.api) std::fprintf(stderr, "bench: %s\n", x.reason.c_str());
        return x;
    }();
    return r.api;
}

template <class T>
void put(std::vector<uint64_t>& buf, size_t& used, const T& rec) {
    size_t words = sizeof(T) / 8;
    if (buf.size() < (used + sizeof(T)) / 8) buf.resize((used + sizeof(T)) / 8);
    std::memcpy(reinterpret_cast<uint8_t*>(buf.data()) + used, &rec, sizeof(T));
    used += words * 8;
}

// `records` activity records: per 10, 4 kernels, 4 runtime API calls, 1 memcpy, and alternately a driver call
// or a sync/memset. 64 distinct kernel names, as a model with a few dozen kernels would have.
struct Mix {
    std::vector<uint64_t> buffer;
    size_t used = 0;
    size_t records = 0;
    std::vector<std::string> names;
};

Mix make_mix(size_t records) {
    Mix m;
    for (int i = 0; i < 64; ++i)
        m.names.push_back("_ZN7cutlass6KernelINS_4gemm6kernel4GemmILi" + std::to_string(i) + "EEEEvNT_6ParamsE");
    uint64_t t = 1'700'000'000'000'000'000ull;
    uint32_t corr = 1;
    const uint32_t runtime_cbids[] = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020};
    for (size_t i = 0; m.records < records; ++i) {
        for (int j = 0; j < 4 && m.records < records; ++j, ++m.records) {
            CUpti_ActivityAPI a{};
            a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
            a.cbid = j == 0 ? runtime_cbids[0] : runtime_cbids[(i + j) % 4];
            a.start = t += 1200;
            a.end = t += 3400;
            a.threadId = 4242;
            a.correlationId = ++corr;
            put(m.buffer, m.used, a);
        }
        for (int j = 0; j < 4 && m.records < records; ++j, ++m.records) {
            CUpti_ActivityKernel10 k{};
            k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k.start = t += 800;
            k.end = t += 25000;
            k.deviceId = 0;
            k.contextId = 1;
            k.streamId = 7;
            k.gridX = 1024; k.gridY = 1; k.gridZ = 1;
            k.blockX = 256; k.blockY = 1; k.blockZ = 1;
            k.registersPerThread = 64;
            k.staticSharedMemory = 16384;
            k.correlationId = corr - 3 + j;
            k.name = m.names[(i * 4 + j) % m.names.size()].c_str();
            put(m.buffer, m.used, k);
        }
        if (m.records < records) {
            CUpti_ActivityMemcpy6 c{};
            c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
            c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
            c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
            c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
            c.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
            c.bytes = 1 << 20;
            c.start = t += 500;
            c.end = t += 90000;
            c.streamId = 8;
            c.correlationId = ++corr;
            put(m.buffer, m.used, c);
            ++m.records;
        }
        if (m.records < records) {
            if (i % 2 == 0) {
                CUpti_ActivityAPI a{};
                a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
                a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
                a.start = t += 300;
                a.end = t += 900;
                a.threadId = 4242;
                a.correlationId = ++corr;
                put(m.buffer, m.used, a);
            } else if (i % 4 == 1) {
                CUpti_ActivitySynchronization2 s{};
                s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
                s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
                s.start = t += 100;
                s.end = t += 40000;
                s.streamId = 7;
                s.correlationId = ++corr;
                put(m.buffer, m.used, s);
            } else {
                CUpti_ActivityMemset4 s{};
                s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
                s.bytes = 4096;
                s.start = t += 100;
                s.end = t += 2000;
                s.streamId = 7;
                s.correlationId = ++corr;
                put(m.buffer, m.used, s);
            }
            ++m.records;
        }
    }
    return m;
}

void BM_TranslateEncodeWrite(benchmark::State& state) {
    const CuptiApi* cupti = api();
    if (!cupti) {
        state.SkipWithError("no libcupti.so.13");
        return;
    }
    // One 8 MiB CUPTI buffer holds ~60k records of this mix; use a buffer of that order.
    Mix mix = make_mix(static_cast<size_t>(state.range(0)));
    int fd = ::open("/dev/null", O_WRONLY | O_APPEND);
    trace::TraceWriter writer;
    writer.open(fd, gprof::testing::test_header());
    Translator translator(cupti);
    size_t written = 0;
    for (auto _ : state) {
        written += translator.translate(writer, reinterpret_cast<const uint8_t*>(mix.buffer.data()), mix.used);
    }
    writer.finish(1);
    if (written != mix.records * static_cast<size_t>(state.iterations())) state.SkipWithError("records lost");
    state.SetItemsProcessed(static_cast<int64_t>(mix.records) * state.iterations());
    state.counters["ns_per_record"] = benchmark::Counter(
        static_cast<double>(mix.records) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["buffer_bytes"] = static_cast<double>(mix.used);
}
BENCHMARK(BM_TranslateEncodeWrite)->Arg(1000)->Arg(40000)->Unit(benchmark::kMicrosecond);

// The walk alone (cuptiActivityGetNextRecord), to see what part of the cost is CUPTI's.
void BM_WalkOnly(benchmark::State& state) {
    const CuptiApi* cupti = api();
    if (!cupti) {
        state.SkipWithError("no libcupti.so.13");
        return;
    }
    Mix mix = make_mix(static_cast<size_t>(state.range(0)));
    for (auto _ : state) {
        CUpti_Activity* r = nullptr;
        size_t n = 0;
        while (cupti->ActivityGetNextRecord(reinterpret_cast<uint8_t*>(mix.buffer.data()), mix.used, &r) ==
               CUPTI_SUCCESS)
            ++n;
        benchmark::DoNotOptimize(n);
    }
    state.counters["ns_per_record"] = benchmark::Counter(
        static_cast<double>(mix.records) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WalkOnly)->Arg(40000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
