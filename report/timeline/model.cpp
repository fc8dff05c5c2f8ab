// Builds the timeline model (model.h) from a loaded run: groups, tracks with their overflow lanes, slices in the
// order encoders write them, flows, instants and counters. The builder's parts: builder.h.
#include "timeline/model.h"

#include <stdexcept>

#include "timeline/builder.h"

namespace gprof::report::timeline {
namespace building {

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

void Builder::process(uint32_t index) {
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
    samples_.reset();
    sample_stack_ids_.clear();
    if (!p.cpu_samples.empty() || !p.osrt_calls.empty()) samples_ = std::make_unique<SampleStacks>(p);
    cpu_slices(p, names);
    marks(p, names);
    if (options_.cpu_samples) cpu_samples(p, names);
    overheads(p, names);
    captures(p, names);
    gpu(p, index, names);
}

// One group for the folded helper processes: its name is the summary's helpers line; nothing is drawn in it.
void Builder::folded_helpers(const std::string& line) {
    Group g;
    g.kind = GroupKind::Process;
    g.track_pid = 0x7FFFFFFE;  // above any Linux pid (pid_max is at most 2^22): no real process's track
    g.name = line;
    g.process_name = line;
    add_group(std::move(g));
}

void Builder::analysis(const std::vector<AnalysisSlice>& slices) {
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
void Builder::set_ranges() {
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

// Correlations that launched a kernel/memcpy/memset (flow sources), the slice of the API call of each, and
// a "first op already has its flow" mark, by correlation slot (CorrelationSlots: dense for CUPTI's sequential
// ids, never sized by a value from the file).
void Builder::index_correlations(const ProcessTrace& p) {
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

uint32_t Builder::thread_track_slow(const ProcessTrace& p, uint64_t tid, uint32_t lane) {
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

}  // namespace building

using building::Builder;

TimelineModel build_timeline_model(const Run& run, const ModelOptions& options) {
    TimelineModel m;
    m.run = &run;
    m.base_realtime_ns = run.base_realtime_ns;
    for (const auto& p : run.processes)
        for (const auto& d : p.devices) m.devices.push_back({p.pid(), &d, std::string(p.str(d.name))});
    size_t records = 0;  // an upper bound of the slices: no vector growth (copies, fresh pages) while building
    for (const auto& p : run.processes)
        records += p.api_calls.size() + p.nvtx.size() + p.overheads.size() + p.kernels.size() + p.memcpys.size() +
                   p.memsets.size() + p.syncs.size() + p.graph_launches.size() + p.osrt_calls.size();
    m.slices.reserve(records);
    Builder b(run, m, options);
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
