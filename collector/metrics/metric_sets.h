// The GPU metric sets gprof-run samples (issue 37): the one list of them, per chip family, and the lookup by the
// name --gpu-metrics-set gives or by the chip a device reports (cuptiDeviceGetChipName). Plain data: the metric
// names are the profiler host API's (cupti_profiler_host.h), checked per chip against the real host library by
// tests/collector/test_metric_config.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace gprof::collector::metrics {

struct MetricSet {
    std::string_view name;         // what --gpu-metrics-set takes (nsys's spelling of a chip family: "gh100")
    std::string_view description;  // one line for --gpu-metrics-set help
    std::span<const char* const> chips;    // cuptiDeviceGetChipName's answers this set is the default for
    std::span<const char* const> metrics;  // most wanted first: PM sampling takes one pass, the tail may not fit
};

// Every set, in the order help lists them.
std::span<const MetricSet> metric_sets();

// The set named `name` (case as given: names are lower case), or null.
const MetricSet* find_metric_set(std::string_view name);

// The default set of a device whose chip is `chip` ("GH100"), or null when gprof-run has none for it.
const MetricSet* default_metric_set(std::string_view chip);

// "gh100, ga100, ..." for error lines.
std::string metric_set_names();

}  // namespace gprof::collector::metrics
