#include "cupti/session.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <iterator>
#include <new>

#include "core/log.h"
#include "core/process_info.h"
#include "core/reentry.h"
#include "cupti/api_calls.h"
#include "cupti/buffers.h"
#include "cupti/probes.h"
#include "cupti/unwind.h"
#include "core/clock.h"
#include "cupti/translate.h"
#include "gprof/trace/runtime_driver_calls.h"
#include "python/python_stack.h"

namespace gprof::collector::cupti {
namespace {

using trace::StatusLevel;

// Per thread: the re-entry flag of the subscriber callback (the driver queries we make from inside a callback call
// back again).
thread_local bool t_in_callback = false;

// Bumped in a forked child: a thread's cached kernel tid (the forking thread's) is read again.
std::atomic<uint32_t> g_fork_generation{0};

uint64_t current_tid() {
    thread_local uint64_t t_tid = 0;
    thread_local uint32_t t_generation = 0;
    uint32_t generation = g_fork_generation.load(std::memory_order_relaxed) + 1;
    if (t_generation != generation) {
        t_tid = static_cast<uint64_t>(::gettid());  // the kernel tid, as in ApiCall records
        t_generation = generation;
    }
    return t_tid;
}

uint64_t monotonic_ns() {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string call_site_filter_text(const env::CudaBacktraceSpec& spec) {
    std::string text;
    for (int i = 0; i < env::kCallCategories; ++i) {
        if (!spec.on[i]) continue;
        if (!text.empty()) text += ", ";
        text += env::kCallCategoryNames[i];
        if (spec.threshold_ns[i]) text += " >= " + std::to_string(spec.threshold_ns[i]) + " ns";
    }
    return text;
}

// CUPTI's buffer callbacks carry no user pointer: they go to the session that registered them last.
std::atomic<Session*> g_buffer_session{nullptr};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    Session* s = g_buffer_session.load(std::memory_order_acquire);
    if (s) {
        s->on_buffer_requested(buffer, size, max_records);
    } else {
        *buffer = nullptr;
        *size = 0;
        *max_records = 0;
    }
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
    Session* s = g_buffer_session.load(std::memory_order_acquire);
    if (s)
        s->on_buffer_completed(ctx, stream, buffer, size, valid);
    else
        release_buffer(buffer);
}

void CUPTIAPI subscriber_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void* data) {
    static_cast<Session*>(userdata)->on_callback(domain, cbid, data);
}

// One line naming what refused us and what the user can do about it. holder: CUPTI's name for the subscriber that
// holds it (cuptiSubscribe_v2's oldSubscriberName), empty when unknown.
std::string refusal_text(const CuptiApi* api, const char* what, CUptiResult rc, const std::string& holder = {}) {
    std::string name = result_name(api, rc);
    switch (rc) {
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
            if (!holder.empty())
                return "another tool already uses CUPTI in this process: " + holder + " (" + name +
                       "; a profiler such as nsys, ncu or torch.profiler, a debugger or compute-sanitizer): no GPU "
                       "activity is recorded";
            return "another profiler already uses CUPTI in this process (torch.profiler, nsys, ncu or "
                   "compute-sanitizer; " + name + "): no GPU activity is recorded";
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
            return std::string("insufficient privileges for CUPTI (") + name + " from " + what +
                   "): no GPU activity is recorded";
        case CUPTI_ERROR_INVALID_DEVICE:
        case CUPTI_ERROR_NOT_SUPPORTED:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
        case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
            return std::string("CUPTI does not support tracing this device or setup (") + name + " from " + what +
                   "): no GPU activity is recorded";
        case CUPTI_ERROR_UNKNOWN:
        case CUPTI_ERROR_NOT_INITIALIZED:
            if (!cuda_driver_loaded())
                return std::string("no CUDA driver in this process (") + name + " from " + what +
                       "): no GPU activity is recorded";
            return std::string("CUPTI could not initialise (") + name + " from " + what +
                   "; no usable CUDA driver or device?): no GPU activity is recorded";
        default:
            return std::string(what) + " failed (" + name + "): no GPU activity is recorded";
    }
}

const char* kind_name(CUpti_ActivityKind k) {
    switch (k) {
        case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
        case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
        case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
        case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
        case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
        case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
        case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
        case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return "GRAPH_TRACE";
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "MEMORY_POOL";
        default: return "?";
    }
}

// "12.4" for the driver API version 12040.
std::string cuda_version_text(uint32_t v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

const std::vector<CUpti_ActivityKind>& traced_activity_kinds(bool graph_level, ApiRecords api) {
    // Never CUPTI_ACTIVITY_KIND_KERNEL: it serialises every kernel launch. GRAPH_TRACE only on request: while it
    // is enabled CUPTI reports one record per graph launch *instead of* the records of the graph's nodes (seen on
    // an H100: 0 of 600 graph kernels recorded with it, all 600 without), so by default graphs are traced node by
    // node, each node record carrying its graph id and node id.
    static const std::vector<CUpti_ActivityKind> common = {
        CUPTI_ACTIVITY_KIND_RUNTIME,         CUPTI_ACTIVITY_KIND_DRIVER,
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2,         CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
        CUPTI_ACTIVITY_KIND_MEMORY_POOL,     CUPTI_ACTIVITY_KIND_OVERHEAD,
        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    };
    static const std::vector<CUpti_ActivityKind> with_graphs = [] {
        auto kinds = common;
        kinds.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
        return kinds;
    }();
    // API calls from callbacks or not at all: no RUNTIME/DRIVER activity records.
    static const std::vector<CUpti_ActivityKind> no_api[2] = {
        {common.begin() + 2, common.end()},
        [] {
            std::vector<CUpti_ActivityKind> kinds(common.begin() + 2, common.end());
            kinds.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
            return kinds;
        }(),
    };
    if (api != ApiRecords::Activity) return no_api[graph_level ? 1 : 0];
    return graph_level ? with_graphs : common;
}

const std::vector<CUpti_CallbackId>& runtime_internal_driver_calls() {
    // The one list lives in formats/ (gprof/trace/runtime_driver_calls.h, which says why each call is there): the
    // reports hide the same calls in traces that still hold them.
    static_assert(trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuKernelGetName) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuFuncGetName) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuModuleGetLoadingMode) &&
                  trace::is_runtime_internal_driver_cbid(CUPTI_DRIVER_TRACE_CBID_cuStreamGetDevice) &&
                  std::size(trace::kRuntimeInternalDriverCbids) == 9,
                  "gprof/trace/runtime_driver_calls.h and CUPTI's callback ids disagree");
    static const std::vector<CUpti_CallbackId> cbids(std::begin(trace::kRuntimeInternalDriverCbids),
                                                     std::end(trace::kRuntimeInternalDriverCbids));
    return cbids;
}

