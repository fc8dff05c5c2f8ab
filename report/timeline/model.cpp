// Builds the timeline model (model.h) from a loaded run: groups, tracks with their overflow lanes, slices in the
// order encoders write them, flows, instants and counters.
#include "timeline/model.h"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "analyze/analysis.h"
#include "gprof/trace/names.h"
#include "model/identity.h"
#include "model/call_sites.h"
#include "model/memory.h"
#include "model/names.h"

namespace gprof::report::timeline {

using namespace gprof::trace;

namespace {

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
std::vector<uint32_t> assign_lanes(std::vector<LaneItem>& items, Overlap overlap, uint64_t& moved) {
    std::sort(items.begin(), items.end(), [](const LaneItem& a, const LaneItem& b) {
        if (a.start != b.start) return a.start < b.start;
        return a.end > b.end;
    });
    std::vector<uint32_t> lane_of(items.size());
    std::vector<std::vector<Timestamp>> lanes;  // per lane: the stack of open ends (Nest) or [last end]
    for (const auto& s : items) {
        uint32_t chosen = 0;
        for (;; ++chosen) {
            if (chosen == lanes.size()) lanes.emplace_back();
            auto& open = lanes[chosen];
            if (overlap == Overlap::Nest) {
                while (!open.empty() && open.back() <= s.start) open.pop_back();
                if (open.empty() || s.end <= open.back()) {
                    open.push_back(s.end);
                    break;
                }
            } else if (open.empty() || open.back() <= s.start) {
                if (open.empty()) open.push_back(s.end);
                else open.back() = s.end;
                break;
            }
        }
        if (chosen) ++moved;
        lane_of[s.order] = chosen;
    }
    return lane_of;
}

std::string overlap_suffix(uint32_t lane) { return lane ? " (overlap " + std::to_string(lane) + ")" : std::string(); }

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
    Builder(const Run& run, TimelineModel& m) : run_(run), m_(m), names_(m.names) {
        std::map<HostKey, int64_t> index;
        for (const auto& p : run.processes) index.emplace(host_key(p.header), 0);
        int64_t i = 0;
        for (auto& [host, n] : index) n = i++;
        several_hosts_ = index.size() > 1;
        for (const auto& p : run.processes)
            host_index_.push_back(index[host_key(p.header)]);
    }

    void process(uint32_t index) {
        const ProcessTrace& p = run_.processes[index];
        ProcessNames names(p, names_);
        Group g;
        g.kind = GroupKind::Process;
        g.process = index;
        g.pid = p.pid();
        const std::string& exe = p.header.executable;
        auto slash = exe.find_last_of('/');
        g.process_name = slash == std::string::npos ? exe : exe.substr(slash + 1);
        g.label = process_label(p.header, process_rank(p), several_hosts_);
        g.track_pid = several_hosts_ ? kHostPidBase + host_index_[index] * kHostPidStride + g.pid : g.pid;
        g.name = g.label.empty() ? g.process_name + " (pid " + std::to_string(g.pid) + ")" : g.label;
        process_group_ = add_group(std::move(g));
        thread_tracks_.clear();
        last_tid_tracks_.clear();
        index_correlations(p);
        sites_.reset();
        stack_ids_.clear();
        if (!p.backtraces.empty()) sites_ = std::make_unique<CallSites>(p);
        cpu_slices(p, names);
        marks(p, names);
        overheads(p, names);
        captures(p, names);
        gpu(p, index, names);
    }

    // One group for the folded helper processes: its name is the summary's helpers line; nothing is drawn in it.
    void folded_helpers(const std::string& line) {
        Group g;
        g.kind = GroupKind::Process;
        g.track_pid = 0x7FFFFFFE;  // above any Linux pid (pid_max is at most 2^22): no real process's track
        g.name = line;
        g.process_name = line;
        add_group(std::move(g));
    }

