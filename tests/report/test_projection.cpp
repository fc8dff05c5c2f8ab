// cuda_kern_exec_sum, nvtx_gpu_proj_sum and nvtx_kern_sum: hand-computed figures on the small run (report_fixture.h)
// and cross-checks on a real H100 trace (tests/data/h100/ka-static-nvtx: 60 "step" ranges, one kernel each, inside
// 3 "compute" ranges; 4 setup kernels in "setup"; an "async-window" start/end range around everything).
#include <catch2/catch.hpp>

#include <map>

#include "reports/reports.h"
#include "report_fixture.h"

using namespace gprof::testing;
using namespace gprof::report;
using nlohmann::json;

namespace {

// Rows of a table as JSON objects, keyed by `key_of`.
std::map<std::string, json> rows_by(const Table& t, const std::function<std::string(const json&)>& key_of) {
    std::map<std::string, json> out;
    json j = table_to_json(t);  // kept alive: a range-for over table_to_json(t)["rows"] would dangle
    for (const auto& r : j["rows"]) out[key_of(r)] = r;
    return out;
}

}  // namespace

TEST_CASE("cuda_kern_exec_sum: launch, queue, kernel and total per launching thread", "[report][projection]") {
    TempDir dir;
    write_small_run(dir);
    Run run = load_run({dir.path()});
    Table t = cuda_kern_exec_sum(run);
    REQUIRE(t.rows.size() == 2);
    auto rows = rows_by(t, [](const json& r) { return r["kernel_name"].get<std::string>(); });
    // Thread 100: calls of 5, 6, 7 us; kernels start 2, 1, 0 us after the call returns and run 20, 22, 24 us.
    const json& k = rows.at("kernel(float*, int)");
    CHECK(k["pid"] == 4242);
    CHECK(k["tid"] == 100);
    CHECK(k["device"] == 0);
    CHECK(k["count"] == 3);
    CHECK(k["queued_count"] == 2);
    CHECK(k["api_avg_ns"].get<double>() == Approx(6000));
    CHECK(k["queue_avg_ns"].get<double>() == Approx(1000));
    CHECK(k["queue_min_ns"] == 0);
    CHECK(k["kernel_avg_ns"].get<double>() == Approx(22000));
    CHECK(k["total_avg_ns"].get<double>() == Approx(29000));  // call start -> kernel end: 27, 29, 31 us
    CHECK(k["total_max_ns"] == 31000);
    CHECK(k["api_name"] == "cudaLaunchKernel");
    const json& o = rows.at("other_kernel()");
    CHECK(o["tid"] == 101);
    CHECK(o["device"] == 1);
    CHECK(o["total_avg_ns"].get<double>() == Approx(16000));  // call at 400 us -> kernel end at 416 us
    CHECK(o["queued_count"] == 1);
    // The kernel without a launching call is left out, and said.
    REQUIRE(t.notes.size() == 1);
    CHECK(t.notes[0].rfind("1 GPU operation without a launching API call", 0) == 0);
}

