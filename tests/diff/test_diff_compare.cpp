// Decisions of `diff` on synthetic workloads with known answers.
#include <catch2/catch.hpp>

#include "diff/diff.h"
#include "workload.h"

using namespace gprof;
using namespace gprof::report;
using gprof::testing::TempDir;
using gprof::testing::WorkloadSpec;

namespace {

std::vector<RunFigures> make_side(const TempDir& tmp, const std::string& name, int runs, const WorkloadSpec& spec,
                                  uint32_t seed) {
    std::vector<RunFigures> out;
    for (int i = 0; i < runs; ++i) {
        auto dir = tmp.path() / name / ("run" + std::to_string(i));
        testing::write_run(dir, [&](testing::Synth& s) { testing::synth_workload(s, spec, seed + static_cast<uint32_t>(i)); });
        Run run = load_run({dir});
        RunFigures f = extract_figures(run, {});
        f.label = dir.string();
        out.push_back(std::move(f));
    }
    return out;
}

std::vector<std::string> failing(const DiffResult& r) {
    std::vector<std::string> keys;
    for (const auto& k : r.keys)
        if (k.fails) keys.push_back(k.key);
    return keys;
}

const DiffKey* find(const DiffResult& r, const std::string& key) {
    for (const auto& k : r.keys)
        if (k.key == key) return &k;
    return nullptr;
}

}  // namespace

TEST_CASE("A/A comparisons never fail") {
    TempDir tmp;
    WorkloadSpec spec;
    spec.run_noise = 0.03;
    SECTION("identical single runs") {
        auto a = make_side(tmp, "a", 1, spec, 7);
        auto b = make_side(tmp, "b", 1, spec, 7);
        DiffResult r = compare_runs(a, b, {});
        CHECK(r.exit_code() == 0);
        CHECK_FALSE(r.noise_protected);
        CHECK(r.protection_note.find("unprotected") != std::string::npos);
        for (const auto& k : r.keys) CHECK(k.status == DiffStatus::Unchanged);
    }
    SECTION("five noisy runs per side, many seeds, tight threshold") {
        Thresholds th;
        th.fail_above_pct = 2.0;
        th.min_delta_ns = 0;
        for (uint32_t trial = 0; trial < 4; ++trial) {
            auto a = make_side(tmp, "a" + std::to_string(trial), 5, spec, 100 + trial * 20);
            auto b = make_side(tmp, "b" + std::to_string(trial), 5, spec, 110 + trial * 20);
            DiffResult r = compare_runs(a, b, th);
            CHECK(r.noise_protected);
            INFO("trial " << trial);
            CHECK(failing(r).empty());
        }
    }
}

TEST_CASE("planted slowdowns are caught with the right key named") {
    TempDir tmp;
    WorkloadSpec base, slow;
    base.run_noise = slow.run_noise = 0.01;
    for (double scale : {1.10, 1.50}) {
        slow.gemm_scale = scale;
        INFO("gemm x" << scale);
        Thresholds th;
        th.fail_above_pct = 5.0;
        auto a = make_side(tmp, "base" + std::to_string(scale), 5, base, 1);
        auto b = make_side(tmp, "slow" + std::to_string(scale), 5, slow, 50);
        DiffResult r = compare_runs(a, b, th);
        REQUIRE(r.exit_code() == 1);
        REQUIRE_FALSE(r.keys.empty());
        CHECK(r.keys.front().key == "kernel:gemm");
        CHECK(r.keys.front().fails);
        CHECK(*r.keys.front().change_pct == Approx((scale - 1) * 100).margin(3.0));
        CHECK(*r.keys.front().confidence >= 0.95);
        // Only gemm and the whole-run figures it drives may fail.
        for (const auto& k : failing(r)) CHECK((k == "kernel:gemm" || k.rfind("run:", 0) == 0 || k.rfind("nvtx:", 0) == 0));
        CHECK(find(r, "kernel:relu")->status == DiffStatus::Unchanged);
    }
    SECTION("with one run per side the slowdown is caught but flagged unprotected") {
        slow.gemm_scale = 1.5;
        auto a = make_side(tmp, "one_a", 1, base, 1);
        auto b = make_side(tmp, "one_b", 1, slow, 2);
        DiffResult r = compare_runs(a, b, {});
        CHECK(r.exit_code() == 1);
        CHECK(r.keys.front().key == "kernel:gemm");
        CHECK_FALSE(r.keys.front().confidence);
        CHECK_FALSE(r.noise_protected);
    }
}

