#include "model/gpu_metric_summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gprof::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct KnownMetric {
    std::string_view metric;
    std::string_view label;
    GpuMetricUnit unit;
};

// The metrics of collector/metrics/metric_sets.cpp's sets, as the outputs name them.
constexpr KnownMetric kKnownMetrics[] = {
    {kSmActiveMetric, "SM active", GpuMetricUnit::Percent},
    {kTensorPipeMetric, "Tensor pipe active", GpuMetricUnit::Percent},
    {kDramThroughputMetric, "DRAM throughput", GpuMetricUnit::Percent},
    {"sm__warps_active.avg.pct_of_peak_sustained_elapsed", "Warps active", GpuMetricUnit::Percent},
    {"gr__cycles_active.sum", "GR active cycles", GpuMetricUnit::PerSecond},
    {"gr__cycles_elapsed.max", "GR clock", GpuMetricUnit::PerSecond},
    {"dram__bytes_read.sum", "DRAM read", GpuMetricUnit::BytesPerSecond},
    {"dram__bytes_write.sum", "DRAM write", GpuMetricUnit::BytesPerSecond},
    {"pcie__read_bytes.sum", "PCIe read", GpuMetricUnit::BytesPerSecond},
    {"pcie__write_bytes.sum", "PCIe write", GpuMetricUnit::BytesPerSecond},
};

// Percentile by rank (nearest rank) of the values; they are reordered.
double percentile(std::vector<double>& values, double p) {
    if (values.empty()) return kNaN;
    size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
    size_t at = rank ? rank - 1 : 0;
    std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(at), values.end());
    return values[at];
}

uint64_t overlap(trace::Timestamp a0, trace::Timestamp a1, trace::Timestamp b0, trace::Timestamp b1) {
    trace::Timestamp s = std::max(a0, b0), e = std::min(a1, b1);
    return e > s ? e - s : 0;
}

}  // namespace

GpuMetricLabel gpu_metric_label(std::string_view metric) {
    for (const KnownMetric& k : kKnownMetrics)
        if (k.metric == metric) return {std::string(k.label), k.unit};
    GpuMetricUnit unit = metric.find(".pct_of_peak") != std::string_view::npos ? GpuMetricUnit::Percent
                         : metric.find("bytes") != std::string_view::npos     ? GpuMetricUnit::BytesPerSecond
                                                                              : GpuMetricUnit::PerSecond;
    return {std::string(metric), unit};
}

double gpu_metric_figure(GpuMetricUnit unit, double value, uint64_t sample_ns) {
    if (unit == GpuMetricUnit::Percent) return value;
    return sample_ns ? value * 1e9 / static_cast<double>(sample_ns) : kNaN;
}

GpuMetricsSummarizer::GpuMetricsSummarizer(const GpuMetricSeries& series) : series_(series) {
    order_.resize(series.samples());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
    auto by_start = [&](uint32_t a, uint32_t b) { return series.starts[a] < series.starts[b]; };
    if (!std::is_sorted(order_.begin(), order_.end(), by_start)) std::stable_sort(order_.begin(), order_.end(), by_start);
    for (const std::string& m : series.metrics) labels_.push_back(gpu_metric_label(m));
    busy_.assign(order_.size(), 0.0);
}

uint64_t GpuMetricsSummarizer::length_ns(size_t sample) const {
    return series_.ends[sample] > series_.starts[sample] ? series_.ends[sample] - series_.starts[sample] : 0;
}

double GpuMetricsSummarizer::figure(size_t sample, size_t metric) const {
    const double f = gpu_metric_figure(labels_[metric].unit, series_.value(sample, metric), length_ns(sample));
    return std::isfinite(f) ? f : kNaN;  // an infinite value (a damaged trace) is no figure: left out like a missing one
}

