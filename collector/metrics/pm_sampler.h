// One device's PM sampler (cupti_pmsampling.h, CUDA 12.6 and later): enabled and configured for a metric set
// (config_image.h), started, drained into evaluated samples, stopped. No thread and no pipeline of its own: the
// session's GPU-metrics thread (session/gpu_metrics.cpp) drives it and posts what it gives.
//
// What the H200 showed (docs/validation.md "PM sampling on the H200", tests/collector/cupti_standin/pm_sampling.cpp
// models it): sample times are ns on cuptiGetTimestamp's clock, which is the trace clock under the collector (its
// timestamp callback); samples are contiguous intervals of the asked length from Start to Stop, except the first,
// which begins before Start and covers no one interval: it is left out. A raw sample is 21.5 kB of counter data at 8
// metrics, so the counter-data image holds kImageSamples and is drained (decoded, evaluated, reset) every ~50 ms;
// the hardware buffer (kHardwareBufferBytes, as the probe's) holds the samples between drains.
#pragma once

#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cupti_loader/loader.h"
#include "gprof/trace/records.h"
#include "metrics/config_image.h"
#include "metrics/metric_sets.h"

namespace gprof::collector::metrics {

// The cuptiPmSampling* functions and the two of cupti_profiler_target.h a sampler needs; all null when the library
// lacks any (CUPTI before 12.6).
struct PmSamplingApi {
    CUptiResult (*ProfilerInitialize)(CUpti_Profiler_Initialize_Params*) = nullptr;
    CUptiResult (*DeviceGetChipName)(CUpti_Device_GetChipName_Params*) = nullptr;
    CUptiResult (*GetCounterAvailability)(CUpti_PmSampling_GetCounterAvailability_Params*) = nullptr;
    CUptiResult (*Enable)(CUpti_PmSampling_Enable_Params*) = nullptr;
    CUptiResult (*Disable)(CUpti_PmSampling_Disable_Params*) = nullptr;
    CUptiResult (*SetConfig)(CUpti_PmSampling_SetConfig_Params*) = nullptr;
    CUptiResult (*GetCounterDataSize)(CUpti_PmSampling_GetCounterDataSize_Params*) = nullptr;
    CUptiResult (*CounterDataImageInitialize)(CUpti_PmSampling_CounterDataImage_Initialize_Params*) = nullptr;
    CUptiResult (*Start)(CUpti_PmSampling_Start_Params*) = nullptr;
    CUptiResult (*Stop)(CUpti_PmSampling_Stop_Params*) = nullptr;
    CUptiResult (*DecodeData)(CUpti_PmSampling_DecodeData_Params*) = nullptr;
    CUptiResult (*GetCounterDataInfo)(CUpti_PmSampling_GetCounterDataInfo_Params*) = nullptr;
    CUptiResult (*CounterDataGetSampleInfo)(CUpti_PmSampling_CounterData_GetSampleInfo_Params*) = nullptr;
    ProfilerHostApi host;
};

// Resolves every function from `cupti`'s library. False, with `missing` naming the first absent one.
bool resolve_pm_sampling(const cupti::CuptiApi& cupti, PmSamplingApi& api, std::string& missing);

// Once per process, before the first device: cuptiProfilerInitialize. Empty, or why not (one phrase).
std::string initialize_profiler(const PmSamplingApi& api);

// The phrase for a refusal of cuptiPmSamplingEnable / GetCounterAvailability: what the user can do about it.
std::string pm_refusal(const PmSamplingApi& api, CUptiResult result);

inline constexpr uint32_t kImageSamples = 1000;                 // counter-data image: ~21 MB at 8 metrics
inline constexpr uint64_t kHardwareBufferBytes = 256ull << 20;  // as the probe: the H200 never overflowed it

// What a drain found, beyond its samples.
struct DrainStats {
    uint64_t samples = 0;            // evaluated and handed out
    uint64_t overflows = 0;          // decodes that said the hardware buffer overflowed
    uint64_t lost_samples = 0;       // intervals missing between consecutive samples (overflow), by their length
    uint64_t lost_ns = 0;
    uint64_t evaluate_failures = 0;  // samples CUPTI could not evaluate (left out)
    CUptiResult first_error = CUPTI_SUCCESS;  // the first decode error other than an overflow
};

class DeviceSampler {
public:
    DeviceSampler() = default;
    ~DeviceSampler();  // disables the device (if enabled) and frees the host object
    DeviceSampler(const DeviceSampler&) = delete;
    DeviceSampler& operator=(const DeviceSampler&) = delete;

    // Chip, set (`set_name`, or the chip's default when empty), config image, Enable, SetConfig, the counter-data
    // image. Empty on success, else one line saying why this device is not sampled (it then holds nothing).
    // `notes`: lines to say even on success (metrics of the set left out).
    std::string open(const PmSamplingApi& api, uint32_t device, const std::string& set_name, uint64_t interval_ns,
                     std::vector<std::string>& notes);
    // Starts sampling. Empty, or why not.
    std::string start();
    // Decodes what the hardware holds, evaluates each completed sample into `out` (appended), resets the image;
    // again while the image filled up. Not concurrently with itself or stop().
    void drain(std::vector<trace::GpuMetricSample>& out);
    // Stops sampling, drains the rest into `out` and disables the device.
    void stop(std::vector<trace::GpuMetricSample>& out);

    // open() failed because CUPTI knows no device of that number (the end of `all`'s devices).
    bool missing_device() const { return missing_device_; }
    uint32_t device() const { return device_; }
    const std::string& chip() const { return chip_; }
    const std::string& set_name() const { return set_name_; }
    const std::vector<std::string>& metrics() const { return config_.metrics; }
    uint64_t interval_ns() const { return interval_ns_; }
    const DrainStats& stats() const { return stats_; }

private:
    bool reset_image();
    void evaluate(size_t completed, std::vector<trace::GpuMetricSample>& out);
    void stop_running();  // Stop, once, if started
    void disable();

    const PmSamplingApi* api_ = nullptr;
    uint32_t device_ = 0;
    std::string chip_, set_name_;
    MetricConfig config_;
    std::vector<const char*> names_;  // config_.metrics as C strings (GetCounterDataSize, Evaluate)
    CUpti_PmSampling_Object* object_ = nullptr;
    CUpti_Profiler_Host_Object* host_ = nullptr;  // holds the config's metrics, for evaluation
    std::vector<uint8_t> image_;
    uint64_t interval_ns_ = 0;
    bool running_ = false;
    bool missing_device_ = false;
    bool first_seen_ = false;        // the first sample (begins before Start) was met and left out
    trace::Timestamp last_end_ = 0;  // end of the last sample handed out: a later start is a gap (overflow)
    DrainStats stats_;
};

}  // namespace gprof::collector::metrics
