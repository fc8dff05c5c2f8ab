#include "metrics/config_image.h"

namespace gprof::collector::metrics {
namespace {

template <class P>
P params(size_t struct_size) {
    P p{};
    p.structSize = struct_size;
    return p;
}
#define GPROF_HOST_PARAMS(Type) params<Type>(Type##_STRUCT_SIZE)

// A host object for `chip` holding `metrics`, and its image and pass count. Owns the object for its lifetime.
class Attempt {
public:
    Attempt(const ProfilerHostApi& host, const std::string& chip, const uint8_t* availability) : host_(host) {
        auto ip = GPROF_HOST_PARAMS(CUpti_Profiler_Host_Initialize_Params);
        ip.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
        ip.pChipName = chip.c_str();
        ip.pCounterAvailabilityImage = availability;
        init_result_ = host_.Initialize(&ip);
        if (init_result_ == CUPTI_SUCCESS) object_ = ip.pHostObject;
    }
    ~Attempt() { free_host_object(host_, object_); }
    Attempt(const Attempt&) = delete;
    Attempt& operator=(const Attempt&) = delete;

    CUptiResult init_result() const { return init_result_; }
    // Hands the object over to the caller (it is then not freed here).
    CUpti_Profiler_Host_Object* release() {
        CUpti_Profiler_Host_Object* o = object_;
        object_ = nullptr;
        return o;
    }

    // Adds `names` to the object (a fresh object per attempt: the host API cannot remove a metric). Not const: the
    // params take char** (the API does not write through it).
    CUptiResult add(std::vector<const char*>& names) {
        auto ap = GPROF_HOST_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
        ap.pHostObject = object_;
        ap.ppMetricNames = names.data();
        ap.numMetrics = names.size();
        return host_.ConfigAddMetrics(&ap);
    }
    // The image of what was added, and its number of passes.
    CUptiResult image(std::vector<uint8_t>& out, size_t& passes) {
        auto sp = GPROF_HOST_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
        sp.pHostObject = object_;
        if (CUptiResult r = host_.GetConfigImageSize(&sp); r != CUPTI_SUCCESS) return r;
        out.assign(sp.configImageSize, 0);
        auto gp = GPROF_HOST_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
        gp.pHostObject = object_;
        gp.configImageSize = out.size();
        gp.pConfigImage = out.data();
        if (CUptiResult r = host_.GetConfigImage(&gp); r != CUPTI_SUCCESS) return r;
        auto np = GPROF_HOST_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
        np.configImageSize = out.size();
        np.pConfigImage = out.data();
        if (CUptiResult r = host_.GetNumOfPasses(&np); r != CUPTI_SUCCESS) return r;
        passes = np.numOfPasses;
        return CUPTI_SUCCESS;
    }

private:
    const ProfilerHostApi& host_;
    CUpti_Profiler_Host_Object* object_ = nullptr;
    CUptiResult init_result_ = CUPTI_SUCCESS;
};

std::string name_of(const ProfilerHostApi& host, CUptiResult r) { return cupti::result_name(host.cupti, r); }

}  // namespace

bool resolve_profiler_host(const cupti::CuptiApi& cupti, ProfilerHostApi& host, std::string& missing) {
    host = ProfilerHostApi{};
    host.cupti = &cupti;
    cupti::OptionalSymbols get(cupti);
    get(host.Initialize, "cuptiProfilerHostInitialize");
    get(host.Deinitialize, "cuptiProfilerHostDeinitialize");
    get(host.ConfigAddMetrics, "cuptiProfilerHostConfigAddMetrics");
    get(host.GetConfigImageSize, "cuptiProfilerHostGetConfigImageSize");
    get(host.GetConfigImage, "cuptiProfilerHostGetConfigImage");
    get(host.GetNumOfPasses, "cuptiProfilerHostGetNumOfPasses");
    get(host.EvaluateToGpuValues, "cuptiProfilerHostEvaluateToGpuValues");
    if (get.all_found()) return true;
    missing = get.first_missing;
    host = ProfilerHostApi{};
    host.cupti = &cupti;
    return false;
}

MetricConfig build_metric_config(const ProfilerHostApi& host, const std::string& chip, const MetricSet& set,
                                 const uint8_t* counter_availability) {
    MetricConfig config;
    if (!host.Initialize) {
        config.error = "this CUPTI has no profiler host API (cuptiProfilerHost*, CUDA 12.6 and later)";
        return config;
    }
    {
        Attempt probe(host, chip, counter_availability);
        if (probe.init_result() != CUPTI_SUCCESS) {
            config.error = "the profiler host API does not know chip " + chip + " (" +
                           name_of(host, probe.init_result()) + ")";
            return config;
        }
    }
    // Greedy, most wanted first: a metric stays when the set so far plus it still takes one pass. The host API
    // adds no metric to an object once one failed, so each try is a fresh object (about a millisecond each).
    std::vector<const char*> kept;
    for (const char* metric : set.metrics) {
        std::vector<const char*> trial = kept;
        trial.push_back(metric);
        Attempt attempt(host, chip, counter_availability);
        std::vector<uint8_t> image;
        size_t passes = 0;
        CUptiResult r = attempt.add(trial);
        if (r != CUPTI_SUCCESS) {
            config.dropped.push_back({metric, "not on " + chip + " (" + name_of(host, r) + ")"});
            continue;
        }
        r = attempt.image(image, passes);
        if (r != CUPTI_SUCCESS) {
            config.dropped.push_back({metric, "refused (" + name_of(host, r) + ")"});
            continue;
        }
        if (passes != 1) {
            config.dropped.push_back({metric, "needs a second pass"});
            continue;
        }
        kept = std::move(trial);
        config.image = std::move(image);
    }
    for (const char* m : kept) config.metrics.emplace_back(m);
    if (kept.empty()) {
        config.image.clear();
        config.error = "no metric of set " + std::string(set.name) + " can be sampled on " + chip;
    }
    return config;
}

CUpti_Profiler_Host_Object* make_host_object(const ProfilerHostApi& host, const std::string& chip,
                                             const uint8_t* counter_availability,
                                             const std::vector<std::string>& metrics, CUptiResult& result) {
    Attempt attempt(host, chip, counter_availability);
    result = attempt.init_result();
    if (result != CUPTI_SUCCESS) return nullptr;
    std::vector<const char*> names;
    for (const std::string& m : metrics) names.push_back(m.c_str());
    result = attempt.add(names);
    return result == CUPTI_SUCCESS ? attempt.release() : nullptr;
}

void free_host_object(const ProfilerHostApi& host, CUpti_Profiler_Host_Object* object) {
    if (!object || !host.Deinitialize) return;
    auto dp = GPROF_HOST_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    dp.pHostObject = object;
    host.Deinitialize(&dp);
}

std::string describe_dropped(const MetricConfig& config, const MetricSet& set, const std::string& chip) {
    if (config.dropped.empty()) return {};
    std::string line = "kept " + std::to_string(config.metrics.size()) + " of " + std::to_string(set.metrics.size()) +
                       " metrics of " + std::string(set.name) + " on " + chip + "; left out ";
    for (size_t i = 0; i < config.dropped.size(); ++i) {
        if (i) line += ", ";
        line += config.dropped[i].name + " (" + config.dropped[i].why + ")";
    }
    return line;
}

}  // namespace gprof::collector::metrics
