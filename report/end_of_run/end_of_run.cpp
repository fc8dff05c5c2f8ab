#include "end_of_run/end_of_run.h"

#include <cstring>
#include <sstream>

#include "analyze/analysis.h"
#include "analyze/ranks.h"
#include "model/aggregate.h"
#include "model/model.h"
#include "reports/reports.h"

namespace gprof::report {

namespace fs = std::filesystem;

std::string summary_analysis_section(const Aggregate& agg, const AnalysisResult* analysis,
                                     const std::string& analysis_error) {
    std::ostringstream a;
    if (agg.records > kSummaryAnalysisRecordLimit)
        a << "Analysis: left out of the summary for a run of " << agg.records
          << " records (it needs the whole run in memory): gprof-report analyze makes it\n";
    else if (analysis) print_analysis_section(*analysis, a);
    else a << "Analysis: not available (" << analysis_error << ")\n";
    return a.str();
}

std::string summary_analysis_section(const Aggregate& agg, const std::vector<fs::path>& traces,
                                     const Filter& filter) {
    if (agg.records > kSummaryAnalysisRecordLimit) return summary_analysis_section(agg, nullptr, "");
    try {
        LoadOptions lo;
        lo.filter = filter;
        lo.expected = expected_records(agg);  // the summary's read counted them
        lo.keep_nvtx_named = summary_section_reads_range;
        AnalysisOptions ao;
        ao.max_gaps = 0;  // the section shows no idle gap
        AnalysisResult a = analyze_run(load_run(traces, lo), ao);
        return summary_analysis_section(agg, &a, "");
    } catch (const std::exception& e) {
        return summary_analysis_section(agg, nullptr, e.what());
    }
}

std::optional<fs::path> EndOfRunResult::path_of(std::string_view output) const {
    for (const auto& w : written)
        if (w.name == output) return w.path;
    return std::nullopt;
}

EndOfRunResult finish_run(const EndOfRunOptions& options) {
    EndOfRunResult result;
    try {
        result.traces = find_traces(options.run_dir);
        if (result.traces.empty()) {
            std::string w = "no trace was written in " + options.run_dir.string() +
                            " (the collector did not load, or the program exited before it started)";
            result.warnings.push_back(w);
            if (options.summary != SummaryMode::None && options.summary_out) {
                *options.summary_out << "gprof-run: " << w << '\n';
                result.summary_printed = true;
            }
            return result;
        }
        const bool full = options.summary == SummaryMode::Full;
        Filter filter;
        filter.kernel_regex = options.kernel_filter;
        AggregateOptions ao;
        ao.filter = filter;
        Aggregate agg = aggregate_run(result.traces, ao);
        // The collector's warning and error Status lines are not repeated here: the collector said the ones a user
        // must hear on stderr when they happened (a refused CUPTI, a CUDA it could not record: one line each), and
        // the summary's process block and summary.txt list them all. Repeated, the same line stood twice on stderr
        // (H200 2026-11-27: GPROF_CUPTI_LIB refused beside PyTorch's CUPTI).
        result.warnings = agg.warnings;

        // The whole model serves the timeline, report.html, the exports and the analysis (made once, here).
        LoadOptions lo;
        lo.filter = filter;
        lo.expected = expected_records(agg);
        Run run = load_run({options.run_dir}, lo);
        std::optional<AnalysisResult> analysis;
        std::string analysis_error;
        std::vector<AnalysisSlice> slices;
        try {
            analysis = analyze_run(run, {});
            slices = analysis_timeline_slices(*analysis);
        } catch (const std::exception& e) {
            analysis_error = e.what();
        }
        // The figures of the run's ranks, for rank-figures.json and report.html's Ranks section (made once, here).
        std::vector<RankFigures> ranks;
        try {
            ranks = rank_figures(run, "");
        } catch (const std::exception& e) {
            result.warnings.push_back(std::string("rank figures left out: ") + e.what());
        }
        // The summary's section: the same function gprof-report's summary uses (one code path, issue 30), from the
        // analysis above, made once (it was made twice: issue 33).
        std::string analysis_text = summary_analysis_section(agg, analysis ? &*analysis : nullptr, analysis_error);

        if (options.summary != SummaryMode::None && options.summary_out) {
            print_summary_text(agg, full, full, full ? 0 : kBriefRows, *options.summary_out, kDefaultNameWidth,
                               analysis_text);
            options.summary_out->flush();
            result.summary_printed = true;
        }

        EndOfRunData data;
        data.run_dir = options.run_dir;
        data.traces = result.traces;
        data.kernel_filter = options.kernel_filter;
        data.aggregate = &agg;
        data.run = &run;
        data.analysis = analysis ? &*analysis : nullptr;
        data.analysis_error = analysis ? "" : "the analysis failed (" + analysis_error + ")";
        data.analysis_slices = analysis ? &slices : nullptr;
        data.json_event_limit = options.json_event_limit;
        data.rank_figures = &ranks;
        {
            std::ostringstream text;
            print_summary_text(agg, full, full, 0, text, kDefaultNameWidth, analysis_text);
            data.summary_file_text = text.str();
        }
        for (const OutputDef& def : outputs()) {
            for (const OutputRequest& req : options.outputs) {
                if (req.name != def.name) continue;
                if (def.at_end == AtEndOfRun::WithRanks && count_ranks(ranks) == 0) continue;
                if (def.name == "timeline" && !req.named && agg.records > options.timeline_record_limit) {
                    result.not_made.push_back("timeline:      not made for a run of " + std::to_string(agg.records) +
                                              " records (over " + std::to_string(options.timeline_record_limit) +
                                              "); make it with: gprof-report timeline -o " +
                                              (options.run_dir / "timeline.pftrace").string() + " " +
                                              options.run_dir.string());
                    continue;
                }
                try {
                    std::vector<std::string> warnings;
                    fs::path written = def.write(data, req.path, req.policy, warnings);
                    result.written.push_back({req.name, written});
                    for (auto& w : warnings) result.warnings.push_back(std::string(def.name) + ": " + w);
                } catch (const std::exception& e) {
                    result.warnings.push_back(std::string(def.name) + " not written: " + e.what());
                    result.ok = false;
                }
            }
        }
        if (options.stats && options.summary_out) {
            ReportOptions ro;
            ro.reports = stats_report_names();
            ro.filter = filter;
            ro.time_unit = options.stats_time_unit;
            ro.ignore_damage = true;  // damage is in the summary's warnings already
            std::ostringstream tables, ignored;
            run_reports(result.traces, ro, tables, ignored);
            *options.summary_out << '\n' << tables.str();
            options.summary_out->flush();
        }
    } catch (const std::exception& e) {
        result.warnings.push_back(std::string("end-of-run report failed: ") + e.what());
        result.ok = false;
    } catch (...) {
        result.warnings.push_back("end-of-run report failed (unknown error)");
        result.ok = false;
    }
    return result;
}

std::vector<std::string> where_lines(const EndOfRunOptions& options, const EndOfRunResult& result) {
    std::vector<std::string> lines;
    // The summary printed the recording's warnings already (once is enough: issue 30); only what went wrong with
    // the outputs themselves is said here, and everything when no summary was printed.
    for (const auto& w : result.warnings) {
        bool about_outputs = w.find(" not written: ") != std::string::npos;
        for (const OutputDef& def : outputs())
            about_outputs |= w.rfind(std::string(def.name) + ": ", 0) == 0;
        if (!result.summary_printed || about_outputs) lines.push_back(w);
    }
    std::string traces = std::to_string(result.traces.size()) + (result.traces.size() == 1 ? " trace" : " traces");
    lines.push_back("run directory: " + options.run_dir.string() + " (" + traces + ")");
    for (const WrittenOutput& w : result.written) {
        const OutputDef* def = find_output(w.name);
        std::string label = std::string(def ? def->said_as : std::string_view(w.name)) + ":";
        label.resize(std::max<size_t>(label.size() + 1, 15), ' ');
        lines.push_back(label + w.path.string() +
                        (def && !def->open_with.empty() ? " (" + std::string(def->open_with) + ")" : std::string()));
    }
    for (const std::string& line : result.not_made) lines.push_back(line);
    return lines;
}

}  // namespace gprof::report
