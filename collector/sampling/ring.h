// A single-producer single-consumer ring of variable-length entries, for what a thread records about itself from a
// signal handler or an interposed libc call (CPU samples, OS-runtime calls): the producer never locks, never
// allocates and never makes a system call, so it is async-signal-safe; the consumer is the writer thread.
//
// Entries are 8-byte aligned: an 8-byte head (total bytes, type) and the payload. An entry that does not fit before
// the end of the buffer is preceded by a filler to the end (type 0). A full ring refuses the entry: the producer
// counts it (dropped()) and the trace says so; nothing waits.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gprof::collector::sampling {

class Ring {
public:
    struct Head {
        uint32_t bytes;  // the whole entry, head included, a multiple of 8
        uint32_t type;   // 0: filler
    };

    // `memory` of `capacity` bytes (a power of two, at least 64), owned by the caller.
    void attach(uint8_t* memory, uint32_t capacity) noexcept {
        buf_ = memory;
        capacity_ = capacity;
        head_.store(0, std::memory_order_relaxed);
        tail_.store(0, std::memory_order_relaxed);
        dropped_.store(0, std::memory_order_relaxed);
    }
    bool attached() const { return buf_ != nullptr; }

    // ---- producer (one thread, or its signal handler: see Channel::busy) ----
    // Room for a payload of `payload` bytes, or nullptr (counted as dropped). Fill it, then commit().
    void* reserve(uint32_t payload, uint32_t type) noexcept {
        uint32_t bytes = (sizeof(Head) + payload + 7u) & ~7u;
        uint64_t head = head_.load(std::memory_order_relaxed);
        uint64_t tail = tail_.load(std::memory_order_acquire);
        uint32_t at = static_cast<uint32_t>(head & (capacity_ - 1));
        uint32_t to_end = capacity_ - at;
        uint32_t filler = bytes > to_end ? to_end : 0;
        if (bytes > capacity_ / 2 || head + filler + bytes - tail > capacity_) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
            return nullptr;
        }
        if (filler) {
            Head f{filler, 0};
            std::memcpy(buf_ + at, &f, sizeof f);
            at = 0;
        }
        Head h{bytes, type};
        std::memcpy(buf_ + at, &h, sizeof h);
        pending_ = head + filler + bytes;
        return buf_ + at + sizeof(Head);
    }
    void commit() noexcept { head_.store(pending_, std::memory_order_release); }
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

    // ---- consumer ----
    // Calls f(type, payload, payload_bytes) for every committed entry, then frees them. Returns the entries read.
    template <class F> size_t drain(F&& f) {
        uint64_t head = head_.load(std::memory_order_acquire);
        uint64_t tail = tail_.load(std::memory_order_relaxed);
        size_t n = 0;
        while (tail < head) {
            uint32_t at = static_cast<uint32_t>(tail & (capacity_ - 1));
            Head h;
            std::memcpy(&h, buf_ + at, sizeof h);
            if (h.bytes < sizeof(Head) || h.bytes > capacity_ - at) break;  // cannot happen: a damaged ring stops here
            if (h.type != 0) {
                f(h.type, buf_ + at + sizeof(Head), h.bytes - static_cast<uint32_t>(sizeof(Head)));
                ++n;
            }
            tail += h.bytes;
        }
        tail_.store(head, std::memory_order_release);
        return n;
    }
    // Forgets everything (the consumer, with the producer gone or stopped).
    void clear() noexcept { tail_.store(head_.load(std::memory_order_acquire), std::memory_order_release); }

private:
    uint8_t* buf_ = nullptr;
    uint32_t capacity_ = 0;
    uint64_t pending_ = 0;  // producer: head after the reserved entry
    alignas(64) std::atomic<uint64_t> head_{0};
    alignas(64) std::atomic<uint64_t> tail_{0};
    std::atomic<uint64_t> dropped_{0};
};

}  // namespace gprof::collector::sampling
