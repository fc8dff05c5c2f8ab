// What gprof-run does after the app ends: the summary, the Chrome trace of the whole run, and where they went.
// The launcher calls finish_run(); `gprof-report` runs the same code, so both always agree.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gprof::report {

enum class SummaryMode { None, Brief, Full };

struct EndOfRunOptions {
    std::filesystem::path run_dir;                        // holds one *.gprof trace per profiled process
    SummaryMode summary = SummaryMode::Brief;
    std::string kernel_filter;                            // ECMAScript regex on kernel names; empty = all
    std::optional<std::filesystem::path> timeline_path;   // Chrome-trace JSON to write; nullopt = none
    std::ostream* summary_out = nullptr;                  // where the summary is printed (stderr or --log-file)
    bool write_summary_file = true;                       // also write <run_dir>/summary.txt
};

struct EndOfRunResult {
    std::vector<std::filesystem::path> traces;            // the trace files found, sorted
    std::optional<std::filesystem::path> timeline;        // written Chrome trace, if any
    std::optional<std::filesystem::path> summary_file;    // written summary.txt, if any
    std::vector<std::string> warnings;                    // truncated/corrupt traces etc., one line each
    bool ok = true;                                       // false: something could not be written
};

// Never throws: every failure becomes a warning line and ok = false.
EndOfRunResult finish_run(const EndOfRunOptions& options);

}  // namespace gprof::report
