// The named reports of gprof-report (summary and the nsys-named ones) and the nvprof-style summary text that
// gprof-run prints at the end of a run.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/aggregate.h"
#include "model/cpu_samples.h"
#include "model/names.h"
#include "model/model.h"
#include "output/table.h"

namespace gprof::report {

// JSON schema version of `--format json` (docs/report-schema.md). Bump on any incompatible change.
inline constexpr int kReportSchemaVersion = 1;

// Every report name gprof-report knows, in the order `--help` lists them.
const std::vector<std::string>& report_names();
bool is_report_name(const std::string& name);
// The reports `gprof-report stats RUN` makes and gprof-run --stats=true prints: nsys stats' default set, less those a
// gprof-run trace has no data for (osrt_sum, openmp_sum, the graphics APIs' and the um_* reports).
const std::vector<std::string>& stats_report_names();

// A report name as a user typed it, from nsys habit: today's names, nsys's pre-2023 names (gpukernsum), arguments
// after ':' (cuda_gpu_kern_sum:base, ignored with a note), and nsys reports gprof-run cannot make (osrt_sum: the
// reason). Neither known nor unavailable: an unknown name.
struct ReportRequest {
    std::string asked;        // as typed
    std::string name;         // the report it means (today's nsys name)
    bool known = false;       // one of report_names()
    std::string unavailable;  // an nsys report gprof-run cannot make: why ("" otherwise)
    std::string note;         // something about the request worth a warning line ("" = none)
};
ReportRequest resolve_report(const std::string& asked);
// "unknown report 'x'; known reports: summary, cuda_api_sum, ..."
std::string unknown_report_message(const std::string& asked);

struct ReportOptions {
    std::vector<std::string> reports;  // empty = {"summary"}
    OutputFormat format = OutputFormat::Table;
    TimeUnit time_unit = TimeUnit::Ns;
    Filter filter;
    size_t brief_rows = 0;  // summary: rows per section in the console table; 0 = all
    bool ignore_damage = false;  // exit 0 even when a trace was cut, corrupt or unreadable
    bool all_processes = false;  // summary: list helper processes one by one (else one line for them all)
    bool full = false;           // summary: the full one (gprof-run --summary full): info lines, helpers, NVTX block
    // summary (table): the Analysis section appended to it, made from the aggregate (end_of_run/summary.h's
    // summary_analysis_section, so that gprof-report RUN prints what gprof-run printed); empty = none.
    std::function<std::string(const Aggregate&)> summary_analysis;
    size_t name_width = kDefaultNameWidth;  // table/markdown: names shortened to this many characters; 0 = full
    SampleKey sample_key = SampleKey::Function;  // cpu_sample_sum: --by function|line
};

// Runs the reports over the traces and writes them to `out`. Warnings go to `err` (never into csv/json on `out`;
// JSON also carries them under "warnings"). Returns 0; 2 when no trace could be read, or when one was damaged
// (cut, corrupt or unreadable: the reports still show what was intact) unless ignore_damage. Throws
// std::invalid_argument for bad options (unknown report, csv with several reports).
int run_reports(const std::vector<std::filesystem::path>& traces, const ReportOptions& options, std::ostream& out,
                std::ostream& err);

// THE summary text: what gprof-run prints at the end of a run (max_rows 10), summary.txt and `gprof-report RUN`
// (all rows) all come from here, so they never differ (issue 30). Header block (processes, devices, what went wrong,
// where +0 is), then "Profiling result:" with GPU activities, API calls and NVTX ranges (nothing when nothing was
// recorded), then `analysis_section` (end_of_run/summary.h makes it). `full` adds the collector's info lines and
// nvprof's per-thread NVTX block. Helper processes (helper_processes) are listed one by one with list_helpers, else
// folded into one line. max_rows (0 = all) also cuts the warnings at 5. Names are shortened to name_width characters
// (0 = full) and printed as one printable line each (output/text.h).
void print_summary_text(const Aggregate& agg, bool full, bool list_helpers, size_t max_rows, std::ostream& out,
                        size_t name_width = kDefaultNameWidth, std::string_view analysis_section = {});

// The tables of the summary-style reports, built from an aggregate.
Table summary_table(const Aggregate& agg);  // nvprof sections as one table with a Type column
Table cuda_api_sum(const Aggregate& agg);
Table cuda_gpu_kern_sum(const Aggregate& agg);
Table cuda_gpu_mem_time_sum(const Aggregate& agg);
Table cuda_gpu_mem_size_sum(const Aggregate& agg);
Table nvtx_sum(const Aggregate& agg);
Table cuda_gpu_sum(const Aggregate& agg);
// Trace-style reports, built from the full model.
Table cuda_gpu_trace(const Run& run);
Table cuda_api_trace(const Run& run);
// CPU records joined with the GPU work they launched (reports/projection.cpp), as nsys defines them.
Table cuda_kern_exec_sum(const Run& run);
Table nvtx_gpu_proj_sum(const Run& run);
Table nvtx_kern_sum(const Run& run);
// The program's call sites of CUDA API calls with the kernel time, sync time and memcpy bytes behind each
// (reports/callsite_sum.cpp); the JSON form adds each row's full stack under "stack".
Table cuda_callsite_sum(const Run& run);
nlohmann::json callsite_report_json(const Run& run);

// The host side (reports/cpu.cpp): a flat profile of the CPU samples, by function or by line (options.sample_key),
// and nsys's summary of OS-runtime calls.
Table cpu_sample_sum(const Run& run, const ReportOptions& options);
Table osrt_sum(const Run& run);

// The `memory` report (reports/memory.cpp): per process, device and kind of memory (model/memory.h) the
// allocations, frees, peak and what was still allocated at the end; the allocations still alive (largest first,
// max_rows of them, 0 = all) with their API call and call site; the whole report as JSON (the budget table plus
// "devices" (peak device memory and when), "live_allocations" and "pool_operations"); and its console/markdown
// rendering (both tables).
Table memory_table(const Run& run);
Table memory_live_table(const Run& run, size_t max_rows);
nlohmann::json memory_report_json(const Run& run);
void print_memory_report(const Run& run, const RenderOptions& options, std::ostream& out);
// The summary's memory line for one process ("memory: GPU 0 peak 1.50 GiB in use at 2.1s; ..."), nothing without
// memory records; and the same figures as JSON ({"kinds": [...], "devices": [...]}, times on the run axis).
void print_memory_lines(const ProcessInfo& process, std::ostream& out);
nlohmann::json process_memory_json(const std::vector<BudgetUsage>& budgets,
                                   const std::vector<DeviceMemoryPeak>& devices, int64_t run_offset_ns);
// Binary units, two decimals: "8.00 MiB", "512 B".
std::string format_bytes(uint64_t bytes);

// GPU metrics (reports/gpu_metrics_sum.cpp, issue 37), from the aggregate's GpuMetricsSummary: the summary's
// "GPU metrics" section (nothing for a run without them), its JSON (summary's "gpu_metrics"), the gpu_metrics_sum
// report (a row per device and metric), and a value as text ("35.2 %", "1.23 GB/s", "-" for none).
void print_gpu_metrics_section(const Aggregate& agg, size_t max_rows, size_t name_width, std::ostream& out);
nlohmann::json gpu_metrics_json(const Aggregate& agg);
Table gpu_metrics_sum(const Aggregate& agg);
std::string format_gpu_metric(GpuMetricUnit unit, double value);

// What the summary header block says, as JSON (devices, processes, duration, records, dropped, status).
nlohmann::json summary_header_json(const Aggregate& agg);

}  // namespace gprof::report
