#include "end_of_run/outputs.h"

#include <algorithm>
#include <sstream>

#include "analyze/analysis.h"
#include "analyze/rank_inputs.h"
#include "analyze/ranks.h"
#include "end_of_run/end_of_run.h"
#include "export/sqlite.h"
#include "html/html.h"
#include "model/aggregate.h"
#include "reports/reports.h"
#include "timeline/timeline.h"

namespace gprof::report {

namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const OutputPolicy& policy, const std::string& text) {
    OutputFile f(path, policy);
    f.stream() << text;
    f.commit();
}

fs::path write_summary(const EndOfRunData& d, const fs::path& path, const OutputPolicy& policy,
                       std::vector<std::string>&) {
    write_text(path, policy, d.summary_file_text);
    return path;
}

fs::path write_timeline_output(const EndOfRunData& d, const fs::path& path, const OutputPolicy& policy,
                               std::vector<std::string>& warnings) {
    TimelineOptions to;
    to.output = policy;
    // The format follows the file name (x.pftrace: Perfetto's protobuf); a JSON timeline too big for Perfetto UI
    // becomes the protobuf instead (kJsonTimelineEventLimit), with a line saying so.
    to.format = timeline_format_for(path);
    to.json_event_limit = d.json_event_limit;
    to.analysis_slices = d.analysis_slices;  // the summary's analysis, not a second one (null: analysed again)
    TimelineStats st = write_timeline(*d.run, path, to);
    for (auto& w : st.warnings) warnings.push_back(std::move(w));
    return st.path;
}

fs::path write_html(const EndOfRunData& d, const fs::path& path, const OutputPolicy& policy, std::vector<std::string>&) {
    // The same aggregate, model and analysis as the summary: the page and the text never disagree.
    html::RunPageInputs in;
    in.run = d.run;
    in.aggregate = d.aggregate;
    in.analysis = d.analysis;
    in.analysis_error = d.analysis_error;
    in.source = d.run_dir.string();
    // A torchrun node's run directory holds its ranks: the page compares them.
    std::optional<RankView> ranks;
    if (d.rank_figures && count_ranks(*d.rank_figures) >= 2) {
        ranks = compare_ranks(*d.rank_figures);
        in.ranks = &*ranks;
    }
    write_text(path, policy, html::render_run_page(in));
    return path;
}

fs::path write_sqlite(const EndOfRunData& d, const fs::path& path, const OutputPolicy& policy, std::vector<std::string>&) {
    export_sqlite(*d.run, path, policy);
    return path;
}

fs::path write_json(const EndOfRunData& d, const fs::path& path, const OutputPolicy& policy, std::vector<std::string>&) {
    // `gprof-report --format json summary <the stats reports> RUN`: the same document.
    ReportOptions ro;
    ro.format = OutputFormat::Json;
    ro.filter.kernel_regex = d.kernel_filter;
    ro.ignore_damage = true;  // damage is in the summary's warnings already
    ro.reports = {"summary"};
    for (const auto& r : stats_report_names()) ro.reports.push_back(r);
    OutputFile f(path, policy);
    std::ostringstream ignored;
    run_reports(d.traces, ro, f.stream(), ignored);
    f.commit();
    return path;
}

fs::path write_figures(const EndOfRunData& d, const fs::path& path, const OutputPolicy& policy,
                       std::vector<std::string>&) {
    // A rank of a distributed job: its figures beside its traces, so that the job's reports merge small files rather
    // than every rank's records (docs/distributed.md). finish_run asks for it only when the run has ranks.
    OutputFile f(path, policy);
    write_figures_file(d.rank_figures ? *d.rank_figures : std::vector<RankFigures>{}, f.stream());
    f.commit();
    return path;
}

const std::vector<OutputDef> kOutputs = {
    {"summary", "summary.txt", "the summary gprof-run printed, with every row", AtEndOfRun::Always, "summary", "",
     nullptr, write_summary},
    {"timeline", "timeline.json",
     "the timeline: Chrome trace JSON (x.pftrace: Perfetto's protobuf), for ui.perfetto.dev",
     AtEndOfRun::UnlessLeftOut, "timeline", "open in ui.perfetto.dev", register_timeline_command,
     write_timeline_output},
    {"html", "report.html", "the run at a glance: one self-contained page", AtEndOfRun::UnlessLeftOut, "report",
     "open in a browser", register_html_command, write_html},
    {"sqlite", "report.sqlite", "the run in nsys's SQLite export tables", AtEndOfRun::OnExport, "sqlite", "",
     register_export_command, write_sqlite},
    {"json", "report.json", "the summary and the nsys stats reports as gprof-report --format json",
     AtEndOfRun::OnExport, "json", "", nullptr, write_json},
    {"figures", kRankFiguresFile, "the figures of the run's ranks (steps, NCCL and compute time) that "
     "gprof-report ranks and analyze of a job merge", AtEndOfRun::WithRanks, "rank figures", "gprof-report ranks merges a job's", nullptr,
     write_figures},
};

}  // namespace

const std::vector<OutputDef>& outputs() { return kOutputs; }

const OutputDef* find_output(std::string_view name) {
    for (const auto& d : kOutputs)
        if (d.name == name) return &d;
    return nullptr;
}

std::vector<std::string> output_names(AtEndOfRun at_end) {
    std::vector<std::string> out;
    for (const auto& d : kOutputs)
        if (d.at_end == at_end) out.emplace_back(d.name);
    return out;
}

std::vector<OutputRequest> end_of_run_outputs(const fs::path& run_dir, const EndOfRunChoice& choice) {
    std::vector<OutputRequest> out;
    for (const OutputDef& d : kOutputs) {
        bool wanted = d.at_end == AtEndOfRun::Always || d.at_end == AtEndOfRun::WithRanks ||
                      (d.at_end == AtEndOfRun::UnlessLeftOut && !choice.left_out.count(std::string(d.name))) ||
                      (d.at_end == AtEndOfRun::OnExport &&
                       std::find(choice.exports.begin(), choice.exports.end(), d.name) != choice.exports.end());
        if (!wanted) continue;
        OutputRequest r;
        r.name = d.name;
        r.policy.mode = FileMode::Private;
        auto elsewhere = choice.paths.find(r.name);
        r.named = d.at_end == AtEndOfRun::OnExport;
        if (elsewhere != choice.paths.end()) {
            r.path = elsewhere->second;
            r.policy.force = choice.force;
            r.named = true;
        } else {
            r.path = run_dir / d.default_file;  // the run directory is new: nothing to replace
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace gprof::report
