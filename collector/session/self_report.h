// What the collector itself cost the process: its memory (NVTX blocks, CUPTI buffers, the writer's chunk), the
// writer thread's CPU time and the process's resident memory, as one Info Status line written at the end of the
// run ("collector memory: ..."; `gprof-report summary --summary full` and the JSON show it). The bounds it names
// are the caps that make the collector drop and count rather than grow (docs/performance.md, "Memory").
#pragma once

#include <cstdint>
#include <string>

#include "gprof/trace/writer.h"

namespace gprof::collector {

class Pipeline;

struct SelfReport {
    // NVTX event blocks (nvtx/stream.h)
    uint64_t nvtx_in_flight = 0, nvtx_peak = 0, nvtx_pooled = 0, nvtx_cap = 0;
    uint64_t nvtx_blocks_fresh = 0, nvtx_blocks_reused = 0, nvtx_blocks_refused = 0;
    // CUPTI activity buffers (cupti/buffers.h); cupti_buffer_bytes 0 when CUPTI never asked for one
    uint64_t cupti_buffer_bytes = 0, cupti_allocated = 0, cupti_peak_held = 0, cupti_cap = 0, cupti_refused = 0;
    uint64_t api_peak = 0, api_dropped = 0;  // API calls from callbacks (cupti/api_calls.h): blocks peak, lost at cap
    uint64_t chunk_bytes = 0;                // the writer's open chunk
    uint64_t queue_dropped = 0;              // messages the pipeline's queue refused at its cap
    uint64_t writer_cpu_ns = 0;              // the writer thread's CPU time so far
    uint64_t nudge_rounds = 0;               // early drains asked for by fast NVTX producers
    uint64_t rss_bytes = 0, peak_rss_bytes = 0;  // the whole process (VmRSS, VmHWM), for scale

    // Filled from the process-wide state; call on the writer thread (writer_cpu_ns is that thread's clock).
    static SelfReport gather(const Pipeline& pipeline);
    // "collector memory: NVTX blocks 0 B held, peak 12.0 MiB (cap 512 MiB) ..." (one line).
    std::string line() const;
};

// A Pipeline periodic hook (ctx: the Pipeline) that writes the line in the final round only. Registered after the
// NVTX recorder's hook, it runs after the last NVTX drain, so "held at the end" is what the drain left.
void self_report_hook(void* ctx, trace::TraceWriter& writer, bool final);

}  // namespace gprof::collector
