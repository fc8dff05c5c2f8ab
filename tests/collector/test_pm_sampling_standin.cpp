// The CUPTI stand-in's PM sampling against what the H200 gave (issue 37; the facts: docs/validation.md "PM sampling
// on the H200", the model: cupti_standin/pm_sampling.cpp). Driven the way gpu-check's probe drove the real CUPTI:
// host configuration for GH100, Enable, SetConfig, Start, decode while sampling, Stop, decode, Disable.
#include <catch2/catch.hpp>

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

template <class T>
T params() {
    T p{};
    p.structSize = sizeof(T);
    return p;
}

// The stand-in library's functions, by name (dlopen: the test links no CUPTI).
struct Api {
    void* lib = dlopen(GPROF_TEST_CUPTI_STANDIN, RTLD_NOW | RTLD_LOCAL);
    template <class Fn>
    Fn get(const char* name) const {
        return reinterpret_cast<Fn>(lib ? dlsym(lib, name) : nullptr);
    }
#define API(name) decltype(&::name) name = get<decltype(&::name)>(#name)
    API(cuptiGetTimestamp);
    API(cuptiDeviceGetChipName);
    API(cuptiPmSamplingGetCounterAvailability);
    API(cuptiProfilerHostInitialize);
    API(cuptiProfilerHostDeinitialize);
    API(cuptiProfilerHostConfigAddMetrics);
    API(cuptiProfilerHostGetConfigImageSize);
    API(cuptiProfilerHostGetConfigImage);
    API(cuptiProfilerHostGetNumOfPasses);
    API(cuptiProfilerHostEvaluateToGpuValues);
    API(cuptiPmSamplingEnable);
    API(cuptiPmSamplingDisable);
    API(cuptiPmSamplingSetConfig);
    API(cuptiPmSamplingGetCounterDataSize);
    API(cuptiPmSamplingCounterDataImageInitialize);
    API(cuptiPmSamplingStart);
    API(cuptiPmSamplingStop);
    API(cuptiPmSamplingDecodeData);
    API(cuptiPmSamplingGetCounterDataInfo);
    API(cuptiPmSamplingCounterDataGetSampleInfo);
#undef API
    void (*pm_set)(const char*, double) = get<void (*)(const char*, double)>("gprof_test_standin_pm_set");

    uint64_t now() const {
        uint64_t t = 0;
        cuptiGetTimestamp(&t);
        return t;
    }
};

const Api& api() {
    static Api a;
    return a;
}

