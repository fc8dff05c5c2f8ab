// THE list of outputs (issue 32): each file a run can be turned into, with its name, its default file name, what
// gprof-run does with it at the end of a run, how the user opens it, the gprof-report subcommand that makes it, and
// the function that writes it from what the end of a run computed once. gprof-report's CLI registers the
// subcommands from it, gprof-run's --export and --no-<name> flags take their names from it, and finish_run
// (end_of_run.h) writes the ones a run asked for, each through OutputFile (output/output_file.h).
//
// Adding an output: a writer in its own folder, one entry in outputs.cpp (docs/architecture.md counts the places).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "output/output_file.h"

namespace gprof::report {

struct EndOfRunData;  // end_of_run.h: the traces, aggregate, model and analysis of the run, made once

enum class AtEndOfRun {
    Always,         // every run (summary.txt)
    UnlessLeftOut,  // every run unless gprof-run --no-<name> (timeline, report.html)
    OnExport,       // only with gprof-run --export <name> (sqlite, json)
    WithRanks,      // every run whose processes have a rank (rank-figures.json: what a job's reports merge)
};

struct OutputDef {
    std::string_view name;          // "summary", "timeline", "html", "sqlite", "json", "figures"
    std::string_view default_file;  // in the run directory (gprof-run) or the current directory (gprof-report)
    std::string_view what;          // one line for --help
    AtEndOfRun at_end;
    std::string_view said_as;       // its line at the end of a run: "report" for report.html, else the name
    std::string_view open_with;     // said after the path at the end of a run ("" = nothing)
    // gprof-report's subcommand that makes it; nullptr: the main command does (summary; json is --format json).
    void (*register_command)(CLI::App& app, int* exit_code);
    // Writes it to `path` from the run's data. Returns the file written (the timeline may switch to .pftrace).
    // Throws std::runtime_error with a message for the user.
    std::filesystem::path (*write)(const EndOfRunData& data, const std::filesystem::path& path,
                                   const OutputPolicy& policy, std::vector<std::string>& warnings);
};

// Every output, in the order gprof-run writes them and says where they went.
const std::vector<OutputDef>& outputs();
const OutputDef* find_output(std::string_view name);
// The names of the outputs with this at_end ("sqlite", "json" for OnExport).
std::vector<std::string> output_names(AtEndOfRun at_end);

// One file to write at the end of a run.
struct OutputRequest {
    std::string name;            // an OutputDef's name
    std::filesystem::path path;  // where
    OutputPolicy policy;
    bool named = false;          // asked for by name (--timeline PATH, --export): made whatever the run's size
};

// What gprof-run asked for: the outputs left out (--no-timeline, --no-html), exported (--export), and written
// somewhere other than <run dir>/<default file> (--timeline PATH, with -f/--force to replace a file there).
struct EndOfRunChoice {
    std::set<std::string> left_out;
    std::vector<std::string> exports;
    std::map<std::string, std::filesystem::path> paths;
    bool force = false;
};
// The requests for a run directory: the list filtered by the choice; files in the run directory are new and
// private (0600); one elsewhere (--timeline PATH) replaces an existing file only with `force`.
std::vector<OutputRequest> end_of_run_outputs(const std::filesystem::path& run_dir, const EndOfRunChoice& choice);

}  // namespace gprof::report
