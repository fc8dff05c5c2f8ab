// gprof-report summary speed and memory on two generated traces, against the time `cat` needs to read the same
// file (read(2) in 128 KiB blocks, warm cache):
//   - the PyTorch-like mix (BM_*/0/, "mixed"): 10 M records, a launch + kernel and a memcpy call + copy per step, an NVTX
//     range every 16 steps;
//   - the NVTX-heavy mix (BM_*/1/, "nvtx"): 9.6 M ranges, 6 threads each making 800 000 nested push/push/pop/pop
//     with a handful of names, as PyTorch's emit_nvtx() (a range per op) or a decorator on every function makes them;
//   - the same with CUDA work (BM_*/2/, "nvtx+cuda"): a kernel launch in each inner range, 9.6 M records in all.
//
// BM_summary is the aggregate's tables alone; BM_summary_table the table summary as printed, with its Analysis.
//
//   build-*/bench/report_summary [--benchmark_filter=...]     GPROF_BENCH_RECORDS=N, GPROF_BENCH_NVTX_RECORDS=N
//                                                              to change the sizes
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "end_of_run/end_of_run.h"
#include "model/aggregate.h"
#include "reports/reports.h"
#include "record_builders.h"
#include "generated_trace.h"
#include "trace_fixture.h"

namespace {

using namespace gprof;

uint64_t record_count() { return bench::bench_record_count(10'000'000ull); }
uint64_t nvtx_record_count() {
    const char* n = std::getenv("GPROF_BENCH_NVTX_RECORDS");
    return n ? std::strtoull(n, nullptr, 10) : 9'600'000ull;
}

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

// The NVTX-heavy mix: 6 threads, each a loop of an op range with a nested one inside (push, push, pop, pop), names
// from a handful, no CUDA work. The collector writes a range when it closes (the inner one first) and drains each
// thread's stream by blocks, so the file holds runs of one thread's ranges (here 4096 iterations, 8192 ranges)
// interleaved with the other threads' runs, as in a real trace of such a program.
// What both NVTX-heavy mixes share: the GPU, the op names (outer) and the names nested in them (inner), the threads
// and each thread's clock.
struct NvtxHeavySetup {
    static constexpr int kThreads = 6;
    static constexpr uint64_t kRun = 4096;  // iterations of one thread between the others' (a drained block)
    trace::StringId outer[4], inner[4];
    uint64_t tids[kThreads];
    trace::Timestamp clock[kThreads];

