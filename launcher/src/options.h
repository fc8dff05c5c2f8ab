// The command line of gprof-run: `gprof-run [options] [--] app [args...]`. Parsing never exits the process and
// never prints: it returns what to print and the exit status, so main() decides and tests can check it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "console.h"

namespace gprof::launcher {

enum class SummaryChoice { None, Brief, Full };

struct LaunchOptions {
    std::optional<std::string> output;        // -o pattern, unexpanded; nullopt: default name in the cwd
    std::string trace = "cuda,nvtx,osrt";     // normalised comma list, or "none"
    std::optional<std::string> backtrace;     // GPROF_BACKTRACE value: "1" (default depth) or a depth 1..64
    std::optional<std::string> cudabacktrace; // GPROF_CUDABACKTRACE: nsys's --cudabacktrace value, checked
    std::optional<std::string> sample;        // GPROF_SAMPLE: process-tree | none (-s; nsys's cpu taken as process-tree)
    std::optional<std::string> sampling_frequency;     // GPROF_SAMPLING_FREQUENCY, checked, as typed
    std::optional<std::string> osrt_threshold;         // GPROF_OSRT_THRESHOLD (ns), checked, as typed
    std::optional<std::string> osrt_backtrace_threshold;  // GPROF_OSRT_BACKTRACE_THRESHOLD (ns), checked, as typed
    std::optional<std::string> capture_range; // validated, as the collector takes it: cudaProfilerApi, nvtx:NAME[@DOMAIN]
    std::optional<std::string> capture_range_end;  // stop | repeat | repeat:N | none (nsys's *-shutdown forms mapped)
    std::optional<std::string> cuda_graph_trace;   // node | graph
    bool cuda_nested_driver_calls = false;
    std::optional<std::string> cuda_api;           // activity | callback | off (GPROF_CUDA_API)
    // GPU metrics (issue 37, nsys's --gpu-metrics-*), checked and passed as typed; unset: not sampled.
    std::optional<std::string> gpu_metrics_devices;    // all | N[,N] (none leaves it unset)
    std::optional<std::string> gpu_metrics_frequency;  // Hz, 10..200000
    std::optional<std::string> gpu_metrics_set;        // a name of collector/metrics's list
    std::optional<std::string> delay_sec;     // validated decimal text, passed through as typed
    std::optional<std::string> duration_sec;
    std::string kernel_filter;                // validated ECMAScript regex
    bool no_children = false;
    std::optional<std::string> log_level;     // as typed, validated
    LogLevel console_level = LogLevel::Warn;
    bool force = false;
    SummaryChoice summary = SummaryChoice::Brief;
    std::optional<std::string> log_file;      // pattern, unexpanded
    std::optional<std::string> timeline;      // pattern, unexpanded
    std::set<std::string> left_out;           // --no-timeline, --no-html: outputs not written (end_of_run/outputs.h)
    double wait_children_sec = 10.0;          // bound on waiting for descendants once the app has exited
    bool stats = false;                       // --stats=true: nsys's report tables after the run
    std::vector<std::string> exports;         // --export: sqlite, json (each once), after the run
    std::string timeunit;                     // --timeunit for the --stats tables, as typed ("" = ns)
    std::vector<std::string> command;         // app and its arguments, untouched
    bool check = false;                       // --check: is this machine ready (check.h); the app is optional then
};

struct ParseResult {
    std::optional<LaunchOptions> options;  // set: go on and run the app
    int exit_code = 0;                     // otherwise: exit with this (0 for --help/--version, 2 for errors)
    std::string to_stdout;                 // --help / --version text
    std::string to_stderr;                 // error text, one or a few lines, already prefixed
    std::vector<std::string> notes;        // with options: how an accepted value was taken (one line each, unprefixed)
};

ParseResult parse_command_line(int argc, const char* const* argv);

// The individual checks, exposed for unit tests. Each returns an empty string when valid, else the reason.
// --trace takes nsys's names: what gprof-run records (cuda, nvtx; cuda-sw and the cuXXX libraries mean cuda) goes
// into `normalised`; nsys's names gprof-run does not record are named in `note` (one warning line). An empty item
// or a name nsys does not know either (a typo: "did you mean" the nearest) is an error.
std::string check_trace(std::string_view text, std::string& normalised, std::string& note);
// nsys's switches take true|false: "-f", "-f true", "--force-overwrite=false", "--stats=true", "-w true". Each entry
// names a switch's spellings and where its value goes. Returns the argv with those values folded into the switches
// (so the value is never taken for the app), or an error.
struct SwitchSpelling {
    std::vector<std::string> names;
    bool* value;
};
std::string fold_switch_values(std::vector<std::string>& args, const std::vector<SwitchSpelling>& switches);
std::string check_capture_range(std::string_view text);
// -s/--sample: nsys's values. process-tree and none as they are; cpu (nsys's older spelling) and system-wide (gprof-run
// samples the traced processes only) are taken as process-tree, said in `note`.
std::string check_sample(std::string_view text, std::string& normalised, std::string& note);
// --capture-range-end: `normalised` gets the collector's form; `note` says how an nsys form was taken.
std::string check_capture_range_end(std::string_view text, std::string& normalised, std::string& note);
std::string check_seconds(std::string_view text, bool allow_zero);
std::string check_regex(const std::string& text);

}  // namespace gprof::launcher
