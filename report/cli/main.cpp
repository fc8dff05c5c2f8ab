// gprof-report: turns gprof-run traces into summaries (nvprof/nsys layouts), tables for CI, and Chrome timelines.
//
//   gprof-report [REPORT...|stats] [--format table|csv|json|markdown] [-o FILE] [filters] RUN_DIR_OR_TRACES...
//   gprof-report timeline|html|export ...   (the outputs list: end_of_run/outputs.h)
//   gprof-report diff ... / analyze ... / ranks ...   (report/diff/, report/analyze/)
//
// One behaviour per concept in every subcommand (output/cli_options.h): --force, -o, the filters, the error line.
// Exit status: 0 ok, 2 usage or input error (diff adds 1 = regression).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/subcommands.h"
#include "end_of_run/end_of_run.h"
#include "end_of_run/outputs.h"
#include "model/aggregate.h"
#include "model/model.h"
#include "model/symbolize.h"
#include "output/cli_options.h"
#include "output/output_file.h"
#include "output/progress.h"
#include "reports/reports.h"
#include "gprof/version.h"

namespace fs = std::filesystem;
using namespace gprof::report;

namespace {

// nsys stats -o PREFIX with several reports: one file per report, PREFIX_<report>.<ext> (a trailing .<ext> on the
// prefix is dropped, so `-o out.csv` gives out_cuda_api_sum.csv).
fs::path per_report_path(const std::string& prefix, const std::string& report, const std::string& ext) {
    std::string base = prefix;
    if (base.size() > ext.size() + 1 && base.compare(base.size() - ext.size() - 1, std::string::npos, "." + ext) == 0)
        base.resize(base.size() - ext.size() - 1);
    return base + "_" + report + "." + ext;
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
    app.add_option("args", positionals,
                   "Reports (" + names + "; default summary; stats: nsys stats' default set) then run directories "
                   "or trace files");
    // nsys stats spellings: -r/--report NAME[,NAME...], -f/--format, -o/--output, --timeunit nsec|usec|...
    std::vector<std::string> report_opts;
    app.add_option("-r,--report", report_opts, "Reports to make, as nsys stats takes them (repeatable or a comma "
                                               "list; nsys's old names such as gpukernsum work too)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app.add_option("-f,--format", format, "table (nsys: column), csv, json or markdown");
    app.add_option("-o,--output", output,
                   "Write to FILE instead of standard output; csv of several reports: one file per report, "
                   "FILE_<report>.csv, as nsys stats -o PREFIX");
    app.add_option("--timeunit", timeunit, "Time unit of table/csv/markdown time columns: ns, us, ms, s or nsys's "
                                           "nsec, usec, msec, seconds... (json is always ns)");
    size_t name_width = kDefaultNameWidth;
    app.add_option("--name-width", name_width, "table/markdown: shorten names longer than N characters in the "
                                               "middle (0 = full names; csv and json always keep them)")
        ->capture_default_str();
    bool force = false;
    add_force_flag(&app, force, "Replace the -o file");
    size_t rows = 0;
    app.add_option("--rows", rows, "summary: rows per section of the console table, like gprof-run's brief summary "
                                   "(default: all)");
    bool full = false;
    app.add_flag("--full", full,
                 "summary: the full one, as gprof-run --summary full prints it: also the collector's info lines, "
                 "every helper process and nvprof's per-thread NVTX block");
    bool all_processes = false;
    app.add_flag("--all-processes", all_processes,
                 "summary: list every process, also the helpers with no GPU or NVTX activity (compilers, shells), "
                 "which are otherwise one line");
    std::string sample_by = "function";
    app.add_option("--by", sample_by, "cpu_sample_sum: group samples by function or by line (Python file.py:LINE, "
                                      "native file.cpp:LINE)")
        ->check(CLI::IsMember({"function", "line"}));
    bool ignore_damage = false;
    app.add_flag("--ignore-damage", ignore_damage,
                 "Exit 0 even when a trace is cut, corrupt or unreadable (the report shows what was intact)");
    filters.add_to(&app);
    // Where separate debug files are looked for when stacks are symbolised (model/symbolize.h); before a subcommand.
    std::vector<std::string> debug_dirs;
    app.add_option("--debug-file-directory", debug_dirs,
                   "Look for separate debug files (DIR/.build-id/xx/rest.debug, debuglink) under DIR instead of "
                   "/usr/lib/debug, like gdb's debug-file-directory (repeatable; give it before a subcommand)");

    // The outputs that have a subcommand of their own (timeline, html, export), then the others.
    for (const OutputDef& o : outputs())
        if (o.register_command) o.register_command(app, &exit_code);
    register_diff_command(app, &exit_code);
    register_analyze_command(app, &exit_code);
    register_ranks_command(app, &exit_code);
    app.require_subcommand(0, 1);

    // Long reads show progress with rate and time left, on a terminal only: never in redirected output or CI logs,
    // and not over JSON that goes to the same terminal.
    if (::isatty(STDERR_FILENO) && !std::getenv("CI")) {
        set_progress_hook([&format, progress = std::make_shared<TerminalProgress>(std::cerr)](const Progress& p) {
            if (format == "json" && ::isatty(STDOUT_FILENO)) return;
            (*progress)(p);
        });
    }

    // nsys's `--force-overwrite true`: the value folded into the switch, never taken for an input.
    std::vector<std::string> args = fold_switch_values(std::vector<std::string>(argv + 1, argv + argc));
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
    try {
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return cli_error(parse_error_text(e, app));
    }
    if (!debug_dirs.empty()) set_debug_file_directories(debug_dirs);

    if (!app.get_subcommands().empty()) return exit_code;
    try {
        // Split positionals: report names first; everything else is an input. A path that exists wins over a
        // report name, so a run directory called "summary" still works.
        ReportOptions ro;
        std::vector<fs::path> inputs;
        ro.reports = report_opts;
        bool stats = false;
        for (const auto& p : positionals) {
            std::error_code ec;
            bool exists = fs::exists(p, ec);
            ReportRequest req = resolve_report(p);
            if (p == "stats" && !exists) stats = true;  // nsys stats RUN: its default set
            else if ((req.known || !req.unavailable.empty()) && !exists) ro.reports.push_back(p);
            // Neither a report nor a file: a mistyped report name, most likely (paths have a '/' or a suffix).
            else if (!exists && p.find('/') == std::string::npos && p.find('.') == std::string::npos)
                return cli_error(unknown_report_message(p) + "; and no file or directory '" + p + "' exists");
            else inputs.emplace_back(p);
        }
        if (stats && ro.reports.empty()) ro.reports = stats_report_names();
        if (inputs.empty()) return cli_error("no run directory or trace given (see 'gprof-report --help')");
        ro.format = parse_format(format);
        ro.time_unit = parse_time_unit(timeunit);
        ro.filter = filters.build();
        ro.ignore_damage = ignore_damage;
        ro.all_processes = all_processes;
        ro.full = full;
        ro.brief_rows = rows;
        ro.name_width = name_width;
        ro.sample_key = sample_by == "line" ? SampleKey::Line : SampleKey::Function;
        auto traces = expand_inputs(inputs);
        if (auto e = check_processes(traces, ro.filter.pids); !e.empty()) return cli_error(e);
        // The summary's Analysis section, made as at the end of a run (end_of_run/end_of_run.h): one code path.
        ro.summary_analysis = [&](const Aggregate& agg) { return summary_analysis_section(agg, traces, ro.filter); };
        int rc = 0;
        size_t reports_asked = ro.reports.empty() ? 1 : ro.reports.size();
        if (!output.empty() && ro.format == OutputFormat::Csv && reports_asked > 1) {
            // One table per CSV file, as nsys stats writes them (PREFIX_<report>.csv).
            for (const auto& r : ro.reports) {
                ReportOptions one = ro;
                one.reports = {r};
                fs::path path = per_report_path(output, resolve_report(r).name, "csv");
                OutputFile f(path, OutputPolicy{force});
                rc = std::max(rc, run_reports(traces, one, f.stream(), std::cerr));
                f.commit();
                std::cerr << "gprof-report: wrote " << path.string() << '\n';
            }
        } else if (output.empty()) {
            rc = run_reports(traces, ro, std::cout, std::cerr);
        } else {
            OutputFile f(output, OutputPolicy{force});
            rc = run_reports(traces, ro, f.stream(), std::cerr);
            f.commit();
        }
        return rc;
    } catch (const std::exception& e) {
        return cli_error(e.what());
    }
}
