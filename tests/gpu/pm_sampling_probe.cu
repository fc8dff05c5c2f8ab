// gprof-test-pm-sampling-probe: what CUPTI's PM sampling gives on this GPU, raw, before gprof-run has the feature.
//
// Issue #37 (GPU metrics over time) needs a stand-in of the PM-sampling API built from real data. This probe records
// that data on the GPU machine during a gpu-check lease: it enables PM sampling for a few metrics around an idle
// gap, a tensor-core-bound kernel, an idle gap, a DRAM-bound copy kernel and an idle gap, and prints one JSON
// document with everything CUPTI answered: every call's result code in order, the counter availability image size,
// the metrics accepted (with CUPTI's description and unit), the config and counter data image sizes, each decode's
// stop reason and overflow flag, the counter data info, and every decoded sample (start, end, one value per metric).
// Phase boundaries carry cuptiGetTimestamp and CLOCK_MONOTONIC/CLOCK_REALTIME read back to back, so the samples'
// clock can be related to the trace clock later.
//
//   gprof-test-pm-sampling-probe [--out FILE] [--interval-ns N] [--phase-ms N] [--metrics a,b,...]
//   gprof-test-pm-sampling-probe --host-only CHIP [--metrics a,b,...]
//   gprof-test-pm-sampling-probe --phases-only [--out FILE] [--phase-ms N]
//
// --host-only runs the host half alone (metric names, properties, passes for a named chip: no GPU needed), which is
// how the metric list below was chosen for "GH100" (H100 and H200) on a machine without a GPU.
// --phases-only runs the same phases with no sampler of its own and writes only their marks: the program that
// gprof-run's own sampler (--gpu-metrics-devices) is checked against, since a second sampler in one process is refused.
//
// libcupti is dlopen'ed (the one already in the process first, e.g. gprof-run's), so a missing or refused CUPTI is
// a JSON document saying so rather than a loader error. Exit: 0 samples decoded (or --host-only done), 77 no CUDA
// device, 1 a call failed (the JSON says which), 2 usage. Never installed; scripts/gpu-check packs it.
#include <cuda_runtime.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <cupti.h>
#include <dlfcn.h>
#include <mma.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kExitNoDevice = 77;

// First choices for Hopper (GH100), in the order they are kept when not all fit in one pass (PM sampling takes a
// single-pass configuration only; on GH100 the first eight fit in one, all twelve need two: --host-only GH100).
// nsys's GPU metrics show the same quantities: GR active, SM active, tensor active, DRAM bandwidth, warps in flight,
// PCIe traffic.
const char* const kDefaultMetrics[] = {
    "gr__cycles_active.sum",
    "gr__cycles_elapsed.max",
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__inst_executed_realtime.sum",
    "gpu__time_duration.sum",
    "pcie__read_bytes.sum",
    "pcie__write_bytes.sum",
};

// ----- a small JSON writer (the probe is one nvcc translation unit; no JSON library) --------------------------------

class Json {
public:
    Json& open(char c) {
        sep();
        out_ += c;
        first_.push_back(true);
        return *this;
    }
    Json& close(char c) {
        out_ += c;
        first_.pop_back();
        return *this;
    }
    Json& key(const char* k) {
        sep();
        str_raw(k);
        out_ += ':';
        after_key_ = true;
        return *this;
    }
    Json& str(const std::string& s) {
        sep();
        str_raw(s);
        return *this;
    }
    Json& num(double v) {
        sep();
        if (v != v) {
            out_ += "null";  // NaN: CUPTI's "no value"
        } else {
            char b[40];
            std::snprintf(b, sizeof b, "%.17g", v);
            out_ += b;
        }
        return *this;
    }
    Json& u64(uint64_t v) {
        sep();
        out_ += std::to_string(v);
        return *this;
    }
    Json& i64(int64_t v) {
        sep();
        out_ += std::to_string(v);
        return *this;
    }
    Json& boolean(bool v) {
        sep();
        out_ += v ? "true" : "false";
        return *this;
    }
    Json& null() {
        sep();
        out_ += "null";
        return *this;
    }
    // A value written by another Json (an array built apart, e.g. while the device ran).
    Json& raw(const std::string& json_text) {
        sep();
        out_ += json_text;
        return *this;
    }
    const std::string& text() const { return out_; }

private:
    void sep() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_.empty()) {
            if (!first_.back()) out_ += ',';
            first_.back() = false;
        }
    }
    void str_raw(const std::string& s) {
        out_ += '"';
        for (unsigned char c : s) {
            if (c == '"' || c == '\\') {
                out_ += '\\';
                out_ += static_cast<char>(c);
            } else if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                out_ += b;
            } else {
                out_ += static_cast<char>(c);
            }
        }
        out_ += '"';
    }
    std::string out_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