ActivityConsumer activity_consumer(Translator& translator) {
    ActivityConsumer c;
    c.consume = [](void* ctx, const uint8_t* buffer, size_t valid, trace::TraceWriter& w) -> size_t {
        return static_cast<Translator*>(ctx)->translate(w, buffer, valid);
    };
    c.release = [](void*, uint8_t* buffer) { release_buffer(buffer); };
    c.ctx = &translator;
    return c;
}

Session& Session::instance() {
    static auto* s = new Session();  // leaked: CUPTI may call back while static destructors run
    return *s;
}

void Session::status(StatusLevel level, int32_t code, const std::string& message) {
    if (Pipeline* p = pipeline_.load(std::memory_order_acquire))
        p->post_status(trace::Component::Cupti, level, code, message);
}

StartResult Session::start(Pipeline& pipeline, const SessionOptions& options) {
    std::lock_guard<std::mutex> lock(start_mutex_);
    if (start_attempted_) return start_result_;
    start_attempted_ = true;
    abandoned_.store(false, std::memory_order_release);
    StartResult& result = start_result_;
    options_ = options;

    LoadResult loaded = load_cupti(options.load);
    if (!loaded.api) {
        result.code = -1;
        result.reason = "CUPTI unavailable: " + loaded.reason;
        return result;
    }
    api_ = loaded.api;  // leaked with the session: CUPTI stays loaded for the life of the process
    const CuptiApi& api = *api_;

    size_t max_buffers = options.max_buffers;
    if (max_buffers == 0) max_buffers = std::max<size_t>(8, (512u << 20) / std::max<size_t>(options.buffer_bytes, 1));
    // Every CUPTI we accept (13.x) takes a refused buffer gracefully; older ones (< API 27) crashed on it.
    buffer_pool().configure(options.buffer_bytes, max_buffers, api.version >= 27);
    buffer_pool().set_zeroed(options.zeroed_buffers);

    // CUPTI's default thread ids are pthread_self() values; the rest of the trace (NVTX, Thread records)
    // uses kernel tids, so ask for those.
    if (api.SetThreadIdType) api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);

    // CUPTI needs a driver of its own CUDA major (CUPTI 13 needs a CUDA 13 driver, r580 or newer); with an older
    // one it could not work. Say so with both versions and leave CUDA to the program untouched.
    // (Read before any kind is enabled: our own cuDriverGetVersion is not the program's call.)
    driver_version_ = driver_version();
    if (uint32_t driver = driver_version_; driver != 0 && driver / 1000 < api.version / 10000) {
        result.code = static_cast<int32_t>(CUPTI_ERROR_NOT_INITIALIZED);
        result.reason = "CUPTI unavailable: the CUDA driver supports CUDA " + cuda_version_text(driver) +
                        " but CUPTI " + std::to_string(api.version) + " (" + api.path + ") needs a driver for CUDA " +
                        std::to_string(api.version / 10000) + " or newer" +
                        (api.version / 10000 == 13 ? " (r580 or later)" : "") +
                        ": no GPU activity is recorded (NVTX and processes are)";
        return result;
    }

    std::string holder;
    CUptiResult rc = subscribe(holder);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && forked_child_ && parent_subscriber_) {
        // A forked child re-initialising CUDA: the subscriber CUPTI knows is our parent's copy, not another
        // profiler. Drop it and subscribe again (to be confirmed on a GPU; a refusal is reported below).
        api.Unsubscribe(parent_subscriber_);
        parent_subscriber_ = nullptr;
        rc = subscribe(holder);
        if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
            subscriber_ = nullptr;
            result.code = static_cast<int32_t>(rc);
            result.reason = "CUPTI unavailable: in this forked child CUPTI still holds the parent's subscription (" +
                            result_name(api_, rc) + "): no GPU activity is recorded for the child";
            return result;
        }
    }
    if (rc != CUPTI_SUCCESS) {
        subscriber_ = nullptr;
        result.code = static_cast<int32_t>(rc);
        result.reason = "CUPTI unavailable: " + refusal_text(api_, "cuptiSubscribe", rc, holder);
        return result;
    }
    g_buffer_session.store(this, std::memory_order_release);
    rc = api.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        api.Unsubscribe(subscriber_);
        subscriber_ = nullptr;
        result.code = static_cast<int32_t>(rc);
        result.reason = "CUPTI unavailable: " + refusal_text(api_, "cuptiActivityRegisterCallbacks", rc);
        return result;
    }

    pipeline_.store(&pipeline, std::memory_order_release);
    translator_.set_api(api_);
    pipeline.set_activity_consumer(activity_consumer(translator_));

    // One clock for CPU and GPU: must be registered before any kind is enabled.
    if (options.timestamp) {
        CUptiResult trc = api.ActivityRegisterTimestampCallback
                              ? api.ActivityRegisterTimestampCallback(options.timestamp)
                              : CUPTI_ERROR_API_NOT_IMPLEMENTED;
        timestamp_registered_ = trc == CUPTI_SUCCESS;
        if (!timestamp_registered_) {
            // Fall back to moving CUPTI's clock onto ours by the offset between them, read back to back.
            uint64_t cupti_ts = 0;
            uint64_t ours = options.timestamp();
            if (api.GetTimestamp(&cupti_ts) == CUPTI_SUCCESS && cupti_ts != 0) {
                uint64_t ours_after = options.timestamp();
                int64_t offset = static_cast<int64_t>(ours / 2 + ours_after / 2) - static_cast<int64_t>(cupti_ts);
                translator_.set_timestamp_offset(offset);
            }
            status(StatusLevel::Warning, trc,
                   "cuptiActivityRegisterTimestampCallback failed (" + result_name(api_, trc) +
                       "): GPU timestamps are CUPTI's clock shifted by an offset measured at start");
        }
    }

    // Callbacks only for what activity records cannot give.
    struct Cb {
        CUpti_CallbackDomain domain;
        CUpti_CallbackId cbid;
    };
    const Cb callbacks[] = {
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop},
        {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED},
    };
    for (const Cb& cb : callbacks) {
        CUptiResult crc = api.EnableCallback(1, subscriber_, cb.domain, cb.cbid);
        if (crc != CUPTI_SUCCESS)
            status(StatusLevel::Warning, crc,
                   "cuptiEnableCallback(domain " + std::to_string(cb.domain) + ", cbid " + std::to_string(cb.cbid) +
                       ") failed (" + result_name(api_, crc) + "): capture ranges or device metadata may be missing");
    }
    if (options.backtrace_depth > 0) {
        categories_.build(api);
        CallSites::Options co;
        co.depth = std::min<uint32_t>(options.backtrace_depth, trace::kMaxBacktraceFrames);
        co.max_stacks = options.call_site_max_stacks;
        co.cupti_address = reinterpret_cast<const void*>(api.GetVersion);
        call_sites_.configure(co);
        enable_call_site_callbacks();
        pipeline.add_periodic_hook(call_site_report_hook, this);
        status(StatusLevel::Info, 0,
               "call sites on (at API exit) for " + call_site_filter_text(options.call_sites) + "; depth " +
                   std::to_string(co.depth) + " frames, unwinder " + unwinder_name() + ", at most " +
                   std::to_string(co.max_stacks) + " distinct stacks");
    }

    if (options.api_records == ApiRecords::Callback) {
        // Every runtime and driver call calls back; the ones the activity path filters at the source (the runtime's
        // own driver calls, the noisy getters) are switched off per callback id, as cuptiActivityEnableDriverApi
        // does for records. The profiler start/stop and device reset callbacks above stay on with the domains.
        bool ok = true;
        for (CUpti_CallbackDomain d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
            CUptiResult drc = api.EnableDomain(1, subscriber_, d);
            if (drc != CUPTI_SUCCESS) {
                ok = false;
                status(StatusLevel::Warning, drc,
                       "cuptiEnableDomain failed (" + result_name(api_, drc) + "): API calls are missing");
            }
        }
        if (options.backtrace_depth == 0) {
            // With call sites the callbacks must still reach on_call_site (its runtime depth counts every runtime
            // call); the filter is then applied in on_callback.
            for (CUpti_CallbackId cbid : runtime_internal_driver_calls())
                if (!options.nested_driver_calls) api.EnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
            if (options.filter_noisy_apis) {
                api.EnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
                for (CUpti_CallbackId cbid : {CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
                                              CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute})
                    api.EnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
            }
        }
        pipeline.add_periodic_hook(drain_api_hook, this, /*also_on_nudge=*/true);
        if (ok) status(StatusLevel::Info, 0, "CUDA API calls recorded from CUPTI callbacks (GPROF_CUDA_API=callback)");
    } else if (options.api_records == ApiRecords::Off) {
        status(StatusLevel::Info, 0, "CUDA API calls not recorded (GPROF_CUDA_API=off): GPU activity only");
    }
    set_buffer_attributes();

    if (!options.start_paused) {
        std::lock_guard<std::mutex> state(state_mutex_);
        CUptiResult failure = CUPTI_SUCCESS;
        enable_failure_reported_ = true;
        if (!enable_kinds(true, failure)) {
            // Nothing would be recorded: give CUPTI back and say why.
            pipeline_.store(nullptr, std::memory_order_release);
            api.Unsubscribe(subscriber_);
            subscriber_ = nullptr;
            result.code = static_cast<int32_t>(failure);
            result.reason = "CUPTI unavailable: " + refusal_text(api_, "cuptiActivityEnable", failure);
            return result;
        }
        recording_.store(true, std::memory_order_release);
    }

    CudaVersions versions;
    versions.driver_version = driver_version_;
    versions.cupti_api_version = api.version;
    versions.cupti_library = api.path;
    pipeline.post_cuda_info(versions);
    status(StatusLevel::Info, 0, "CUPTI " + std::to_string(api.version) + " loaded from " + api.path + " (" +
                                     api.found_by + ")");
    status(StatusLevel::Info, 0,
           std::string("CUDA graphs traced ") +
               (options.graph_level ? "per graph launch (GRAPH_TRACE: the kernels, copies and memsets inside graphs "
                                      "are not recorded)"
                                    : "node by node"));
    if (!options.nested_driver_calls)
        status(StatusLevel::Info, 0,
               "driver calls the CUDA runtime makes internally (cuKernelGetName, cuGetProcAddress, cuLibraryGetKernel, "
               "...) are not recorded (GPROF_CUDA_NESTED_DRIVER_CALLS=1 records them)");

    started_.store(true, std::memory_order_release);
    result.ok = true;
    return result;
}

