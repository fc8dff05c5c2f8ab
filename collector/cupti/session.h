// The CUPTI session: one per process. Loads CUPTI, subscribes, hands buffers to CUPTI and completed ones to
// the pipeline, switches the activity kinds on and off when the capture window (capture/capture_window.h) says so,
// and handles the few callbacks activities cannot replace (cudaProfilerStart/Stop, cudaDeviceReset, context
// creation, call sites at API exit). Its code is split by job, as kineto splits its CUPTI classes:
//   subscriber.cpp  loading, version checks, the subscription and its refusals; start, rebind, fork
//   activity.cpp    activity kinds, buffers, the trace clock for GPU records, flushing
//   callbacks.cpp   the subscriber callback, API call records from callbacks, call sites
//
// Threading and lock order (kineto documents an ABBA deadlock with CUPTI's internal lock):
//   - CUPTI's buffer callbacks take only the buffer pool's and the pipeline's short mutexes, never held while
//     calling CUPTI.
//   - state_mutex_ (enable/disable bookkeeping) is held while calling cuptiActivityEnable/Disable, and is never
//     taken by a buffer callback. The capture window's mutex, when it switches the kinds, comes before it. flush() holds no lock at all while calling cuptiActivityFlushAll, which runs
//     the buffer-completed callback on the calling thread.
//   - Nothing here throws across a C boundary; CUPTI callbacks catch everything.
//   - cuptiFinalize is never called (kineto/jax/pytorch report segfaults when it races a flush at teardown):
//     the session and its pool are leaked at exit on purpose.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cupti/call_categories.h"
#include "cupti/call_stacks.h"
#include "cupti/translate.h"
#include "cupti_loader/loader.h"
#include "cupti_loader/search.h"
#include "gprof/env/cuda_backtrace.h"
#include "gprof/trace/records.h"
#include "pipeline/pipeline.h"

namespace gprof::collector::cupti {

// Where API call records come from (GPROF_CUDA_API; docs/performance.md says what each costs).
enum class ApiRecords : uint8_t {
    Activity = 0,  // CUPTI's RUNTIME and DRIVER activity kinds
    Callback = 1,  // CUPTI's RUNTIME_API/DRIVER_API callbacks, stamped and buffered by us (cupti/api_calls.h)
    Off = 2,       // none (GPU activity only)
};

struct SessionOptions {
    LoadOptions load;                  // where to find libcupti (load_options_from_environment())
    size_t buffer_bytes = 8u << 20;    // GPROF_BUFFER_MB
    size_t max_buffers = 0;            // 0: max(8, 512 MiB / buffer_bytes)
    bool start_paused = false;         // begin with the kinds off (the capture window is closed)
    // Call sites (cupti/call_stacks.h): frames per stack, 0 = off (no API callbacks for them at all).
    uint32_t backtrace_depth = 0;
    // Which calls get one and from how long a call (--cudabacktrace; every call by default).
    env::CudaBacktraceSpec call_sites = env::CudaBacktraceSpec::every_call();
    uint32_t call_site_max_stacks = 65536;  // the bound of the table of distinct stacks
    bool filter_noisy_apis = true;     // drop cudaGetDevice, cuCtxGetCurrent, ... as kineto does
    // GPROF_CUDA_GRAPH_TRACE=graph: CUPTI_ACTIVITY_KIND_GRAPH_TRACE, one record per graph launch *instead of* the
    // kernel/memcpy/memset records of its nodes. false (node, the default): the nodes, like any other work.
    bool graph_level = false;
    // GPROF_CUDA_NESTED_DRIVER_CALLS=1: keep the driver calls the CUDA runtime makes internally
    // (runtime_internal_driver_calls()); by default they are switched off at the source.
    bool nested_driver_calls = false;
    ApiRecords api_records = ApiRecords::Activity;
    // CUPTI's buffer attributes (cuptiActivitySetAttribute), 0/false = CUPTI's default: DEVICE_BUFFER_SIZE in bytes,
    // DEVICE_BUFFER_PRE_ALLOCATE_VALUE, and ZEROED_OUT_ACTIVITY_BUFFER with our pool handing out zeroed buffers
    // (zeroed again on the writer thread after translation, so CUPTI never zeroes one on the app's thread).
    size_t device_buffer_bytes = 0;
    size_t device_buffers_preallocated = 0;
    bool zeroed_buffers = false;
    // cudaProfilerStart returned (true) / cudaProfilerStop was entered (false): once per range, although the
    // runtime's call and the driver's nested one both call back. The capture window decides what it means.
    void (*profiler_range)(bool start) = nullptr;
    // The trace clock, registered with cuptiActivityRegisterTimestampCallback so GPU records share it
    // (clock.h's gprof_collector_cupti_timestamp). Also stamps Capture records. Null: CUPTI's clock.
    CUpti_TimestampCallbackFunc timestamp = nullptr;
};

struct StartResult {
    bool ok = false;
    int32_t code = 0;    // the CUptiResult that refused us; -1 when libcupti could not be loaded
    std::string reason;  // one line: "CUPTI unavailable: ..." (empty when ok)
};

class Session {
public:
    // The process-wide session (never destroyed). Tests may construct their own; CUPTI's buffer callbacks
    // go to the session that started last.
    static Session& instance();
    Session() = default;

