// The step after the app has ended: the summary and timeline (gprof::report::finish_run, shared with
// gprof-report), then where everything went.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "console.h"
#include "options.h"

namespace gprof::launcher {

struct EndOfRunRequest {
    std::filesystem::path run_dir;
    SummaryChoice summary = SummaryChoice::Brief;
    std::string kernel_filter;
    std::optional<std::filesystem::path> timeline;   // nullopt: --no-timeline
    bool replace_timeline = false;                    // --force on an existing --timeline file
    bool stats = false;                               // --stats=true: nsys's report tables after the summary
    std::string timeunit;                             // their time unit ("" = ns)
    std::vector<std::string> exports;                 // --export: "sqlite" -> report.sqlite, "json" -> report.json
    bool html = true;                                 // <run dir>/report.html; false: --no-html
};

// The reports --stats prints: nsys stats' default set, less those a gprof-run trace has no data for.
inline const std::vector<std::string> kStatsReports = {"nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum",
                                                      "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"};

// "" when --timeunit's value is one gprof-report takes, else the error line (checked before the app starts).
std::string check_timeunit(const std::string& text);

// Never fails the run: problems are reported as warnings. Returns false if something could not be written.
bool report_run(const EndOfRunRequest& request, Console& console);

}  // namespace gprof::launcher
