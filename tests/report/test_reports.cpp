// Every report in every format against goldens, plus the numbers and the JSON schema checked directly.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "golden_util.h"
#include "reports/reports.h"
#include "report_fixture.h"

using namespace gprof::report;
using namespace gprof::testing;

namespace {

std::string run_one(const std::vector<std::filesystem::path>& traces, const std::string& report, OutputFormat f,
                    TimeUnit unit = TimeUnit::Ns, Filter filter = {}) {
    ReportOptions o;
    o.reports = {report};
    o.format = f;
    o.time_unit = unit;
    o.filter = filter;
    o.ignore_damage = true;
    std::ostringstream out, err;
    run_reports(traces, o, out, err);
    return out.str();
}

const char* ext(OutputFormat f) {
    switch (f) {
        case OutputFormat::Table: return "txt";
        case OutputFormat::Csv: return "csv";
        case OutputFormat::Json: return "json";
        case OutputFormat::Markdown: return "md";
    }
    return "";
}

}  // namespace

TEST_CASE("every report in every format matches its golden", "[report][golden]") {
    TempDir dir;
    auto path = write_small_run(dir);
    for (const auto& r : report_names())
        for (auto f : {OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json, OutputFormat::Markdown}) {
            SECTION(r + "." + ext(f)) { check_golden(r + "." + ext(f), run_one({path}, r, f)); }
        }
}

TEST_CASE("timeunit option scales table columns, json stays in ns", "[report][golden]") {
    TempDir dir;
    auto path = write_small_run(dir);
    check_golden("cuda_api_sum.us.txt", run_one({path}, "cuda_api_sum", OutputFormat::Table, TimeUnit::Us));
    auto j = nlohmann::json::parse(run_one({path}, "cuda_api_sum", OutputFormat::Json, TimeUnit::Ms));
    CHECK(j["time_unit"] == "ns");
}

TEST_CASE("summary numbers: sections sum to 100%, sorted by time, memops named like nvprof", "[report]") {
    TempDir dir;
    auto path = write_small_run(dir);
    auto j = nlohmann::json::parse(run_one({path}, "summary", OutputFormat::Json));
    REQUIRE(j["schema"] == "gprof-report");
    REQUIRE(j["schema_version"] == kReportSchemaVersion);
    const auto& rows = j["reports"]["summary"]["rows"];
    double gpu_pct = 0;
    int64_t prev = INT64_MAX;
    std::set<std::string> names;
    for (const auto& r : rows) {
        if (r["type"] != "GPU activities") continue;
        gpu_pct += r["time_percent"].get<double>();
        CHECK(r["total_time_ns"].get<int64_t>() <= prev);
        prev = r["total_time_ns"].get<int64_t>();
        names.insert(r["name"].get<std::string>());
    }
    CHECK(gpu_pct == Approx(100.0));
    CHECK(names.count("[CUDA memcpy HtoD]"));
    CHECK(names.count("[CUDA memcpy DtoH]"));
    CHECK(names.count("[CUDA memset]"));
    CHECK(names.count("kernel(float*, int)"));  // demangled
    const auto& header = j["reports"]["summary"]["header"];
    CHECK(header["dropped"] == 5);
    CHECK(header["unmatched_gpu_ops"] == 1);
    CHECK(header["devices"].size() == 2);
    CHECK_FALSE(j["warnings"].empty());
}

TEST_CASE("cuda_gpu_kern_sum has median and stddev", "[report]") {
    TempDir dir;
    auto path = write_small_run(dir);
    auto j = nlohmann::json::parse(run_one({path}, "cuda_gpu_kern_sum", OutputFormat::Json));
    const auto& rows = j["reports"]["cuda_gpu_kern_sum"]["rows"];
    REQUIRE(rows.size() == 2);
    const auto& k = rows[0];  // kernel(float*, int): 20000, 22000, 24000 ns
    CHECK(k["name"] == "kernel(float*, int)");
    CHECK(k["instances"] == 3);
    CHECK(k["total_time_ns"] == 66000);
    CHECK(k["med_ns"].get<double>() == 22000.0);
    CHECK(k["stddev_ns"].get<double>() == Approx(2000.0));
    CHECK(k["min_ns"] == 20000);
    CHECK(k["max_ns"] == 24000);
}