    // Loads CUPTI and starts tracing into `pipeline`. Once per process: a second call returns the first result.
    // On failure CUPTI is left as it was (unsubscribed) and the app runs untouched; the caller prints the reason
    // and writes it as a Status record. Non-fatal problems (a kind that would not enable) are posted to the
    // pipeline as Status warnings by the session itself.
    StartResult start(Pipeline& pipeline, const SessionOptions& options);

    bool started() const { return started_.load(std::memory_order_acquire); }
    // Activity kinds currently enabled (false before start and while the capture window is closed).
    bool recording() const { return recording_.load(std::memory_order_acquire); }

    // cuptiActivityFlushAll: completed buffers go to the pipeline (on this thread). forced also returns buffers
    // with incomplete records (exit). The session registers no periodic hook of its own: the core runs
    // flush(false) every flush period and flush(true) at exit under a watchdog. Returns false when CUPTI failed
    // or the session is not running. Call with no lock held that a buffer callback or the pipeline takes, and
    // never from an NVTX handler (CUPTI allows it only from runtime/driver API callbacks and plain threads).
    bool flush(bool forced);

    // Switches the activity kinds on or off: the capture window's lever (it writes the Capture records).
    // Idempotent. Any thread except inside a buffer callback. Returns whether recording is now as asked; a failure
    // to enable any kind is written as an Error Status.
    bool set_recording(bool on);

    // The process went on after a failed exec with a new pipeline (and trace file): buffers and records go there
    // from now on.
    void rebind(Pipeline& pipeline) noexcept;

    // In a forked child: CUPTI state inherited from the parent is unusable; make every entry point a no-op
    // without calling CUPTI. The child's new session, if any, comes from the driver calling
    // InitializeInjection again.
    void abandon_after_fork();

    const CuptiApi* api() const { return api_; }
    uint32_t cupti_version() const { return api_ ? api_->version : 0; }

    // For the stand-in tests and statistics.
    struct Counters {
        uint64_t buffers_requested = 0;
        uint64_t buffers_completed = 0;
        uint64_t dropped_reported = 0;
        uint64_t call_sites = 0;  // CallSite records posted
        uint64_t profiler_starts = 0;
        uint64_t profiler_stops = 0;
        uint64_t api_callbacks = 0;  // API calls recorded from callbacks (ApiRecords::Callback)
    };
    Counters counters() const;

    // ---- internal: called from the C callbacks ----
    void on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept;
    void on_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) noexcept;
    void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept;

    Translator& translator() { return translator_; }
    const CallSites& call_sites() const { return call_sites_; }

    // Another CUPTI client of the program subscribed (cupti/clients.h) and CUPTI answered `result`: when it was
    // refused because we hold the subscription, a Warning Status and one stderr line name it and the way out.
    void other_client_subscribed(const std::string& who, CUptiResult result) noexcept;

    // The name we subscribe under (cuptiSubscribe_v2): other tools' refusals say "CUPTI for gprof-run".
    static constexpr const char* kSubscriberName = "gprof-run";

private:
    // The steps of start(), in order. Those that can refuse fill `result` and return false.
    bool load_checked(StartResult& result);       // libcupti loaded, buffer pool sized, driver new enough
    bool subscribe_checked(StartResult& result);  // subscribed (a forked child retries), buffer callbacks registered
    CUptiResult register_buffer_callbacks();
    void register_clock();                        // SessionOptions::timestamp for GPU records
    void enable_control_callbacks();              // profiler start/stop, device reset, context creation
    void start_call_sites(Pipeline& pipeline);
    void start_api_records(Pipeline& pipeline);   // ApiRecords::Callback's callbacks, or Off's word
    bool start_recording(StartResult& result);    // the kinds on, unless the capture window starts closed
    void announce(Pipeline& pipeline);            // CudaInfo and what is (not) recorded, as Status lines

