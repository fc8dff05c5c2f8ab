// gprof-report: turns gprof-run traces into summaries (nvprof/nsys layouts), tables for CI, and Chrome timelines.
//
//   gprof-report [REPORT...] [--format table|csv|json|markdown] [-o FILE] [filters] RUN_DIR_OR_TRACES...
//   gprof-report timeline [-o out.json|out.pftrace] [--format json|perfetto] [--gzip] [filters] RUN_DIR_OR_TRACES...
//   gprof-report diff ... / analyze ...   (report/diff/, report/analyze/)
//
// Exit status: 0 ok, 2 usage or input error (diff adds 1 = regression).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/symbolize.h"
#include "output/output_file.h"
#include "output/progress.h"
#include "reports/reports.h"
#include "cli/subcommands.h"
#include "output/text.h"
#include "timeline/timeline.h"
#include "gprof/version.h"

namespace fs = std::filesystem;
using namespace gprof::report;

namespace {

struct FilterArgs {
    std::vector<int64_t> pids;
    std::vector<uint32_t> devices;
    std::string time_range;
    std::string kernel_filter;
    bool nested_driver_calls = false;
    std::vector<std::string> clock_offsets;

    void add_to(CLI::App* app) {
        app->add_option(kClockOffsetFlag, clock_offsets, kClockOffsetHelp);
        app->add_flag(kNestedDriverCallsFlag, nested_driver_calls, kNestedDriverCallsHelp);
        // One value per occurrence (repeatable, or a comma list): `--process 417 RUN` must leave RUN alone.
        app->add_option("--process", pids, "Only these processes (PID; repeatable or a comma list)")
            ->delimiter(',')
            ->allow_extra_args(false);
        app->add_option("--device", devices, "Only GPU work of these devices (repeatable or a comma list)")
            ->delimiter(',')
            ->allow_extra_args(false);
        app->add_option("--time-range", time_range,
                        "Only records overlapping A:B on the run axis (ns since the session start; units ns/us/ms/s, "
                        "either side may be empty: 2s:, :500ms)");
        app->add_option("--kernel-filter", kernel_filter,
                        "Only kernels whose name (demangled as shown, or mangled) matches this ECMAScript regex");
    }
    Filter build() const {
        Filter f;
        f.pids = pids;
        f.devices = devices;
        f.nested_driver_calls = nested_driver_calls;
        for (const auto& c : clock_offsets) parse_clock_offset(c, f);
        if (!time_range.empty()) parse_time_range(time_range, f);
        if (!kernel_filter.empty()) {
            try {
                std::regex re(kernel_filter, std::regex::ECMAScript);
            } catch (const std::regex_error& e) {
                throw std::invalid_argument("--kernel-filter '" + kernel_filter + "' is not a valid regex: " + e.what());
            }
            f.kernel_regex = kernel_filter;
        }
        return f;
    }
};

int fail(const std::string& message) {
    std::cerr << "gprof-report: error: " << message << '\n';
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"gprof-report " GPROF_VERSION
                 ": summaries, nsys-style reports and Chrome timelines from gprof-run traces"};
    app.set_version_flag("--version", "gprof-report " GPROF_VERSION);
    int exit_code = 0;

