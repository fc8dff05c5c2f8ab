#include "options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "end_of_run/outputs.h"
#include "gprof/env/cuda_backtrace.h"
#include "gprof/env/values.h"
#include "output/suggest.h"
#include "gprof/version.h"
#include "gpu_metrics_options.h"

namespace gprof::launcher {
namespace {

constexpr const char* kExamples = R"(
Everything after the application name belongs to the application. Use -- before an application whose name
starts with '-'. gprof-run's own messages and the summary go to stderr (or --log-file), never to stdout.

Output patterns (-o, --log-file, --timeline): %p pid of gprof-run, %h host name, %q{VAR} value of the
environment variable VAR (an error if it is not set), %% a literal %.

Exit status: the application's; 128+N if it was killed by signal N; 127 if it was not found, 126 if it could not
be executed; 2 if gprof-run itself failed before starting it (bad option, output not writable).

Examples:
  gprof-run ./train --epochs 1
      run ./train, print the summary on stderr, keep everything in ./gprof-train-<date>-<time>/
  gprof-run -o prof/run1 --summary full python train.py
  gprof-run --trace cuda --capture-range nvtx:step@train ./app
  gprof-run -c nvtx -p step@train --capture-range-end repeat:5 ./app    the first 5 "step" ranges of domain train
  gprof-run --delay 5 --duration 10 ./server          record seconds 5 to 15 only, let the app run on
  srun gprof-run -o run.%q{SLURM_PROCID} ./app        one run directory per rank
  mpirun -n 4 gprof-run -o run.%q{OMPI_COMM_WORLD_RANK} ./app
  gprof-run --log-file prof.log --no-timeline -- ./app -o out.txt
)";

// CLI11 2.1 has no setting for a usage line with a trailing command.
class Formatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App*, std::string) const override {
        return "Usage: gprof-run [options] [--] app [args...]\n";
    }
};

std::string error_text(const std::string& what) {
    return "gprof-run: error: " + what + "\nRun 'gprof-run --help' for usage.\n";
}

}  // namespace

namespace {

// nsys profile -t values and what gprof-run records for each: "cuda", "nvtx", or "" (not recorded).
struct TraceName {
    const char* name;
    const char* records;
};
const TraceName kTraceNames[] = {
    {"cuda", "cuda"},     {"nvtx", "nvtx"},         {"cuda-sw", "cuda"},     {"cublas", "cuda"},
    {"cublas-verbose", "cuda"}, {"cudnn", "cuda"},  {"cusolver", "cuda"},    {"cusolver-verbose", "cuda"},
    {"cusparse", "cuda"}, {"cusparse-verbose", "cuda"}, {"openacc", "cuda"}, {"osrt", "osrt"},
    {"opengl", ""},       {"opengl-annotations", ""}, {"cudla", ""},         {"cudla-verbose", ""},
    {"openmp", ""},       {"mpi", ""},              {"ucx", ""},             {"oshmem", ""},
    {"nccl", ""},         {"nvvideo", ""},          {"python-gil", ""},      {"gds", ""},
    {"s3", ""},           {"s3-verbose", ""},       {"vulkan", ""},          {"vulkan-annotations", ""},
    {"dx11", ""},         {"dx11-annotations", ""}, {"dx12", ""},            {"dx12-annotations", ""},
    {"openxr", ""},       {"openxr-annotations", ""}, {"wddm", ""},          {"tegra-accelerators", ""},
};

}  // namespace

