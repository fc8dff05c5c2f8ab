// `gprof-report diff` end to end: exit codes, input errors, the thresholds file and golden outputs.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "workload.h"

using namespace gprof;
using gprof::testing::run_cli;
using gprof::testing::TempDir;
using gprof::testing::WorkloadSpec;

namespace {

// <dir>/run<i>/app.4242.gprof for i < runs.
std::string make_runs(const TempDir& tmp, const std::string& name, int runs, const WorkloadSpec& spec, uint32_t seed) {
    auto side = tmp.path() / name;
    for (int i = 0; i < runs; ++i)
        testing::write_run(side / ("run" + std::to_string(i)),
                           [&](testing::Synth& s) { testing::synth_workload(s, spec, seed + static_cast<uint32_t>(i)); });
    return side.string();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
    return s;
}

// Compares with tests/diff/golden/<name>; GPROF_UPDATE_GOLDEN=1 rewrites the file instead.
void check_golden(const std::string& name, const std::string& actual) {
    std::string path = std::string(GPROF_DIFF_GOLDEN_DIR) + "/" + name;
    if (std::getenv("GPROF_UPDATE_GOLDEN")) {
        write_text(path, actual);
        return;
    }
    std::ifstream in(path);
    REQUIRE(in);
    std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(actual == expected);
}

}  // namespace

TEST_CASE("diff exit codes: 0 for A/A, 1 for a regression") {
    TempDir tmp;
    WorkloadSpec spec, slow;
    slow.gemm_scale = 1.5;
    std::string a = make_runs(tmp, "a", 3, spec, 1);
    std::string b = make_runs(tmp, "b", 3, spec, 11);
    std::string c = make_runs(tmp, "c", 3, slow, 21);
    auto same = run_cli({"diff", a, b});
    CHECK(same.exit_code == 0);
    CHECK(same.out.find("No regression") != std::string::npos);
    auto worse = run_cli({"diff", a, c, "--color", "always"});
    CHECK(worse.exit_code == 1);
    CHECK(worse.out.find("REGRESSION") != std::string::npos);
    CHECK(worse.out.find("kernel:gemm") != std::string::npos);
    CHECK(worse.out.find("\033[31;1m") != std::string::npos);
    auto plain = run_cli({"diff", a, c});  // not a tty: no colour
    CHECK(plain.out.find("\033[") == std::string::npos);
    // A list of single runs works like a directory of runs.
    auto list = run_cli({"diff", a + "/run0," + a + "/run1," + a + "/run2", c, "--format", "json"});
    CHECK(list.exit_code == 1);
    auto j = nlohmann::json::parse(list.out);
    CHECK(j["base"]["runs"] == 3);
    CHECK(j["keys"][0]["key"] == "kernel:gemm");
    CHECK(j["noise"]["protected"] == true);
}

TEST_CASE("diff input and usage errors exit 2 with a clear message") {
    TempDir tmp;
    std::string a = make_runs(tmp, "a", 1, {}, 1);
    SECTION("missing path") {
        auto r = run_cli({"diff", a, (tmp.path() / "nope").string()});
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("does not exist") != std::string::npos);
    }
    SECTION("not a trace") {
        auto bad = tmp.path() / "bad";
        std::filesystem::create_directories(bad);
        write_text((bad / "app.1.gprof").string(), "this is not a trace at all, just text");
        auto r = run_cli({"diff", a, bad.string()});
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("not a usable run") != std::string::npos);
    }
    SECTION("empty directory") {
        auto empty = tmp.path() / "empty";
        std::filesystem::create_directories(empty);
        auto r = run_cli({"diff", a, empty.string()});
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("no *.gprof trace") != std::string::npos);
    }
    SECTION("bad options") {
        CHECK(run_cli({"diff", a, a, "--metric", "mode"}).exit_code == 2);
        CHECK(run_cli({"diff", a, a, "--min-delta", "ten"}).exit_code == 2);
        CHECK(run_cli({"diff", a, a, "--format", "csv"}).exit_code == 2);
        CHECK(run_cli({"diff", a}).exit_code == 2);
    }
    SECTION("bad thresholds file") {
        std::string cfg = tmp.file("t.json");
        write_text(cfg, "{ not json");
        auto r = run_cli({"diff", a, a, "--thresholds", cfg});
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("not valid JSON") != std::string::npos);
        write_text(cfg, R"({"rules": [{"key": "kernel:(", "fail_above": 5}]})");
        CHECK(run_cli({"diff", a, a, "--thresholds", cfg}).err.find("invalid regex") != std::string::npos);
        write_text(cfg, R"({"fail_abov": 5})");
        CHECK(run_cli({"diff", a, a, "--thresholds", cfg}).err.find("unknown key 'fail_abov'") != std::string::npos);
    }
}

