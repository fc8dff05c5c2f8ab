// The CUPTI stand-in's PM sampling (cupti_pmsampling.h) and profiler host API (cupti_profiler_host.h), for issue
// 37's GPU metrics. Part of libgprof-test-cupti-standin, 13.0 and 12.9 personalities only: the real 12.9.79 and 13.0
// libraries export 24 cuptiPmSampling* and cuptiProfilerHost* functions, 12.4.127 none (nm -D here); the stand-in
// exports the 19 a sampler calls. Never installed.
//
// What it models (seen on an H200 with CUDA 13.0, driver 580, 2026-11-27: docs/validation.md "PM sampling on the
// H200", tests/data/h200/pm-sampling-probe.json), unless marked otherwise:
//   - Sample start and end are nanoseconds on cuptiGetTimestamp's clock, the registered timestamp callback's when
//     there is one (the samples followed gprof-run's CLOCK_MONOTONIC).
//   - GPU_TIME_INTERVAL: samples of exactly one interval, boundaries on the GPU timer's 32 ns step, contiguous from
//     cuptiPmSamplingStart to Stop whether or not anyone decodes. GPU_SYSCLK_INTERVAL: the interval in cycles of the
//     1.664 GHz GR clock the H200 ran at.
//   - The first sample is no interval: it begins before Start and ends one interval after it. The stand-in begins it
//     at cuptiPmSamplingEnable (which call the real one dates from is unconfirmed: the probe's call_times, next lease).
//   - Decode moves the completed samples into the counter-data image: stop reason OTHER while sampling runs,
//     END_OF_RECORDS once stopped and all are decoded, COUNTER_DATA_FULL when the image is full; populated ==
//     completed. Image size for 8 metrics and N samples: 2 564 + 21 561 N bytes (431 222 564 for 20 000), used for
//     every metric count (unconfirmed for others).
//   - Counter availability image 9 184 bytes; chip "GH100"; the 12 GH100 metrics the probe asked for, with CUPTI's
//     descriptions and units. Passes as CUDA 13.0's host library counts them for GH100 (--host-only, 2026-11-27):
//     one, except sm__warps_active.avg.pct_of_peak_sustained_elapsed together with sm__inst_executed_realtime.sum
//     (two; any other 11 of the 12 fit in one).
//   - Documented, not seen: SetConfig refuses a config needing several passes (CUPTI_ERROR_NOT_SUPPORTED); Enable on
//     a device already enabled is CUPTI_ERROR_INVALID_OPERATION; Enable without the right to profile is
//     CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; KEEP_OLDEST sets overflow when the hardware buffer fills and Decode
//     returns CUPTI_ERROR_OUT_OF_MEMORY.
//   - Assumed: the process has one device (as the libcuda stand-in: ordinal 0 only); cuptiDeviceGetChipName,
//     GetCounterAvailability and Enable with any other index are CUPTI_ERROR_INVALID_DEVICE (cupti_target.h documents
//     no result codes for the chip name).
//   - Assumed: a sample takes 16 KiB of hardware buffer (the H200's 256 MiB held 5 143 samples without overflow);
//     a metric name outside the catalogue is CUPTI_ERROR_INVALID_METRIC_NAME; a chip other than GH100 is
//     CUPTI_ERROR_INVALID_CHIP_NAME (the stand-in's limit: the real host library knows many chips).
//
// Values: what gprof_test_standin_pm_set gave each metric when the sample was taken (0 until set). Scripts
// (GPROF_TEST_STANDIN_SCRIPT, read at each Enable): pm-insufficient-privileges, pm-hardware-busy (another profiler
// holds the counters: CUPTI_ERROR_HARDWARE_BUSY, unconfirmed), pm-mig (CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED,
// unconfirmed), pm-small-hardware-buffer (read at SetConfig: the hardware buffer holds 8 samples whatever size is
// asked for, so a sampler that decodes every 50 ms at 10 kHz overflows).
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "standin_control.h"

#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

#if GPROF_STANDIN_PERSONALITY >= 126

