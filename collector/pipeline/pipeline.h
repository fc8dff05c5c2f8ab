// Pipeline: the one place where records reach the trace file.
//
// It owns the single TraceWriter (which is not thread-safe) and one background writer thread. Every other
// thread only *posts*: CUPTI's buffer-completed callback hands over whole activity buffers, any thread posts
// metadata (status, CUDA info, devices, capture markers, dropped counts, thread names, modules). The writer
// thread turns them into records, runs the periodic hooks (NVTX drain, CUPTI periodic flush) every flush
// period and writes the open chunk, so a SIGKILL loses at most about one period.
//
// Threading contract
//   - post_*() and submit_activity_buffer(): any thread, any time after start(), including from inside CUPTI
//     callbacks. They take a short internal mutex that is never held while calling out (into CUPTI, hooks or
//     the translator), so CUPTI's own lock can never be taken inside it (no ABBA, kineto documents one with CUPTI's internal lock).
//   - Everything given a TraceWriter& (hooks, the activity consumer) runs on the writer thread only.
//   - flush_from_signal_handler(): async-signal-safe, any thread.
//   - None of the functions throws.
#pragma once

#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gprof/trace/header.h"
#include "gprof/trace/records.h"
#include "gprof/trace/writer.h"

namespace gprof::collector {

// Device properties as the CUPTI side learns them (strings are interned by the writer thread).
struct DeviceInfo {
    uint32_t id = 0;
    std::string name;
    uint32_t cc_major = 0, cc_minor = 0;
    uint32_t sm_count = 0;
    uint64_t global_memory_bytes = 0;
    std::string uuid;  // "GPU-xxxxxxxx-...", empty when unknown
};

struct CudaVersions {
    uint32_t driver_version = 0;
    uint32_t runtime_version = 0;
    uint32_t cupti_api_version = 0;
    std::string cupti_library;  // path of the libcupti that was loaded
};

// A Device record from `device` (writer thread).
void write_device_record(trace::TraceWriter& writer, const DeviceInfo& device);
// A Status record stamped now (writer thread: the hooks that say something at the end of a trace).
void write_status(trace::TraceWriter& writer, trace::Component component, trace::StatusLevel level,
                  std::string_view text);

// A loaded object, for symbolisation outside the target.
struct ModuleInfo {
    uint64_t base = 0;
    uint64_t size = 0;
    uint64_t file_offset = 0;
    std::string path;
    uint32_t build_id_size = 0;
    uint8_t build_id[trace::kMaxBuildIdBytes] = {};
};

// Consumes one completed CUPTI activity buffer on the writer thread: encodes its records into `writer`
// (the CUPTI session's Translator) and then gives the buffer back to its pool. Installed by the
// session before CUPTI can complete a buffer. Without a consumer, submitted buffers are counted as dropped
// (DropSource::CollectorQueue) and freed with std::free.
struct ActivityConsumer {
    // Returns the number of records written (for statistics only).
    size_t (*consume)(void* ctx, const uint8_t* buffer, size_t valid_size, trace::TraceWriter& writer) = nullptr;
    void (*release)(void* ctx, uint8_t* buffer) = nullptr;
    void* ctx = nullptr;
};

// Runs on the writer thread at every flush period, and once more with final = true inside finish().
using PeriodicHook = void (*)(void* ctx, trace::TraceWriter& writer, bool final);

class Pipeline {
public:
    struct Options {
        uint32_t flush_ms = 100;          // period of the background flush (config clamps it to 10..200)
        size_t chunk_bytes = 256 * 1024;  // TraceWriter chunk payload
        trace::DescriptorGuard* guard = nullptr;  // the trace file's (process/trace_file.h); null: the fd is ours alone
    };

    Pipeline();
    ~Pipeline();  // finish()es if still running
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    // Takes ownership of fd, writes the header and starts the writer thread. False (fd closed) on failure.
    bool start(int fd, const trace::HeaderInfo& header, const Options& options);
    bool running() const { return running_.load(std::memory_order_acquire); }
    // The trace file's first write error (errno), 0 when none. After start() failed: why.
    int write_error() const { return writer_.error(); }

    // ---- wiring (before or after start) ----
    void set_activity_consumer(const ActivityConsumer& consumer);
    // also_on_nudge: the hook also runs in the early rounds nudge() asks for (the NVTX drain), not only every period.
    void add_periodic_hook(PeriodicHook hook, void* ctx, bool also_on_nudge = false);

    // ---- any thread ----
    // CUPTI's buffer-completed callback: the buffer is owned by the pipeline until the consumer releases it.
    // buffer may be null or valid_size 0 (then it is only released).
    void submit_activity_buffer(uint8_t* buffer, size_t valid_size);

    void post_status(trace::Component component, trace::StatusLevel level, int32_t code, std::string_view message);
    void post_cuda_info(const CudaVersions& versions);
    void post_device(const DeviceInfo& device);
    // timestamp 0 = now (trace clock).
    void post_capture(trace::CaptureAction action, trace::CaptureReason reason, trace::Timestamp timestamp = 0);
    void post_dropped(trace::DropSource source, uint64_t count, uint32_t context = 0, uint32_t stream = 0);
    void post_thread_name(uint64_t tid, std::string_view name);
    void post_module(const ModuleInfo& module);
    // A distinct call stack (cupti/call_stacks.h). False when the queue refused it: the caller must not name its id.
    bool post_stack(const trace::Stack& stack);
    // One API call's call site; it names stacks posted before it. Refused at the queue's cap like any post (counted).
    void post_call_site(const trace::CallSite& call_site);
    // Anything else: fn runs on the writer thread with the writer (allocates; not for hot paths).
    void post(std::function<void(trace::TraceWriter&)> fn);