std::string check_trace(std::string_view text, std::string& normalised, std::string& note) {
    std::vector<std::string> records, unrecorded, unknown;
    bool none = false;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        std::string item(text.substr(start, comma - start));
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (item.empty()) return "--trace: empty item in '" + std::string(text) + "'";
        start = comma + 1;
        if (item == "none") {
            none = true;
            continue;
        }
        const TraceName* known = nullptr;
        for (const auto& t : kTraceNames)
            if (item == t.name) known = &t;
        auto add = [](std::vector<std::string>& v, const std::string& x) {
            if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
        };
        if (!known) add(unknown, item);
        else if (*known->records) add(records, known->records);
        else add(unrecorded, item);
    }
    // A name nsys does not know either is a typo: recording nothing with exit 0 would waste the run (issue 30).
    if (!unknown.empty()) {
        std::vector<std::string> names{"none"};
        for (const auto& t : kTraceNames) names.push_back(t.name);
        const std::string& typo = unknown.front();
        std::string hint = gprof::report::did_you_mean(typo, names);
        return "--trace: unknown item '" + typo + "'" + (hint.empty() ? "" : hint) +
               " (gprof-run records cuda, nvtx and osrt; nsys's other -t names are taken and noted)";
    }
    if (none && (!records.empty() || !unrecorded.empty()))
        return "--trace: 'none' cannot be combined with other items";
    auto has = [&records](const char* k) { return std::find(records.begin(), records.end(), k) != records.end(); };
    normalised = gprof::env::trace_text({has("cuda"), has("nvtx"), has("osrt")});
    note.clear();
    auto list = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
        return out;
    };
    if (!unrecorded.empty())
        note = "--trace: " + list(unrecorded) + " not recorded (gprof-run records cuda, nvtx and osrt)";
    if (!note.empty()) note += "; recording " + normalised;
    return {};
}

std::string fold_switch_values(std::vector<std::string>& args, const std::vector<SwitchSpelling>& switches) {
    // Options of ours that take a value in the next argument (so the scan does not take that value for the app).
    static const char* const kWithValue[] = {"-o", "--output", "-t", "--trace", "-c", "--capture-range", "-p",
                                             "--nvtx-capture", "--capture-range-end", "--cuda-graph-trace", "-y",
                                             "--delay", "-d", "--duration", "--kernel-filter", "--summary",
                                             "--log-file", "--timeline", "--wait-children", "--log-level",
                                             "--export", "--timeunit", "--cuda-api", "--cudabacktrace", "-s",
                                             "--sample", "--sampling-frequency", "--osrt-threshold",
                                             "--osrt-backtrace-threshold", "--cpuctxsw"};
    std::vector<std::string> out;
    size_t i = 0;
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--" || a.empty() || a[0] != '-' || a == "-") break;  // the app starts here
        std::string name = a.substr(0, a.find('='));
        bool has_value = name.size() != a.size();
        bool* target = nullptr;
        for (const auto& sw : switches)
            if (std::find(sw.names.begin(), sw.names.end(), name) != sw.names.end()) target = sw.value;
        if (target) {
            std::string value = has_value ? a.substr(name.size() + 1) : "true";
            if (!has_value && i + 1 < args.size() && (args[i + 1] == "true" || args[i + 1] == "false")) value = args[++i];
            if (value != "true" && value != "false") return name + ": '" + value + "' is not true or false";
            *target = value == "true";
            continue;
        }
        out.push_back(a);
        if (!has_value && std::find_if(std::begin(kWithValue), std::end(kWithValue), [&](const char* o) {
                              return name == o;
                          }) != std::end(kWithValue) && i + 1 < args.size())
            out.push_back(args[++i]);
    }
    out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    args = std::move(out);
    return {};
}

std::string check_sample(std::string_view text, std::string& normalised, std::string& note) {
    note.clear();
    bool on = false;
    if (gprof::env::parse_sample(text, on)) {
        normalised = on ? "process-tree" : "none";
        return "";
    }
    if (text == "cpu" || text == "system-wide") {
        normalised = "process-tree";
        note = "--sample: " + std::string(text) + " taken as process-tree" +
               (text == "system-wide" ? " (gprof-run samples the traced processes, not the whole system)" : "");
        return "";
    }
    return "--sample: '" + std::string(text) + "' is not " + gprof::env::kSampleExpected +
           gprof::report::did_you_mean(std::string(text), {"process-tree", "system-wide", "cpu", "none"});
}

std::string check_capture_range(std::string_view text) {
    gprof::env::CaptureRange range;
    if (gprof::env::parse_capture_range(text, range)) return {};
    if (text == "nvtx" || text == "nvtx:")
        return "--capture-range nvtx needs a range name: nvtx:NAME[@DOMAIN], or nvtx with --nvtx-capture NAME[@DOMAIN]";
    if (text.substr(0, 5) == "nvtx:") {
        if (text.substr(5).rfind('@') == 0) return "--capture-range: empty range name in '" + std::string(text) + "'";
        return "--capture-range: empty domain name in '" + std::string(text) + "'";
    }
    return "--capture-range: '" + std::string(text) + "' is not none, cudaProfilerApi, nvtx or nvtx:NAME[@DOMAIN]";
}

