// Runs a gprof-report subcommand in-process (the same registration the CLI main uses) and captures its output.
#pragma once

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/subcommands.h"

namespace gprof::testing {

struct CliResult {
    int exit_code = -1;
    std::string out, err;
};

inline CliResult run_cli(std::vector<std::string> args) {
    CLI::App app("gprof-report");
    app.require_subcommand(1);
    int code = 0;
    report::register_diff_command(app, &code);
    report::register_analyze_command(app, &code);
    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        code = app.exit(e, out, err) == 0 ? 0 : 2;
    }
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    return {code, out.str(), err.str()};
}

}  // namespace gprof::testing
