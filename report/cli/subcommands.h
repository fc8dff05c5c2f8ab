// gprof-report's subcommands that are not outputs, one file each in cli/ (as uftrace keeps one file per command),
// with one entry signature. The CLI main (cli/main.cpp) registers each; a callback stores its exit status in
// *exit_code (0 ok, 1 regression found (diff), 2 usage or input error). Each file only parses and dispatches to its
// room below. The outputs' subcommands (timeline, html, export) come from the outputs list (end_of_run/outputs.h).
#pragma once

#include <CLI/CLI.hpp>

namespace gprof::report {

void register_diff_command(CLI::App& app, int* exit_code);     // cli/diff.cpp: report/diff/ (html/ for --format html)
void register_analyze_command(CLI::App& app, int* exit_code);  // cli/analyze.cpp: report/analyze/
void register_ranks_command(CLI::App& app, int* exit_code);    // cli/ranks.cpp: report/analyze/ranks

}  // namespace gprof::report