// ----- libcupti, dlopen'ed --------------------------------------------------------------------------------------

#define PROBE_CUPTI_FUNCTIONS(X)                  \
    X(cuptiGetVersion)                            \
    X(cuptiGetResultString)                       \
    X(cuptiGetTimestamp)                          \
    X(cuptiProfilerInitialize)                    \
    X(cuptiDeviceGetChipName)                     \
    X(cuptiPmSamplingGetCounterAvailability)      \
    X(cuptiPmSamplingEnable)                      \
    X(cuptiPmSamplingSetConfig)                   \
    X(cuptiPmSamplingGetCounterDataSize)          \
    X(cuptiPmSamplingCounterDataImageInitialize)  \
    X(cuptiPmSamplingStart)                       \
    X(cuptiPmSamplingStop)                        \
    X(cuptiPmSamplingDecodeData)                  \
    X(cuptiPmSamplingGetCounterDataInfo)          \
    X(cuptiPmSamplingCounterDataGetSampleInfo)    \
    X(cuptiPmSamplingDisable)                     \
    X(cuptiProfilerHostInitialize)                \
    X(cuptiProfilerHostDeinitialize)              \
    X(cuptiProfilerHostGetMetricProperties)       \
    X(cuptiProfilerHostConfigAddMetrics)          \
    X(cuptiProfilerHostGetConfigImageSize)        \
    X(cuptiProfilerHostGetConfigImage)            \
    X(cuptiProfilerHostGetNumOfPasses)            \
    X(cuptiProfilerHostEvaluateToGpuValues)

struct Cupti {
#define PROBE_DECLARE(name) decltype(&::name) name = nullptr;
    PROBE_CUPTI_FUNCTIONS(PROBE_DECLARE)
#undef PROBE_DECLARE
    std::string path;
    std::string missing;  // functions the loaded library lacks
};

bool load_cupti(Cupti& api, std::string& error) {
    void* lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);  // the process's own (gprof-run's) first
    const char* env = std::getenv("GPROF_CUPTI_LIB");
    const char* candidates[] = {env, "/usr/local/cuda/lib64/libcupti.so.13",
                                "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13", "libcupti.so.13"};
    for (const char* c : candidates) {
        if (lib) break;
        if (c && *c) lib = dlopen(c, RTLD_NOW | RTLD_GLOBAL);
    }
    if (!lib) {
        const char* e = dlerror();
        error = std::string("libcupti.so.13 not found: ") + (e ? e : "?");
        return false;
    }
#define PROBE_RESOLVE(name)                                                           \
    api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));                \
    if (!api.name) api.missing += std::string(api.missing.empty() ? "" : ",") + #name;
    PROBE_CUPTI_FUNCTIONS(PROBE_RESOLVE)
#undef PROBE_RESOLVE
    Dl_info info{};
    if (api.cuptiGetVersion && dladdr(reinterpret_cast<void*>(api.cuptiGetVersion), &info) && info.dli_fname)
        api.path = info.dli_fname;
    if (!api.missing.empty()) {
        error = "the loaded libcupti lacks " + api.missing;
        return false;
    }
    return true;
}

// A CUPTI parameter struct, zeroed, with its size set (the headers' STRUCT_SIZE: the fields this build knows).
template <class P>
P params(size_t struct_size) {
    P p{};
    p.structSize = struct_size;
    return p;
}
#define PROBE_PARAMS(Type) params<Type>(Type##_STRUCT_SIZE)

// ----- the record of every call ---------------------------------------------------------------------------------

struct Probe {
    Cupti api;
    Json calls;  // [{"call", "result", "name"}...]
    std::string first_error;

    Probe() { calls.open('['); }

    bool ok(const char* call, CUptiResult rc) {
        const char* name = nullptr;
        if (api.cuptiGetResultString) api.cuptiGetResultString(rc, &name);
        calls.open('{').key("call").str(call).key("result").i64(rc).key("name").str(name ? name : "?").close('}');
        if (rc != CUPTI_SUCCESS && first_error.empty())
            first_error = std::string(call) + " returned " + (name ? name : std::to_string(rc));
        return rc == CUPTI_SUCCESS;
    }
};

