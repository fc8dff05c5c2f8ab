#include "end_of_run.h"

#include <unistd.h>


#include "end_of_run/end_of_run.h"

namespace gprof::launcher {

bool report_run(const EndOfRunRequest& request, Console& console) {
    if (request.replace_timeline && request.timeline) ::unlink(request.timeline->c_str());  // --force, checked early
    namespace r = gprof::report;
    r::EndOfRunOptions options;
    options.run_dir = request.run_dir;
    options.summary = request.summary == SummaryChoice::None    ? r::SummaryMode::None
                      : request.summary == SummaryChoice::Full ? r::SummaryMode::Full
                                                                : r::SummaryMode::Brief;
    options.kernel_filter = request.kernel_filter;
    options.timeline_path = request.timeline;
    options.summary_out = &console.stream();
    options.write_summary_file = true;
    r::EndOfRunResult result = r::finish_run(options);
    console.stream().flush();

    // With no trace at all, finish_run has already said so on the summary stream.
    bool already_said = result.traces.empty() && request.summary != SummaryChoice::None;
    if (!already_said)
        for (const auto& w : result.warnings) console.warn(w);
    std::string traces = std::to_string(result.traces.size()) + (result.traces.size() == 1 ? " trace" : " traces");
    console.warn("run directory: " + request.run_dir.string() + " (" + traces + ")");
    if (result.timeline) console.warn("timeline:      " + result.timeline->string() + " (open in ui.perfetto.dev)");
    if (result.summary_file) console.warn("summary:       " + result.summary_file->string());
    return result.ok;
}

}  // namespace gprof::launcher