TEST_CASE("diff thresholds file: defaults, per-key rules, command line precedence") {
    TempDir tmp;
    WorkloadSpec spec, slow;
    slow.gemm_scale = 1.10;
    std::string a = make_runs(tmp, "a", 3, spec, 1);
    std::string b = make_runs(tmp, "b", 3, slow, 21);
    std::string cfg = tmp.file("t.json");
    CHECK(run_cli({"diff", a, b, "--fail-above", "5"}).exit_code == 1);
    write_text(cfg, R"({"version": 1, "fail_above": 5, "min_delta": "1us",
                        "rules": [{"key": "kernel:gemm", "fail_above": 25}, {"key": "run:.*|nvtx:.*", "gate": false}]})");
    auto r = run_cli({"diff", a, b, "--thresholds", cfg, "--format", "json"});
    CHECK(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["thresholds"]["fail_above_pct"] == 5.0);
    CHECK(j["thresholds"]["min_delta_ns"] == 1000);
    // The command line wins over the file's defaults, not over per-key rules.
    write_text(cfg, R"({"fail_above": 50})");
    CHECK(run_cli({"diff", a, b, "--thresholds", cfg}).exit_code == 0);
    CHECK(run_cli({"diff", a, b, "--thresholds", cfg, "--fail-above", "5"}).exit_code == 1);
}

TEST_CASE("diff golden outputs") {
    TempDir tmp;
    WorkloadSpec spec, changed;
    spec.run_noise = spec.instance_noise = 0;
    spec.steps = 4;
    changed = spec;
    changed.gemm_scale = 1.25;
    changed.extra_kernel = true;
    std::string a = make_runs(tmp, "a", 1, spec, 1);
    std::string b = make_runs(tmp, "b", 1, changed, 1);
    auto md = run_cli({"diff", a, b, "--format", "markdown"});
    CHECK(md.exit_code == 1);
    check_golden("single_run.md", md.out);
    auto table = run_cli({"diff", a, b});
    check_golden("single_run.txt", table.out);
    auto js = run_cli({"diff", a, b, "--format", "json"});
    check_golden("single_run.json", replace_all(js.out, tmp.path().string(), "<tmp>"));
}

TEST_CASE("diff leaves the runtime's own driver calls out unless --cuda-nested-driver-calls") {
    // The real 300-step PyTorch run (format 1.0, recorded before the collector switched these calls off at the
    // source) holds one cuKernelGetName per kernel launch, made by the CUDA runtime, not by the program.
    const std::string run = std::string(GPROF_EXAMPLES_DIR) + "/torch-train";
    auto key_count = [](const std::string& out, const std::string& key) {
        auto doc = nlohmann::json::parse(out);
        for (const auto& k : doc.at("keys"))
            if (k.at("key") == key) return k.at("base").at("count").get<double>();
        return -1.0;
    };
    auto hidden = run_cli({"diff", run, run, "--format", "json", "--all"});
    REQUIRE(hidden.exit_code == 0);
    CHECK(key_count(hidden.out, "api:cuKernelGetName") == -1.0);
    CHECK(key_count(hidden.out, "api:cudaLaunchKernel") > 0);
    auto shown = run_cli({"diff", run, run, "--format", "json", "--all", "--cuda-nested-driver-calls"});
    REQUIRE(shown.exit_code == 0);
    CHECK(key_count(shown.out, "api:cuKernelGetName") > 1000);
}