uint64_t clock_ns(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// ----- kernels ----------------------------------------------------------------------------------------------------

// Tensor-core bound: every warp chains 16x16x16 half-precision MMAs into a float accumulator.
__global__ void pm_tensor_kernel(float* out, int iterations) {
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(a, __float2half(0.001f));
    wmma::fill_fragment(b, __float2half(0.002f));
    wmma::fill_fragment(c, 0.0f);
    for (int i = 0; i < iterations; ++i) wmma::mma_sync(c, a, b, c);
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::store_matrix_sync(out + static_cast<size_t>(warp) * 256, c, 16, wmma::mem_row_major);
}

// DRAM bound: a grid-stride copy of a buffer far larger than L2.
__global__ void pm_copy_kernel(const float4* src, float4* dst, size_t n) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        dst[i] = src[i];
}

struct Options {
    std::vector<std::string> metrics;
    uint64_t interval_ns = 100000;  // 10 kHz, nsys's default GPU-metrics rate
    int phase_ms = 200;
    int idle_ms = 50;
    uint32_t max_samples = 20000;
    size_t hw_buffer_bytes = 256u << 20;
    std::string out;
    std::string host_only_chip;
    bool phases_only = false;
};

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        const char* v = nullptr;
        if (a == "--out" && (v = value())) o.out = v;
        else if (a == "--interval-ns" && (v = value())) o.interval_ns = std::strtoull(v, nullptr, 10);
        else if (a == "--phase-ms" && (v = value())) o.phase_ms = std::atoi(v);
        else if (a == "--host-only" && (v = value())) o.host_only_chip = v;
        else if (a == "--phases-only") o.phases_only = true;
        else if (a == "--metrics" && (v = value())) {
            o.metrics.clear();
            std::string s = v;
            for (size_t p = 0; p <= s.size();) {
                size_t c = s.find(',', p);
                if (c == std::string::npos) c = s.size();
                if (c > p) o.metrics.push_back(s.substr(p, c - p));
                p = c + 1;
            }
        } else {
            std::fprintf(stderr,
                         "usage: gprof-test-pm-sampling-probe [--out FILE] [--interval-ns N] [--phase-ms N] "
                         "[--metrics a,b,...] | --host-only CHIP [--metrics a,b,...] | --phases-only [--out FILE] "
                         "[--phase-ms N]\n");
            return false;
        }
    }
    if (o.metrics.empty()) o.metrics.assign(std::begin(kDefaultMetrics), std::end(kDefaultMetrics));
    if (o.interval_ns == 0 || o.phase_ms <= 0) return false;
    return true;
}

// ----- host half: which metrics, one pass ----------------------------------------------------------------------

struct HostConfig {
    CUpti_Profiler_Host_Object* host = nullptr;  // initialised with the metrics kept
    std::vector<std::string> kept;
    std::vector<uint8_t> config_image;
    size_t passes = 0;
};

CUpti_Profiler_Host_Object* host_init(Probe& p, const std::string& chip, const uint8_t* availability) {
    auto ip = PROBE_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    ip.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    ip.pChipName = chip.c_str();
    ip.pCounterAvailabilityImage = availability;
    if (!p.ok("cuptiProfilerHostInitialize", p.api.cuptiProfilerHostInitialize(&ip))) return nullptr;
    return ip.pHostObject;
}

void host_deinit(Probe& p, CUpti_Profiler_Host_Object* h) {
    if (!h) return;
    auto dp = PROBE_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    dp.pHostObject = h;
    p.ok("cuptiProfilerHostDeinitialize", p.api.cuptiProfilerHostDeinitialize(&dp));
}

