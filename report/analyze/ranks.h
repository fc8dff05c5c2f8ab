// The ranks of a distributed job side by side, and the straggler named (docs/distributed.md).
//
// Two halves, so that 512 ranks on 64 nodes never need every event on one machine:
//   rank_figures()   what one rank did, from its own traces: identity, GPU time in NCCL kernels and in the rest,
//                    and per step (NVTX, like analyze) its duration and the NCCL / compute time inside it. Times
//                    are absolute CLOCK_REALTIME ns, so figures computed on different machines line up. The JSON
//                    form (rank_figures_to_json) is small: a few numbers per step.
//   compare_ranks()  the cross-rank view from any set of figures: per step the slowest rank and the spread, per
//                    rank the time waiting in collectives versus computing, and one line naming the straggler.
// `gprof-report ranks` runs both (on traces, or on the JSON files of earlier runs: the merge); `analyze` appends
// the view when its input holds two ranks or more.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "output/table.h"

namespace gprof::report {

// NCCL's kernels: ncclDevKernel_* (NCCL 2.19 and later) and ncclKernel_* (before), mangled or not.
bool is_nccl_kernel(std::string_view name);

struct RankStep {
    int64_t start_ns = 0;     // CLOCK_REALTIME ns (the common axis, --clock-offset applied)
    int64_t duration_ns = 0;
    int64_t nccl_ns = 0;      // GPU time in NCCL kernels inside the step (kernel time clipped to the step)
    int64_t compute_ns = 0;   // GPU time in every other kernel inside the step
    // The rank's own work in the step: its time less what it spent in NCCL kernels, where ranks wait for each
    // other. In synchronous data parallelism every rank's step lasts as long as the slowest one's; the work does not.
    int64_t work_ns() const { return duration_ns > nccl_ns ? duration_ns - nccl_ns : 0; }
};

struct RankFigures {
    int64_t rank = -1;          // -1: the process has no rank (then it stands alone, named by host and pid)
    int64_t local_rank = -1, world_size = -1;
    std::string host, boot_id, job;
    int64_t pid = 0;            // the rank's main process: the one with the most kernel time
    std::vector<int64_t> pids;  // every traced process of the rank on its host (DataLoader workers inherit RANK)
    std::string label;          // "rank 3 @ node07 (pid 7)"
    int64_t first_ns = 0, last_ns = 0;  // CLOCK_REALTIME ns of its first and last timed record
    uint64_t kernels = 0, nccl_kernels = 0, memcpys = 0, api_calls = 0;
    int64_t kernel_ns = 0, nccl_ns = 0, compute_ns = 0, memcpy_ns = 0;
    std::string step_source;    // "nvtx", "profiler-api", or "none" (then no steps)
    std::vector<RankStep> steps;
};

// One entry per rank of the run (processes of one (job, rank) together), and one per process without a rank that
// did GPU work or has steps; sorted by rank, then host and pid. `step_pattern` as analyze's --step-range.
std::vector<RankFigures> rank_figures(const Run& run, const std::string& step_pattern);

inline constexpr int kRankFiguresSchemaVersion = 1;
nlohmann::json rank_figures_to_json(const RankFigures& f);
// Throws std::invalid_argument naming the problem when `j` is not rank figures of this schema.
RankFigures rank_figures_from_json(const nlohmann::json& j);

// ----- the cross-rank view -------------------------------------------------------------------------------------

struct StepAcrossRanks {
    size_t index = 0;           // the step's ordinal, in every rank
    int64_t start_ns = 0;       // earliest start among the ranks (CLOCK_REALTIME)
    int64_t start_skew_ns = 0;  // latest start - earliest start
    double median_work_ns = 0;
    int64_t max_work_ns = 0;
    size_t slowest = 0;         // index into RankView::ranks
    double spread = 0;          // max / median of the work time; 1 = balanced
};

struct RankLine {
    size_t steps = 0;                // steps compared
    double median_step_ns = 0, median_work_ns = 0;
    double nccl_per_step_ns = 0, compute_per_step_ns = 0;  // means over the compared steps
    size_t slowest_in = 0;           // steps in which this rank did the most work
};

struct RankView {
    std::vector<RankFigures> ranks;  // sorted by rank, then host and pid
    std::vector<RankLine> lines;     // one per rank
    size_t hosts = 0;
    std::string step_source;         // "nvtx", "profiler-api", "whole run" (no steps anywhere: one span per rank)
    size_t steps_compared = 0;       // the fewest steps any rank has
    std::vector<StepAcrossRanks> steps;
    std::optional<size_t> straggler;  // index into ranks; absent when balanced or fewer than two ranks
    size_t slowest_rank = 0;         // the rank slowest most often (ties: most work), even when within the margin
    double over_median_pct = 0;      // the slowest rank's work over the median rank's, in %
    bool others_wait_in_nccl = false;
    std::string line;                // "rank 1 @ nodeB is the slowest in 19 of 20 steps, +27 % on the median; ..."
    std::vector<std::string> notes;  // clock assumption, unequal step counts, ...
    // Totals over the ranks (the merged summary).
    uint64_t kernels = 0, nccl_kernels = 0, memcpys = 0, api_calls = 0;
    int64_t kernel_ns = 0, nccl_ns = 0, compute_ns = 0, memcpy_ns = 0;
};

// A rank is a straggler when it does this much more work than the median rank (over the compared steps).
inline constexpr double kStragglerMarginPct = 5.0;

RankView compare_ranks(std::vector<RankFigures> ranks);

inline constexpr int kRankViewSchemaVersion = 1;
nlohmann::json rank_view_to_json(const RankView& v);
// Text (table / markdown) of the view: the straggler line, the per-rank table, the per-step table (the first
// `max_step_rows` steps and the slowest ones; 0 = every step).
void render_rank_view(const RankView& v, OutputFormat format, std::ostream& out, size_t max_step_rows = 20);

}  // namespace gprof::report
