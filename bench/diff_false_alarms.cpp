// False alarms of `gprof-report diff` against a plain threshold, on repeated runs of one synthetic workload with
// realistic noise (per-run clock/thermal factor, per-instance jitter, occasional disturbed runs).
//
// A/A: both sides are runs of the same workload, so every failure is a false alarm. A/B: the gemm kernel is
// planted 20% slower; a detection counts when the build fails and kernel:gemm is among the failing keys.
// Compared: (1) plain threshold, one run per side; (2) plain threshold on the medians of 5 runs per side;
// (3) gprof-report diff, 5 runs per side (threshold-shifted exact Mann-Whitney U test). Thresholds: 5%, 10 us.
// Usage: diff_false_alarms [trials]  (default 100)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../tests/diff/workload.h"
#include "diff/diff.h"

using namespace gprof;
using namespace gprof::report;

namespace {

RunFigures make_run(const testing::TempDir& tmp, const std::string& name, const testing::WorkloadSpec& spec,
                    uint32_t seed) {
    auto dir = tmp.path() / name;
    testing::write_run(dir, [&](testing::Synth& s) { testing::synth_workload(s, spec, seed); });
    RunFigures f = extract_figures(load_run({dir}), {});
    f.label = name;
    return f;
}

bool names_gemm(const DiffResult& r) {
    for (const auto& k : r.keys)
        if (k.fails && k.key == "kernel:gemm") return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    int trials = argc > 1 ? std::atoi(argv[1]) : 100;
    constexpr int kRuns = 5;
    testing::TempDir tmp;
    testing::WorkloadSpec spec;
    spec.run_noise = 0.03;
    spec.instance_noise = 0.02;
    spec.outlier_prob = 0.10;
    spec.outlier_scale = 1.12;
    testing::WorkloadSpec slow = spec;
    slow.gemm_scale = 1.20;

    Thresholds th;
    th.fail_above_pct = 5.0;
    th.min_delta_ns = 10'000;

    struct Count {
        int aa_fail = 0, ab_fail = 0, ab_named = 0;
    } plain1, plain5, tested;

    uint32_t seed = 1;
    for (int t = 0; t < trials; ++t) {
        std::vector<RunFigures> a, b, c;
        for (int i = 0; i < kRuns; ++i) {
            a.push_back(make_run(tmp, "a" + std::to_string(seed), spec, seed)), ++seed;
            b.push_back(make_run(tmp, "b" + std::to_string(seed), spec, seed)), ++seed;
            c.push_back(make_run(tmp, "c" + std::to_string(seed), slow, seed)), ++seed;
        }
        // (1) one run per side: the same decision rule without the test.
        DiffResult p1_aa = compare_runs({a[0]}, {b[0]}, th), p1_ab = compare_runs({a[0]}, {c[0]}, th);
        // (2) medians of 5 runs, plain threshold: alpha = 1 disables the test's veto.
        Thresholds no_test = th;
        no_test.alpha = 1.0;
        DiffResult p5_aa = compare_runs(a, b, no_test), p5_ab = compare_runs(a, c, no_test);
        // (3) gprof-report diff with 5 runs per side.
        DiffResult t_aa = compare_runs(a, b, th), t_ab = compare_runs(a, c, th);
        auto tally = [](Count& n, const DiffResult& aa, const DiffResult& ab) {
            n.aa_fail += aa.exit_code() == 1;
            n.ab_fail += ab.exit_code() == 1;
            n.ab_named += ab.exit_code() == 1 && names_gemm(ab);
        };
        tally(plain1, p1_aa, p1_ab);
        tally(plain5, p5_aa, p5_ab);
        tally(tested, t_aa, t_ab);
        std::filesystem::remove_all(tmp.path());
        std::filesystem::create_directories(tmp.path());
    }
    auto pct = [&](int n) { return 100.0 * n / trials; };
    std::printf("workload: 20 steps, run noise 3%% (lognormal), instance noise 2%%, 10%% of runs disturbed +12%%\n");
    std::printf("thresholds: fail above 5%% and 10 us, metric total; %d trials; planted gemm slowdown 20%%\n\n", trials);
    std::printf("%-42s %18s %22s %22s\n", "method", "A/A false alarms", "A/B detected", "A/B gemm named");
    auto row = [&](const char* name, const Count& n) {
        std::printf("%-42s %10d (%5.1f%%) %14d (%5.1f%%) %14d (%5.1f%%)\n", name, n.aa_fail, pct(n.aa_fail), n.ab_fail,
                    pct(n.ab_fail), n.ab_named, pct(n.ab_named));
    };
    row("plain threshold, 1 run per side", plain1);
    row("plain threshold on medians, 5 runs/side", plain5);
    row("gprof-report diff, 5 runs/side (MWU)", tested);
    return 0;
}
