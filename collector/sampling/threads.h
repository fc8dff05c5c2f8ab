// The threads the sampler and the OS-runtime trace know: one slot per thread, with what the thread writes about
// itself (two rings: its CPU samples, written by the sampling signal's handler, and its OS-runtime calls, written by
// the interposed libc functions) and its CPU-time timer.
//
// A thread takes its slot on first use, from any context (a signal handler, an interposed call inside the program's
// own signal handler): an atomic claim in a fixed table and one mmap for the rings, nothing else, so it is
// async-signal-safe. The slot stays the thread's (a thread-local pointer) until the thread ends: its pthread key's
// destructor (threads made by pthread_create, which the collector wraps) or the writer thread's check that the
// thread still exists (any other) marks it exited; the writer drains it one last time and frees it for reuse. A
// forked child keeps only the forking thread's slot, emptied.
#pragma once

#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "sampling/ring.h"

namespace gprof::collector::sampling {

// Python code locations a channel has written, by its own small ids (a signal handler cannot take the lock of the
// process's tables): the first time a location is seen its texts go into the ring with its id; later entries name
// the id. Owned by the channel's producer; the writer thread keeps the id -> PyFrame map (drain.cpp).
struct PyLocationCache {
    static constexpr uint32_t kSlots = 1024;   // open addressing, at most kMaxIds used
    static constexpr uint32_t kMaxIds = 768;   // then the cache starts again (a Reset entry tells the writer)
    struct Entry {
        const void* code;
        const void* file;
        const void* name;
        int32_t offset;
        uint32_t id;  // 0: free
    };
    Entry* entries = nullptr;
    uint32_t next_id = 1;
};

struct Channel {
    Ring ring;
    PyLocationCache py;
    // Set while the producer writes: a signal handler of the program that makes an interposed call while the same
    // thread is inside one (or the sampler's handler and an OS-runtime call) never writes into a half-made entry.
    std::atomic<uint32_t> busy{0};
};

enum class SlotState : uint32_t { Free = 0, Claiming = 1, Live = 2, Exited = 3 };

struct Slot {
    std::atomic<SlotState> state{SlotState::Free};
    int32_t tid = 0;
    bool on_behalf = false;   // claimed by the writer for a thread it found in /proc/self/task
    std::atomic<bool> armed{false};  // `timer` exists
    // Its thread blocks SIGPROF now (set by the thread before its mask blocks it): no timer may be armed for it.
    std::atomic<bool> blocks{false};
    // The tid of the thread arming this slot's timer now (the slot's own thread or the writer), 0 when none: only
    // one arms at a time, and a thread about to block SIGPROF waits for an arming in progress (sampler.cpp).
    std::atomic<int32_t> arming{0};
    bool ever_armed = false;  // its thread has had a timer (counted once: SamplerCounts::threads_armed)
    timer_t timer{};
    Channel samples;          // CpuSample entries (the sampling signal's handler)
    Channel osrt;             // OsRuntimeCall entries (interposed libc calls)
    void* memory = nullptr;   // rings and caches, mapped once and kept for the slot's next thread
};

inline constexpr uint32_t kMaxThreads = 4096;
inline constexpr uint32_t kSampleRingBytes = 128 * 1024;
inline constexpr uint32_t kOsrtRingBytes = 64 * 1024;

// The table (static storage: a signal's value can be checked against it).
Slot* slots() noexcept;
bool is_slot(const void* p) noexcept;

// The calling thread's slot, taken on first use; nullptr when the table is full (said by the writer) or memory ran
// out. Async-signal-safe. `claimed` is set when this call took it (the caller may arm the thread's timer).
Slot* current_slot(bool* claimed = nullptr) noexcept;
// The calling thread's slot if it has one (also one the writer took for it, then adopted); never claims.
Slot* existing_slot() noexcept;
// The calling thread's kernel tid (cached).
int32_t current_tid() noexcept;

// From a signal handler running on the slot's own thread: the slot becomes the thread's (a slot the writer claimed
// for a thread it found).
void adopt(Slot* slot) noexcept;

// The writer thread: a slot for `tid` (a thread of this process it found without one), marked on_behalf.
Slot* claim_for(int32_t tid) noexcept;
// Whether a live slot already stands for `tid` (writer thread).
bool has_slot(int32_t tid) noexcept;

// The calling thread ends (its pthread key's destructor): its slot is marked Exited; the writer frees it.
void thread_exits() noexcept;
// The writer thread, after the last drain of an Exited slot (or of a thread that no longer exists).
void free_slot(Slot* slot) noexcept;

// Slots claimed so far that found the table full (said once by the writer).
uint64_t table_full() noexcept;

// In a forked child (one thread): every slot but the forking thread's is freed (their rings emptied), and the
// forking thread's is emptied. Timers do not survive fork; armed is cleared.
void reset_threads_after_fork() noexcept;

// The key whose destructor calls thread_exits(): set by the pthread_create wrapper in each new thread.
void watch_thread_exit() noexcept;

}  // namespace gprof::collector::sampling
