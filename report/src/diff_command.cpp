// `gprof-report diff BASE NEW`: compares two sets of runs and gates CI on regressions (issue 7).
#include "gprof/report/subcommands.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace gprof::report {

void register_diff_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand("diff", "Compare a baseline run set with a new one; exit 1 on regression");
    auto base = std::make_shared<std::vector<std::string>>();
    auto cand = std::make_shared<std::vector<std::string>>();
    cmd->add_option("--base", *base, "Baseline run directories or traces");
    cmd->add_option("--new", *cand, "New run directories or traces");
    cmd->callback([exit_code] {
        std::cerr << "gprof-report diff: not implemented yet\n";
        *exit_code = 2;
    });
}

}  // namespace gprof::report