std::string check_capture_range_end(std::string_view text, std::string& normalised, std::string& note) {
    note.clear();
    // nsys's -shutdown forms name what gprof-run never does (end the app); the rest is the collector's grammar.
    gprof::env::CaptureEnd end;
    auto count = [&end](std::string_view n) {
        return gprof::env::parse_capture_range_end("repeat:" + std::string(n), end);
    };
    if (gprof::env::parse_capture_range_end(text, end)) {
        normalised = std::string(text);
    } else if (text == "stop-shutdown") {
        normalised = "stop";
        note = "--capture-range-end stop-shutdown is taken as stop: recording ends with the first range and the "
               "app runs on (gprof-run never ends the app)";
    } else if (text.substr(0, 16) == "repeat-shutdown:" && count(text.substr(16))) {
        normalised = "repeat:" + std::string(text.substr(16));
        note = "--capture-range-end " + std::string(text) + " is taken as " + normalised +
               ": recording ends after that many ranges and the app runs on (gprof-run never ends the app)";
    } else {
        return "--capture-range-end: '" + std::string(text) +
               "' is not " + gprof::env::kCaptureRangeEndExpected + " (nsys's stop-shutdown and repeat-shutdown:N are "
               "taken as stop and repeat:N)";
    }
    return {};
}

// Plain decimal seconds (digits, optionally a fraction): the collector parses the same text with the same parser.
std::string check_seconds(std::string_view text, bool allow_zero) {
    double seconds = 0;
    if (!gprof::env::parse_seconds(text, seconds))
        return "'" + std::string(text) + "' is not a number of seconds (e.g. 2 or 0.5)";
    if (!allow_zero && seconds <= 0.0)
        return "'" + std::string(text) + "' must be more than 0 seconds";
    return {};
}