namespace {

struct MetricInfo {
    const char* name;
    const char* description;
    const char* hw_unit;
    const char* dim_unit;
    CUpti_MetricType type;
};

// GH100's answers to cuptiProfilerHostGetMetricProperties on the H200 (the probe's "metrics").
const MetricInfo kGh100Metrics[] = {
    {"gr__cycles_active.sum", "# of cycles where GR was active", "gr", "sys_cycle", CUPTI_METRIC_TYPE_COUNTER},
    {"gr__cycles_elapsed.max", "# of cycles elapsed on GR", "gr", "sys_cycle", CUPTI_METRIC_TYPE_COUNTER},
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "# of cycles with at least one warp in flight", "sm",
     "percent", CUPTI_METRIC_TYPE_COUNTER},
    {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
     "# of cycles where tensor pipe was active", "sm", "percent", CUPTI_METRIC_TYPE_COUNTER},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput", "dram", "percent",
     CUPTI_METRIC_TYPE_THROUGHPUT},
    {"sm__warps_active.avg.pct_of_peak_sustained_elapsed", "cumulative # of warps in flight", "sm", "percent",
     CUPTI_METRIC_TYPE_COUNTER},
    {"dram__bytes_read.sum", "# of bytes read from DRAM", "dram", "byte", CUPTI_METRIC_TYPE_COUNTER},
    {"dram__bytes_write.sum", "# of bytes written to DRAM", "dram", "byte", CUPTI_METRIC_TYPE_COUNTER},
    {"sm__inst_executed_realtime.sum", "# of warp instructions executed", "sm", "instruction",
     CUPTI_METRIC_TYPE_COUNTER},
    {"gpu__time_duration.sum",
     "equals to gpu__time_duration_measured_user if collectable, otherwise equals to "
     "gpu__time_duration_measured_wallclock",
     "gpu", "nanosecond", CUPTI_METRIC_TYPE_COUNTER},
    {"pcie__read_bytes.sum", "# of bytes of PCIe read data, at 512B granularity", "pcie", "byte",
     CUPTI_METRIC_TYPE_COUNTER},
    {"pcie__write_bytes.sum", "# of bytes of PCIe write data, at 512B granularity", "pcie", "byte",
     CUPTI_METRIC_TYPE_COUNTER},
};
// The one pair of the catalogue that cannot be counted in the same pass on GH100.
constexpr const char* kSecondPassPair[2] = {"sm__warps_active.avg.pct_of_peak_sustained_elapsed",
                                            "sm__inst_executed_realtime.sum"};
constexpr size_t kAvailabilityBytes = 9184;
constexpr size_t kImageHeaderBytes = 2564, kImageSampleBytes = 21561;
constexpr uint64_t kHardwareBytesPerSample = 16384;
constexpr uint64_t kTimerStepNs = 32;
constexpr double kSysClockGhz = 1.664;
constexpr uint32_t kConfigMagic = 0x47434647;  // "GFCG"
constexpr uint32_t kImageMagic = 0x47494d47;   // "GMIG"
constexpr size_t kDevices = 1;

const MetricInfo* find_metric(const char* name) {
    for (const MetricInfo& m : kGh100Metrics)
        if (name && std::strcmp(m.name, name) == 0) return &m;
    return nullptr;
}

struct HostObject {
    std::vector<std::string> metrics;  // in the order added: the config image's and the samples' order
};

struct Sample {
    uint64_t start, end;
    std::vector<double> values;
};

// The counter-data image: this header, then max_samples slots of {start, end, values[metrics]}.
struct ImageHeader {
    uint32_t magic;
    uint32_t metrics;
    uint64_t max_samples;
    uint64_t count;
};

struct Sampler {
    size_t device = 0;
    bool configured = false, running = false, stopped = false;
    std::vector<std::string> metrics;
    uint64_t interval_ns = 0, capacity = 0, enabled_at = 0, last_end = 0, next_index = 0, start_at = 0;
    bool keep_latest = false, overflow = false;
    std::deque<Sample> hardware;  // taken, not yet decoded
};

struct PmState {
    std::mutex mutex;
    std::map<std::string, double> values;  // gprof_test_standin_pm_set
    std::map<size_t, Sampler*> enabled;    // by device
};

PmState& pm() {
    static auto* s = new PmState();
    return *s;
}

