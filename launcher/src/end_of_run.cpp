#include "end_of_run.h"

#include <unistd.h>


#include <fstream>
#include <sstream>

#include "end_of_run/end_of_run.h"
#include "export/sqlite.h"
#include "reports/reports.h"

namespace gprof::launcher {

std::string check_timeunit(const std::string& text) {
    try {
        gprof::report::parse_time_unit(text);
    } catch (const std::invalid_argument& e) {
        return std::string("--timeunit: ") + e.what();
    }
    return {};
}

namespace {

// --stats and --export: more of gprof-report's outputs, from the same traces. Never fails the run.
void stats_and_exports(const EndOfRunRequest& request, const std::vector<std::filesystem::path>& traces,
                       Console& console, bool& ok) {
    namespace r = gprof::report;
    if (traces.empty()) return;
    r::ReportOptions ro;
    ro.filter.kernel_regex = request.kernel_filter;
    ro.ignore_damage = true;  // damage is in the summary's warnings already
    try {
        if (request.stats) {
            ro.reports = kStatsReports;
            ro.time_unit = r::parse_time_unit(request.timeunit.empty() ? "ns" : request.timeunit);
            std::ostringstream tables, warnings;
            r::run_reports(traces, ro, tables, warnings);
            console.stream() << '\n' << tables.str();
            console.stream().flush();
        }
        for (const auto& format : request.exports) {
            if (format == "json") {
                auto path = request.run_dir / "report.json";
                std::ofstream out(path, std::ios::binary | std::ios::trunc);
                r::ReportOptions jo = ro;
                jo.format = r::OutputFormat::Json;
                jo.reports = {"summary"};
                jo.reports.insert(jo.reports.end(), kStatsReports.begin(), kStatsReports.end());
                std::ostringstream warnings;
                r::run_reports(traces, jo, out, warnings);
                out.close();
                if (!out) throw std::runtime_error("cannot write " + path.string());
                console.warn("json:          " + path.string());
            } else if (format == "sqlite") {
                auto path = request.run_dir / "report.sqlite";
                r::LoadOptions lo;
                lo.filter.kernel_regex = request.kernel_filter;
                lo.keep_backtraces = false;
                r::export_sqlite(r::load_run(traces, lo), path);
                console.warn("sqlite:        " + path.string());
            }
        }
    } catch (const std::exception& e) {
        console.warn(std::string("--stats/--export: ") + e.what());
        ok = false;
    }
}

}  // namespace

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
    if (request.html) options.html_path = request.run_dir / "report.html";
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
    if (result.html_file) console.warn("report:        " + result.html_file->string() + " (open in a browser)");
    bool ok = result.ok;
    stats_and_exports(request, result.traces, console, ok);
    return ok;
}

}  // namespace gprof::launcher
