#include "sampling/threads.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gprof::collector::sampling {

namespace {

Slot g_slots[kMaxThreads];
std::atomic<uint32_t> g_hint{0};        // where the next claim starts looking
std::atomic<uint64_t> g_table_full{0};

// 8 bytes each of static TLS (initial-exec: no allocation on first access, usable in a signal handler).
__attribute__((tls_model("initial-exec"))) thread_local Slot* t_slot = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local int32_t t_tid = 0;
// The thread's slot was given back (its exit key's destructor ran): a call it makes later on its way out (another
// thread-local destructor taking a lock) takes no new slot, which nothing would ever free.
__attribute__((tls_model("initial-exec"))) thread_local bool t_gone = false;

constexpr size_t kCacheBytes = sizeof(PyLocationCache::Entry) * PyLocationCache::kSlots;
constexpr size_t kSlotBytes = kSampleRingBytes + kOsrtRingBytes + 2 * kCacheBytes;

// Rings and caches of a slot: one anonymous mapping, made the first time the slot is used and kept for its later
// threads (its pages are touched as entries land in them).
bool attach_memory(Slot& s) noexcept {
    if (!s.memory) {
        int saved = errno;
        void* m = ::mmap(nullptr, kSlotBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        errno = saved;
        if (m == MAP_FAILED) return false;
        s.memory = m;
    } else {
        // Reused: the caches start empty (the rings are emptied when the slot is freed).
        std::memset(static_cast<uint8_t*>(s.memory) + kSampleRingBytes + kOsrtRingBytes, 0, 2 * kCacheBytes);
    }
    auto* base = static_cast<uint8_t*>(s.memory);
    s.samples.ring.attach(base, kSampleRingBytes);
    s.osrt.ring.attach(base + kSampleRingBytes, kOsrtRingBytes);
    s.samples.py.entries = reinterpret_cast<PyLocationCache::Entry*>(base + kSampleRingBytes + kOsrtRingBytes);
    s.osrt.py.entries = reinterpret_cast<PyLocationCache::Entry*>(base + kSampleRingBytes + kOsrtRingBytes + kCacheBytes);
    s.samples.py.next_id = 1;
    s.osrt.py.next_id = 1;
    s.samples.busy.store(0, std::memory_order_relaxed);
    s.osrt.busy.store(0, std::memory_order_relaxed);
    return true;
}

Slot* claim(int32_t tid, bool on_behalf) noexcept {
    uint32_t start = g_hint.load(std::memory_order_relaxed);
    for (uint32_t k = 0; k < kMaxThreads; ++k) {
        uint32_t i = (start + k) % kMaxThreads;
        Slot& s = g_slots[i];
        SlotState expected = SlotState::Free;
        if (s.state.load(std::memory_order_relaxed) != SlotState::Free ||
            !s.state.compare_exchange_strong(expected, SlotState::Claiming, std::memory_order_acquire))
            continue;
        if (!attach_memory(s)) {
            s.state.store(SlotState::Free, std::memory_order_release);
            return nullptr;
        }
        s.tid = tid;
        s.on_behalf = on_behalf;
        s.armed.store(false, std::memory_order_relaxed);
        s.blocks.store(false, std::memory_order_relaxed);
        s.arming.store(0, std::memory_order_relaxed);
        s.ever_armed = false;
        s.state.store(SlotState::Live, std::memory_order_release);
        g_hint.store((i + 1) % kMaxThreads, std::memory_order_relaxed);
        return &s;
    }
    g_table_full.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

pthread_key_t g_exit_key;
bool g_exit_key_made = [] { return ::pthread_key_create(&g_exit_key, [](void*) { thread_exits(); }) == 0; }();

}  // namespace

Slot* slots() noexcept { return g_slots; }

bool is_slot(const void* p) noexcept {
    auto a = reinterpret_cast<uintptr_t>(p), lo = reinterpret_cast<uintptr_t>(&g_slots[0]);
    return a >= lo && a < lo + sizeof g_slots && (a - lo) % sizeof(Slot) == 0;
}

int32_t current_tid() noexcept {
    if (!t_tid) t_tid = static_cast<int32_t>(::syscall(SYS_gettid));
    return t_tid;
}

namespace {

// A slot the writer took for this thread (found in /proc before the thread made a call of its own): adopted.
Slot* adopt_on_behalf() noexcept {
    int32_t tid = current_tid();
    for (uint32_t i = 0; i < kMaxThreads; ++i) {
        Slot& s = g_slots[i];
        if (s.on_behalf && s.tid == tid && s.state.load(std::memory_order_acquire) == SlotState::Live) {
            t_slot = &s;
            return &s;
        }
    }
    return nullptr;
}

}  // namespace

Slot* existing_slot() noexcept { return t_slot ? t_slot : t_gone ? nullptr : adopt_on_behalf(); }

Slot* current_slot(bool* claimed) noexcept {
    if (claimed) *claimed = false;
    if (Slot* s = t_slot) return s;
    if (t_gone) return nullptr;
    if (Slot* s = adopt_on_behalf()) return s;
    int32_t tid = current_tid();
    Slot* s = claim(tid, false);
    if (s && claimed) *claimed = true;
    t_slot = s;
    return s;
}

void adopt(Slot* slot) noexcept {
    if (!t_slot) t_slot = slot;
}

Slot* claim_for(int32_t tid) noexcept { return claim(tid, true); }

bool has_slot(int32_t tid) noexcept {
    for (uint32_t i = 0; i < kMaxThreads; ++i) {
        const Slot& s = g_slots[i];
        SlotState st = s.state.load(std::memory_order_acquire);
        if ((st == SlotState::Live || st == SlotState::Exited) && s.tid == tid) return true;
    }
    return false;
}

void thread_exits() noexcept {
    t_gone = true;
    Slot* s = t_slot;
    if (!s) return;
    t_slot = nullptr;
    s->state.store(SlotState::Exited, std::memory_order_release);
}

void free_slot(Slot* slot) noexcept {
    slot->samples.ring.clear();
    slot->osrt.ring.clear();
    slot->tid = 0;
    slot->on_behalf = false;
    slot->armed.store(false, std::memory_order_relaxed);
    slot->state.store(SlotState::Free, std::memory_order_release);
}

uint64_t table_full() noexcept { return g_table_full.load(std::memory_order_relaxed); }

void reset_threads_after_fork() noexcept {
    t_tid = 0;  // the child's own
    t_gone = false;
    for (uint32_t i = 0; i < kMaxThreads; ++i) {
        Slot& s = g_slots[i];
        if (s.state.load(std::memory_order_relaxed) == SlotState::Free) continue;
        if (&s == t_slot) {
            s.tid = current_tid();
            s.on_behalf = false;
            s.armed.store(false, std::memory_order_relaxed);
            s.arming.store(0, std::memory_order_relaxed);  // (blocks: the mask is inherited, so is the flag)
                attach_memory(s);  // emptied: the parent's entries are the parent's
            continue;
        }
        free_slot(&s);
    }
    g_table_full.store(0, std::memory_order_relaxed);
}

void watch_thread_exit() noexcept {
    if (g_exit_key_made) ::pthread_setspecific(g_exit_key, reinterpret_cast<void*>(1));
}

}  // namespace gprof::collector::sampling
