// Every output gprof-report and gprof-run make from a run, made in-process from one trace: the summary and every
// nsys-named report (table and JSON), the memory report, the timeline in both formats, analyze, diff against a
// baseline, the SQLite export, and gprof-run's end-of-run step with its report.html. The hostile-trace tests and
// the structure-aware fuzzer run it on crafted traces: it must return (any exception escaping it is a bug), in
// bounded time and memory.
// A test helper: nothing here is installed.
#pragma once

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/analysis.h"
#include "diff/diff.h"
#include "end_of_run/end_of_run.h"
#include "export/sqlite.h"
#include "model/model.h"
#include "reports/reports.h"
#include "timeline/timeline.h"

namespace gprof::testing {

// What the outputs said, for a test that wants to look (sizes only: the fuzzer throws the text away).
struct EveryOutput {
    int report_status = 0;
    size_t report_bytes = 0, json_bytes = 0, timeline_json_bytes = 0, timeline_perfetto_bytes = 0;
    size_t analysis_bytes = 0, diff_bytes = 0, end_of_run_bytes = 0;
    uint64_t sqlite_rows = 0;
    // Outputs that stopped at a name that is not valid UTF-8 (nlohmann::json's type_error 316 on dump): issue #16
    // makes every JSON writer escape such names; until then it is the one exception tolerated here, each output
    // isolated so the others still run.
    size_t invalid_utf8_stops = 0;
    std::vector<std::string> warnings;  // of the run model
};

// Runs one output; only the invalid-UTF-8 stop of nlohmann::json is caught (anything else escapes: a bug).
template <class F> void one_output(EveryOutput& o, F&& f) {
    try {
        f();
    } catch (const nlohmann::json::type_error& e) {
        if (e.id != 316) throw;
        ++o.invalid_utf8_stops;
    }
}

// `trace` is one .gprof file alone in `run_dir` (gprof-run's end-of-run step reads a directory); `baseline` the
// run the diff compares against.
inline EveryOutput run_every_output(const std::filesystem::path& run_dir, const std::filesystem::path& trace,
                                    const report::RunFigures& baseline) {
    using namespace gprof::report;
    EveryOutput o;
    one_output(o, [&] {
        std::ostringstream out, err;
        ReportOptions ro;
        ro.reports = report_names();
        ro.format = OutputFormat::Table;
        o.report_status = run_reports({trace}, ro, out, err);
        o.report_bytes = out.str().size();
    });
    one_output(o, [&] {
        std::ostringstream out, err;
        ReportOptions ro;
        ro.reports = report_names();
        ro.format = OutputFormat::Json;
        run_reports({trace}, ro, out, err);
        o.json_bytes = out.str().size();
    });

    Run run = load_run({trace});
    o.warnings = run.all_warnings();
    one_output(o, [&] {
        std::string timeline;
        TimelineOptions to;
        o.timeline_json_bytes = timeline_to_string(run, timeline, to).encoded_bytes;
        to.format = TimelineFormat::Perfetto;
        o.timeline_perfetto_bytes = timeline_to_string(run, timeline, to).encoded_bytes;
    });
    one_output(o, [&] {
        AnalysisResult analysis = analyze_run(run, {});
        std::ostringstream a;
        render_analysis_table(analysis, a);
        render_analysis_markdown(analysis, a);
        o.analysis_bytes = a.str().size();
        a << analysis_to_json(analysis).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        o.analysis_bytes = a.str().size();
    });
    one_output(o, [&] {
        RunFigures figures = extract_figures(run, {});
        DiffResult diff = compare_runs({baseline}, {figures}, Thresholds{});
        std::ostringstream d;
        render_diff_table(diff, {}, d);
        render_diff_markdown(diff, {}, d);
        o.diff_bytes = d.str().size();
        d << diff_to_json(diff).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        o.diff_bytes = d.str().size();
    });
    one_output(o, [&] {
        const std::filesystem::path db = run_dir / "export.sqlite";
        o.sqlite_rows = export_sqlite(run, db).rows;
        std::error_code ec;
        std::filesystem::remove(db, ec);
    });
    one_output(o, [&] {
        std::ostringstream summary;
        EndOfRunOptions eo;
        eo.run_dir = run_dir;
        eo.summary = SummaryMode::Full;
        eo.summary_out = &summary;
        // report.html too: every section, call sites included
        eo.outputs = {{"html", run_dir / "report.html", {false, FileMode::Private}}};
        finish_run(eo);
        o.end_of_run_bytes = summary.str().size();
        std::error_code ec;
        std::filesystem::remove(run_dir / "report.html", ec);
    });
    return o;
}

}  // namespace gprof::testing
