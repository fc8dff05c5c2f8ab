#include "cupti/api_calls.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <new>

#include "base/block_pool.h"
#include "base/clock.h"
#include "cupti/translate.h"
#include "pipeline/pipeline.h"

namespace gprof::collector::cupti {
namespace {

struct Block {
    std::atomic<Block*> next{nullptr};
    std::atomic<uint32_t> committed{0};  // events complete, published by the producer
    ApiEvent events[kApiEventsPerBlock];
};

struct ThreadCalls {
    // ---- producer (the owning thread) ----
    Block* tail = nullptr;
    uint32_t pos = 0;
    // ---- shared ----
    std::atomic<bool> exited{false};
    uint32_t tid = 0;
    ThreadCalls* next_thread = nullptr;  // registry, immutable once published
    // ---- consumer (writer thread), on its own cache line: it is written per event read ----
    alignas(64) Block* head = nullptr;
    uint32_t read = 0;
    bool finished = false;
};

std::atomic<ThreadCalls*> g_threads{nullptr};
// Read blocks kept for reuse: 16 (4 MiB); the cap bounds everything in flight (base/block_pool.h).
constinit BlockPool g_blocks{sizeof(Block), 16, kMaxApiBytesInFlight};
std::atomic<uint64_t> g_recorded{0}, g_dropped{0};
uint64_t g_dropped_written = 0;  // writer thread
pthread_key_t g_exit_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
__attribute__((tls_model("initial-exec"))) thread_local ThreadCalls* t_calls = nullptr;

void on_thread_exit(void* p) { static_cast<ThreadCalls*>(p)->exited.store(true, std::memory_order_release); }
void make_key() { pthread_key_create(&g_exit_key, on_thread_exit); }

// Default-initialised: the events are written before they are published (no 256 KiB memset per block).
Block* new_block() noexcept {
    void* mem = g_blocks.take();
    return mem ? new (mem) Block : nullptr;
}

void free_block(Block* b) noexcept {
    b->~Block();
    g_blocks.give(b);
}

ThreadCalls* attach() noexcept {
    pthread_once(&g_key_once, make_key);
    void* mem = std::malloc(sizeof(ThreadCalls));
    if (!mem) return nullptr;
    auto* t = new (mem) ThreadCalls();
    t->tid = static_cast<uint32_t>(::syscall(SYS_gettid));
    Block* b = new_block();
    if (!b) {
        std::free(mem);
        return nullptr;
    }
    t->tail = t->head = b;
    pthread_setspecific(g_exit_key, t);
    ThreadCalls* old = g_threads.load(std::memory_order_relaxed);
    do {
        t->next_thread = old;
    } while (!g_threads.compare_exchange_weak(old, t, std::memory_order_release, std::memory_order_relaxed));
    t_calls = t;
    return t;
}

}  // namespace

void record_api_call(const ApiEvent& event, Pipeline* nudge) noexcept {
    ThreadCalls* t = t_calls;
    if (!t && !(t = attach())) [[unlikely]] {
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (t->pos == kApiEventsPerBlock) [[unlikely]] {
        Block* b = new_block();
        if (!b) {
            g_dropped.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        Block* old = t->tail;
        t->tail = b;
        t->pos = 0;
        old->next.store(b, std::memory_order_release);  // `committed` of the old block is final
        if (nudge && g_blocks.in_flight() >= kApiNudgeBytes) nudge->nudge();
    }
    t->tail->events[t->pos] = event;
    ++t->pos;
    t->tail->committed.store(t->pos, std::memory_order_release);
}

size_t drain_api_calls(trace::TraceWriter& w, Translator& names, uint32_t own_tid) {
    size_t written = 0;
    for (ThreadCalls* t = g_threads.load(std::memory_order_acquire); t; t = t->next_thread) {
        if (t->finished) continue;
        bool exited = t->exited.load(std::memory_order_acquire);  // before the events: they precede it
        for (;;) {
            Block* b = t->head;
            Block* next = b->next.load(std::memory_order_acquire);
            uint32_t end = b->committed.load(std::memory_order_acquire);
            bool own = own_tid != 0 && t->tid == own_tid;
            for (; t->read < end; ++t->read) {
                if (own) continue;  // the collector's own driver queries
                const ApiEvent& e = b->events[t->read];
                trace::ApiCall r;
                r.start = e.start;
                r.end = e.end;
                r.tid = t->tid;
                r.correlation = e.correlation;
                r.cbid = e.cbid;
                r.domain = e.runtime ? trace::ApiDomain::Runtime : trace::ApiDomain::Driver;
                r.name = names.api_name(w, e.runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, e.cbid);
                r.result = e.result;
                w.add(r);
                ++written;
            }
            if (!next) break;
            t->head = next;
            t->read = 0;
            free_block(b);
        }
        if (exited && !t->head->next.load(std::memory_order_acquire) &&
            t->read == t->head->committed.load(std::memory_order_acquire)) {
            free_block(t->head);
            t->head = nullptr;
            t->finished = true;
        }
    }
    g_recorded.fetch_add(written, std::memory_order_relaxed);
    uint64_t dropped = g_dropped.load(std::memory_order_relaxed);
    if (dropped > g_dropped_written) {
        trace::Dropped d;
        d.timestamp = clock::now();
        d.count = dropped - g_dropped_written;
        d.source = trace::DropSource::CollectorQueue;
        w.add(d);
        g_dropped_written = dropped;
    }
    return written;
}

ApiCallStats api_call_stats() noexcept {
    ApiCallStats s;
    s.recorded = g_recorded.load(std::memory_order_relaxed);
    s.dropped = g_dropped.load(std::memory_order_relaxed);
    BlockPool::Figures f = g_blocks.figures();
    s.bytes_in_flight = f.bytes_in_flight;
    s.peak_bytes_in_flight = f.peak_bytes_in_flight;
    return s;
}

void reset_api_calls_after_fork() noexcept {
    g_threads.store(nullptr, std::memory_order_relaxed);
    g_blocks.reset_after_fork();
    g_recorded.store(0, std::memory_order_relaxed);
    g_dropped.store(0, std::memory_order_relaxed);
    g_dropped_written = 0;
    if (t_calls) pthread_setspecific(g_exit_key, nullptr);
    t_calls = nullptr;
}

}  // namespace gprof::collector::cupti
