// Fixed-size memory blocks for the per-thread event streams (NVTX events, API calls from callbacks): taken by an
// application thread once per block (never per event), given back by the writer thread once it has read them.
//
// Why a pool and why mmap: a thread in a tight NVTX or launch loop fills a 256 KiB block every few thousand
// events. A block from malloc is a fresh mapping whose 64 pages fault one at a time on the application thread as
// events land in them: after the clock, the application threads' largest cost (bench/nvtx_real_process; figures in
// docs/performance.md, "NVTX in a real process, third pass"). So: read blocks are kept for reuse up to `keep` of
// them; beyond that a block is unmapped; a fresh block is mapped populated (mmap(MAP_POPULATE)).
//
// A cap on the bytes in flight (taken and not given back) bounds the memory a run can hold in the target
// whatever the event rate: past it take() refuses, and the caller counts the events it drops.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace gprof::collector {

class BlockPool {
public:
    // block_bytes: size of every block; keep: read blocks kept for reuse; cap_bytes: bound on bytes in flight.
    // constexpr: a pool at namespace scope is ready before any constructor runs (the collector is preloaded).
    constexpr BlockPool(size_t block_bytes, size_t keep, size_t cap_bytes) noexcept
        : block_bytes_(block_bytes), keep_(keep), cap_(cap_bytes) {}
    BlockPool(const BlockPool&) = delete;
    BlockPool& operator=(const BlockPool&) = delete;

    // A block of block_bytes (uninitialised when fresh, as left when reused), or null when the cap is reached or
    // the system has no memory (counted as refused). Any thread; takes a mutex only to pop the free list.
    void* take() noexcept;
    // Gives a block back (writer thread, or the owner on failure paths).
    void give(void* block) noexcept;

    void set_cap(size_t bytes) noexcept { cap_.store(bytes, std::memory_order_relaxed); }
    size_t in_flight() const noexcept { return in_flight_.load(std::memory_order_relaxed); }

    struct Figures {
        size_t bytes_in_flight = 0;       // taken and not given back (approximate while threads run)
        size_t peak_bytes_in_flight = 0;
        size_t pooled_bytes = 0;          // read blocks kept for reuse
        uint64_t blocks_fresh = 0;        // mapped (first touch: page zeroing, done by the kernel in one call)
        uint64_t blocks_reused = 0;       // taken from the pool
        uint64_t blocks_refused = 0;      // refused at the cap or for want of memory
    };
    Figures figures() const noexcept;

    // In a forked child: the parent's blocks belong to threads that do not exist here; forget them (leaked) and
    // count afresh. The mutex may have been held by one of those threads.
    void reset_after_fork() noexcept;

private:
    struct FreeBlock {
        FreeBlock* next;
    };

    const size_t block_bytes_;
    const size_t keep_;
    std::atomic<size_t> cap_;
    std::atomic<size_t> in_flight_{0}, peak_{0};
    std::atomic<uint64_t> fresh_{0}, reused_{0}, refused_{0};
    mutable std::mutex mutex_;
    FreeBlock* free_ = nullptr;
    size_t free_count_ = 0;
};

}  // namespace gprof::collector
