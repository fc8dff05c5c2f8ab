// What the summary says of a device's GPU metrics (issue 37): per metric its time-weighted mean over the samples,
// p50, p90 and max over them, and its mean over the time kernels ran (a sample weighs as much as kernel time it
// holds: "SM active 35 % over the run, 70 % while kernels ran"); per NVTX range name the time-weighted mean of the
// samples its ranges overlap. Computed from a GpuMetricSeries (model/gpu_metrics.h), the device's kernel intervals
// and the ranges, by the streaming aggregate (aggregate.h) at the end of each trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gprof/trace/records.h"
#include "model/gpu_metrics.h"
#include "model/identity.h"

namespace gprof::report {

// How a metric is shown: a share of peak in percent (".pct_of_peak..."), or a count over the interval shown as a
// rate (bytes a second, cycles a second).
enum class GpuMetricUnit { Percent, BytesPerSecond, PerSecond };

// The metrics the analysis rules read (collector/metrics/metric_sets.cpp samples them on every chip it has a set for).
inline constexpr std::string_view kSmActiveMetric = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kTensorPipeMetric =
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kDramThroughputMetric = "dram__throughput.avg.pct_of_peak_sustained_elapsed";

// A metric as people read it: "SM active" for sm__cycles_active.avg.pct_of_peak_sustained_elapsed; a name gprof-run
// does not know keeps its own text.
struct GpuMetricLabel {
    std::string label;
    GpuMetricUnit unit = GpuMetricUnit::Percent;
};
GpuMetricLabel gpu_metric_label(std::string_view metric);
// The value of one sample as shown: the share itself, or the count over the sample's length in seconds.
double gpu_metric_figure(GpuMetricUnit unit, double value, uint64_t sample_ns);

struct GpuMetricFigures {
    std::string metric;  // as the trace names it
    GpuMetricLabel label;
    uint64_t samples = 0;  // samples with a value
    // Over the samples with a value (NaN when none): time-weighted mean, percentiles and max of the figures, and the
    // mean weighted by the kernel time within each sample (NaN when no kernel ran in a sample with a value).
    double mean = 0, p50 = 0, p90 = 0, max = 0, busy_mean = 0;
};

// The samples overlapping the ranges of one name ("domain:name", as the summary's NVTX rows), in one process.
struct GpuMetricRangeRow {
    std::string name;
    uint64_t count = 0;     // ranges
    uint64_t total_ns = 0;  // their summed length: the order of the rows
    std::vector<double> means;  // per metric: time-weighted mean of the samples' figures over the overlap (NaN: none)
};

struct GpuMetricsSummary {
    ProcessKey process;
    int64_t pid = 0;
    uint32_t device = 0;
    std::string set, chip;
    uint64_t interval_ns = 0;
    uint64_t samples = 0;
    int64_t first_ns = 0, last_ns = 0;  // run axis: the first sample's start, the last one's end
    uint64_t sampled_ns = 0;            // the samples' summed length
    uint64_t busy_ns = 0;               // kernel time within the samples (kernels overlapping counted once)
    std::vector<GpuMetricFigures> metrics;  // in the set's order
    std::vector<GpuMetricRangeRow> ranges;  // by total_ns, longest first; ties by name
};

// A kernel's interval on the trace clock.
struct BusySpan {
    trace::Timestamp start = 0, end = 0;
};

// Builds one GpuMetricsSummary: the series' samples in time order, then the device's kernel time and the ranges.
class GpuMetricsSummarizer {
public:
    explicit GpuMetricsSummarizer(const GpuMetricSeries& series);

    // The device's kernel intervals, in any order, overlapping or not.
    void add_busy(std::vector<BusySpan> spans);
    // One range [start, end) of the row `row` (range_rows names them).
    void add_range(trace::Timestamp start, trace::Timestamp end, uint32_t row);
    // `set`, `chip` and the process's fields are the caller's to fill; `row_names` names add_range's rows.
    GpuMetricsSummary finish(const std::vector<std::string>& row_names) const;

private:
    const GpuMetricSeries& series_;
    std::vector<uint32_t> order_;  // sample indices by start
    std::vector<GpuMetricLabel> labels_;
    std::vector<double> busy_;     // per sample (order_'s order): kernel time within it
    struct RowSums {
        uint64_t count = 0, total_ns = 0;
        std::vector<double> weighted, weight;  // per metric
    };
    std::vector<RowSums> rows_;
    double figure(size_t sample, size_t metric) const;  // sample: index into the series
    uint64_t length_ns(size_t sample) const;            // its interval; 0 when its end is not after its start
};

}  // namespace gprof::report
