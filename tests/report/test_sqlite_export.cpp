// gprof-report export --format sqlite: nsys's tables and columns, checked with the queries nsys users run
// (docs/sqlite-export.md) against the summary's own figures, on real H100 traces (tests/data/h100/).
#include <catch2/catch.hpp>

#include <sqlite3.h>
#include <sys/wait.h>

#include <fstream>
#include <map>

#include "export/sqlite.h"
#include "reports/reports.h"
#include "report_fixture.h"

using namespace gprof::testing;
using namespace gprof::report;
using nlohmann::json;

namespace {

const std::filesystem::path kH100 = std::filesystem::path(GPROF_SOURCE_DIR) / "tests/data/h100";

// Rows of a query as strings (NULL -> "NULL"), through the C API: the same SQL a user runs in sqlite3.
std::vector<std::vector<std::string>> query(const std::filesystem::path& db_path, const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    INFO(sqlite3_errmsg(db));
    REQUIRE(rc == SQLITE_OK);
    std::vector<std::vector<std::string>> rows;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        std::vector<std::string> row;
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
            auto* text = sqlite3_column_text(st, c);
            row.emplace_back(text ? reinterpret_cast<const char*>(text) : "NULL");
        }
        rows.push_back(std::move(row));
    }
    CHECK(rc == SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rows;
}

std::map<std::string, json> rows_by(const Table& t, const char* key) {
    json j = table_to_json(t);
    std::map<std::string, json> out;
    for (const auto& r : j["rows"]) out[r[key].get<std::string>()] = r;
    return out;
}

// The top-kernels query of nsys users (demangledName -> StringIds).
const char* kTopKernels = R"(
SELECT s.value AS kernel, COUNT(*) AS n, SUM(k.end - k.start) AS total_ns
FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
GROUP BY s.value ORDER BY total_ns DESC)";

// Per-NVTX-range GPU time: push/pop ranges projected through the launching call (kernels only), as written for
// nsys's export (globalTid / globalPid decoded with nsys's formula).
const char* kRangeGpuTime = R"(
WITH rng AS (SELECT e.rowid AS id, COALESCE(e.text, s.value) AS name, e.start, e.end, e.globalTid
  FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 AND e.end IS NOT NULL),
ops AS (SELECT r.globalTid, r.start AS api, k.start, k.end
  FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
  AND k.globalPid / 0x1000000 % 0x1000000 = r.globalTid / 0x1000000 % 0x1000000),
proj AS (SELECT rng.name, MIN(ops.start) AS b, MAX(ops.end) AS e, COUNT(*) AS nops FROM rng
  JOIN ops ON ops.globalTid = rng.globalTid AND ops.api BETWEEN rng.start AND rng.end GROUP BY rng.id)
SELECT name, COUNT(*) AS instances, SUM(e - b) AS proj_ns, SUM(nops) AS gpu_ops
FROM proj GROUP BY name ORDER BY proj_ns DESC)";

}  // namespace

