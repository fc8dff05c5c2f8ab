// report.html: time to make the page of a generated run, and the page's size, which must not grow with the number
// of events (aggregates only; target: a few MB at most for 10^6 records). The whole `gprof-report html` path from
// the trace file: aggregate, model, analysis, figures, page.
//
// Per step (11 records): an NVTX step range with forward and backward ranges inside it, two launches + kernels
// (8 kernel names, long templated ones among them), a memcpy call + copy, and an allocation or release.
//
//   build/bench/report_html          GPROF_BENCH_RECORDS=N (default 10^6) changes the size
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdlib>
#include <string>

#include "generated_trace.h"
#include "html/html.h"
#include "trace_fixture.h"

namespace {

using namespace gprof;

uint64_t record_count() { return bench::bench_record_count(1'000'000ull); }

const testing::TempDir& bench_dir() {
    static testing::TempDir dir;
    static bool written = [] {
        testing::write_trace(dir.file("app.1.gprof"), [](trace::TraceWriter& w) {
            using namespace trace;
            bench::add_bench_gpu(w, 80ull << 30);
            StringId launch = w.intern("cudaLaunchKernel"), copy = w.intern("cudaMemcpyAsync");
            StringId step = w.intern("step"), fwd = w.intern("forward"), bwd = w.intern("backward");
            StringId kernels[8];
            for (int i = 0; i < 8; ++i)
                kernels[i] = w.intern(("_ZN2at6native25multi_tensor_apply_kernelINS0_18TensorListMetadataILi" +
                                       std::to_string(i) + "EEEEEvT_").c_str());
            const uint64_t steps = record_count() / 11;
            uint64_t t = 1'000'000'000;
            uint32_t corr = 1;
            for (uint64_t s = 0; s < steps; ++s) {
                Nvtx n;
                n.tid = n.end_tid = 1;
                n.start = t;
                n.end = t + 60'000 + (s % 17) * 1000;
                n.name = step;
                w.add(n);
                n.depth = 1;
                n.start = t + 100;
                n.end = t + 25'000;
                n.name = fwd;
                w.add(n);
                n.start = t + 25'100;
                n.end = t + 50'000;
                n.name = bwd;
                w.add(n);
                for (int k = 0; k < 2; ++k) {
                    ApiCall a;
                    a.tid = 1;
                    a.start = t + 1000 + k * 25'000;
                    a.end = a.start + 4000;
                    a.correlation = corr;
                    a.name = launch;
                    w.add(a);
                    Kernel kr;
                    kr.start = a.end + 1000;
                    kr.end = kr.start + 8000 + (s * 37) % 5000;
                    kr.correlation = corr++;
                    kr.stream = 7;
                    kr.grid_x = 128;
                    kr.grid_y = kr.grid_z = 1;
                    kr.block_x = 256;
                    kr.block_y = kr.block_z = 1;
                    kr.name = kernels[(s * 2 + static_cast<uint64_t>(k)) % 8];
                    w.add(kr);
                }
                ApiCall a;
                a.tid = 1;
                a.start = t + 52'000;
                a.end = t + 54'000;
                a.correlation = corr;
                a.name = copy;
                w.add(a);
                Memcpy m;
                m.start = t + 55'000;
                m.end = t + 57'000;
                m.bytes = 1 << 20;
                m.correlation = corr++;
                m.copy_kind = s % 2 ? MemcpyKind::HtoD : MemcpyKind::DtoH;
                m.stream = 7;
                w.add(m);
                Memory mem;
                mem.timestamp = t + 58'000;
                mem.address = 0x7f0000000000ull + (s / 2) * 0x100000;
                mem.bytes = 1 << 20;
                mem.op = s % 2 ? MemoryOp::Release : MemoryOp::Allocation;
                mem.memory_kind = MemoryKind::Device;
                w.add(mem);
                t += 80'000;
            }
        });
        return true;
    }();
    (void)written;
    return dir;
}

void BM_report_html(benchmark::State& state) {
    const auto& dir = bench_dir();
    size_t size = 0;
    for (auto _ : state) {
        std::string page = report::html::render_run_page({dir.path()}, {});
        size = page.size();
        benchmark::DoNotOptimize(page.data());
    }
    struct rusage ru {};
    ::getrusage(RUSAGE_SELF, &ru);
    state.counters["records"] = static_cast<double>(record_count() / 11 * 11);
    state.counters["page_kB"] = static_cast<double>(size) / 1e3;
    state.counters["peak_rss_MB"] = static_cast<double>(ru.ru_maxrss) / 1e3;
}
BENCHMARK(BM_report_html)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
