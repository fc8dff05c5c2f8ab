// The decoders' side of aggregate_run: a batch (a few consecutive chunks of one trace) decoded and folded into
// per-key values on a worker thread, with nothing shared. Its keys are the trace's string ids, resolved to names
// when the batch is folded into the Aggregate (aggregator.h), in file order, by which time every string the batch
// uses is defined (the format defines a string before its first use).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gprof/trace/reader.h"
#include "model/aggregate.h"
#include "model/distribution.h"
#include "model/gpu_metric_summary.h"
#include "model/kept_records.h"
#include "model/model.h"

namespace gprof::report::aggregation {

using namespace gprof::trace;

// Values of one key: every duration and (memory ops) every size.
struct KeyValues {
    Distribution durations, bytes;
};

constexpr size_t kChunksPerBatch = 4;  // chunks are sealed at 256 KiB: about 1 MB a batch

// A key of one batch: a category and what names it within the trace.
struct LocalKey {
    KeyCategory category;
    uint32_t id;  // Api, Kernel: string id; Memcpy: copy kind (0-15); Memset: 0
};

// Slot (index + 1, 0 = none) by string id: a table for the usual small ids, a hash map for the rest, so a hostile
// id never sizes a table.
class SlotTable {
public:
    uint32_t& operator[](uint32_t id) {
        if (id >= kDense) return sparse_[id];
        if (id >= dense_.size()) dense_.resize(id + 1, 0);
        return dense_[id];
    }

private:
    static constexpr uint32_t kDense = 1u << 16;
    std::vector<uint32_t> dense_;
    std::unordered_map<uint32_t, uint32_t> sparse_;
};

// Keys of the trace being read whose durations are past the exact limit: a decoding thread then buckets their values
// itself instead of leaving it to the fold (merging would turn its part into a histogram anyway). Read without a
// lock: a stale "no" only leaves the bucketing to the fold, with the same result.
class LargeKeys {
public:
    LargeKeys() : api_(new std::atomic<bool>[kIds]()), kernel_(new std::atomic<bool>[kIds]()) {}
    bool is_large(const LocalKey& k) const {
        const std::atomic<bool>* f = flag(k);
        return f && f->load(std::memory_order_relaxed);
    }
    void mark(const LocalKey& k) {
        if (std::atomic<bool>* f = flag(k)) f->store(true, std::memory_order_relaxed);
    }

private:
    static constexpr uint32_t kIds = 1u << 16;  // string ids beyond are left to the fold
    std::atomic<bool>* flag(const LocalKey& k) const {
        switch (k.category) {
            case KeyCategory::Api: return k.id < kIds ? &api_[k.id] : nullptr;
            case KeyCategory::Kernel: return k.id < kIds ? &kernel_[k.id] : nullptr;
            case KeyCategory::Memcpy: return &memops_[k.id & 15];
            case KeyCategory::Memset: return &memops_[16];
            default: return nullptr;
        }
    }
    std::unique_ptr<std::atomic<bool>[]> api_, kernel_;
    mutable std::atomic<bool> memops_[17] = {};
};

// Kernel time per device, stretches that touch merged as they come (a busy GPU's kernels follow each other): what the
// GPU metrics' mean while kernels ran weighs samples by. The fold keeps it only for traces with GPU metrics.
struct BusyByDevice {
    std::map<uint32_t, std::vector<BusySpan>> devices;  // nodes stay put: `last` stays valid
    uint32_t last_device = 0;
    std::vector<BusySpan>* last = nullptr;

    void add(uint32_t device, Timestamp start, Timestamp end) {
        if (!last || last_device != device) {
            last = &devices[device];
            last_device = device;
        }
        if (!last->empty() && start >= last->back().start && start <= last->back().end) {
            if (end > last->back().end) last->back().end = end;
            return;
        }
        last->push_back({start, end});
    }
};

struct BatchPart {
    uint64_t sequence = 0;
    const LargeKeys* large = nullptr;
    std::vector<ChunkSpan> chunks;
    uint64_t end_offset = 0;  // file offset past its last chunk
    ChunkTally tally;
    std::vector<std::pair<StringId, std::string_view>> strings;  // definitions, in file order
    std::vector<LocalKey> keys;                                  // in first-seen order
    std::vector<KeyValues> values;                               // per local key
    SlotTable api_slot, kernel_slot;
    uint32_t memcpy_slot[16] = {};
    uint32_t memset_slot = 0;
    uint64_t records = 0, api_calls = 0, hidden_driver_calls = 0;
    Timestamp first = 0, last = 0;
    std::map<uint32_t, DeviceWork> gpu_work;
    BusyByDevice kernel_time;
    std::vector<CallStream> apis;  // key = local slot
    std::unordered_map<uint64_t, uint32_t> api_thread;
    uint32_t last_thread = UINT32_MAX;
    OpStream gpus;  // key = local slot
    uint32_t max_correlation = 0;  // of the calls and ops kept
    std::vector<uint32_t> graph_node_corrs;
    uint64_t nvtx_events = 0;
    // NVTX ranges: the finished ones' lengths by group, and (for the attribution of calls) each one in its thread's
    // stream; ranges never ended are only counted.
    RangeGroups range_groups;
    std::vector<RangeStream> range_streams;
    std::unordered_map<uint64_t, uint32_t> range_thread;
    uint32_t last_range_thread = UINT32_MAX;
    uint64_t ranges_seen = 0, unfinished_ranges = 0;
    std::vector<Record> others;     // the kinds the Aggregator takes itself at fold time (names, memory, ...)
    std::exception_ptr error;

