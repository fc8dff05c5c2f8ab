// NVTX end to end: test_nvtx_app runs with the collector injected through the real NVTX loader
// (NVTX_INJECTION64_PATH) and LD_PRELOAD; its trace is read back with TraceReader.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "collector_run.h"

using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

LoadedTrace run_one(TempDir& dir, const std::vector<std::string>& args, RunResult* result = nullptr) {
    std::vector<std::string> argv{test_program("test_nvtx_app")};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run_program(argv, collector_env(dir.path().string()), dir.path().string());
    if (result) *result = r;
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    return load_trace(traces[0].string());
}

}  // namespace

TEST_CASE("header names the process / never the environment") {
    TempDir dir;
    RunResult r;
    LoadedTrace t = run_one(dir, {"nested"}, &r);
    CHECK(r.exit_code() == 0);
    CHECK(t.header.run_id == "test-run-id");
    CHECK(t.header.executable == test_program("test_nvtx_app"));
    REQUIRE(t.header.argv.size() == 2);
    CHECK(t.header.argv[1] == "nested");
    CHECK(t.header.pid > 0);
    CHECK(t.header.clock.clock == tr::TraceClock::Monotonic);
    CHECK(t.header.clock.realtime_ns > 0);
    CHECK(t.stats.has_end);
    CHECK(t.warnings.empty());
    auto name = traces_in(dir.path().string())[0].filename().string();
    CHECK(name == "test_nvtx_app." + std::to_string(t.header.pid) + ".gprof");
    // Modules: the program itself and the collector, with build ids.
    bool exe = false;
    for (auto& rec : t.records)
        if (rec.kind == tr::RecordKind::Module && t.str(rec.module.path) == test_program("test_nvtx_app"))
            exe = rec.module.build_id_size > 0;
    CHECK(exe);
}

TEST_CASE("nested push/pop ranges / marks and wide strings") {
    TempDir dir;
    LoadedTrace t = run_one(dir, {"nested"});
    auto outer = t.nvtx_named("outer"), middle = t.nvtx_named("middle"), inner = t.nvtx_named("inner");
    REQUIRE(outer.size() == 1);
    REQUIRE(middle.size() == 1);
    REQUIRE(inner.size() == 1);
    CHECK(outer[0].depth == 0);
    CHECK(middle[0].depth == 1);
    CHECK(inner[0].depth == 2);
    CHECK(outer[0].start <= middle[0].start);
    CHECK(middle[0].start <= inner[0].start);
    CHECK(inner[0].end <= middle[0].end);
    CHECK(middle[0].end <= outer[0].end);
    CHECK(inner[0].start <= inner[0].end);
    CHECK(outer[0].type == tr::NvtxType::PushPop);
    auto mark = t.nvtx_named("mark-a");
    REQUIRE(mark.size() == 1);
    CHECK(mark[0].type == tr::NvtxType::Mark);
    CHECK(mark[0].end == mark[0].start);
    CHECK(t.nvtx_named("wide-\xc3\xa9t\xc3\xa9").size() == 1);
    CHECK(t.dropped(tr::DropSource::NvtxOverflow) == 0);
}

TEST_CASE("several threads / thread names / start/end across threads") {
    TempDir dir;
    LoadedTrace t = run_one(dir, {"threads"});
    std::map<uint64_t, std::string> names;
    for (auto& r : t.records)
        if (r.kind == tr::RecordKind::Thread) names[r.thread.tid] = t.str(r.thread.name);
    std::set<uint64_t> worker_tids;
    for (int w = 0; w < 4; ++w) {
        std::string name = "worker-" + std::to_string(w);
        auto rs = t.nvtx_named(name);
        REQUIRE(rs.size() == 1000);
        uint64_t tid = rs[0].tid;
        CHECK(std::all_of(rs.begin(), rs.end(), [&](auto& n) { return n.tid == tid && n.depth == 0; }));
        CHECK(names[tid] == name);  // nvtxNameOsThreadA wins over /proc comm
        worker_tids.insert(tid);
    }
    CHECK(worker_tids.size() == 4);
    auto inner = t.nvtx_named("inner");
    CHECK(inner.size() == 4000);
    CHECK(std::all_of(inner.begin(), inner.end(), [](auto& n) { return n.depth == 1; }));
    CHECK(names[static_cast<uint64_t>(t.header.pid)] == "main-thread");

    auto cross = t.nvtx_named("cross-thread");
    REQUIRE(cross.size() == 1);
    CHECK(cross[0].type == tr::NvtxType::StartEnd);
    CHECK(cross[0].tid == static_cast<uint64_t>(t.header.pid));
    CHECK(cross[0].end_tid != cross[0].tid);
    CHECK(cross[0].end >= cross[0].start);
    CHECK(cross[0].end != 0);
}

TEST_CASE("a thread that names itself and ends before the process keeps its name (issue 30)") {
    TempDir dir;
    LoadedTrace t = run_one(dir, {"named-workers"});
    std::map<uint64_t, std::string> names;
    for (auto& r : t.records)
        if (r.kind == tr::RecordKind::Thread) names[r.thread.tid] = t.str(r.thread.name);
    auto ranges = t.nvtx_named("load-batch");
    REQUIRE(ranges.size() == 1);
    CHECK(names[ranges[0].tid] == "dl-worker-0");  // read as the thread ended
}

