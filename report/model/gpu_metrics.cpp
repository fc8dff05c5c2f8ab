#include "model/gpu_metrics.h"

#include <limits>

namespace gprof::report {

void GpuMetrics::add_set(const trace::GpuMetricSet& set, std::string_view metric_names) {
    GpuMetricSeries s;
    s.device = set.device;
    s.name = set.name;
    s.chip = set.chip;
    s.interval_ns = set.interval_ns;
    size_t at = 0;
    while (at < metric_names.size()) {
        size_t space = metric_names.find(' ', at);
        if (space == std::string_view::npos) space = metric_names.size();
        if (space > at) {
            if (s.metrics.size() == trace::kMaxGpuMetrics) {
                ++sets_too_wide;
                current_.erase(set.device);  // its samples name no usable set
                return;
            }
            s.metrics.emplace_back(metric_names.substr(at, space - at));
        }
        at = space + 1;
    }
    current_[set.device] = series.size();
    series.push_back(std::move(s));
}

void GpuMetrics::add_sample(const trace::GpuMetricSample& sample) {
    auto it = current_.find(sample.device);
    if (it == current_.end()) {
        ++samples_without_set;
        return;
    }
    GpuMetricSeries& s = series[it->second];
    uint32_t n = sample.value_count < trace::kMaxGpuMetrics ? sample.value_count : trace::kMaxGpuMetrics;
    if (n > s.metrics.size()) {
        ++samples_too_many_values;
        return;
    }
    s.starts.push_back(sample.start);
    s.ends.push_back(sample.end);
    s.values.insert(s.values.end(), sample.values, sample.values + n);
    s.values.insert(s.values.end(), s.metrics.size() - n, std::numeric_limits<double>::quiet_NaN());
}

void GpuMetrics::warnings(std::vector<std::string>& out) const {
    if (samples_without_set)
        out.push_back(std::to_string(samples_without_set) +
                      " GPU metric samples left out: their device has no metric set before them (a damaged trace)");
    if (samples_too_many_values)
        out.push_back(std::to_string(samples_too_many_values) +
                      " GPU metric samples left out: more values than their device's metric set has metrics "
                      "(a damaged trace)");
    if (sets_too_wide)
        out.push_back(std::to_string(sets_too_wide) + " GPU metric sets left out: more than " +
                      std::to_string(trace::kMaxGpuMetrics) + " metrics (a sample holds at most that many)");
}

}  // namespace gprof::report
