// The CUPTI session's subscriber: loading CUPTI, the version checks, the subscription and what a refusal says; the
// session's life (start in named steps, rebind after a failed exec, abandon in a forked child). Activity kinds and
// buffers are in activity.cpp, API callbacks and call sites in callbacks.cpp (kineto splits its CUPTI work the same
// way: CuptiActivityApi, CuptiCallbackApi, the profiler).
#include "cupti/session.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/log.h"
#include "cupti/api_calls.h"
#include "cupti/buffers.h"
#include "cupti/probes.h"
#include "process/process_info.h"

namespace gprof::collector::cupti {
namespace {

using trace::StatusLevel;

}  // namespace

std::string Session::refusal_text(const CuptiApi* api, const char* what, CUptiResult rc, const std::string& holder) {
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

    if (!load_checked(result) || !subscribe_checked(result)) return result;
    pipeline_.store(&pipeline, std::memory_order_release);
    static bool exit_hook = false;  // once per process image (atexit handlers survive fork)
    if (!exit_hook) {
        exit_hook = true;
        std::atexit(run_device_queries_before_driver_exit);
    }
    translator_.set_api(api_);
    filter_in_translator();
    pipeline.set_activity_consumer(activity_consumer(translator_));
    register_clock();  // before any kind is enabled
    enable_control_callbacks();
    if (options.backtrace_depth > 0) start_call_sites(pipeline);
    start_api_records(pipeline);
    set_buffer_attributes();
    if (!options.start_paused && !start_recording(result)) return result;
    announce(pipeline);
    started_.store(true, std::memory_order_release);
    result.ok = true;
    return result;
}

bool Session::load_checked(StartResult& result) {
    const SessionOptions& options = options_;
    // The driver's CUDA version decides which CUPTI can work (below 13000 only a 12.x one). Read before any kind is
    // enabled: our own cuDriverGetVersion is not the program's call.
    driver_version_ = driver_version();
    LoadOptions load = options.load;
    load.driver_version = driver_version_;
    LoadResult loaded = load_cupti(load);
    if (!loaded.api) {
        result.code = -1;
        result.reason = "CUPTI unavailable: " + loaded.reason;
        return false;
    }
    // A CUPTI named by GPROF_CUPTI_LIB, or the one the program loaded, for a newer CUDA than the driver's: CUPTI would
    // fail with CUPTI_ERROR_NOT_INITIALIZED. Say so with both versions and the way out, and leave CUDA to the program.
    if (std::string why = unusable_with_driver(*loaded.api, driver_version_); !why.empty()) {
        result.code = static_cast<int32_t>(CUPTI_ERROR_NOT_INITIALIZED);
        result.reason = "CUPTI unavailable: " + why + ": no GPU activity is recorded (NVTX and processes are). " +
                        cupti_install_hint(driver_version_);
        return false;
    }
    api_ = loaded.api;  // leaked with the session: CUPTI stays loaded for the life of the process
    const CuptiApi& api = *api_;

    size_t max_buffers = options.max_buffers;
    if (max_buffers == 0) max_buffers = std::max<size_t>(8, (512u << 20) / std::max<size_t>(options.buffer_bytes, 1));
    // CUPTI 12.9 (API 27) and later take a refused buffer gracefully; older ones crashed on it, so with them the pool
    // never refuses.
    const bool refusal_safe = api.release.cuda_major > 12 || api.version >= 27;
    buffer_pool().configure(options.buffer_bytes, max_buffers, refusal_safe);
    buffer_pool().set_zeroed(options.zeroed_buffers);

    // CUPTI's default thread ids are pthread_self() values; the rest of the trace (NVTX, Thread records)
    // uses kernel tids, so ask for those.
    if (api.SetThreadIdType) api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    return true;
}

bool Session::subscribe_checked(StartResult& result) {
    const CuptiApi& api = *api_;
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
            return false;
        }
    }
    if (rc != CUPTI_SUCCESS) {
        subscriber_ = nullptr;
        result.code = static_cast<int32_t>(rc);
        result.reason = "CUPTI unavailable: " + refusal_text(api_, "cuptiSubscribe", rc, holder);
        return false;
    }
    rc = register_buffer_callbacks();
    if (rc != CUPTI_SUCCESS) {
        api.Unsubscribe(subscriber_);
        subscriber_ = nullptr;
        result.code = static_cast<int32_t>(rc);
        result.reason = "CUPTI unavailable: " + refusal_text(api_, "cuptiActivityRegisterCallbacks", rc);
        return false;
    }
    return true;
}

void Session::announce(Pipeline& pipeline) {
    const CuptiApi& api = *api_;
    CudaVersions versions;
    versions.driver_version = driver_version_;
    versions.cupti_api_version = api.version;
    versions.cupti_library = api.path;
    pipeline.post_cuda_info(versions);
    status(StatusLevel::Info, 0, cupti_release_text(api.release) + " loaded from " + api.path + " (" + api.found_by + ")");
    // What this release's records cannot say (12.x: Kernel9 and MemoryPool2), and the filters CUPTI cannot apply.
    if (std::string lacking = fields_unknown(api); !lacking.empty())
        status(StatusLevel::Info, 0,
               cupti_release_text(api.release) + " records lack " + lacking + ": unknown in this trace (they read 0)");
    if (!api.ActivityEnableDriverApi && options_.api_records == ApiRecords::Activity &&
        (!options_.nested_driver_calls || options_.filter_noisy_apis))
        status(StatusLevel::Info, 0,
               cupti_release_text(api.release) + " has no cuptiActivityEnableDriverApi (CUDA 12.5 added it): the "
               "collector drops the calls it filters after CUPTI recorded them");
    status(StatusLevel::Info, 0,
           std::string("CUDA graphs traced ") +
               (options_.graph_level ? "per graph launch (GRAPH_TRACE: the kernels, copies and memsets inside graphs "
                                       "are not recorded)"
                                     : "node by node"));
    if (!options_.nested_driver_calls)
        status(StatusLevel::Info, 0,
               "driver calls the CUDA runtime makes internally (cuKernelGetName, cuGetProcAddress, cuLibraryGetKernel, "
               "...) are not recorded (GPROF_CUDA_NESTED_DRIVER_CALLS=1 records them)");
}

CUptiResult Session::subscribe(std::string& holder) {
    const CuptiApi& api = *api_;
    holder.clear();
    if (!api.Subscribe_v2) return api.Subscribe(&subscriber_, callback_entry, this);
    // Named, so that a tool refused because of us is told who holds CUPTI ("CUPTI for gprof-run"), and we learn
    // who holds it when we are the one refused.
    char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = kSubscriberName;
    params.oldSubscriberName = old_name;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    CUptiResult rc = api.Subscribe_v2(&subscriber_, callback_entry, this, &params);
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
    device_queries_pending_.store(0);
    reset_thread_ids_after_fork();
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

}  // namespace gprof::collector::cupti