uint64_t timestamp() {
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

bool scripted(const char* flag) {
    const char* env = std::getenv("GPROF_TEST_STANDIN_SCRIPT");
    std::string text = std::string(",") + (env ? env : "") + ",";
    return text.find(std::string(",") + flag + ",") != std::string::npos;
}

// The samples that ended by `now` (the caller holds the lock). Sample k >= 1 ends at Start + (k + 1) intervals
// on the 32 ns step; sample 0 begins at Enable.
void take_samples(PmState& s, Sampler& p, uint64_t now) {
    if (!p.running) return;
    for (;;) {
        uint64_t end = p.start_at + (p.next_index + 1) * p.interval_ns;
        end -= end % kTimerStepNs;
        if (end > now) break;
        Sample smp{p.next_index == 0 ? p.enabled_at : p.last_end, end, {}};
        for (const std::string& m : p.metrics) {
            auto it = s.values.find(m);
            smp.values.push_back(it == s.values.end() ? 0.0 : it->second);
        }
        p.last_end = end;
        ++p.next_index;
        if (p.hardware.size() >= p.capacity) {
            if (!p.keep_latest) {
                p.overflow = true;
                continue;
            }
            p.hardware.pop_front();
        }
        p.hardware.push_back(std::move(smp));
    }
}

std::vector<std::string> config_metrics(const uint8_t* image, size_t size) {
    std::vector<std::string> out;
    if (!image || size < 8) return out;
    uint32_t magic = 0, count = 0;
    std::memcpy(&magic, image, 4);
    std::memcpy(&count, image + 4, 4);
    if (magic != kConfigMagic) return out;
    size_t pos = 8;
    for (uint32_t i = 0; i < count && pos < size; ++i) {
        const char* name = reinterpret_cast<const char*>(image + pos);
        size_t len = strnlen(name, size - pos);
        out.emplace_back(name, len);
        pos += len + 1;
    }
    return out;
}

size_t passes_of(const std::vector<std::string>& metrics) {
    size_t of_pair = 0;
    for (const auto& m : metrics)
        if (m == kSecondPassPair[0] || m == kSecondPassPair[1]) ++of_pair;
    return of_pair == 2 ? 2 : 1;
}

std::vector<uint8_t> make_config(const std::vector<std::string>& metrics) {
    std::vector<uint8_t> out(8);
    uint32_t magic = kConfigMagic, count = static_cast<uint32_t>(metrics.size());
    std::memcpy(out.data(), &magic, 4);
    std::memcpy(out.data() + 4, &count, 4);
    for (const std::string& m : metrics) out.insert(out.end(), m.c_str(), m.c_str() + m.size() + 1);
    return out;
}

size_t slot_bytes(uint32_t metrics) { return 16 + 8 * static_cast<size_t>(metrics); }

ImageHeader* image_header(uint8_t* image, size_t size) {
    if (!image || size < sizeof(ImageHeader)) return nullptr;
    auto* h = reinterpret_cast<ImageHeader*>(image);
    return h->magic == kImageMagic ? h : nullptr;
}

}  // namespace

STANDIN_EXPORT void gprof_test_standin_pm_set(const char* metric, double value) {
    PmState& s = pm();
    std::lock_guard<std::mutex> lock(s.mutex);
    uint64_t now = timestamp();
    for (auto& [device, p] : s.enabled) take_samples(s, *p, now);  // what ran before keeps the old value
    s.values[metric] = value;
}

// ---- cupti_profiler_target.h / cupti_target.h ----

STANDIN_EXPORT CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params*) { return CUPTI_SUCCESS; }

STANDIN_EXPORT CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->deviceIndex >= kDevices) return CUPTI_ERROR_INVALID_DEVICE;
    p->pChipName = "GH100";
    return CUPTI_SUCCESS;
}

// ---- cupti_pmsampling.h ----

