// What real CUDA programs do that the first reports got wrong (issue #12): graphs traced graph by graph are GPU
// work, graph nodes each get their launch's arrow, memory kinds are kept apart with peaks and leaks, and the CUDA
// runtime's own driver calls stay out of the API tables. Small synthetic traces with exact answers; the real H100
// traces run through the same paths in tests/report/check_known_answers.py.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "analyze/analysis.h"
#include "gprof/trace/runtime_driver_calls.h"
#include "model/memory.h"
#include "reports/reports.h"
#include "timeline/model.h"
#include "timeline/timeline.h"
#include "report_fixture.h"

using namespace gprof::report;
using namespace gprof::testing;
using namespace gprof::trace;
using nlohmann::json;

namespace {

constexpr uint32_t kGraphLaunchCbid = 311;  // cudaGraphLaunch_v10000

json report_json(const std::vector<std::filesystem::path>& traces, const std::string& report, Filter filter = {}) {
    ReportOptions o;
    o.reports = {report};
    o.format = OutputFormat::Json;
    o.filter = filter;
    std::ostringstream out, err;
    REQUIRE(run_reports(traces, o, out, err) == 0);
    return json::parse(out.str());
}

std::string report_text(const std::vector<std::filesystem::path>& traces, const std::string& report) {
    ReportOptions o;
    o.reports = {report};
    std::ostringstream out, err;
    REQUIRE(run_reports(traces, o, out, err) == 0);
    return out.str();
}

ApiCall api(TraceWriter& w, const char* name, uint32_t corr, uint64_t start, uint64_t dur, uint32_t cbid = 0,
            ApiDomain domain = ApiDomain::Runtime) {
    ApiCall a;
    a.tid = 100;
    a.start = kT0 + start;
    a.end = kT0 + start + dur;
    a.correlation = corr;
    a.name = w.intern(name);
    a.cbid = cbid;
    a.domain = domain;
    w.add(a);
    return a;
}

// 3 launches of graph 7 traced graph by graph: one GraphLaunch record each, no node records.
void graph_level_run(TraceWriter& w) {
    for (uint32_t i = 0; i < 3; ++i) {
        uint64_t t = 10'000 + i * 100'000;
        api(w, "cudaGraphLaunch", 20 + i, t, 2'000, kGraphLaunchCbid);
        GraphLaunch g;
        g.start = kT0 + t + 5'000;
        g.end = g.start + 40'000;
        g.device = 0;
        g.stream = 13;
        g.correlation = 20 + i;
        g.graph_id = 7;
        w.add(g);
    }
}

// 2 launches of a graph of 2 kernels and a memset, node by node: every node carries its launch's correlation.
void node_level_run(TraceWriter& w, bool with_launch_records) {
    const StringId ka = w.intern("ka_graph_a"), kb = w.intern("ka_graph_b");
    for (uint32_t i = 0; i < 2; ++i) {
        uint64_t t = 10'000 + i * 100'000;
        uint32_t corr = 30 + i;
        api(w, "cudaGraphLaunch", corr, t, 2'000, kGraphLaunchCbid);
        for (uint32_t n = 0; n < 2; ++n) {
            Kernel k;
            k.start = kT0 + t + 5'000 + n * 10'000;
            k.end = k.start + 8'000;
            k.stream = 13;
            k.correlation = corr;
            k.name = n ? kb : ka;
            k.grid_x = k.grid_y = k.grid_z = 1;
            k.block_x = 64;
            k.block_y = k.block_z = 1;
            k.graph_id = 7;
            k.graph_node_id = 100 + n;
            w.add(k);
        }
        Memset m;
        m.start = kT0 + t + 30'000;
        m.end = m.start + 1'000;
        m.bytes = 256;
        m.stream = 13;
        m.correlation = corr;
        m.graph_id = 7;
        m.graph_node_id = 102;
        w.add(m);
        if (with_launch_records) {  // a trace holding both: the launch only groups its nodes
            GraphLaunch g;
            g.start = kT0 + t + 5'000;
            g.end = kT0 + t + 31'000;
            g.stream = 13;
            g.correlation = corr;
            g.graph_id = 7;
            w.add(g);
        }
    }
}

Memory mem(uint64_t ts, MemoryOp op, MemoryKind kind, uint64_t address, uint64_t bytes, uint32_t corr = 0) {
    Memory m;
    m.timestamp = kT0 + ts;
    m.op = op;
    m.memory_kind = kind;
    m.address = address;
    m.bytes = bytes;
    m.correlation = corr;
    return m;
}

constexpr uint64_t MiB = 1ull << 20;

// Device 64 MiB, pinned host 8 MiB (issue #12: this one raised "device memory in use"), managed 4 MiB, a module
// static, a cudaMallocAsync 16 MiB out of a pool that is then trimmed, and a 2 MiB device allocation never freed.
void memory_run(TraceWriter& w) {
    api(w, "cudaMalloc", 40, 1'000, 500);
    w.add(mem(1'000, MemoryOp::Allocation, MemoryKind::Device, 0x10000000, 64 * MiB, 40));
    api(w, "cudaMallocHost", 41, 2'000, 500);
    w.add(mem(2'000, MemoryOp::Allocation, MemoryKind::Pinned, 0x20000000, 8 * MiB, 41));
    w.add(mem(2'500, MemoryOp::Allocation, MemoryKind::Managed, 0x30000000, 4 * MiB));
    w.add(mem(2'600, MemoryOp::Allocation, MemoryKind::DeviceStatic, 0x38000000, 1024));
    api(w, "cudaMalloc", 42, 3'000, 500);
    w.add(mem(3'000, MemoryOp::Allocation, MemoryKind::Device, 0x40000000, 2 * MiB, 42));
    MemoryPool created;
    created.timestamp = kT0 + 4'000;
    created.address = 0x50000000;
    created.op = MemoryPoolOp::Created;
    created.pool_type = MemoryPoolType::Local;
    created.size = 32 * MiB;
    w.add(created);
    Memory async = mem(4'000, MemoryOp::Allocation, MemoryKind::Device, 0x50000000, 16 * MiB);
    async.async = 1;
    async.pool_type = MemoryPoolType::Local;
    async.pool_address = 0x50000000;
    async.pool_size = 32 * MiB;
    async.pool_used = 16 * MiB;
    w.add(async);
    async.timestamp = kT0 + 5'000;
    async.op = MemoryOp::Release;
    async.pool_used = 0;
    w.add(async);
    MemoryPool trimmed = created;
    trimmed.timestamp = kT0 + 6'000;
    trimmed.op = MemoryPoolOp::Trimmed;
    trimmed.size = 0;
    w.add(trimmed);
    w.add(mem(7'000, MemoryOp::Release, MemoryKind::Device, 0x10000000, 64 * MiB));
    w.add(mem(8'000, MemoryOp::Release, MemoryKind::Pinned, 0x20000000, 8 * MiB));
    w.add(mem(8'500, MemoryOp::Release, MemoryKind::Managed, 0x30000000, 4 * MiB));
    // A release of memory allocated before recording began: counted, subtracted from nothing.
    w.add(mem(9'000, MemoryOp::Release, MemoryKind::Device, 0x60000000, 1 * MiB));
}

const json* row_named(const json& rows, const std::string& key, const std::string& value) {
    for (const auto& r : rows)
        if (r.contains(key) && r[key] == value) return &r;
    return nullptr;
}

}  // namespace

TEST_CASE("graphs traced graph by graph are GPU work in every report", "[report][graphs]") {
    TempDir dir;
    std::string path = dir.file("app.1.gprof");
    write_trace(path, graph_level_run);

    json sum = report_json({path}, "summary");
    const json* row = row_named(sum["reports"]["summary"]["rows"], "name", "[CUDA graph 7]");
    REQUIRE(row);
    CHECK((*row)["type"] == "GPU activities");
    CHECK((*row)["calls"] == 3);
    CHECK((*row)["total_time_ns"] == 120'000);
    CHECK(report_text({path}, "summary").find("no CUDA activity") == std::string::npos);

    json gpu = report_json({path}, "cuda_gpu_sum");
    row = row_named(gpu["reports"]["cuda_gpu_sum"]["rows"], "category", "CUDA_GRAPH");
    REQUIRE(row);
    CHECK((*row)["instances"] == 3);
    CHECK((*row)["operation"] == "[CUDA graph 7]");
    json trace = report_json({path}, "cuda_gpu_trace");
    REQUIRE(trace["reports"]["cuda_gpu_trace"]["rows"].size() == 3);
    CHECK(trace["reports"]["cuda_gpu_trace"]["rows"][0]["corr_id"] == 20);
    CHECK(trace["reports"]["cuda_gpu_trace"]["rows"][0]["stream"] == 13);
    // kernels only, like nsys
    CHECK(report_json({path}, "cuda_gpu_kern_sum")["reports"]["cuda_gpu_kern_sum"]["rows"].empty());

    Run run = load_run({path});
    REQUIRE(run.processes.size() == 1);
    CHECK(run.processes[0].graph_launch_is_gpu_work(0));
    AnalysisResult a = analyze_run(run, {});
    REQUIRE(a.devices.size() == 1);
    CHECK(a.devices[0].graph_ns == 120'000);
    CHECK(a.devices[0].busy_ns == 120'000);
    CHECK(a.verdict != Verdict::NoGpuWork);

    // On its stream, with the arrow from its cudaGraphLaunch.
    timeline::ModelOptions mo;
    mo.analysis_track = false;
    timeline::TimelineModel m = timeline::build_timeline_model(run, mo);
    int graph_slices = 0;
    for (uint32_t i = 0; i < m.slices.size(); ++i) {
        const auto& s = m.slices[i];
        if (s.category != timeline::Category::CudaGraph) continue;
        ++graph_slices;
        CHECK(m.tracks[s.track].kind == timeline::TrackKind::GpuStream);
        CHECK(m.tracks[s.track].stream == 13);
        REQUIRE(s.flow != timeline::kNone);
        CHECK(m.flows[s.flow].to == i);
        CHECK(m.slices[m.flows[s.flow].from].source == timeline::SliceSource::Api);
    }
    CHECK(graph_slices == 3);
    CHECK(m.flows.size() == 3);
}

TEST_CASE("graph nodes: one arrow from cudaGraphLaunch to each node, and a launch with nodes is not counted twice",
          "[report][graphs]") {
    for (bool with_launch_records : {false, true}) {
        DYNAMIC_SECTION("GraphLaunch records too: " << with_launch_records) {
            TempDir dir;
            std::string path = dir.file("app.1.gprof");
            write_trace(path, [&](TraceWriter& w) { node_level_run(w, with_launch_records); });
            Run run = load_run({path});
            const ProcessTrace& p = run.processes[0];
            for (size_t i = 0; i < p.graph_launches.size(); ++i) CHECK_FALSE(p.graph_launch_is_gpu_work(i));
            json gpu = report_json({path}, "cuda_gpu_sum");
            CHECK(row_named(gpu["reports"]["cuda_gpu_sum"]["rows"], "category", "CUDA_GRAPH") == nullptr);
            json kern = report_json({path}, "cuda_gpu_kern_sum");
            CHECK(kern["reports"]["cuda_gpu_kern_sum"]["rows"].size() == 2);
            AnalysisResult a = analyze_run(run, {});
            REQUIRE(a.devices.size() == 1);
            CHECK(a.devices[0].graph_ns == 0);

            timeline::ModelOptions mo;
            mo.analysis_track = false;
            timeline::TimelineModel m = timeline::build_timeline_model(run, mo);
            // 2 launches x 3 nodes: six arrows, three from each cudaGraphLaunch, unique ids.
            REQUIRE(m.flows.size() == 6);
            std::set<uint64_t> ids;
            std::map<uint32_t, int> per_launch;
            for (const auto& f : m.flows) {
                ids.insert(f.id);
                ++per_launch[f.from];
                CHECK(m.slices[f.from].source == timeline::SliceSource::Api);
                CHECK(m.slices[f.to].source != timeline::SliceSource::GraphLaunch);
            }
            CHECK(ids.size() == 6);
            CHECK(per_launch.size() == 2);
            for (const auto& [from, n] : per_launch) {
                CHECK(n == 3);
                int walked = 0;
                timeline::for_each_flow(m.flows, m.slices[from].flow, from, [&](const timeline::Flow&) { ++walked; });
                CHECK(walked == 3);
            }
            // Both encoders write every arrow: the JSON's flow events pair up.
            std::string text;
            TimelineOptions to;
            to.analysis_track = false;
            TimelineStats st = timeline_to_string(run, text, to);
            CHECK(st.flows == 6);
            json doc = json::parse(text);
            int starts = 0, ends = 0;
            for (const auto& e : doc["traceEvents"]) {
                if (e["ph"] == "s") ++starts;
                if (e["ph"] == "f") ++ends;
            }
            CHECK(starts == 6);
            CHECK(ends == 6);
            std::string pf;
            TimelineOptions po;
            po.analysis_track = false;
            po.format = TimelineFormat::Perfetto;
            CHECK(timeline_to_string(run, pf, po).flows == 6);
        }
    }
}

TEST_CASE("memory ledger: kinds apart, peaks, pools, leaks", "[report][memory]") {
    TempDir dir;
    std::string path = dir.file("app.1.gprof");
    write_trace(path, memory_run);
    Run run = load_run({path});
    const ProcessTrace& p = run.processes[0];
    REQUIRE(p.memory_pools.size() == 2);
    MemoryLedger ledger;
    std::vector<MemorySample> samples;
    ledger.on_sample = [&](const MemorySample& s) { samples.push_back(s); };
    CHECK(replay_memory(ledger, p.memory, p.memory_pools) == 0);
    std::map<MemoryBudget, BudgetUsage> by;
    for (const auto& u : ledger.budgets()) by[u.budget] = u;
    CHECK(by[MemoryBudget::Device].allocations == 2);
    CHECK(by[MemoryBudget::Device].allocated_bytes == 66 * MiB);
    CHECK(by[MemoryBudget::Device].releases == 1);
    CHECK(by[MemoryBudget::Device].peak_bytes == 66 * MiB);
    CHECK(by[MemoryBudget::Device].live_count == 1);
    CHECK(by[MemoryBudget::Device].live_bytes == 2 * MiB);
    CHECK(by[MemoryBudget::Device].unmatched_releases == 1);
    CHECK(by[MemoryBudget::PinnedHost].peak_bytes == 8 * MiB);
    CHECK(by[MemoryBudget::PinnedHost].live_count == 0);
    CHECK(by[MemoryBudget::Managed].peak_bytes == 4 * MiB);
    CHECK(by[MemoryBudget::Pool].peak_bytes == 16 * MiB);
    CHECK(by[MemoryBudget::Static].live_count == 1);
    auto peaks = ledger.device_peaks();
    REQUIRE(peaks.size() == 1);
    // device 64 + 2 MiB, pool 16 MiB and the 1 KiB static at 4 us; pinned host and managed memory are not in it
    CHECK(peaks[0].peak_bytes == 82 * MiB + 1024);
    CHECK(peaks[0].peak_at == kT0 + 4'000);
    CHECK(peaks[0].pool_reserved_peak == 32 * MiB);
    auto live = ledger.live();
    REQUIRE(live.size() == 1);  // the static is not a leak
    CHECK(live[0].address == 0x40000000);
    // The trim gave the pool's reservation back.
    bool reserved_zero = false;
    for (const auto& s : samples)
        if (s.pool_reserved) reserved_zero = s.bytes == 0;
    CHECK(reserved_zero);
}

TEST_CASE("memory report and summary line", "[report][memory]") {
    TempDir dir;
    std::string path = dir.file("app.1.gprof");
    write_trace(path, memory_run);
    json j = report_json({path}, "memory")["reports"]["memory"];
    const json* device = nullptr;
    for (const auto& r : j["rows"])
        if (r["kind"] == "device") device = &r;
    REQUIRE(device);
    CHECK((*device)["allocations"] == 2);
    CHECK((*device)["live_bytes"] == 2 * MiB);
    CHECK((*device)["peak_ns"] == 3'000);
    REQUIRE(j["devices"].size() == 1);
    CHECK(j["devices"][0]["peak_bytes"] == 82 * MiB + 1024);
    CHECK(j["devices"][0]["peak_ns"] == 4'000);
    REQUIRE(j["live_allocations"].size() == 1);
    CHECK(j["live_allocations"][0]["api"] == "cudaMalloc");
    CHECK(j["live_allocations"][0]["bytes"] == 2 * MiB);
    CHECK(j["live_allocations"][0]["address"] == "0x40000000");
    REQUIRE(j["pool_operations"].size() == 2);
    CHECK(j["pool_operations"][1]["op"] == "trimmed");

    std::string text = report_text({path}, "summary");
    CHECK(text.find("memory: GPU 0 peak 82.00 MiB in use at +4.0000us (async pools reserved up to 32.00 MiB); "
                    "pinned host peak 8.00 MiB; managed peak 4.00 MiB; 1 allocation (2.00 MiB) never freed") !=
          std::string::npos);
    std::string mt = report_text({path}, "memory");
    CHECK(mt.find("Still allocated when the trace ended") != std::string::npos);
    CHECK(mt.find("0x40000000") != std::string::npos);

    // The timeline's counters: one per device and kind, pinned host apart from device memory.
    Run run = load_run({path});
    timeline::ModelOptions mo;
    mo.analysis_track = false;
    timeline::TimelineModel m = timeline::build_timeline_model(run, mo);
    std::map<std::string, int64_t> max_of;
    for (const auto& c : m.counters) max_of[m.tracks[c.track].name] = std::max(max_of[m.tracks[c.track].name], c.value);
    CHECK(max_of["Device memory in use"] == int64_t(66 * MiB));
    CHECK(max_of["Pinned host memory in use"] == int64_t(8 * MiB));
    CHECK(max_of["Managed memory in use"] == int64_t(4 * MiB));
    CHECK(max_of["Device memory in use (async pools)"] == int64_t(16 * MiB));
    CHECK(max_of["Async pool memory reserved"] == int64_t(32 * MiB));
}

TEST_CASE("the CUDA runtime's own driver calls stay out of API tables unless asked for", "[report][api]") {
    auto fill = [](TraceWriter& w) {
        for (uint32_t i = 0; i < 4; ++i) {
            api(w, "cuKernelGetName", 0, 1'000 + i * 10'000, 100, 719, ApiDomain::Driver);  // just before the launch
            api(w, "cudaLaunchKernel", 50 + i, 1'200 + i * 10'000, 3'000, 211);
        }
        api(w, "cuLaunchKernel", 60, 50'000, 2'000, 307, ApiDomain::Driver);  // the program's own: always shown
    };
    TempDir dir;
    std::string old_trace = dir.file("old.1.gprof");
    write_trace(old_trace, fill);
    std::string kept = dir.file("kept.2.gprof");
    HeaderInfo h = test_header(2);
    h.features |= kFeatureNestedDriverCalls;
    write_trace(kept, fill, true, h);

    auto names = [](const json& doc, const std::string& report) {
        std::map<std::string, int64_t> n;
        for (const auto& r : doc["reports"][report]["rows"]) n[r["name"]] += r.contains("num_calls") ? r["num_calls"].get<int64_t>() : 1;
        return n;
    };
    auto sum = names(report_json({old_trace}, "cuda_api_sum"), "cuda_api_sum");
    CHECK(sum.count("cuKernelGetName") == 0);
    CHECK(sum["cudaLaunchKernel"] == 4);
    CHECK(sum["cuLaunchKernel"] == 1);
    CHECK(names(report_json({old_trace}, "cuda_api_trace"), "cuda_api_trace").count("cuKernelGetName") == 0);
    json s = report_json({old_trace}, "summary");
    CHECK(s["reports"]["summary"]["header"]["hidden_driver_calls"] == 4);
    CHECK(report_text({old_trace}, "summary").find("4 driver calls the CUDA runtime made itself") != std::string::npos);

    Filter show;
    show.nested_driver_calls = true;
    CHECK(names(report_json({old_trace}, "cuda_api_sum", show), "cuda_api_sum")["cuKernelGetName"] == 4);
    // Kept on request at record time: shown.
    CHECK(names(report_json({kept}, "cuda_api_sum"), "cuda_api_sum")["cuKernelGetName"] == 4);

    // analyze's API figures and the timeline read the same filtered model.
    Run run = load_run({old_trace});
    REQUIRE(run.processes[0].hidden_driver_calls == 4);
    for (const auto& a : run.processes[0].api_calls) CHECK_FALSE(is_runtime_internal_driver_call(a));
    std::string text;
    TimelineOptions to;
    to.analysis_track = false;
    TimelineStats st = timeline_to_string(run, text, to);
    bool said = false;
    for (const auto& w : st.warnings) said |= w.find("4 driver calls the CUDA runtime made itself") != std::string::npos;
    CHECK(said);
    CHECK(text.find("cuKernelGetName") == std::string::npos);
}
