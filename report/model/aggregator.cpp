#include "model/aggregator.h"

#include <algorithm>

#include "gprof/trace/names.h"
#include "model/memory.h"

namespace gprof::report::aggregation {

void Aggregator::begin(const StreamContext& ctx) {
    ctx_ = ctx;
    api_key_ = {};
    kernel_key_ = {};
    strings_.clear();
    large_keys_ = std::make_unique<LargeKeys>();
    tally_ = ChunkTally();
    hidden_driver_calls_ = 0;
    std::fill(std::begin(memcpy_key_), std::end(memcpy_key_), 0);
    memset_key_ = 0;
    release_calls();
    groups_.clear();
    unfinished_ranges_ = 0;
    graph_launches_.clear();
    graph_node_corrs_.clear();
    memory_.clear();
    memory_pools_.clear();
    gpu_metrics_ = GpuMetrics();
    kernel_time_.clear();
    device_work_ = nullptr;
    ProcessInfo p;
    p.path = ctx.reader->path();
    p.header = ctx.reader->header();
    out_.processes.push_back(std::move(p));
    first_ = last_ = 0;
}

// Folds a batch in: batches come in file order, so keys, per-thread calls and GPU ops end up in the order a
// single pass would give them.
void Aggregator::fold(BatchPart& b) {
    if (b.error) std::rethrow_exception(b.error);
    ProcessInfo& p = out_.processes.back();
    for (const auto& [id, text] : b.strings) strings_.define(id, text);
    std::vector<uint32_t> global(b.keys.size());
    for (size_t i = 0; i < b.keys.size(); ++i) {
        const LocalKey& lk = b.keys[i];
        uint32_t k = 0;
        switch (lk.category) {
            case KeyCategory::Api: k = key_for(api_key_, lk.id, KeyCategory::Api); break;
            case KeyCategory::Kernel: k = key_for(kernel_key_, lk.id, KeyCategory::Kernel); break;
            case KeyCategory::Memcpy: {
                uint32_t& slot = memcpy_key_[lk.id];
                auto kind = static_cast<MemcpyKind>(lk.id);
                if (!slot) slot = memop_key(memop_row_name(kind), memop_nsys_name(kind), KeyCategory::Memcpy);
                k = slot;
                break;
            }
            default:
                if (!memset_key_) memset_key_ = memop_key("[CUDA memset]", "[CUDA memset]", KeyCategory::Memset);
                k = memset_key_;
                break;
        }
        global[i] = k;
        values_[k - 1].durations.merge(std::move(b.values[i].durations));
        values_[k - 1].bytes.merge(std::move(b.values[i].bytes));
        if (!values_[k - 1].durations.exact()) large_keys_->mark(lk);
    }
    p.records += b.records;
    p.api_calls += b.api_calls;
    hidden_driver_calls_ += b.hidden_driver_calls;
    widen(b.first, b.last);
    for (const auto& [device, w] : b.gpu_work) {
        DeviceWork& dst = p.gpu_work[device];
        dst.ops += w.ops;
        dst.busy_ns += w.busy_ns;
    }
    // The batch's range groups into the trace's: lengths merged, nothing kept per range but the streams below.
    std::vector<uint32_t> groups(b.range_groups.groups.size());
    for (size_t i = 0; i < groups.size(); ++i) {
        RangeGroup& part = b.range_groups.groups[i];
        groups[i] = groups_.index(part.key);
        RangeGroup& g = groups_.groups[groups[i]];
        g.durations.merge(std::move(part.durations));
        g.add_first(part.first_start, part.first_position);
    }
    p.nvtx_events += b.nvtx_events;
    unfinished_ranges_ += b.unfinished_ranges;
    if (b.gpus.count || !b.apis.empty() || !b.range_streams.empty()) {
        // Kept as they are (moved, not copied): the NVTX block reads them when the trace ends.
        KeptBatch& k = kept_.emplace_back();
        for (CallStream& c : b.apis) {
            kept_calls_ += c.count;
            c.bytes.shrink();
        }
        kept_ops_ += b.gpus.count;
        b.gpus.bytes.shrink();
        for (RangeStream& r : b.range_streams) r.bytes.shrink();
        k.calls = std::move(b.apis);
        k.ops = std::move(b.gpus);
        k.ranges = std::move(b.range_streams);
        k.keys = std::move(global);
        k.groups = std::move(groups);
        max_correlation_ = std::max(max_correlation_, b.max_correlation);
    }
    graph_node_corrs_.insert(b.graph_node_corrs.begin(), b.graph_node_corrs.end());
    for (const Record& r : b.others) handle_other(p, r);
    // Kernel time is kept from the batch that holds the trace's first metric set on (the set is written when CUDA
    // starts, before any kernel): a trace without GPU metrics keeps none of it.
    if (!gpu_metrics_.series.empty())
        for (auto& [device, spans] : b.kernel_time.devices) {
            std::vector<BusySpan>& kept = kernel_time_[device];
            kept.insert(kept.end(), spans.begin(), spans.end());
        }
    tally_.add(b.tally);
}

// The records a batch leaves to the fold (BatchPart::others), in file order.
void Aggregator::handle_other(ProcessInfo& p, const Record& r) {
    switch (r.kind) {
        case RecordKind::GraphLaunch:
            // GPU work only without its nodes in the trace: decided when the whole trace is read (end()).
            widen(r.graph_launch.start, r.graph_launch.end);
            graph_launches_.push_back(r.graph_launch);
            break;
        case RecordKind::Memory:
            widen(r.memory.timestamp, r.memory.timestamp);
            memory_.push_back(r.memory);
            break;
        case RecordKind::MemoryPool:
            widen(r.memory_pool.timestamp, r.memory_pool.timestamp);
            memory_pools_.push_back(r.memory_pool);
            break;
        case RecordKind::Device: {
            DeviceInfo d;
            d.pid = p.header.pid;
            d.host = host_key(p.header);
            d.device = r.device;
            d.name = std::string(strings_.get(r.device.name));
            d.uuid = r.device.uuid ? std::string(strings_.get(r.device.uuid)) : std::string();
            out_.devices.push_back(std::move(d));
            break;
        }
        case RecordKind::Thread:
            p.thread_names.push_back(std::to_string(r.thread.tid) + " " +
                                     std::string(strings_.get(r.thread.name)));
            break;
        case RecordKind::Dropped:
            if (drop_loses_records(r.dropped.source)) p.dropped += r.dropped.count;
            break;
        case RecordKind::Status: {
            std::string line = std::string(component_name(r.status.component)) + " " +
                               std::string(status_level_name(r.status.level)) + ": " +
                               std::string(strings_.get(r.status.message));
            if (r.status.level != StatusLevel::Info) p.status_lines.insert(p.status_lines.begin(), line);
            else p.status_lines.push_back(line);
            break;
        }
        case RecordKind::End:
            p.complete = true;
            p.ended_by_signal = r.end.signal;
            break;
        case RecordKind::GpuMetricSet:
            gpu_metrics_.add_set(r.gpu_metric_set, strings_.get(r.gpu_metric_set.metrics));
            break;
        case RecordKind::GpuMetricSample:
            widen(r.gpu_metric_sample.start, r.gpu_metric_sample.end);
            gpu_metrics_.add_sample(r.gpu_metric_sample);
            break;
        case RecordKind::Role:
            p.role = std::string(strings_.get(r.role.variables));
            p.rank = r.role.rank;
            break;
        case RecordKind::Exec: {
            std::string path(strings_.get(r.exec.path));
            if (r.exec.image != ExecImage::Traced) p.untraced_programs.emplace_back(path, untraced_reason(r.exec.image));
            if (r.exec.spawned)
                p.untraced_children.push_back("pid " + std::to_string(r.exec.pid) + ": " +
                                              std::string(strings_.get(r.exec.command)) + " (" +
                                              untraced_reason(r.exec.image) + ")");
            else if (r.exec.image == ExecImage::Traced)
                p.ended_by_exec = "exec'd into " + path + " (traced on: same pid)";
            else
                p.ended_by_exec = "exec'd into " + path + ", " + untraced_reason(r.exec.image);
            break;
        }
        default: break;
    }
}

void Aggregator::end(const StreamContext& ctx) {
    ProcessInfo& p = out_.processes.back();
    graph_work(p);
    account_memory(p, ctx);
    p.hidden_driver_calls = ctx.hidden_driver_calls;
    out_.hidden_driver_calls += ctx.hidden_driver_calls;
    if (first_) {
        p.first_ns = ctx.to_run_ns(first_);
        p.last_ns = ctx.to_run_ns(last_);
    }
    p.read_stats = ctx.reader->stats();
    std::string label = trace_label(p.path);
    for (const auto& w : ctx.reader->warnings()) out_.warnings.push_back(label + ": " + w);
    if (p.dropped)
        out_.warnings.push_back(label + ": " + std::to_string(p.dropped) +
                                " records were dropped while recording; totals under-count");
    out_.records += p.records;
    out_.dropped += p.dropped;
    finish_gpu_metrics(p, ctx);
    finish_nvtx_and_matching(p);
    release_calls();
    groups_.clear();
}

// The process's GPU work on a device. Map nodes stay put: the last device's entry is kept for the next op.
void Aggregator::add_work(ProcessInfo& p, uint32_t device, Timestamp s, Timestamp e) {
    if (!device_work_ || device_work_id_ != device || device_work_owner_ != &p) {
        device_work_ = &p.gpu_work[device];
        device_work_id_ = device;
        device_work_owner_ = &p;
    }
    ++device_work_->ops;
    device_work_->busy_ns += dur(s, e);
}

// Graph launches whose nodes are not in the trace are the GPU work: one row per graph ("[CUDA graph 5]").
void Aggregator::graph_work(ProcessInfo& p) {
    for (const GraphLaunch& g : graph_launches_) {
        if (g.correlation && graph_node_corrs_.count(g.correlation)) continue;
        uint32_t& slot = graph_key_[g.graph_id];
        if (!slot) {
            std::string name = graph_row_name(g.graph_id);
            slot = global_key(name, KeyCategory::Graph, name);
        }
        push_duration(slot, g.start, g.end);
        add_work(p, g.device, g.start, g.end);
        if (opt_.nvtx_detail) {
            if (kept_.empty() || !kept_.back().keys.empty()) kept_.emplace_back();  // global keys
            kept_.back().ops.add(g.correlation, slot, dur(g.start, g.end));
            ++kept_ops_;
            max_correlation_ = std::max(max_correlation_, g.correlation);
        }
    }
    graph_launches_.clear();
    graph_node_corrs_.clear();
}

void Aggregator::account_memory(ProcessInfo& p, const StreamContext& ctx) {
    p.run_offset_ns = ctx.to_run_ns(0);
    if (memory_.empty() && memory_pools_.empty()) return;
    MemoryLedger ledger;
    replay_memory(ledger, memory_, memory_pools_);
    p.memory = ledger.budgets();
    p.device_memory = ledger.device_peaks();
    memory_.clear();
    memory_.shrink_to_fit();
    memory_pools_.clear();
}

void Aggregator::release_calls() {
    kept_.clear();
    kept_calls_ = kept_ops_ = 0;
    max_correlation_ = 0;
}

void Aggregator::widen(Timestamp s, Timestamp e) {
    if (!s) return;
    if (!first_ || s < first_) first_ = s;
    if (e > last_) last_ = e;
    if (s > last_) last_ = s;
}

void Aggregator::push_duration(uint32_t key, Timestamp s, Timestamp e) {
    widen(s, e);
    values_[key - 1].durations.push(dur(s, e));
}

// Key index + 1 for a string id of this trace; keys are shared across traces by (category, name).
uint32_t Aggregator::key_for(SlotTable& cache, StringId id, KeyCategory c) {
    uint32_t& k = cache[id];
    if (!k) k = global_key(std::string(strings_.get(id)), c, "");
    return k;
}

uint32_t Aggregator::memop_key(const std::string& name, const std::string& nsys, KeyCategory c) {
    return global_key(name, c, nsys);
}

uint32_t Aggregator::global_key(const std::string& name, KeyCategory c, const std::string& memop) {
    std::string k = std::to_string(static_cast<int>(c)) + '\x1f' + name;
    auto it = index_.find(k);
    if (it != index_.end()) return it->second;
    KeyData d;
    d.name = name;
    d.category = c;
    d.memop = memop;
    out_.keys.push_back(std::move(d));
    values_.emplace_back();
    uint32_t id = static_cast<uint32_t>(out_.keys.size());
    index_.emplace(std::move(k), id);
    return id;
}

}  // namespace gprof::report::aggregation
