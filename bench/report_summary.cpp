// gprof-report summary speed and memory on a generated 10 M-record trace, against the time `cat` needs to read
// the same file (read(2) in 128 KiB blocks, warm cache). Target: summary <= 2x cat, <= 1 GB peak RSS.
//
//   build-*/bench/report_summary [--benchmark_filter=...]     GPROF_BENCH_RECORDS=N to change the size
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "model/aggregate.h"
#include "reports/reports.h"
#include "record_builders.h"
#include "generated_trace.h"
#include "trace_fixture.h"

namespace {

using namespace gprof;

uint64_t record_count() { return bench::bench_record_count(10'000'000ull); }

// A realistic mix: per iteration a launch + kernel, a memcpy call + copy, and every 16th an NVTX range and a sync.
void fill(trace::TraceWriter& w, uint64_t records) {
    using namespace trace;
    using namespace testing;
    bench::add_bench_gpu(w);
    StringId launch = w.intern("cudaLaunchKernel"), copy = w.intern("cudaMemcpyAsync"),
             sync = w.intern("cudaStreamSynchronize"), step = w.intern("step");
    StringId kernels[8];
    for (int i = 0; i < 8; ++i) kernels[i] = w.intern(("_Z7kernel" + std::to_string(i) + "Pfi").c_str());
    uint64_t t = 1'000'000'000, written = 0;
    uint32_t corr = 1;
    for (uint64_t i = 0; written < records; ++i) {
        w.add(api_call(1, t, t + 3000 + i % 700, corr, launch));
        Kernel k = kernel_op(t + 4000, t + 9000 + (i * 37) % 5000, corr++, kernels[i % 8]);
        k.stream = 7;
        k.grid_x = 128;
        k.block_x = 256;
        w.add(k);
        w.add(api_call(1, t + 10000, t + 12000, corr, copy));
        Memcpy m = memcpy_op(t + 15000, t + 17000 + i % 300, 65536, corr++, i % 2 ? MemcpyKind::HtoD : MemcpyKind::DtoH);
        m.stream = 7;
        w.add(m);
        written += 4;
        if (i % 16 == 15) {
            w.add(api_call(1, t + 18000, t + 19000, corr++, sync));
            w.add(nvtx_range(1, t - 15 * 20000, t + 20000, step));
            written += 2;
        }
        t += 20000;
    }
}

const std::string& trace_path() {
    static std::string path = [] {
        auto dir = std::filesystem::temp_directory_path() / "gprof-bench";
        std::filesystem::create_directories(dir);
        auto p = (dir / ("summary." + std::to_string(record_count()) + ".gprof")).string();
        if (!std::filesystem::exists(p)) testing::write_trace(p, [](trace::TraceWriter& w) { fill(w, record_count()); });
        return p;
    }();
    return path;
}

void BM_cat(benchmark::State& state) {
    const std::string& path = trace_path();
    std::vector<char> buf(128 * 1024);
    uint64_t bytes = 0;
    for (auto _ : state) {
        int fd = ::open(path.c_str(), O_RDONLY);
        ssize_t n;
        while ((n = ::read(fd, buf.data(), buf.size())) > 0) bytes += static_cast<uint64_t>(n);
        ::close(fd);
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
}
BENCHMARK(BM_cat)->Unit(benchmark::kMillisecond)->UseRealTime();

// Arg: decode/aggregate threads (0: the default, the machine's cores up to 4). CPU time is the whole process's
// (every thread), not the benchmark thread's.
void BM_summary(benchmark::State& state) {
    const std::string& path = trace_path();
    uint64_t bytes = 0, records = 0;
    for (auto _ : state) {
        report::AggregateOptions o;
        o.threads = static_cast<unsigned>(state.range(0));
        auto agg = report::aggregate_run({path}, o);
        std::ostringstream out;
        report::print_summary_text(agg, true, true, 0, out);
        benchmark::DoNotOptimize(out.str().size());
        bytes += std::filesystem::file_size(path);
        records = agg.records;
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["records"] = static_cast<double>(records);
    struct rusage ru {};
    ::getrusage(RUSAGE_SELF, &ru);
    state.counters["peak_rss_MB"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
}
// Best of 5 (the machine is shared: the minimum is the figure least disturbed by others' work).
BENCHMARK(BM_summary)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(1)
    ->Repetitions(5)
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
    ->ReportAggregatesOnly(true);

// The reader alone: the floor the summary cannot beat.
void BM_read_only(benchmark::State& state) {
    const std::string& path = trace_path();
    for (auto _ : state) {
        trace::TraceReader r(path);
        trace::Record rec;
        uint64_t n = 0;
        while (r.next(rec)) ++n;
        benchmark::DoNotOptimize(n);
    }
}
BENCHMARK(BM_read_only)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