void Session::set_buffer_attributes() {
    const CuptiApi& api = *api_;
    auto set = [&](CUpti_ActivityAttribute attr, const char* name, void* value, size_t size) {
        CUptiResult rc = api.ActivitySetAttribute ? api.ActivitySetAttribute(attr, &size, value)
                                                  : CUPTI_ERROR_API_NOT_IMPLEMENTED;
        if (rc != CUPTI_SUCCESS)
            status(StatusLevel::Warning, rc,
                   std::string("cuptiActivitySetAttribute(") + name + ") failed (" + result_name(api_, rc) +
                       "): CUPTI's default is used");
        return rc == CUPTI_SUCCESS;
    };
    std::string said;
    if (options_.device_buffer_bytes) {
        size_t v = options_.device_buffer_bytes;
        if (set(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, "DEVICE_BUFFER_SIZE", &v, sizeof v))
            said += " device buffer " + std::to_string(v >> 20) + " MiB;";
    }
    if (options_.device_buffers_preallocated) {
        size_t v = options_.device_buffers_preallocated;
        if (set(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, "DEVICE_BUFFER_PRE_ALLOCATE_VALUE", &v, sizeof v))
            said += " " + std::to_string(v) + " device buffers pre-allocated per context;";
    }
    if (options_.zeroed_buffers) {
        uint8_t v = 1;
        if (set(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, "ZEROED_OUT_ACTIVITY_BUFFER", &v, sizeof v))
            said += " activity buffers zeroed by the collector off the app's threads;";
        else
            buffer_pool().set_zeroed(false);
    }
    if (!said.empty()) {
        said.pop_back();
        status(StatusLevel::Info, 0, "CUPTI buffer attributes:" + said);
    }
}