    void analysis(const std::vector<AnalysisSlice>& slices) {
        if (slices.empty()) return;
        Group g;
        g.kind = GroupKind::Analysis;
        g.name = "analysis";
        uint32_t group = add_group(std::move(g));
        std::map<std::string, std::vector<uint32_t>> by_row;
        for (uint32_t i = 0; i < slices.size(); ++i) by_row[slices[i].track].push_back(i);
        uint32_t row = 0;
        for (const auto& row_entry : by_row) {  // not a structured binding: clang 14 (the fuzzer's) cannot capture one
            const std::string& row_name = row_entry.first;
            const std::vector<uint32_t>& idx = row_entry.second;
            std::vector<LaneItem> items;
            for (uint32_t k = 0; k < idx.size(); ++k) {
                const auto& a = slices[idx[k]];
                Timestamp s0 = static_cast<Timestamp>(std::max<int64_t>(a.start, 0));
                items.push_back({s0, s0 + static_cast<Timestamp>(std::max<int64_t>(a.dur, 0)), k});
            }
            // Findings and gaps may overlap on their row by nature: extra lanes, not a problem worth a warning.
            uint64_t expected_overlaps = 0;
            auto lanes = assign_lanes(items, Overlap::Forbid, expected_overlaps);
            std::map<uint32_t, uint32_t> lane_tracks;
            for (const auto& it : items) {
                const auto& a = slices[idx[it.order]];
                uint32_t track = lane_track(lane_tracks, lanes[it.order], [&](uint32_t lane) {
                    Track tr = row_track(TrackKind::Analysis, group, lane, lane ? row_name + " (overlap)" : row_name);
                    tr.row = row;
                    return tr;
                });
                Slice s;
                s.start = a.start;
                s.dur = std::max<int64_t>(a.dur, 0);
                s.track = track;
                s.name = names_.intern(a.name);
                s.record = static_cast<uint32_t>(m_.analysis_args.size());
                s.source = SliceSource::Analysis;
                s.category = Category::Analysis;
                m_.analysis_args.push_back(a.args.is_object() ? a.args : nlohmann::json::object());
                m_.slices.push_back(s);
            }
            ++row;
        }
    }

    // Each group's events are contiguous (built group by group): record where they begin and end.
    void set_ranges() {
        auto fill = [&](auto& events, auto group_of, uint32_t Group::*begin, uint32_t Group::*end) {
            for (auto& g : m_.groups) g.*begin = g.*end = 0;
            for (uint32_t i = 0; i < events.size();) {
                uint32_t g = group_of(events[i]);
                uint32_t j = i;
                while (j < events.size() && group_of(events[j]) == g) ++j;
                if (m_.groups[g].*end != 0) throw std::logic_error("timeline model: a group's events are split");
                m_.groups[g].*begin = i;
                m_.groups[g].*end = j;
                i = j;
            }
        };
        fill(m_.slices, [&](const Slice& s) { return m_.tracks[s.track].group; }, &Group::slices_begin, &Group::slices_end);
        fill(m_.instants, [](const Instant& e) { return e.group; }, &Group::instants_begin, &Group::instants_end);
        fill(m_.counters, [&](const CounterSample& c) { return m_.tracks[c.track].group; }, &Group::counters_begin,
             &Group::counters_end);
    }

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
    void index_correlations(const ProcessTrace& p) {
        std::vector<uint32_t> ids;
        ids.reserve(p.kernels.size() + p.memcpys.size() + p.memsets.size() + p.graph_launches.size());
        for (const auto& k : p.kernels) ids.push_back(k.correlation);
        for (const auto& c : p.memcpys) ids.push_back(c.correlation);
        for (const auto& c : p.memsets) ids.push_back(c.correlation);
        for (size_t i = 0; i < p.graph_launches.size(); ++i)
            if (p.graph_launch_is_gpu_work(i)) ids.push_back(p.graph_launches[i].correlation);
        corr_slots_.build(ids);
        api_slice_.assign(corr_slots_.size(), kNone);
        has_op_.assign(corr_slots_.size(), false);
        last_flow_.assign(corr_slots_.size(), kNone);
        for (uint32_t c : ids) has_op_[corr_slots_.slot(c)] = true;
    }