const char* const kSm = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
const char* const kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
// The eight the probe configured on the H200, in its order.
const std::vector<const char*> kProbeMetrics = {
    "gr__cycles_active.sum", "gr__cycles_elapsed.max", kSm,
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", kDram,
    "sm__warps_active.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "dram__bytes_write.sum"};

struct Host {
    CUpti_Profiler_Host_Object* object = nullptr;
    std::vector<uint8_t> config;
    size_t passes = 0;
    CUptiResult added = CUPTI_ERROR_UNKNOWN;

    explicit Host(const std::vector<const char*>& metrics, const char* chip = "GH100") {
        const Api& a = api();
        auto ip = params<CUpti_Profiler_Host_Initialize_Params>();
        ip.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
        ip.pChipName = chip;
        if (a.cuptiProfilerHostInitialize(&ip) != CUPTI_SUCCESS) return;
        object = ip.pHostObject;
        auto mp = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>();
        mp.pHostObject = object;
        std::vector<const char*> names = metrics;
        mp.ppMetricNames = names.data();
        mp.numMetrics = names.size();
        added = a.cuptiProfilerHostConfigAddMetrics(&mp);
        if (added != CUPTI_SUCCESS) return;
        auto sp = params<CUpti_Profiler_Host_GetConfigImageSize_Params>();
        sp.pHostObject = object;
        a.cuptiProfilerHostGetConfigImageSize(&sp);
        config.assign(sp.configImageSize, 0);
        auto gp = params<CUpti_Profiler_Host_GetConfigImage_Params>();
        gp.pHostObject = object;
        gp.configImageSize = config.size();
        gp.pConfigImage = config.data();
        a.cuptiProfilerHostGetConfigImage(&gp);
        auto pp = params<CUpti_Profiler_Host_GetNumOfPasses_Params>();
        pp.configImageSize = config.size();
        pp.pConfigImage = config.data();
        a.cuptiProfilerHostGetNumOfPasses(&pp);
        passes = pp.numOfPasses;
    }
    ~Host() {
        auto dp = params<CUpti_Profiler_Host_Deinitialize_Params>();
        dp.pHostObject = object;
        if (object) api().cuptiProfilerHostDeinitialize(&dp);
    }
};

struct Decoded {
    uint64_t start, end;
    std::vector<double> values;
};

struct Sampler {
    CUpti_PmSampling_Object* object = nullptr;
    std::vector<uint8_t> image;
    CUptiResult enabled = CUPTI_ERROR_UNKNOWN, configured = CUPTI_ERROR_UNKNOWN;
    uint64_t enable_time = 0;

    Sampler(Host& host, uint64_t interval_ns, size_t hw_bytes, uint32_t max_samples) {
        const Api& a = api();
        auto ep = params<CUpti_PmSampling_Enable_Params>();
        enable_time = a.now();
        enabled = a.cuptiPmSamplingEnable(&ep);
        if (enabled != CUPTI_SUCCESS) return;
        object = ep.pPmSamplingObject;
        auto sp = params<CUpti_PmSampling_SetConfig_Params>();
        sp.pPmSamplingObject = object;
        sp.configSize = host.config.size();
        sp.pConfig = host.config.data();
        sp.hardwareBufferSize = hw_bytes;
        sp.samplingInterval = interval_ns;
        sp.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
        configured = a.cuptiPmSamplingSetConfig(&sp);
        if (configured != CUPTI_SUCCESS) return;
        auto dp = params<CUpti_PmSampling_GetCounterDataSize_Params>();
        dp.pPmSamplingObject = object;
        std::vector<const char*> names = kProbeMetrics;
        dp.pMetricNames = names.data();
        dp.numMetrics = names.size();
        dp.maxSamples = max_samples;
        REQUIRE(a.cuptiPmSamplingGetCounterDataSize(&dp) == CUPTI_SUCCESS);
        image.assign(dp.counterDataSize, 0);
        reset();
    }
    ~Sampler() {
        auto dp = params<CUpti_PmSampling_Disable_Params>();
        dp.pPmSamplingObject = object;
        if (object) api().cuptiPmSamplingDisable(&dp);
    }
    void reset() {
        auto ip = params<CUpti_PmSampling_CounterDataImage_Initialize_Params>();
        ip.pPmSamplingObject = object;
        ip.counterDataSize = image.size();
        ip.pCounterData = image.data();
        REQUIRE(api().cuptiPmSamplingCounterDataImageInitialize(&ip) == CUPTI_SUCCESS);
    }
    CUptiResult start() {
        auto p = params<CUpti_PmSampling_Start_Params>();
        p.pPmSamplingObject = object;
        return api().cuptiPmSamplingStart(&p);
    }
    CUptiResult stop() {
        auto p = params<CUpti_PmSampling_Stop_Params>();
        p.pPmSamplingObject = object;
        return api().cuptiPmSamplingStop(&p);
    }
    // One decode into the image, then every sample in it evaluated through `host`; the image re-initialised.
    CUpti_PmSampling_DecodeData_Params decode(Host& host, std::vector<Decoded>& out, CUptiResult* rc = nullptr) {
        const Api& a = api();
        auto dp = params<CUpti_PmSampling_DecodeData_Params>();
        dp.pPmSamplingObject = object;
        dp.pCounterDataImage = image.data();
        dp.counterDataImageSize = image.size();
        CUptiResult r = a.cuptiPmSamplingDecodeData(&dp);
        if (rc) *rc = r;
        auto ip = params<CUpti_PmSampling_GetCounterDataInfo_Params>();
        ip.pCounterDataImage = image.data();
        ip.counterDataImageSize = image.size();
        REQUIRE(a.cuptiPmSamplingGetCounterDataInfo(&ip) == CUPTI_SUCCESS);
        CHECK(ip.numPopulatedSamples == ip.numCompletedSamples);
        for (size_t i = 0; i < ip.numCompletedSamples; ++i) {
            auto sp = params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>();
            sp.pPmSamplingObject = object;
            sp.pCounterDataImage = image.data();
            sp.counterDataImageSize = image.size();
            sp.sampleIndex = i;
            REQUIRE(a.cuptiPmSamplingCounterDataGetSampleInfo(&sp) == CUPTI_SUCCESS);
            std::vector<const char*> names = kProbeMetrics;
            std::vector<double> values(names.size());
            auto ep = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>();
            ep.pHostObject = host.object;
            ep.pCounterDataImage = image.data();
            ep.counterDataImageSize = image.size();
            ep.rangeIndex = i;
            ep.ppMetricNames = names.data();
            ep.numMetrics = names.size();
            ep.pMetricValues = values.data();
            REQUIRE(a.cuptiProfilerHostEvaluateToGpuValues(&ep) == CUPTI_SUCCESS);
            out.push_back({sp.startTimestamp, sp.endTimestamp, values});
        }
        reset();
        return dp;
    }
};

void busy_for_ms(int ms) { usleep(static_cast<useconds_t>(ms) * 1000); }

}  // namespace