TEST_CASE("nvtx_gpu_proj_sum and nvtx_kern_sum on the small run", "[report][projection]") {
    TempDir dir;
    write_small_run(dir);
    Run run = load_run({dir.path()});
    auto proj = rows_by(nvtx_gpu_proj_sum(run), [](const json& r) { return r["range"].get<std::string>(); });
    // "step" launches a kernel, a memcpy and a memset: first op start +8 us -> last op end +54 us.
    REQUIRE(proj.count(":step"));
    CHECK(proj[":step"]["range_instances"] == 3);
    CHECK(proj[":step"]["total_proj_time_ns"] == 3 * 46000);
    CHECK(proj[":step"]["total_range_time_ns"] == 3 * 90000);
    CHECK(proj[":step"]["total_gpu_ops"] == 9);
    CHECK(proj[":step"]["avg_range_level"].get<double>() == Approx(0));
    CHECK(proj[":step"]["avg_num_child"].get<double>() == Approx(1));  // "forward"
    // "forward" (+0.5 .. +40 us) launches the kernel and the memcpy: +8 us -> +45 us.
    REQUIRE(proj.count(":forward"));
    CHECK(proj[":forward"]["total_proj_time_ns"] == 3 * 37000);
    CHECK(proj[":forward"]["total_gpu_ops"] == 6);
    CHECK(proj[":forward"]["avg_range_level"].get<double>() == Approx(1));
    CHECK(proj[":forward"]["proj_stddev_ns"].get<double>() == Approx(0));
    CHECK(proj.size() == 2);  // "data:load"/"data:decode" launched nothing on their thread

    Table kt = nvtx_kern_sum(run);
    REQUIRE(kt.rows.size() == 2);
    auto kern = rows_by(kt, [](const json& r) { return r["range"].get<std::string>() + "|" + r["kernel_name"].get<std::string>(); });
    for (const char* range : {":step", ":forward"}) {
        const json& r = kern.at(std::string(range) + "|kernel(float*, int)");
        CHECK(r["nvtx_instances"] == 3);
        CHECK(r["kernel_instances"] == 3);
        CHECK(r["total_time_ns"] == 66000);
        CHECK(r["tid"] == 100);
    }
}

TEST_CASE("projection reports on a real H100 trace agree with the kernel summary", "[report][projection][h100]") {
    const std::filesystem::path dir = std::filesystem::path(GPROF_SOURCE_DIR) / "tests/data/h100/ka-static-nvtx";
    Run run = load_run({dir});
    REQUIRE(run.processes.size() == 1);
    AggregateOptions ao;
    Aggregate agg = aggregate_run(find_traces(dir), ao);
    auto kernels = rows_by(cuda_gpu_kern_sum(agg), [](const json& r) { return r["name"].get<std::string>(); });
    REQUIRE(kernels.count("ka_nvtx_compute"));
    REQUIRE(kernels.count("ka_nvtx_setup"));

    auto kern = rows_by(nvtx_kern_sum(run), [](const json& r) { return r["range"].get<std::string>() + "|" + r["kernel_name"].get<std::string>(); });
    const json& step = kern.at(":step|ka_nvtx_compute");
    CHECK(step["nvtx_instances"] == 60);
    CHECK(step["kernel_instances"] == 60);  // expected.json: 60 compute kernels, one per step
    CHECK(step["total_time_ns"] == kernels["ka_nvtx_compute"]["total_time_ns"]);
    CHECK(kern.at(":compute|ka_nvtx_compute")["nvtx_instances"] == 3);
    CHECK(kern.at(":setup|ka_nvtx_setup")["kernel_instances"] == 4);
    CHECK(kern.at(":setup|ka_nvtx_setup")["total_time_ns"] == kernels["ka_nvtx_setup"]["total_time_ns"]);
    CHECK(kern.count(":step|ka_nvtx_setup") == 0);

    auto proj = rows_by(nvtx_gpu_proj_sum(run), [](const json& r) { return r["range"].get<std::string>(); });
    // One kernel per step: each step's projection is its kernel.
    CHECK(proj.at(":step")["total_proj_time_ns"] == kernels["ka_nvtx_compute"]["total_time_ns"]);
    CHECK(proj.at(":step")["range_instances"] == 60);
    CHECK(proj.at(":compute")["avg_num_child"].get<double>() == Approx(20));
    CHECK(proj.at(":step")["avg_range_level"].get<double>() == Approx(1));
    // A projection spans at least the GPU time it holds.
    CHECK(proj.at(":compute")["total_proj_time_ns"].get<int64_t>() >= kernels["ka_nvtx_compute"]["total_time_ns"].get<int64_t>());

    auto exec = table_to_json(cuda_kern_exec_sum(run))["rows"];
    int64_t launches = 0;
    for (const auto& r : exec) {
        launches += r["count"].get<int64_t>();
        CHECK(r["total_min_ns"].get<int64_t>() >= r["kernel_min_ns"].get<int64_t>());
        CHECK(r["total_min_ns"].get<int64_t>() >= r["api_min_ns"].get<int64_t>());
    }
    CHECK(launches == 64);
}