    uint32_t thread_track(const ProcessTrace& p, uint64_t tid, uint32_t lane) {
        if (tid == last_tid_ && lane < last_tid_tracks_.size() && last_tid_tracks_[lane] != kNone) return last_tid_tracks_[lane];
        if (tid != last_tid_) {
            last_tid_ = tid;
            last_tid_tracks_.clear();
        }
        if (lane >= last_tid_tracks_.size()) last_tid_tracks_.resize(lane + 1, kNone);
        return last_tid_tracks_[lane] = thread_track_slow(p, tid, lane);
    }
    uint32_t thread_track_slow(const ProcessTrace& p, uint64_t tid, uint32_t lane) {
        auto [it, fresh] = thread_tracks_.emplace(std::make_pair(tid, lane), 0);
        if (!fresh) return it->second;
        Track t;
        t.kind = TrackKind::CpuThread;
        t.group = process_group_;
        t.lane = lane;
        t.tid = tid;
        t.thread_name = std::string(p.thread_name(tid));
        // The name exactly as the program set it: viewers add the tid themselves.
        t.name = (t.thread_name.empty() ? "thread " + std::to_string(tid) : t.thread_name) + overlap_suffix(lane);
        return it->second = add_track(std::move(t));
    }

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
    void cpu_slices(const ProcessTrace& p, ProcessNames& names) {
        struct CpuItem {
            Timestamp start, end;
            uint64_t tid;
            bool is_api;
            uint32_t index;
        };
        std::vector<CpuItem> cpu;
        cpu.reserve(p.api_calls.size() + p.nvtx.size());
        for (uint32_t i = 0; i < p.api_calls.size(); ++i) {
            const auto& a = p.api_calls[i];
            if (!a.start) {
                ++m_.counts.zero_timestamps;
                continue;
            }
            cpu.push_back({a.start, std::max(a.end, a.start), a.tid, true, i});
        }
        for (uint32_t i = 0; i < p.nvtx.size(); ++i) {
            const auto& n = p.nvtx[i];
            if (!n.start) {
                ++m_.counts.zero_timestamps;
                continue;
            }
            if (n.type == NvtxType::Mark) continue;  // instants, see marks()
            cpu.push_back({n.start, std::max(nvtx_end(p, n), n.start), n.tid, false, i});
        }
        std::stable_sort(cpu.begin(), cpu.end(), [](const CpuItem& a, const CpuItem& b) { return a.tid < b.tid; });
        for (size_t b = 0; b < cpu.size();) {
            size_t e = b;
            while (e < cpu.size() && cpu[e].tid == cpu[b].tid) ++e;
            std::vector<LaneItem> items;
            for (size_t i = b; i < e; ++i) items.push_back({cpu[i].start, cpu[i].end, static_cast<uint32_t>(i - b)});
            auto lanes = assign_lanes(items, Overlap::Nest, m_.counts.overflow_slices);
            for (const auto& s : items) {
                const CpuItem& it = cpu[b + s.order];
                uint32_t track = thread_track(p, it.tid, lanes[s.order]);
                if (it.is_api) api_slice(p, it.index, track, names);
                else nvtx_slice(p, it.index, track, names);
            }
            b = e;
        }
    }

    // A range that never ended is drawn to the end of the trace.
    static Timestamp nvtx_end(const ProcessTrace& p, const Nvtx& n) { return n.end ? n.end : std::max(p.last_ns, n.start); }

    void api_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names) {
        const auto& a = p.api_calls[i];
        std::string_view name = p.str(a.name);
        Category cat = a.domain == ApiDomain::Driver ? Category::CudaDriver : Category::CudaRuntime;
        if (name.find("Synchronize") != std::string_view::npos) cat = Category::CudaSync;
        uint32_t s = push_slice(track, p.to_run_ns(a.start), static_cast<int64_t>(a.end - a.start), names.plain(a.name),
                                SliceSource::Api, cat, i);
        m_.slices[s].stack = stack_of(a.correlation);
        // A flow starts here only when a GPU op of this correlation exists.
        size_t slot = a.correlation ? corr_slots_.slot(a.correlation) : CorrelationSlots::kNoSlot;
        if (slot != CorrelationSlots::kNoSlot && has_op_[slot] && api_slice_[slot] == kNone) api_slice_[slot] = s;
    }

