#include "metrics/pm_sampler.h"

namespace gprof::collector::metrics {
namespace {

template <class P>
P params(size_t struct_size) {
    P p{};
    p.structSize = struct_size;
    return p;
}
#define GPROF_PM_PARAMS(Type) params<Type>(Type##_STRUCT_SIZE)

std::string name_of(const PmSamplingApi& api, CUptiResult r) { return cupti::result_name(api.host.cupti, r); }

}  // namespace

bool resolve_pm_sampling(const cupti::CuptiApi& cupti, PmSamplingApi& api, std::string& missing) {
    api = PmSamplingApi{};
    if (!resolve_profiler_host(cupti, api.host, missing)) return false;
    cupti::OptionalSymbols get(cupti);
    get(api.ProfilerInitialize, "cuptiProfilerInitialize");
    get(api.DeviceGetChipName, "cuptiDeviceGetChipName");
    get(api.GetCounterAvailability, "cuptiPmSamplingGetCounterAvailability");
    get(api.Enable, "cuptiPmSamplingEnable");
    get(api.Disable, "cuptiPmSamplingDisable");
    get(api.SetConfig, "cuptiPmSamplingSetConfig");
    get(api.GetCounterDataSize, "cuptiPmSamplingGetCounterDataSize");
    get(api.CounterDataImageInitialize, "cuptiPmSamplingCounterDataImageInitialize");
    get(api.Start, "cuptiPmSamplingStart");
    get(api.Stop, "cuptiPmSamplingStop");
    get(api.DecodeData, "cuptiPmSamplingDecodeData");
    get(api.GetCounterDataInfo, "cuptiPmSamplingGetCounterDataInfo");
    get(api.CounterDataGetSampleInfo, "cuptiPmSamplingCounterDataGetSampleInfo");
    if (get.all_found()) return true;
    missing = get.first_missing;
    ProfilerHostApi host = api.host;
    api = PmSamplingApi{};
    api.host = host;
    return false;
}

std::string initialize_profiler(const PmSamplingApi& api) {
    auto p = GPROF_PM_PARAMS(CUpti_Profiler_Initialize_Params);
    CUptiResult r = api.ProfilerInitialize(&p);
    return r == CUPTI_SUCCESS ? std::string() : "cuptiProfilerInitialize failed (" + name_of(api, r) + ")";
}

std::string pm_refusal(const PmSamplingApi& api, CUptiResult r) {
    switch (r) {
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
            return "profiling not permitted (the driver restricts GPU performance counters to administrators: "
                   "NVreg_RestrictProfilingToAdminUsers=1; run as root or have the option set to 0)";
        case CUPTI_ERROR_HARDWARE_BUSY:
            return "another profiler holds the GPU's performance counters (nsys, ncu, DCGM profiling)";
        case CUPTI_ERROR_INVALID_OPERATION:
            return "PM sampling is already enabled on this device in this process (another sampler)";
        case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
            return "the device is a MIG slice: PM sampling is not supported on MIG instances";
        case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
            return "PM sampling is not supported on this (CMP) device";
        case CUPTI_ERROR_NOT_SUPPORTED:
            return "PM sampling is not supported on this device (CUPTI_ERROR_NOT_SUPPORTED)";
        default:
            return "CUPTI refused PM sampling (" + name_of(api, r) + ")";
    }
}

DeviceSampler::~DeviceSampler() {
    disable();
    if (api_) free_host_object(api_->host, host_);
}

void DeviceSampler::stop_running() {
    if (!running_) return;
    auto sp = GPROF_PM_PARAMS(CUpti_PmSampling_Stop_Params);
    sp.pPmSamplingObject = object_;
    api_->Stop(&sp);
    running_ = false;
}

void DeviceSampler::disable() {
    if (!object_) return;
    stop_running();
    auto dp = GPROF_PM_PARAMS(CUpti_PmSampling_Disable_Params);
    dp.pPmSamplingObject = object_;
    api_->Disable(&dp);
    object_ = nullptr;
}

std::string DeviceSampler::open(const PmSamplingApi& api, uint32_t device, const std::string& set_name,
                                uint64_t interval_ns, std::vector<std::string>& notes) {
    api_ = &api;
    device_ = device;
    interval_ns_ = interval_ns;
    auto cp = GPROF_PM_PARAMS(CUpti_Device_GetChipName_Params);
    cp.deviceIndex = device;
    if (CUptiResult r = api.DeviceGetChipName(&cp); r != CUPTI_SUCCESS || !cp.pChipName) {
        missing_device_ = r == CUPTI_ERROR_INVALID_DEVICE;
        return missing_device_ ? "no such device in this process" : "its chip could not be told (" + name_of(api, r) + ")";
    }
    chip_ = cp.pChipName;
    const MetricSet* set = set_name.empty() ? default_metric_set(chip_) : find_metric_set(set_name);
    if (!set)
        return set_name.empty() ? "gprof-run has no metric set for chip " + chip_ + " (sets: " + metric_set_names() + ")"
                                : "\"" + set_name + "\" is no metric set (" + metric_set_names() + ")";
    set_name_ = set->name;

    // The counter availability image: what this device can count now (a MIG slice or a held counter says so here).
    auto ap = GPROF_PM_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
    ap.deviceIndex = device;
    std::vector<uint8_t> availability;
    if (CUptiResult r = api.GetCounterAvailability(&ap); r != CUPTI_SUCCESS) return pm_refusal(api, r);
    availability.assign(ap.counterAvailabilityImageSize, 0);
    ap.pCounterAvailabilityImage = availability.data();
    if (CUptiResult r = api.GetCounterAvailability(&ap); r != CUPTI_SUCCESS) return pm_refusal(api, r);

    config_ = build_metric_config(api.host, chip_, *set, availability.data());
    if (!config_.ok()) return config_.error;
    if (std::string dropped = describe_dropped(config_, *set, chip_); !dropped.empty()) notes.push_back(dropped);
    for (const std::string& m : config_.metrics) names_.push_back(m.c_str());
    CUptiResult hr = CUPTI_SUCCESS;
    host_ = make_host_object(api.host, chip_, availability.data(), config_.metrics, hr);
    if (!host_) return "the profiler host API refused the metrics for evaluation (" + name_of(api, hr) + ")";

    auto ep = GPROF_PM_PARAMS(CUpti_PmSampling_Enable_Params);
    ep.deviceIndex = device;
    if (CUptiResult r = api.Enable(&ep); r != CUPTI_SUCCESS) return pm_refusal(api, r);
    object_ = ep.pPmSamplingObject;

    auto sp = GPROF_PM_PARAMS(CUpti_PmSampling_SetConfig_Params);
    sp.pPmSamplingObject = object_;
    sp.configSize = config_.image.size();
    sp.pConfig = config_.image.data();
    sp.hardwareBufferSize = kHardwareBufferBytes;
    sp.samplingInterval = interval_ns;
    sp.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sp.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;  // overflow is said, not hidden
    if (CUptiResult r = api.SetConfig(&sp); r != CUPTI_SUCCESS) {
        disable();
        return "CUPTI refused the sampling configuration of " + set_name_ + " (" + name_of(api, r) + ")";
    }
    auto dp = GPROF_PM_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
    dp.pPmSamplingObject = object_;
    dp.pMetricNames = names_.data();
    dp.numMetrics = names_.size();
    dp.maxSamples = kImageSamples;
    if (CUptiResult r = api.GetCounterDataSize(&dp); r != CUPTI_SUCCESS) {
        disable();
        return "no counter-data image (" + name_of(api, r) + ")";
    }
    try {
        image_.assign(dp.counterDataSize, 0);
    } catch (...) {
        disable();
        return "no memory for a counter-data image of " + std::to_string(dp.counterDataSize) + " bytes";
    }
    if (!reset_image()) {
        disable();
        return "the counter-data image could not be initialised";
    }
    return {};
}

std::string DeviceSampler::start() {
    auto sp = GPROF_PM_PARAMS(CUpti_PmSampling_Start_Params);
    sp.pPmSamplingObject = object_;
    if (CUptiResult r = api_->Start(&sp); r != CUPTI_SUCCESS) {
        disable();
        return "cuptiPmSamplingStart failed (" + name_of(*api_, r) + ")";
    }
    running_ = true;
    return {};
}

bool DeviceSampler::reset_image() {
    auto ip = GPROF_PM_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
    ip.pPmSamplingObject = object_;
    ip.counterDataSize = image_.size();
    ip.pCounterData = image_.data();
    return api_->CounterDataImageInitialize(&ip) == CUPTI_SUCCESS;
}

void DeviceSampler::drain(std::vector<trace::GpuMetricSample>& out) {
    if (!object_) return;
    // Bounded: each round empties an image of kImageSamples; a device that produces faster than that is caught up
    // with over several drains (the hardware buffer holds the rest, and says when it overflows).
    for (int round = 0; round < 16; ++round) {
        auto dp = GPROF_PM_PARAMS(CUpti_PmSampling_DecodeData_Params);
        dp.pPmSamplingObject = object_;
        dp.pCounterDataImage = image_.data();
        dp.counterDataImageSize = image_.size();
        CUptiResult rc = api_->DecodeData(&dp);
        if (dp.overflow || rc == CUPTI_ERROR_OUT_OF_MEMORY) ++stats_.overflows;
        else if (rc != CUPTI_SUCCESS && stats_.first_error == CUPTI_SUCCESS) stats_.first_error = rc;
        auto ip = GPROF_PM_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
        ip.pCounterDataImage = image_.data();
        ip.counterDataImageSize = image_.size();
        if (api_->GetCounterDataInfo(&ip) == CUPTI_SUCCESS) evaluate(ip.numCompletedSamples, out);
        if (!reset_image()) break;
        if (dp.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
    }
}

void DeviceSampler::evaluate(size_t completed, std::vector<trace::GpuMetricSample>& out) {
    for (size_t i = 0; i < completed; ++i) {
        auto sp = GPROF_PM_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
        sp.pPmSamplingObject = object_;
        sp.pCounterDataImage = image_.data();
        sp.counterDataImageSize = image_.size();
        sp.sampleIndex = i;
        if (api_->CounterDataGetSampleInfo(&sp) != CUPTI_SUCCESS) {
            ++stats_.evaluate_failures;
            continue;
        }
        if (!first_seen_) {  // begins before Start (the H200: 764-931 ms long): no one interval, left out
            first_seen_ = true;
            last_end_ = sp.endTimestamp;
            continue;
        }
        trace::GpuMetricSample s;
        s.start = sp.startTimestamp;
        s.end = sp.endTimestamp;
        s.device = device_;
        s.value_count = static_cast<uint32_t>(names_.size() < trace::kMaxGpuMetrics ? names_.size()
                                                                                      : trace::kMaxGpuMetrics);
        auto ep = GPROF_PM_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
        ep.pHostObject = host_;
        ep.pCounterDataImage = image_.data();
        ep.counterDataImageSize = image_.size();
        ep.rangeIndex = i;
        ep.ppMetricNames = names_.data();
        ep.numMetrics = s.value_count;
        ep.pMetricValues = s.values;
        if (api_->host.EvaluateToGpuValues(&ep) != CUPTI_SUCCESS) {
            ++stats_.evaluate_failures;
            continue;
        }
        // Samples are contiguous (end == next start on the H200): a later start means intervals were lost, which
        // with KEEP_OLDEST is the hardware buffer overflowing.
        if (last_end_ && s.start > last_end_ && interval_ns_) {
            uint64_t gap = s.start - last_end_;
            if (gap >= interval_ns_ / 2) {
                stats_.lost_ns += gap;
                stats_.lost_samples += (gap + interval_ns_ / 2) / interval_ns_;
            }
        }
        last_end_ = s.end;
        ++stats_.samples;
        out.push_back(s);
    }
}

void DeviceSampler::stop(std::vector<trace::GpuMetricSample>& out) {
    if (!object_) return;
    stop_running();
    drain(out);
    disable();
}

}  // namespace gprof::collector::metrics