TEST_CASE("new and vanished kernels are reported") {
    TempDir tmp;
    WorkloadSpec base, changed;
    changed.extra_kernel = true;
    changed.drop_relu = true;
    auto a = make_side(tmp, "a", 3, base, 1);
    auto b = make_side(tmp, "b", 3, changed, 1);
    DiffResult r = compare_runs(a, b, {});
    REQUIRE(find(r, "kernel:new_kernel"));
    CHECK(find(r, "kernel:new_kernel")->status == DiffStatus::New);
    CHECK(find(r, "kernel:new_kernel")->cand.count == 20);
    REQUIRE(find(r, "kernel:relu"));
    CHECK(find(r, "kernel:relu")->status == DiffStatus::Vanished);
    CHECK_FALSE(find(r, "kernel:new_kernel")->fails);
}

TEST_CASE("thresholds, metric and per-key rules are honoured") {
    TempDir tmp;
    WorkloadSpec base, slow;
    slow.gemm_scale = 1.10;
    auto a = make_side(tmp, "a", 5, base, 1);
    auto b = make_side(tmp, "b", 5, slow, 50);
    Thresholds th;
    th.fail_above_pct = 5;
    REQUIRE(compare_runs(a, b, th).exit_code() == 1);

    th.fail_above_pct = 20;  // 10% is below it
    CHECK(compare_runs(a, b, th).exit_code() == 0);

    th.fail_above_pct = 5;
    th.min_delta_ns = parse_duration_ns("10ms");  // gemm total grows by ~0.8 ms
    CHECK(compare_runs(a, b, th).exit_code() == 0);

    th.min_delta_ns = 0;
    th.metric = DiffMetric::Median;  // per-instance median grows by ~40 us: still caught
    DiffResult med = compare_runs(a, b, th);
    CHECK(med.exit_code() == 1);
    CHECK(med.keys.front().key == "kernel:gemm");

    th.metric = DiffMetric::Total;
    KeyRule lenient;
    lenient.pattern = "kernel:gemm|run:.*|nvtx:.*";
    lenient.re = std::regex(lenient.pattern);
    lenient.fail_above_pct = 50;
    th.rules = {lenient};
    DiffResult r = compare_runs(a, b, th);
    CHECK(r.exit_code() == 0);
    REQUIRE(find(r, "kernel:gemm"));
    CHECK(find(r, "kernel:gemm")->threshold.rule == "kernel:gemm|run:.*|nvtx:.*");

    KeyRule ignore;
    ignore.pattern = "kernel:gemm";
    ignore.re = std::regex(ignore.pattern);
    ignore.ignore = true;
    th.rules = {ignore};
    CHECK_FALSE(find(compare_runs(a, b, th), "kernel:gemm"));

    KeyRule nogate;
    nogate.pattern = ".*";
    nogate.re = std::regex(nogate.pattern);
    nogate.gate = false;
    th.rules = {nogate};
    DiffResult shown = compare_runs(a, b, th);
    CHECK(shown.exit_code() == 0);
    CHECK(find(shown, "kernel:gemm")->status == DiffStatus::Regression);
}

TEST_CASE("by-launch-config keys kernels by name, grid and block") {
    TempDir tmp;
    auto dir = tmp.path() / "run";
    testing::write_run(dir, [](testing::Synth& s) {
        s.kernel("k", 0, 100, 7, 64, 128);
        s.kernel("k", 200, 300, 7, 128, 128);
    });
    Run run = load_run({dir});
    FigureOptions fo;
    fo.by_launch_config = true;
    RunFigures f = extract_figures(run, fo);
    CHECK(f.instances.count("kernel:k [grid 64x1x1 block 128x1x1]"));
    CHECK(f.instances.count("kernel:k [grid 128x1x1 block 128x1x1]"));
    CHECK(extract_figures(run, {}).instances.at("kernel:k").size() == 2);
}