    // Room for the kept calls of the batch's first thread and for the ops, set from the batch's size: growing from
    // nothing copied every stream a few times into fresh pages (copies and page faults: docs/performance.md).
    // Pages of the room that are never written cost nothing, and the fold gives the rest back (shrink()).
    size_t kept_reserve = 0;

    static uint64_t dur(Timestamp s, Timestamp e) { return e > s ? e - s : 0; }
    uint32_t slot(uint32_t& s, KeyCategory c, uint32_t id) {
        if (!s) {
            keys.push_back({c, id});
            KeyValues& v = values.emplace_back();
            if (large && large->is_large(keys.back())) {
                v.durations.force_sketch();
                v.bytes.force_sketch();
            }
            s = static_cast<uint32_t>(keys.size());
        }
        return s;
    }
    void widen(Timestamp s, Timestamp e) {
        if (!s) return;
        if (!first || s < first) first = s;
        if (e > last) last = e;
        if (s > last) last = s;
    }
    void push_duration(uint32_t k, Timestamp s, Timestamp e) {
        widen(s, e);
        values[k - 1].durations.push(dur(s, e));
    }
    void add_work(uint32_t device, Timestamp s, Timestamp e) {
        DeviceWork& w = gpu_work[device];
        ++w.ops;
        w.busy_ns += dur(s, e);
    }
    void push_gpu(uint32_t correlation, uint32_t key, uint64_t duration) {
        max_correlation = std::max(max_correlation, correlation);
        gpus.add(correlation, key, duration);
    }
    // The last group of a few (thread, name) pairs: a thread repeats a handful of names, so most ranges find their
    // group here without hashing the whole key (callgrind: 77 -> ~20 instructions a range).
    struct GroupMemo {
        uint64_t tid = 0;
        uint64_t ids = 0;  // name << 32 | domain
        uint32_t type = UINT32_MAX;
        uint32_t group = 0;
    };
    GroupMemo group_memo[32];

    uint32_t range_group(const Nvtx& n) {
        const uint64_t ids = uint64_t(n.name) << 32 | n.domain;
        GroupMemo& m = group_memo[(n.name + n.tid * 5) & 31];
        const auto type = static_cast<uint32_t>(n.type);
        if (m.tid == n.tid && m.ids == ids && m.type == type) return m.group;
        m = {n.tid, ids, type, range_groups.index({n.tid, n.domain, n.name, n.type})};
        return m.group;
    }
    void push_range(const Nvtx& n, bool keep) {
        const uint64_t position = (sequence << 32) + ranges_seen++;
        if (n.end == 0 || n.end < n.start) {
            ++unfinished_ranges;
            return;
        }
        const uint32_t g = range_group(n);
        RangeGroup& group = range_groups.groups[g];
        group.durations.push(n.end - n.start);
        group.add_first(n.start, position);
        if (!keep) return;
        if (last_range_thread >= range_streams.size() || range_streams[last_range_thread].tid != n.tid) {
            auto it = range_thread.find(n.tid);
            if (it == range_thread.end()) {
                it = range_thread.emplace(n.tid, static_cast<uint32_t>(range_streams.size())).first;
                range_streams.emplace_back().tid = n.tid;
            }
            last_range_thread = it->second;
        }
        range_streams[last_range_thread].add(n.start, n.end, g);
    }
    [[gnu::always_inline]] void push_call(uint64_t tid, Timestamp start, Timestamp end, uint32_t correlation,
                                          uint32_t key) {
        max_correlation = std::max(max_correlation, correlation);
        if (last_thread >= apis.size() || apis[last_thread].tid != tid) {
            auto it = api_thread.find(tid);
            if (it == api_thread.end()) {
                it = api_thread.emplace(tid, static_cast<uint32_t>(apis.size())).first;
                CallStream& c = apis.emplace_back();
                c.tid = tid;
                c.bytes.reserve(kept_reserve);
                kept_reserve = 0;  // the batch's first thread only: a trace of many threads must not reserve per thread
            }
            last_thread = it->second;
        }
        apis[last_thread].add(start, end, correlation, key);
    }
};

// The interned strings of the trace being read (bounded by what the file defines).
class TraceStrings {
public:
    void define(StringId id, std::string_view text) { map_[id].assign(text); }
    std::string_view get(StringId id) const {
        if (id == 0) return {};
        auto it = map_.find(id);
        if (it != map_.end()) return it->second;
        placeholder_ = "<string #" + std::to_string(id) + ">";
        return placeholder_;
    }
    void clear() { map_.clear(); }

private:
    std::unordered_map<StringId, std::string> map_;
    mutable std::string placeholder_;
};

struct BatchSettings {
    bool nvtx_detail = true;
    bool hide_runtime_driver_calls = true;
};

// Decodes and aggregates one batch. `define_now` (one thread only) takes string definitions as they come, for a
// filter that needs names while decoding (the kernel regex).
void aggregate_batch(BatchPart& b, const BatchSettings& s, RecordFilter* filter, TraceStrings* define_now);

}  // namespace gprof::report::aggregation