TEST_CASE("pm sampling stand-in: the H200's host half for GH100") {
    const Api& a = api();
    REQUIRE(a.lib);
    REQUIRE(a.pm_set);
    auto cp = params<CUpti_Device_GetChipName_Params>();
    REQUIRE(a.cuptiDeviceGetChipName(&cp) == CUPTI_SUCCESS);
    CHECK(std::string(cp.pChipName) == "GH100");
    auto ap = params<CUpti_PmSampling_GetCounterAvailability_Params>();
    REQUIRE(a.cuptiPmSamplingGetCounterAvailability(&ap) == CUPTI_SUCCESS);
    CHECK(ap.counterAvailabilityImageSize == 9184);
    Host eight(kProbeMetrics);
    CHECK(eight.passes == 1);
    std::vector<const char*> twelve = kProbeMetrics;
    for (const char* m : {"sm__inst_executed_realtime.sum", "gpu__time_duration.sum", "pcie__read_bytes.sum",
                          "pcie__write_bytes.sum"})
        twelve.push_back(m);
    Host all(twelve);
    CHECK(all.passes == 2);
    // As the real GH100 host library: any 11 but the pair warps active + instructions executed fit in one pass.
    std::vector<const char*> eleven = twelve;
    eleven.erase(eleven.begin() + 8);  // sm__inst_executed_realtime.sum
    CHECK(Host(eleven).passes == 1);
    CHECK(Host({"sm__warps_active.avg.pct_of_peak_sustained_elapsed", "sm__inst_executed_realtime.sum"}).passes == 2);
    Host unknown({"no__such_metric.sum"});
    CHECK(unknown.added == CUPTI_ERROR_INVALID_METRIC_NAME);
    {
        // The counter-data image the H200 needed for these eight metrics and 20 000 samples.
        Sampler s(eight, 100000, 256u << 20, 20000);
        REQUIRE(s.enabled == CUPTI_SUCCESS);
        CHECK(s.image.size() == 431222564u);
        // One sampler a device (cupti_pmsampling.h).
        Sampler again(eight, 100000, 256u << 20, 10);
        CHECK(again.enabled == CUPTI_ERROR_INVALID_OPERATION);
    }
    // A configuration needing two passes is refused (cupti_pmsampling.h).
    Sampler two(all, 100000, 256u << 20, 10);
    CHECK(two.enabled == CUPTI_SUCCESS);
    CHECK(two.configured == CUPTI_ERROR_NOT_SUPPORTED);
}