void GpuMetricsSummarizer::add_busy(std::vector<BusySpan> spans) {
    std::sort(spans.begin(), spans.end(), [](const BusySpan& a, const BusySpan& b) { return a.start < b.start; });
    // Merged, so that kernels running side by side count their time once.
    std::vector<BusySpan> merged;
    for (const BusySpan& s : spans) {
        if (s.end <= s.start) continue;
        if (!merged.empty() && s.start <= merged.back().end) merged.back().end = std::max(merged.back().end, s.end);
        else merged.push_back(s);
    }
    size_t first = 0;
    for (size_t i = 0; i < order_.size(); ++i) {
        const trace::Timestamp s = series_.starts[order_[i]], e = series_.ends[order_[i]];
        while (first < merged.size() && merged[first].end <= s) ++first;
        for (size_t j = first; j < merged.size() && merged[j].start < e; ++j)
            busy_[i] += static_cast<double>(overlap(s, e, merged[j].start, merged[j].end));
    }
}

void GpuMetricsSummarizer::add_range(trace::Timestamp start, trace::Timestamp end, uint32_t row) {
    if (row >= rows_.size()) rows_.resize(row + 1);
    RowSums& r = rows_[row];
    if (r.weighted.empty()) r.weighted.assign(labels_.size(), 0.0), r.weight.assign(labels_.size(), 0.0);
    ++r.count;
    r.total_ns += end > start ? end - start : 0;
    // The first sample ending after the range's start, then on while samples start before its end.
    auto it = std::partition_point(order_.begin(), order_.end(),
                                   [&](uint32_t i) { return series_.ends[i] <= start; });
    for (; it != order_.end() && series_.starts[*it] < end; ++it) {
        const double w = static_cast<double>(overlap(start, end, series_.starts[*it], series_.ends[*it]));
        if (w <= 0) continue;
        for (size_t m = 0; m < labels_.size(); ++m) {
            const double f = figure(*it, m);
            if (std::isnan(f)) continue;
            r.weighted[m] += f * w;
            r.weight[m] += w;
        }
    }
}

GpuMetricsSummary GpuMetricsSummarizer::finish(const std::vector<std::string>& row_names) const {
    GpuMetricsSummary out;
    out.device = series_.device;
    out.interval_ns = series_.interval_ns;
    out.samples = order_.size();
    std::vector<double> figures;
    for (size_t i = 0; i < order_.size(); ++i) {
        out.sampled_ns += length_ns(order_[i]);
        out.busy_ns += static_cast<uint64_t>(busy_[i]);
    }
    for (size_t m = 0; m < labels_.size(); ++m) {
        GpuMetricFigures f;
        f.metric = series_.metrics[m];
        f.label = labels_[m];
        figures.clear();
        double sum = 0, weight = 0, busy_sum = 0, busy_weight = 0;
        for (size_t i = 0; i < order_.size(); ++i) {
            const uint32_t s = order_[i];
            const double v = figure(s, m);
            if (std::isnan(v)) continue;
            const double ns = static_cast<double>(length_ns(s));
            figures.push_back(v);
            sum += v * ns;
            weight += ns;
            busy_sum += v * busy_[i];
            busy_weight += busy_[i];
        }
        f.samples = figures.size();
        f.mean = weight > 0 ? sum / weight : kNaN;
        f.busy_mean = busy_weight > 0 ? busy_sum / busy_weight : kNaN;
        f.max = figures.empty() ? kNaN : *std::max_element(figures.begin(), figures.end());
        f.p50 = percentile(figures, 0.5);
        f.p90 = percentile(figures, 0.9);
        out.metrics.push_back(std::move(f));
    }
    for (size_t r = 0; r < rows_.size() && r < row_names.size(); ++r) {
        const RowSums& sums = rows_[r];
        if (!sums.count) continue;
        GpuMetricRangeRow row;
        row.name = row_names[r];
        row.count = sums.count;
        row.total_ns = sums.total_ns;
        bool covered = false;
        for (size_t m = 0; m < labels_.size(); ++m) {
            row.means.push_back(sums.weight[m] > 0 ? sums.weighted[m] / sums.weight[m] : kNaN);
            covered |= sums.weight[m] > 0;
        }
        if (covered) out.ranges.push_back(std::move(row));  // a range outside every sample says nothing
    }
    std::sort(out.ranges.begin(), out.ranges.end(), [](const GpuMetricRangeRow& a, const GpuMetricRangeRow& b) {
        return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
    });
    return out;
}

}  // namespace gprof::report
