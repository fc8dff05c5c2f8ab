// `gprof-report analyze RUN`: bottleneck verdict, idle gaps, findings and the step view (issue 8).
#include "gprof/report/subcommands.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace gprof::report {

void register_analyze_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand("analyze", "Bottleneck verdict, GPU idle gaps, findings and per-step view");
    auto inputs = std::make_shared<std::vector<std::string>>();
    cmd->add_option("run", *inputs, "Run directory or trace files")->required();
    cmd->callback([exit_code] {
        std::cerr << "gprof-report analyze: not implemented yet\n";
        *exit_code = 2;
    });
}

}  // namespace gprof::report
