// The timeline model's builder (model.cpp, cpu_tracks.cpp, gpu_tracks.cpp): one process at a time, its threads'
// API calls and NVTX ranges (cpu_tracks.cpp), its GPU work per device and stream with flows from the launching calls
// and memory counters (gpu_tracks.cpp), then the analysis group and each group's event ranges (model.cpp). Not for
// use outside timeline/.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include "analyze/analysis.h"
#include "gprof/trace/names.h"
#include "model/identity.h"
#include "model/resolved_call_sites.h"
#include "model/cpu_samples.h"
#include "model/memory.h"
#include "model/names.h"
#include "timeline/model.h"

namespace gprof::report::timeline::building {

using namespace gprof::trace;

constexpr uint32_t kAllStreams = 0xFFFFFFFFu;  // Sync records of a whole context carry this stream id

// ----- lanes ------------------------------------------------------------------------------------------------

struct LaneItem {
    Timestamp start, end;
    uint32_t order;  // index into the caller's item list
};

enum class Overlap : bool { Nest, Forbid };

// Assigns the slices of one row to lanes (lane 0 = the row itself). Nest: slices may nest (NVTX ranges and the
// API calls inside them) but not partially overlap; Forbid: no overlap at all (GPU work on one stream). Sorts
// `items` by start (the longer first at equal starts, so it becomes the parent): the order slices are written
// in. Returns the lane of each item by `order`; counts the items moved off lane 0.
std::vector<uint32_t> assign_lanes(std::vector<LaneItem>& items, Overlap overlap, uint64_t& moved);

inline std::string overlap_suffix(uint32_t lane) { return lane ? " (overlap " + std::to_string(lane) + ")" : std::string(); }

// ----- names --------------------------------------------------------------------------------------------------

class NameTable {
public:
    explicit NameTable(std::vector<std::string>& names) : names_(names) {}
    uint32_t intern(std::string_view name) {
        auto it = ids_.find(std::string(name));
        if (it != ids_.end()) return it->second;
        uint32_t id = static_cast<uint32_t>(names_.size());
        names_.emplace_back(name);
        ids_.emplace(names_.back(), id);
        return id;
    }

private:
    std::vector<std::string>& names_;
    std::unordered_map<std::string, uint32_t> ids_;
};

// The model's name ids of one process's strings, looked up once per distinct string (demangling is expensive:
// once per kernel name, not once per launch).
class ProcessNames {
public:
    ProcessNames(const ProcessTrace& p, NameTable& table) : p_(p), table_(table) {}
    uint32_t plain(StringId id) { return cached(plain_, id, false); }
    uint32_t kernel(StringId id) { return cached(kernel_, id, true); }
    uint32_t memcpy(const Memcpy& m) {
        uint32_t key = (uint32_t(m.copy_kind) << 16) | (uint32_t(m.src_kind) << 8) | uint32_t(m.dst_kind);
        auto it = memcpy_.find(key);
        if (it == memcpy_.end())
            it = memcpy_.emplace(key, table_.intern("Memcpy " + std::string(memcpy_kind_name(m.copy_kind)) + " (" +
                                                   std::string(memory_kind_name(m.src_kind)) + " -> " +
                                                   std::string(memory_kind_name(m.dst_kind)) + ")")).first;
        return it->second;
    }
    uint32_t intern(std::string_view s) { return table_.intern(s); }

private:
    uint32_t cached(std::vector<uint32_t>& cache, StringId id, bool demangled) {
        if (id >= cache.size()) cache.resize(static_cast<size_t>(id) + 1, kNone);
        uint32_t& slot = cache[id];
        if (slot == kNone) {
            std::string_view text = p_.str(id);
            slot = demangled ? table_.intern(demangle(text)) : table_.intern(text);
        }
        return slot;
    }
    const ProcessTrace& p_;
    NameTable& table_;
    std::vector<uint32_t> plain_, kernel_;
    std::map<uint32_t, uint32_t> memcpy_;
};

// ----- the builder ----------------------------------------------------------------------------------------------

// Correlation id -> a dense slot for the per-correlation tables of the builder. CUPTI numbers correlations 1, 2,
// 3, ... per process, so a trace's ids map by their offset from the smallest; ids spread wider than twice their
// number (plus 64 Ki) — a capture window late in a long run, or a hostile file's 2^32 - 1 — map through a sorted
// list instead. Either way no table is sized by a value read from a file.
class CorrelationSlots {
public:
    static constexpr size_t kNoSlot = SIZE_MAX;
    void build(std::vector<uint32_t> ids) {
        sorted_.clear();
        size_ = 0;
        if (ids.empty()) return;
        auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
        min_ = *lo;
        uint64_t span = uint64_t{*hi} - *lo + 1;
        dense_ = span <= 2 * uint64_t{ids.size()} + 65536;
        if (dense_) {
            size_ = static_cast<size_t>(span);
            return;
        }
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        sorted_ = std::move(ids);
        size_ = sorted_.size();
    }
    size_t size() const { return size_; }
    size_t slot(uint32_t c) const {
        if (size_ == 0) return kNoSlot;
        if (dense_) return c >= min_ && c - min_ < size_ ? c - min_ : kNoSlot;
        auto it = std::lower_bound(sorted_.begin(), sorted_.end(), c);
        return it != sorted_.end() && *it == c ? static_cast<size_t>(it - sorted_.begin()) : kNoSlot;
    }

private:
    bool dense_ = true;
    uint32_t min_ = 0;
    size_t size_ = 0;
    std::vector<uint32_t> sorted_;
};

class Builder {
public:
    Builder(const Run& run, TimelineModel& m, const ModelOptions& options)
        : run_(run), options_(options), m_(m), names_(m.names) {
        // Processes whose pids are numbered apart (other hosts, other pid namespaces) get track pids apart.
        std::vector<ProcessKey> keys;
        for (const auto& p : run.processes) keys.push_back(process_key(p.header, process_rank(p)));
        PidSpaces spaces = pid_spaces(keys);
        several_hosts_ = spaces.count > 1;
        for (size_t s : spaces.of) host_index_.push_back(static_cast<int64_t>(s));
    }