    // Asks the writer thread to run its hooks and drain now rather than at the end of its period, without
    // waiting: the NVTX streams call it when their blocks pile up, so the writer reads (and frees for reuse) what
    // a fast producer wrote before the producer needs fresh, never-touched memory (page faults: measured as the
    // largest app-thread cost of a tight NVTX loop). Cheap when the writer is already awake (one relaxed load);
    // any thread; never blocks. Not async-signal-safe.
    void nudge() noexcept;

    // CPU time the writer thread has used so far (ns; 0 when unknown), read from any thread: the end's account of
    // itself says how much of its time was the writer's work and how much waiting for a core.
    uint64_t writer_cpu_ns() const noexcept;

    // Wakes the writer thread and waits until everything posted before this call, plus a run of the hooks,
    // is written to the file. False on timeout or when not running.
    bool flush(std::chrono::milliseconds timeout);

    // Drains everything, runs the hooks with final = true, writes the End record and joins the writer
    // thread. Idempotent. Must not be called from the writer thread or a hook. ended_by_signal: End.signal.
    void finish(uint32_t ended_by_signal = 0);

    // Async-signal-safe: writes the writer's open chunk (records already encoded). Nothing else.
    void flush_from_signal_handler() noexcept;

    // In a forked child: this pipeline belongs to the parent (its thread does not exist here, its chunk
    // holds the parent's records). Writes nothing; the object becomes inert and must be leaked or destroyed without
    // further use. (The child's copy of the descriptor is closed with the rest of the collector's: descriptors.h.)
    void abandon_after_fork() noexcept;

    // Statistics (approximate while running).
    uint64_t activity_buffers() const { return activity_buffers_.load(std::memory_order_relaxed); }
    uint64_t activity_records() const { return activity_records_.load(std::memory_order_relaxed); }
    // Messages refused because kMaxQueuedMessages were already waiting (written as a Dropped record).
    uint64_t queue_dropped() const { return queue_dropped_.load(std::memory_order_relaxed); }
    // The queue's cap: beyond it a post_*() is dropped and counted, so a writer that falls behind cannot grow the
    // program's memory without bound. Activity buffers are never refused here (the buffer pool caps them).
    static constexpr size_t kMaxQueuedMessages = 1u << 16;
    // CallSites waiting for the writer (24 bytes each: 6 MiB at the cap); past it one is dropped and counted the same
    // way (a Dropped record, CollectorQueue).
    static constexpr size_t kMaxQueuedCallSites = 1u << 18;
    uint64_t nudge_rounds() const { return nudge_rounds_.load(std::memory_order_relaxed); }
    // Bytes the writer holds for the open chunk (its buffer), for the end-of-run memory line.
    size_t chunk_bytes() const { return options_.chunk_bytes; }

    // The writer thread's kernel tid (0 before start): the collector's own thread, excluded from NVTX.
    uint64_t writer_tid() const { return writer_tid_.load(std::memory_order_relaxed); }

private:
    struct Message;
    bool enqueue(Message&& m);  // false: refused (finished, or at the cap: counted)
    void run();
    void drain_queue(std::deque<Message>& batch);
    void handle(Message& m);
    void run_hooks(bool final, bool nudge_round = false);
    void say_write_error();
    void write_queue_drops();
    void write_call_sites(std::vector<trace::CallSite>& batch);  // writer thread; clears batch

    trace::TraceWriter writer_;
    Options options_;
    std::thread thread_;
    clockid_t writer_clock_{};        // thread_'s CPU-time clock (set in start(), before the pipeline is shared)
    bool has_writer_clock_ = false;
    std::atomic<bool> running_{false};
    std::atomic<bool> abandoned_{false};
    std::atomic<uint64_t> writer_tid_{0};

    std::mutex mutex_;                  // guards queue_, stop_, flush counters, consumer_, hooks_
    std::condition_variable wake_;      // writer thread waits here
    std::condition_variable flushed_;   // flush() waits here
    std::deque<Message>* queue_ = nullptr;
    std::vector<trace::CallSite>* call_sites_ = nullptr;  // post_call_site(); swapped out with queue_
    std::vector<trace::CallSite> call_site_batch_;         // writer thread
    bool stop_ = false;
    uint64_t flush_requested_ = 0;
    std::atomic<bool> nudged_{false};    // nudge() asked for an early round
    std::atomic<bool> sleeping_{false};  // the writer is waiting for its period (a nudge must notify)
    uint64_t flush_done_ = 0;
    ActivityConsumer consumer_;
    struct Hook {
        PeriodicHook fn;
        void* ctx;
        bool on_nudge;
    };
    std::vector<Hook> hooks_;
    bool finished_ = false;
    uint32_t end_signal_ = 0;
    bool write_error_said_ = false;  // the first write error is said once on stderr

    std::atomic<uint64_t> activity_buffers_{0};
    std::atomic<uint64_t> activity_records_{0};
    std::atomic<uint64_t> nudge_rounds_{0};
    std::atomic<uint64_t> queue_dropped_{0};
    uint64_t queue_dropped_written_ = 0;  // writer thread
};

}  // namespace gprof::collector
