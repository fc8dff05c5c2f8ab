// report.html: the run at a glance, for people who would rather look than read. One self-contained file (style,
// script and charts inline; nothing fetched) that gprof-run writes into every run directory and `gprof-report html`
// writes for any run; and the HTML form of `gprof-report diff` for a pull request. docs/reports.md describes both.
//
// The page only draws: every figure is computed here (html/figures.h) from the run model, the streaming aggregate
// (the same numbers as the summary) and the analysis (the same verdict as `analyze`). Every name from a trace is
// escaped (html/escape.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "analyze/analysis.h"
#include "analyze/ranks.h"
#include "diff/diff.h"
#include "html/figures.h"
#include "model/aggregate.h"
#include "model/model.h"

namespace CLI {
class App;
}

namespace gprof::report {
// `gprof-report html`: registered by the CLI from the outputs list (end_of_run/outputs.h).
void register_html_command(CLI::App& app, int* exit_code);
}  // namespace gprof::report

namespace gprof::report::html {

struct RunPageInputs {
    const Run* run = nullptr;                  // the whole model (charts over time, launch shapes)
    const Aggregate* aggregate = nullptr;      // the summary's numbers (tables)
    const AnalysisResult* analysis = nullptr;  // nullptr: the analysis failed (analysis_error says why)
    std::string analysis_error;
    std::string source;                        // what the report was made from (the run directory), for the header
    const RankView* ranks = nullptr;           // two ranks or more: the ranks compared (the page's Ranks section)
};

// The run report as one HTML document.
std::string render_run_page(const RunPageInputs& inputs, const Limits& limits = {});

// A large job (analyze/rank_inputs.h, large_job): its ranks' figures, from figures files or from each run directory's
// traces reduced one at a time.
struct JobPageInputs {
    const RankView* view = nullptr;
    std::string source;                        // the job directory named, for the header
    size_t figures_files = 0, trace_dirs = 0;  // run directories read by their figures, by their traces
    std::vector<std::string> warnings;         // from the traces read
};

// A large job's page from its ranks' figures: its header, what only one rank's page shows (one line), the warnings
// of the traces read and the Ranks section.
std::string render_job_page(const JobPageInputs& inputs);

// The diff as one HTML document: the verdict, then every key, regressions first, with bars of base and new and
// the threshold a key must cross to fail.
std::string render_diff_page(const DiffResult& diff, bool show_unchanged);

// Loads the run (aggregate, model, analysis with default options) and renders it: `gprof-report html` and
// anything else that has no model in hand. Throws std::runtime_error when no trace could be read.
std::string render_run_page(const std::vector<std::filesystem::path>& inputs, const Filter& filter,
                            const AnalysisOptions& analysis_options = {});

}  // namespace gprof::report::html