    void process(uint32_t index);

    // One group for the folded helper processes: its name is the summary's helpers line; nothing is drawn in it.
    void folded_helpers(const std::string& line);

    void analysis(const std::vector<AnalysisSlice>& slices);

    // Each group's events are contiguous (built group by group): record where they begin and end.
    void set_ranges();

private:
    uint32_t add_group(Group g) {
        m_.groups.push_back(std::move(g));
        return static_cast<uint32_t>(m_.groups.size() - 1);
    }
    uint32_t add_track(Track t) {
        m_.tracks.push_back(std::move(t));
        return static_cast<uint32_t>(m_.tracks.size() - 1);
    }
    static Track row_track(TrackKind kind, uint32_t group, uint32_t lane, std::string name) {
        Track t;
        t.kind = kind;
        t.group = group;
        t.lane = lane;
        t.name = std::move(name);
        return t;
    }
    // The track of a lane of one row (`lanes`: lane -> track), made by `make(lane)` on first use.
    template <class Make> uint32_t lane_track(std::map<uint32_t, uint32_t>& lanes, uint32_t lane, Make make) {
        auto [it, fresh] = lanes.emplace(lane, 0);
        if (fresh) it->second = add_track(make(lane));
        return it->second;
    }

    // Correlations that launched a kernel/memcpy/memset (flow sources), the slice of the API call of each, and
    // a "first op already has its flow" mark, by correlation slot (CorrelationSlots: dense for CUPTI's sequential
    // ids, never sized by a value from the file).
    void index_correlations(const ProcessTrace& p);

    uint32_t thread_track(const ProcessTrace& p, uint64_t tid, uint32_t lane) {
        if (tid == last_tid_ && lane < last_tid_tracks_.size() && last_tid_tracks_[lane] != kNone) return last_tid_tracks_[lane];
        if (tid != last_tid_) {
            last_tid_ = tid;
            last_tid_tracks_.clear();
        }
        if (lane >= last_tid_tracks_.size()) last_tid_tracks_.resize(lane + 1, kNone);
        return last_tid_tracks_[lane] = thread_track_slow(p, tid, lane);
    }
    uint32_t thread_track_slow(const ProcessTrace& p, uint64_t tid, uint32_t lane);

    // The call site of a correlation's API call, interned per distinct stack of this process; kNone without one.
    uint32_t stack_of(uint32_t correlation) {
        if (!sites_ || !correlation) return kNone;
        const ResolvedStack* r = sites_->of_correlation(correlation);
        if (!r || r->frames.empty()) return kNone;
        auto [it, fresh] = stack_ids_.emplace(r, static_cast<uint32_t>(m_.stacks.size()));
        if (fresh) {
            StackText t;
            t.site = r->site;
            for (size_t i = 0; i < r->frames.size() && i < kTimelineStackFrames; ++i)
                t.text += (i ? "\n" : "") + r->frames[i].text();
            if (r->frames.size() > kTimelineStackFrames)
                t.text += "\n... " + std::to_string(r->frames.size() - kTimelineStackFrames) + " more frames";
            m_.stacks.push_back(std::move(t));
        }
        return it->second;
    }

