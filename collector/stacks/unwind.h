// The native unwinder of call sites and CPU samples: libunwind's unw_backtrace, dlopen'ed (the collector links nothing it could
// clash with), with libunwind's caching policy left as the process has it; glibc's backtrace() when libunwind is
// missing. docs/performance.md ("Native call sites") has the measured cost of each choice: the caching policy made
// no measurable difference (unw_backtrace's fast path keeps its own per-thread cache), and the policy is
// process-wide state a program using libunwind itself shares with us, so it is not changed by default.
#pragma once

#include <cstdint>

namespace gprof::collector::stacks {

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

// In a signal handler: the interrupted code's stack. out[0] is the instruction the thread was executing (the
// signal's context), out[1...] the return addresses above it. Up to `max`; returns the count (at least 1 when the
// context has a program counter). The frames of the handler and of the signal trampoline are left out: the
// unwinder steps through them, and the walk starts where it meets the context's program counter. libunwind's
// local unwinding is async-signal-safe (its global cache takes its lock with every signal blocked); its per-thread
// trace cache is made on a thread's first unwind, which warm_up_thread() does outside any handler. Without libunwind
// (glibc's backtrace() is not async-signal-safe) only out[0], the interrupted instruction.
uint32_t unwind_interrupted(const void* ucontext, uintptr_t* out, uint32_t max) noexcept;

// One unwind on the calling thread, outside a signal handler, so that the unwinder's per-thread state (libunwind's
// trace cache, made with mmap and a pthread key) exists before a handler first needs it.
void warm_up_thread() noexcept;

// The unwinder's first use in the process, out of the program's way: libunwind opens a pipe on its first unwind
// (to test addresses before reading them) and keeps it for good, which would take the numbers the program's next
// open() expects (0 or 1 when it runs with stdin or stdout closed) or two of those its limit allows. Made here under
// descriptors::create_high, so the pipe lands above them. Idempotent; at the session's start, before any sample.
void init_unwinder() noexcept;

}  // namespace gprof::collector::stacks
