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
#include "model/call_sites.h"
#include "output/cli_options.h"
#include "output/suggest.h"
#include "output/text.h"
#include "gprof/trace/names.h"
#include "gprof/version.h"

namespace gprof::report {

using namespace gprof::trace;
using nlohmann::json;

namespace {

// THE list of named reports: its name on the command line, its title, and the table it makes, either from the
// streamed aggregate (summaries: bounded memory) or from the whole loaded model (traces, memory). Names, --help,
// dispatch and titles all come from here; a new report is one line.
struct ReportDef {
    const char* name;
    const char* title;
    Table (*from_aggregate)(const Aggregate&);  // exactly one of the two is set
    Table (*from_run)(const Run&);
};

const ReportDef kReports[] = {
    {"summary", "Profiling result", summary_table, nullptr},
    {"cuda_api_sum", "CUDA API Summary", cuda_api_sum, nullptr},
    {"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", cuda_gpu_kern_sum, nullptr},
    {"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", cuda_gpu_mem_time_sum, nullptr},
    {"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", cuda_gpu_mem_size_sum, nullptr},
    {"nvtx_sum", "NVTX Range Summary", nvtx_sum, nullptr},
    {"cuda_gpu_trace", "CUDA GPU Trace", nullptr, cuda_gpu_trace},
    {"cuda_api_trace", "CUDA API Trace", nullptr, cuda_api_trace},
    {"cuda_gpu_sum", "CUDA GPU Summary (Kernels/MemOps/Graphs)", cuda_gpu_sum, nullptr},
    {"cuda_kern_exec_sum", "CUDA Kernel Launch & Exec Time Summary", nullptr, cuda_kern_exec_sum},
    {"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary", nullptr, nvtx_gpu_proj_sum},
    {"nvtx_kern_sum", "NVTX Range Kernel Summary", nullptr, nvtx_kern_sum},
    {"memory", "CUDA Memory: allocations by kind, peaks, still allocated at exit", nullptr, memory_table},
    {"cuda_callsite_sum", "CUDA Call Sites (by kernel time, sync time, memcpy bytes)", nullptr, cuda_callsite_sum},
};

// nsys's names from before its 2023 rename, still in many scripts: old name -> today's (which may be one of the
// reports below that gprof-run cannot make, then the reason says why).
const std::pair<const char*, const char*> kOldNames[] = {
    {"cudaapisum", "cuda_api_sum"},       {"cudaapitrace", "cuda_api_trace"},   {"gpukernsum", "cuda_gpu_kern_sum"},
    {"gpumemtimesum", "cuda_gpu_mem_time_sum"}, {"gpumemsizesum", "cuda_gpu_mem_size_sum"}, {"gpusum", "cuda_gpu_sum"},
    {"gputrace", "cuda_gpu_trace"},       {"apigpusum", "cuda_api_gpu_sum"},    {"kernexecsum", "cuda_kern_exec_sum"},
    {"kernexectrace", "cuda_kern_exec_trace"}, {"nvtxsum", "nvtx_sum"},       {"nvtxppsum", "nvtx_pushpop_sum"},
    {"nvtxpptrace", "nvtx_pushpop_trace"}, {"nvtxsesum", "nvtx_startend_sum"}, {"nvtxkernsum", "nvtx_kern_sum"},
    {"nvtxgpuproj", "nvtx_gpu_proj_sum"}, {"osrtsum", "osrt_sum"},            {"openmpevtsum", "openmp_sum"},
    {"openaccsum", "openacc_sum"},        {"unifiedmemory", "um_sum"},        {"unifiedmemorytotals", "um_total_sum"},
    {"umcpupagefaults", "um_cpu_page_faults_sum"}, {"khrdebugsum", "opengl_khr_range_sum"},
    {"vulkanmarkerssum", "vulkan_marker_sum"}, {"dx12pixsum", "dx12_pix_sum"}, {"wddmqueuesdetails", "wddm_queue_sum"},
};

// nsys reports gprof-run cannot make, and why: asked for, they are skipped with this line (as nsys stats skips a
// report whose data the capture lacks), so scripts that list nsys's default set still run.
const std::pair<const char*, const char*> kUnavailable[] = {
    {"osrt_sum", "gprof-run does not trace OS runtime calls (libc, pthread): it interposes on nothing the program "
                 "calls besides CUDA and NVTX"},
    {"syscall_sum", "gprof-run does not trace system calls"},
    {"um_sum", "no unified-memory records: the collector does not enable CUPTI's unified-memory counters (managed "
               "allocations are in the `memory` report)"},
    {"um_total_sum", "no unified-memory records: the collector does not enable CUPTI's unified-memory counters"},
    {"um_cpu_page_faults_sum", "no unified-memory records: the collector does not enable CUPTI's unified-memory "
                               "counters"},
    {"openmp_sum", "gprof-run does not trace OpenMP"},
    {"openacc_sum", "gprof-run does not trace OpenACC"},
    {"opengl_khr_range_sum", "gprof-run does not trace OpenGL"},
    {"opengl_khr_gpu_range_sum", "gprof-run does not trace OpenGL"},
    {"vulkan_marker_sum", "gprof-run does not trace Vulkan"},
    {"vulkan_gpu_marker_sum", "gprof-run does not trace Vulkan"},
    {"vulkan_api_sum", "gprof-run does not trace Vulkan"},
    {"vulkan_api_trace", "gprof-run does not trace Vulkan"},
    {"dx11_pix_sum", "gprof-run does not trace DirectX (Linux only)"},
    {"dx12_gpu_marker_sum", "gprof-run does not trace DirectX (Linux only)"},
    {"dx12_pix_sum", "gprof-run does not trace DirectX (Linux only)"},
    {"wddm_queue_sum", "gprof-run does not trace WDDM (Windows only)"},
    {"mpi_event_sum", "gprof-run does not trace MPI calls (each rank is a process of the run: see the summary)"},
    {"mpi_event_trace", "gprof-run does not trace MPI calls"},
    {"mpi_msg_size_sum", "gprof-run does not trace MPI calls"},
    {"network_congestion", "gprof-run does not sample network counters"},
    {"nvvideo_api_sum", "gprof-run does not trace the NVIDIA video codec APIs"},
    {"cuda_gpu_kern_gb_sum", "not implemented: cuda_gpu_kern_sum with --format json has the launch configurations "
                             "in cuda_gpu_trace"},
    {"cuda_api_gpu_sum", "not implemented: cuda_api_sum and cuda_gpu_sum give the two halves"},
    {"cuda_kern_exec_trace", "not implemented: cuda_kern_exec_sum summarises the same intervals, cuda_api_trace and "
                             "cuda_gpu_trace list them"},
    {"nvtx_gpu_proj_trace", "not implemented: nvtx_gpu_proj_sum summarises the same projections"},
    {"nvtx_pushpop_sum", "nvtx_sum lists push/pop and start/end ranges together, with a Style column"},
    {"nvtx_startend_sum", "nvtx_sum lists push/pop and start/end ranges together, with a Style column"},
    {"nvtx_pushpop_trace", "not implemented: the timeline shows every range"},
};

const ReportDef* find_report(const std::string& name) {
    for (const auto& r : kReports)
        if (name == r.name) return &r;
    return nullptr;
}

const char* title_of(const std::string& report) {
    const ReportDef* r = find_report(report);
    return r ? r->title : "";
}

}  // namespace

const std::vector<std::string>& report_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& r : kReports) n.emplace_back(r.name);
        return n;
    }();
    return names;
}