    void nvtx_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names) {
        const auto& n = p.nvtx[i];
        push_slice(track, p.to_run_ns(n.start), static_cast<int64_t>(nvtx_end(p, n) - n.start), names.plain(n.name),
                   SliceSource::Nvtx, Category::UserAnnotation, i);
    }

    void marks(const ProcessTrace& p, ProcessNames& names) {
        for (uint32_t i = 0; i < p.nvtx.size(); ++i) {
            const auto& n = p.nvtx[i];
            if (!n.start || n.type != NvtxType::Mark) continue;
            Instant e;
            e.ts = p.to_run_ns(n.start);
            e.track = thread_track(p, n.tid, 0);
            e.group = process_group_;
            e.name = names.plain(n.name);
            e.record = i;
            e.source = SliceSource::Mark;
            e.category = Category::UserAnnotation;
            e.scope = InstantScope::Thread;
            m_.instants.push_back(e);
        }
    }

    // CUPTI overhead: its own row in the process, lanes as needed.
    void overheads(const ProcessTrace& p, ProcessNames& names) {
        std::vector<LaneItem> items;
        for (uint32_t i = 0; i < p.overheads.size(); ++i)
            if (p.overheads[i].start) items.push_back({p.overheads[i].start, std::max(p.overheads[i].end, p.overheads[i].start), i});
        if (items.empty()) return;
        // CUPTI's overhead records (buffer flushes, its own work on several threads) overlap by nature: lanes, no
        // warning (issue 30: "N slices overlapped others" for a valid program).
        uint64_t expected_overlaps = 0;
        auto lanes = assign_lanes(items, Overlap::Forbid, expected_overlaps);
        std::map<uint32_t, uint32_t> lane_tracks;
        uint32_t name = names.intern("overhead");
        for (const auto& s : items) {
            uint32_t track = lane_track(lane_tracks, lanes[s.order], [&](uint32_t lane) {
                return row_track(TrackKind::Overhead, process_group_, lane, "CUPTI overhead" + overlap_suffix(lane));
            });
            const auto& ov = p.overheads[s.order];
            push_slice(track, p.to_run_ns(ov.start), static_cast<int64_t>(ov.end - ov.start), name,
                       SliceSource::Overhead, Category::Overhead, s.order);
        }
    }

    void captures(const ProcessTrace& p, ProcessNames& names) {
        for (uint32_t i = 0; i < p.captures.size(); ++i) {
            const auto& c = p.captures[i];
            if (!c.timestamp) continue;
            Instant e;
            e.ts = p.to_run_ns(c.timestamp);
            e.group = process_group_;
            e.name = names.intern(std::string(c.action == CaptureAction::Start ? "capture start (" : "capture stop (") +
                                  std::string(capture_reason_name(c.reason)) + ")");
            e.record = i;
            e.source = SliceSource::Capture;
            e.category = Category::Capture;
            e.scope = InstantScope::Process;
            m_.instants.push_back(e);
        }
    }

    // ----- GPU rows -----
    struct GpuItem {
        Timestamp start, end;
        uint32_t device, stream;
        SliceSource source;
        uint32_t index;
        bool graph_row = false;  // a graph launch whose nodes are in the trace: drawn on a row of its own
    };

    std::vector<GpuItem> gpu_items(const ProcessTrace& p) {
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
    std::map<uint32_t, uint32_t> device_groups(const ProcessTrace& p, const std::vector<GpuItem>& items) {
        std::map<uint32_t, const Device*> devs;
        for (const auto& d : p.devices) devs.emplace(d.id, &d);
        for (const auto& it : items) devs.emplace(it.device, nullptr);
        for (const auto& mem : p.memory) devs.emplace(mem.device, nullptr);
        for (const auto& pool : p.memory_pools) devs.emplace(pool.device, nullptr);
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

    void gpu(const ProcessTrace& p, uint32_t index, ProcessNames& names) {
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
    }

    static Track gpu_track(TrackKind kind, uint32_t group, uint32_t stream, uint32_t lane) {
        std::string name = kind == TrackKind::GraphLaunches ? "graph launches (stream " + std::to_string(stream) + ")"
                           : kind == TrackKind::ContextSync ? std::string("context sync")
                                                            : "stream " + std::to_string(stream);
        Track t = row_track(kind, group, lane, name + overlap_suffix(lane));
        t.stream = stream;
        return t;
    }

    void gpu_slice(const ProcessTrace& p, const GpuItem& g, uint32_t track, uint64_t flow_base, ProcessNames& names) {
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
    void memory_counters(const ProcessTrace& p, const std::map<uint32_t, uint32_t>& groups) {
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

    static std::string counter_name(size_t row) {
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

    const Run& run_;
    std::unique_ptr<CallSites> sites_;                          // this process's, when it has stacks
    std::unordered_map<const ResolvedStack*, uint32_t> stack_ids_;  // -> TimelineModel::stacks
    TimelineModel& m_;
    NameTable names_;
    uint32_t process_group_ = 0;
    bool several_hosts_ = false;
    std::vector<int64_t> host_index_;  // by Run::processes index: the host's position among the run's hosts
    std::map<std::pair<uint64_t, uint32_t>, uint32_t> thread_tracks_;  // (tid, lane) -> track
    uint64_t last_tid_ = 0;                 // the thread thread_track() was last asked for, and its lanes' tracks
    std::vector<uint32_t> last_tid_tracks_;
    CorrelationSlots corr_slots_;
    std::vector<uint32_t> api_slice_;
    std::vector<bool> has_op_;
    std::vector<uint32_t> last_flow_;  // by correlation: its latest flow (kNone: none yet)
    uint64_t extra_flows_ = 0;         // flows beyond a correlation's first, numbered from kExtraFlowIds
};

}  // namespace

TimelineModel build_timeline_model(const Run& run, const ModelOptions& options) {
    TimelineModel m;
    m.run = &run;
    m.base_realtime_ns = run.base_realtime_ns;
    for (const auto& p : run.processes)
        for (const auto& d : p.devices) m.devices.push_back({p.pid(), &d, std::string(p.str(d.name))});
    size_t records = 0;  // an upper bound of the slices: no vector growth (copies, fresh pages) while building
    for (const auto& p : run.processes)
        records += p.api_calls.size() + p.nvtx.size() + p.overheads.size() + p.kernels.size() + p.memcpys.size() +
                   p.memsets.size() + p.syncs.size() + p.graph_launches.size();
    m.slices.reserve(records);
    Builder b(run, m);
    // Helpers (compilers, shells: quiet processes another one started) are folded as the summary folds them.
    std::vector<bool> helper = options.all_processes ? std::vector<bool>(run.processes.size(), false)
                                                     : helper_processes(run);
    std::map<std::string, size_t> folded;
    for (uint32_t i = 0; i < run.processes.size(); ++i) {
        if (helper[i]) ++folded[process_short_name(run.processes[i].header)];
        else b.process(i);
    }
    if (!folded.empty()) b.folded_helpers(helpers_line(folded));
    if (options.analysis_track) {
        // Failures there never cost the timeline: the analysis group is left out and said.
        std::vector<AnalysisSlice> computed;
        const std::vector<AnalysisSlice>* given = options.analysis_slices;
        try {
            if (!given) computed = analysis_timeline_slices(run);
            b.analysis(given ? *given : computed);
        } catch (const std::exception& e) {
            m.warnings.push_back(std::string("analysis track left out: ") + e.what());
        }
    }
    b.set_ranges();
    // Modules the stacks could not be symbolised from: one line each (model/symbolize.h).
    for (auto& w : take_symbol_warnings()) m.warnings.push_back(std::move(w));
    return m;
}

}  // namespace gprof::report::timeline
