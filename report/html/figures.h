// What report.html draws, computed here in C++ from the run model, the streaming aggregate and the analysis: the
// page only draws these figures. Everything is aggregated to a fixed size (bins over the capture window, top rows
// of each table), never one entry per event: a run of 10^6 records gives a page of the same size as one of 10^3
// (docs/performance.md). The timeline is the place for events.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "model/aggregate.h"
#include "model/model.h"

namespace gprof::report::html {

// How many of each thing the page holds at most. Bins: points of a chart across the capture window.
struct Limits {
    size_t bins = 400;          // utilisation and memory charts
    size_t step_bars = 400;     // step chart: one bar per step up to this many, else bins of consecutive steps
    size_t histogram_bins = 30; // step time distribution
    size_t kernel_rows = 100;
    size_t nvtx_rows = 100;
    size_t api_rows = 30;
    size_t callsite_rows = 30;
    size_t process_rows = 200;
    size_t launch_configs = 4;  // per kernel, the most frequent grid/block shapes shown on hover
    size_t flame_processes = 4; // CPU flame graphs: the processes with the most samples
    size_t flame_nodes = 1500;  // boxes per flame graph: the widest ones
    double flame_min_share = 0.002;  // boxes narrower than this share of the graph are left out
};

// ----- GPU utilisation over time ----------------------------------------------------------------------------

struct DeviceBusy {
    DeviceKey key;
    std::string name;              // "NVIDIA H100 80GB HBM3", "" when unknown
    double busy_pct = 0;           // over the whole window (the analysis' figure)
    std::vector<float> busy;       // per bin: fraction of the bin the device was busy, 0..1
    std::vector<IdleGap> gaps;     // the analysis' largest idle gaps on this device, marked on the chart
};

struct Utilisation {
    Interval window;               // run axis
    Interval active;               // where the GPU work happened: work_span(busy, 0.01) over every device
    int64_t bin_ns = 0;
    std::vector<DeviceBusy> devices;
};

// Bins the busy intervals (sorted, disjoint: gpu_busy_by_device) over `window`: fraction busy per bin.
std::vector<float> busy_fractions(const std::vector<Interval>& busy, Interval window, size_t bins);

// The span holding the GPU work of all devices but the first and last `trim` share of its busy time: a stray early
// kernel (a warm-up, a device query) does not stretch it over the start-up. {0,0} when nothing ran.
Interval work_span(const std::map<DeviceKey, std::vector<Interval>>& busy, double trim);

Utilisation utilisation(const Run& run, const AnalysisResult& analysis, const Limits& limits);

// ----- kernels, memory operations, API calls, NVTX ranges -------------------------------------------------------

struct LaunchConfig {
    std::string text;  // "grid 128x1x1, block 256x1x1"
    uint64_t count = 0;
};

struct KeyRow {
    std::string name;            // display name (kernels demangled)
    std::string raw_name;        // as recorded (kernels: mangled), for the hover text when it differs
    Stats time, size;
    double share_pct = 0;        // of its section's total time
    double bandwidth_gbs = 0;    // memory operations: total bytes / total time, GB/s (decimal)
    std::vector<LaunchConfig> configs;  // kernels: the most frequent launch shapes
    std::string domain;          // NVTX: "" = default
};

struct Table {
    std::vector<KeyRow> rows;
    size_t total_rows = 0;       // before the limit
    uint64_t total_ns = 0;       // of every row, shown or not
};

// Kernels (graph launches traced as a whole among them, like the summary's GPU activities) by total time.
Table kernel_table(const Aggregate& agg, const Run& run, const Limits& limits);
// Memory copies by direction and memsets (nvprof's "[CUDA memcpy HtoD]" rows), with bandwidth.
Table memop_table(const Aggregate& agg);
Table api_table(const Aggregate& agg, const Limits& limits);
Table nvtx_table(const Aggregate& agg, const Limits& limits);

// ----- device memory over time ------------------------------------------------------------------------------

struct DeviceMemorySeries {
    std::string host;
    uint32_t device = 0;
    std::string name;
    uint64_t capacity = 0;                 // the device's memory, from its Device record (0: unknown)
    uint64_t peak_bytes = 0;               // device memory in use at once, all processes together
    int64_t peak_at = 0;                   // run axis
    std::vector<uint64_t> max_in_use;      // per bin: the most in use at any moment of the bin
    std::vector<uint64_t> pool_reserved;   // per bin, most reserved by cudaMallocAsync pools (empty: no pool)
    uint64_t pool_reserved_peak = 0;
    size_t processes = 0;                  // processes that allocated on it
};

struct MemoryBudgetRow {
    int64_t pid = 0;
    uint32_t device = 0;
    std::string kind;                      // memory_budget_name
    uint64_t allocations = 0, allocated_bytes = 0, peak_bytes = 0, live_bytes = 0, live_count = 0;
};

struct MemoryFigures {
    Interval window;
    int64_t bin_ns = 0;
    std::vector<DeviceMemorySeries> devices;
    std::vector<MemoryBudgetRow> budgets;  // per process, device and kind of memory
};

MemoryFigures memory_figures(const Run& run, Interval window, const Limits& limits);

// ----- steps ------------------------------------------------------------------------------------------------

struct StepBar {
    size_t first = 0, count = 1;           // steps [first, first + count) (1-based numbering on the page)
    double mean_ns = 0, min_ns = 0, max_ns = 0;
    double gpu_mean_ns = 0;                // GPU busy inside the step(s), mean
};

struct StepFigures {
    std::vector<StepBar> bars;             // one per step, or per bin of consecutive steps
    std::vector<uint64_t> histogram;       // counts over [hist_min, hist_max] in equal bins
    double hist_min = 0, hist_max = 0;
};

StepFigures step_figures(const StepView& steps, const Limits& limits);

// ----- CPU samples ------------------------------------------------------------------------------------------

// One box of an icicle: a frame at `depth` (0: the process, 1: a thread, then its frames from the outermost),
// [x, x + w) of the graph's width as shares of its samples.
struct FlameBox {
    std::string name;      // as shown: "work_a(long)", "spin (train.py:16)", "main (tid 4242)"
    uint32_t depth = 0;
    double x = 0, w = 0;
    uint64_t samples = 0;  // sampling periods under this box
    enum class Kind : uint8_t { Process, Thread, Native, Python } kind = Kind::Native;
};

struct FlameGraph {
    int64_t pid = 0;
    std::string title;     // "train.py (pid 948)"
    uint64_t samples = 0;  // sampling periods of the process
    uint64_t period_ns = 0;
    size_t threads = 0;
    uint32_t depth = 0;    // rows
    std::vector<FlameBox> boxes;
    size_t left_out = 0;   // boxes narrower than Limits::flame_min_share, or beyond flame_nodes
};

// Per process (the flame_processes with the most samples), its threads and their stacks (model/cpu_samples.h).
std::vector<FlameGraph> flame_graphs(const Run& run, const Limits& limits);

}  // namespace gprof::report::html
