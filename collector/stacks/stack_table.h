// The trace's native stacks, interned: each distinct stack is written once as a Stack record and named by its id
// (trace format 1.4). One table per process, shared by everything that names stacks: API call sites
// (cupti/call_stacks.h) and CPU samples and OS-runtime calls (sampling/), so the trace has one id space.
//
// Bounded: at most `max_stacks` distinct stacks per trace (GPROF_CALL_SITE_MAX_STACKS, 65536 by default). A stack
// that does not fit gets id 0 and the caller counts it (InternResult says why), never silently.
//
// Threads: a known stack is found with no lock and no allocation (open addressing over published ids, frames
// compared exactly); a new one takes one mutex, under which its Stack record is posted before its id is published,
// so no record naming the id can reach the pipeline before the Stack record. Not for signal handlers (the sampler
// interns on the writer thread). The ids belong to one trace: a stack interned for another pipeline than the last
// one (a new trace after a failed exec) starts the table again, and a forked child starts from an empty table.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gprof::collector {
class Pipeline;
}

namespace gprof::collector::stacks {

enum class InternResult : uint8_t {
    Known = 0,       // the stack was in the table
    Added = 1,       // a new stack: its Stack record was posted
    TableFull = 2,   // id 0: the table holds max_stacks stacks already
    Refused = 3,     // id 0: the pipeline's queue refused the Stack record, or memory ran out
    Empty = 4,       // id 0: no frames
};

class StackTable {
public:
    // The bound (distinct stacks per trace). The first call allocates the slots (2 x max_stacks rounded up to a power
    // of two, 4 bytes each, touched only as they fill); later calls keep the first bound.
    void configure(uint32_t max_stacks) noexcept;
    uint32_t max_stacks() const { return max_stacks_; }

    // The id of frames[0..count) (count <= trace::kMaxBacktraceFrames), for the trace `pipeline` writes; 0 when it
    // could not be named (see InternResult). Never throws.
    uint32_t intern(const uint64_t* frames, uint32_t count, Pipeline& pipeline, InternResult* result = nullptr) noexcept;

    // Distinct stacks written for the current trace.
    uint64_t stacks() const { return next_id_.load(std::memory_order_relaxed) - 1; }

    // In a forked child, before anything there uses the table: only the forking thread exists, the mutex may have
    // been held by a parent thread at the fork (the writer interning a sample's stack), and the child's trace is
    // new. The session's fork handler calls it first thing: a pthread_atfork handler of the table's own would run
    // after the session's (child handlers run in the order registered), whose start locks the mutex.
    void reset_after_fork() noexcept;

private:
    struct Entry {
        uint64_t hash;
        uint32_t count;
        uint32_t pad;
        uint64_t frames[1];  // count of them (the entry is allocated that long)
    };
    void reset_locked() noexcept;

    std::atomic<uint32_t>* slots_ = nullptr;  // open addressing by hash; 0 empty, else a Stack id
    uint32_t mask_ = 0;
    uint32_t max_stacks_ = 0;
    std::atomic<Entry*>* entries_ = nullptr;  // by id - 1; published before the slot names the id
    // Entries live in chunks of kArenaBytes, bump-allocated (an entry is 16 + 8 x count bytes).
    static constexpr size_t kArenaBytes = 256 * 1024;
    std::vector<uint8_t*> arenas_;
    size_t arena_used_ = kArenaBytes;
    std::mutex mutex_;
    std::atomic<uint32_t> next_id_{1};        // written under mutex_
    std::atomic<const Pipeline*> owner_{nullptr};  // the trace the ids belong to (written under mutex_)

    friend StackTable& table() noexcept;
};

// The process's table.
StackTable& table() noexcept;

}  // namespace gprof::collector::stacks