    explicit NvtxHeavySetup(trace::TraceWriter& w) {
        bench::add_bench_gpu(w);
        const char* outer_names[] = {"aten::linear", "aten::conv2d", "aten::layer_norm", "aten::softmax"};
        const char* inner_names[] = {"aten::addmm", "aten::mul", "aten::add", "aten::copy_"};
        for (int i = 0; i < 4; ++i) {
            outer[i] = w.intern(outer_names[i]);
            inner[i] = w.intern(inner_names[i]);
        }
        for (int t = 0; t < kThreads; ++t) {
            tids[t] = 4242 + static_cast<uint64_t>(t);
            clock[t] = 1'000'000'000 + static_cast<trace::Timestamp>(t) * 37;
            w.add(trace::Thread{tids[t], w.intern(("worker-" + std::to_string(t)).c_str())});
        }
    }
};

void fill_nvtx(trace::TraceWriter& w, uint64_t records) {
    using namespace trace;
    using namespace testing;
    NvtxHeavySetup n(w);
    constexpr int kThreads = NvtxHeavySetup::kThreads;
    constexpr uint64_t kRun = NvtxHeavySetup::kRun;
    auto& [outer, inner, tids, clock] = n;
    const uint64_t iterations = records / 2 / kThreads;  // per thread
    for (uint64_t done = 0; done < iterations; done += kRun)
        for (int t = 0; t < kThreads; ++t)
            for (uint64_t i = done; i < std::min(iterations, done + kRun); ++i) {
                Timestamp s = clock[t];
                Timestamp is = s + 40 + i % 13, ie = is + 60 + (i * 7) % 50, e = ie + 35 + i % 11;
                Nvtx in = nvtx_range(tids[t], is, ie, inner[(i + t) % 4]);
                in.depth = 1;
                w.add(in);
                w.add(nvtx_range(tids[t], s, e, outer[i % 4]));
                clock[t] = e + 20 + i % 7;
            }
}

// The NVTX-heavy mix with CUDA work, as emit_nvtx() gives it in a real training step: each inner range holds a
// kernel launch, whose API call and kernel come from CUPTI's buffer after the run of ranges they fall in (the op
// just before its call, as in the real H100 traces). Per iteration 2 ranges, a call and a kernel.
void fill_nvtx_cuda(trace::TraceWriter& w, uint64_t records) {
    using namespace trace;
    using namespace testing;
    NvtxHeavySetup n(w);
    constexpr int kThreads = NvtxHeavySetup::kThreads;
    constexpr uint64_t kRun = NvtxHeavySetup::kRun;
    auto& [outer, inner, tids, clock] = n;
    StringId kernels[4], launch = w.intern("cudaLaunchKernel");
    for (int i = 0; i < 4; ++i) kernels[i] = w.intern(("_Z7kernel" + std::to_string(i) + "Pfi").c_str());
    uint32_t corr = 1;
    std::vector<Record> cuda;
    const uint64_t iterations = records / 4 / kThreads;  // per thread
    for (uint64_t done = 0; done < iterations; done += kRun) {
        for (int t = 0; t < kThreads; ++t) {
            for (uint64_t i = done; i < std::min(iterations, done + kRun); ++i) {
                Timestamp s = clock[t];
                Timestamp is = s + 400 + i % 13, ie = is + 3000 + (i * 7) % 500, e = ie + 350 + i % 11;
                Nvtx in = nvtx_range(tids[t], is, ie, inner[(i + t) % 4]);
                in.depth = 1;
                w.add(in);
                w.add(nvtx_range(tids[t], s, e, outer[i % 4]));
                Record k;
                k.kind = RecordKind::Kernel;
                k.kernel = kernel_op(is + 5000, is + 9000 + (i * 37) % 5000, corr, kernels[(i + t) % 4]);
                k.kernel.stream = 7;
                cuda.push_back(k);
                Record a;
                a.kind = RecordKind::ApiCall;
                a.api = api_call(tids[t], is + 100, is + 2500 + i % 700, corr++, launch);
                cuda.push_back(a);
                clock[t] = e + 200 + i % 7;
            }
        }
        for (const Record& r : cuda) {
            if (r.kind == RecordKind::Kernel) w.add(r.kernel);
            else w.add(r.api);
        }
        cuda.clear();
    }
}

enum Mix : int64_t { kMixed = 0, kNvtxHeavy = 1, kNvtxCuda = 2 };
const char* mix_name(int64_t mix) { return mix == kNvtxHeavy ? "nvtx" : mix == kNvtxCuda ? "nvtx+cuda" : "mixed"; }

const std::string& trace_path(int64_t mix = kMixed) {
    static std::string paths[3];
    std::string& path = paths[mix];
    if (path.empty()) {
        auto dir = std::filesystem::temp_directory_path() / "gprof-bench";
        std::filesystem::create_directories(dir);
        uint64_t n = mix == kMixed ? record_count() : nvtx_record_count();
        const char* infix[] = {"", "nvtx.", "nvtx-cuda."};
        auto p = (dir / ("summary." + std::string(infix[mix]) + std::to_string(n) + ".gprof")).string();
        if (!std::filesystem::exists(p)) {
            auto tmp = p + ".tmp";
            testing::write_trace(tmp, [&](trace::TraceWriter& w) {
                if (mix == kNvtxHeavy) fill_nvtx(w, n);
                else if (mix == kNvtxCuda) fill_nvtx_cuda(w, n);
                else fill(w, n);
            });
            std::filesystem::rename(tmp, p);
        }
        path = p;
    }
    return path;
}

void BM_cat(benchmark::State& state) {
    const std::string& path = trace_path(state.range(0));
    state.SetLabel(mix_name(state.range(0)));
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
BENCHMARK(BM_cat)->Arg(kMixed)->Arg(kNvtxHeavy)->Arg(kNvtxCuda)->Unit(benchmark::kMillisecond)->UseRealTime();

// Args: the mix, and the decode/aggregate threads (0: the default, the machine's cores up to 4). CPU time is the
// whole process's (every thread), not the benchmark thread's. Peak RSS is the process's so far: run one mix per
// process (--benchmark_filter=BM_summary/1/) for the NVTX-heavy figure alone.
void BM_summary(benchmark::State& state) {
    const std::string& path = trace_path(state.range(0));
    state.SetLabel(mix_name(state.range(0)));
    uint64_t bytes = 0, records = 0;
    for (auto _ : state) {
        report::AggregateOptions o;
        o.threads = static_cast<unsigned>(state.range(1));
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
    ->ArgsProduct({{kMixed, kNvtxHeavy, kNvtxCuda}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(1)
    ->Repetitions(5)
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
    ->ReportAggregatesOnly(true);

// `gprof-report summary` as printed (table): BM_summary's tables and the Analysis section, which reads the trace a
// second time for what the analysis needs (end_of_run/end_of_run.h summary_analysis_section; issue 33). Peak RSS as
// above: one mix per process (--benchmark_filter=BM_summary_table/1/).
void BM_summary_table(benchmark::State& state) {
    const std::string& path = trace_path(state.range(0));
    state.SetLabel(mix_name(state.range(0)));
    uint64_t bytes = 0;
    size_t analysis_lines = 0;
    for (auto _ : state) {
        report::ReportOptions ro;
        const std::vector<std::filesystem::path> traces{path};
        ro.summary_analysis = [&](const report::Aggregate& agg) {
            return report::summary_analysis_section(agg, traces, ro.filter);
        };
        std::ostringstream out, err;
        report::run_reports(traces, ro, out, err);
        const std::string text = out.str();
        const size_t at = text.find("\nAnalysis: ");  // the section's lines: a check that it was made
        analysis_lines = at == std::string::npos
                             ? 0
                             : static_cast<size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                                                              text.end(), '\n'));
        bytes += std::filesystem::file_size(path);
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["analysis_lines"] = static_cast<double>(analysis_lines);
    struct rusage ru {};
    ::getrusage(RUSAGE_SELF, &ru);
    state.counters["peak_rss_MB"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
}
BENCHMARK(BM_summary_table)
    ->Arg(kMixed)
    ->Arg(kNvtxHeavy)
    ->Arg(kNvtxCuda)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(1)
    ->Repetitions(3)
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
    ->ReportAggregatesOnly(true);

// The reader alone: the floor the summary cannot beat.
void BM_read_only(benchmark::State& state) {
    const std::string& path = trace_path(state.range(0));
    state.SetLabel(mix_name(state.range(0)));
    for (auto _ : state) {
        trace::TraceReader r(path);
        trace::Record rec;
        uint64_t n = 0;
        while (r.next(rec)) ++n;
        benchmark::DoNotOptimize(n);
    }
}
BENCHMARK(BM_read_only)->Arg(kMixed)->Arg(kNvtxHeavy)->Arg(kNvtxCuda)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