    // Main command: reports.
    std::vector<std::string> positionals;
    std::string format = "table", output, timeunit = "ns";
    FilterArgs filters;
    std::string names;
    for (const auto& n : report_names()) names += (names.empty() ? "" : ", ") + n;
    app.add_option("args", positionals, "Reports (" + names + "; default summary) then run directories or trace files");
    // nsys stats spellings: -r/--report NAME[,NAME...], -f/--format, -o/--output, --timeunit nsec|usec|...
    std::vector<std::string> report_opts;
    app.add_option("-r,--report", report_opts, "Reports to make, as nsys stats takes them (repeatable or a comma "
                                               "list; nsys's old names such as gpukernsum work too)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app.add_option("-f,--format", format, "table (nsys: column), csv, json or markdown");
    app.add_option("-o,--output", output, "Write to FILE instead of standard output");
    app.add_option("--timeunit", timeunit, "Time unit of table/csv/markdown time columns: ns, us, ms, s or nsys's "
                                           "nsec, usec, msec, seconds... (json is always ns)");
    size_t name_width = kDefaultNameWidth;
    app.add_option("--name-width", name_width, "table/markdown: shorten names longer than N characters in the "
                                               "middle (0 = full names; csv and json always keep them)")
        ->capture_default_str();
    bool force = false;  // -o over an existing file (report/output/output_file.h: never through a symlink)
    app.add_flag("--force,--force-overwrite", force, "Replace the -o file if it exists (never through a symbolic link)");
    size_t rows = 0;
    app.add_option("--rows", rows, "summary: rows per section of the console table, like gprof-run's brief summary "
                                   "(default: all)");
    bool all_processes = false;
    app.add_flag("--all-processes", all_processes,
                 "summary: list every process, also the helpers with no GPU or NVTX activity (compilers, shells), "
                 "which are otherwise one line");
    bool ignore_damage = false;
    app.add_flag("--ignore-damage", ignore_damage,
                 "Exit 0 even when a trace is cut, corrupt or unreadable (the report shows what was intact)");
    filters.add_to(&app);
    // Where separate debug files are looked for when stacks are symbolised (model/symbolize.h); before a subcommand.
    std::vector<std::string> debug_dirs;
    app.add_option("--debug-file-directory", debug_dirs,
                   "Look for separate debug files (DIR/.build-id/xx/rest.debug, debuglink) under DIR instead of "
                   "/usr/lib/debug, like gdb's debug-file-directory (repeatable; give it before a subcommand)");

    // timeline subcommand.
    auto* tl = app.add_subcommand("timeline", "Timeline of a run: Chrome Trace Event JSON or Perfetto protobuf "
                                              "(open either in ui.perfetto.dev)");
    std::vector<std::string> tl_inputs;
    std::string tl_output, tl_format;
    bool tl_gzip = false;
    FilterArgs tl_filters;
    tl->add_option("inputs", tl_inputs, "Run directories or trace files")->required();
    tl->add_option("-o,--output", tl_output,
                   "Output file (default: timeline.json, timeline.json.gz with --gzip, timeline.pftrace with "
                   "--format perfetto); a name ending in .pftrace or .perfetto-trace selects the protobuf");
    tl->add_option("--format", tl_format, "json (Chrome Trace Event) or perfetto (Perfetto's native protobuf, "
                                          "about 1/5 the size); default: by the output's name, else json")
        ->check(CLI::IsMember({"json", "perfetto"}));
    tl->add_flag("--gzip", tl_gzip, "Write gzip-compressed JSON (Perfetto reads it directly)");
    bool tl_force = false;
    tl->add_flag("--force,--force-overwrite", tl_force, "Replace the output file if it exists (never through a symbolic link)");
    bool tl_no_analysis = false;
    tl->add_flag("--no-analysis", tl_no_analysis, "Leave out the analysis track (verdict, idle gaps, findings)");
    tl_filters.add_to(tl);

    register_diff_command(app, &exit_code);
    register_analyze_command(app, &exit_code);
    register_ranks_command(app, &exit_code);
    register_export_command(app, &exit_code);
    register_html_command(app, &exit_code);
    app.require_subcommand(0, 1);

    // Long reads show progress with rate and time left, on a terminal only: never in redirected output or CI logs,
    // and not over JSON that goes to the same terminal.
    if (::isatty(STDERR_FILENO) && !std::getenv("CI")) {
        set_progress_hook([&format, progress = std::make_shared<TerminalProgress>(std::cerr)](const Progress& p) {
            if (format == "json" && ::isatty(STDOUT_FILENO)) return;
            (*progress)(p);
        });
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (!debug_dirs.empty()) set_debug_file_directories(debug_dirs);

    try {
        if (tl->parsed()) {
            Filter f = tl_filters.build();
            LoadOptions lo;
            lo.filter = f;
            std::vector<fs::path> in(tl_inputs.begin(), tl_inputs.end());
            Run run = load_run(in, lo);
            for (const auto& w : run.all_warnings()) std::cerr << "gprof-report: warning: " << w << '\n';
            if (run.processes.empty() && f.pids.empty()) return fail("no readable trace among the inputs");
            TimelineOptions to;
            to.format = !tl_format.empty()  ? (tl_format == "perfetto" ? TimelineFormat::Perfetto : TimelineFormat::ChromeJson)
                        : tl_output.empty() ? TimelineFormat::ChromeJson
                                            : timeline_format_for(tl_output);
            if (to.format == TimelineFormat::Perfetto && tl_gzip) return fail("--gzip applies to the JSON timeline only");
            fs::path out = !tl_output.empty()                        ? fs::path(tl_output)
                           : to.format == TimelineFormat::Perfetto ? fs::path("timeline.pftrace")
                           : tl_gzip                                ? fs::path("timeline.json.gz")
                                                                    : fs::path("timeline.json");
            to.gzip = tl_gzip;
            to.force = tl_force;
            to.analysis_track = !tl_no_analysis;
            TimelineStats st = write_timeline(run, out, to);
            for (const auto& w : st.warnings) std::cerr << "gprof-report: warning: " << w << '\n';
            std::cerr << "gprof-report: wrote " << out.string() << " (" << st.events << " events, "
                      << format_fixed(static_cast<double>(st.file_bytes) / 1e6, 1) << " MB)\n";
            return 0;
        }
        for (auto* sub : app.get_subcommands())
            if (sub->get_name() == "diff" || sub->get_name() == "analyze" || sub->get_name() == "ranks" ||
                sub->get_name() == "export" || sub->get_name() == "html")
                return exit_code;

        // Split positionals: report names first; everything else is an input. A path that exists wins over a
        // report name, so a run directory called "summary" still works.
        ReportOptions ro;
        std::vector<fs::path> inputs;
        ro.reports = report_opts;
        for (const auto& p : positionals) {
            std::error_code ec;
            bool exists = fs::exists(p, ec);
            ReportRequest req = resolve_report(p);
            if ((req.known || !req.unavailable.empty()) && !exists) ro.reports.push_back(p);
            // Neither a report nor a file: a mistyped report name, most likely (paths have a '/' or a suffix).
            else if (!exists && p.find('/') == std::string::npos && p.find('.') == std::string::npos)
                return fail(unknown_report_message(p) + " (and no file or directory '" + p + "' exists)");
            else inputs.emplace_back(p);
        }
        if (inputs.empty()) return fail("no run directory or trace given (try --help)");
        ro.format = parse_format(format);
        ro.time_unit = parse_time_unit(timeunit);
        ro.filter = filters.build();
        ro.ignore_damage = ignore_damage;
        ro.all_processes = all_processes;
        ro.brief_rows = rows;
        ro.name_width = name_width;
        auto traces = expand_inputs(inputs);
        if (output.empty()) return run_reports(traces, ro, std::cout, std::cerr);
        OutputFile f(output, force);
        int rc = run_reports(traces, ro, f.stream(), std::cerr);
        f.commit();
        return rc;
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}
