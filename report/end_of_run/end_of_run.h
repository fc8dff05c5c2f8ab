// THE end-of-run step (issue 32: it lived in two folders): what gprof-run does once the app has ended. The summary
// on the console, then every output the run asked for (end_of_run/outputs.h: summary.txt, the timeline,
// report.html, --export sqlite/json), each through OutputFile, then --stats's tables. gprof-run calls finish_run()
// and prints where_lines(); `gprof-report RUN` prints the same summary through the same functions, so the two never
// disagree.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "end_of_run/outputs.h"
#include "output/table.h"
#include "timeline/timeline.h"

namespace gprof::report {

struct Aggregate;       // model/aggregate.h
struct AnalysisResult;  // analyze/analysis.h
struct AnalysisSlice;
struct Filter;          // model/model.h
struct RankFigures;     // analyze/ranks.h

enum class SummaryMode { None, Brief, Full };

// Rows per section of the summary printed at the end of a run; summary.txt always has them all.
inline constexpr size_t kBriefRows = 10;

// Over this many records, the timeline is not made at the end of a run unless it was asked for by name
// (--timeline PATH): one line says how to make it (gprof-report timeline RUN). It is the largest output by far: a
// 9.6 M-range NVTX run's took about 3.5 s of CPU for a 336 MB .pftrace, most of the end of the run
// (docs/performance.md, issue 33).
inline constexpr uint64_t kTimelineRecordLimit = 5'000'000;

// The summary's Analysis section needs the whole run in memory (the model, not the streaming aggregate): above this
// many records it is left out of the summary, with a line saying so, wherever the summary is printed (gprof-report
// analyze still makes it). docs/performance.md has the figures.
inline constexpr uint64_t kSummaryAnalysisRecordLimit = 20'000'000;

// The Analysis section of the summary (verdict, utilisation, top findings, steps), the same wherever the summary is
// printed. This one loads of `traces` (read with `filter`) only what the section reads, and only when the run is
// small enough (kSummaryAnalysisRecordLimit): the model without the NVTX ranges the section does not read
// (analyze/analysis.h summary_section_reads_range), its room from the counts `agg`'s read made.
std::string summary_analysis_section(const Aggregate& agg, const std::vector<std::filesystem::path>& traces,
                                     const Filter& filter);
// The same from an analysis made already (`analysis`, or the message it failed with): gprof-run's end of run
// analyses the run once for the summary, report.html and the timeline.
std::string summary_analysis_section(const Aggregate& agg, const AnalysisResult* analysis,
                                     const std::string& analysis_error);

// What finish_run computed once and every output is made from.
struct EndOfRunData {
    std::filesystem::path run_dir;
    std::vector<std::filesystem::path> traces;
    std::string kernel_filter;
    const Aggregate* aggregate = nullptr;
    const Run* run = nullptr;
    const AnalysisResult* analysis = nullptr;       // nullptr: the analysis failed (analysis_error says why)
    std::string analysis_error;
    const std::vector<AnalysisSlice>* analysis_slices = nullptr;  // the timeline's analysis track
    std::string summary_file_text;                  // the summary with every row: summary.txt
    std::optional<uint64_t> json_event_limit;       // a JSON timeline above it becomes .pftrace (timeline.h)
    const std::vector<RankFigures>* rank_figures = nullptr;  // the run's ranks (analyze/ranks.h), default steps
};

struct EndOfRunOptions {
    std::filesystem::path run_dir;                  // holds one *.gprof trace per profiled process
    SummaryMode summary = SummaryMode::Brief;
    std::string kernel_filter;                      // ECMAScript regex on kernel names; empty = all
    std::ostream* summary_out = nullptr;            // where the summary is printed (stderr or --log-file)
    std::vector<OutputRequest> outputs;             // what to write: end_of_run_outputs(run_dir, choice)
    // A JSON timeline with more events than this is written as x.pftrace instead (docs/reports.md).
    std::optional<uint64_t> json_event_limit = kJsonTimelineEventLimit;
    uint64_t timeline_record_limit = kTimelineRecordLimit;  // see kTimelineRecordLimit
    bool stats = false;                             // --stats=true: nsys's report tables after the summary
    TimeUnit stats_time_unit = TimeUnit::Ns;
};

struct WrittenOutput {
    std::string name;            // the OutputDef's name
    std::filesystem::path path;  // where it went (a timeline may differ from the asked path: json_event_limit)
};

struct EndOfRunResult {
    std::vector<std::filesystem::path> traces;  // the trace files found, sorted
    std::vector<WrittenOutput> written;          // in the order of outputs()
    std::vector<std::string> not_made;           // outputs left out for the run's size, one line each (how to make them)
    std::vector<std::string> warnings;           // what went wrong, one line each (never printed by finish_run)
    bool summary_printed = false;                // the warnings are in the summary already
    bool ok = true;                              // false: something could not be written
    std::optional<std::filesystem::path> path_of(std::string_view output) const;
};

// Never throws: every failure becomes a warning line and ok = false.
EndOfRunResult finish_run(const EndOfRunOptions& options);

// What gprof-run says after the summary, one line each: the warnings the summary did not show, then the run
// directory and where each output went ("timeline: PATH (open in ui.perfetto.dev)").
std::vector<std::string> where_lines(const EndOfRunOptions& options, const EndOfRunResult& result);

}  // namespace gprof::report
