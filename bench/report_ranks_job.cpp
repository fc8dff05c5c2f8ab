// A job to measure every job-level report on (issue 31): N run directories of one rank each, R records a rank
// (generated traces: NVTX steps, compute and NCCL kernels with their launches, a Role record), written twice:
//   <dir>/<N>x<R>/traces/run.nodeH.RANK/   the traces alone (the raw-trace path: runs recorded before rank figures)
//   <dir>/<N>x<R>/figures/run.nodeH.RANK/  the same traces (hard links) and the rank-figures.json gprof-run's end of
//                                          run writes next to them (made here the same way, from the traces)
// bench/ranks_job_reports.py runs each report on both under /usr/bin/time and tabulates peak RSS and CPU
// (docs/performance.md, "Many ranks: every job-level report at 1 024 ranks").
//
//   build/bench/report_ranks_job [ranks=1024] [records=100000] [dir=/tmp/gprof-ranks-job]
//
// Written once: a directory with its "done" file is kept for the next run. Ranks 8 a host; every step 2 % jitter and
// a spike (+50 %) in one step of twenty; rank N/3 works 10 % more on every step (the straggler every report names).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "analyze/rank_inputs.h"
#include "analyze/ranks.h"
#include "generated_trace.h"
#include "trace_fixture.h"

using namespace gprof::report;
namespace tr = gprof::trace;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kUs = 1000, kMs = 1000 * kUs;
constexpr uint64_t kT0 = 2'000'000'000;   // trace clock of the first step (after the header's anchor)
constexpr size_t kComputePerStep = 498;   // with their launches, the step's range and the all-reduce: 999 records
constexpr size_t kRecordsPerStep = 2 * kComputePerStep + 3;

const char* const kComputeNames[] = {"_Z10matmul_fwdPKfS0_Pfiii", "_Z8gelu_fwdPfi", "_Z12layernorm_fwdPKfPfi",
                                     "_Z10matmul_bwdPKfS0_Pfiii", "_Z8adam_stepPfPKfi"};
const char* const kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

void write_rank_trace(const fs::path& path, size_t rank, size_t ranks, size_t records, std::mt19937_64& rng) {
    const std::string host = "node" + std::to_string(rank / 8);
    const std::string boot = "3f1c9a52-8d4e-4b7a-9e2f-" + std::to_string(100000000000 + rank / 8);
    tr::HeaderInfo h = gprof::testing::test_header(7);
    h.hostname = host.c_str();
    h.boot_id = boot.c_str();
    h.clock.realtime_ns = 1'795'000'000'000'000'000 + int64_t(rng() % 1000);
    const size_t steps = std::max<size_t>(1, records / kRecordsPerStep);
    std::normal_distribution<double> jitter(0.0, 0.02);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    gprof::testing::write_trace(
        path.string(),
        [&](tr::TraceWriter& w) {
            gprof::bench::add_bench_gpu(w, 80ull << 30);
            tr::Role role;
            role.rank = int64_t(rank);
            role.local_rank = int64_t(rank % 8);
            role.world_size = int64_t(ranks);
            const std::string vars = "RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank % 8) +
                                     " WORLD_SIZE=" + std::to_string(ranks);
            role.variables = w.intern(vars.c_str());
            role.job = w.intern("4711");
            w.add(role);
            const uint32_t step_name = w.intern("step"), launch = w.intern("cudaLaunchKernel"), nccl = w.intern(kNccl);
            uint32_t names[std::size(kComputeNames)];
            for (size_t i = 0; i < std::size(kComputeNames); ++i) names[i] = w.intern(kComputeNames[i]);
            uint32_t correlation = 0;
            auto kernel = [&](uint32_t name, uint64_t start, uint64_t end, uint32_t stream, int grid) {
                tr::ApiCall a;
                a.start = start - 8 * kUs;
                a.end = start - 4 * kUs;
                a.tid = 1;
                a.correlation = ++correlation;
                a.name = launch;
                w.add(a);
                tr::Kernel k;
                k.start = start;
                k.end = end;
                k.stream = stream;
                k.correlation = correlation;
                k.grid_x = grid;
                k.grid_y = k.grid_z = 1;
                k.block_x = 256;
                k.block_y = k.block_z = 1;
                k.name = name;
                w.add(k);
            };
            for (size_t i = 0; i < steps; ++i) {
                double work = (1 + jitter(rng)) * (rank == ranks / 3 ? 1.1 : 1.0);
                if (unit(rng) < 0.05) work *= 1.5;
                const uint64_t t = kT0 + i * 25 * kMs, kernel_ns = uint64_t(20 * kUs * work);
                uint64_t at = t + 100 * kUs;
                for (size_t k = 0; k < kComputePerStep; ++k, at += kernel_ns)
                    kernel(names[k % std::size(names)], at, at + kernel_ns, 7, 1024);
                const uint64_t end = std::max(t + 16 * kMs, at + kMs);
                kernel(nccl, at, end - 100 * kUs, 9, 4);
                tr::Nvtx r;
                r.start = t;
                r.end = end;
                r.tid = r.end_tid = 1;
                r.name = step_name;
                w.add(r);
            }
        },
        true, h);
}

}  // namespace

int main(int argc, char** argv) {
    const size_t ranks = argc > 1 ? std::stoul(argv[1]) : 1024;
    const size_t records = argc > 2 ? std::stoul(argv[2]) : 100000;
    const fs::path dir = argc > 3 ? fs::path(argv[3]) : fs::path("/tmp/gprof-ranks-job");
    const fs::path job = dir / (std::to_string(ranks) + "x" + std::to_string(records));
    if (fs::exists(job / "done")) {
        std::printf("%s\n", job.c_str());
        return 0;
    }
    auto t0 = std::chrono::steady_clock::now();
    std::mt19937_64 rng(31);
    uintmax_t trace_bytes = 0, figures_bytes = 0;
    for (size_t r = 0; r < ranks; ++r) {
        const std::string name = "run.node" + std::to_string(r / 8) + "." + std::to_string(r);
        const fs::path traces = job / "traces" / name, figures = job / "figures" / name;
        fs::create_directories(traces);
        fs::create_directories(figures);
        const fs::path trace = traces / "train.7.gprof";
        write_rank_trace(trace, r, ranks, records, rng);
        fs::create_hard_link(trace, figures / trace.filename());
        trace_bytes += fs::file_size(trace);
        // What gprof-run's end of run writes for a ranked run (report/end_of_run/outputs.cpp's figures writer).
        LoadOptions lo;
        lo.keep_backtraces = false;
        std::ofstream out(figures / kRankFiguresFile);
        write_figures_file(rank_figures(load_run({traces}, lo), ""), out);
        out.close();
        figures_bytes += fs::file_size(figures / kRankFiguresFile);
    }
    std::ofstream(job / "done") << "";
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "wrote %zu ranks of %zu records: traces %.1f MB, figures %.1f MB, in %.0f s\n", ranks,
                 (records / kRecordsPerStep) * kRecordsPerStep, double(trace_bytes) / 1e6, double(figures_bytes) / 1e6,
                 s);
    std::printf("%s\n", job.c_str());
    return 0;
}
