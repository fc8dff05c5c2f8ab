// Trace writer and reader throughput on a realistic record mix (goal: >= 20 M records/s each, one core),
// and the encoded size per record. Run: build/bench/format_codec
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "trace_fixture.h"

using namespace gprof::trace;

namespace {

// A PyTorch-like mix per 10 records: 4 runtime API calls, 4 kernels, 1 memcpy, 1 NVTX range.
struct Mix {
    StringId kernel_names[6];
    StringId api_names[4];
    StringId nvtx_name;
    uint64_t t = 1'700'000'000'000'000'000ull;
    uint32_t corr = 1;
    uint64_t i = 0;

    explicit Mix(TraceWriter& w) {
        const char* kn[] = {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_",
                            "ampere_sgemm_128x64_tn", "_ZN2at6native13reduce_kernelILi512ELi1EEEvT1_",
                            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
                            "_Z6vecAddPKfS0_Pfi", "_ZN2at6native18elementwise_kernelILi128ELi2EEEviT1_"};
        for (int k = 0; k < 6; ++k) kernel_names[k] = w.intern(kn[k]);
        const char* an[] = {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaEventRecord"};
        for (int k = 0; k < 4; ++k) api_names[k] = w.intern(an[k]);
        nvtx_name = w.intern("forward");
    }

    void add_ten(TraceWriter& w) {
        for (int k = 0; k < 4; ++k) {
            ApiCall a;
            a.start = t;
            a.end = t + 2'500 + (i * 31) % 3'000;
            a.tid = 4711;
            a.correlation = corr + k;
            a.cbid = 211;
            a.name = api_names[(i + k) & 3];
            w.add(a);
            Kernel kr;
            kr.start = t + 6'000;
            kr.end = kr.start + 3'000 + (i * 97) % 80'000;
            kr.device = 0;
            kr.context = 1;
            kr.stream = 7;
            kr.correlation = corr + k;
            kr.grid_x = 132 * (1 + (i & 7));
            kr.grid_y = kr.grid_z = 1;
            kr.block_x = 256;
            kr.block_y = kr.block_z = 1;
            kr.registers_per_thread = 64;
            kr.static_shared_bytes = (i & 1) ? 0 : 49152;
            kr.name = kernel_names[(i + k) % 6];
            w.add(kr);
            t += 4'000;
            ++i;
        }
        Memcpy m;
        m.start = t;
        m.end = t + 10'000;
        m.bytes = 4u << 20;
        m.stream = 7;
        m.correlation = corr + 4;
        m.copy_kind = MemcpyKind::HtoD;
        m.src_kind = MemoryKind::Pinned;
        m.dst_kind = MemoryKind::Device;
        w.add(m);
        Nvtx n;
        n.start = t - 16'000;
        n.end = t + 12'000;
        n.tid = 4711;
        n.end_tid = 4711;
        n.name = nvtx_name;
        w.add(n);
        corr += 5;
    }
};

void BM_WriterMix(benchmark::State& state) {
    int fd = ::open("/dev/null", O_WRONLY | O_APPEND);
    TraceWriter w;
    w.open(fd, gprof::testing::test_header());
    Mix mix(w);
    for (auto _ : state) mix.add_ten(w);
    w.flush();
    state.SetItemsProcessed(state.iterations() * 10);
    state.counters["bytes_per_record"] =
        benchmark::Counter(double(w.bytes_written()) / double(state.iterations() * 10));
}
BENCHMARK(BM_WriterMix);

std::string make_trace(size_t records) {
    static std::string path;
    if (!path.empty()) return path;
    path = "/tmp/gprof-bench-format.gprof";
    std::remove(path.c_str());
    gprof::testing::write_trace(path, [&](TraceWriter& w) {
        Mix mix(w);
        for (size_t k = 0; k < records / 10; ++k) mix.add_ten(w);
    });
    return path;
}

void BM_ReaderMix(benchmark::State& state) {
    auto path = make_trace(5'000'000);
    uint64_t records = 0, bytes = 0;
    for (auto _ : state) {
        TraceReader reader(path);
        Record r;
        uint64_t n = 0, sum = 0;
        while (reader.next(r)) {
            ++n;
            sum += r.kind == RecordKind::Kernel ? r.kernel.end - r.kernel.start : 0;
        }
        benchmark::DoNotOptimize(sum);
        records += n;
        bytes += reader.stats().file_bytes;
    }
    state.SetItemsProcessed(static_cast<int64_t>(records));
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ReaderMix)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