bool is_report_name(const std::string& name) { return find_report(name) != nullptr; }

const std::vector<std::string>& stats_report_names() {
    static const std::vector<std::string> names = {"nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum",
                                                   "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"};
    return names;
}

ReportRequest resolve_report(const std::string& asked) {
    ReportRequest r;
    r.asked = asked;
    // nsys's "name:arg:arg" (cuda_gpu_kern_sum:base, um_sum:rows=20): the arguments are not supported here.
    std::string name = asked.substr(0, asked.find(':'));
    if (name.size() != asked.size()) r.note = "report arguments ('" + asked.substr(name.size()) + "') are ignored";
    for (const auto& [old_name, today] : kOldNames)
        if (name == old_name) name = today;
    r.name = name;
    if (find_report(name)) {
        r.known = true;
        return r;
    }
    for (const auto& [unavailable, why] : kUnavailable)
        if (name == unavailable) {
            r.unavailable = why;
            return r;
        }
    return r;
}

std::string unknown_report_message(const std::string& asked) {
    std::string known;
    for (const auto& n : report_names()) known += (known.empty() ? "" : ", ") + n;
    // The nearest of today's names, nsys's old ones and the ones gprof-run cannot make (which then say why).
    std::vector<std::string> names = report_names();
    names.push_back("stats");
    for (const auto& [old_name, today] : kOldNames) names.emplace_back(old_name);
    for (const auto& [name, why] : kUnavailable) names.emplace_back(name);
    std::string hint = did_you_mean(asked.substr(0, asked.find(':')), names);
    return "unknown report '" + asked + "'" + hint + " (known reports: " + known + ", and stats: nsys stats' set)";
}