    uint32_t push_slice(uint32_t track, int64_t start, int64_t dur, uint32_t name, SliceSource source,
                        Category category, uint32_t record) {
        Slice s;
        s.start = start;
        s.dur = dur < 0 ? 0 : dur;
        s.track = track;
        s.name = name;
        s.record = record;
        s.source = source;
        s.category = category;
        m_.slices.push_back(s);
        return static_cast<uint32_t>(m_.slices.size() - 1);
    }

    // API calls and NVTX ranges, per thread, nesting checked; written in start order (parents first).
    void cpu_slices(const ProcessTrace& p, ProcessNames& names);

    // A range that never ended is drawn to the end of the trace.
    static Timestamp nvtx_end(const ProcessTrace& p, const Nvtx& n) { return n.end ? n.end : std::max(p.last_ns, n.start); }

    void api_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names);

    void nvtx_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names);

    void osrt_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names);

    // The frames of a sample or a call, interned by their text: one StackText per distinct stack shown.
    uint32_t sample_stack(const std::vector<SourceFrame>& frames);

    // CPU samples: an instant on the thread's row each, named by its innermost frame, its stack in the args.
    void cpu_samples(const ProcessTrace& p, ProcessNames& names);

    void marks(const ProcessTrace& p, ProcessNames& names);

    // CUPTI overhead: its own row in the process, lanes as needed.
    void overheads(const ProcessTrace& p, ProcessNames& names);

    void captures(const ProcessTrace& p, ProcessNames& names);

    // ----- GPU rows -----
    struct GpuItem {
        Timestamp start, end;
        uint32_t device, stream;
        SliceSource source;
        uint32_t index;
        bool graph_row = false;  // a graph launch whose nodes are in the trace: drawn on a row of its own
    };

    std::vector<GpuItem> gpu_items(const ProcessTrace& p);

    // One group per device of the process: those it describes, and those its GPU records and memory use name.
    std::map<uint32_t, uint32_t> device_groups(const ProcessTrace& p, const std::vector<GpuItem>& items);

    void gpu(const ProcessTrace& p, uint32_t index, ProcessNames& names);

    static Track gpu_track(TrackKind kind, uint32_t group, uint32_t stream, uint32_t lane);

    void gpu_slice(const ProcessTrace& p, const GpuItem& g, uint32_t track, uint64_t flow_base, ProcessNames& names);

    // Memory in use per device and kind (model/memory.h: cudaMalloc'd device memory, async pools, pinned host,
    // managed), and the async pools' reservation, as counters under the device.
    void memory_counters(const ProcessTrace& p, const std::map<uint32_t, uint32_t>& groups);
    // GPU metrics (model/gpu_metrics.h): a counter track per device and metric, each sample's value from its start.
    void gpu_metric_counters(const ProcessTrace& p, const std::map<uint32_t, uint32_t>& groups);

    static std::string counter_name(size_t row);

    const Run& run_;
    const ModelOptions& options_;
    std::unique_ptr<CallSites> sites_;                          // this process's, when it has stacks
    std::unique_ptr<SampleStacks> samples_;                     // this process's, when it has samples or calls
    std::unordered_map<const std::vector<SourceFrame>*, uint32_t> sample_stack_ids_;  // -> TimelineModel::stacks
    std::unordered_map<const ResolvedStack*, uint32_t> stack_ids_;  // -> TimelineModel::stacks
    TimelineModel& m_;
    NameTable names_;
    uint32_t process_group_ = 0;
    bool several_hosts_ = false;
    std::vector<int64_t> host_index_;  // by Run::processes index: its pid space (host, boot, pid namespace)
    std::map<std::pair<uint64_t, uint32_t>, uint32_t> thread_tracks_;  // (tid, lane) -> track
    uint64_t last_tid_ = 0;                 // the thread thread_track() was last asked for, and its lanes' tracks
    std::vector<uint32_t> last_tid_tracks_;
    CorrelationSlots corr_slots_;
    std::vector<uint32_t> api_slice_;
    std::vector<bool> has_op_;
    std::vector<uint32_t> last_flow_;  // by correlation: its latest flow (kNone: none yet)
    uint64_t extra_flows_ = 0;         // flows beyond a correlation's first, numbered from kExtraFlowIds
};

}  // namespace gprof::report::timeline::building
