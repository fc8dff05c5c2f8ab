#include "pipeline/pipeline.h"

#include "base/reentry.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread_signals.h"

namespace gprof::collector {

namespace tr = gprof::trace;

void write_device_record(tr::TraceWriter& writer, const DeviceInfo& device) {
    tr::Device r;
    r.id = device.id;
    r.name = writer.intern(device.name.data(), device.name.size());
    r.cc_major = device.cc_major;
    r.cc_minor = device.cc_minor;
    r.sm_count = device.sm_count;
    r.global_memory_bytes = device.global_memory_bytes;
    r.uuid = device.uuid.empty() ? 0 : writer.intern(device.uuid.data(), device.uuid.size());
    writer.add(r);
}

void write_status(tr::TraceWriter& writer, tr::Component component, tr::StatusLevel level, std::string_view text) {
    tr::Status st;
    st.timestamp = clock::now();
    st.component = component;
    st.level = level;
    st.message = writer.intern(text.data(), text.size());
    writer.add(st);
}

struct Pipeline::Message {
    enum class Kind : uint8_t {
        Activity, Status, CudaInfo, Device, Capture, Dropped, ThreadName, Module, Stack, Function, Flush,
    };
    Kind kind = Kind::Flush;
    uint8_t* buffer = nullptr;
    size_t size = 0;
    tr::Timestamp timestamp = 0;
    tr::Status status;
    tr::Capture capture;
    tr::Dropped dropped;
    tr::Thread thread;
    std::string text;
    DeviceInfo device;
    CudaVersions versions;
    ModuleInfo module;
    std::unique_ptr<tr::Stack> stack;
    std::function<void(tr::TraceWriter&)> fn;
};

Pipeline::Pipeline() : queue_(new std::deque<Message>()), call_sites_(new std::vector<tr::CallSite>()) {}

Pipeline::~Pipeline() {
    if (abandoned_.load()) return;  // the parent's state in a forked child: touch nothing
    finish();
    delete queue_;
    delete call_sites_;
}

bool Pipeline::start(int fd, const tr::HeaderInfo& header, const Options& options) {
    options_ = options;
    tr::TraceWriter::Options wo;
    wo.chunk_bytes = options.chunk_bytes;
    wo.guard = options.guard;
    if (!writer_.open(fd, header, wo)) {
        log::warn("cannot write the trace header (errno {})", writer_.error());
        writer_.close();
        return false;
    }
    try {
        running_.store(true, std::memory_order_release);
        signals::BlockTermination blocked;  // a signal for the program never runs its handler on our thread
        thread_ = std::thread([this] { run(); });
        has_writer_clock_ = ::pthread_getcpuclockid(thread_.native_handle(), &writer_clock_) == 0;
    } catch (...) {
        running_.store(false);
        log::warn("cannot start the writer thread");
        writer_.finish(clock::now());
        return false;
    }
    return true;
}

void Pipeline::set_activity_consumer(const ActivityConsumer& consumer) {
    std::lock_guard lock(mutex_);
    consumer_ = consumer;
}

void Pipeline::add_periodic_hook(PeriodicHook hook, void* ctx, bool also_on_nudge) {
    std::lock_guard lock(mutex_);
    hooks_.push_back(Hook{hook, ctx, also_on_nudge});
}

bool Pipeline::enqueue(Message&& m) {
    try {
        std::lock_guard lock(mutex_);
        if (finished_ || abandoned_.load(std::memory_order_relaxed)) {
            // Too late to be written: give an activity buffer back so nothing leaks into CUPTI's accounting.
            if (m.kind == Message::Kind::Activity && m.buffer) {
                if (consumer_.release) consumer_.release(consumer_.ctx, m.buffer);
                else std::free(m.buffer);
            }
            return false;
        }
        if (m.kind != Message::Kind::Activity && m.kind != Message::Kind::Flush &&
            queue_->size() >= kMaxQueuedMessages) {
            queue_dropped_.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        queue_->push_back(std::move(m));
        return true;
    } catch (...) {
        // Out of memory: lose the message rather than the app.
        return false;
    }
}

void Pipeline::submit_activity_buffer(uint8_t* buffer, size_t valid_size) {
    Message m;
    m.kind = Message::Kind::Activity;
    m.buffer = buffer;
    m.size = valid_size;
    enqueue(std::move(m));
    // No wake-up: the writer picks buffers up at its next period. CUPTI completes buffers from its own
    // threads and from inside cuptiActivityFlushAll; waking here would only add context switches.
}

void Pipeline::post_status(tr::Component component, tr::StatusLevel level, int32_t code, std::string_view message) {
    try {
        Message m;
        m.kind = Message::Kind::Status;
        m.status.timestamp = clock::now();
        m.status.code = code;
        m.status.component = component;
        m.status.level = level;
        m.text.assign(message);
        enqueue(std::move(m));
    } catch (...) {
    }
}

void Pipeline::post_cuda_info(const CudaVersions& versions) {
    try {
        Message m;
        m.kind = Message::Kind::CudaInfo;
        m.timestamp = clock::now();
        m.versions = versions;
        enqueue(std::move(m));
    } catch (...) {
    }
}

void Pipeline::post_device(const DeviceInfo& device) {
    try {
        Message m;
        m.kind = Message::Kind::Device;
        m.device = device;
        enqueue(std::move(m));
    } catch (...) {
    }
}

void Pipeline::post_capture(tr::CaptureAction action, tr::CaptureReason reason, tr::Timestamp timestamp) {
    Message m;
    m.kind = Message::Kind::Capture;
    m.capture.timestamp = timestamp ? timestamp : clock::now();
    m.capture.action = action;
    m.capture.reason = reason;
    enqueue(std::move(m));
}

void Pipeline::post_dropped(tr::DropSource source, uint64_t count, uint32_t context, uint32_t stream) {
    if (count == 0) return;
    Message m;
    m.kind = Message::Kind::Dropped;
    m.dropped.timestamp = clock::now();
    m.dropped.count = count;
    m.dropped.context = context;
    m.dropped.stream = stream;
    m.dropped.source = source;
    enqueue(std::move(m));
}

void Pipeline::post_thread_name(uint64_t tid, std::string_view name) {
    try {
        Message m;
        m.kind = Message::Kind::ThreadName;
        m.thread.tid = tid;
        m.text.assign(name);
        enqueue(std::move(m));
    } catch (...) {
    }
}

void Pipeline::post_module(const ModuleInfo& module) {
    try {
        Message m;
        m.kind = Message::Kind::Module;
        m.module = module;
        enqueue(std::move(m));
    } catch (...) {
    }
}

bool Pipeline::post_stack(const tr::Stack& stack) {
    try {
        Message m;
        m.kind = Message::Kind::Stack;
        m.stack = std::make_unique<tr::Stack>(stack);
        return enqueue(std::move(m));
    } catch (...) {
        return false;
    }
}

void Pipeline::post_call_site(const tr::CallSite& call_site) {
    // Not a Message: one per recorded API call, so a 24-byte push into a vector the writer swaps out (no allocation
    // once both vectors have grown; a Message per call cost page faults: docs/performance.md "Native call sites").
    try {
        std::lock_guard lock(mutex_);
        if (finished_ || abandoned_.load(std::memory_order_relaxed)) return;
        if (call_sites_->size() >= kMaxQueuedCallSites) {
            queue_dropped_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        call_sites_->push_back(call_site);
    } catch (...) {
    }
}

void Pipeline::write_call_sites(std::vector<tr::CallSite>& batch) {
    for (const tr::CallSite& c : batch) writer_.add(c);
    batch.clear();
}

void Pipeline::post(std::function<void(tr::TraceWriter&)> fn) {
    try {
        Message m;
        m.kind = Message::Kind::Function;
        m.fn = std::move(fn);
        enqueue(std::move(m));
    } catch (...) {
    }
}

void Pipeline::nudge() noexcept {
    if (nudged_.load(std::memory_order_relaxed)) return;  // one already pending
    nudged_.store(true, std::memory_order_relaxed);
    // A nudge lost between the writer's check and its sleep costs nothing but the wait for the period.
    if (sleeping_.load(std::memory_order_acquire)) wake_.notify_one();
}

bool Pipeline::flush(std::chrono::milliseconds timeout) {
    try {
        std::unique_lock lock(mutex_);
        if (!running_.load() || finished_) return false;
        uint64_t ticket = ++flush_requested_;
        wake_.notify_one();
        return flushed_.wait_for(lock, timeout, [&] { return flush_done_ >= ticket || finished_; });
    } catch (...) {
        return false;
    }
}

void Pipeline::say_write_error() {
    if (write_error_said_ || !writer_.failed()) return;
    write_error_said_ = true;
    int err = writer_.error();
    if (writer_.descriptor_lost())
        log::warn("the program closed or replaced the trace's descriptor and the trace cannot be opened again ({}): "
                  "what cannot be written is counted and said at the end", std::strerror(err));
    else
        log::warn("cannot write the trace ({}): recording goes on, and what does not fit is counted and said at the end",
                  std::strerror(err));
}

void Pipeline::run_hooks(bool final, bool nudge_round) {
    std::vector<Hook> hooks;
    {
        std::lock_guard lock(mutex_);
        hooks = hooks_;
    }
    for (const Hook& h : hooks) {
        if (nudge_round && !h.on_nudge) continue;
        try {
            h.fn(h.ctx, writer_, final);
        } catch (...) {
            log::warn("a periodic hook threw; continuing");
        }
    }
}

void Pipeline::handle(Message& m) {
    using K = Message::Kind;
    switch (m.kind) {
    case K::Activity: {
        ActivityConsumer consumer;
        {
            std::lock_guard lock(mutex_);
            consumer = consumer_;
        }
        if (m.buffer && m.size > 0) {
            activity_buffers_.fetch_add(1, std::memory_order_relaxed);
            if (consumer.consume) {
                try {
                    size_t n = consumer.consume(consumer.ctx, m.buffer, m.size, writer_);
                    activity_records_.fetch_add(n, std::memory_order_relaxed);
                } catch (...) {
                    log::warn("activity translation threw; buffer skipped");
                }
            } else {
                // No translator wired: the records cannot be decoded here. Count the buffer, do not guess.
                tr::Dropped d;
                d.timestamp = clock::now();
                d.count = 1;
                d.source = tr::DropSource::CollectorQueue;
                writer_.add(d);
            }
        }
        if (m.buffer) {
            if (consumer.release) consumer.release(consumer.ctx, m.buffer);
            else std::free(m.buffer);
        }
        break;
    }
    case K::Status:
        m.status.message = writer_.intern(m.text.data(), m.text.size());
        writer_.add(m.status);
        break;
    case K::CudaInfo: {
        tr::CudaInfo r;
        r.timestamp = m.timestamp;
        r.driver_version = m.versions.driver_version;
        r.runtime_version = m.versions.runtime_version;
        r.cupti_api_version = m.versions.cupti_api_version;
        r.cupti_library = writer_.intern(m.versions.cupti_library.data(), m.versions.cupti_library.size());
        writer_.add(r);
        break;
    }
    case K::Device: write_device_record(writer_, m.device); break;
    case K::Capture: writer_.add(m.capture); break;
    case K::Dropped: writer_.add(m.dropped); break;
    case K::ThreadName:
        m.thread.name = writer_.intern(m.text.data(), m.text.size());
        writer_.add(m.thread);
        break;
    case K::Module: {
        tr::Module r;
        r.base = m.module.base;
        r.size = m.module.size;
        r.file_offset = m.module.file_offset;
        r.path = writer_.intern(m.module.path.data(), m.module.path.size());
        r.build_id_size = m.module.build_id_size;
        std::memcpy(r.build_id, m.module.build_id, sizeof r.build_id);
        writer_.add(r);
        break;
    }
    case K::Stack:
        if (m.stack) writer_.add(*m.stack);
        break;
    case K::Function:
        if (m.fn) {
            try {
                m.fn(writer_);
            } catch (...) {
                log::warn("a posted writer task threw; continuing");
            }
        }
        break;
    case K::Flush: break;
    }
}

void Pipeline::write_queue_drops() {
    uint64_t dropped = queue_dropped_.load(std::memory_order_relaxed);
    if (dropped <= queue_dropped_written_) return;
    tr::Dropped d;
    d.timestamp = clock::now();
    d.count = dropped - queue_dropped_written_;
    d.source = tr::DropSource::CollectorQueue;
    writer_.add(d);
    queue_dropped_written_ = dropped;
}

void Pipeline::drain_queue(std::deque<Message>& batch) {
    for (;;) {
        {
            std::lock_guard lock(mutex_);
            if (queue_->empty() && call_sites_->empty()) break;
            batch.swap(*queue_);
            call_site_batch_.swap(*call_sites_);
        }
        // Messages first: a CallSite's Stack record was queued before the CallSite, so it is in this batch or an
        // earlier one.
        for (Message& m : batch) handle(m);
        batch.clear();
        write_call_sites(call_site_batch_);
    }
    write_queue_drops();
}

void Pipeline::run() {
    t_own_work = true;  // the writer's own I/O is no OS-runtime call of the program
    writer_tid_.store(static_cast<uint64_t>(::syscall(SYS_gettid)), std::memory_order_relaxed);
    log::debug("writer thread started (flush every {} ms)", options_.flush_ms);
    std::deque<Message> batch;
    auto period = std::chrono::milliseconds(options_.flush_ms ? options_.flush_ms : 100);
    auto next = std::chrono::steady_clock::now() + period;
    for (;;) {
        bool stopping = false;
        bool requested = false;
        uint64_t ticket = 0;
        {
            std::unique_lock lock(mutex_);
            sleeping_.store(true, std::memory_order_release);
            wake_.wait_until(lock, next, [&] {
                return stop_ || flush_requested_ > flush_done_ || nudged_.load(std::memory_order_relaxed);
            });
            sleeping_.store(false, std::memory_order_relaxed);
            stopping = stop_;
            ticket = flush_requested_;
            requested = flush_requested_ > flush_done_;
        }
        try {
            bool nudged = nudged_.exchange(false, std::memory_order_relaxed);
            bool due = std::chrono::steady_clock::now() >= next;
            if (due || requested || stopping) {
                // Hooks first (NVTX drain, CUPTI periodic flush: they may post or submit), then the queue.
                run_hooks(stopping);
                drain_queue(batch);
                writer_.flush();
                say_write_error();
                clock::recalibrate();
                next = std::chrono::steady_clock::now() + period;
            } else if (nudged) {
                // An early round for a fast producer: read the NVTX streams and the queue; the file write and the
                // CUPTI flush keep their period.
                nudge_rounds_.fetch_add(1, std::memory_order_relaxed);
                run_hooks(false, true);
                drain_queue(batch);
            }
        } catch (...) {
            log::warn("writer thread: unexpected exception; continuing");
        }
        {
            std::lock_guard lock(mutex_);
            if (ticket > flush_done_) flush_done_ = ticket;
        }
        flushed_.notify_all();
        if (stopping) break;
    }
}

uint64_t Pipeline::writer_cpu_ns() const noexcept {
    timespec t{};
    if (!has_writer_clock_ || ::clock_gettime(writer_clock_, &t) != 0) return 0;  // 0 too once the thread has ended
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

void Pipeline::finish(uint32_t ended_by_signal) {
    if (abandoned_.load()) return;
    {
        std::lock_guard lock(mutex_);
        if (finished_) return;
        stop_ = true;
        end_signal_ = ended_by_signal;
    }
    wake_.notify_one();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
        try {
            thread_.join();
        } catch (...) {
        }
    }
    std::deque<Message> rest;
    std::vector<tr::CallSite> rest_sites;
    {
        std::lock_guard lock(mutex_);
        finished_ = true;
        rest.swap(*queue_);
        rest_sites.swap(*call_sites_);
    }
    if (writer_.is_open()) {
        for (Message& m : rest) handle(m);  // posted after the thread's last drain
        write_call_sites(rest_sites);
        write_queue_drops();
        writer_.finish(clock::now(), end_signal_);
        say_write_error();
    }
    running_.store(false, std::memory_order_release);
    flushed_.notify_all();
}

void Pipeline::flush_from_signal_handler() noexcept {
    if (abandoned_.load(std::memory_order_relaxed)) return;
    writer_.flush_from_signal_handler();
}

void Pipeline::abandon_after_fork() noexcept {
    abandoned_.store(true);
    running_.store(false);
    // The mutex may have been held by a thread that does not exist here: never touch it. The std::thread
    // object refers to the parent's thread: detach-by-leak (the whole object is leaked by the caller).
    // TraceWriter::close() would write the parent's open chunk a second time: the child's copy of the descriptor is
    // closed with the collector's other descriptors instead (descriptors::reset_after_fork, session/process_session.cpp).
}

}  // namespace gprof::collector
