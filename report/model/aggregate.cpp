// aggregate_run: one streaming pass over the traces for the summary reports. Its parts, by job: pod_buffer.h (the
// memory the values live in), aggregate_batch (decoding and folding a batch of chunks on a worker), decode_pool.cpp
// (the threads), aggregator (the fold in file order, per record kind), kept_records.h and nvtx_attribution.cpp (the
// NVTX block), process_names.cpp (helpers and short names).
#include "model/aggregate.h"

#include <algorithm>
#include <tuple>

#include "gprof/trace/names.h"
#include "model/aggregator.h"
#include "model/stats.h"

namespace gprof::report {

using namespace gprof::trace;
using aggregation::Aggregator;
using aggregation::default_threads;
using aggregation::read_trace;


std::vector<const KeyData*> Aggregate::of(KeyCategory c) const {
    std::vector<std::pair<uint64_t, const KeyData*>> tmp;
    for (const auto& k : keys)
        if (k.category == c) tmp.emplace_back(k.time_stats.total, &k);
    std::sort(tmp.begin(), tmp.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second->name < b.second->name;
    });
    std::vector<const KeyData*> out;
    for (auto& t : tmp) out.push_back(t.second);
    return out;
}

size_t Aggregate::damaged_traces() const {
    size_t n = unreadable_traces;
    for (const auto& p : processes)
        if (p.read_stats.damaged()) ++n;
    return n;
}

std::string memop_row_name(MemcpyKind kind) { return "[CUDA memcpy " + std::string(memcpy_kind_name(kind)) + "]"; }

std::string graph_row_name(uint32_t graph_id) { return "[CUDA graph " + std::to_string(graph_id) + "]"; }

std::string memop_nsys_name(MemcpyKind kind) {
    switch (kind) {
        case MemcpyKind::HtoD: return "[CUDA memcpy Host-to-Device]";
        case MemcpyKind::DtoH: return "[CUDA memcpy Device-to-Host]";
        case MemcpyKind::DtoD: return "[CUDA memcpy Device-to-Device]";
        case MemcpyKind::HtoH: return "[CUDA memcpy Host-to-Host]";
        case MemcpyKind::PtoP: return "[CUDA memcpy Peer-to-Peer]";
        default: return memop_row_name(kind);
    }
}

Aggregate aggregate_run(const std::vector<std::filesystem::path>& traces, const AggregateOptions& options) {
    Aggregate out;
    Aggregator agg(out, options);
    const ProgressHook& progress = progress_hook();
    auto unreadable = [&](const std::filesystem::path& path, const std::string& msg) {
        ++out.unreadable_traces;
        out.warnings.push_back(trace_label(path) + ": " + msg);
    };
    // Open every reader first (as stream_run does): the run axis needs every header's clock.
    OpenedRun opened = open_traces(traces, options.filter, unreadable);
    Progress done;
    for (const auto& t : opened.traces) done.bytes_total += t.reader->stats().file_bytes;
    if (progress) progress(done);
    const unsigned threads = options.threads ? options.threads : default_threads();
    for (auto& t : opened.traces) {
        auto& r = t.reader;
        StreamContext ctx;
        ctx.reader = r.get();
        ctx.clock_offset_ns = t.clock_offset_ns;
        ctx.run_base_realtime_ns = opened.run_base_realtime_ns;
        agg.begin(ctx);
        done.trace = r->path();
        std::function<void(uint64_t, uint64_t)> report;
        if (progress)
            report = [&](uint64_t bytes, uint64_t records) {
                Progress now = done;
                now.bytes_done += bytes;
                now.records += records;
                progress(now);
            };
        try {
            read_trace(*r, agg, ctx, options, threads, report);
        } catch (const std::exception& e) {
            // The reader does not throw on damage; running out of memory ends this trace only.
            unreadable(r->path(), e.what());
        }
        r->finish_chunks(agg.tally());
        ctx.hidden_driver_calls = agg.hidden_driver_calls();
        agg.end(ctx);
        done.bytes_done += r->stats().file_bytes;
        done.records += r->stats().records;
        r.reset();  // unmap as soon as we are done with it
    }
    if (progress) {
        done.finished = true;
        progress(done);
    }
    bool any = false;
    for (const auto& p : out.processes) {
        if (p.first_ns == 0 && p.last_ns == 0) continue;
        if (!any || p.first_ns < out.first_ns) out.first_ns = p.first_ns;
        if (!any || p.last_ns > out.last_ns) out.last_ns = p.last_ns;
        any = true;
    }
    std::stable_sort(out.processes.begin(), out.processes.end(),
                     [](const ProcessInfo& a, const ProcessInfo& b) {
                         return process_key(a.header, a.rank) < process_key(b.header, b.rank);
                     });
    std::stable_sort(out.gpu_metrics.begin(), out.gpu_metrics.end(),
                     [](const GpuMetricsSummary& a, const GpuMetricsSummary& b) {
                         return std::tie(a.process, a.device) < std::tie(b.process, b.device);
                     });
    for (size_t i = 0; i < out.keys.size(); ++i) {
        auto& v = agg.values_[i];
        out.keys[i].time_stats = v.durations.stats();
        v.durations.release();
        out.keys[i].size_stats = v.bytes.stats();
        v.bytes.release();
    }
    return out;
}

std::vector<ExpectedRecords> expected_records(const Aggregate& agg) {
    std::vector<ExpectedRecords> out;
    for (const ProcessInfo& p : agg.processes) out.push_back({p.path, p.api_calls, p.nvtx_events});
    return out;
}

}  // namespace gprof::report
