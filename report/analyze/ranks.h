// The ranks of a distributed job side by side, and the straggler named (docs/distributed.md).
//
// Two halves, so that 512 ranks on 64 nodes never need every event on one machine:
//   rank_figures()   what one rank did, from its own traces: identity, GPU time in NCCL kernels and in the rest,
//                    and per step (NVTX, like analyze) its duration and the NCCL / compute time inside it. Times
//                    are absolute CLOCK_REALTIME ns, so figures computed on different machines line up. The JSON
//                    form (rank_figures_to_json) is small: a few numbers per step.
//   compare_ranks()  the cross-rank view from any set of figures: per rank the time waiting in collectives versus
//                    computing, the distribution across ranks, the ranks that stand out (analyze/straggler.h) and
//                    one line naming the straggler; per step the spread across ranks.
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

#include "analyze/straggler.h"
#include "model/identity.h"
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
// The order ranks are listed in: by rank number, then the processes without one by host and pid.
bool rank_order(const RankFigures& a, const RankFigures& b);
// The figures with a rank number. One or more: the run is part of a distributed job (gprof-run writes
// rank-figures.json); two or more: report.html compares them (a process tree without ranks, a parent and its CUDA
// child, is not a job).
size_t count_ranks(const std::vector<RankFigures>& figures);

// 2: steps by column ({"start_after_first_ns": [...], "duration_ns": [...], "nccl_ns": [...], "compute_ns": [...]});
// 1: one object per step ({"start_ns", "duration_ns", "nccl_ns", "compute_ns"}). Both are read.
inline constexpr int kRankFiguresSchemaVersion = 2;
nlohmann::json rank_figures_to_json(const RankFigures& f);
// Throws std::invalid_argument naming the problem when `j` is not rank figures of a schema this reads.
RankFigures rank_figures_from_json(const nlohmann::json& j);

// ----- the cross-rank view -------------------------------------------------------------------------------------

struct StepAcrossRanks {
    size_t index = 0;           // the step's ordinal, in every rank
    int64_t start_ns = 0;       // earliest start among the ranks (CLOCK_REALTIME)
    int64_t start_skew_ns = 0;  // latest start - earliest start
    double median_work_ns = 0;
    double p90_work_ns = 0;
    int64_t max_work_ns = 0;
    size_t slowest = 0;         // index into RankView::ranks: the rank of the most work in this step (at scale: noise)
    double spread = 0;          // max / median of the work time; 1 = balanced
};

struct RankLine {
    size_t steps = 0;                // steps compared
    double median_step_ns = 0, median_work_ns = 0;
    double mean_work_ns = 0;         // the total work over the compared steps / steps (random spikes move it)
    double nccl_per_step_ns = 0, compute_per_step_ns = 0;  // means over the compared steps
    size_t slowest_in = 0;           // steps in which this rank did the most work
    double over_median_pct = 0;      // median work per step over the median rank's, % (negative: faster)
};

// Four points of a figure's distribution across ranks.
struct AcrossRanks {
    double min = 0, p50 = 0, p90 = 0, max = 0;
};

struct RankView {
    std::vector<RankFigures> ranks;  // in rank order (numeric), then ranks without a number by host and pid
    std::vector<RankLine> lines;     // one per rank
    size_t hosts = 0;
    std::string step_source;         // "nvtx", "profiler-api", "whole run" (no steps anywhere: one span per rank)
    size_t steps_compared = 0;       // the fewest steps any rank has
    std::vector<StepAcrossRanks> steps;
    // The ranks with steps, across ranks: their median step, median work per step and NCCL per step.
    AcrossRanks step_across, work_across, nccl_across;
    // The robust test over each rank's median work per step (analyze/straggler.h); its indexes are into `ranks`.
    OutlierTest outliers;
    std::vector<size_t> stragglers;  // the ranks that stand out, most outstanding first (indexes into ranks)
    std::optional<size_t> straggler;  // stragglers.front(); absent when none stands out or fewer than two ranks
    double over_median_pct = 0;      // the most outstanding rank's excess over the median rank, % (0: none above)
    bool others_wait_in_nccl = false;
    std::string line;                // "rank 1 @ nodeB (pid 7) is a straggler: +29 % work per step on ..."
    std::vector<std::string> notes;  // clock assumption, unequal step counts, stragglers sharing a host, ...
    // Totals over the ranks (the merged summary).
    uint64_t kernels = 0, nccl_kernels = 0, memcpys = 0, api_calls = 0;
    int64_t kernel_ns = 0, nccl_ns = 0, compute_ns = 0, memcpy_ns = 0;
};

RankView compare_ranks(std::vector<RankFigures> ranks);

// 2: the straggler from robust statistics (stragglers[], outliers, the distribution across ranks); 1: the rank
// slowest in the most steps.
inline constexpr int kRankViewSchemaVersion = 2;
nlohmann::json rank_view_to_json(const RankView& v);
// The same JSON as rank_view_to_json(v).dump(2), byte for byte, written one rank at a time: the whole document is
// never in memory (its tree was 374 MB at 10 000 ranks of 100 steps, docs/performance.md). `depth` nests it: the
// value of a key `depth` levels down in a document dumped with indent 2 (analyze's {"job", "ranks", "warnings"}).
void write_rank_view_json(const RankView& v, std::ostream& out, int depth = 0);
// `j` as j.dump(2) writes it `depth` levels down in a document dumped with indent 2 (invalid UTF-8 replaced).
void write_json_at_depth(const nlohmann::json& j, std::ostream& out, int depth);

struct RankRenderOptions {
    size_t max_step_rows = 20;  // the first steps and the widest spreads; 0 = every step
    bool all_ranks = false;     // one row per rank even above kRanksListedWhole
};
// Text (table / markdown) of the view: the straggler line, the ranks (every one, or the distribution and the top
// ones), the per-step table.
void render_rank_view(const RankView& v, OutputFormat format, std::ostream& out, const RankRenderOptions& options = {});

}  // namespace gprof::report