bool Session::enable_kinds(bool report, CUptiResult& first_failure) {
    const CuptiApi& api = *api_;
    first_failure = CUPTI_SUCCESS;
    for (CUpti_ActivityKind kind : traced_activity_kinds(options_.graph_level, options_.api_records)) {
        CUptiResult rc = api.ActivityEnable(kind);
        if (rc == CUPTI_SUCCESS) {
            enabled_.push_back(kind);
            continue;
        }
        if (first_failure == CUPTI_SUCCESS) first_failure = rc;
        if (report)
            status(StatusLevel::Warning, rc,
                   std::string("cannot enable CUPTI activity kind ") + kind_name(kind) + " (" + result_name(api_, rc) +
                       "): those records are missing");
    }
    if (enabled_.empty()) return false;
    apply_api_filters();
    return true;
}

void Session::apply_api_filters() {
    // Must follow every enabling of RUNTIME/DRIVER, which resets these per-call settings.
    const CuptiApi& api = *api_;
    if (options_.filter_noisy_apis) {
        // Called by libraries thousands of times per step and useless in a profile (kineto drops the same ones).
        if (api.ActivityEnableRuntimeApi)
            api.ActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0);
        if (api.ActivityEnableDriverApi) {
            api.ActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 0);
            api.ActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, 0);
            api.ActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, 0);
        }
    }
    if (!options_.nested_driver_calls && api.ActivityEnableDriverApi) {
        for (CUpti_CallbackId cbid : runtime_internal_driver_calls()) api.ActivityEnableDriverApi(cbid, 0);
    }
}