namespace {

std::string display_name(const KeyData& k) { return k.category == KeyCategory::Kernel ? demangle(k.name) : k.name; }

uint64_t total_of(const std::vector<const KeyData*>& keys) {
    uint64_t t = 0;
    for (auto* k : keys) t += k->time_stats.total;
    return t;
}

std::vector<Column> time_stat_columns(const char* count_key, const char* count_title) {
    return {
        {"time_percent", "Time (%)", ColumnKind::Percent},
        {"total_time_ns", "Total Time ({unit})", ColumnKind::TimeNs},
        {count_key, count_title, ColumnKind::Count},
        {"avg_ns", "Avg ({unit})", ColumnKind::TimeNs},
        {"med_ns", "Med ({unit})", ColumnKind::TimeNs},
        {"min_ns", "Min ({unit})", ColumnKind::TimeNs},
        {"max_ns", "Max ({unit})", ColumnKind::TimeNs},
        {"stddev_ns", "StdDev ({unit})", ColumnKind::TimeNs},
    };
}

std::vector<Cell> time_stat_cells(const Stats& s, uint64_t section_total) {
    double pct = section_total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(section_total) : 0.0;
    return {pct,
            static_cast<int64_t>(s.total),
            static_cast<int64_t>(s.count),
            s.mean,
            s.median,
            static_cast<int64_t>(s.min),
            static_cast<int64_t>(s.max),
            s.stddev};
}

Table time_sum(const std::string& name, const std::vector<const KeyData*>& keys, const char* count_key,
               const char* count_title, const std::vector<Column>& tail_cols,
               const std::function<std::vector<Cell>(const KeyData&)>& tail) {
    Table t;
    t.name = name;
    t.columns = time_stat_columns(count_key, count_title);
    t.columns.insert(t.columns.end(), tail_cols.begin(), tail_cols.end());
    uint64_t total = total_of(keys);
    for (const auto* k : keys) {
        auto row = time_stat_cells(k->time(), total);
        auto extra = tail(*k);
        row.insert(row.end(), extra.begin(), extra.end());
        t.rows.push_back(std::move(row));
    }
    return t;
}

std::vector<const KeyData*> memops(const Aggregate& agg) {
    auto a = agg.of(KeyCategory::Memcpy);
    auto b = agg.of(KeyCategory::Memset);
    a.insert(a.end(), b.begin(), b.end());
    std::stable_sort(a.begin(), a.end(), [](const KeyData* x, const KeyData* y) {
        uint64_t tx = x->time_stats.total, ty = y->time_stats.total;
        return tx != ty ? tx > ty : x->name < y->name;
    });
    return a;
}

// GPU activities (kernels, memory ops and graph launches that stand for their work), sorted by time: nvprof's
// section.
std::vector<const KeyData*> gpu_activities(const Aggregate& agg) {
    auto a = agg.of(KeyCategory::Kernel);
    auto m = memops(agg);
    auto g = agg.of(KeyCategory::Graph);
    a.insert(a.end(), m.begin(), m.end());
    a.insert(a.end(), g.begin(), g.end());
    std::stable_sort(a.begin(), a.end(), [](const KeyData* x, const KeyData* y) {
        uint64_t tx = x->time_stats.total, ty = y->time_stats.total;
        return tx != ty ? tx > ty : x->name < y->name;
    });
    return a;
}

}  // namespace

// ----- summary-style tables --------------------------------------------------------------------------------

Table cuda_api_sum(const Aggregate& agg) {
    return time_sum("cuda_api_sum", agg.of(KeyCategory::Api), "num_calls", "Num Calls",
                    {{"name", "Name", ColumnKind::Text}}, [](const KeyData& k) { return std::vector<Cell>{k.name}; });
}

Table cuda_gpu_kern_sum(const Aggregate& agg) {
    return time_sum("cuda_gpu_kern_sum", agg.of(KeyCategory::Kernel), "instances", "Instances",
                    {{"name", "Name", ColumnKind::Text}},
                    [](const KeyData& k) { return std::vector<Cell>{demangle(k.name)}; });
}

Table cuda_gpu_mem_time_sum(const Aggregate& agg) {
    return time_sum("cuda_gpu_mem_time_sum", memops(agg), "count", "Count", {{"operation", "Operation", ColumnKind::Text}},
                    [](const KeyData& k) { return std::vector<Cell>{k.memop}; });
}

Table cuda_gpu_mem_size_sum(const Aggregate& agg) {
    Table t;
    t.name = "cuda_gpu_mem_size_sum";
    t.columns = {{"total_bytes", "Total (MB)", ColumnKind::BytesMB}, {"count", "Count", ColumnKind::Count},
                 {"avg_bytes", "Avg (MB)", ColumnKind::BytesMB},     {"med_bytes", "Med (MB)", ColumnKind::BytesMB},
                 {"min_bytes", "Min (MB)", ColumnKind::BytesMB},     {"max_bytes", "Max (MB)", ColumnKind::BytesMB},
                 {"stddev_bytes", "StdDev (MB)", ColumnKind::BytesMB}, {"operation", "Operation", ColumnKind::Text}};
    auto keys = memops(agg);
    std::vector<std::pair<Stats, const KeyData*>> rows;
    for (auto* k : keys) rows.emplace_back(k->size(), k);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a.first.total != b.first.total ? a.first.total > b.first.total : a.second->name < b.second->name;
    });
    for (const auto& [s, k] : rows)
        t.rows.push_back({static_cast<int64_t>(s.total), static_cast<int64_t>(s.count), s.mean, s.median,
                          static_cast<int64_t>(s.min), static_cast<int64_t>(s.max), s.stddev, k->memop});
    return t;
}

Table nvtx_sum(const Aggregate& agg) {
    return time_sum("nvtx_sum", agg.of(KeyCategory::Nvtx), "instances", "Instances",
                    {{"style", "Style", ColumnKind::Text}, {"range", "Range", ColumnKind::Text}},
                    [](const KeyData& k) { return std::vector<Cell>{k.nvtx_style, k.name}; });
}

Table cuda_gpu_sum(const Aggregate& agg) {
    return time_sum("cuda_gpu_sum", gpu_activities(agg), "instances", "Instances",
                    {{"category", "Category", ColumnKind::Text}, {"operation", "Operation", ColumnKind::Text}},
                    [](const KeyData& k) {
                        bool kernel = k.category == KeyCategory::Kernel;
                        const char* category = kernel                                 ? "CUDA_KERNEL"
                                               : k.category == KeyCategory::Graph ? "CUDA_GRAPH"
                                                                                    : "MEMORY_OPER";
                        return std::vector<Cell>{std::string(category), kernel ? demangle(k.name) : k.memop};
                    });
}

