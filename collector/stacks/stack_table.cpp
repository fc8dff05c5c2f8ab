#include "stacks/stack_table.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "gprof/trace/records.h"
#include "pipeline/pipeline.h"

namespace gprof::collector::stacks {

namespace {

uint64_t hash_frames(const uint64_t* frames, uint32_t count) {
    // Per frame a multiply-xorshift; distinct stacks differ in at least one address.
    uint64_t h = 0x9E3779B97F4A7C15ull ^ count;
    for (uint32_t i = 0; i < count; ++i) {
        h ^= frames[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h ? h : 1;
}

}  // namespace

StackTable& table() noexcept {
    static StackTable* t = new StackTable();  // leaked: used until the last call site or sample of the process
    return *t;
}

void StackTable::reset_after_fork() noexcept {
    new (&mutex_) std::mutex();
    reset_locked();
}

void StackTable::configure(uint32_t max_stacks) noexcept {
    std::lock_guard lock(mutex_);
    if (slots_) return;
    if (max_stacks == 0) max_stacks = 1;
    uint64_t slots = 2;
    while (slots < 2ull * max_stacks) slots <<= 1;
    // calloc: the pages are touched only as slots fill.
    auto* s = static_cast<std::atomic<uint32_t>*>(std::calloc(slots, sizeof(std::atomic<uint32_t>)));
    auto* e = static_cast<std::atomic<Entry*>*>(std::calloc(max_stacks, sizeof(std::atomic<Entry*>)));
    if (!s || !e) {
        std::free(s);
        std::free(e);
        return;
    }
    entries_ = e;
    mask_ = static_cast<uint32_t>(slots - 1);
    max_stacks_ = max_stacks;
    slots_ = s;
}

void StackTable::reset_locked() noexcept {
    for (uint32_t i = 0; slots_ && i <= mask_; ++i) slots_[i].store(0, std::memory_order_relaxed);
    next_id_.store(1, std::memory_order_relaxed);
    // New entries go to a fresh arena: a lookup racing the reset (a failed exec's new trace) may still be comparing
    // an old entry, which stays as it was. The old arenas are kept (bounded by the number of traces).
    arena_used_ = kArenaBytes;
    owner_.store(nullptr, std::memory_order_release);
}

uint32_t StackTable::intern(const uint64_t* frames, uint32_t count, Pipeline& pipeline, InternResult* result) noexcept {
    InternResult ignored;
    InternResult& why = result ? *result : ignored;
    if (count == 0) {
        why = InternResult::Empty;
        return 0;
    }
    if (!slots_) {
        why = InternResult::Refused;
        return 0;
    }
    if (count > trace::kMaxBacktraceFrames) count = trace::kMaxBacktraceFrames;
    uint64_t h = hash_frames(frames, count);
    size_t frame_bytes = sizeof(uint64_t) * count;
    auto probe = [&](uint32_t& slot) -> uint32_t {
        for (slot = static_cast<uint32_t>(h) & mask_;; slot = (slot + 1) & mask_) {
            uint32_t id = slots_[slot].load(std::memory_order_acquire);
            if (id == 0) return 0;
            const Entry* e = entries_[id - 1].load(std::memory_order_acquire);
            if (e && e->hash == h && e->count == count && std::memcmp(e->frames, frames, frame_bytes) == 0) return id;
        }
    };
    uint32_t slot = 0;
    // Without the lock only when the table is this trace's: a new trace (another pipeline) resets it under the lock.
    if (owner_.load(std::memory_order_acquire) == &pipeline) {
        if (uint32_t id = probe(slot)) {
            why = InternResult::Known;
            return id;
        }
    }
    try {
        std::lock_guard lock(mutex_);
        if (owner_.load(std::memory_order_relaxed) != &pipeline) {
            reset_locked();
            owner_.store(&pipeline, std::memory_order_release);
        }
        if (uint32_t id = probe(slot)) {
            why = InternResult::Known;
            return id;
        }
        uint32_t id = next_id_.load(std::memory_order_relaxed);
        if (id > max_stacks_) {
            why = InternResult::TableFull;
            return 0;
        }
        size_t bytes = (offsetof(Entry, frames) + frame_bytes + 7) & ~size_t{7};
        if (arena_used_ + bytes > kArenaBytes) {
            auto* arena = static_cast<uint8_t*>(std::malloc(kArenaBytes));
            if (!arena) {
                why = InternResult::Refused;
                return 0;
            }
            arenas_.push_back(arena);
            arena_used_ = 0;
        }
        auto* e = reinterpret_cast<Entry*>(arenas_.back() + arena_used_);
        e->hash = h;
        e->count = count;
        e->pad = 0;
        std::memcpy(e->frames, frames, frame_bytes);
        trace::Stack record;
        record.id = id;
        record.frame_count = count;
        std::memcpy(record.frames, frames, frame_bytes);
        // Posted before the id is published: every record naming it is queued after it.
        if (!pipeline.post_stack(record)) {
            why = InternResult::Refused;
            return 0;
        }
        arena_used_ += bytes;
        next_id_.store(id + 1, std::memory_order_relaxed);
        entries_[id - 1].store(e, std::memory_order_release);
        slots_[slot].store(id, std::memory_order_release);
        why = InternResult::Added;
        return id;
    } catch (...) {
        why = InternResult::Refused;  // arenas_ could not grow
        return 0;
    }
}

}  // namespace gprof::collector::stacks