void Session::disable_kinds() {
    for (CUpti_ActivityKind kind : enabled_) api_->ActivityDisable(kind);
    enabled_.clear();
}

bool Session::flush(bool forced) {
    if (!started() || abandoned_.load(std::memory_order_acquire)) return false;
    // No lock of ours is held here: CUPTI runs buffer_completed on this thread, under its own lock.
    return api_->ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0) == CUPTI_SUCCESS;
}

bool Session::set_recording(bool on) {
    if (!started() || abandoned_.load(std::memory_order_acquire)) return false;
    CUptiResult failure = CUPTI_SUCCESS;
    {
        std::lock_guard<std::mutex> state(state_mutex_);
        if (recording_.load(std::memory_order_acquire) == on) return true;
        if (!on) {
            disable_kinds();
            recording_.store(false, std::memory_order_release);
            return true;
        }
        bool ok = enable_kinds(!enable_failure_reported_, failure);
        enable_failure_reported_ = true;
        if (ok) {
            recording_.store(true, std::memory_order_release);
            return true;
        }
    }
    status(StatusLevel::Error, static_cast<int32_t>(failure),
           "no CUPTI activity kind could be enabled: " + refusal_text(api_, "cuptiActivityEnable", failure));
    return false;
}

CUptiResult Session::subscribe(std::string& holder) {
    const CuptiApi& api = *api_;
    holder.clear();
    if (!api.Subscribe_v2) return api.Subscribe(&subscriber_, subscriber_callback, this);
    // Named, so that a tool refused because of us is told who holds CUPTI ("CUPTI for gprof-run"), and we learn
    // who holds it when we are the one refused.
    char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = kSubscriberName;
    params.oldSubscriberName = old_name;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    CUptiResult rc = api.Subscribe_v2(&subscriber_, subscriber_callback, this, &params);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) holder.assign(old_name, ::strnlen(old_name, sizeof old_name));
    return rc;
}

void Session::other_client_subscribed(const std::string& who, CUptiResult result) noexcept {
    if (!started() || abandoned_.load(std::memory_order_acquire)) return;  // we hold nothing: CUPTI's answer stands alone
    try {
        {
            std::lock_guard<std::mutex> lock(clients_mutex_);
            if (!clients_said_.insert(who + "|" + std::to_string(result)).second) return;  // once per client and answer
        }
        if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
            std::string line = who + " asked CUPTI for a subscription while gprof-run held it; CUPTI refused it (" +
                               result_name(api_, result) + "), so it records no GPU activity in this process. To let "
                               "it record, run gprof-run with -t nvtx: gprof-run then records NVTX and processes and "
                               "leaves CUPTI to the program";
            log::warn("{}", line);
            status(StatusLevel::Warning, static_cast<int32_t>(result), line);
        } else if (result == CUPTI_SUCCESS) {
            status(StatusLevel::Info, 0, who + " subscribed to CUPTI beside gprof-run: both record GPU activity");
        }
    } catch (...) {
    }
}

