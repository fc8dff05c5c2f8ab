// GPU metrics over time (trace format 1.7, issue 37) as the model keeps them: per device, its set's metric names
// (the columns) and its samples, columnar (a sample is 16 bytes and its values, not a 290-byte record: a minute at
// 10 kHz is 600 000 samples). The loader checks each sample against its device's set: a sample that names a device
// with no set before it, or holds more values than its set has metrics, is left out, counted and said in one line.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gprof/trace/records.h"

namespace gprof::report {

// One GpuMetricSet and the samples that follow it for its device.
struct GpuMetricSeries {
    uint32_t device = 0;
    trace::StringId name = 0;  // the set ("gh100")
    trace::StringId chip = 0;  // "GH100"
    uint64_t interval_ns = 0;
    std::vector<std::string> metrics;  // the columns, in value order
    std::vector<trace::Timestamp> starts, ends;
    std::vector<double> values;  // samples() rows of metrics.size() values; a sample's missing values are NaN

    size_t samples() const { return starts.size(); }
    // The span the samples cover (samples() > 0): the earliest start, the latest end (samples may come out of order).
    trace::Timestamp first_start() const { return *std::min_element(starts.begin(), starts.end()); }
    trace::Timestamp last_end() const { return *std::max_element(ends.begin(), ends.end()); }
    double value(size_t sample, size_t metric) const { return values[sample * metrics.size() + metric]; }
};

struct GpuMetrics {
    std::vector<GpuMetricSeries> series;  // one per GpuMetricSet, in file order

    // Samples left out, by reason (warnings() says them).
    uint64_t samples_without_set = 0;    // their device had no set before them
    uint64_t samples_too_many_values = 0;  // more values than their set has metrics
    uint64_t sets_too_wide = 0;          // sets of more than kMaxGpuMetrics metrics (no sample can fill them)

    // `metric_names`: the text of set.metrics (names separated by spaces).
    void add_set(const trace::GpuMetricSet& set, std::string_view metric_names);
    void add_sample(const trace::GpuMetricSample& sample);
    // One line per reason that left something out; nothing when nothing was.
    void warnings(std::vector<std::string>& out) const;

private:
    std::unordered_map<uint32_t, size_t> current_;  // device -> index in series of its latest set
};

}  // namespace gprof::report
