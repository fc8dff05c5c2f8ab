// What gprof-run does after the app ends: the summary, the Chrome trace of the whole run, report.html, and where
// they went.
// The launcher calls finish_run(); `gprof-report` runs the same code, so both always agree.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "timeline/timeline.h"

namespace gprof::report {

enum class SummaryMode { None, Brief, Full };

struct EndOfRunOptions {
    std::filesystem::path run_dir;                        // holds one *.gprof trace per profiled process
    SummaryMode summary = SummaryMode::Brief;
    std::string kernel_filter;                            // ECMAScript regex on kernel names; empty = all
    std::optional<std::filesystem::path> timeline_path;   // timeline to write (x.pftrace: Perfetto protobuf,
                                                          // else Chrome JSON); nullopt = none
    // A JSON timeline with more events than this is written as x.pftrace instead (docs/reports.md).
    std::optional<uint64_t> json_event_limit = kJsonTimelineEventLimit;
    std::ostream* summary_out = nullptr;                  // where the summary is printed (stderr or --log-file)
    bool write_summary_file = true;                       // also write <run_dir>/summary.txt
    std::optional<std::filesystem::path> html_path;       // report.html to write (report/html/); nullopt = none
};

struct EndOfRunResult {
    std::vector<std::filesystem::path> traces;            // the trace files found, sorted
    std::optional<std::filesystem::path> timeline;        // the timeline written, if any (its path may differ
                                                          // from timeline_path: see json_event_limit)
    std::optional<std::filesystem::path> summary_file;    // written summary.txt, if any
    std::optional<std::filesystem::path> html_file;       // written report.html, if any
    std::vector<std::string> warnings;                    // truncated/corrupt traces etc., one line each
    bool ok = true;                                       // false: something could not be written
};

// Never throws: every failure becomes a warning line and ok = false.
EndOfRunResult finish_run(const EndOfRunOptions& options);

}  // namespace gprof::report
