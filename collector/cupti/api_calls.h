// API calls recorded from CUPTI's callbacks (GPROF_CUDA_API=callback), the alternative to CUPTI's RUNTIME/DRIVER
// activity records: the collector stamps the call's entry and exit on the calling thread with the trace clock and
// appends one fixed-size event to that thread's own chain of blocks (single producer: the thread; single consumer:
// the writer thread), as the NVTX streams do. No lock, no system call and no allocation per call; one block of 8192
// calls is taken per 256 KiB, from a pool of read blocks when there is one. A cap on blocks in flight bounds memory:
// beyond it calls are dropped and counted (a Dropped record, CollectorQueue), never lost silently.
//
// The writer thread drains every thread's events into ApiCall records (Translator::api_name gives the names, as it
// does for activity records) at every period, and early when the blocks pile up (Pipeline::nudge).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "gprof/trace/writer.h"

namespace gprof::collector {
class Pipeline;
}

namespace gprof::collector::cupti {

class Translator;

struct ApiEvent {
    uint64_t start;
    uint64_t end;
    uint32_t correlation;
    uint32_t cbid;
    int32_t result;
    uint8_t runtime;  // 1: CUDA runtime API, 0: driver API
    uint8_t pad[3];
};
static_assert(sizeof(ApiEvent) == 32);

inline constexpr size_t kApiEventsPerBlock = 8192;                // 256 KiB blocks
inline constexpr size_t kMaxApiBytesInFlight = size_t(256) << 20;  // the cap
inline constexpr size_t kApiNudgeBytes = size_t(4) << 20;          // nudge the writer past this

// Appends one call made by this thread. Any application thread, inside a CUPTI API callback; never blocks.
// `nudge`: the pipeline to wake when blocks pile up (may be null).
void record_api_call(const ApiEvent& event, Pipeline* nudge) noexcept;

// Writer thread: writes every complete event of every thread as an ApiCall record and frees the blocks it has
// read; threads that have ended are forgotten once drained. Calls of `own_tid` (the writer itself) are left out.
// Returns the number of records written. Also writes a Dropped record for calls lost at the cap since last time.
size_t drain_api_calls(trace::TraceWriter& writer, Translator& names, uint32_t own_tid);

struct ApiCallStats {
    uint64_t recorded = 0, dropped = 0;
    size_t bytes_in_flight = 0, peak_bytes_in_flight = 0;
};
ApiCallStats api_call_stats() noexcept;

// In a forked child: the parent's threads and blocks are not ours; forget them (leaked) and start afresh.
void reset_api_calls_after_fork() noexcept;

}  // namespace gprof::collector::cupti
