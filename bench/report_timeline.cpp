// Timeline export speed and size on one core, from a loaded run model of a generated trace (per iteration: a
// launch + kernel, a memcpy call + copy, an NVTX range: 5 records, flows on both GPU ops). Measured apart: building
// the timeline model, encoding it as Chrome JSON (target >= 300 MB/s) and as Perfetto protobuf, and the whole
// export through the public API with the analysis track.
//
//   build/bench/report_timeline                 GPROF_BENCH_RECORDS=N (default 1.25 M) changes the size;
//   GPROF_BENCH_PFTRACE=path also writes the Perfetto file there (to check it: tests/report/check_perfetto.py
//   --schema-only path).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "timeline/encoders.h"
#include "timeline/model.h"
#include "timeline/timeline.h"
#include "record_builders.h"
#include "generated_trace.h"
#include "trace_fixture.h"

namespace {

using namespace gprof;

uint64_t record_count() { return bench::bench_record_count(1'250'000ull); }

const report::Run& bench_run() {
    static report::Run run = [] {
        testing::TempDir dir;
        std::string path = dir.file("timeline.gprof");
        const uint64_t iterations = record_count() / 5;
        testing::write_trace(path, [&](trace::TraceWriter& w) {
            using namespace trace;
            bench::add_bench_gpu(w);
            StringId launch = w.intern("cudaLaunchKernel"), copy = w.intern("cudaMemcpyAsync"), step = w.intern("step");
            StringId kernel = w.intern("_Z6kernelPfi");
            uint64_t t = 1'000'000'000;
            uint32_t corr = 1;
            for (uint64_t i = 0; i < iterations; ++i) {
                w.add(testing::api_call(1, t, t + 3000, corr, launch));
                Kernel k = testing::kernel_op(t + 4000, t + 9000, corr++, kernel);
                k.stream = 7;
                k.grid_x = k.grid_y = k.grid_z = 1;
                k.block_x = k.block_y = k.block_z = 128;
                w.add(k);
                w.add(testing::api_call(1, t + 10000, t + 12000, corr, copy));
                Memcpy m = testing::memcpy_op(t + 13000, t + 15000, 4096, corr++, MemcpyKind::HtoD);
                m.stream = 7;
                w.add(m);
                w.add(testing::nvtx_range(1, t, t + 16000, step));
                t += 20000;
            }
        });
        return report::load_run({path});
    }();
    return run;
}

const report::timeline::TimelineModel& bench_model() {
    static report::timeline::TimelineModel m = [] {
        report::timeline::ModelOptions o;
        o.analysis_track = false;
        return report::timeline::build_timeline_model(bench_run(), o);
    }();
    return m;
}

void BM_timeline_model(benchmark::State& state) {
    const report::Run& run = bench_run();
    report::timeline::ModelOptions o;
    o.analysis_track = false;
    for (auto _ : state) {
        auto m = report::timeline::build_timeline_model(run, o);
        state.counters["slices"] = static_cast<double>(m.slices.size());
    }
}
BENCHMARK(BM_timeline_model)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// state.range(0): 0 = Chrome JSON, 1 = Perfetto protobuf. Counters: bytes of output, and per slice.
void BM_timeline_encode(benchmark::State& state) {
    const auto& m = bench_model();
    uint64_t bytes = 0, size = 0;
    std::string keep;
    const char* keep_path = state.range(0) ? std::getenv("GPROF_BENCH_PFTRACE") : nullptr;
    for (auto _ : state) {
        size = 0;
        keep.clear();
        auto sink = [&](const char* d, size_t n) {
            size += n;
            if (keep_path) keep.append(d, n);
        };
        auto st = state.range(0) ? report::timeline::write_perfetto(m, sink) : report::timeline::write_chrome_json(m, sink);
        bytes += st.bytes;
    }
    if (keep_path)
        if (FILE* f = std::fopen(keep_path, "wb")) {
            std::fwrite(keep.data(), 1, keep.size(), f);
            std::fclose(f);
        }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["output_MB"] = static_cast<double>(size) / 1e6;
    state.counters["bytes_per_slice"] = static_cast<double>(size) / static_cast<double>(m.slices.size());
}
BENCHMARK(BM_timeline_encode)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// The whole export (model + encoding) with the analysis track (analyze_run inside): state.range(0) as above.
void BM_timeline_export(benchmark::State& state) {
    const report::Run& run = bench_run();
    std::string out;
    uint64_t bytes = 0;
    report::TimelineOptions o;
    o.format = state.range(0) ? report::TimelineFormat::Perfetto : report::TimelineFormat::ChromeJson;
    for (auto _ : state) {
        auto st = report::timeline_to_string(run, out, o);
        bytes += st.encoded_bytes;
        state.counters["events"] = static_cast<double>(st.events);
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_timeline_export)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
