// The trace clock: one clock for every record of a trace, CPU (NVTX, API calls) and GPU alike.
//
// Nanoseconds on the CLOCK_MONOTONIC scale, read from the TSC when the CPU has an invariant one (constant_tsc
// and nonstop_tsc): rdtsc costs well under half of clock_gettime (docs/performance.md has the figures), and NVTX
// reads the clock twice per range. Without an invariant TSC (or off x86) it falls back to clock_gettime(CLOCK_MONOTONIC).
//
// Calibration: init() pairs (TSC, CLOCK_MONOTONIC) samples a millisecond apart; recalibrate(), called by the
// writer thread now and then, refines the scale from a longer interval. Each new scale starts where the old
// one ended, so the clock never jumps or runs backwards; its drift against CLOCK_MONOTONIC stays within a few
// microseconds. The header's ClockReference (trace clock paired with CLOCK_REALTIME and CLOCK_MONOTONIC) lets
// readers merge processes.
//
// For CUPTI: register gprof_collector_cupti_timestamp (below) with cuptiActivityRegisterTimestampCallback
// (before enabling any activity kind), so GPU records are stamped on this clock too.
#pragma once

#include <atomic>
#include <cstdint>

#include "gprof/trace/records.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace gprof::collector::clock {

// Conversion parameters: ns = base_ns + ((tsc - base_tsc) * mult) >> kShift. Never freed once published
// (a reader may still hold the previous set); there are only a handful per process.
struct Params {
    uint64_t base_tsc = 0;
    uint64_t base_ns = 0;
    uint64_t mult = 0;  // ns per tick << kShift
};
inline constexpr unsigned kShift = 32;

// nullptr: the TSC is not used (clock_gettime fallback).
extern std::atomic<const Params*> g_params;

uint64_t monotonic_ns() noexcept;  // clock_gettime(CLOCK_MONOTONIC)
int64_t realtime_ns() noexcept;    // clock_gettime(CLOCK_REALTIME)

// Safe to call more than once (later calls are no-ops); the first caller wins. Async-signal-unsafe.
void init() noexcept;
// Refines the scale (writer thread). Returns true when a new set was published.
bool recalibrate() noexcept;
bool uses_tsc() noexcept;

inline uint64_t now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    const Params* p = g_params.load(std::memory_order_acquire);
    if (p) {
        uint64_t tsc = __rdtsc();
        // Before base (another core's TSC a few ticks behind, or a stale set): clamp rather than wrap.
        uint64_t delta = tsc > p->base_tsc ? tsc - p->base_tsc : 0;
        return p->base_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(delta) * p->mult) >> kShift);
    }
#endif
    return monotonic_ns();
}

// The trace clock paired with CLOCK_REALTIME and CLOCK_MONOTONIC, for the trace header.
trace::ClockReference reference() noexcept;

}  // namespace gprof::collector::clock

// The trace clock with cuptiActivityRegisterTimestampCallback's signature, uint64_t (*)(void).
extern "C" uint64_t gprof_collector_cupti_timestamp(void);
