// Per-thread NVTX event streams: the hot path of the collector.
//
// Each application thread that calls NVTX appends fixed-layout events to its own chain of blocks (single
// producer: the thread; single consumer: the writer thread). No lock, no syscall and no shared cache line on
// the hot path: an event is a header, a timestamp and the copied name bytes, published with one release store.
// When a block is full the thread takes the next one (once per 256 KiB, base/block_pool.h) and links it in; the
// writer gives back the blocks it has read. A global cap on the bytes in flight bounds memory; beyond it events
// are counted as dropped, never silently lost.
//
// Push/pop matching, start/end pairing across threads, and string interning all happen later, on the writer
// thread (nvtx/recorder.h); the application thread only keeps its push depth, which NVTX returns, and whether one
// of its pushes holds the capture window (nvtx/capture.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/block_pool.h"

namespace gprof::collector::nvtx {

enum class EventType : uint8_t { Push = 1, Pop = 2, Start = 3, End = 4, Mark = 5, ShortPop = 6 };

// A pop of the default domain, the commonest event after a push, is one 8-byte word: the type in the low byte
// (where EventHeader::type lies) and the timestamp in the 56 bits above (2^56 ns is 2.3 years of uptime; a
// larger timestamp takes a full Pop). A push+pop pair of a short name is then 32 bytes in the stream, not 40:
// less for the application thread to store and for the writer to read (bench/nvtx_real_process).
inline constexpr uint64_t kShortPopMaxTimestamp = (uint64_t(1) << 56) - 1;
inline uint64_t short_pop(uint64_t timestamp) {
    return static_cast<uint64_t>(EventType::ShortPop) | (timestamp << 8);
}
inline uint64_t short_pop_timestamp(const uint8_t* event) {
    uint64_t w;
    std::memcpy(&w, event, 8);
    return w >> 8;
}

enum EventFlags : uint8_t {
    kHasAttrs = 1,     // an EventAttrs follows the header
    kRegistered = 2,   // the name is a registered string (EventAttrs::registered), no bytes follow
    kHasRangeId = 4,   // a uint64 range id follows (after the attrs, if any)
};

// 16 bytes; every event is a multiple of 8 bytes. (Except ShortPop, 8 bytes in all: only its type byte is a header.)
struct EventHeader {
    EventType type;
    uint8_t flags;
    uint16_t name_len;  // bytes of name following, padded to 8
    uint32_t domain;    // 0 = default domain
    uint64_t timestamp;
};
static_assert(sizeof(EventHeader) == 16);

struct EventAttrs {
    uint32_t color = 0;     // ARGB, 0 = none
    uint32_t category = 0;
    uint64_t payload = 0;
    uint32_t registered = 0;  // registered string id when kRegistered
    uint8_t payload_type = 0; // trace::NvtxPayload
    uint8_t pad[3] = {};
};
static_assert(sizeof(EventAttrs) == 24);

inline constexpr size_t kBlockBytes = 256 * 1024;
inline constexpr size_t kMaxNameBytes = 16 * 1024;  // longer messages are cut (the writer cuts at 64 KiB)
inline constexpr uint32_t kMaxDomains = 256;        // per-thread push depth slots; more domains share slot 0

struct Block {
    std::atomic<Block*> next{nullptr};
    std::atomic<size_t> committed{0};  // bytes of complete events, published by the producer
    uint8_t data[kBlockBytes];
};

struct ThreadStream {
    // ---- producer (owning thread) ----
    Block* tail = nullptr;
    size_t pos = 0;
    int32_t depth[kMaxDomains] = {};  // push/pop depth per domain id, for NVTX's return values
    uint64_t next_range = 0;          // start/end range ids: (stream index << 40) | counter
    int32_t capture_depth = -1;       // this thread's push holds the capture window: its depth (nvtx/capture.h)
    uint32_t capture_domain = 0;      // ... and its domain
    // ---- shared ----
    std::atomic<uint64_t> dropped{0};  // events that did not fit under the memory cap
    std::atomic<uint64_t> after_end{0};  // events that came after the process began to end (handlers.h), not recorded
    std::atomic<bool> exited{false};   // the thread has ended (set by a TLS destructor)
    // The thread's name as it ended (prctl PR_GET_NAME in the TLS destructor, before `exited` is released): a worker
    // that names itself and ends before the writer reads /proc/self/task/TID/comm keeps its name (issue 30).
    char exit_name[16] = {};
    uint64_t tid = 0;
    uint32_t index = 0;
    ThreadStream* next_stream = nullptr;  // registry list: set before publishing; later only the writer unlinks
    // ---- consumer (writer thread) ----
    Block* head = nullptr;
    size_t read = 0;
    bool finished = false;  // exited and fully drained: blocks freed
    void* consumer_state = nullptr;
};

// The calling thread's stream, created on first use. Null when the collector is inactive or out of memory.
ThreadStream* current_stream() noexcept;
ThreadStream* attach_thread() noexcept;
// The calling thread's stream if it has one (never creates it).
ThreadStream* existing_stream() noexcept;

// Reserves `bytes` (a multiple of 8) in the thread's stream, or null (counted as dropped).
uint8_t* reserve_slow(ThreadStream* s, size_t bytes) noexcept;

inline uint8_t* reserve(ThreadStream* s, size_t bytes) noexcept {
    if (s->tail && s->pos + bytes <= kBlockBytes) [[likely]]
        return s->tail->data + s->pos;
    return reserve_slow(s, bytes);
}

inline void commit(ThreadStream* s, size_t bytes) noexcept {
    s->pos += bytes;
    s->tail->committed.store(s->pos, std::memory_order_release);
}

inline size_t pad8(size_t n) { return (n + 7) & ~size_t(7); }

// ---- consumer side (writer thread) ----

// Head of the registry (newest first); every stream ever attached in this process.
ThreadStream* streams() noexcept;

// Calls fn(stream, event_bytes) for every complete event not yet consumed, then frees finished blocks.
template <class Fn> void consume(ThreadStream* s, Fn&& fn);

// The cap on bytes held in blocks across all threads (base/block_pool.h).
inline constexpr size_t kMaxBytesInFlight = size_t(512) << 20;
// The cap in force (kMaxBytesInFlight unless changed): tests lower it to see the cap hold and the drops counted
// without filling 512 MiB. Read once per new block.
void set_bytes_in_flight_cap(size_t bytes) noexcept;
// Past this many bytes in flight a thread that links a new block nudges the writer (Pipeline::nudge).
inline constexpr size_t kNudgeBytes = size_t(2) << 20;

void free_block(Block* b) noexcept;
// A stream whose thread has ended and whose events are all read (ThreadStream::finished), already out of the list.
void free_stream(ThreadStream* s) noexcept;

// What the NVTX streams held, for the end-of-run memory line (approximate while threads run).
BlockPool::Figures stream_memory() noexcept;

// In a forked child: forget every stream of the parent (their threads do not exist here). Leaks them.
void reset_after_fork() noexcept;

template <class Fn> void consume(ThreadStream* s, Fn&& fn) {
    if (s->finished) return;
    for (;;) {
        Block* b = s->head;
        if (!b) {
            return;  // producer has not written anything yet (head set at first block, see attach)
        }
        Block* next = b->next.load(std::memory_order_acquire);
        size_t end = b->committed.load(std::memory_order_acquire);
        // The position lives in a register while the block is walked: kept in s->read across fn's calls, each
        // event's address waited on a store and a reload of the previous one (the walk is a chain of loads).
        size_t read = s->read;
        while (read < end) {
            auto* h = reinterpret_cast<const EventHeader*>(b->data + read);
            size_t size = h->type == EventType::ShortPop
                              ? 8
                              : sizeof(EventHeader) + ((h->flags & kHasAttrs) ? sizeof(EventAttrs) : 0) +
                                    ((h->flags & kHasRangeId) ? 8 : 0) + pad8(h->name_len);
            fn(s, reinterpret_cast<const uint8_t*>(h));
            read += size;
        }
        s->read = read;
        if (!next) return;
        // The producer stored the final `committed` before linking `next`: this block is complete.
        s->head = next;
        s->read = 0;
        free_block(b);
    }
}

}  // namespace gprof::collector::nvtx
