// `gprof-report analyze` end to end: formats, options, errors.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "synthetic_trace.h"

using namespace gprof;
using gprof::testing::run_cli;
using gprof::testing::TempDir;

TEST_CASE("analyze: table, markdown and json") {
    TempDir tmp;
    auto dir = tmp.path() / "run";
    testing::write_run(dir, [](testing::Synth& s) {
        for (uint64_t i = 0; i < 10; ++i) {
            uint64_t t = i * 1'000'000;
            s.range("forward", t, t + 500'000, 1);
            s.kernel("k", t + 10'000, t + 400'000, 7, 4096, 256, t, t + 10'000);
            std::string name = "iteration " + std::to_string(i);
            s.range(name.c_str(), t, t + 1'000'000, 0);
        }
    });
    auto table = run_cli({"analyze", dir.string(), "--batch-size", "64"});
    CHECK(table.exit_code == 0);
    CHECK(table.out.find("Verdict: CPU/launch-bound") != std::string::npos);
    CHECK(table.out.find("items/s") != std::string::npos);
    CHECK(table.out.find("forward") != std::string::npos);
    auto md = run_cli({"analyze", dir.string(), "--format", "markdown"});
    CHECK(md.out.find("## Bottleneck analysis") != std::string::npos);
    auto js = run_cli({"analyze", dir.string(), "--format", "json", "--batch-size", "64"});
    REQUIRE(js.exit_code == 0);
    auto j = nlohmann::json::parse(js.out);
    CHECK(j["schema"] == "gprof-analysis");
    CHECK(j["schema_version"] == 1);
    CHECK(j["verdict"]["id"] == "cpu_launch_bound");
    CHECK(j["steps"]["count"] == 10);
    CHECK(j["steps"]["ips"].get<double>() == Approx(64.0 * 10 / 0.01));
    CHECK(j["devices"][0]["busy_pct"].get<double>() == Approx(39.0).margin(0.5));
}

TEST_CASE("analyze: errors exit 2") {
    TempDir tmp;
    CHECK(run_cli({"analyze", (tmp.path() / "missing").string()}).exit_code == 2);
    auto dir = tmp.path() / "run";
    testing::write_run(dir, [](testing::Synth& s) { s.kernel("k", 0, 10); });
    auto bad = run_cli({"analyze", dir.string(), "--step-range", "(unclosed"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--step-range") != std::string::npos);
    CHECK(run_cli({"analyze", dir.string(), "--format", "csv"}).exit_code == 2);
}
