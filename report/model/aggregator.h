// The fold of aggregate_run: batches of one trace (aggregate_batch.h) come in file order and are folded into the
// Aggregate: keys named, values merged, the kinds the batches leave to it (devices, threads, status, memory, graph
// launches, exec, role, end) taken per kind, and at the end of the trace the NVTX block (nvtx_attribution.cpp).
// Not for use outside model/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/aggregate.h"
#include "model/aggregate_batch.h"
#include "model/kept_records.h"

namespace gprof::report::aggregation {

using namespace gprof::trace;

// Why a program a process started could not be traced (Exec records), in a few words (process_names.cpp).
std::string untraced_reason(trace::ExecImage image);

class Aggregator {
public:
    Aggregator(Aggregate& out, const AggregateOptions& opt) : out_(out), opt_(opt) {}

    void begin(const StreamContext& ctx);

    // Folds a batch in: batches come in file order, so keys, per-thread calls and GPU ops end up in the order a
    // single pass would give them.
    void fold(BatchPart& b);

    const LargeKeys* large_keys() const { return large_keys_.get(); }
    const TraceStrings& strings() const { return strings_; }
    TraceStrings& strings() { return strings_; }
    ChunkTally& tally() { return tally_; }
    uint64_t hidden_driver_calls() const { return hidden_driver_calls_; }
    void set_sweep_threads(unsigned n) { sweep_threads_ = std::max(1u, n); }

    // The records a batch leaves to the fold (BatchPart::others), in file order.
    void handle_other(ProcessInfo& p, const Record& r);

    void end(const StreamContext& ctx);

private:
    static uint64_t dur(Timestamp s, Timestamp e) { return e > s ? e - s : 0; }

    // The process's GPU work on a device. Map nodes stay put: the last device's entry is kept for the next op.
    void add_work(ProcessInfo& p, uint32_t device, Timestamp s, Timestamp e);

    // Graph launches whose nodes are not in the trace are the GPU work: one row per graph ("[CUDA graph 5]").
    void graph_work(ProcessInfo& p);

    void account_memory(ProcessInfo& p, const StreamContext& ctx);

    void release_calls();

    void widen(Timestamp s, Timestamp e);

    void push_duration(uint32_t key, Timestamp s, Timestamp e);

    // Key index + 1 for a string id of this trace; keys are shared across traces by (category, name).
    uint32_t key_for(SlotTable& cache, StringId id, KeyCategory c);
    uint32_t memop_key(const std::string& name, const std::string& nsys, KeyCategory c);
    uint32_t global_key(const std::string& name, KeyCategory c, const std::string& memop);

    void finish_nvtx_and_matching(const ProcessInfo& p);

    // The trace's GPU metrics, summarised per device with its kernel time and the NVTX ranges (gpu_metrics_fold.cpp).
    void finish_gpu_metrics(const ProcessInfo& p, const StreamContext& ctx);

    // nvprof's NVTX block: a range gets the API calls of its thread that start inside it and end by its end, and
    // the GPU ops those calls launched (same correlation id). Also counts GPU ops with no launching API call.
    // The kept calls and ops are read on several threads, each a run of consecutive batches:
    //   1. each call is given to the ranges covering its start (ThreadCover), its correlation id marked, and the
    //      call remembered in a small table by correlation; each op finds its call there (real traces write an op
    //      just before or after its call);
    //   2. if the marks show ids shared by several calls (no real trace has any), pass 1 is done again with those
    //      ids known, so that their ops take the slow path of 3 (one pass instead of two: 10-15 ms of the 10^7
    //      bench trace's ~0.1 s here);
    //   3. ops whose call was not in the table (far away in the file, or shared ids) are matched by a scan of the
    //      calls. The result is the same as giving every call and op to its ranges one by one, in any order.
    // `row_of_group`: the trace's range groups -> their row - first_slot.
    void attribute(const std::vector<uint32_t>& row_of_group, size_t slots, size_t first_slot, const ProcessInfo& p);

    Aggregate& out_;
    const AggregateOptions& opt_;
    StreamContext ctx_;
    DeviceWork* device_work_ = nullptr;  // add_work's last entry
    uint32_t device_work_id_ = 0;
    const ProcessInfo* device_work_owner_ = nullptr;
    std::unordered_map<std::string, uint32_t> index_;
    SlotTable api_key_, kernel_key_;  // string id -> key, this trace
    TraceStrings strings_;
    std::unique_ptr<LargeKeys> large_keys_;  // this trace's
    ChunkTally tally_;
    uint64_t hidden_driver_calls_ = 0;
    uint32_t memcpy_key_[16] = {};
    uint32_t memset_key_ = 0;
    std::vector<KeptBatch> kept_;                          // this trace's calls and ops, in file order
    uint64_t kept_calls_ = 0, kept_ops_ = 0;
    uint32_t max_correlation_ = 0;
    RangeGroups groups_;                                   // this trace's finished NVTX ranges, by group
    uint64_t unfinished_ranges_ = 0;
    std::vector<GraphLaunch> graph_launches_;              // this trace's, until end() decides what they are
    std::unordered_set<uint32_t> graph_node_corrs_;        // correlations of graph nodes (graph_id != 0)
    std::unordered_map<uint32_t, uint32_t> graph_key_;     // graph id -> key (across traces: graph ids per process
                                                           // coincide, and one row per id is what nsys shows)
    std::vector<Memory> memory_;
    std::vector<MemoryPool> memory_pools_;
    GpuMetrics gpu_metrics_;                                // this trace's sets and samples
    std::map<uint32_t, std::vector<BusySpan>> kernel_time_;  // this trace's, per device, once it has GPU metrics
    unsigned sweep_threads_ = 1;  // threads for attribute()
    Timestamp first_ = 0, last_ = 0;

public:
    std::vector<KeyValues> values_;  // per out_.keys index: every duration and size, until the stats are taken
};

// Reads one trace chunk by chunk into `agg`: batches of consecutive chunks are decoded and aggregated on `threads`
// worker threads while this thread folds them in file order (decode_pool.cpp).
void read_trace(TraceReader& reader, Aggregator& agg, const StreamContext& ctx, const AggregateOptions& options,
                unsigned threads, const std::function<void(uint64_t bytes, uint64_t records)>& progress);
// GPROF_REPORT_THREADS, else the machine's cores, at most 4.
unsigned default_threads();

}  // namespace gprof::report::aggregation