TEST_CASE("pm sampling stand-in: samples tile Start..Stop on cuptiGetTimestamp's clock, the first from before Start") {
    const Api& a = api();
    REQUIRE(a.lib);
    Host host(kProbeMetrics);
    Sampler s(host, 100000, 256u << 20, 20000);
    REQUIRE(s.configured == CUPTI_SUCCESS);
    busy_for_ms(5);  // between Enable and Start, as the probe's set-up was
    uint64_t before_start = a.now();
    REQUIRE(s.start() == CUPTI_SUCCESS);
    uint64_t after_start = a.now();
    busy_for_ms(10);
    // A value holds from the sample that ends after it was set: marks taken around each set.
    uint64_t busy_from[2] = {a.now(), 0};
    a.pm_set(kSm, 99.8);
    busy_from[1] = a.now();
    busy_for_ms(20);
    uint64_t busy_to[2] = {a.now(), 0};
    a.pm_set(kSm, 0.0);
    busy_to[1] = a.now();
    std::vector<Decoded> got;
    auto d1 = s.decode(host, got);
    CHECK(d1.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_OTHER);  // while sampling runs
    CHECK(d1.overflow == 0);
    size_t first_decode = got.size();
    busy_for_ms(10);  // sampling goes on between decodes
    REQUIRE(s.stop() == CUPTI_SUCCESS);
    uint64_t after_stop = a.now();
    auto d2 = s.decode(host, got);
    CHECK(d2.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS);
    REQUIRE(first_decode >= 300);
    REQUIRE(got.size() > first_decode);

    // The first sample: begins before Start (at Enable here), ends one interval after it.
    CHECK(got[0].start < before_start);
    CHECK(got[0].start >= s.enable_time);
    CHECK(got[0].end >= after_start);
    CHECK(got[0].end <= after_start + 100000 + 32);
    // The rest: one interval each (the 32 ns step), no gap, ending by Stop.
    size_t odd = 0, gaps = 0;
    for (size_t i = 1; i < got.size(); ++i) {
        uint64_t len = got[i].end - got[i].start;
        odd += len < 100000 - 32 || len > 100000 + 32;
        gaps += got[i].start != got[i - 1].end;
    }
    CHECK(odd == 0);
    CHECK(gaps == 0);
    CHECK(got.back().end <= after_stop);
    // Values as they were when each sample was taken: the busy samples' edges at the marks, within an interval (the
    // sample holding a mark takes the new value).
    uint64_t first_busy = 0, last_busy = 0;
    for (const Decoded& d : got)
        if (d.values[2] > 50) {
            if (!first_busy) first_busy = d.start;
            last_busy = d.end;
        }
    REQUIRE(first_busy);
    CHECK(first_busy + 100000 + 32 >= busy_from[0]);
    CHECK(first_busy <= busy_from[1]);
    CHECK(last_busy + 100000 + 32 >= busy_to[0]);
    CHECK(last_busy <= busy_to[1]);
}

TEST_CASE("pm sampling stand-in: a full image, an overflowing hardware buffer") {
    const Api& a = api();
    REQUIRE(a.lib);
    Host host(kProbeMetrics);
    {
        Sampler s(host, 100000, 256u << 20, 10);  // an image of 10 samples
        REQUIRE(s.start() == CUPTI_SUCCESS);
        busy_for_ms(5);
        std::vector<Decoded> got;
        auto d = s.decode(host, got);
        CHECK(d.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL);
        CHECK(got.size() == 10);
        REQUIRE(s.stop() == CUPTI_SUCCESS);
        for (int i = 0; i < 1000 && d.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS; ++i)
            d = s.decode(host, got);
        CHECK(d.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS);
        CHECK(got.size() >= 50);
    }
    {
        Sampler s(host, 100000, 16 * 16384, 20000);  // room for 16 samples in the hardware buffer (KEEP_OLDEST)
        REQUIRE(s.start() == CUPTI_SUCCESS);
        busy_for_ms(5);
        std::vector<Decoded> got;
        CUptiResult rc = CUPTI_SUCCESS;
        auto d = s.decode(host, got, &rc);
        CHECK(d.overflow == 1);
        CHECK(rc == CUPTI_ERROR_OUT_OF_MEMORY);
        CHECK(got.size() == 16);
        REQUIRE(s.stop() == CUPTI_SUCCESS);
    }
}

TEST_CASE("pm sampling stand-in: scripted refusals at Enable") {
    const Api& a = api();
    REQUIRE(a.lib);
    Host host(kProbeMetrics);
    const std::pair<const char*, CUptiResult> cases[] = {
        {"pm-insufficient-privileges", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES},
        {"pm-hardware-busy", CUPTI_ERROR_HARDWARE_BUSY},
        {"pm-mig", CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED},
    };
    for (const auto& [script, expected] : cases) {
        setenv("GPROF_TEST_STANDIN_SCRIPT", script, 1);
        Sampler s(host, 100000, 256u << 20, 10);
        CHECK(s.enabled == expected);
    }
    unsetenv("GPROF_TEST_STANDIN_SCRIPT");
    Sampler s(host, 100000, 256u << 20, 10);
    CHECK(s.enabled == CUPTI_SUCCESS);
    Host other(kProbeMetrics, "GA100");
    CHECK(other.object == nullptr);  // the stand-in knows GH100 only
}