void Session::drain_api_hook(void* ctx, trace::TraceWriter& w, bool) {
    auto* self = static_cast<Session*>(ctx);
    Pipeline* p = self->pipeline_.load(std::memory_order_acquire);
    drain_api_calls(w, self->translator_, p ? static_cast<uint32_t>(p->writer_tid()) : 0);
}

void Session::rebind(Pipeline& pipeline) noexcept {
    if (!started() || abandoned_.load(std::memory_order_acquire)) return;
    if (pipeline_.load(std::memory_order_acquire) == &pipeline) return;
    pipeline.set_activity_consumer(activity_consumer(translator_));
    if (options_.api_records == ApiRecords::Callback) pipeline.add_periodic_hook(drain_api_hook, this, true);
    if (options_.backtrace_depth > 0) {
        call_sites_.reset(false);  // a new trace: its stacks are written again, from id 1
        pipeline.add_periodic_hook(call_site_report_hook, this);
    }
    pipeline_.store(&pipeline, std::memory_order_release);
}

void Session::abandon_after_fork() {
    abandoned_.store(true, std::memory_order_release);
    pipeline_.store(nullptr, std::memory_order_release);
    recording_.store(false, std::memory_order_release);
    started_.store(false, std::memory_order_release);
    // A later start() in the child tries again (the driver re-initialising in the child calls
    // InitializeInjection). The mutexes may have been held by a parent thread that does not exist here.
    new (&start_mutex_) std::mutex();
    new (&state_mutex_) std::mutex();
    buffer_pool().reset_after_fork();
    reset_api_calls_after_fork();
    start_attempted_ = false;
    start_result_ = StartResult{};
    if (subscriber_) {
        parent_subscriber_ = subscriber_;
        forked_child_ = true;
    }
    subscriber_ = nullptr;
    enabled_.clear();
    in_profiler_range_.store(false);
    devices_seen_.store(0);
    g_fork_generation.fetch_add(1, std::memory_order_relaxed);
    call_sites_.reset(true);  // the child's trace starts its stack ids afresh
}

Session::Counters Session::counters() const {
    Counters c;
    c.buffers_requested = buffers_requested_.load(std::memory_order_relaxed);
    c.buffers_completed = buffers_completed_.load(std::memory_order_relaxed);
    c.dropped_reported = dropped_reported_.load(std::memory_order_relaxed);
    c.call_sites = call_sites_posted_.load(std::memory_order_relaxed);
    c.profiler_starts = profiler_starts_.load(std::memory_order_relaxed);
    c.profiler_stops = profiler_stops_.load(std::memory_order_relaxed);
    c.api_callbacks = api_call_stats().recorded;
    return c;
}

// ---- CUPTI callbacks --------------------------------------------------------------------------------------

void Session::on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept {
    buffers_requested_.fetch_add(1, std::memory_order_relaxed);
    uint8_t* b = buffer_pool().acquire();
    *buffer = b;
    *size = b ? buffer_pool().buffer_size() : 0;
    *max_records = 0;  // as many as fit
}

void Session::on_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) noexcept {
    buffers_completed_.fetch_add(1, std::memory_order_relaxed);
    Pipeline* p = pipeline_.load(std::memory_order_acquire);
    if (abandoned_.load(std::memory_order_acquire)) p = nullptr;
    // Only ever the buffers of our own pool reach here (CUPTI gets no others).
    if (buffer && !BufferPool::acquired_by_this_process(buffer)) {
        // Filled before a fork, by the parent: its records are the parent's, who writes them itself.
        release_buffer(buffer);
        return;
    }
    try {
        // Records CUPTI could not store are counted per buffer; write the count, never lose it silently.
        size_t dropped = 0;
        if (p && api_->ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped > 0) {
            uint32_t context_id = 0;
            if (ctx && api_->GetContextId) api_->GetContextId(ctx, &context_id);
            p->post_dropped(trace::DropSource::CuptiBuffer, dropped, context_id, stream);
            dropped_reported_.fetch_add(dropped, std::memory_order_relaxed);
        }
    } catch (...) {
    }
    if (buffer) BufferPool::mark_used(buffer, valid);  // what a zeroing pool must clear before reuse
    if (p)
        p->submit_activity_buffer(buffer, valid);
    else
        release_buffer(buffer);
}