// Config image and number of passes of `metrics` on a fresh host object; false when a call fails.
bool config_for(Probe& p, const std::string& chip, const uint8_t* availability, const std::vector<std::string>& metrics,
                HostConfig& cfg) {
    cfg.host = host_init(p, chip, availability);
    if (!cfg.host) return false;
    std::vector<const char*> names;
    for (const auto& m : metrics) names.push_back(m.c_str());
    auto ap = PROBE_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    ap.pHostObject = cfg.host;
    ap.ppMetricNames = names.data();
    ap.numMetrics = names.size();
    if (!p.ok("cuptiProfilerHostConfigAddMetrics", p.api.cuptiProfilerHostConfigAddMetrics(&ap))) return false;
    auto sp = PROBE_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    sp.pHostObject = cfg.host;
    if (!p.ok("cuptiProfilerHostGetConfigImageSize", p.api.cuptiProfilerHostGetConfigImageSize(&sp))) return false;
    cfg.config_image.assign(sp.configImageSize, 0);
    auto gp = PROBE_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    gp.pHostObject = cfg.host;
    gp.configImageSize = cfg.config_image.size();
    gp.pConfigImage = cfg.config_image.data();
    if (!p.ok("cuptiProfilerHostGetConfigImage", p.api.cuptiProfilerHostGetConfigImage(&gp))) return false;
    auto np = PROBE_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    np.configImageSize = cfg.config_image.size();
    np.pConfigImage = cfg.config_image.data();
    if (!p.ok("cuptiProfilerHostGetNumOfPasses", p.api.cuptiProfilerHostGetNumOfPasses(&np))) return false;
    cfg.passes = np.numOfPasses;
    cfg.kept = metrics;
    return true;
}

// Each requested metric alone (accepted? description, unit), then the longest prefix of the accepted ones that fits
// in one pass. Writes "metrics", "metrics_used", "config_image_bytes", "passes" into `doc`.
bool choose_metrics(Probe& p, const std::string& chip, const uint8_t* availability, const Options& o, Json& doc,
                    HostConfig& cfg) {
    std::vector<std::string> accepted;
    doc.key("metrics").open('[');
    CUpti_Profiler_Host_Object* props = host_init(p, chip, availability);
    for (const auto& m : o.metrics) {
        HostConfig one;
        bool ok = config_for(p, chip, availability, {m}, one);
        doc.open('{').key("name").str(m).key("accepted").boolean(ok);
        if (ok) doc.key("passes_alone").u64(one.passes);
        host_deinit(p, one.host);
        if (props) {
            auto mp = PROBE_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
            mp.pHostObject = props;
            mp.pMetricName = m.c_str();
            if (p.ok("cuptiProfilerHostGetMetricProperties", p.api.cuptiProfilerHostGetMetricProperties(&mp))) {
                doc.key("description").str(mp.pDescription ? mp.pDescription : "");
                doc.key("hw_unit").str(mp.pHwUnit ? mp.pHwUnit : "");
                doc.key("dim_unit").str(mp.pDimUnit ? mp.pDimUnit : "");
                doc.key("metric_type").i64(mp.metricType);
            }
        }
        doc.close('}');
        if (ok && one.passes == 1) accepted.push_back(m);
    }
    doc.close(']');
    host_deinit(p, props);
    // The longest prefix that still takes one pass.
    for (size_t n = accepted.size(); n > 0; --n) {
        std::vector<std::string> prefix(accepted.begin(), accepted.begin() + static_cast<long>(n));
        HostConfig c;
        if (config_for(p, chip, availability, prefix, c) && c.passes == 1) {
            cfg = std::move(c);
            break;
        }
        host_deinit(p, c.host);
    }
    doc.key("metrics_used").open('[');
    for (const auto& m : cfg.kept) doc.str(m);
    doc.close(']');
    doc.key("config_image_bytes").u64(cfg.config_image.size());
    doc.key("passes").u64(cfg.passes);
    return !cfg.kept.empty();
}

// ----- device half ----------------------------------------------------------------------------------------------

struct Sampler {
    Probe& p;
    CUpti_PmSampling_Object* object = nullptr;
    CUpti_Profiler_Host_Object* host = nullptr;
    std::vector<std::string> metrics;
    std::vector<uint8_t> counter_data;
    Json decodes;  // one entry per cuptiPmSamplingDecodeData
    Json rows;     // [start, end, value...] per sample
    uint64_t samples = 0;
    uint64_t evaluate_failures = 0;
    bool overflow = false;

    explicit Sampler(Probe& probe) : p(probe) {
        decodes.open('[');
        rows.open('[');
    }

    bool reset_image() {
        auto ip = PROBE_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
        ip.pPmSamplingObject = object;
        ip.counterDataSize = counter_data.size();
        ip.pCounterData = counter_data.data();
        return p.ok("cuptiPmSamplingCounterDataImageInitialize", p.api.cuptiPmSamplingCounterDataImageInitialize(&ip));
    }

