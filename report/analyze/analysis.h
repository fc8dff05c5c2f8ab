// `gprof-report analyze`: the bottleneck method of the field (Paddle's performance guide, nvvp's guided
// analysis, nsys's expert rules) automated from the trace alone: GPU utilisation per device, a verdict with its
// evidence, the largest GPU idle gaps with what the host was doing, findings (rule, number, fix) and the step
// view. docs/analysis.md documents the rules, thresholds and the JSON schema.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/host.h"
#include "analyze/intervals.h"
#include "analyze/steps.h"
#include "model/model.h"

namespace gprof::report {

// ----- GPU busy time ---------------------------------------------------------------------------------------

struct DeviceKey {
    std::string host;
    uint32_t device = 0;
    auto operator<=>(const DeviceKey&) const = default;
};

// Per device (host, id): the union of kernel, memcpy and memset intervals on the run axis, and of the graph launches
// that stand for their nodes (ProcessTrace::graph_launch_is_gpu_work). PtoP copies count on their source device.
std::map<DeviceKey, std::vector<Interval>> gpu_busy_by_device(const Run& run);

// The capture window on the run axis: earliest to latest timed record of any process; {0,0} when none.
Interval capture_window(const Run& run);

// ----- analysis --------------------------------------------------------------------------------------------

struct AnalysisOptions {
    std::string step_pattern;          // --step-range; empty = default names
    std::optional<double> batch_size;  // --batch-size: items per step, for IPS
    size_t max_gaps = 5;               // --gaps
};

// A GPU idle gap at least this share of the capture window, starting in its first half, ends start-up.
inline constexpr double kStartupGapShare = 0.2;

struct DeviceUtilisation {
    DeviceKey key;
    std::string name;        // from the Device record, "" when unknown
    int64_t window_ns = 0;
    int64_t busy_ns = 0;     // union of GPU ops
    int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0;  // naive sums per kind (may exceed busy_ns)
    int64_t graph_ns = 0;    // graph launches traced as a whole (their nodes are not in kernel_ns ...)
    double busy_pct = 0;     // of the whole capture window
    // After start-up, to the end of the window: what the verdict is decided on, so that a program's start-up
    // (imports, data set loading, compiling) does not decide it (issue 30). Start-up is the time before the device's
    // first operation, and also before the end of its longest idle gap when that gap starts in the first half of the
    // window and lasts at least kStartupGapShare of it (one long set-up pause after the first CUDA call, as PyTorch
    // programs make); docs/analysis.md.
    int64_t steady_start = 0;  // run axis
    int64_t steady_ns = 0;
    double steady_busy_pct = 0;
    size_t streams = 0;
};

// What one CPU thread did during a GPU idle gap.
struct ThreadActivity {
    int64_t pid = 0;
    uint64_t tid = 0;
    std::string thread_name;
    std::string top_activity;     // the CUDA API call covering most of the gap, or "host code (no CUDA call)"
    int64_t top_ns = 0;
    std::string range;            // the innermost NVTX range covering most of the gap, "" when none
    int64_t range_ns = 0;
    int64_t api_ns = 0;           // time inside any CUDA API call
    int64_t nvtx_ns = 0;          // time inside any NVTX range (innermost ranges)
};

struct IdleGap {
    DeviceKey device;
    int64_t start = 0, end = 0;  // run axis
    int64_t duration() const { return sat_sub(end, start); }
    std::vector<ThreadActivity> threads;  // busiest first; threads idle in the whole gap are left out
    // What the host did meanwhile (CPU samples and OS-runtime calls of the device's host): the top frames sampled
    // in the gap, and the calls blocked in it. Empty for traces without samples (before format 1.5, -s none).
    HostProfile host;
};

// A program line behind a finding (model/resolved_call_sites.h): its API calls' count and time there.
struct FindingSite {
    std::string site;      // the user's frame: "train.py:12", "/src/app.cu:42"
    std::string function;
    size_t count = 0;
    int64_t time_ns = 0;
};

struct Finding {
    std::string rule;        // stable id: "pageable_memcpy", "small_copies", ...
    std::string title;       // one line
    double value = 0;        // the number the rule fired on
    std::string unit;        // "%", "count", "ns", "bytes"
    std::string evidence;    // the numbers, in words
    std::string fix;         // the suggested fix
    int64_t time_ns = 0;     // time involved (for ranking)
    int64_t first = 0, last = 0;  // run-axis span of the occurrences, for the timeline
    std::vector<FindingSite> sites;  // where in the program, most time first (at most kFindingSites); empty
                                     // when the trace has no call sites
};
inline constexpr size_t kFindingSites = 3;

enum class Verdict { GpuBound, CpuLaunchBound, IoBound, SyncBound, Balanced, NoGpuWork };
const char* verdict_id(Verdict v);     // "gpu_bound", "cpu_launch_bound", "io_bound", "sync_bound", ...
const char* verdict_title(Verdict v);  // "GPU-bound", ...

struct VerdictEvidence {
    double busy_pct = 0;                 // mean over devices with work, of the whole capture window
    double steady_busy_pct = 0;          // the same after each device's start-up (DeviceUtilisation): decides the verdict
    int64_t startup_ns = 0;              // capture window start to the earliest end of start-up of any device
    double idle_in_api_pct = 0;          // share of GPU idle time the launching thread spent in CUDA API calls
    double idle_in_host_code_pct = 0;    // ... outside any CUDA call
    double launch_rate_per_s = 0;        // kernel launches per second of the capture window
    double median_launch_ns = 0;         // median duration of launch API calls
    double tiny_kernel_pct = 0;          // kernels shorter than the median launch cost, % of kernels
    double sync_blocked_pct = 0;         // host time blocked in sync calls, % of the window (busiest thread)
    double io_pct = 0;                   // data-loading ranges + blocking H->D copies, % of step time (or window)
    int64_t io_ns = 0, sync_blocked_ns = 0, reference_ns = 0;  // reference = step time total or window
};

struct StepModule {
    std::string name;
    int64_t cpu_ns = 0;   // sum over steps of range time
    int64_t gpu_ns = 0;   // union of GPU work launched inside the module's ranges
    size_t calls = 0;
};

struct StepView {
    std::string source;     // "nvtx", "profiler-api", "none"
    std::string pattern;
    std::vector<Step> steps;
    std::vector<int64_t> gpu_ns;  // per step: GPU busy (union) inside the step
    double min = 0, median = 0, mean = 0, p90 = 0, max = 0, stddev = 0;  // step time, ns
    std::optional<double> ips;    // items per second, with --batch-size
    std::vector<StepModule> modules;  // NVTX modules inside steps, plus "Others"; by CPU time
    int64_t total_ns = 0, gpu_total_ns = 0;
};

struct AnalysisResult {
    Interval window;
    std::vector<DeviceUtilisation> devices;
    Verdict verdict = Verdict::NoGpuWork;
    std::string verdict_reason;  // one sentence with the numbers
    VerdictEvidence evidence;
    std::vector<IdleGap> gaps;
    std::vector<Finding> findings;
    StepView steps;
    // Where the host's CPU time went over the whole window and what it blocked in (analyze/host.h); the
    // CPU/launch-bound verdict names its top entries. Empty without CPU samples or OS-runtime calls.
    HostProfile host;
    std::vector<std::string> warnings;
};

AnalysisResult analyze_run(const Run& run, const AnalysisOptions& options);

// ----- output ----------------------------------------------------------------------------------------------

inline constexpr int kAnalysisSchemaVersion = 1;

void render_analysis_table(const AnalysisResult& a, std::ostream& out);
void render_analysis_markdown(const AnalysisResult& a, std::ostream& out);
nlohmann::json analysis_to_json(const AnalysisResult& a);

// The short section gprof-run's end-of-run summary appends (verdict, utilisation, top findings, steps):
// analyze_run(run, {}) then the overload below; "Analysis: not available (...)" when the analysis throws.
void print_analysis_section(const Run& run, std::ostream& out);
// The same section from an analysis already made (finish_run reuses it for the timeline's analysis track).
void print_analysis_section(const AnalysisResult& a, std::ostream& out);
// Whether that section (of analyze_run(run, {})) reads the NVTX ranges of this name: the steps (kDefaultStepPattern)
// and data loading (the IO verdict) do; the ranges only the idle gaps and the step modules read do not. A model
// loaded without the others (LoadOptions::keep_nvtx_named) gives the section to the byte, and an NVTX-heavy run's
// millions of op ranges are never held (issue 33).
bool summary_section_reads_range(std::string_view name);

// ----- Chrome timeline hook --------------------------------------------------------------------------------

// An annotated slice for the "analysis" track of the Chrome timeline. The timeline code places every slice of
// one `track` on one thread (slices of one track never overlap) of an "analysis" process, with `start`/`dur` on
// the run axis in ns, `name` as the slice name, cat "analysis", and `args` as the event's args.
struct AnalysisSlice {
    std::string track;  // "verdict", "idle gaps GPU 0", "finding: pageable_memcpy", "steps"
    int64_t start = 0, dur = 0;
    std::string name;
    nlohmann::json args = nlohmann::json::object();
};

std::vector<AnalysisSlice> analysis_timeline_slices(const AnalysisResult& a);
// Convenience: analyze with default options, then the slices.
std::vector<AnalysisSlice> analysis_timeline_slices(const Run& run);

}  // namespace gprof::report
