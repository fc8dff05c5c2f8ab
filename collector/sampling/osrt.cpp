#include "sampling/osrt.h"

#include <link.h>

#include <cerrno>

#include "sampling/capture.h"
#include "sampling/entries.h"
#include "sampling/sampler.h"
#include "sampling/threads.h"
#include "stacks/unwind.h"

namespace gprof::collector::sampling {

namespace osrt_detail {
std::atomic<bool> g_on{false};
std::atomic<uint64_t> g_threshold_ns{1000};
}  // namespace osrt_detail

namespace {

using osrt_detail::g_on;

std::atomic<uint64_t> g_backtrace_ns{80000};
std::atomic<uint64_t> g_recorded{0}, g_with_stack{0}, g_nested{0}, g_no_slot{0};

// The executable segments of the object holding this code (the collector's library): the leading frames of a call
// site that lie there are the interposer's and ours, not the program's.
struct OwnCode {
    static constexpr int kMax = 4;
    uintptr_t lo[kMax] = {}, hi[kMax] = {};
    int count = 0;
    bool contains(uintptr_t pc) const {
        for (int i = 0; i < count; ++i)
            if (pc >= lo[i] && pc < hi[i]) return true;
        return false;
    }
};
OwnCode g_own;

void find_own_code() {
    struct Ctx {
        uintptr_t marker;
        OwnCode* out;
    } ctx{reinterpret_cast<uintptr_t>(&find_own_code), &g_own};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* c = static_cast<Ctx*>(data);
            OwnCode found;
            bool mine = false;
            for (int i = 0; i < info->dlpi_phnum && found.count < OwnCode::kMax; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
                uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
                found.lo[found.count] = lo;
                found.hi[found.count++] = hi;
                if (c->marker >= lo && c->marker < hi) mine = true;
            }
            // Only a library of its own: a program that links the collector statically is the program.
            if (mine && info->dlpi_name && *info->dlpi_name) *c->out = found;
            return mine ? 1 : 0;
        },
        &ctx);
}

}  // namespace

const char* osrt_call_name(OsrtCall call) noexcept {
    static constexpr const char* kNames[] = {
#define GPROF_OSRT_NAME(e, name) name,
        GPROF_OSRT_CALLS(GPROF_OSRT_NAME)
#undef GPROF_OSRT_NAME
    };
    auto i = static_cast<size_t>(call);
    return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "?";
}

void start_osrt(const OsrtOptions& options) noexcept {
    if (!options.on) return;
    if (g_own.count == 0) find_own_code();
    osrt_detail::g_threshold_ns.store(options.threshold_ns, std::memory_order_relaxed);
    g_backtrace_ns.store(options.backtrace_threshold_ns, std::memory_order_relaxed);
    g_on.store(true, std::memory_order_release);
}

void stop_osrt() noexcept { g_on.store(false, std::memory_order_release); }

void osrt_detail::record(OsrtCall call, uint64_t start, uint64_t end) noexcept {
    int saved = errno;
    OwnWork own;  // the unwinder's own locks are not the program's calls
    bool claimed = false;
    Slot* slot = current_slot(&claimed);
    if (!slot) {
        g_no_slot.fetch_add(1, std::memory_order_relaxed);
        errno = saved;
        return;
    }
    if (claimed) thread_found();  // a thread the collector had not seen (clone()): sampled from now on
    Channel& channel = slot->osrt;
    if (channel.busy.exchange(1, std::memory_order_acquire) != 0) {
        g_nested.fetch_add(1, std::memory_order_relaxed);
        errno = saved;
        return;
    }
    Stacks stacks;
    if (end - start >= g_backtrace_ns.load(std::memory_order_relaxed)) {
        uintptr_t raw[stacks::kMaxUnwindFrames];
        uint32_t n = stacks::unwind_stack(raw, kMaxFrames + 8);
        uint32_t skip = 0;
        while (skip < n && g_own.contains(raw[skip] - 1)) ++skip;
        for (uint32_t i = skip; i < n && stacks.n_native < kMaxFrames; ++i) stacks.native[stacks.n_native++] = raw[i];
        take_python(channel, stacks);
    }
    OsrtEntry head{};
    head.start = start;
    head.end = end;
    head.call = static_cast<uint32_t>(call);
    head.stacks.n_native = static_cast<uint16_t>(stacks.n_native);
    head.stacks.n_py = static_cast<uint16_t>(stacks.n_py);
    head.stacks.py_cut = stacks.py_cut ? 1 : 0;
    if (write_entry(channel, kOsrtCall, &head, sizeof head, stacks)) {
        g_recorded.fetch_add(1, std::memory_order_relaxed);
        if (stacks.n_native || stacks.n_py) g_with_stack.fetch_add(1, std::memory_order_relaxed);
    }
    channel.busy.store(0, std::memory_order_release);
    errno = saved;
}

OsrtCounts osrt_counts() noexcept {
    OsrtCounts c;
    c.recorded = g_recorded.load(std::memory_order_relaxed);
    c.with_stack = g_with_stack.load(std::memory_order_relaxed);
    c.nested = g_nested.load(std::memory_order_relaxed);
    c.no_slot = g_no_slot.load(std::memory_order_relaxed);
    return c;
}

void reset_osrt_after_fork() noexcept {
    for (auto* c : {&g_recorded, &g_with_stack, &g_nested, &g_no_slot}) c->store(0, std::memory_order_relaxed);
}

}  // namespace gprof::collector::sampling
