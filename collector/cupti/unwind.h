// The native unwinder of call sites: libunwind's unw_backtrace, dlopen'ed (the collector links nothing it could
// clash with), with libunwind's caching policy left as the process has it; glibc's backtrace() when libunwind is
// missing. docs/performance.md ("Native call sites") has the measured cost of each choice: the caching policy made
// no measurable difference (unw_backtrace's fast path keeps its own per-thread cache), and the policy is
// process-wide state a program using libunwind itself shares with us, so it is not changed by default.
#pragma once

#include <cstdint>

namespace gprof::collector::cupti {

enum class Unwinder : uint8_t {
    LibunwindPerThread = 0,  // unw_backtrace with unw_set_caching_policy(UNW_CACHE_PER_THREAD)
    LibunwindGlobal = 1,     // unw_backtrace with libunwind's default cache (one cache behind a lock): the default
    LibunwindNoCache = 2,    // unw_backtrace with UNW_CACHE_NONE
    Glibc = 3,               // backtrace(3): libgcc's unwinder
};

// Chooses the unwinder (before the first unwind; the benchmark switches between them). Returns false when it is
// not available here (libunwind missing): the current choice stays.
bool select_unwinder(Unwinder which);

// "libunwind (per-thread cache)", "libunwind (global cache)", "libunwind (no cache)" or "glibc backtrace".
const char* unwinder_name();

// Return addresses of the calling thread, innermost first, starting with unwind_stack's caller's return address
// (the frame of unwind_stack itself is left out). Up to `max` (at most kMaxUnwindFrames). Returns the count.
// No lock of ours, no allocation of ours (libunwind may allocate its per-thread cache once per thread).
inline constexpr uint32_t kMaxUnwindFrames = 128;
uint32_t unwind_stack(uintptr_t* out, uint32_t max) noexcept;

}  // namespace gprof::collector::cupti
