// Chrome-trace export throughput: MB of JSON written per second on one core (target >= 300 MB/s), from a loaded
// run model of a generated trace (kernels, memcpys, API calls with flows, NVTX ranges).
#include <benchmark/benchmark.h>

#include <string>

#include "timeline/timeline.h"
#include "trace_fixture.h"

namespace {

using namespace gprof;

const report::Run& bench_run() {
    static report::Run run = [] {
        testing::TempDir dir;
        std::string path = dir.file("timeline.gprof");
        testing::write_trace(path, [](trace::TraceWriter& w) {
            using namespace trace;
            w.add(Thread{1, w.intern("main")});
            StringId launch = w.intern("cudaLaunchKernel"), copy = w.intern("cudaMemcpyAsync"), step = w.intern("step");
            StringId kernel = w.intern("_Z6kernelPfi");
            uint64_t t = 1'000'000'000;
            uint32_t corr = 1;
            for (int i = 0; i < 250'000; ++i) {
                ApiCall a;
                a.tid = 1;
                a.start = t;
                a.end = t + 3000;
                a.correlation = corr;
                a.name = launch;
                w.add(a);
                Kernel k;
                k.start = t + 4000;
                k.end = t + 9000;
                k.correlation = corr++;
                k.stream = 7;
                k.grid_x = k.grid_y = k.grid_z = 1;
                k.block_x = k.block_y = k.block_z = 128;
                k.name = kernel;
                w.add(k);
                a.start = t + 10000;
                a.end = t + 12000;
                a.correlation = corr;
                a.name = copy;
                w.add(a);
                Memcpy m;
                m.start = t + 13000;
                m.end = t + 15000;
                m.bytes = 4096;
                m.correlation = corr++;
                m.copy_kind = MemcpyKind::HtoD;
                m.stream = 7;
                w.add(m);
                Nvtx n;
                n.tid = 1;
                n.start = t;
                n.end = t + 16000;
                n.name = step;
                w.add(n);
                t += 20000;
            }
        });
        return report::load_run({path});
    }();
    return run;
}

// state.range(0): 1 = with the analysis track (analyze_run inside), 0 = the export alone.
void BM_timeline_json(benchmark::State& state) {
    const report::Run& run = bench_run();
    std::string out;
    uint64_t bytes = 0;
    report::TimelineOptions o;
    o.analysis_track = state.range(0) != 0;
    for (auto _ : state) {
        auto st = report::timeline_to_string(run, out, o);
        bytes += st.encoded_bytes;
        state.counters["events"] = static_cast<double>(st.events);
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_timeline_json)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_timeline_json)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
