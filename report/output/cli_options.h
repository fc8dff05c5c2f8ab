// What every gprof-report subcommand's command line shares, so a concept behaves one way everywhere (issue 30):
// the run filters (--process, --device, --time-range, --kernel-filter, ...), one --force, one -o, and one error
// style ("gprof-report: error: ..."). gprof-run takes the same true|false switch spellings (launcher/src/options).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "model/model.h"

namespace gprof::report {

// "gprof-report: error: WHAT" on stderr; returns 2, the usage/input error status.
int cli_error(std::string_view what);
void cli_warning(std::string_view what);

// The run filters. add_to registers them; build() checks and returns the Filter (std::invalid_argument).
struct FilterArgs {
    std::vector<int64_t> pids;
    std::vector<uint32_t> devices;
    std::string time_range;
    std::string kernel_filter;
    bool nested_driver_calls = false;
    std::vector<std::string> clock_offsets;

    void add_to(CLI::App* app);
    Filter build() const;
};

// --process PID that no trace among the inputs has: "" when every one is there, else the error line (naming the
// pids there are). Reads only the traces' headers.
std::string check_processes(const std::vector<std::filesystem::path>& traces, const std::vector<int64_t>& pids);
// The line to say when a --time-range selected no record ("" without a range); bare numbers are ns, which users
// rarely mean, so it says so.
std::string time_range_hint(const Filter& filter);

// THE --force of every subcommand: `--force`, `--force-overwrite` (nsys), either with =true|=false or a following
// true|false (fold_switch_values puts that into the switch, so a value is never taken for an input).
void add_force_flag(CLI::App* app, bool& force, const std::string& what);
// argv with `--force true` / `--force-overwrite false` folded into `--force=true`/`--force-overwrite=false`.
std::vector<std::string> fold_switch_values(std::vector<std::string> args);

// A CLI11 parse error as one gprof-report line: "missing NEW (see gprof-report diff --help)" instead of CLI11's
// "new is required".
std::string parse_error_text(const CLI::ParseError& e, const CLI::App& app);

}  // namespace gprof::report