Table summary_table(const Aggregate& agg) {
    Table t;
    t.name = "summary";
    t.columns = {{"type", "Type", ColumnKind::Text},       {"time_percent", "Time(%)", ColumnKind::Percent},
                 {"total_time_ns", "Time ({unit})", ColumnKind::TimeNs}, {"calls", "Calls", ColumnKind::Count},
                 {"avg_ns", "Avg ({unit})", ColumnKind::TimeNs},  {"min_ns", "Min ({unit})", ColumnKind::TimeNs},
                 {"max_ns", "Max ({unit})", ColumnKind::TimeNs},  {"name", "Name", ColumnKind::Text}};
    auto section = [&](const char* type, const std::vector<const KeyData*>& keys) {
        uint64_t total = total_of(keys);
        for (auto* k : keys) {
            Stats s = k->time();
            double pct = total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(total) : 0.0;
            t.rows.push_back({std::string(type), pct, static_cast<int64_t>(s.total), static_cast<int64_t>(s.count),
                              s.mean, static_cast<int64_t>(s.min), static_cast<int64_t>(s.max), display_name(*k)});
        }
    };
    section("GPU activities", gpu_activities(agg));
    section("API calls", agg.of(KeyCategory::Api));
    section("NVTX ranges", agg.of(KeyCategory::Nvtx));
    return t;
}

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

// ----- the nvprof-style summary text -----------------------------------------------------------------------

namespace {

std::string plural(uint64_t n, const char* word) {
    std::string w = word;
    if (n != 1) w += w.back() == 's' ? "es" : "s";
    return std::to_string(n) + " " + w;
}

std::string gib(uint64_t bytes) { return format_fixed(static_cast<double>(bytes) / (1024.0 * 1024 * 1024), 1) + " GiB"; }

struct Row8 {
    std::string type, pct, time, calls, avg, min, max, name;
};

void print_rows(const std::vector<Row8>& rows, size_t name_width, std::ostream& out) {
    // nvprof's fixed layout: right-aligned numeric columns, then the name.
    auto pad = [](const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; };
    out << pad("Type", 16) << "  " << pad("Time(%)", 7) << "  " << pad("Time", 8) << "  " << pad("Calls", 8) << "  "
        << pad("Avg", 8) << "  " << pad("Min", 8) << "  " << pad("Max", 8) << "  Name\n";
    for (const auto& r : rows)
        out << pad(r.type, 16) << "  " << pad(r.pct, 7) << "  " << pad(r.time, 8) << "  " << pad(r.calls, 8) << "  "
            << pad(r.avg, 8) << "  " << pad(r.min, 8) << "  " << pad(r.max, 8) << "  "
            << shorten_name(printable_line(r.name), name_width) << '\n';
}

using NamedStats = std::vector<std::pair<std::string, Stats>>;

NamedStats with_stats(const std::map<std::string, Distribution>& m, bool demangle_names) {
    NamedStats out;
    for (const auto& [k, v] : m) out.emplace_back(demangle_names ? demangle(k) : k, v.stats());
    return out;
}

void section_rows(const char* type, const NamedStats& keys, size_t max_rows, std::vector<Row8>& rows) {
    std::vector<std::pair<Stats, std::string>> stats;
    uint64_t total = 0;
    for (const auto& [name, st] : keys) {
        stats.emplace_back(st, name);
        total += st.total;
    }
    std::stable_sort(stats.begin(), stats.end(), [](const auto& a, const auto& b) {
        return a.first.total != b.first.total ? a.first.total > b.first.total : a.second < b.second;
    });
    size_t shown = 0;
    for (const auto& [s, name] : stats) {
        if (max_rows && shown == max_rows) {
            rows.push_back({"", "", "", "", "", "", "", "... " + plural(stats.size() - shown, "more row")});
            break;
        }
        double pct = total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(total) : 0.0;
        rows.push_back({shown == 0 ? std::string(type) + ":" : "", format_fixed(pct, 2) + "%", format_time_auto(double(s.total)),
                        std::to_string(s.count), format_time_auto(s.mean), format_time_auto(double(s.min)),
                        format_time_auto(double(s.max)), name});
        ++shown;
    }
}

NamedStats named(const std::vector<const KeyData*>& keys) {
    NamedStats out;
    for (auto* k : keys) out.emplace_back(display_name(*k), k->time_stats);
    return out;
}

}  // namespace

