#include "cupti/buffers.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include <unistd.h>

namespace gprof::collector::cupti {

// Kept in the 16 bytes in front of every buffer handed out: free() needs the pointer malloc returned, not
// the aligned one CUPTI sees (the samples' pitfall).
struct BufferPool::Header {
    void* raw;
    uint64_t used;  // bytes CUPTI wrote (mark_used); a zeroing pool clears them before the buffer is reused
    uint32_t magic;
    int32_t owner;  // pid of the process that handed it to CUPTI
};
static constexpr uint32_t kMagic = 0x67627566u;  // "gbuf"
static constexpr size_t kAlign = 8;

BufferPool::~BufferPool() {
    for (uint8_t* b : free_) free_buffer(b);
}

void BufferPool::configure(size_t buffer_bytes, size_t max_outstanding, bool may_refuse) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (buffer_bytes < 64 * 1024) buffer_bytes = 64 * 1024;
    buffer_bytes = (buffer_bytes + kAlign - 1) & ~(kAlign - 1);
    if (buffer_bytes != buffer_bytes_) {
        // Idle buffers of the old size are no use any more.
        for (uint8_t* b : free_) free_buffer(b);
        free_.clear();
        stats_.idle = 0;
    }
    buffer_bytes_ = buffer_bytes;
    max_outstanding_ = max_outstanding;
    may_refuse_ = may_refuse;
}

uint8_t* BufferPool::acquire() {
    size_t bytes;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!free_.empty()) {
            uint8_t* b = free_.back();
            free_.pop_back();
            stats_.idle = free_.size();
            ++stats_.outstanding;
            if (stats_.outstanding > stats_.peak_outstanding) stats_.peak_outstanding = stats_.outstanding;
            reinterpret_cast<Header*>(b - sizeof(Header))->owner = static_cast<int32_t>(::getpid());
            return b;
        }
        if (may_refuse_ && max_outstanding_ != 0 && stats_.outstanding >= max_outstanding_) {
            ++stats_.refused;
            return nullptr;
        }
        ++stats_.outstanding;
        ++stats_.allocated;
        if (stats_.outstanding > stats_.peak_outstanding) stats_.peak_outstanding = stats_.outstanding;
        bytes = buffer_bytes_;
    }
    // Allocate outside the lock: a multi-MiB malloc can fault in pages.
    void* raw = zeroed_ ? std::calloc(1, bytes + sizeof(Header) + kAlign) : std::malloc(bytes + sizeof(Header) + kAlign);
    if (!raw) {
        std::lock_guard<std::mutex> lock(mutex_);
        --stats_.outstanding;
        ++stats_.refused;
        return nullptr;
    }
    auto addr = reinterpret_cast<uintptr_t>(raw) + sizeof(Header);
    addr = (addr + kAlign - 1) & ~static_cast<uintptr_t>(kAlign - 1);
    auto* buffer = reinterpret_cast<uint8_t*>(addr);
    auto* header = reinterpret_cast<Header*>(buffer - sizeof(Header));
    header->raw = raw;
    header->used = 0;
    header->magic = kMagic;
    header->owner = static_cast<int32_t>(::getpid());
    return buffer;
}

void BufferPool::set_zeroed(bool zeroed) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (zeroed && !zeroed_) {
        for (uint8_t* b : free_) free_buffer(b);  // may hold records: not known to be zero
        free_.clear();
        stats_.idle = 0;
    }
    zeroed_ = zeroed;
}

void BufferPool::mark_used(uint8_t* buffer, size_t bytes) {
    auto* header = reinterpret_cast<Header*>(buffer - sizeof(Header));
    if (header->magic == kMagic) header->used = bytes;
}

void BufferPool::release(uint8_t* buffer) {
    if (!buffer) return;
    auto* header = reinterpret_cast<Header*>(buffer - sizeof(Header));
    if (zeroed_ && header->magic == kMagic) {
        // A record CUPTI began past `used` is cleared too: one record is at most a few hundred bytes.
        size_t n = static_cast<size_t>(header->used) + 4096;
        std::memset(buffer, 0, n < buffer_bytes_ ? n : buffer_bytes_);
        header->used = 0;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stats_.outstanding > 0) --stats_.outstanding;
        if (free_.size() < max_idle_) {
            free_.push_back(buffer);
            stats_.idle = free_.size();
            return;
        }
    }
    free_buffer(buffer);
}

void BufferPool::free_buffer(uint8_t* buffer) {
    auto* header = reinterpret_cast<Header*>(buffer - sizeof(Header));
    if (header->magic != kMagic) return;  // not ours: leaking beats freeing a wild pointer
    header->magic = 0;
    std::free(header->raw);
}

bool BufferPool::acquired_by_this_process(const uint8_t* buffer) {
    if (!buffer) return true;
    auto* header = reinterpret_cast<const Header*>(buffer - sizeof(Header));
    return header->magic != kMagic || header->owner == static_cast<int32_t>(::getpid());
}

void BufferPool::reset_after_fork() { new (&mutex_) std::mutex(); }

BufferPool::Stats BufferPool::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

BufferPool& buffer_pool() {
    static auto* pool = new BufferPool();  // leaked: CUPTI's worker may still hand buffers back during exit
    return *pool;
}

void release_buffer(uint8_t* buffer) { buffer_pool().release(buffer); }

}  // namespace gprof::collector::cupti
