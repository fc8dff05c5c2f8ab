// The CUPTI session's activity side: which kinds are traced and switched on and off (the capture window's lever),
// the activity buffers CUPTI asks for and hands back, the trace clock for GPU records, CUPTI's buffer attributes
// and flushing. The subscription itself is in subscriber.cpp, the API callbacks in callbacks.cpp.
#include "cupti/session.h"

#include <iterator>

#include "cupti/buffers.h"
#include "gprof/trace/runtime_driver_calls.h"

namespace gprof::collector::cupti {
namespace {

using trace::StatusLevel;

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

const std::vector<ApiCallId>& noisy_api_calls() {
    static const std::vector<ApiCallId> calls = {
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute},
    };
    return calls;
}

bool is_noisy_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    for (const ApiCallId& c : noisy_api_calls())
        if (c.domain == domain && c.cbid == cbid) return true;
    return false;
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

CUptiResult Session::register_buffer_callbacks() {
    g_buffer_session.store(this, std::memory_order_release);
    return api_->ActivityRegisterCallbacks(buffer_requested, buffer_completed);
}

// One clock for CPU and GPU (SessionOptions::timestamp): registered before any kind is enabled.
void Session::register_clock() {
    if (!options_.timestamp) return;
    const CuptiApi& api = *api_;
    CUptiResult trc = api.ActivityRegisterTimestampCallback
                          ? api.ActivityRegisterTimestampCallback(options_.timestamp)
                          : CUPTI_ERROR_API_NOT_IMPLEMENTED;
    timestamp_registered_ = trc == CUPTI_SUCCESS;
    if (!timestamp_registered_) {
        // Fall back to moving CUPTI's clock onto ours by the offset between them, read back to back.
        uint64_t cupti_ts = 0;
        uint64_t ours = options_.timestamp();
        if (api.GetTimestamp(&cupti_ts) == CUPTI_SUCCESS && cupti_ts != 0) {
            uint64_t ours_after = options_.timestamp();
            int64_t offset = static_cast<int64_t>(ours / 2 + ours_after / 2) - static_cast<int64_t>(cupti_ts);
            translator_.set_timestamp_offset(offset);
        }
        status(StatusLevel::Warning, trc,
               "cuptiActivityRegisterTimestampCallback failed (" + result_name(api_, trc) +
                   "): GPU timestamps are CUPTI's clock shifted by an offset measured at start");
    }
}

// The kinds on at start (the capture window is open). None would enable: CUPTI is given back, with the reason.
bool Session::start_recording(StartResult& result) {
    const CuptiApi& api = *api_;
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
        return false;
    }
    recording_.store(true, std::memory_order_release);
    return true;
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
    // Must follow every enabling of RUNTIME/DRIVER, which resets these per-call settings. Only ids the loaded CUPTI
    // knows; where it lacks the function (12.4) the translator drops the same calls (filter_in_translator).
    const CuptiApi& api = *api_;
    auto off = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
        if (!api.knows_cbid(domain, cbid)) return;
        auto filter = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? api.ActivityEnableRuntimeApi : api.ActivityEnableDriverApi;
        if (filter) filter(cbid, 0);
    };
    if (options_.filter_noisy_apis)
        for (const ApiCallId& c : noisy_api_calls()) off(c.domain, c.cbid);
    if (!options_.nested_driver_calls)
        for (CUpti_CallbackId cbid : runtime_internal_driver_calls()) off(CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

void Session::filter_in_translator() {
    const CuptiApi& api = *api_;
    if (options_.api_records != ApiRecords::Activity) return;  // callbacks are switched off per id instead
    auto drop = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
        auto filter = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? api.ActivityEnableRuntimeApi : api.ActivityEnableDriverApi;
        if (!filter) translator_.drop_api_call(domain, cbid);
    };
    if (options_.filter_noisy_apis)
        for (const ApiCallId& c : noisy_api_calls()) drop(c.domain, c.cbid);
    if (!options_.nested_driver_calls)
        for (CUpti_CallbackId cbid : runtime_internal_driver_calls()) drop(CUPTI_CB_DOMAIN_DRIVER_API, cbid);
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

}  // namespace gprof::collector::cupti