    // One line naming what refused us and what the user can do about it. holder: CUPTI's name for the subscriber
    // that holds it (cuptiSubscribe_v2's oldSubscriberName), empty when unknown.
    static std::string refusal_text(const CuptiApi* api, const char* what, CUptiResult rc,
                                    const std::string& holder = {});
    static void CUPTIAPI callback_entry(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                        const void* data);
    static void reset_thread_ids_after_fork();  // in a forked child: cached kernel tids are the parent's
    // cuptiSubscribe_v2 with our name where CUPTI has it; on a refusal `holder` gets the holder's name.
    CUptiResult subscribe(std::string& holder);
    bool enable_kinds(bool report, CUptiResult& first_failure);  // state_mutex_ held
    void disable_kinds();            // state_mutex_ held
    void apply_api_filters();
    void filter_in_translator();  // the filters the loaded CUPTI cannot apply (12.4: no cuptiActivityEnableDriverApi)
    void status(trace::StatusLevel level, int32_t code, const std::string& message);
    void profiler_start();
    void profiler_stop();
    void on_call_site(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb, bool enter,
                      bool runtime);
    void enable_call_site_callbacks();
    static void call_site_report_hook(void* ctx, trace::TraceWriter& w, bool final);
    // Registered with atexit when CUPTI starts (inside cuInit, after the driver set up its own teardown, so this
    // runs before it): the device queries still pending are run while the driver answers.
    static void run_device_queries_before_driver_exit();
    void on_context_created(CUcontext ctx);
    void on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
    bool api_callback_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const;
    void set_buffer_attributes();
    static void drain_api_hook(void* ctx, trace::TraceWriter& w, bool final);

    std::mutex start_mutex_;
    StartResult start_result_;
    bool start_attempted_ = false;

    const CuptiApi* api_ = nullptr;
    Translator translator_;  // per session: its name caches belong to this session's writer
    CallCategories categories_;  // built at start when call sites are on
    CallSites call_sites_;
    std::atomic<Pipeline*> pipeline_{nullptr};
    CUpti_SubscriberHandle subscriber_ = nullptr;
    CUpti_SubscriberHandle parent_subscriber_ = nullptr;  // in a forked child: the parent's, inherited
    bool forked_child_ = false;
    SessionOptions options_;
    std::atomic<bool> started_{false};
    std::atomic<bool> abandoned_{false};
    std::atomic<bool> recording_{false};
    bool timestamp_registered_ = false;

    std::mutex state_mutex_;                  // enabled_ bookkeeping; see lock order above
    std::vector<CUpti_ActivityKind> enabled_;
    bool enable_failure_reported_ = false;    // a kind that will not enable is warned about once, not per range
    std::atomic<bool> in_profiler_range_{false};
    std::atomic<uint32_t> devices_seen_{0};   // bit per device ordinal < 32 already posted
    std::atomic<uint32_t> device_queries_pending_{0};  // posted to the writer, not yet run
    uint32_t driver_version_ = 0;             // cuDriverGetVersion, read at start before any kind is enabled
    std::mutex clients_mutex_;
    std::set<std::string> clients_said_;      // other CUPTI clients already reported

    std::atomic<uint64_t> buffers_requested_{0}, buffers_completed_{0}, dropped_reported_{0}, call_sites_posted_{0},
        profiler_starts_{0}, profiler_stops_{0}, api_callbacks_{0};
};

// The ActivityConsumer the session installs into the pipeline: translate with `translator` on the writer
// thread, then give the buffer back to the pool. Exposed for tests.
ActivityConsumer activity_consumer(Translator& translator);

// The activity kinds the session enables, in order (docs/cupti.md). graph_level: GRAPH_TRACE is among them; api:
// RUNTIME and DRIVER are among them only with ApiRecords::Activity.
const std::vector<CUpti_ActivityKind>& traced_activity_kinds(bool graph_level,
                                                             ApiRecords api = ApiRecords::Activity);

// Driver calls the CUDA runtime makes on its own behalf (lookups around launches, entry points, lazy loading),
// switched off at the source unless SessionOptions::nested_driver_calls. docs/cupti.md says why each is here.
const std::vector<CUpti_CallbackId>& runtime_internal_driver_calls();

// Calls libraries make thousands of times per step, useless in a profile (kineto drops the same ones): left out
// with SessionOptions::filter_noisy_apis.
struct ApiCallId {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
};
const std::vector<ApiCallId>& noisy_api_calls();
bool is_noisy_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

}  // namespace gprof::collector::cupti
