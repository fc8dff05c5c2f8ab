#include "session/self_report.h"

#include <time.h>

#include <cstdio>
#include <cstring>

#include "base/clock.h"
#include "cupti/api_calls.h"
#include "cupti/buffers.h"
#include "nvtx/stream.h"
#include "pipeline/pipeline.h"

namespace gprof::collector {
namespace {

// "VmRSS:     1234 kB" from /proc/self/status, in bytes; 0 when unreadable.
void read_rss(uint64_t& rss, uint64_t& peak) {
    rss = peak = 0;
    FILE* f = std::fopen("/proc/self/status", "re");
    if (!f) return;
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
        unsigned long long kib = 0;
        if (std::sscanf(line, "VmRSS: %llu kB", &kib) == 1) rss = kib * 1024;
        else if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) peak = kib * 1024;
    }
    std::fclose(f);
}

std::string bytes(uint64_t b) {
    char buf[32];
    if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(1ull << 30));
    else if (b >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1ull << 20));
    else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.0f KiB", double(b) / 1024.0);
    else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
    return buf;
}

}  // namespace

SelfReport SelfReport::gather(const Pipeline& pipeline) {
    SelfReport r;
    BlockPool::Figures m = nvtx::stream_memory();
    r.nvtx_in_flight = m.bytes_in_flight;
    r.nvtx_peak = m.peak_bytes_in_flight;
    r.nvtx_pooled = m.pooled_bytes;
    r.nvtx_cap = nvtx::kMaxBytesInFlight;
    r.nvtx_blocks_fresh = m.blocks_fresh;
    r.nvtx_blocks_reused = m.blocks_reused;
    r.nvtx_blocks_refused = m.blocks_refused;
    cupti::BufferPool::Stats b = cupti::buffer_pool().stats();
    if (b.allocated > 0) {
        r.cupti_buffer_bytes = cupti::buffer_pool().buffer_size();
        r.cupti_allocated = b.allocated;
        r.cupti_peak_held = b.peak_outstanding;
        r.cupti_cap = cupti::buffer_pool().max_outstanding();
        r.cupti_refused = b.refused;
    }
    cupti::ApiCallStats a = cupti::api_call_stats();
    r.api_peak = a.peak_bytes_in_flight;
    r.api_dropped = a.dropped;
    r.chunk_bytes = pipeline.chunk_bytes();
    r.queue_dropped = pipeline.queue_dropped();
    r.nudge_rounds = pipeline.nudge_rounds();
    timespec t{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0)
        r.writer_cpu_ns = static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
    read_rss(r.rss_bytes, r.peak_rss_bytes);
    return r;
}

std::string SelfReport::line() const {
    std::string s = "collector memory: NVTX blocks " + bytes(nvtx_in_flight) + " held at the end, peak " +
                    bytes(nvtx_peak) + " (cap " + bytes(nvtx_cap) + "), " + bytes(nvtx_pooled) + " kept for reuse; " +
                    std::to_string(nvtx_blocks_fresh) + " blocks new, " + std::to_string(nvtx_blocks_reused) +
                    " reused";
    if (nvtx_blocks_refused) s += ", " + std::to_string(nvtx_blocks_refused) + " refused at the cap (events dropped)";
    if (cupti_buffer_bytes) {
        s += "; CUPTI buffers of " + bytes(cupti_buffer_bytes) + ": " + std::to_string(cupti_allocated) +
             " allocated, peak " + std::to_string(cupti_peak_held) + " held";
        s += cupti_cap ? " (cap " + std::to_string(cupti_cap) + ")" : std::string(" (no cap)");
        if (cupti_refused) s += ", " + std::to_string(cupti_refused) + " requests refused (CUPTI dropped and counted)";
    } else {
        s += "; no CUPTI buffer";
    }
    if (api_peak) {
        s += "; API-call blocks peak " + bytes(api_peak) + " (cap " + bytes(cupti::kMaxApiBytesInFlight) + ")";
        if (api_dropped) s += ", " + std::to_string(api_dropped) + " calls dropped at the cap";
    }
    s += "; writer chunk " + bytes(chunk_bytes);
    if (queue_dropped) s += "; " + std::to_string(queue_dropped) + " queued messages dropped at the cap";
    char cpu[64];
    std::snprintf(cpu, sizeof cpu, "; writer thread CPU %.1f ms", double(writer_cpu_ns) / 1e6);
    s += cpu;
    if (nudge_rounds) s += " (" + std::to_string(nudge_rounds) + " early drains)";
    s += "; process resident " + bytes(rss_bytes) + ", peak " + bytes(peak_rss_bytes);
    return s;
}

void self_report_hook(void* ctx, trace::TraceWriter& w, bool final) {
    if (!final) return;
    write_status(w, trace::Component::Collector, trace::StatusLevel::Info,
                 SelfReport::gather(*static_cast<const Pipeline*>(ctx)).line());
}

}  // namespace gprof::collector