TEST_CASE("nvtx block attributes work to the range that launched it", "[report]") {
    TempDir dir;
    auto path = write_small_run(dir);
    auto j = nlohmann::json::parse(run_one({path}, "summary", OutputFormat::Json));
    bool found = false;
    for (const auto& r : j["reports"]["summary"]["nvtx"]) {
        if (r["name"] != "forward") continue;
        found = true;
        CHECK(r["range"]["count"] == 3);
        CHECK(r["gpu_activities"]["kernel(float*, int)"]["count"] == 3);
        CHECK(r["gpu_activities"]["[CUDA memcpy HtoD]"]["count"] == 2);
        CHECK_FALSE(r["gpu_activities"].contains("[CUDA memset]"));  // launched after "forward" ended
        CHECK(r["api_calls"]["cudaLaunchKernel"]["count"] == 3);
    }
    CHECK(found);
}

TEST_CASE("filters: device, kernel regex, time range, process", "[report][filter]") {
    TempDir dir;
    auto path = write_small_run(dir);
    auto kernels = [&](Filter f) {
        auto j = nlohmann::json::parse(run_one({path}, "cuda_gpu_kern_sum", OutputFormat::Json, TimeUnit::Ns, f));
        std::map<std::string, int64_t> out;
        for (const auto& r : j["reports"]["cuda_gpu_kern_sum"]["rows"]) out[r["name"]] = r["instances"];
        return out;
    };
    Filter dev1;
    dev1.devices = {1};
    CHECK(kernels(dev1) == std::map<std::string, int64_t>{{"other_kernel()", 1}});
    Filter re;
    re.kernel_regex = "^_Z6kern";
    CHECK(kernels(re) == std::map<std::string, int64_t>{{"kernel(float*, int)", 3}});
    Filter window;
    parse_time_range("0:100us", window);  // only the first step's kernel
    CHECK(kernels(window) == std::map<std::string, int64_t>{{"kernel(float*, int)", 1}});
    Filter nobody;
    nobody.pids = {1};
    CHECK(kernels(nobody).empty());
    Filter bad;
    CHECK_THROWS_AS(parse_time_range("5s:1s", bad), std::invalid_argument);
    CHECK_THROWS_AS(parse_time_range("abc", bad), std::invalid_argument);
    CHECK_THROWS_AS(parse_time_range("1parsec:", bad), std::invalid_argument);
}

TEST_CASE("two processes merge on one run axis", "[report]") {
    TempDir dir;
    auto a = write_small_run(dir, 4242);
    auto b = write_small_run(dir, 4343);
    auto j = nlohmann::json::parse(run_one(expand_inputs({dir.path()}), "cuda_gpu_kern_sum", OutputFormat::Json));
    CHECK(j["reports"]["cuda_gpu_kern_sum"]["rows"][0]["instances"] == 6);
    CHECK(j["inputs"].size() == 2);
    std::string text = run_one(expand_inputs({dir.path()}), "summary", OutputFormat::Table);
    CHECK(text.find("2 processes") != std::string::npos);
    CHECK(text.find("process 4343") != std::string::npos);
}

TEST_CASE("auto-scaled times follow nvprof", "[report]") {
    CHECK(format_time_auto(800) == "800ns");
    CHECK(format_time_auto(1280) == "1.2800us");
    CHECK(format_time_auto(496760) == "496.76us");
    CHECK(format_time_auto(4199100) == "4.1991ms");
    CHECK(format_time_auto(353.084e9) == "353.084s");
    CHECK(format_time_auto(19.2438e9) == "19.2438s");
}

TEST_CASE("csv quoting and one-table rule", "[report]") {
    CHECK(csv_quote("a,b") == "\"a,b\"");
    CHECK(csv_quote("say \"hi\"") == "\"say \"\"hi\"\"\"");
    TempDir dir;
    auto path = write_small_run(dir);
    ReportOptions o;
    o.reports = {"cuda_api_sum", "nvtx_sum"};
    o.format = OutputFormat::Csv;
    std::ostringstream out, err;
    CHECK_THROWS_AS(run_reports({path}, o, out, err), std::invalid_argument);
}