    // Decodes what the hardware buffer holds, evaluates every completed sample, resets the image; repeats while the
    // image filled up before the buffer was drained.
    void drain(const char* when) {
        // Microseconds on the host for decoding, evaluating and re-initialising the image: the H200 run's drains took
        // about 130 ms plus 47 us a sample (8 metrics, a 20 000-sample image), which a collector must size against.
        auto us_since = [](std::chrono::steady_clock::time_point t0) {
            return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        };
        for (int round = 0; round < 1000; ++round) {
            auto dp = PROBE_PARAMS(CUpti_PmSampling_DecodeData_Params);
            dp.pPmSamplingObject = object;
            dp.pCounterDataImage = counter_data.data();
            dp.counterDataImageSize = counter_data.size();
            auto t0 = std::chrono::steady_clock::now();
            CUptiResult rc = p.api.cuptiPmSamplingDecodeData(&dp);
            double decode_us = us_since(t0);
            p.ok("cuptiPmSamplingDecodeData", rc);
            overflow = overflow || dp.overflow;
            auto ip = PROBE_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
            ip.pCounterDataImage = counter_data.data();
            ip.counterDataImageSize = counter_data.size();
            bool info = p.ok("cuptiPmSamplingGetCounterDataInfo", p.api.cuptiPmSamplingGetCounterDataInfo(&ip));
            t0 = std::chrono::steady_clock::now();
            if (info) evaluate(ip.numCompletedSamples);
            double evaluate_us = us_since(t0);
            t0 = std::chrono::steady_clock::now();
            reset_image();
            double reset_us = us_since(t0);
            decodes.open('{').key("when").str(when).key("result").i64(rc).key("stop_reason").i64(dp.decodeStopReason);
            decodes.key("overflow").u64(dp.overflow);
            decodes.key("total_samples").u64(info ? ip.numTotalSamples : 0);
            decodes.key("populated_samples").u64(info ? ip.numPopulatedSamples : 0);
            decodes.key("completed_samples").u64(info ? ip.numCompletedSamples : 0);
            decodes.key("decode_us").num(decode_us).key("evaluate_us").num(evaluate_us).key("reset_us").num(reset_us)
                .close('}');
            if (rc != CUPTI_SUCCESS || dp.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
                break;
        }
    }

    void evaluate(size_t completed) {
        std::vector<const char*> names;
        for (const auto& m : metrics) names.push_back(m.c_str());
        std::vector<double> values(names.size());
        for (size_t i = 0; i < completed; ++i) {
            auto sp = PROBE_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
            sp.pPmSamplingObject = object;
            sp.pCounterDataImage = counter_data.data();
            sp.counterDataImageSize = counter_data.size();
            sp.sampleIndex = i;
            CUptiResult src = p.api.cuptiPmSamplingCounterDataGetSampleInfo(&sp);
            auto ep = PROBE_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
            ep.pHostObject = host;
            ep.pCounterDataImage = counter_data.data();
            ep.counterDataImageSize = counter_data.size();
            ep.rangeIndex = i;
            ep.ppMetricNames = names.data();
            ep.numMetrics = names.size();
            ep.pMetricValues = values.data();
            CUptiResult erc = p.api.cuptiProfilerHostEvaluateToGpuValues(&ep);
            if (src != CUPTI_SUCCESS || erc != CUPTI_SUCCESS) {
                // Said once (the first failure goes into "calls"); counted always.
                if (evaluate_failures++ == 0) {
                    p.ok("cuptiPmSamplingCounterDataGetSampleInfo", src);
                    p.ok("cuptiProfilerHostEvaluateToGpuValues", erc);
                }
                continue;
            }
            rows.open('[').u64(sp.startTimestamp).u64(sp.endTimestamp);
            for (double v : values) rows.num(v);
            rows.close(']');
            ++samples;
        }
    }
};

struct Phase {
    const char* name;
    int launches = 0;
    uint64_t cupti_start = 0, cupti_end = 0, mono_start = 0, mono_end = 0, real_start = 0, real_end = 0;
    double host_ms = 0;
};

// cuptiGetTimestamp now (0 without it): the sampler's calls are marked with it, since the first sample the H200 gave
// began long before cuptiPmSamplingStart (763 ms) and which call it dates from is the stand-in's to model.
uint64_t cupti_now(Probe& p) {
    uint64_t t = 0;
    if (p.api.cuptiGetTimestamp) p.api.cuptiGetTimestamp(&t);
    return t;
}

void mark(Probe& p, uint64_t& cupti, uint64_t& mono, uint64_t& real) {
    mono = clock_ns(CLOCK_MONOTONIC);
    real = clock_ns(CLOCK_REALTIME);
    cupti = cupti_now(p);
}

// Launches `launch` until `ms` have passed on the host (synchronising every few launches); idle without one.
void run_phase(Probe& p, Phase& ph, int ms, const std::function<void()>& launch) {
    mark(p, ph.cupti_start, ph.mono_start, ph.real_start);
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    if (!launch) {
        usleep(static_cast<useconds_t>(ms) * 1000);
    } else {
        while (elapsed() < ms) {
            for (int i = 0; i < 4; ++i, ++ph.launches) launch();
            cudaDeviceSynchronize();
        }
    }
    ph.host_ms = elapsed();
    mark(p, ph.cupti_end, ph.mono_end, ph.real_end);
}

void write_doc(const Options& o, const std::string& text) {
    if (o.out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fputc('\n', stdout);
        return;
    }
    std::string tmp = o.out + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) {
        std::perror(tmp.c_str());
        return;
    }
    std::fwrite(text.data(), 1, text.size(), f);
    std::fputc('\n', f);
    std::fclose(f);
    std::rename(tmp.c_str(), o.out.c_str());
}