void Session::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
    if (abandoned_.load(std::memory_order_acquire) || !data) return;
    ReentryGuard guard(t_in_callback);
    if (!guard.entered()) return;
    try {
        if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
            auto* cb = static_cast<const CUpti_CallbackData*>(data);
            bool enter = cb->callbackSite == CUPTI_API_ENTER;
            bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
            if (options_.backtrace_depth > 0) on_call_site(domain, cbid, cb, enter, runtime);
            if (options_.api_records == ApiRecords::Callback) on_api_callback(domain, cbid, cb);
            bool start = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                                 : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
            bool stop = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                                : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
            // The range opens when cudaProfilerStart returns and closes as cudaProfilerStop is entered, so
            // neither call itself is inside it.
            if (start && !enter) profiler_start();
            if (stop && enter) profiler_stop();
            if (runtime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 && !enter) flush(false);
        } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
            on_context_created(static_cast<const CUpti_ResourceData*>(data)->context);
        }
    } catch (...) {
    }
}

void Session::profiler_start() {
    profiler_starts_.fetch_add(1, std::memory_order_relaxed);
    // cudaProfilerStart calls cuProfilerStart: both callbacks fire (the driver's first), one range opens.
    if (in_profiler_range_.exchange(true)) return;
    if (options_.profiler_range) options_.profiler_range(true);
}

void Session::profiler_stop() {
    profiler_stops_.fetch_add(1, std::memory_order_relaxed);
    if (in_profiler_range_.exchange(false) && options_.profiler_range) options_.profiler_range(false);
    // What the program recorded so far goes to the trace now (completed records; the rest follow with the
    // periodic flush): it may stop the profiler right before it exits or forks. CUPTI allows the flush here, in
    // a runtime/driver API callback.
    flush(false);
}

bool Session::api_callback_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const {
    // Only needed where the callbacks could not be switched off per id (with backtraces every call calls back).
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        return !(options_.filter_noisy_apis && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
    if (!options_.nested_driver_calls && trace::is_runtime_internal_driver_cbid(cbid)) return false;
    return !(options_.filter_noisy_apis &&
             (cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent || cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState ||
              cbid == CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute));
}

void Session::on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
    // Entry and exit stamps per thread; calls nest (a runtime call's driver calls), so a small stack. A call that
    // entered while recording was off, or deeper than the stack, is not recorded.
    constexpr int kDepth = 16;
    thread_local uint64_t t_enter[kDepth];
    thread_local int t_depth = 0;
    uint64_t now = options_.timestamp ? options_.timestamp() : 0;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (t_depth < kDepth) t_enter[t_depth] = recording() ? now : 0;
        ++t_depth;
        return;
    }
    if (t_depth == 0) return;  // an exit without its entry (callbacks switched on in between)
    --t_depth;
    if (t_depth >= kDepth || t_enter[t_depth] == 0) return;
    if (options_.backtrace_depth > 0 && !api_callback_recorded(domain, cbid)) return;
    ApiEvent e;
    e.start = t_enter[t_depth];
    e.end = now;
    e.correlation = cb->correlationId;
    e.cbid = cbid;
    e.result = cb->functionReturnValue ? *static_cast<const int32_t*>(cb->functionReturnValue) : 0;
    e.runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? 1 : 0;
    e.pad[0] = e.pad[1] = e.pad[2] = 0;
    record_api_call(e, pipeline_.load(std::memory_order_relaxed));
}

void Session::enable_call_site_callbacks() {
    const CuptiApi& api = *api_;
    const env::CudaBacktraceSpec& spec = options_.call_sites;
    bool every_category = spec.on[0] && spec.on[1] && spec.on[2] && spec.on[3];
    // Every runtime call: the runtime depth must count them all (a driver call inside any runtime call is the
    // runtime's, not the program's). Driver calls: only the categories asked for, unless that is all of them.
    CUptiResult rc = api.EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
    if (rc == CUPTI_SUCCESS) {
        if (every_category) {
            rc = api.EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
        } else {
            for (uint32_t cbid = 1; cbid < CallCategories::kMaxCbid && rc == CUPTI_SUCCESS; ++cbid) {
                if (!spec.on[static_cast<int>(categories_.of(CUPTI_CB_DOMAIN_DRIVER_API, cbid))]) continue;
                if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) break;  // ids our headers do not know: not asked for
                rc = api.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
            }
        }
    }
    if (rc != CUPTI_SUCCESS)
        status(StatusLevel::Warning, rc,
               "enabling the API callbacks failed (" + result_name(api_, rc) + "): call sites are missing");
}

