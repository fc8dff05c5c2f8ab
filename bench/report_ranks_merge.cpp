// The merge of a job's rank figures (issue 31): N run directories, each with the rank-figures.json gprof-run writes at
// the end of a rank's run (S steps), read and compared as `gprof-report ranks JOB_DIR` does. Not a Google Benchmark:
// one pass, as a user runs it, with its wall and CPU time and the peak memory it added.
//
//   build/bench/report_ranks_merge [ranks=10000] [steps=100] [dir=/tmp/gprof-ranks-bench]
//
// The directory is written once (kept for the next run, and for `/usr/bin/time -v gprof-report ranks DIR`, the whole
// process measured). Figures in docs/performance.md ("Many ranks: the merge of rank figures").
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/rank_inputs.h"
#include "analyze/ranks.h"

using namespace gprof::report;
namespace fs = std::filesystem;

namespace {

double cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

long max_rss_kib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

// One rank of a synchronous job: 10 ms of work per step with 2 % jitter and a spike in one step of twenty; rank
// `slow` works 10 % more. Steps last 12 ms plus the spikes (a fixed step suffices for the merge's cost).
RankFigures make_rank(size_t r, size_t ranks, size_t steps, size_t slow, std::mt19937_64& rng) {
    std::normal_distribution<double> jitter(0.0, 0.02);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    RankFigures f;
    f.rank = static_cast<int64_t>(r);
    f.local_rank = static_cast<int64_t>(r % 8);
    f.world_size = static_cast<int64_t>(ranks);
    f.host = "node" + std::to_string(r / 8);
    f.boot_id = "3f1c9a52-8d4e-4b7a-9e2f-" + std::to_string(100000000000 + r / 8);
    f.job = "4711";
    f.pid = 7;
    f.pids = {7};
    f.label = "rank " + std::to_string(r) + " @ " + f.host + " (pid 7)";
    f.first_ns = 1'795'000'000'000'000'000 + int64_t(rng() % 1000);
    f.step_source = "nvtx";
    for (size_t i = 0; i < steps; ++i) {
        double w = 10e6 * (1 + jitter(rng)) * (r == slow ? 1.1 : 1.0);
        if (unit(rng) < 0.05) w *= 1.5;
        RankStep s;
        s.start_ns = f.first_ns + int64_t(i) * 20'000'000 + int64_t(rng() % 50'000);
        s.duration_ns = 16'000'000;
        s.compute_ns = int64_t(w);
        s.nccl_ns = s.duration_ns - s.compute_ns;
        f.steps.push_back(s);
        f.kernel_ns += s.duration_ns;
        f.nccl_ns += s.nccl_ns;
        f.compute_ns += s.compute_ns;
        f.kernels += 40;
        f.nccl_kernels += 4;
        f.api_calls += 60;
    }
    f.last_ns = f.steps.back().start_ns + f.steps.back().duration_ns;
    return f;
}

}  // namespace

int main(int argc, char** argv) {
    // scripts/bench gives every bench Google Benchmark's --benchmark_* options: this one has none, and takes the rest.
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]).rfind("--", 0) != 0) args.emplace_back(argv[i]);
    const size_t ranks = args.size() > 0 ? std::stoul(args[0]) : 10000;
    const size_t steps = args.size() > 1 ? std::stoul(args[1]) : 100;
    const fs::path dir = args.size() > 2 ? fs::path(args[2]) : fs::path("/tmp/gprof-ranks-bench");
    const fs::path job = dir / (std::to_string(ranks) + "x" + std::to_string(steps));
    if (!fs::exists(job / "done")) {
        std::mt19937_64 rng(31);
        uintmax_t bytes = 0;
        for (size_t r = 0; r < ranks; ++r) {
            fs::path run = job / ("run.node" + std::to_string(r / 8) + "." + std::to_string(r));
            fs::create_directories(run);
            std::ofstream out(run / kRankFiguresFile);
            write_figures_file({make_rank(r, ranks, steps, ranks / 3, rng)}, out);
            out.close();
            bytes += fs::file_size(run / kRankFiguresFile);
        }
        std::ofstream(job / "done") << "";
        std::printf("wrote %zu figures files of %zu steps: %.1f MB\n", ranks, steps, double(bytes) / 1e6);
    }
    const long rss0 = max_rss_kib();
    auto wall0 = std::chrono::steady_clock::now();
    double cpu0 = cpu_seconds();
    JobFigures figures = job_figures({job}, "", {});
    double cpu_read = cpu_seconds() - cpu0;
    RankView view = compare_ranks(std::move(figures.ranks));
    std::ostringstream text;
    render_rank_view(view, gprof::report::OutputFormat::Table, text);
    double cpu = cpu_seconds() - cpu0;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    std::printf("%zu ranks x %zu steps: wall %.3f s, CPU %.3f s (reading the files %.3f s), peak RSS %.1f MB (+%.1f MB)\n",
                ranks, steps, wall, cpu, cpu_read, double(max_rss_kib()) / 1024, double(max_rss_kib() - rss0) / 1024);
    std::printf("%s\n", view.line.c_str());
    return view.straggler && view.ranks[*view.straggler].rank == int64_t(ranks / 3) ? 0 : 1;
}