TEST_CASE("sqlite export: nsys's queries agree with the summary on a real H100 trace", "[export][h100]") {
    TempDir dir;
    const auto run_dir = kH100 / "ka-static-nvtx";
    Run run = load_run({run_dir});
    auto db = dir.path() / "run.sqlite";
    SqliteExportStats st = export_sqlite(run, db);
    CHECK(st.rows > 300);

    AggregateOptions ao;
    Aggregate agg = aggregate_run(find_traces(run_dir), ao);
    auto kernels = rows_by(cuda_gpu_kern_sum(agg), "name");
    REQUIRE(kernels.size() == 2);
    auto top = query(db, kTopKernels);
    REQUIRE(top.size() == kernels.size());
    for (const auto& row : top) {
        INFO(row[0]);
        REQUIRE(kernels.count(row[0]));
        CHECK(std::stoll(row[1]) == kernels[row[0]]["instances"].get<int64_t>());
        CHECK(std::stoll(row[2]) == kernels[row[0]]["total_time_ns"].get<int64_t>());
    }
    CHECK(top[0][0] == "ka_nvtx_compute");  // 60 kernels, 61031 ns: the larger total

    auto proj = rows_by(nvtx_gpu_proj_sum(run), "range");
    auto sql_proj = query(db, kRangeGpuTime);
    REQUIRE(sql_proj.size() == 3);  // setup, compute, step (the start/end range is eventType 60)
    for (const auto& row : sql_proj) {
        INFO(row[0]);
        const json& r = proj.at(":" + row[0]);
        CHECK(std::stoll(row[1]) == r["range_instances"].get<int64_t>());
        CHECK(std::stoll(row[2]) == r["total_proj_time_ns"].get<int64_t>());
        CHECK(std::stoll(row[3]) == r["total_gpu_ops"].get<int64_t>());
    }

    // nvtx_sum's figures from NVTX_EVENTS: per-name count and total of closed ranges.
    auto nvtx = rows_by(nvtx_sum(agg), "range");
    auto ranges = query(db, "SELECT text, COUNT(*), SUM(end - start) FROM NVTX_EVENTS WHERE eventType IN (59, 60) "
                            "AND end IS NOT NULL AND domainId = 0 GROUP BY text");
    REQUIRE(ranges.size() == 4);  // setup, compute, step, async-window; domain-phase is in a named domain
    for (const auto& row : ranges) {
        INFO(row[0]);
        CHECK(std::stoll(row[1]) == nvtx.at(":" + row[0])["instances"].get<int64_t>());
        CHECK(std::stoll(row[2]) == nvtx.at(":" + row[0])["total_time_ns"].get<int64_t>());
    }
    auto domain = query(db, "SELECT d.text, e.text FROM NVTX_EVENTS e JOIN NVTX_EVENTS d ON d.eventType = 75 AND "
                            "d.domainId = e.domainId WHERE e.eventType = 59 AND e.domainId != 0");
    REQUIRE(domain.size() == 1);
    CHECK(domain[0] == std::vector<std::string>{"gprof-test-ka", "domain-phase"});

    // API calls: the summary's count of cudaLaunchKernel, runtime rows (eventClass 0) by nameId.
    auto api = rows_by(cuda_api_sum(agg), "name");
    auto launches = query(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                              "WHERE s.value = 'cudaLaunchKernel' AND r.eventClass = 0");
    CHECK(std::stoll(launches[0][0]) == api.at("cudaLaunchKernel")["num_calls"].get<int64_t>());

    // Device and process.
    auto gpu = query(db, "SELECT name, smCount, computeMajor FROM TARGET_INFO_GPU");
    REQUIRE(gpu.size() == 1);
    CHECK(gpu[0] == std::vector<std::string>{"NVIDIA H100 80GB HBM3", "132", "9"});
    auto proc = query(db, "SELECT pid, globalPid / 0x1000000 % 0x1000000 FROM PROCESSES");
    REQUIRE(proc.size() == 1);
    CHECK(proc[0][0] == std::to_string(run.processes[0].pid()));
    CHECK(proc[0][1] == proc[0][0]);
    auto meta = query(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'GPROF_EXPORT_SCHEMA_VERSION'");
    REQUIRE(meta.size() == 1);
    CHECK(meta[0][0] == std::to_string(kSqliteExportSchemaVersion));
}

TEST_CASE("sqlite export: memcpy, memset and several processes", "[export][h100]") {
    TempDir dir;
    {
        const auto run_dir = kH100 / "ka-static-memcpy";
        Run run = load_run({run_dir});
        auto db = dir.path() / "memcpy.sqlite";
        export_sqlite(run, db);
        AggregateOptions ao;
        Aggregate agg = aggregate_run(find_traces(run_dir), ao);
        // Bytes per copy direction, against cuda_gpu_mem_size_sum (nsys's operation names <-> copyKind).
        auto sizes = rows_by(cuda_gpu_mem_size_sum(agg), "operation");
        auto rows = query(db, "SELECT copyKind, COUNT(*), SUM(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY copyKind");
        REQUIRE_FALSE(rows.empty());
        const std::map<std::string, std::string> op = {{"1", "[CUDA memcpy Host-to-Device]"},
                                                       {"2", "[CUDA memcpy Device-to-Host]"},
                                                       {"8", "[CUDA memcpy Device-to-Device]"}};
        for (const auto& r : rows) {
            INFO("copyKind " << r[0]);
            REQUIRE(op.count(r[0]));
            const json& s = sizes.at(op.at(r[0]));
            CHECK(std::stoll(r[1]) == s["count"].get<int64_t>());
            CHECK(std::stoll(r[2]) == s["total_bytes"].get<int64_t>());
        }
        // Memory kinds use nsys's enum (PAGEABLE = 0, DEVICE = 2), not CUPTI's.
        auto kinds = query(db, "SELECT DISTINCT e.name FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEM_KIND e "
                               "ON e.id = m.dstKind WHERE m.copyKind = 1");
        REQUIRE(kinds.size() == 1);
        CHECK(kinds[0][0] == "CUDA_MEMOPR_MEMORY_KIND_DEVICE");
    }
    {
        const auto run_dir = kH100 / "ka-static-fork";
        Run run = load_run({run_dir});
        auto db = dir.path() / "fork.sqlite";
        export_sqlite(run, db);
        auto procs = query(db, "SELECT COUNT(*) FROM PROCESSES");
        CHECK(std::stoull(procs[0][0]) == run.processes.size());
        // Kernels per process, joined on globalPid: the parent's 30 and the CUDA child's 20 (expected.json).
        auto per = query(db, "SELECT p.pid, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PROCESSES p "
                             "ON p.globalPid = k.globalPid GROUP BY p.pid ORDER BY COUNT(*) DESC");
        REQUIRE(per.size() == 2);
        CHECK(per[0][1] == "30");
        CHECK(per[1][1] == "20");
    }
}

TEST_CASE("sqlite export: hostile names stay valid UTF-8, the CLI refuses to overwrite", "[export]") {
    TempDir dir;
    write_trace(
        dir.file("app.4545.gprof"),
        [](gprof::trace::TraceWriter& w) {
            using namespace gprof::trace;
            Nvtx n;
            n.tid = n.end_tid = 7;
            n.start = kT0 + 10;
            n.end = kT0 + 20;
            n.name = w.intern("bad\xff' \"x\"; DROP TABLE StringIds; --");
            w.add(n);
        },
        true, test_header(4545));
    Run run = load_run({dir.path()});
    auto db = dir.path() / "h.sqlite";
    export_sqlite(run, db);
    auto text = query(db, "SELECT text FROM NVTX_EVENTS WHERE eventType = 59");
    REQUIRE(text.size() == 1);
    CHECK(text[0][0] == "bad\xEF\xBF\xBD' \"x\"; DROP TABLE StringIds; --");
    CHECK(query(db, "SELECT COUNT(*) FROM StringIds").size() == 1);

    std::string exe = GPROF_REPORT_EXE;
    std::string cmd = exe + " export --format sqlite " + dir.path().string() + " -o " + db.string() + " 2>" +
                      dir.file("err");
    int rc = std::system(cmd.c_str());
    CHECK(WEXITSTATUS(rc) == 2);  // exists
    std::ifstream err(dir.file("err"));
    std::string line;
    std::getline(err, line);
    CHECK(line.find("gprof-report: error: cannot write") == 0);
    CHECK(line.find("exists (--force replaces it)") != std::string::npos);
    rc = std::system((exe + " export --format sqlite --force-overwrite=true " + dir.path().string() + " -o " +
                      db.string() + " 2>/dev/null").c_str());
    CHECK(WEXITSTATUS(rc) == 0);
    // A link planted at the output name: refused with --force-overwrite too; its target is left as it was.
    auto victim = dir.path() / "victim.txt";
    std::ofstream(victim) << "keep me";
    auto link = dir.path() / "planted.sqlite";
    std::filesystem::create_symlink(victim, link);
    rc = std::system((exe + " export --format sqlite --force-overwrite=true " + dir.path().string() + " -o " +
                      link.string() + " 2>" + dir.file("err2")).c_str());
    CHECK(WEXITSTATUS(rc) == 2);
    std::ifstream err2(dir.file("err2"));
    std::getline(err2, line);
    CHECK(line.find("is a symbolic link") != std::string::npos);
    std::ifstream kept(victim);
    std::string content;
    std::getline(kept, content);
    CHECK(content == "keep me");
    CHECK(std::filesystem::is_symlink(link));
    rc = std::system((exe + " export --format arrow " + dir.path().string() + " -o " + dir.file("x") + " 2>/dev/null").c_str());
    CHECK(WEXITSTATUS(rc) == 2);
}
