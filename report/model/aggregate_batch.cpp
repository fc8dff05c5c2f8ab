#include "model/aggregate_batch.h"

#include "model/ingest.h"

namespace gprof::report::aggregation {
namespace {

// What a batch does with each record kind (the one dispatch of model/ingest.h): the summaries' kinds are folded
// here, on the worker; the kinds whose handling needs the trace's names or its order are left to the fold
// (Aggregator::fold_other), in file order; the rest are not in the summaries.
struct BatchSink {
    BatchPart& b;
    const BatchSettings& s;
    const Record& r;

    void operator()(const ApiCall& a) {
        ++b.api_calls;
        uint32_t k = b.slot(b.api_slot[a.name], KeyCategory::Api, a.name);
        b.push_duration(k, a.start, a.end);
        if (s.nvtx_detail) b.push_call(a.tid, a.start, a.end, a.correlation, k);
    }
    void operator()(const Kernel& g) {
        if (g.graph_id) b.graph_node_corrs.push_back(g.correlation);
        uint32_t k = b.slot(b.kernel_slot[g.name], KeyCategory::Kernel, g.name);
        b.push_duration(k, g.start, g.end);
        b.add_work(g.device, g.start, g.end);
        b.kernel_time.add(g.device, g.start, g.end);
        if (s.nvtx_detail) b.push_gpu(g.correlation, k, BatchPart::dur(g.start, g.end));
    }
    void operator()(const Memcpy& m) {
        if (m.graph_id) b.graph_node_corrs.push_back(m.correlation);
        auto idx = static_cast<uint8_t>(m.copy_kind);
        if (idx > 15) idx = 0;
        uint32_t k = b.slot(b.memcpy_slot[idx], KeyCategory::Memcpy, idx);
        b.push_duration(k, m.start, m.end);
        b.add_work(m.device, m.start, m.end);
        b.values[k - 1].bytes.push(m.bytes);
        if (s.nvtx_detail) b.push_gpu(m.correlation, k, BatchPart::dur(m.start, m.end));
    }
    void operator()(const Memset& m) {
        if (m.graph_id) b.graph_node_corrs.push_back(m.correlation);
        uint32_t k = b.slot(b.memset_slot, KeyCategory::Memset, 0);
        b.push_duration(k, m.start, m.end);
        b.add_work(m.device, m.start, m.end);
        b.values[k - 1].bytes.push(m.bytes);
        if (s.nvtx_detail) b.push_gpu(m.correlation, k, BatchPart::dur(m.start, m.end));
    }
    void operator()(const Sync& y) { b.widen(y.start, y.end); }
    void operator()(const Nvtx& n) {
        ++b.nvtx_events;
        if (n.type != NvtxType::Mark) b.push_range(n, s.nvtx_detail);
        b.widen(n.start, n.end);
    }

    // Left to the fold.
    void operator()(const GraphLaunch&) { b.others.push_back(r); }
    void operator()(const Memory&) { b.others.push_back(r); }
    void operator()(const MemoryPool&) { b.others.push_back(r); }
    void operator()(const Device&) { b.others.push_back(r); }
    void operator()(const Thread&) { b.others.push_back(r); }
    void operator()(const Dropped&) { b.others.push_back(r); }
    void operator()(const Status&) { b.others.push_back(r); }
    void operator()(const End&) { b.others.push_back(r); }
    void operator()(const Role&) { b.others.push_back(r); }
    void operator()(const Exec&) { b.others.push_back(r); }
    void operator()(const GpuMetricSet&) { b.others.push_back(r); }     // names its metrics with a string
    void operator()(const GpuMetricSample&) { b.others.push_back(r); }  // kept per device until the trace ends

    // Not in the summaries (the full model and the timeline read them).
    void operator()(const CudaInfo&) {}
    void operator()(const Overhead&) {}
    void operator()(const Capture&) {}
    void operator()(const Backtrace&) {}
    void operator()(const Module&) {}
    void operator()(const ExternalCorrelation&) {}
    void operator()(const Stack&) {}
    void operator()(const PyFrame&) {}
    void operator()(const PyStack&) {}
    void operator()(const CallSite&) {}
    void operator()(const CpuSample&) {}      // cpu_sample_sum reads the full model
    void operator()(const OsRuntimeCall&) {}  // osrt_sum too
};

}  // namespace

void aggregate_batch(BatchPart& b, const BatchSettings& s, RecordFilter* filter, TraceStrings* define_now) {
    Record r;
    if (s.nvtx_detail) {
        // About 7 bytes a kept call and 5 an op, from records of 15-20 bytes: a quarter of the batch each.
        size_t bytes = 0;
        for (const ChunkSpan& span : b.chunks) bytes += static_cast<size_t>(span.end - span.begin);
        b.kept_reserve = bytes / 4;
        b.gpus.bytes.reserve(b.kept_reserve);
    }
    RecordGate gate(s.hide_runtime_driver_calls, filter);
    BatchSink sink{b, s, r};
    for (const ChunkSpan& span : b.chunks) {
        ChunkDecoder decoder(span, b.tally);
        while (decoder.next(r)) {
            if (r.kind == RecordKind::String) {
                b.strings.emplace_back(decoder.string_id(), decoder.string_text());
                if (define_now) define_now->define(decoder.string_id(), decoder.string_text());
                continue;
            }
            if (!gate.admit(r)) continue;
            ++b.records;
            deliver(r, sink);
        }
    }
    b.hidden_driver_calls += gate.hidden_driver_calls();
}

}  // namespace gprof::report::aggregation
