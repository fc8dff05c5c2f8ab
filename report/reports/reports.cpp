#include "reports/reports.h"

#include "reports/key_lists.h"

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
    Table (*from_aggregate)(const Aggregate&);  // exactly one of the three is set
    Table (*from_run)(const Run&);
    Table (*from_run_with)(const Run&, const ReportOptions&) = nullptr;  // a report with options of its own
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
    {"cpu_sample_sum", "CPU Samples (flat profile)", nullptr, nullptr, cpu_sample_sum},
    {"osrt_sum", "OS Runtime Summary", nullptr, osrt_sum},
    {"gpu_metrics_sum", "GPU Metrics Summary (per device and metric)", gpu_metrics_sum, nullptr},
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
        if (find_report(r)->from_run || find_report(r)->from_run_with) need_model = true;
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
        // The GPU metrics' NVTX rows need the ranges kept too.
        bool want_nvtx_block = std::find(reports.begin(), reports.end(), "summary") != reports.end() ||
                               std::find(reports.begin(), reports.end(), "gpu_metrics_sum") != reports.end();
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
        if (def->from_run_with) return def->from_run_with(run, options);
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
                if (!agg.gpu_metrics.empty()) j["gpu_metrics"] = gpu_metrics_json(agg);  // absent without metrics
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
