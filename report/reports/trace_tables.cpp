// The trace-style tables (cuda_gpu_trace, cuda_api_trace): one row per operation, from the loaded model.
#include "reports/reports.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include "model/names.h"
#include "model/resolved_call_sites.h"
#include "output/cli_options.h"
#include "output/suggest.h"
#include "output/text.h"
#include "gprof/trace/names.h"
#include "gprof/version.h"
#include "reports/key_lists.h"

namespace gprof::report {

using namespace gprof::trace;
using nlohmann::json;

// ----- trace-style tables ----------------------------------------------------------------------------------

namespace {

// One row of a trace-style table with its sort key: rows of every process, in time order, ties by pid.
struct TimedRow {
    int64_t start;
    int64_t pid;
    std::vector<Cell> cells;
};

void append_in_time_order(Table& t, std::vector<TimedRow>& rows) {
    std::stable_sort(rows.begin(), rows.end(), [](const TimedRow& a, const TimedRow& b) {
        return a.start != b.start ? a.start < b.start : a.pid < b.pid;
    });
    for (auto& r : rows) t.rows.push_back(std::move(r.cells));
}

}  // namespace

Table cuda_gpu_trace(const Run& run) {
    Table t;
    t.name = "cuda_gpu_trace";
    t.columns = {{"start_ns", "Start ({unit})", ColumnKind::TimeNs},   {"duration_ns", "Duration ({unit})", ColumnKind::TimeNs},
                 {"corr_id", "CorrId", ColumnKind::Count},             {"grid_x", "GrdX", ColumnKind::Count},
                 {"grid_y", "GrdY", ColumnKind::Count},                {"grid_z", "GrdZ", ColumnKind::Count},
                 {"block_x", "BlkX", ColumnKind::Count},               {"block_y", "BlkY", ColumnKind::Count},
                 {"block_z", "BlkZ", ColumnKind::Count},               {"registers_per_thread", "Reg/Trd", ColumnKind::Count},
                 {"static_shared_bytes", "StcSMem (MB)", ColumnKind::BytesMB},
                 {"dynamic_shared_bytes", "DymSMem (MB)", ColumnKind::BytesMB},
                 {"bytes", "Bytes (MB)", ColumnKind::BytesMB},         {"throughput_mb_per_s", "Throughput (MB/s)", ColumnKind::Number, 3},
                 {"src_mem_kind", "SrcMemKd", ColumnKind::Text},       {"dst_mem_kind", "DstMemKd", ColumnKind::Text},
                 {"device", "Device", ColumnKind::Count},              {"context", "Ctx", ColumnKind::Count},
                 {"stream", "Strm", ColumnKind::Count},                {"pid", "Pid", ColumnKind::Count},
                 {"name", "Name", ColumnKind::Text}};
    std::vector<TimedRow> rows;
    for (const auto& p : run.processes) {
        auto dur = [](Timestamp s, Timestamp e) { return static_cast<int64_t>(e > s ? e - s : 0); };
        for (const auto& k : p.kernels) {
            int64_t s = p.to_run_ns(k.start);
            rows.push_back({s, p.pid(), {s, dur(k.start, k.end), int64_t(k.correlation), int64_t(k.grid_x),
                                         int64_t(k.grid_y), int64_t(k.grid_z), int64_t(k.block_x), int64_t(k.block_y),
                                         int64_t(k.block_z), int64_t(k.registers_per_thread),
                                         int64_t(k.static_shared_bytes), int64_t(k.dynamic_shared_bytes), Cell{}, Cell{},
                                         Cell{}, Cell{}, int64_t(k.device), int64_t(k.context), int64_t(k.stream),
                                         int64_t(p.pid()), demangle(std::string(p.str(k.name)))}});
        }
        auto throughput = [](uint64_t bytes, int64_t d) -> Cell {
            if (d <= 0) return Cell{};
            return static_cast<double>(bytes) / static_cast<double>(d) * 1e3;  // bytes/ns = GB/s; x1000 = MB/s
        };
        for (const auto& m : p.memcpys) {
            int64_t s = p.to_run_ns(m.start), d = dur(m.start, m.end);
            rows.push_back({s, p.pid(), {s, d, int64_t(m.correlation), Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{},
                                         Cell{}, Cell{}, Cell{}, int64_t(m.bytes), throughput(m.bytes, d),
                                         std::string(memory_kind_name(m.src_kind)),
                                         std::string(memory_kind_name(m.dst_kind)), int64_t(m.device),
                                         int64_t(m.context), int64_t(m.stream), int64_t(p.pid()),
                                         memop_nsys_name(m.copy_kind)}});
        }
        for (const auto& m : p.memsets) {
            int64_t s = p.to_run_ns(m.start), d = dur(m.start, m.end);
            rows.push_back({s, p.pid(), {s, d, int64_t(m.correlation), Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{},
                                         Cell{}, Cell{}, Cell{}, int64_t(m.bytes), throughput(m.bytes, d),
                                         std::string(memory_kind_name(m.memory_kind)), Cell{}, int64_t(m.device),
                                         int64_t(m.context), int64_t(m.stream), int64_t(p.pid()),
                                         std::string("[CUDA memset]")}});
        }
        for (size_t i = 0; i < p.graph_launches.size(); ++i) {
            if (!p.graph_launch_is_gpu_work(i)) continue;  // its nodes are rows of their own
            const auto& g = p.graph_launches[i];
            int64_t s = p.to_run_ns(g.start);
            rows.push_back({s, p.pid(), {s, dur(g.start, g.end), int64_t(g.correlation), Cell{}, Cell{}, Cell{}, Cell{},
                                         Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{},
                                         int64_t(g.device), int64_t(g.context), int64_t(g.stream), int64_t(p.pid()),
                                         graph_row_name(g.graph_id)}});
        }
    }
    append_in_time_order(t, rows);
    return t;
}

Table cuda_api_trace(const Run& run) {
    Table t;
    t.name = "cuda_api_trace";
    t.columns = {{"start_ns", "Start ({unit})", ColumnKind::TimeNs}, {"duration_ns", "Duration ({unit})", ColumnKind::TimeNs},
                 {"name", "Name", ColumnKind::Text},                 {"result", "Result", ColumnKind::Count},
                 {"corr_id", "CorrID", ColumnKind::Count},           {"pid", "Pid", ColumnKind::Count},
                 {"tid", "Tid", ColumnKind::Count},                  {"thread_name", "Thread Name", ColumnKind::Text},
                 {"backtrace", "Backtrace", ColumnKind::Text}};
    std::vector<TimedRow> rows;
    for (const auto& p : run.processes) {
        std::unique_ptr<CallSites> sites;
        for (const auto& a : p.api_calls) {
            int64_t s = p.to_run_ns(a.start);
            Cell bt;
            if (const auto* b = p.backtrace_for_correlation(a.correlation)) {
                if (!sites) sites = std::make_unique<CallSites>(p);
                std::string text;
                for (const auto& f : sites->of(*b).frames) text += (text.empty() ? "" : " <- ") + f.text();
                bt = text;
            }
            rows.push_back({s, p.pid(), {s, static_cast<int64_t>(a.end > a.start ? a.end - a.start : 0),
                                         std::string(p.str(a.name)), int64_t(a.result), int64_t(a.correlation),
                                         int64_t(p.pid()), static_cast<int64_t>(a.tid),
                                         std::string(p.thread_name(a.tid)), bt}});
        }
    }
    append_in_time_order(t, rows);
    return t;
}

}  // namespace gprof::report