TEST_CASE("domains / registered strings / categories / colors and payloads") {
    TempDir dir;
    LoadedTrace t = run_one(dir, {"domains"});
    auto reg = t.nvtx_named("registered-name");
    REQUIRE(reg.size() == 1);
    CHECK(t.str(reg[0].domain) == "my-domain");
    CHECK(reg[0].color == 0xFF00FF00u);
    CHECK(reg[0].category == 7);
    CHECK(t.str(reg[0].category_name) == "io");
    CHECK(reg[0].payload_type == tr::NvtxPayload::U64);
    CHECK(reg[0].payload == 424242);

    auto mark = t.nvtx_named("domain-mark");
    REQUIRE(mark.size() == 1);
    CHECK(mark[0].type == tr::NvtxType::Mark);
    CHECK(mark[0].payload_type == tr::NvtxPayload::Double);
    double d;
    std::memcpy(&d, &mark[0].payload, 8);
    CHECK(d == 2.5);

    auto se = t.nvtx_named("domain-startend");
    REQUIRE(se.size() == 1);
    CHECK(se[0].type == tr::NvtxType::StartEnd);
    CHECK(t.str(se[0].domain) == "my-domain");
    CHECK(se[0].end >= se[0].start);

    auto ex = t.nvtx_named("default-ex");
    REQUIRE(ex.size() == 1);
    CHECK(ex[0].domain == 0);
    CHECK(t.str(ex[0].category_name) == "default-cat");
    CHECK(ex[0].color == 0xFFFF0000u);
    CHECK(ex[0].payload_type == tr::NvtxPayload::I32);
    CHECK(static_cast<int64_t>(ex[0].payload) == -5);
}

TEST_CASE("200 000 ranges / none lost") {
    TempDir dir;
    RunResult r;
    LoadedTrace t = run_one(dir, {"many", "200000"}, &r);
    CHECK(r.out == "many done 200000\n");
    CHECK(t.nvtx_named("r").size() == 200000);
    CHECK(t.dropped(tr::DropSource::CollectorQueue) == 0);
    CHECK(t.dropped(tr::DropSource::NvtxOverflow) == 0);
    CHECK(t.stats.has_end);
}

TEST_CASE("2 threads x 100 000 pairs in a real program / all recorded, blocks reused, memory said") {
    // bench/nvtx_real_process's measured program, under the collector: its speed is measured by the bench (figures in
    // docs/performance.md); here that what it measures is complete and that the collector's memory stayed bounded.
    TempDir dir;
    RunResult r = run_program({test_program("test_nvtx_pairs"), "--child", "2", "100000"},
                              collector_env(dir.path().string()), dir.path().string());
    CHECK(r.exit_code() == 0);
    CHECK(r.out.rfind("NVTX_REAL {", 0) == 0);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(t.nvtx_named("step").size() == 200000);
    CHECK(t.nvtx_named("thread-start").size() == 2);
    CHECK(t.dropped(tr::DropSource::CollectorQueue) == 0);
    CHECK(t.dropped(tr::DropSource::NvtxOverflow) == 0);
    // The end-of-run line: written after the last drain, so nothing is left held but the streams' last blocks.
    std::string memory;
    for (const auto& s : t.statuses())
        if (t.str(s.message).rfind("collector memory: ", 0) == 0) memory = std::string(t.str(s.message));
    INFO(memory);
    REQUIRE(!memory.empty());
    CHECK(memory.find("(cap 512.0 MiB)") != std::string::npos);
    CHECK(memory.find("no CUPTI buffer") != std::string::npos);
    CHECK(memory.find("writer thread CPU ") != std::string::npos);
    CHECK(memory.find("refused") == std::string::npos);
    // 200 000 pairs of 32 bytes (a 24-byte push of "step", an 8-byte pop) need 25 blocks of 256 KiB;
    // "N blocks new, M reused" adds up to at least that.
    auto number_before = [&](const std::string& what) {
        size_t p = memory.find(what);
        REQUIRE(p != std::string::npos);
        size_t b = memory.rfind(' ', p - 1);
        return std::stoul(memory.substr(b + 1, p - b - 1));
    };
    CHECK(number_before(" blocks new") + number_before(" reused") >= 25);
}

TEST_CASE("ranges open at exit are written with end = 0 and counted") {
    TempDir dir;
    RunResult r;
    LoadedTrace t = run_one(dir, {"open"}, &r);
    CHECK(r.exit_code() == 7);
    auto a = t.nvtx_named("never-popped"), b = t.nvtx_named("never-ended");
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(a[0].end == 0);
    CHECK(b[0].end == 0);
    CHECK(t.dropped(tr::DropSource::NvtxOverflow) == 2);
}

TEST_CASE("GPROF_TRACE without nvtx leaves NVTX untraced") {
    TempDir dir;
    auto env = collector_env(dir.path().string());
    env["GPROF_TRACE"] = "cuda";
    RunResult r = run_program({test_program("test_nvtx_app"), "nested"}, env, dir.path().string());
    CHECK(r.exit_code() == 0);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    CHECK(load_trace(traces[0].string()).nvtx().empty());
}
