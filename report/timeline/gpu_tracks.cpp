// The GPU tracks of a process: its work per device and stream in lanes, the flows from the launching calls, the
// memory counters.
#include "gprof/trace/names.h"
#include <cmath>

#include "model/gpu_metric_summary.h"
#include "model/identity.h"
#include "model/memory.h"
#include "timeline/builder.h"

namespace gprof::report::timeline::building {

std::vector<Builder::GpuItem> Builder::gpu_items(const ProcessTrace& p) {
    // Sync records carry a context, not a device: map contexts to devices through the other GPU records.
    std::map<uint32_t, uint32_t> ctx_device;
    for (const auto& k : p.kernels) ctx_device.emplace(k.context, k.device);
    for (const auto& c : p.memcpys) ctx_device.emplace(c.context, c.device);
    for (const auto& c : p.memsets) ctx_device.emplace(c.context, c.device);
    std::vector<GpuItem> items;
    items.reserve(p.kernels.size() + p.memcpys.size() + p.memsets.size() + p.syncs.size());
    auto add = [&](Timestamp s, Timestamp e, uint32_t dev, uint32_t stream, SliceSource source, uint32_t i) {
        if (!s) {
            ++m_.counts.zero_timestamps;
            return;
        }
        items.push_back({s, std::max(s, e), dev, stream, source, i});
    };
    for (uint32_t i = 0; i < p.kernels.size(); ++i)
        add(p.kernels[i].start, p.kernels[i].end, p.kernels[i].device, p.kernels[i].stream, SliceSource::Kernel, i);
    for (uint32_t i = 0; i < p.memcpys.size(); ++i)
        add(p.memcpys[i].start, p.memcpys[i].end, p.memcpys[i].device, p.memcpys[i].stream, SliceSource::Memcpy, i);
    for (uint32_t i = 0; i < p.memsets.size(); ++i)
        add(p.memsets[i].start, p.memsets[i].end, p.memsets[i].device, p.memsets[i].stream, SliceSource::Memset, i);
    for (uint32_t i = 0; i < p.syncs.size(); ++i) {
        auto it = ctx_device.find(p.syncs[i].context);
        add(p.syncs[i].start, p.syncs[i].end, it == ctx_device.end() ? 0 : it->second, p.syncs[i].stream,
            SliceSource::Sync, i);
    }
    for (uint32_t i = 0; i < p.graph_launches.size(); ++i) {
        size_t before = items.size();
        add(p.graph_launches[i].start, p.graph_launches[i].end, p.graph_launches[i].device,
            p.graph_launches[i].stream, SliceSource::GraphLaunch, i);
        if (items.size() > before) items.back().graph_row = !p.graph_launch_is_gpu_work(i);
    }
    return items;
}

// One group per device of the process: those it describes, and those its GPU records and memory use name.
std::map<uint32_t, uint32_t> Builder::device_groups(const ProcessTrace& p, const std::vector<GpuItem>& items) {
    std::map<uint32_t, const Device*> devs;
    for (const auto& d : p.devices) devs.emplace(d.id, &d);
    for (const auto& it : items) devs.emplace(it.device, nullptr);
    for (const auto& mem : p.memory) devs.emplace(mem.device, nullptr);
    for (const auto& pool : p.memory_pools) devs.emplace(pool.device, nullptr);
    for (const auto& series : p.gpu_metrics.series) devs.emplace(series.device, nullptr);
    std::map<uint32_t, uint32_t> groups;
    uint32_t rank = 0;
    for (const auto& [id, d] : devs) {
        Group g;
        g.kind = GroupKind::GpuDevice;
        g.process = m_.groups[process_group_].process;
        g.pid = p.pid();
        g.device = id;
        g.device_rank = rank++;
        g.sm_count = d ? d->sm_count : 0;
        std::string dev_name = d ? std::string(p.str(d->name)) : std::string();
        g.name = "GPU " + std::to_string(id) + (dev_name.empty() ? "" : ": " + dev_name);
        const std::string& label = m_.groups[process_group_].label;
        if (!label.empty()) g.name += ", " + label;
        else if (run_.processes.size() > 1) g.name += " (pid " + std::to_string(p.pid()) + ")";
        groups[id] = add_group(std::move(g));
    }
    return groups;
}

void Builder::gpu(const ProcessTrace& p, uint32_t index, ProcessNames& names) {
    std::vector<GpuItem> items = gpu_items(p);
    std::map<uint32_t, uint32_t> groups = device_groups(p, items);
    const uint64_t flow_base = static_cast<uint64_t>(index) << 32;
    // Rows: (device, stream) for kernels, copies, memsets, stream syncs and the graph launches that stand for
    // their work (graph-level tracing: one slice per launch on its stream); context-wide syncs on their own
    // row; graph launches whose nodes are in the trace on a row of their own per stream (their interval spans
    // the graph's kernels on that same stream, so they would otherwise overlap).
    // (device, row): a pair, as a device number is any 32-bit value (packing it into the top bits of one word
    // wrapped device 2^30 onto device 0 and split its group).
    auto row_key = [](const GpuItem& g) -> std::pair<uint32_t, uint64_t> {
        uint64_t base = g.stream == kAllStreams ? 0xFFFFFFFFull : g.stream;
        if (g.graph_row) base |= 1ull << 33;
        return {g.device, base};
    };
    std::stable_sort(items.begin(), items.end(), [&](const GpuItem& a, const GpuItem& b) { return row_key(a) < row_key(b); });
    for (size_t b = 0; b < items.size();) {
        size_t e = b;
        const auto key = row_key(items[b]);
        while (e < items.size() && row_key(items[e]) == key) ++e;
        std::vector<LaneItem> lane_items;
        for (size_t i = b; i < e; ++i) lane_items.push_back({items[i].start, items[i].end, static_cast<uint32_t>(i - b)});
        uint64_t any_overlaps = 0;
        auto lanes = assign_lanes(lane_items, Overlap::Forbid, any_overlaps);
        // A stream synchronisation record spans the host's wait, during which the stream's work runs: drawn on
        // the stream's row, it overlaps that work by nature. Only GPU work overlapping GPU work on one row is
        // worth a warning (a clock problem), so the count leaves the syncs out.
        std::vector<LaneItem> work;  // numbered anew: assign_lanes indexes its result by `order`
        for (const auto& li : lane_items)
            if (items[b + li.order].source != SliceSource::Sync)
                work.push_back({li.start, li.end, static_cast<uint32_t>(work.size())});
        if (work.size() == lane_items.size()) m_.counts.overflow_slices += any_overlaps;
        else if (!work.empty()) assign_lanes(work, Overlap::Forbid, m_.counts.overflow_slices);
        const GpuItem& first = items[b];
        TrackKind kind = first.graph_row                ? TrackKind::GraphLaunches
                         : first.stream == kAllStreams ? TrackKind::ContextSync
                                                       : TrackKind::GpuStream;
        std::map<uint32_t, uint32_t> lane_tracks;
        for (const auto& s : lane_items) {
            const GpuItem& g = items[b + s.order];
            uint32_t track = lane_track(lane_tracks, lanes[s.order], [&](uint32_t lane) {
                return gpu_track(kind, groups.at(g.device), g.stream, lane);
            });
            gpu_slice(p, g, track, flow_base, names);
        }
        b = e;
    }
    memory_counters(p, groups);
    gpu_metric_counters(p, groups);
}

Track Builder::gpu_track(TrackKind kind, uint32_t group, uint32_t stream, uint32_t lane) {
    std::string name = kind == TrackKind::GraphLaunches ? "graph launches (stream " + std::to_string(stream) + ")"
                       : kind == TrackKind::ContextSync ? std::string("context sync")
                                                        : "stream " + std::to_string(stream);
    Track t = row_track(kind, group, lane, name + overlap_suffix(lane));
    t.stream = stream;
    return t;
}

void Builder::gpu_slice(const ProcessTrace& p, const GpuItem& g, uint32_t track, uint64_t flow_base, ProcessNames& names) {
    uint32_t corr = 0, s = 0;
    bool every_op = false;  // a graph node: its cudaGraphLaunch has a flow to each
    switch (g.source) {
        case SliceSource::Kernel: {
            const auto& k = p.kernels[g.index];
            corr = k.correlation;
            every_op = k.graph_id != 0;
            s = push_slice(track, p.to_run_ns(k.start), static_cast<int64_t>(k.end - k.start), names.kernel(k.name),
                           g.source, Category::Kernel, g.index);
            break;
        }
        case SliceSource::Memcpy: {
            const auto& c = p.memcpys[g.index];
            corr = c.correlation;
            every_op = c.graph_id != 0;
            s = push_slice(track, p.to_run_ns(c.start), static_cast<int64_t>(c.end - c.start), names.memcpy(c),
                           g.source, Category::GpuMemcpy, g.index);
            break;
        }
        case SliceSource::Memset: {
            const auto& c = p.memsets[g.index];
            corr = c.correlation;
            every_op = c.graph_id != 0;
            s = push_slice(track, p.to_run_ns(c.start), static_cast<int64_t>(c.end - c.start),
                           names.intern("Memset (" + std::string(memory_kind_name(c.memory_kind)) + ")"), g.source,
                           Category::GpuMemset, g.index);
            break;
        }
        case SliceSource::Sync: {  // no flow: the API call is on the CPU row already
            const auto& c = p.syncs[g.index];
            s = push_slice(track, p.to_run_ns(c.start), static_cast<int64_t>(c.end - c.start),
                           names.intern(sync_type_name(c.type)), g.source, Category::CudaSync, g.index);
            m_.slices[s].stack = stack_of(c.correlation);
            return;
        }
        case SliceSource::GraphLaunch: {
            const auto& c = p.graph_launches[g.index];
            s = push_slice(track, p.to_run_ns(c.start), static_cast<int64_t>(c.end - c.start),
                           names.intern("CUDA graph " + std::to_string(c.graph_id)), g.source, Category::CudaGraph,
                           g.index);
            if (g.graph_row) return;  // its nodes carry the flows
            corr = c.correlation;
            every_op = true;
            break;
        }
        default: return;
    }
    if (g.source != SliceSource::GraphLaunch) m_.slices[s].stack = stack_of(corr);
    // A flow per correlation, to its first GPU op; a graph launch's to each of its nodes (or to the launch's
    // own slice when that stands for them). Only with an API source.
    const ApiCall* api = corr ? p.api_for_correlation(corr) : nullptr;
    if (!api || !api->start) {
        ++m_.counts.unmatched_gpu_ops;
        return;
    }
    const size_t slot = corr_slots_.slot(corr);
    if (slot == CorrelationSlots::kNoSlot) return;
    const uint32_t from = api_slice_[slot];
    if (from == kNone) return;
    const uint32_t last = last_flow_[slot];
    if (last != kNone && !every_op) return;
    uint64_t id = last == kNone ? flow_base | corr : kExtraFlowIds + extra_flows_++;
    uint32_t f = static_cast<uint32_t>(m_.flows.size());
    m_.flows.push_back({id, from, s, kNone});
    if (last == kNone) m_.slices[from].flow = f;
    else m_.flows[last].next_from = f;
    last_flow_[slot] = f;
    m_.slices[s].flow = f;
}

// Memory in use per device and kind (model/memory.h: cudaMalloc'd device memory, async pools, pinned host,
// managed), and the async pools' reservation, as counters under the device.
void Builder::memory_counters(const ProcessTrace& p, const std::map<uint32_t, uint32_t>& groups) {
    if (p.memory.empty() && p.memory_pools.empty()) return;
    // (device, budget; kMemoryBudgets = the pools' reservation) -> samples
    std::map<std::pair<uint32_t, size_t>, std::vector<CounterSample>> series;
    MemoryLedger ledger;
    ledger.on_sample = [&](const MemorySample& x) {
        size_t row = x.pool_reserved ? kMemoryBudgets : static_cast<size_t>(x.budget);
        series[{x.device, row}].push_back({p.to_run_ns(x.timestamp), static_cast<int64_t>(x.bytes), 0});
    };
    m_.counts.zero_timestamps += replay_memory(ledger, p.memory, p.memory_pools);
    for (auto& [key, samples] : series) {
        Track t;
        t.kind = TrackKind::Counter;
        t.group = groups.at(key.first);
        t.name = counter_name(key.second);
        t.unit = CounterUnit::Bytes;
        uint32_t track = add_track(std::move(t));
        for (auto& c : samples) {
            c.track = track;
            m_.counters.push_back(c);
        }
    }
}

void Builder::gpu_metric_counters(const ProcessTrace& p, const std::map<uint32_t, uint32_t>& groups) {
    for (const GpuMetricSeries& series : p.gpu_metrics.series) {
        std::vector<uint32_t> order(series.samples());
        for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return series.starts[a] < series.starts[b]; });
        for (size_t m = 0; m < series.metrics.size(); ++m) {
            const GpuMetricLabel label = gpu_metric_label(series.metrics[m]);
            Track t;
            t.kind = TrackKind::Counter;
            t.group = groups.at(series.device);
            t.name = label.label + (label.unit == GpuMetricUnit::Percent          ? " (%)"
                                    : label.unit == GpuMetricUnit::BytesPerSecond ? " (bytes/s)"
                                                                                  : " (/s)");
            t.unit = label.unit == GpuMetricUnit::Percent          ? CounterUnit::Percent
                     : label.unit == GpuMetricUnit::BytesPerSecond ? CounterUnit::BytesPerSecond
                                                                   : CounterUnit::PerSecond;
            uint32_t track = add_track(std::move(t));
            for (uint32_t i : order) {
                const Timestamp start = series.starts[i], end = series.ends[i];
                const double v = gpu_metric_figure(label.unit, series.value(i, m), end > start ? end - start : 0);
                if (!start) {
                    ++m_.counts.zero_timestamps;
                    continue;
                }
                if (!std::isfinite(v)) continue;  // a sample without this metric's value: the previous one stands
                m_.counters.push_back(CounterSample::of_real(p.to_run_ns(start), v, track));
            }
        }
    }
}

std::string Builder::counter_name(size_t row) {
    if (row == kMemoryBudgets) return "Async pool memory reserved";
    switch (static_cast<MemoryBudget>(row)) {
        case MemoryBudget::Device: return "Device memory in use";
        case MemoryBudget::Pool: return "Device memory in use (async pools)";
        case MemoryBudget::Static: return "Device static memory (module variables)";
        case MemoryBudget::PinnedHost: return "Pinned host memory in use";
        case MemoryBudget::Managed: return "Managed memory in use";
        default: return "Other memory in use";
    }
}

}  // namespace gprof::report::timeline::building
