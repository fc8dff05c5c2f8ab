// The pool of CUPTI activity buffers.
//
// CUPTI asks for a buffer on whatever thread fills one (buffer-requested callback) and hands it back full on
// its own worker thread (buffer-completed); the pipeline then translates it on the writer thread and gives it
// back here. Buffers are large (GPROF_BUFFER_MB, default 8 MiB: NVIDIA's samples use 8, kineto 4, HPCToolkit
// 16), 8-byte aligned as CUPTI requires, and reused, so steady tracing allocates nothing.
//
// The pool caps how many buffers exist at once, so a writer that falls behind cannot eat the host's memory.
// At the cap, a CUPTI with API version >= 27 (CUDA 12.9) is refused a buffer and counts the records it then
// loses as dropped (we report those); older CUPTIs can crash on a refusal, so there the cap is not enforced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gprof::collector::cupti {

class BufferPool {
public:
    struct Stats {
        uint64_t allocated = 0;  // buffers created over the pool's life
        uint64_t refused = 0;    // requests answered with no buffer (at the cap)
        size_t outstanding = 0;  // buffers currently held by CUPTI or the pipeline
        size_t idle = 0;         // buffers waiting in the free list
        size_t peak_outstanding = 0;
    };

    BufferPool() = default;
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    // buffer_bytes is rounded up to a multiple of 8; max_outstanding 0 = no cap.
    void configure(size_t buffer_bytes, size_t max_outstanding, bool may_refuse);

    // A buffer of buffer_size() bytes, 8-byte aligned; nullptr when refused (at the cap, may_refuse) or when
    // memory ran out. Any thread.
    uint8_t* acquire();
    // Gives a buffer from acquire() back. Buffers not from this pool must never be passed. Any thread.
    void release(uint8_t* buffer);

    size_t buffer_size() const { return buffer_bytes_; }
    size_t max_outstanding() const { return max_outstanding_; }

    // Zeroed buffers (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER): new ones come zeroed from calloc, used ones
    // are cleared in release() (on the writer thread, after translation) over the bytes mark_used() named, so
    // CUPTI gets only zeroed buffers and never clears one itself on the application's thread.
    void set_zeroed(bool zeroed);
    bool zeroed() const { return zeroed_; }
    // CUPTI filled `bytes` of this buffer (its valid size): what release() clears. Any thread.
    static void mark_used(uint8_t* buffer, size_t bytes);

    // False for a buffer handed out before a fork, by the parent: in the child such a buffer holds the
    // parent's records (the parent delivers its own copy), so the child must not translate it.
    static bool acquired_by_this_process(const uint8_t* buffer);
    // In a forked child: the pool's mutex may have been held by a parent thread that does not exist here.
    void reset_after_fork();
    Stats stats() const;

private:
    struct Header;  // lives just before the aligned pointer: the original malloc pointer
    void free_buffer(uint8_t* buffer);

    mutable std::mutex mutex_;  // guards the free list and counters; never held while calling CUPTI
    std::vector<uint8_t*> free_;
    size_t buffer_bytes_ = 8u << 20;
    size_t max_outstanding_ = 0;
    size_t max_idle_ = 8;
    bool may_refuse_ = false;
    bool zeroed_ = false;
    Stats stats_;
};

// The process-wide pool the session hands to CUPTI (never destroyed: CUPTI may call back during exit).
BufferPool& buffer_pool();

// Gives a completed buffer back to the process-wide pool (the pipeline's ActivityConsumer::release).
void release_buffer(uint8_t* buffer);

}  // namespace gprof::collector::cupti
