// A metric set made into the config image cuptiPmSamplingSetConfig takes, with the profiler host API
// (cupti_profiler_host.h: runs on the host for a named chip, no GPU needed). PM sampling takes a configuration of one
// pass only (SetConfig refuses more: CUPTI_ERROR_NOT_SUPPORTED), so the set's metrics are added most wanted first and
// a metric that would need a second pass, or that the chip does not have, is left out and said.
//
// The host functions live in libcupti (which loads libnvperf_host.so beside it); they are resolved from the handle
// of the libcupti the collector loaded (cupti_loader), so a test points the same code at the real library or at the
// stand-in. Called once per device at start, on the collector's own thread: it allocates and may take milliseconds.
#pragma once

#include <cupti_profiler_host.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cupti_loader/loader.h"
#include "metrics/metric_sets.h"

namespace gprof::collector::metrics {

// The cuptiProfilerHost* functions; all null when the library lacks any (CUPTI before 12.6: no PM sampling).
struct ProfilerHostApi {
    CUptiResult (*Initialize)(CUpti_Profiler_Host_Initialize_Params*) = nullptr;
    CUptiResult (*Deinitialize)(CUpti_Profiler_Host_Deinitialize_Params*) = nullptr;
    CUptiResult (*ConfigAddMetrics)(CUpti_Profiler_Host_ConfigAddMetrics_Params*) = nullptr;
    CUptiResult (*GetConfigImageSize)(CUpti_Profiler_Host_GetConfigImageSize_Params*) = nullptr;
    CUptiResult (*GetConfigImage)(CUpti_Profiler_Host_GetConfigImage_Params*) = nullptr;
    CUptiResult (*GetNumOfPasses)(CUpti_Profiler_Host_GetNumOfPasses_Params*) = nullptr;
    CUptiResult (*EvaluateToGpuValues)(CUpti_Profiler_Host_EvaluateToGpuValues_Params*) = nullptr;
    const cupti::CuptiApi* cupti = nullptr;  // for result names
};

// Resolves the host functions from `cupti`'s library. False, with `missing` naming the first absent one, when the
// library lacks any.
bool resolve_profiler_host(const cupti::CuptiApi& cupti, ProfilerHostApi& host, std::string& missing);

struct DroppedMetric {
    std::string name;
    std::string why;  // "not on GB202 (CUPTI_ERROR_INVALID_PARAMETER)", "needs a second pass"
};

struct MetricConfig {
    std::vector<uint8_t> image;        // for cuptiPmSamplingSetConfig; empty on failure
    std::vector<std::string> metrics;  // the set's metrics in the image, in the set's order
    std::vector<DroppedMetric> dropped;
    std::string error;  // one line when no image could be made (unknown chip, no metric of the set fits)
    bool ok() const { return !image.empty(); }
};

// The one-pass config image of `set` for `chip`. `counter_availability`: the device's image
// (cuptiPmSamplingGetCounterAvailability), or null to configure for the chip alone (tests, no GPU).
MetricConfig build_metric_config(const ProfilerHostApi& host, const std::string& chip, const MetricSet& set,
                                 const uint8_t* counter_availability);

// A host object for `chip` holding `metrics` (in that order), for cuptiProfilerHostEvaluateToGpuValues: null, with
// `result` set, when the host API refuses. Free it with free_host_object.
CUpti_Profiler_Host_Object* make_host_object(const ProfilerHostApi& host, const std::string& chip,
                                             const uint8_t* counter_availability,
                                             const std::vector<std::string>& metrics, CUptiResult& result);
void free_host_object(const ProfilerHostApi& host, CUpti_Profiler_Host_Object* object);

// "kept 8 of 10 metrics of gh100 on GH100; left out pcie__read_bytes.sum (needs a second pass), ..." — the line the
// collector logs when a set does not fit whole; empty when nothing was dropped.
std::string describe_dropped(const MetricConfig& config, const MetricSet& set, const std::string& chip);

}  // namespace gprof::collector::metrics