// Closes the document with every call made, the first error and the exit code, and writes it.
int finish(const Options& o, Probe& p, Json& doc, int code, const std::string& error) {
    p.calls.close(']');
    std::string err = error.empty() ? p.first_error : error;
    doc.key("calls").raw(p.calls.text()).key("error");
    if (err.empty()) doc.null();
    else doc.str(err);
    doc.key("exit").i64(code).close('}');
    write_doc(o, doc.text());
    if (!err.empty()) std::fprintf(stderr, "gprof-test-pm-sampling-probe: %s\n", err.c_str());
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
    Probe p;
    Json doc;
    doc.open('{').key("probe").str("pm-sampling").key("format").i64(1);
    std::string error;
    if (!load_cupti(p.api, error)) return finish(o, p, doc, 1, error);
    uint32_t version = 0;
    p.api.cuptiGetVersion(&version);
    doc.key("cupti_library").str(p.api.path).key("cupti_api_version").u64(version);

    if (!o.host_only_chip.empty()) {
        doc.key("chip").str(o.host_only_chip).key("host_only").boolean(true);
        HostConfig cfg;
        bool ok = choose_metrics(p, o.host_only_chip, nullptr, o, doc, cfg);
        host_deinit(p, cfg.host);
        return finish(o, p, doc, ok ? 0 : 1, ok ? "" : "no metric could be configured in one pass");
    }

    int devices = 0;
    cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce != cudaSuccess || devices == 0) {
        error = std::string("no CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorString(ce);
        return finish(o, p, doc, kExitNoDevice, error);
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    int driver = 0;
    cudaDriverGetVersion(&driver);
    doc.key("device").open('{').key("name").str(prop.name).key("compute_capability").str(
        std::to_string(prop.major) + "." + std::to_string(prop.minor));
    doc.key("sms").i64(prop.multiProcessorCount).key("memory_bytes").u64(prop.totalGlobalMem).close('}');
    doc.key("driver_version").i64(driver);

    // Buffers and a first launch of each kernel before sampling starts (module load, context warm).
    const size_t copy_floats4 = (512u << 20) / sizeof(float4);  // 512 MiB each way: far beyond the 50-60 MB L2
    float4 *src = nullptr, *dst = nullptr;
    float* tensor_out = nullptr;
    const int blocks = prop.multiProcessorCount * 4, threads = 128;
    if (cudaMalloc(&src, copy_floats4 * sizeof(float4)) != cudaSuccess ||
        cudaMalloc(&dst, copy_floats4 * sizeof(float4)) != cudaSuccess ||
        cudaMalloc(&tensor_out, static_cast<size_t>(blocks) * (threads / 32) * 256 * sizeof(float)) != cudaSuccess)
        return finish(o, p, doc, 1, "cudaMalloc failed");
    cudaMemset(src, 1, copy_floats4 * sizeof(float4));
    // Calibrate the tensor kernel to about 5 ms a launch.
    int iterations = 1 << 14;
    {
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        pm_tensor_kernel<<<blocks, threads>>>(tensor_out, 16);
        cudaEventRecord(a);
        pm_tensor_kernel<<<blocks, threads>>>(tensor_out, iterations);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (ms > 0) iterations = static_cast<int>(iterations * (5.0 / ms)) + 1;
        pm_copy_kernel<<<blocks * 4, 256>>>(src, dst, copy_floats4);
        cudaError_t ke = cudaDeviceSynchronize();
        if (ke != cudaSuccess) return finish(o, p, doc, 1, std::string("warm-up kernels: ") + cudaGetErrorString(ke));
        doc.key("tensor_kernel").open('{').key("iterations").i64(iterations).key("calibration_ms").num(ms);
        doc.key("grid").i64(blocks).key("block").i64(threads).close('}');
        doc.key("copy_kernel").open('{').key("bytes_each_way").u64(copy_floats4 * sizeof(float4));
        doc.key("grid").i64(blocks * 4).key("block").i64(256).close('}');
    }

    std::vector<Phase> phases;
    // idle, tensor-bound, idle, DRAM-bound, idle; `after` runs after each phase.
    auto run_steps = [&](const std::function<void(const char*)>& after) {
        auto tensor = [&] { pm_tensor_kernel<<<blocks, threads>>>(tensor_out, iterations); };
        auto copy = [&] { pm_copy_kernel<<<blocks * 4, 256>>>(src, dst, copy_floats4); };
        struct Step {
            const char* name;
            int ms;
            int kind;  // 0 idle, 1 tensor, 2 copy
        } steps[] = {{"idle", o.idle_ms, 0}, {"tensor", o.phase_ms, 1}, {"idle", o.idle_ms, 0},
                     {"copy", o.phase_ms, 2}, {"idle", o.idle_ms, 0}};
        for (const Step& st : steps) {
            Phase ph;
            ph.name = st.name;
            if (st.kind == 1) run_phase(p, ph, st.ms, tensor);
            else if (st.kind == 2) run_phase(p, ph, st.ms, copy);
            else run_phase(p, ph, st.ms, std::function<void()>());
            phases.push_back(ph);
            after(st.name);
        }
    };
    auto write_phases = [&] {
        doc.key("phases").open('[');
        for (const Phase& ph : phases) {
            doc.open('{').key("name").str(ph.name).key("launches").i64(ph.launches).key("host_ms").num(ph.host_ms);
            doc.key("cupti_start").u64(ph.cupti_start).key("cupti_end").u64(ph.cupti_end);
            doc.key("monotonic_start").u64(ph.mono_start).key("monotonic_end").u64(ph.mono_end);
            doc.key("realtime_start").u64(ph.real_start).key("realtime_end").u64(ph.real_end).close('}');
        }
        doc.close(']');
    };
    if (o.phases_only) {
        run_steps([](const char*) {});
        cudaError_t pe = cudaDeviceSynchronize();
        write_phases();
        cudaFree(src);
        cudaFree(dst);
        cudaFree(tensor_out);
        return finish(o, p, doc, pe == cudaSuccess ? 0 : 1,
                      pe == cudaSuccess ? "" : std::string("phases: ") + cudaGetErrorString(pe));
    }

    auto pi = PROBE_PARAMS(CUpti_Profiler_Initialize_Params);
    if (!p.ok("cuptiProfilerInitialize", p.api.cuptiProfilerInitialize(&pi)))
        return finish(o, p, doc, 1, "");
    auto cp = PROBE_PARAMS(CUpti_Device_GetChipName_Params);
    cp.deviceIndex = 0;
    if (!p.ok("cuptiDeviceGetChipName", p.api.cuptiDeviceGetChipName(&cp))) return finish(o, p, doc, 1, "");
    std::string chip = cp.pChipName ? cp.pChipName : "";
    doc.key("chip").str(chip);

    auto ap = PROBE_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
    ap.deviceIndex = 0;
    std::vector<uint8_t> availability;
    if (p.ok("cuptiPmSamplingGetCounterAvailability", p.api.cuptiPmSamplingGetCounterAvailability(&ap))) {
        availability.assign(ap.counterAvailabilityImageSize, 0);
        ap.pCounterAvailabilityImage = availability.data();
        p.ok("cuptiPmSamplingGetCounterAvailability", p.api.cuptiPmSamplingGetCounterAvailability(&ap));
    }
    doc.key("counter_availability_image_bytes").u64(availability.size());

    HostConfig cfg;
    if (!choose_metrics(p, chip, availability.empty() ? nullptr : availability.data(), o, doc, cfg))
        return finish(o, p, doc, 1, "no metric could be configured in one pass");

    Sampler s(p);
    s.host = cfg.host;
    s.metrics = cfg.kept;
    struct CallTime {
        const char* name;
        uint64_t before, after;
    };
    std::vector<CallTime> call_times;  // cuptiGetTimestamp around the sampler's calls, written with the phases
    auto timed = [&](const char* name, const std::function<bool()>& call) {
        uint64_t before = cupti_now(p);
        bool ok = call();
        call_times.push_back({name, before, cupti_now(p)});
        return ok;
    };
    auto ep = PROBE_PARAMS(CUpti_PmSampling_Enable_Params);
    ep.deviceIndex = 0;
    auto enable = [&] { return p.ok("cuptiPmSamplingEnable", p.api.cuptiPmSamplingEnable(&ep)); };
    if (!timed("cuptiPmSamplingEnable", enable)) return finish(o, p, doc, 1, "");
    s.object = ep.pPmSamplingObject;

    auto sp = PROBE_PARAMS(CUpti_PmSampling_SetConfig_Params);
    sp.pPmSamplingObject = s.object;
    sp.configSize = cfg.config_image.size();
    sp.pConfig = cfg.config_image.data();
    sp.hardwareBufferSize = o.hw_buffer_bytes;
    sp.samplingInterval = o.interval_ns;
    sp.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sp.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
    doc.key("sampling").open('{').key("interval_ns").u64(o.interval_ns).key("trigger_mode").str("GPU_TIME_INTERVAL");
    doc.key("hardware_buffer_bytes").u64(o.hw_buffer_bytes).key("max_samples").u64(o.max_samples).close('}');
    bool configured = timed("cuptiPmSamplingSetConfig",
                            [&] { return p.ok("cuptiPmSamplingSetConfig", p.api.cuptiPmSamplingSetConfig(&sp)); });

    auto dp = PROBE_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
    std::vector<const char*> names;
    for (const auto& m : cfg.kept) names.push_back(m.c_str());
    dp.pPmSamplingObject = s.object;
    dp.pMetricNames = names.data();
    dp.numMetrics = names.size();
    dp.maxSamples = o.max_samples;
    if (configured && p.ok("cuptiPmSamplingGetCounterDataSize", p.api.cuptiPmSamplingGetCounterDataSize(&dp))) {
        s.counter_data.assign(dp.counterDataSize, 0);
        configured = s.reset_image();
    } else {
        configured = false;
    }
    doc.key("counter_data_image_bytes").u64(s.counter_data.size());

    auto start = PROBE_PARAMS(CUpti_PmSampling_Start_Params);
    start.pPmSamplingObject = s.object;
    auto start_sampling = [&] { return p.ok("cuptiPmSamplingStart", p.api.cuptiPmSamplingStart(&start)); };
    if (configured && timed("cuptiPmSamplingStart", start_sampling)) {
        // Decoding after each phase while sampling goes on, as a collector's thread would.
        run_steps([&](const char* phase) { s.drain(phase); });
        auto stop = PROBE_PARAMS(CUpti_PmSampling_Stop_Params);
        stop.pPmSamplingObject = s.object;
        timed("cuptiPmSamplingStop", [&] { return p.ok("cuptiPmSamplingStop", p.api.cuptiPmSamplingStop(&stop)); });
        s.drain("after stop");
    }
    auto dis = PROBE_PARAMS(CUpti_PmSampling_Disable_Params);
    dis.pPmSamplingObject = s.object;
    p.ok("cuptiPmSamplingDisable", p.api.cuptiPmSamplingDisable(&dis));
    host_deinit(p, cfg.host);

    write_phases();
    doc.key("call_times").open('[');
    for (const CallTime& c : call_times)
        doc.open('{').key("call").str(c.name).key("cupti_before").u64(c.before).key("cupti_after").u64(c.after)
            .close('}');
    doc.close(']');
    s.decodes.close(']');
    s.rows.close(']');
    doc.key("decodes").raw(s.decodes.text()).key("overflow").boolean(s.overflow);
    doc.key("evaluate_failures").u64(s.evaluate_failures).key("sample_count").u64(s.samples);
    doc.key("samples").open('{').key("columns").open('[').str("start").str("end");
    for (const auto& m : s.metrics) doc.str(m);
    doc.close(']').key("rows").raw(s.rows.text()).close('}');
    cudaFree(src);
    cudaFree(dst);
    cudaFree(tensor_out);
    if (s.samples == 0) return finish(o, p, doc, 1, p.first_error.empty() ? "no sample was decoded" : "");
    return finish(o, p, doc, 0, "");
}