void Session::on_call_site(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb,
                           bool enter, bool runtime) {
    // Per thread: the entry stamps of the calls in progress (a runtime call nests the driver calls it makes; 0 marks
    // a call that gets no call site) and how many runtime calls are in progress.
    constexpr int kNesting = 16;
    thread_local uint64_t t_enter[kNesting];
    thread_local int t_nesting = 0;
    thread_local int t_runtime_depth = 0;
    if (enter) {
        uint64_t stamp = 0;
        // A driver call made inside a runtime call is the runtime's: the runtime call gets the call site. The
        // collector's own calls (device queries on the writer thread) are not the program's: no call site, as they
        // have no API record either.
        Pipeline* p = pipeline_.load(std::memory_order_relaxed);
        if ((runtime || t_runtime_depth == 0) && recording() && api_callback_recorded(domain, cbid) && p &&
            current_tid() != p->writer_tid()) {
            int category = static_cast<int>(categories_.of(domain, cbid));
            if (options_.call_sites.on[category]) stamp = options_.call_sites.threshold_ns[category] ? monotonic_ns() : 1;
        }
        if (t_nesting < kNesting) t_enter[t_nesting] = stamp;
        ++t_nesting;
        if (runtime) ++t_runtime_depth;
        return;
    }
    if (runtime && t_runtime_depth > 0) --t_runtime_depth;
    if (t_nesting == 0) return;  // an exit without its entry (callbacks switched on in between)
    --t_nesting;
    if (t_nesting >= kNesting || t_enter[t_nesting] == 0) return;
    uint64_t threshold = options_.call_sites.threshold_ns[static_cast<int>(categories_.of(domain, cbid))];
    if (threshold && monotonic_ns() - t_enter[t_nesting] < threshold) return;
    Pipeline* p = pipeline_.load(std::memory_order_acquire);
    if (!p || !recording()) return;
    trace::CallSite site;
    site.tid = current_tid();
    site.correlation = cb->correlationId;
    site.stack = call_sites_.capture(*p);
    // The Python frames of this call (collector/python/): 0 when the thread runs no Python code or there is no
    // CPython in the process (then one load and a branch). Its PyFrame/PyStack records are posted before the CallSite.
    site.py_stack = python::current_python_stack(*p);
    // Written even without a stack (table full, or no frame of the program): the trace then says which calls were
    // asked for and lost their stack, not only how many.
    p->post_call_site(site);
    call_sites_posted_.fetch_add(1, std::memory_order_relaxed);
}

void Session::call_site_report_hook(void* ctx, trace::TraceWriter& w, bool final) {
    if (!final) return;
    auto* self = static_cast<Session*>(ctx);
    CallSites::Counters c = self->call_sites_.counters();
    auto say = [&w](trace::StatusLevel level, const std::string& text) {
        trace::Status st;
        st.timestamp = clock::now();
        st.component = trace::Component::Cupti;
        st.level = level;
        st.message = w.intern(text.data(), text.size());
        w.add(st);
    };
    say(StatusLevel::Info, "call sites: " + std::to_string(self->call_sites_posted_.load()) + " calls recorded, " +
                               std::to_string(c.stacks) + " distinct stacks");
    if (c.table_full)
        say(StatusLevel::Warning, "call sites: " + std::to_string(c.table_full) +
                                      " calls without their stack: the table of " +
                                      std::to_string(self->call_sites_.max_stacks()) + " distinct stacks was full");
    if (c.post_refused)
        say(StatusLevel::Warning, "call sites: " + std::to_string(c.post_refused) +
                                      " calls without their stack: the collector's queue was full");
    if (c.no_program_frame)
        say(StatusLevel::Info, "call sites: " + std::to_string(c.no_program_frame) +
                                   " calls made from CUDA's own code (no frame of the program): no call site");
    if (std::string py = python::python_stack_summary(); !py.empty()) say(StatusLevel::Info, "call sites: " + py);
}

void Session::on_context_created(CUcontext ctx) {
    Pipeline* p = pipeline_.load(std::memory_order_acquire);
    if (!p) return;
    uint32_t device = 0;
    if (!api_->GetDeviceId || api_->GetDeviceId(ctx, &device) != CUPTI_SUCCESS) return;
    if (device < 32) {
        uint32_t bit = 1u << device;
        if (devices_seen_.fetch_or(bit) & bit) return;  // one Device record per device
    }
    // The driver queries run on the writer thread, not here: CUPTI records driver calls made from inside its own
    // callback as the program's (they would appear in the program's API tables). Calls of the translating thread
    // itself are left out of the trace (Translator), so these never show.
    p->post([this, p, device](trace::TraceWriter& w) {
        auto self = static_cast<uint32_t>(::gettid());
        if (self == p->writer_tid()) translator_.set_own_thread(self);  // both run on this thread
        DeviceInfo info;
        if (query_device(device, info)) write_device_record(w, info);
    });
}

}  // namespace gprof::collector::cupti
