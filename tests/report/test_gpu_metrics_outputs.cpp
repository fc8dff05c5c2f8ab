// GPU metrics in the outputs (issue 37, step 5): the summary's section, its JSON and gpu_metrics_sum, with figures
// worked out by hand from gpu_metrics_fixture.h; a run without metrics shows nothing of them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sstream>

#include "gpu_metrics_fixture.h"
#include "export/sqlite.h"
#include "html/html.h"
#include "model/aggregate.h"
#include "reports/reports.h"
#include "timeline/timeline.h"
#include "check_perfetto.h"

using namespace gprof::report;
using namespace gprof::testing;

namespace {

std::string report_text(const std::string& trace, const std::string& report, OutputFormat format) {
    ReportOptions o;
    o.reports = {report};
    o.format = format;
    std::ostringstream out, err;
    REQUIRE(run_reports({trace}, o, out, err) == 0);
    return out.str();
}

const GpuMetricFigures& metric(const GpuMetricsSummary& s, const std::string& name) {
    for (const auto& m : s.metrics)
        if (m.metric == name) return m;
    FAIL("no metric " << name);
    return s.metrics.front();
}

}  // namespace

TEST_CASE("GPU metrics summary: mean, percentiles, max and the mean while kernels ran, per device",
          "[report][gpu-metrics]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_trace(trace, fill_gpu_metrics_run);
    for (unsigned threads : {1u, 2u}) {
        AggregateOptions ao;
        ao.threads = threads;
        Aggregate agg = aggregate_run({trace}, ao);
        INFO("threads " << threads);
        REQUIRE(agg.gpu_metrics.size() == 1);  // device 1 ran kernels but was not sampled
        const GpuMetricsSummary& s = agg.gpu_metrics[0];
        CHECK(s.device == 0);
        CHECK(s.set == "gh100");
        CHECK(s.chip == "GH100");
        CHECK(s.interval_ns == 100'000);
        CHECK(s.samples == 10);
        CHECK(s.first_ns == 0);
        CHECK(s.last_ns == 1'000'000);
        CHECK(s.sampled_ns == 1'000'000);
        CHECK(s.busy_ns == 350'000);  // [200, 550) us: the two kernels' overlap counted once; device 1's not at all
        const GpuMetricFigures& sm = metric(s, kSmActive);
        CHECK(sm.label.label == "SM active");
        CHECK(sm.label.unit == GpuMetricUnit::Percent);
        CHECK(sm.samples == 10);
        CHECK(sm.mean == Approx(45));
        CHECK(sm.p50 == Approx(40));
        CHECK(sm.p90 == Approx(80));
        CHECK(sm.max == Approx(90));
        CHECK(sm.busy_mean == Approx((20 + 30 + 40 + 50 * 0.5) / 3.5));  // samples 2-4 whole, half of 5
        const GpuMetricFigures& tensor = metric(s, kTensor);
        CHECK(tensor.samples == 9);  // sample 7 has no value
        CHECK(tensor.mean == Approx(5));
        const GpuMetricFigures& dram = metric(s, kDram);
        CHECK(dram.mean == Approx(430.0 / 9));
        CHECK(dram.p50 == Approx(50));
        CHECK(dram.p90 == Approx(90));
        CHECK(dram.busy_mean == Approx((70 + 60 + 50 + 40 * 0.5) / 3.5));
        const GpuMetricFigures& read = metric(s, kDramRead);
        CHECK(read.label.unit == GpuMetricUnit::BytesPerSecond);
        CHECK(read.mean == Approx(1e9));  // 100 000 bytes every 100 us
        CHECK(read.max == Approx(1e9));
        // The ranges: equal lengths, so by name.
        REQUIRE(s.ranges.size() == 2);
        CHECK(s.ranges[0].name == ":eval");
        CHECK(s.ranges[0].count == 1);
        CHECK(s.ranges[0].total_ns == 500'000);
        CHECK(s.ranges[0].means[0] == Approx(70));
        CHECK(s.ranges[0].means[1] == Approx(5));
        CHECK(s.ranges[0].means[2] == Approx((40 + 30 + 10 + 0) / 4.0));
        CHECK(s.ranges[1].name == ":step");
        CHECK(s.ranges[1].means[0] == Approx(20));
        CHECK(s.ranges[1].means[2] == Approx(70));
    }
}

TEST_CASE("GPU metrics in the summary text, its JSON and gpu_metrics_sum", "[report][gpu-metrics]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_trace(trace, fill_gpu_metrics_run);
    const std::string text = report_text(trace, "summary", OutputFormat::Table);
    INFO(text);
    CHECK(text.find("GPU metrics:\n  GPU 0 (GH100, set gh100): 10 samples every 100.00us from +0ns to +1.0000ms; "
                    "kernels ran 350.00us of the 1.0000ms sampled\n") != std::string::npos);
    CHECK(text.find("SM active       45.0 %       40.0 %       80.0 %       90.0 %             32.9 %\n") !=
          std::string::npos);
    CHECK(text.find("DRAM read    1.00 GB/s    1.00 GB/s    1.00 GB/s    1.00 GB/s          1.00 GB/s\n") !=
          std::string::npos);
    CHECK(text.find("NVTX ranges on GPU 0") != std::string::npos);
    CHECK(text.find("500.00us        1     70.0 %               5.0 %           20.0 %  :eval\n") != std::string::npos);

    nlohmann::json doc = nlohmann::json::parse(report_text(trace, "summary", OutputFormat::Json));
    const auto& g = doc["reports"]["summary"]["gpu_metrics"];
    REQUIRE(g.size() == 1);
    CHECK(g[0]["chip"] == "GH100");
    CHECK(g[0]["kernel_ns"] == 350'000);
    CHECK(g[0]["metrics"][0]["label"] == "SM active");
    CHECK(g[0]["metrics"][0]["mean_while_kernels_ran"].get<double>() == Approx(115.0 / 3.5));
    CHECK(g[0]["nvtx_ranges"][1]["means"][kSmActive].get<double>() == Approx(20));

    const std::string csv = report_text(trace, "gpu_metrics_sum", OutputFormat::Csv);
    INFO(csv);
    CHECK(csv.find("4242,0,gh100,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,percent,10,45.000,40.000,"
                   "80.000,90.000,32.857,SM active") != std::string::npos);
}

TEST_CASE("A run without GPU metrics shows nothing of them", "[report][gpu-metrics]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_trace(trace, fill_small_run);
    CHECK(report_text(trace, "summary", OutputFormat::Table).find("GPU metrics") == std::string::npos);
    nlohmann::json doc = nlohmann::json::parse(report_text(trace, "summary", OutputFormat::Json));
    CHECK(doc["reports"]["summary"].contains("header"));
    CHECK_FALSE(doc["reports"]["summary"].contains("gpu_metrics"));
    CHECK(report_text(trace, "gpu_metrics_sum", OutputFormat::Table).find("(no data)") != std::string::npos);
}

// The timeline: a counter track per device and metric, each sample's figure from its start (a rate for counts), none
// for the device without metrics; the Perfetto protobuf, decoded by protoc, holds the same samples as doubles.
TEST_CASE("GPU metrics on the timeline: a counter track per device and metric, JSON and Perfetto", "[timeline][gpu-metrics]") {
    TempDir dir;
    write_trace(dir.file("app.4242.gprof"), fill_gpu_metrics_run);
    Run run = load_run({dir.path()});
    std::string text;
    TimelineOptions o;
    o.analysis_track = false;
    timeline_to_string(run, text, o);
    nlohmann::json doc = nlohmann::json::parse(text);
    std::map<int64_t, std::string> process_names;
    std::map<std::string, std::vector<std::pair<int64_t, double>>> counters;  // "pid name" -> (ns, value)
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
        if (e["ph"] != "C") continue;
        counters[process_names[e["pid"]] + " | " + e["name"].get<std::string>()].emplace_back(
            std::llround(e["ts"].get<double>() * 1000), e["args"]["value"].get<double>());
    }
    std::string names;
    for (const auto& [k, v] : counters) names += k + "\n";
    INFO(names);
    REQUIRE(counters.size() == 4);  // device 0's four metrics; device 1 ran kernels but was not sampled
    const auto& sm = counters["GPU 0: NVIDIA H100 80GB HBM3 | SM active (%)"];
    REQUIRE(sm.size() == 10);
    for (size_t i = 0; i < sm.size(); ++i) {
        CHECK(sm[i].first == static_cast<int64_t>(i) * 100'000);  // run axis: kT0 is +0
        CHECK(sm[i].second == Approx(10.0 * i));
    }
    const auto& tensor = counters["GPU 0: NVIDIA H100 80GB HBM3 | Tensor pipe active (%)"];
    CHECK(tensor.size() == 9);  // sample 7 has no value: the one before stands
    const auto& read = counters["GPU 0: NVIDIA H100 80GB HBM3 | DRAM read (bytes/s)"];
    REQUIRE(read.size() == 9);
    CHECK(read[0].second == Approx(1e9));
    CHECK(counters.count("GPU 0: NVIDIA H100 80GB HBM3 | DRAM throughput (%)"));

    PerfettoCheck check = check_perfetto(dir.path().string(), dir.file("check.txt"));
    INFO(check.output);
    CHECK(check.exit_code == 0);
    CHECK(check.output.find(" 37 counter samples,") != std::string::npos);  // 10 + 9 + 9 + 9, as the JSON has them
}

// report.html: under the utilisation chart, a chart of the device's shares over time (one line each) and the
// summary's figures per metric; a run without metrics has neither the section nor its colours.
TEST_CASE("GPU metrics in report.html: the shares over time and the figures per metric", "[html][gpu-metrics]") {
    TempDir dir;
    write_trace(dir.file("app.4242.gprof"), fill_gpu_metrics_run);
    const std::string page = gprof::report::html::render_run_page({dir.path()}, {});
    const size_t at = page.find("<section id=\"gpumetrics\"><h2>GPU metrics over time</h2>");
    REQUIRE(at != std::string::npos);
    CHECK(at > page.find("<section id=\"utilisation\""));  // under the utilisation chart
    CHECK(page.find("<a href=\"#gpumetrics\">GPU metrics</a>") != std::string::npos);
    const std::string section = page.substr(at, page.find("</section>", at) - at);
    INFO(section);
    CHECK(section.find("GH100, set gh100, 10 samples every 100.00us; kernels ran 350.00us of the 1.0000ms sampled") !=
          std::string::npos);
    // Three shares charted (DRAM read is a rate: in the table only), one line each.
    CHECK(section.find("class=\"series m0 line\"") != std::string::npos);
    CHECK(section.find("class=\"series m2 line\"") != std::string::npos);
    CHECK(section.find("class=\"series m3") == std::string::npos);
    CHECK(section.find("<i class=\"m1\"></i>Tensor pipe active") != std::string::npos);
    for (const char* figure : {"45.0 %", "40.0 %", "80.0 %", "90.0 %", "32.9 %", "1.00 GB/s"})
        CHECK(section.find(figure) != std::string::npos);

    TempDir plain;
    write_small_run(plain);
    const std::string other = gprof::report::html::render_run_page({plain.path()}, {});
    CHECK(other.find("gpumetrics") == std::string::npos);
    CHECK(other.find("--m0") == std::string::npos);
}

// The SQLite export: nsys's GPU_METRICS and TARGET_INFO_GPU_METRICS for a run with metrics, neither without.
TEST_CASE("GPU metrics in the SQLite export: GPU_METRICS rows per sample and metric", "[export][gpu-metrics]") {
    TempDir dir;
    write_trace(dir.file("app.4242.gprof"), fill_gpu_metrics_run);
    const std::string db = dir.file("run.sqlite");
    export_sqlite(load_run({dir.path()}), db);
    auto rows = [&](const std::string& sql) {
        sqlite3* h = nullptr;
        REQUIRE(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
        sqlite3_stmt* st = nullptr;
        REQUIRE(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
        std::vector<std::string> out;
        while (sqlite3_step(st) == SQLITE_ROW) {
            std::string row;
            for (int c = 0; c < sqlite3_column_count(st); ++c)
                row += (c ? "|" : "") + std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
            out.push_back(row);
        }
        sqlite3_finalize(st);
        sqlite3_close(h);
        return out;
    };
    CHECK(rows("SELECT COUNT(*) FROM GPU_METRICS") == std::vector<std::string>{"37"});  // 10 + 9 + 9 + 9 values
    CHECK(rows("SELECT typeId, sourceId, typeName, metricId, metricName FROM TARGET_INFO_GPU_METRICS WHERE metricId = 0") ==
          std::vector<std::string>{"1|0|gh100 (GH100, pid 4242)|0|sm__cycles_active.avg.pct_of_peak_sustained_elapsed"});
    // SM active over time, as nsys users query it (timestamps on the run axis: the samples start at +0).
    CHECK(rows("SELECT g.timestamp, g.value FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS t ON t.typeId = g.typeId "
               "AND t.metricId = g.metricId WHERE t.metricName LIKE 'sm__cycles_active%' AND g.timestamp < 300000 "
               "ORDER BY g.timestamp") == std::vector<std::string>{"0|0.0", "100000|10.0", "200000|20.0"});
    CHECK(rows("SELECT AVG(value) FROM GPU_METRICS WHERE metricId = 0") == std::vector<std::string>{"45.0"});

    TempDir plain;
    write_small_run(plain);
    const std::string other = plain.file("run.sqlite");
    export_sqlite(load_run({plain.path()}), other);
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open_v2(other.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%GPU_METRICS%'", -1, &st, nullptr) ==
            SQLITE_OK);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(sqlite3_column_int(st, 0) == 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
}
