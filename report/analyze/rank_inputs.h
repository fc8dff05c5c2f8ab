// Where the ranks of a job come from, without all their records in memory at once (docs/distributed.md, "Many
// ranks: figures at the end of each run, merged"):
//   - a run directory holding rank-figures.json (gprof-run writes it at the end of a run whose processes have ranks):
//     its figures, read in microseconds;
//   - a figures file named on the command line (rank-figures.json, or any `ranks --format json` output);
//   - otherwise the run directory's traces, loaded one run directory at a time, reduced to figures and let go: the
//     memory is that of the largest run directory, not of the job.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analyze/ranks.h"
#include "model/model.h"

namespace gprof::report {

// The file gprof-run writes into a run directory whose processes have ranks.
inline constexpr const char* kRankFiguresFile = "rank-figures.json";

// The rank figures in a JSON file: a figures file or the output of `ranks --format json` / `analyze --format json`.
// Throws std::runtime_error naming the file when it is not one (or is larger than any figures file can be).
std::vector<RankFigures> read_figures_file(const std::filesystem::path& path);

// Writes `figures` as a figures file (rank-figures.json's form) to `out`.
void write_figures_file(const std::vector<RankFigures>& figures, std::ostream& out);

struct RankInputs {
    std::vector<std::filesystem::path> figures_files;          // in input order
    std::vector<std::vector<std::filesystem::path>> run_dirs;  // the traces of each run directory without figures
};

// The inputs sorted into figures files and run directories. `use_figures` false (a --step-range other than the
// default: the figures were made with the default steps) takes every run directory's traces.
RankInputs rank_inputs(const std::vector<std::filesystem::path>& inputs, bool use_figures);

// A large job: more than kRanksListedWhole run directories (or figures files). Its reports (analyze, html) are made
// from each run directory's figures, or from its traces reduced one run directory at a time, never from every
// rank's records in one process (docs/distributed.md). Figures are used unless `step_pattern` is given (they hold the
// default steps): then every run directory's traces. nullopt for a smaller input, and for inputs that cannot be
// sorted out (the load that follows says what is wrong with them).
std::optional<RankInputs> large_job(const std::vector<std::filesystem::path>& inputs, const std::string& step_pattern);

struct JobFigures {
    std::vector<RankFigures> ranks;
    std::vector<std::string> warnings;  // from the traces read
    size_t from_figures = 0;            // ranks read from figures files
    size_t from_traces = 0;             // ranks computed from traces
    size_t processes = 0;               // traced processes read
    size_t figures_files = 0;           // figures files read (one per run directory that holds one)
    size_t trace_dirs = 0;              // run directories whose traces were read
};

// Every rank of the inputs: figures files read, run directories reduced one at a time (LoadOptions as given: the
// filter's clock offsets apply to both). Throws std::runtime_error for unreadable inputs.
JobFigures job_figures(const std::vector<std::filesystem::path>& inputs, const std::string& step_pattern,
                       const LoadOptions& options);
// The same from inputs already sorted (rank_inputs, large_job).
JobFigures job_figures(const RankInputs& where, const std::string& step_pattern, const LoadOptions& options);

// What a job's figures were made from, in words: "the rank figures of 40 run directories", "the traces of 40 run
// directories, read one at a time", "the rank figures of 30 run directories and the traces of 10, read one at a time".
std::string job_sources(const JobFigures& job);

}  // namespace gprof::report
