// The CUPTI session's callback side: the subscriber callback, the few callbacks activity records cannot replace
// (cudaProfilerStart/Stop, cudaDeviceReset, context creation), API call records from callbacks (GPROF_CUDA_API=
// callback) and call sites at API exit. Loading and subscribing are in subscriber.cpp, activity in activity.cpp.
#include "cupti/session.h"

#include <unistd.h>

#include <algorithm>

#include "base/reentry.h"
#include "base/clock.h"
#include "cupti/api_calls.h"
#include "cupti/probes.h"
#include "process/process_info.h"
#include "stacks/unwind.h"
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

}  // namespace

void CUPTIAPI Session::callback_entry(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const void* data) {
    static_cast<Session*>(userdata)->on_callback(domain, cbid, data);
}

void Session::reset_thread_ids_after_fork() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

// Callbacks only for what activity records cannot give: capture ranges, device resets, new contexts.
void Session::enable_control_callbacks() {
    const CuptiApi& api = *api_;
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
}

// Call sites on (SessionOptions::backtrace_depth > 0): the stack table, the API callbacks they need, the report.
void Session::start_call_sites(Pipeline& pipeline) {
    const CuptiApi& api = *api_;
    categories_.build(api);
    CallSites::Options co;
    co.depth = std::min<uint32_t>(options_.backtrace_depth, trace::kMaxBacktraceFrames);
    co.max_stacks = options_.call_site_max_stacks;
    co.cupti_address = reinterpret_cast<const void*>(api.GetVersion);
    call_sites_.configure(co);
    enable_call_site_callbacks();
    pipeline.add_periodic_hook(call_site_report_hook, this);
    status(StatusLevel::Info, 0,
           "call sites on (at API exit) for " + call_site_filter_text(options_.call_sites) + "; depth " +
               std::to_string(co.depth) + " frames, unwinder " + stacks::unwinder_name() + ", at most " +
               std::to_string(co.max_stacks) + " distinct stacks");
}

// API call records from callbacks (ApiRecords::Callback), or none at all (Off): the activity kinds say the rest.
void Session::start_api_records(Pipeline& pipeline) {
    const CuptiApi& api = *api_;
    if (options_.api_records == ApiRecords::Callback) {
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
        if (options_.backtrace_depth == 0) {
            // With call sites the callbacks must still reach on_call_site (its runtime depth counts every runtime
            // call); the filter is then applied in on_callback.
            // Only ids the loaded CUPTI knows (a 12.4 CUPTI has 754 driver ids, not the 807 of our headers).
            auto off = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
                if (api.knows_cbid(domain, cbid)) api.EnableCallback(0, subscriber_, domain, cbid);
            };
            if (!options_.nested_driver_calls)
                for (CUpti_CallbackId cbid : runtime_internal_driver_calls()) off(CUPTI_CB_DOMAIN_DRIVER_API, cbid);
            if (options_.filter_noisy_apis)
                for (const ApiCallId& c : noisy_api_calls()) off(c.domain, c.cbid);
        }
        pipeline.add_periodic_hook(drain_api_hook, this, /*also_on_nudge=*/true);
        if (ok) status(StatusLevel::Info, 0, "CUDA API calls recorded from CUPTI callbacks (GPROF_CUDA_API=callback)");
    } else if (options_.api_records == ApiRecords::Off) {
        status(StatusLevel::Info, 0, "CUDA API calls not recorded (GPROF_CUDA_API=off): GPU activity only");
    }
}

void Session::drain_api_hook(void* ctx, trace::TraceWriter& w, bool) {
    auto* self = static_cast<Session*>(ctx);
    Pipeline* p = self->pipeline_.load(std::memory_order_acquire);
    drain_api_calls(w, self->translator_, p ? static_cast<uint32_t>(p->writer_tid()) : 0);
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
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && !options_.nested_driver_calls && trace::is_runtime_internal_driver_cbid(cbid))
        return false;
    return !(options_.filter_noisy_apis && is_noisy_api_call(domain, cbid));
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
            // Every id the loaded CUPTI knows (its own count: 754 in 12.4, 807 in 13.0), not our headers' count.
            for (uint32_t cbid = 1; cbid < CallCategories::kMaxCbid && rc == CUPTI_SUCCESS; ++cbid) {
                if (!api.knows_cbid(CUPTI_CB_DOMAIN_DRIVER_API, cbid) ||
                    (api.driver_cbids == 0 && cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE))
                    break;
                if (!spec.on[static_cast<int>(categories_.of(CUPTI_CB_DOMAIN_DRIVER_API, cbid))]) continue;
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
        write_status(w, trace::Component::Cupti, level, text);
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
    device_queries_pending_.fetch_add(1, std::memory_order_acq_rel);
    p->post([this, p, device](trace::TraceWriter& w) {
        auto self = static_cast<uint32_t>(::gettid());
        if (self == p->writer_tid()) translator_.set_own_thread(self);  // both run on this thread
        DeviceInfo info;
        bool described = query_device(device, info);
        device_queries_pending_.fetch_sub(1, std::memory_order_acq_rel);
        if (described) {
            write_device_record(w, info);
            return;
        }
        if (cuda_driver_loaded())  // a driver that refused, not a test without one
            write_status(w, trace::Component::Cupti, StatusLevel::Warning,
                         "device " + std::to_string(device) +
                             " has a context, but the driver no longer answered for its name and properties (the "
                             "process was already ending): the device is unnamed in this trace");
    });
    // Now, not at the writer's next period: the driver answers only until the process starts to exit (it shuts
    // itself down in exit handlers that run before our session's end), and a short program ends within
    // milliseconds of its first context (the H200's known-answer runs of 2026-11-27: 8-26 ms; the period is
    // 100 ms). A program faster than the woken writer: run_device_queries_before_driver_exit.
    p->nudge();
}

void Session::run_device_queries_before_driver_exit() {
    Session& s = instance();
    if (s.abandoned_.load(std::memory_order_acquire)) return;
    if (s.device_queries_pending_.load(std::memory_order_acquire) == 0) return;
    if (Pipeline* p = s.pipeline_.load(std::memory_order_acquire)) p->flush(std::chrono::milliseconds(1000));
}

}  // namespace gprof::collector::cupti