STANDIN_EXPORT CUptiResult cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) {
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->deviceIndex >= kDevices) return CUPTI_ERROR_INVALID_DEVICE;
    if (!p->pCounterAvailabilityImage) {
        p->counterAvailabilityImageSize = kAvailabilityBytes;
        return CUPTI_SUCCESS;
    }
    if (p->counterAvailabilityImageSize < kAvailabilityBytes) return CUPTI_ERROR_INVALID_PARAMETER;
    std::memset(p->pCounterAvailabilityImage, 0xA5, kAvailabilityBytes);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params* p) {
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->deviceIndex >= kDevices) return CUPTI_ERROR_INVALID_DEVICE;
    if (scripted("pm-insufficient-privileges")) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    if (scripted("pm-hardware-busy")) return CUPTI_ERROR_HARDWARE_BUSY;
    if (scripted("pm-mig")) return CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED;
    PmState& s = pm();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.enabled.count(p->deviceIndex)) return CUPTI_ERROR_INVALID_OPERATION;
    auto* sampler = new Sampler();
    sampler->device = p->deviceIndex;
    sampler->enabled_at = timestamp();
    s.enabled[p->deviceIndex] = sampler;
    p->pPmSamplingObject = reinterpret_cast<CUpti_PmSampling_Object*>(sampler);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params* p) {
    if (!p || !p->pPmSamplingObject) return CUPTI_ERROR_INVALID_PARAMETER;
    PmState& s = pm();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto* sampler = reinterpret_cast<Sampler*>(p->pPmSamplingObject);
    s.enabled.erase(sampler->device);
    delete sampler;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) {
    if (!p || !p->pPmSamplingObject || p->samplingInterval == 0) return CUPTI_ERROR_INVALID_PARAMETER;
    std::vector<std::string> metrics = config_metrics(p->pConfig, p->configSize);
    if (metrics.empty()) return CUPTI_ERROR_INVALID_PARAMETER;
    if (passes_of(metrics) > 1) return CUPTI_ERROR_NOT_SUPPORTED;
    PmState& s = pm();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto* sampler = reinterpret_cast<Sampler*>(p->pPmSamplingObject);
    sampler->metrics = metrics;
    sampler->interval_ns = p->triggerMode == CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL
                               ? static_cast<uint64_t>(p->samplingInterval / kSysClockGhz)
                               : p->samplingInterval;
    if (sampler->interval_ns < kTimerStepNs) sampler->interval_ns = kTimerStepNs;
    sampler->capacity = scripted("pm-small-hardware-buffer") ? 8 : p->hardwareBufferSize / kHardwareBytesPerSample;
    sampler->keep_latest = p->hwBufferAppendMode == CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
    sampler->configured = true;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
    if (!p || !p->pPmSamplingObject || !p->numMetrics || !p->maxSamples) return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; ++i)
        if (!find_metric(p->pMetricNames[i])) return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->counterDataSize = kImageHeaderBytes + kImageSampleBytes * static_cast<size_t>(p->maxSamples);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingCounterDataImageInitialize(
    CUpti_PmSampling_CounterDataImage_Initialize_Params* p) {
    if (!p || !p->pPmSamplingObject || !p->pCounterData || p->counterDataSize < kImageHeaderBytes + kImageSampleBytes)
        return CUPTI_ERROR_INVALID_PARAMETER;
    auto* sampler = reinterpret_cast<Sampler*>(p->pPmSamplingObject);
    ImageHeader h{kImageMagic, static_cast<uint32_t>(sampler->metrics.size()),
                  (p->counterDataSize - kImageHeaderBytes) / kImageSampleBytes, 0};
    std::memcpy(p->pCounterData, &h, sizeof h);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingStart(CUpti_PmSampling_Start_Params* p) {
    if (!p || !p->pPmSamplingObject) return CUPTI_ERROR_INVALID_PARAMETER;
    PmState& s = pm();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto* sampler = reinterpret_cast<Sampler*>(p->pPmSamplingObject);
    if (!sampler->configured || sampler->running) return CUPTI_ERROR_INVALID_OPERATION;
    sampler->start_at = timestamp();
    sampler->running = true;
    sampler->stopped = false;
    sampler->next_index = 0;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params* p) {
    if (!p || !p->pPmSamplingObject) return CUPTI_ERROR_INVALID_PARAMETER;
    PmState& s = pm();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto* sampler = reinterpret_cast<Sampler*>(p->pPmSamplingObject);
    if (!sampler->running) return CUPTI_ERROR_INVALID_OPERATION;
    take_samples(s, *sampler, timestamp());
    sampler->running = false;
    sampler->stopped = true;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) {
    if (!p || !p->pPmSamplingObject) return CUPTI_ERROR_INVALID_PARAMETER;
    ImageHeader* h = image_header(p->pCounterDataImage, p->counterDataImageSize);
    if (!h) return CUPTI_ERROR_INVALID_PARAMETER;
    PmState& s = pm();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto* sampler = reinterpret_cast<Sampler*>(p->pPmSamplingObject);
    if (!sampler->configured) return CUPTI_ERROR_INVALID_OPERATION;
    take_samples(s, *sampler, timestamp());
    uint8_t* slots = p->pCounterDataImage + kImageHeaderBytes;
    while (!sampler->hardware.empty() && h->count < h->max_samples) {
        const Sample& smp = sampler->hardware.front();
        uint8_t* slot = slots + h->count * slot_bytes(h->metrics);
        std::memcpy(slot, &smp.start, 8);
        std::memcpy(slot + 8, &smp.end, 8);
        for (uint32_t i = 0; i < h->metrics && i < smp.values.size(); ++i)
            std::memcpy(slot + 16 + 8 * i, &smp.values[i], 8);
        ++h->count;
        sampler->hardware.pop_front();
    }
    p->decodeStopReason = !sampler->hardware.empty() ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL
                          : sampler->stopped        ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS
                                                    : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_OTHER;
    p->overflow = sampler->overflow ? 1 : 0;
    if (sampler->overflow) {
        sampler->overflow = false;
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    const ImageHeader* h = image_header(const_cast<uint8_t*>(p->pCounterDataImage), p->counterDataImageSize);
    if (!h) return CUPTI_ERROR_INVALID_PARAMETER;
    p->numTotalSamples = h->max_samples;
    p->numPopulatedSamples = p->numCompletedSamples = h->count;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiPmSamplingCounterDataGetSampleInfo(
    CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    const ImageHeader* h = image_header(const_cast<uint8_t*>(p->pCounterDataImage), p->counterDataImageSize);
    if (!h || p->sampleIndex >= h->count) return CUPTI_ERROR_INVALID_PARAMETER;
    const uint8_t* slot = p->pCounterDataImage + kImageHeaderBytes + p->sampleIndex * slot_bytes(h->metrics);
    std::memcpy(&p->startTimestamp, slot, 8);
    std::memcpy(&p->endTimestamp, slot + 8, 8);
    return CUPTI_SUCCESS;
}

// ---- cupti_profiler_host.h ----

STANDIN_EXPORT CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
    if (!p || !p->pChipName) return CUPTI_ERROR_INVALID_PARAMETER;
    if (std::strcmp(p->pChipName, "GH100") != 0) return CUPTI_ERROR_INVALID_CHIP_NAME;
    p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(new HostObject());
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
    if (!p || !p->pHostObject) return CUPTI_ERROR_INVALID_PARAMETER;
    delete reinterpret_cast<HostObject*>(p->pHostObject);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) {
    if (!p || !p->pHostObject) return CUPTI_ERROR_INVALID_PARAMETER;
    const MetricInfo* m = find_metric(p->pMetricName);
    if (!m) return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->pDescription = m->description;
    p->pHwUnit = m->hw_unit;
    p->pDimUnit = m->dim_unit;
    p->metricType = m->type;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
    if (!p || !p->pHostObject || !p->ppMetricNames) return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; ++i)
        if (!find_metric(p->ppMetricNames[i])) return CUPTI_ERROR_INVALID_METRIC_NAME;
    auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
    for (size_t i = 0; i < p->numMetrics; ++i) host->metrics.emplace_back(p->ppMetricNames[i]);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
    if (!p || !p->pHostObject) return CUPTI_ERROR_INVALID_PARAMETER;
    p->configImageSize = make_config(reinterpret_cast<HostObject*>(p->pHostObject)->metrics).size();
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
    if (!p || !p->pHostObject || !p->pConfigImage) return CUPTI_ERROR_INVALID_PARAMETER;
    std::vector<uint8_t> image = make_config(reinterpret_cast<HostObject*>(p->pHostObject)->metrics);
    if (p->configImageSize < image.size()) return CUPTI_ERROR_INVALID_PARAMETER;
    std::memcpy(p->pConfigImage, image.data(), image.size());
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    std::vector<std::string> metrics = config_metrics(p->pConfigImage, p->configImageSize);
    if (metrics.empty()) return CUPTI_ERROR_INVALID_PARAMETER;
    p->numOfPasses = passes_of(metrics);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
    if (!p || !p->pHostObject || !p->ppMetricNames || !p->pMetricValues) return CUPTI_ERROR_INVALID_PARAMETER;
    const ImageHeader* h = image_header(const_cast<uint8_t*>(p->pCounterDataImage), p->counterDataImageSize);
    if (!h || p->rangeIndex >= h->count) return CUPTI_ERROR_INVALID_PARAMETER;
    const auto* host = reinterpret_cast<const HostObject*>(p->pHostObject);
    const uint8_t* slot = p->pCounterDataImage + kImageHeaderBytes + p->rangeIndex * slot_bytes(h->metrics);
    for (size_t i = 0; i < p->numMetrics; ++i) {
        size_t k = 0;
        while (k < host->metrics.size() && host->metrics[k] != p->ppMetricNames[i]) ++k;
        if (k == host->metrics.size() || k >= h->metrics) return CUPTI_ERROR_INVALID_METRIC_NAME;
        std::memcpy(&p->pMetricValues[i], slot + 16 + 8 * k, 8);
    }
    return CUPTI_SUCCESS;
}

#endif  // GPROF_STANDIN_PERSONALITY >= 126
