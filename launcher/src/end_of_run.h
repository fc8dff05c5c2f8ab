// The step after the app has ended: the summary and timeline (gprof::report::finish_run, shared with
// gprof-report), then where everything went.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "console.h"
#include "options.h"

namespace gprof::launcher {

struct EndOfRunRequest {
    std::filesystem::path run_dir;
    SummaryChoice summary = SummaryChoice::Brief;
    std::string kernel_filter;
    std::optional<std::filesystem::path> timeline;   // nullopt: --no-timeline
    bool replace_timeline = false;                    // --force on an existing --timeline file
};

// Never fails the run: problems are reported as warnings. Returns false if something could not be written.
bool report_run(const EndOfRunRequest& request, Console& console);

}  // namespace gprof::launcher