namespace {

// "SIGTERM" for 15.
std::string signal_name(uint32_t sig) {
    const char* abbrev = ::sigabbrev_np(static_cast<int>(sig));
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// What a process is in a multi-process run: its parent (when traced), its rank, its GPU work per device.
//   "    parent 4120; RANK=1 LOCAL_RANK=1 WORLD_SIZE=2; GPU 0: 1,204 ops, 85.1 ms"
void print_process_role(const ProcessInfo& p, bool parent_traced, std::ostream& out) {
    // The rank is in the line's label already ("rank 3 @ node07 (pid 7)"); the variables still say which launcher.
    std::vector<std::string> parts;
    if (parent_traced) parts.push_back("parent " + std::to_string(p.header.ppid));
    if (!p.role.empty()) parts.push_back(p.role);
    std::string work;
    for (const auto& [device, w] : p.gpu_work)
        work += (work.empty() ? "GPU " : ", GPU ") + std::to_string(device) + ": " + plural(w.ops, "op") + ", " +
                format_time_auto(double(w.busy_ns));
    if (!work.empty()) parts.push_back(work);
    else if (p.quiet()) parts.push_back("no GPU or NVTX activity");
    else parts.push_back("no GPU work");
    std::string line;
    for (const auto& part : parts) line += (line.empty() ? "" : "; ") + part;
    out << "    " << line << '\n';
}

}  // namespace

namespace {
void print_summary_body(const Aggregate& agg, bool full, bool list_helpers, size_t max_rows, std::ostream& out,
                        size_t name_width);
}  // namespace

void print_summary_text(const Aggregate& agg, bool full, bool list_helpers, size_t max_rows, std::ostream& out,
                        size_t name_width, std::string_view analysis_section) {
    // Names are made printable where they are printed; this keeps whatever else a trace carried (status lines,
    // paths, device names) valid UTF-8 too.
    std::ostringstream text;
    print_summary_body(agg, full, list_helpers, max_rows, text, name_width);
    text << analysis_section;
    out << valid_utf8(text.str());
}

namespace {
void print_summary_body(const Aggregate& agg, bool full, bool list_helpers, size_t max_rows, std::ostream& out,
                        size_t name_width) {
    // Header: what was recorded, and why anything is missing.
    std::set<std::tuple<HostKey, int64_t, uint32_t>> seen_dev;
    std::vector<const DeviceInfo*> devs;
    for (const auto& d : agg.devices)
        if (seen_dev.insert({d.host, d.pid, d.device.id}).second) devs.push_back(&d);
    std::set<HostKey> hosts;
    for (const auto& p : agg.processes) hosts.insert(host_key(p.header));
    const bool several_hosts = hosts.size() > 1;
    // A device is one per host: GPU 0 of node07 and GPU 0 of node08 are two devices.
    std::set<std::string> dev_names;
    for (auto* d : devs)
        dev_names.insert((several_hosts ? d->host.host + "/" + d->host.boot_id + ": " : std::string()) +
                         std::to_string(d->device.id) + ": " + d->name);
    out << "gprof-run profile: " << plural(agg.processes.size(), "process") << ", "
        << plural(dev_names.size(), "device") << ", " << format_time_auto(double(agg.last_ns - agg.first_ns))
        << " recorded, " << plural(agg.records, "record") << ", " << agg.dropped << " dropped\n";
    // Every time printed below is on the run axis: +0 is the program's start (issue 30: "peak at 11.39s" of a run
    // "6.46s recorded" said nothing about where 0 was).
    if (agg.last_ns > agg.first_ns)
        out << "  times count from the program's start (+0); records from +" << format_time_auto(double(agg.first_ns))
            << " to +" << format_time_auto(double(agg.last_ns)) << '\n';
    size_t status_printed = 0;
    std::vector<bool> helper = helper_processes(agg.processes);
    std::set<ProcessKey> traced;
    for (const auto& p : agg.processes) traced.insert(process_key(p.header));
    std::map<std::string, size_t> folded;  // helper name -> processes folded into the helpers line
    std::map<std::pair<std::string, std::string>, size_t> folded_untraced;  // {program, why} -> times, in helpers
    for (size_t i = 0; i < agg.processes.size(); ++i) {
        const ProcessInfo& p = agg.processes[i];
        if (helper[i] && !list_helpers) {
            ++folded[process_short_name(p)];
            for (const auto& program : p.untraced_programs) ++folded_untraced[program];
            continue;
        }
        // The command as it was typed (argv, like nvprof's "Profiling application: ./app"): the executable's
        // resolved path is in the JSON header, and would put one machine's directories into every summary.
        std::string cmd = p.header.argv.empty() || p.header.argv[0].empty() ? p.header.executable : p.header.argv[0];
        for (size_t a = 1; a < p.header.argv.size(); ++a) cmd += " " + p.header.argv[a];
        const std::string label = process_label(p.header, p.rank, several_hosts);
        out << "  " << (label.empty() ? "process " + std::to_string(p.header.pid) : printable_line(label)) << ": "
            << printable_line(cmd) << " (" << trace_label(p.path) << ", "
            << format_time_auto(double(p.last_ns - p.first_ns)) << ", " << plural(p.records, "record")
            << (p.dropped ? ", " + std::to_string(p.dropped) + " dropped" : std::string())
            << (!p.complete ? ", trace incomplete: the process did not finish normally"
                : p.ended_by_signal ? ", ended by " + signal_name(p.ended_by_signal)
                : !p.ended_by_exec.empty() ? ", " + p.ended_by_exec
                                           : std::string())
            << ")\n";
        ProcessKey parent = process_key(p.header);
        parent.pid = p.header.ppid;
        if (agg.processes.size() > 1) print_process_role(p, traced.count(parent) > 0, out);
        for (const auto& child : p.untraced_children) out << "    started " << child << '\n';
        for (const auto& s : p.status_lines) {
            // The collector's info lines (its memory, the trace clock, where CUPTI was loaded from) are for the full
            // summary only: the default one says what was recorded and what went wrong.
            if (!full && s.find(": info:") == std::string::npos && s.find(" info: ") != std::string::npos) continue;
            out << "    " << s << '\n';
            ++status_printed;
        }
        print_memory_lines(p, out);
    }
    if (!folded.empty()) out << "  " << helpers_line(folded) << '\n';
    // What the folded helpers ran that could not be traced, once per program: "not traced: /sbin/ldconfig.real
    // \u00d72 (a statically linked program that cannot be traced)".
    for (const auto& [program, n] : folded_untraced)
        out << "  not traced: " << program.first << " \u00d7" << n << " (" << program.second << ")\n";
    std::set<std::string> printed;
    for (auto* d : devs) {
        std::string line = "  device " + std::to_string(d->device.id) + ": " + printable_line(d->name) + " (compute capability " +
                           std::to_string(d->device.cc_major) + "." + std::to_string(d->device.cc_minor) + ", " +
                           std::to_string(d->device.sm_count) + " SMs, " + gib(d->device.global_memory_bytes) + ")";
        if (printed.insert(line).second) out << line << '\n';
    }
    bool any_gpu = !gpu_activities(agg).empty();
    bool any_api = !agg.of(KeyCategory::Api).empty();
    if (!any_gpu && !any_api) {
        // -t nvtx: CUDA was not traced, which says nothing about whether the program used it (issue 30).
        bool not_traced = !agg.processes.empty() && std::all_of(agg.processes.begin(), agg.processes.end(), [](const auto& p) {
            return (p.header.features & kFeatureCudaNotTraced) != 0;
        });
        bool explained = status_printed > 0;
        out << (not_traced ? "  CUDA was not traced (-t/--trace without cuda): no CUDA activity recorded"
                : explained ? "  no CUDA activity was recorded (see the status lines above)"
                            : "  no CUDA activity was recorded (the program made no CUDA calls in the capture window)")
            << '\n';
    }
    if (agg.unmatched_gpu_ops)
        out << "  " << plural(agg.unmatched_gpu_ops, "GPU operation") << " had no launching API call in the trace\n";
    if (agg.hidden_driver_calls)
        out << "  " << plural(agg.hidden_driver_calls, "driver call") << " the CUDA runtime made itself (cuKernelGetName, "
            << "...) left out of the API tables (--cuda-nested-driver-calls shows them)\n";
    size_t wshown = 0;
    for (const auto& w : agg.warnings) {
        if (max_rows && wshown == 5) {  // the console's brief summary; summary.txt (all rows) has them all
            out << "  warning: ... " << plural(agg.warnings.size() - wshown, "more warning") << '\n';
            break;
        }
        out << "  warning: " << w << '\n';
        ++wshown;
    }
    for (const auto& n : agg.notes) out << "  note: " << n << '\n';

    std::vector<Row8> rows;
    section_rows(" GPU activities", named(gpu_activities(agg)), max_rows, rows);
    section_rows("      API calls", named(agg.of(KeyCategory::Api)), max_rows, rows);
    // NVTX ranges get one section of their own (nsys's nvtx_sum), which is all a run without a GPU shows; the full
    // summary adds nvprof's per-thread NVTX block below.
    section_rows("    NVTX ranges", named(agg.of(KeyCategory::Nvtx)), max_rows, rows);
    for (auto& r : rows) {
        // Keep nvprof's right-aligned "GPU activities:" labels.
        while (!r.type.empty() && r.type.front() == ' ') r.type.erase(0, 1);
    }
    // Nothing recorded: the lines above say why; an empty table under a "Profiling result:" header says nothing.
    if (!rows.empty()) {
        out << "Profiling result:\n";
        print_rows(rows, name_width, out);
    }

    if (!full || agg.nvtx_ranges.empty()) return;
    out << "NVTX result:\n";
    std::vector<const NvtxRangeSummary*> ranges;
    for (const auto& r : agg.nvtx_ranges) ranges.push_back(&r);
    std::stable_sort(ranges.begin(), ranges.end(), [](auto* a, auto* b) {
        return std::tie(a->pid, a->tid, a->domain, a->name) < std::tie(b->pid, b->tid, b->domain, b->name);
    });
    const NvtxRangeSummary* prev = nullptr;
    for (auto* r : ranges) {
        if (!prev || prev->pid != r->pid || prev->tid != r->tid)
            out << "  Thread \"" << (r->thread_name.empty() ? "<unnamed>" : printable_line(r->thread_name)) << "\" (id = " << r->tid
                << (agg.processes.size() > 1 ? ", process " + std::to_string(r->pid) : std::string()) << ")\n";
        if (!prev || prev->pid != r->pid || prev->tid != r->tid || prev->domain != r->domain)
            out << "    Domain \"" << (r->domain.empty() ? "<unnamed>" : shorten_name(printable_line(r->domain), name_width)) << "\"\n";
        prev = r;
        out << "      Range \"" << shorten_name(printable_line(r->name), name_width) << "\"\n";
        std::vector<Row8> nrows;
        section_rows("Range", {{r->name, r->durations.stats()}}, 0, nrows);
        NamedStats gpu = with_stats(r->gpu, true), api = with_stats(r->api, false);
        section_rows("GPU activities", gpu, max_rows, nrows);
        section_rows("API calls", api, max_rows, nrows);
        if (gpu.empty()) nrows.push_back({"GPU activities:", "", "", "", "", "", "", "(none)"});
        if (api.empty()) nrows.push_back({"API calls:", "", "", "", "", "", "", "(none)"});
        print_rows(nrows, name_width, out);
    }
}
}  // namespace

json summary_header_json(const Aggregate& agg) {
    json procs = json::array();
    std::vector<bool> helper = helper_processes(agg.processes);
    for (size_t i = 0; i < agg.processes.size(); ++i) {
        const ProcessInfo& p = agg.processes[i];
        json work = json::array();
        for (const auto& [device, w] : p.gpu_work) work.push_back({{"device", device}, {"ops", w.ops}, {"busy_ns", w.busy_ns}});
        procs.push_back({{"pid", p.header.pid},
                         {"ppid", p.header.ppid},
                         {"helper", bool(helper[i])},
                         {"role", p.role},
                         {"api_calls", p.api_calls},
                         {"nvtx_events", p.nvtx_events},
                         {"gpu_work", work},
                         {"ended_by_signal", p.ended_by_signal ? signal_name(p.ended_by_signal) : std::string()},
                         {"ended_by_exec", p.ended_by_exec},
                         {"untraced_children", p.untraced_children},
                         {"hidden_driver_calls", p.hidden_driver_calls},
                         {"memory", process_memory_json(p.memory, p.device_memory, p.run_offset_ns)},
                         {"executable", p.header.executable},
                         {"argv", p.header.argv},
                         {"hostname", p.header.hostname},
                         {"boot_id", p.header.boot_id},
                         {"rank", p.rank},
                         {"label", process_label(p.header, p.rank, true)},
                         {"trace", trace_label(p.path)},
                         {"first_ns", p.first_ns},
                         {"last_ns", p.last_ns},
                         {"records", p.records},
                         {"dropped", p.dropped},
                         {"complete", p.complete},
                         {"status", p.status_lines}});
    }
    json devs = json::array();
    for (const auto& d : agg.devices)
        devs.push_back({{"pid", d.pid},
                        {"id", d.device.id},
                        {"name", d.name},
                        {"uuid", d.uuid},
                        {"compute_capability", std::to_string(d.device.cc_major) + "." + std::to_string(d.device.cc_minor)},
                        {"sm_count", d.device.sm_count},
                        {"global_memory_bytes", d.device.global_memory_bytes}});
    return {{"processes", procs},
            {"devices", devs},
            {"duration_ns", agg.last_ns - agg.first_ns},
            {"records", agg.records},
            {"dropped", agg.dropped},
            {"hidden_driver_calls", agg.hidden_driver_calls},
            {"unmatched_gpu_ops", agg.unmatched_gpu_ops}};
}

// ----- running reports -------------------------------------------------------------------------------------

namespace {

json nvtx_block_json(const Aggregate& agg) {
    json out = json::array();
    auto stats_json = [](const Distribution& v) {
        Stats s = v.stats();
        return json{{"count", s.count}, {"total_ns", s.total}, {"avg_ns", s.mean}, {"med_ns", s.median},
                    {"min_ns", s.min},   {"max_ns", s.max},     {"stddev_ns", s.stddev}};
    };
    std::vector<const NvtxRangeSummary*> ranges;
    for (const auto& r : agg.nvtx_ranges) ranges.push_back(&r);
    std::stable_sort(ranges.begin(), ranges.end(), [](auto* a, auto* b) {
        return std::tie(a->pid, a->tid, a->domain, a->name) < std::tie(b->pid, b->tid, b->domain, b->name);
    });
    for (auto* r : ranges) {
        json gpu = json::object(), api = json::object();
        for (const auto& [k, v] : r->gpu) gpu[demangle(k)] = stats_json(v);
        for (const auto& [k, v] : r->api) api[k] = stats_json(v);
        out.push_back({{"pid", r->pid},
                       {"tid", r->tid},
                       {"thread_name", r->thread_name},
                       {"domain", r->domain},
                       {"name", r->name},
                       {"range", stats_json(r->durations)},
                       {"gpu_activities", gpu},
                       {"api_calls", api}});
    }
    return out;
}

}  // namespace

int run_reports(const std::vector<std::filesystem::path>& traces, const ReportOptions& options, std::ostream& out,
                std::ostream& err) {
    std::vector<std::string> reports;
    json skipped = json::object();
    for (const auto& asked : options.reports.empty() ? std::vector<std::string>{"summary"} : options.reports) {
        ReportRequest req = resolve_report(asked);
        if (!req.note.empty()) err << "gprof-report: warning: " << asked << ": " << req.note << '\n';
        if (!req.unavailable.empty()) {
            err << "gprof-report: skipped " << req.name << ": " << req.unavailable << '\n';
            skipped[req.name] = req.unavailable;
            continue;
        }
        if (!req.known) throw std::invalid_argument(unknown_report_message(asked));
        if (std::find(reports.begin(), reports.end(), req.name) == reports.end()) reports.push_back(req.name);
    }
    if (reports.empty()) {
        err << "gprof-report: error: none of the reports asked for can be made from a gprof-run trace\n";
        return 2;
    }
    if (reports.size() > 1 && options.format == OutputFormat::Csv)
        throw std::invalid_argument("csv holds one table: give -o PREFIX for one file per report (PREFIX_<report>.csv, "
                                    "as nsys stats), ask for one report, or use --format json");

    bool need_agg = false, need_model = false;
    for (const auto& r : reports) {
        if (find_report(r)->from_run) need_model = true;
        else need_agg = true;
    }
    Aggregate agg;
    Run run;
    std::vector<std::string> warnings;
    size_t readable = 0, damaged = 0;
    if (need_agg) {
        AggregateOptions ao;
        ao.filter = options.filter;
        // The summary's matching pass (GPU operations without a launching call) and nvprof's NVTX block.
        bool want_nvtx_block = std::find(reports.begin(), reports.end(), "summary") != reports.end();
        ao.nvtx_detail = want_nvtx_block;
        agg = aggregate_run(traces, ao);
        warnings = agg.warnings;
        readable = agg.processes.size();
        damaged = agg.damaged_traces();
    }
    if (need_model) {
        LoadOptions lo;
        lo.filter = options.filter;
        run = load_run(traces, lo);
        if (!need_agg) {
            warnings = run.all_warnings();
            readable = run.processes.size();
            damaged = run.warnings.size();
            for (const auto& p : run.processes)
                if (p.read_stats.damaged()) ++damaged;
        }
    }
    if (readable == 0 && options.filter.pids.empty()) {
        for (const auto& w : warnings) err << "gprof-report: " << w << '\n';
        err << "gprof-report: error: no readable trace among the inputs\n";
        return 2;
    }
    // A time range that selects nothing, most often a bare number meant as seconds: say so (issue 30).
    if (options.filter.time_begin || options.filter.time_end) {
        // Timed data kept (process metadata, devices and thread names are kept whatever the range).
        size_t kept = need_agg ? agg.keys.size() : 0;
        if (!need_agg)
            for (const auto& p : run.processes)
                kept += p.api_calls.size() + p.kernels.size() + p.memcpys.size() + p.memsets.size() + p.nvtx.size() +
                        p.memory.size() + p.graph_launches.size();
        if (kept == 0) err << "gprof-report: warning: " << time_range_hint(options.filter) << '\n';
    }

    auto table_for = [&](const std::string& r) -> Table {
        const ReportDef* def = find_report(r);
        return def->from_run ? def->from_run(run) : def->from_aggregate(agg);
    };

    if (options.format == OutputFormat::Json) {
        json doc = {{"schema", "gprof-report"}, {"schema_version", kReportSchemaVersion}, {"generator", "gprof-report " GPROF_VERSION}};
        json inputs = json::array();
        for (const auto& t : traces) inputs.push_back(trace_label(t));
        doc["inputs"] = inputs;
        doc["time_unit"] = "ns";
        json reps = json::object();
        for (const auto& r : reports) {
            json j = r == "memory"              ? memory_report_json(run)
                     : r == "cuda_callsite_sum" ? callsite_report_json(run)
                                                : table_to_json(table_for(r));
            if (r == "summary") {
                j["header"] = summary_header_json(agg);
                j["nvtx"] = nvtx_block_json(agg);
            }
            reps[r] = std::move(j);
        }
        doc["reports"] = reps;
        if (!skipped.empty()) doc["skipped"] = skipped;
        for (auto& w : take_symbol_warnings()) warnings.push_back(std::move(w));
        doc["warnings"] = warnings;
        if (!agg.notes.empty()) doc["notes"] = agg.notes;  // facts about the program (NVTX ranges never ended)
        out << doc.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    } else {
        for (const auto& w : warnings) err << "gprof-report: warning: " << w << '\n';
        for (const auto& n : agg.notes) err << "gprof-report: note: " << n << '\n';
        RenderOptions ro;
        ro.format = options.format;
        ro.time_unit = options.time_unit;
        ro.name_width = options.name_width;
        bool first = true;
        for (const auto& r : reports) {
            if (r == "summary" && options.format == OutputFormat::Table) {
                if (!first) out << '\n';
                std::string analysis = options.summary_analysis ? options.summary_analysis(agg) : std::string();
                print_summary_text(agg, options.full, options.full || options.all_processes, options.brief_rows, out,
                                   options.name_width, analysis);
                first = false;
                continue;
            }
            if (r == "memory" && options.format != OutputFormat::Csv) {
                if (!first) out << '\n';
                if (options.format == OutputFormat::Table) out << "** " << title_of(r) << " (" << r << "):\n\n";
                else out << "### " << title_of(r) << " (`" << r << "`)\n\n";
                print_memory_report(run, ro, out);
                first = false;
                continue;
            }
            Table t = table_for(r);
            if (options.format == OutputFormat::Table) {
                if (!first) out << '\n';
                out << "** " << title_of(r) << " (" << r << "):\n\n";
                if (t.rows.empty()) {
                    out << "(no data)\n";
                    first = false;
                    continue;
                }
            } else if (options.format == OutputFormat::Markdown) {
                if (!first) out << '\n';
                out << "### " << title_of(r) << " (`" << r << "`)\n\n";
            }
            render_table(t, ro, out);
            first = false;
        }
        // Modules the stacks could not be symbolised from: one line each (model/symbolize.h).
        for (const auto& w : take_symbol_warnings()) err << "gprof-report: warning: " << w << '\n';
    }
    if (damaged && !options.ignore_damage) {
        err << "gprof-report: error: " << damaged << (damaged == 1 ? " trace was" : " traces were")
            << " damaged or unreadable (see the warnings above); the report shows what was intact "
               "(--ignore-damage exits 0)\n";
        return 2;
    }
    return 0;
}

}  // namespace gprof::report