std::string check_regex(const std::string& text) {
    try {
        std::regex re(text, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        return "--kernel-filter: '" + text + "' is not a valid regular expression (" + e.what() + ")";
    }
    return {};
}

ParseResult parse_command_line(int argc, const char* const* argv) {
    ParseResult result;
    LaunchOptions o;

    CLI::App app{"gprof-run " GPROF_VERSION
                 ": profile an unmodified CUDA program and every process it starts.",
                 "gprof-run"};
    app.footer(kExamples);
    app.formatter(std::make_shared<Formatter>());
    // Everything from the first argument that is not one of ours on belongs to the app.
    app.prefix_command();

    std::string output, trace, backtrace, capture, nvtx_capture, capture_end, graph_trace, delay, duration, log_level,
        summary, log_file, timeline, wait;
    bool version = false;
    app.add_option("-o,--output", output,
                   "Run directory: traces, timeline.json, summary.txt and report.html (default: gprof-<app>-<date>-<time>)")
        ->type_name("DIR");
    app.add_option("-t,--trace", trace, "What to record: a comma list of cuda, nvtx, osrt (OS-runtime calls: "
                                        "blocking C library calls); default cuda,nvtx,osrt; or none")
        ->type_name("LIST");
    app.add_flag("--backtrace", backtrace,
                 "Record a call stack with each CUDA API call; --backtrace=DEPTH for 1-64 frames");
    std::string cudabacktrace;
    app.add_option("--cudabacktrace", cudabacktrace,
                   "Call stacks only for some CUDA API calls, as nsys: a comma list of all, kernel, memory, sync, "
                   "other, each with an optional :THRESHOLD_NS (default 80000: calls that take at least that long), "
                   "or none; depth from --backtrace=DEPTH, else 16 frames")
        ->type_name("KIND[:NS],...");
    std::string sample, sampling_frequency, osrt_threshold, osrt_backtrace_threshold;
    app.add_option("-s,--sample", sample,
                   "CPU sampling of every thread of every traced process, native and Python frames: process-tree "
                   "(default) or none")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->type_name("process-tree|none");
    app.add_option("--sampling-frequency", sampling_frequency,
                   "CPU samples per second of each thread's CPU time, 100-8000 (default 1000)")
        ->type_name("HZ");
    app.add_option("--osrt-threshold", osrt_threshold,
                   "With --trace osrt: record the blocking C library calls that last at least NS nanoseconds "
                   "(default 1000)")
        ->type_name("NS");
    app.add_option("--osrt-backtrace-threshold", osrt_backtrace_threshold,
                   "With --trace osrt: a call that lasts at least NS nanoseconds gets its call site (default 80000)")
        ->type_name("NS");
    app.add_option("-c,--capture-range", capture,
                   "none (default), cudaProfilerApi, nvtx:NAME[@DOMAIN], or nvtx with -p: record CUDA activity only "
                   "inside that range (NVTX ranges are all recorded)")
        ->type_name("RANGE");
    app.add_option("-p,--nvtx-capture", nvtx_capture,
                   "With -c nvtx: the NVTX range that opens recording, NAME, NAME@DOMAIN or NAME@* (any domain)")
        ->type_name("NAME[@DOMAIN]");
    app.add_option("--capture-range-end", capture_end,
                   "After a capture range ends: stop (default: no further range records), repeat (every later "
                   "range records), repeat:N (N ranges in all) or none (recording stays on)")
        ->type_name("MODE");
    app.add_option("--cuda-graph-trace", graph_trace,
                   "CUDA graphs: node (default: every kernel, memcpy and memset of every launch, with graph and node "
                   "ids) or graph (one GPU record per launch; cheaper, no nodes)")
        ->type_name("node|graph");
    app.add_flag("--cuda-nested-driver-calls", o.cuda_nested_driver_calls,
                 "Also record the driver calls the CUDA runtime makes internally (cuKernelGetName, cuGetProcAddress, "
                 "...) and show them in the reports");
    std::string cuda_api;
    app.add_option("--cuda-api", cuda_api,
                   "Where CUDA API calls are recorded from: activity (default: CUPTI's API records), callback (CUPTI's "
                   "callbacks, timed by gprof-run) or off (GPU activity only); see docs/performance.md")
        ->type_name("activity|callback|off");
    GpuMetricsText gpu_metrics;
    add_gpu_metrics_options(app, gpu_metrics);
    app.add_option("-y,--delay", delay, "Start recording SEC seconds after each process starts")
        ->type_name("SEC");
    app.add_option("-d,--duration", duration, "Stop recording after SEC seconds; the app runs on")
        ->type_name("SEC");
    app.add_option("--kernel-filter", o.kernel_filter, "Summarise only kernels whose name matches REGEX")
        ->type_name("REGEX");
    app.add_flag("--no-children", o.no_children, "Trace only the app itself, not the processes it starts");
    app.add_option("--summary", summary, "End-of-run summary: none, brief (default) or full")->type_name("MODE");
    app.add_option("--log-file", log_file, "Write gprof-run's messages and the summary to PATH, not stderr")
        ->type_name("PATH");
    app.add_option("--timeline", timeline,
                   "Where to write the timeline (default: <run dir>/timeline.json; a name ending in .pftrace "
                   "writes Perfetto's protobuf, as does a run too big for JSON)")
        ->type_name("PATH");
    // --no-<name> for each output written unless left out (end_of_run/outputs.h: the timeline, report.html).
    std::map<std::string, bool> leave_out;
    for (const auto& def : gprof::report::outputs())
        if (def.at_end == gprof::report::AtEndOfRun::UnlessLeftOut)
            app.add_flag("--no-" + std::string(def.name), leave_out[std::string(def.name)],
                         "Do not write " + std::string(def.default_file) + " (" + std::string(def.what) + ")");
    app.add_option("--wait-children", wait,
                   "Once the app has exited, wait at most SEC seconds for processes it left running (default 10)")
        ->type_name("SEC");
    app.add_option("--log-level", log_level, "trace, debug, info, warn (default), error or off")
        ->type_name("LEVEL");
    // Parsed by fold_switch_values (nsys's true|false values); listed here for --help.
    bool force_seen = false, stats_seen = false, show_output = true, cuda_memory_usage = false, fork_before_exec = false;
    app.add_flag("-f,--force,--force-overwrite", force_seen,
                 "Replace an existing run directory, log file or timeline (nsys: -f true|false, "
                 "--force-overwrite=true)");
    app.add_flag("--stats", stats_seen,
                 "After the run, print nsys's report tables (nvtx_sum, cuda_api_sum, cuda_gpu_kern_sum, "
                 "cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum) with the summary (nsys: --stats=true)");
    std::vector<std::string> exports;
    std::string export_help = "After the run, also write";
    for (const auto& def : gprof::report::outputs())
        if (def.at_end == gprof::report::AtEndOfRun::OnExport)
            export_help += " " + std::string(def.name) + " (<run dir>/" + std::string(def.default_file) + ": " +
                           std::string(def.what) + ");";
    app.add_option("--export", exports, export_help + " a comma list, repeatable; none = nothing")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("FORMAT");
    // nsys habits, taken so that an nsys command line runs (docs/launcher.md says what each does here).
    std::string cpuctxsw;
    app.add_option("--cpuctxsw", cpuctxsw,
                   "nsys's context-switch trace: process-tree, system-wide or none. Not recorded here (none is what "
                   "gprof-run does; the others are noted)")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->type_name("MODE");
    app.add_flag("-w,--show-output", show_output,
                 "nsys's -w true|false: the program's output is always shown (gprof-run never touches it)");
    app.add_flag("--cuda-memory-usage", cuda_memory_usage,
                 "nsys's --cuda-memory-usage=true: CUDA memory is always recorded here (gprof-report memory)");
    app.add_flag("--trace-fork-before-exec", fork_before_exec,
                 "nsys's --trace-fork-before-exec=true: a forked child is always traced from the fork on");
    app.add_option("--timeunit", o.timeunit, "Time unit of the --stats tables: ns (default), us, ms, s or nsys's "
                                             "nsec, usec, msec, seconds...")
        ->type_name("UNIT");
    app.add_flag("--check", o.check,
                 "Say whether this machine is ready to profile (the CUDA driver, every CUPTI found and which one a run "
                 "uses, NVTX, what a run records) and exit: 0 ready, 1 not; an app, if given, names its Python "
                 "environment");
    app.add_flag("-V,--version", version, "Print the version and exit");

    // nsys's true|false switch values, folded before CLI11 sees them (it would take "true" for the app).
    std::vector<std::string> args(argv + 1, argv + argc);
    bool show_output_given = true, memory_usage_given = true, fork_given = true;
    const std::vector<SwitchSpelling> switches = {
        {{"-f", "--force", "--force-overwrite"}, &o.force},
        {{"--stats"}, &o.stats},
        {{"-w", "--show-output"}, &show_output_given},
        {{"--cuda-memory-usage"}, &memory_usage_given},
        {{"--trace-fork-before-exec"}, &fork_given},
    };
    if (auto e = fold_switch_values(args, switches); !e.empty()) {
        result.exit_code = 2;
        result.to_stderr = error_text(e);
        return result;
    }
    std::vector<const char*> folded{argv[0]};
    for (const auto& a : args) folded.push_back(a.c_str());
    try {
        app.parse(static_cast<int>(folded.size()), const_cast<char**>(folded.data()));
    } catch (const CLI::CallForHelp&) {
        result.to_stdout = app.help();
        return result;
    } catch (const CLI::ParseError& e) {
        result.exit_code = 2;
        result.to_stderr = error_text(e.what());
        return result;
    }
    if (version) {
        result.to_stdout = std::string(GPROF_PRODUCER) + "\n";
        return result;
    }
    if (gpu_metrics_help_asked(app, gpu_metrics)) {
        result.to_stdout = gpu_metrics_set_help();
        return result;
    }

    auto fail = [&](const std::string& what) {
        result.exit_code = 2;
        result.to_stderr = error_text(what);
        return result;
    };

    std::vector<std::string> rest = app.remaining();
    if (!rest.empty() && rest.front() == "--") {
        rest.erase(rest.begin());
    } else if (!rest.empty() && rest.front().size() > 1 && rest.front()[0] == '-') {
        return fail("unknown option '" + rest.front() + "' (use -- before an application whose name starts with '-')");
    }
    if (rest.empty() && !o.check) return fail("no application given: gprof-run [options] [--] app [args...]");
    if (!rest.empty() && rest.front().empty()) return fail("the application name is empty");
    o.command = std::move(rest);

    if (app.count("--output")) {
        if (output.empty()) return fail("--output: empty directory name");
        o.output = output;
    }
    if (app.count("--trace")) {
        std::string note;
        if (auto e = check_trace(trace, o.trace, note); !e.empty()) return fail(e);
        if (!note.empty()) result.notes.push_back(note);
    }
    const std::vector<std::string> exportable = gprof::report::output_names(gprof::report::AtEndOfRun::OnExport);
    std::string exportable_text;
    for (const auto& e : exportable) exportable_text += (exportable_text.empty() ? "" : " and ") + e;
    // nsys's other export formats are named in a note; anything else is a typo (exit 2, with the nearest name).
    static const char* const kNsysExports[] = {"arrow", "arrowdir", "hdf", "jsonlines", "parquetdir", "text"};
    for (const auto& e : exports) {
        if (e == "none") continue;
        if (std::find(exportable.begin(), exportable.end(), e) != exportable.end()) {
            if (std::find(o.exports.begin(), o.exports.end(), e) == o.exports.end()) o.exports.push_back(e);
        } else if (std::find(std::begin(kNsysExports), std::end(kNsysExports), e) != std::end(kNsysExports)) {
            result.notes.push_back("--export: " + e + " is not written (gprof-run exports " + exportable_text + ")");
        } else {
            std::vector<std::string> names = exportable;
            names.insert(names.end(), std::begin(kNsysExports), std::end(kNsysExports));
            return fail("--export: unknown format '" + e + "'" + gprof::report::did_you_mean(e, names) +
                        " (gprof-run exports " + exportable_text + ")");
        }
    }
    for (const auto& [name, yes] : leave_out)
        if (yes) o.left_out.insert(name);
    if (!show_output_given)
        result.notes.push_back("--show-output false: gprof-run never touches the program's output; it is shown");
    if (!memory_usage_given)
        result.notes.push_back("--cuda-memory-usage false: CUDA memory is always recorded (it costs little here)");
    if (!fork_given)
        result.notes.push_back("--trace-fork-before-exec false: forked children are always traced from the fork on");
    if (app.count("--timeunit") && !o.stats)
        result.notes.push_back("--timeunit applies to the --stats tables: without --stats it changes nothing");
    if (app.count("--cpuctxsw")) {
        if (cpuctxsw != "process-tree" && cpuctxsw != "system-wide" && cpuctxsw != "none")
            return fail("--cpuctxsw: '" + cpuctxsw + "' is not process-tree, system-wide or none" +
                        gprof::report::did_you_mean(cpuctxsw, {"process-tree", "system-wide", "none"}));
        if (cpuctxsw != "none")
            result.notes.push_back("--cpuctxsw " + cpuctxsw +
                                   ": context switches are not recorded (CPU samples are: --sample)");
    }
    // nsys's --backtrace names the samples' unwinder; here the samples are always unwound with DWARF (libunwind)
    // and --backtrace[=DEPTH] turns on CUDA call sites. nsys's values change nothing: dwarf is what happens anyway,
    // the others are noted.
    if (app.count("--backtrace") &&
        (backtrace == "dwarf" || backtrace == "fp" || backtrace == "lbr" || backtrace == "none")) {
        if (backtrace != "dwarf")
            result.notes.push_back("--backtrace=" + backtrace +
                                   ": CPU samples are always unwound with DWARF (libunwind) here; --backtrace=DEPTH "
                                   "is the depth of CUDA call sites");
    } else if (app.count("--backtrace")) {
        if (backtrace == "true") backtrace = "1";  // bare flag: the collector's default depth
        // The variable also takes 0 (off) and clamps a larger depth; the option asks for a real depth.
        uint64_t depth = 0;
        if (!gprof::env::parse_count(backtrace, depth) || depth < 1 || depth > gprof::env::kMaxBacktraceDepth)
            return fail("--backtrace=" + backtrace + ": the depth must be 1 to 64 frames");
        o.backtrace = backtrace;
    }
    if (app.count("--cudabacktrace")) {
        gprof::env::CudaBacktraceSpec spec;
        std::string why = gprof::env::parse_cuda_backtrace(cudabacktrace, spec);
        if (!why.empty()) return fail("--cudabacktrace=" + cudabacktrace + ": " + why);
        o.cudabacktrace = cudabacktrace;
    }
    if (app.count("--sample")) {
        std::string normalised, note;
        if (auto e = check_sample(sample, normalised, note); !e.empty()) return fail(e);
        o.sample = normalised;
        if (!note.empty()) result.notes.push_back(note);
    }
    if (app.count("--sampling-frequency")) {
        uint32_t hz = 0;
        if (!gprof::env::parse_sampling_frequency(sampling_frequency, hz))
            return fail("--sampling-frequency: '" + sampling_frequency + "' is not " +
                        gprof::env::kSamplingFrequencyExpected);
        if (o.sample == "none")
            result.notes.push_back("--sampling-frequency with --sample none: nothing is sampled");
        o.sampling_frequency = std::to_string(hz);
    }
    for (auto [name, text, into] : {std::tuple{"--osrt-threshold", &osrt_threshold, &o.osrt_threshold},
                                    {"--osrt-backtrace-threshold", &osrt_backtrace_threshold,
                                     &o.osrt_backtrace_threshold}}) {
        if (!app.count(name)) continue;
        uint64_t ns = 0;
        if (!gprof::env::parse_nanoseconds(*text, ns))
            return fail(std::string(name) + ": '" + *text + "' is not a number of nanoseconds");
        if (o.trace.find("osrt") == std::string::npos)
            result.notes.push_back(std::string(name) + " without osrt in --trace: no OS-runtime calls are recorded");
        *into = std::to_string(ns);
    }
    if (app.count("--nvtx-capture")) {
        if (!app.count("--capture-range") || (capture != "nvtx" && capture.rfind("nvtx:", 0) != 0))
            return fail("--nvtx-capture needs --capture-range nvtx");
        if (capture != "nvtx")
            return fail("the NVTX range is named twice: use --capture-range nvtx:NAME or --capture-range nvtx "
                        "--nvtx-capture NAME");
        capture = "nvtx:" + nvtx_capture;
    }
    if (app.count("--capture-range")) {
        if (auto e = check_capture_range(capture); !e.empty()) return fail(e);
        if (capture != "none") o.capture_range = capture;
    }
    if (app.count("--capture-range-end")) {
        if (!o.capture_range) return fail("--capture-range-end needs --capture-range cudaProfilerApi or nvtx");
        std::string normalised, note;
        if (auto e = check_capture_range_end(capture_end, normalised, note); !e.empty()) return fail(e);
        o.capture_range_end = normalised;
        if (!note.empty()) result.notes.push_back(note);
    }
    if (app.count("--cuda-graph-trace")) {
        gprof::env::GraphTrace parsed;
        if (!gprof::env::parse_graph_trace(graph_trace, parsed))
            return fail("--cuda-graph-trace: '" + graph_trace + "' is not " + gprof::env::kGraphTraceExpected);
        o.cuda_graph_trace = graph_trace;
    }
    if (app.count("--cuda-api")) {
        gprof::env::ApiSource parsed;
        if (!gprof::env::parse_api_source(cuda_api, parsed))
            return fail("--cuda-api: '" + cuda_api + "' is not " + gprof::env::kApiSourceExpected);
        o.cuda_api = cuda_api;
    }
    if (auto e = take_gpu_metrics_options(app, gpu_metrics, o, result.notes); !e.empty()) return fail(e);
    if (app.count("--delay")) {
        if (auto e = check_seconds(delay, true); !e.empty()) return fail("--delay: " + e);
        o.delay_sec = delay;
    }
    if (app.count("--duration")) {
        if (auto e = check_seconds(duration, false); !e.empty()) return fail("--duration: " + e);
        o.duration_sec = duration;
    }
    if (app.count("--wait-children")) {
        if (auto e = check_seconds(wait, true); !e.empty()) return fail("--wait-children: " + e);
        o.wait_children_sec = std::strtod(wait.c_str(), nullptr);
    }
    if (app.count("--kernel-filter")) {
        if (auto e = check_regex(o.kernel_filter); !e.empty()) return fail(e);
    }
    if (app.count("--summary")) {
        if (summary == "none") o.summary = SummaryChoice::None;
        else if (summary == "brief") o.summary = SummaryChoice::Brief;
        else if (summary == "full") o.summary = SummaryChoice::Full;
        else return fail("--summary: '" + summary + "' is not none, brief or full");
    }
    if (app.count("--log-level")) {
        if (!gprof::env::is_log_level(log_level) || !parse_log_level(log_level, o.console_level))
            return fail("--log-level: '" + log_level + "' is not trace, debug, info, warn, error or off");
        o.log_level = log_level;
    }
    if (app.count("--log-file")) {
        if (log_file.empty()) return fail("--log-file: empty path");
        o.log_file = log_file;
    }
    if (app.count("--timeline")) {
        if (o.left_out.count("timeline")) return fail("--timeline and --no-timeline contradict each other");
        if (timeline.empty()) return fail("--timeline: empty path");
        o.timeline = timeline;
    }
    result.options = std::move(o);
    return result;
}

}  // namespace gprof::launcher
