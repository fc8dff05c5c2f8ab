// Subcommands of gprof-report implemented outside the main report code. The CLI main
// (report/cli/main.cpp) registers each; a callback stores its exit status in *exit_code
// (0 ok, 1 regression found (diff), 2 usage or input error).
#pragma once

#include <CLI/CLI.hpp>

namespace gprof::report {

void register_diff_command(CLI::App& app, int* exit_code);     // report/diff/
void register_analyze_command(CLI::App& app, int* exit_code);  // report/analyze/
void register_ranks_command(CLI::App& app, int* exit_code);    // report/analyze/ranks_command.cpp
// timeline, html and export: from the outputs list (end_of_run/outputs.h).

}  // namespace gprof::report
