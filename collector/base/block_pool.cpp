#include "base/block_pool.h"

#include <sys/mman.h>

#include <new>

namespace gprof::collector {

void* BlockPool::take() noexcept {
    size_t now = in_flight_.fetch_add(block_bytes_, std::memory_order_relaxed) + block_bytes_;
    if (now > cap_.load(std::memory_order_relaxed)) {
        in_flight_.fetch_sub(block_bytes_, std::memory_order_relaxed);
        refused_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    {
        std::lock_guard lock(mutex_);
        if (FreeBlock* b = free_) {
            free_ = b->next;
            --free_count_;
            reused_.fetch_add(1, std::memory_order_relaxed);
            return b;
        }
    }
    // MAP_POPULATE: the kernel zeroes the pages in this one call rather than in a fault per page on the hot path.
    // Best effort: under memory pressure the mapping succeeds unpopulated and faults as a malloc'd block would.
    void* mem = ::mmap(nullptr, block_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                       -1, 0);
    if (mem == MAP_FAILED) {
        in_flight_.fetch_sub(block_bytes_, std::memory_order_relaxed);
        refused_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    fresh_.fetch_add(1, std::memory_order_relaxed);
    return mem;
}

void BlockPool::give(void* block) noexcept {
    if (!block) return;
    in_flight_.fetch_sub(block_bytes_, std::memory_order_relaxed);
    {
        std::lock_guard lock(mutex_);
        if (free_count_ < keep_) {
            free_ = new (block) FreeBlock{free_};
            ++free_count_;
            return;
        }
    }
    ::munmap(block, block_bytes_);
}

BlockPool::Figures BlockPool::figures() const noexcept {
    Figures f;
    f.bytes_in_flight = in_flight_.load(std::memory_order_relaxed);
    f.peak_bytes_in_flight = peak_.load(std::memory_order_relaxed);
    {
        std::lock_guard lock(mutex_);
        f.pooled_bytes = free_count_ * block_bytes_;
    }
    f.blocks_fresh = fresh_.load(std::memory_order_relaxed);
    f.blocks_reused = reused_.load(std::memory_order_relaxed);
    f.blocks_refused = refused_.load(std::memory_order_relaxed);
    return f;
}

void BlockPool::reset_after_fork() noexcept {
    in_flight_.store(0, std::memory_order_relaxed);
    peak_.store(0, std::memory_order_relaxed);
    fresh_.store(0, std::memory_order_relaxed);
    reused_.store(0, std::memory_order_relaxed);
    refused_.store(0, std::memory_order_relaxed);
    new (&mutex_) std::mutex();
    // The pooled blocks were read blocks of the parent's: still ours to reuse (copy-on-write pages).
}

}  // namespace gprof::collector
