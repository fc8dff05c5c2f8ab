// The threads' tracks of a process: API calls and NVTX ranges in lanes, marks, CUPTI overheads, capture ranges.
#include "gprof/trace/names.h"
#include "model/identity.h"
#include "model/memory.h"
#include "timeline/builder.h"

namespace gprof::report::timeline::building {

// API calls and NVTX ranges, per thread, nesting checked; written in start order (parents first).
void Builder::cpu_slices(const ProcessTrace& p, ProcessNames& names) {
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

void Builder::api_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names) {
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

void Builder::nvtx_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names) {
    const auto& n = p.nvtx[i];
    push_slice(track, p.to_run_ns(n.start), static_cast<int64_t>(nvtx_end(p, n) - n.start), names.plain(n.name),
               SliceSource::Nvtx, Category::UserAnnotation, i);
}

void Builder::marks(const ProcessTrace& p, ProcessNames& names) {
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
void Builder::overheads(const ProcessTrace& p, ProcessNames& names) {
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

void Builder::captures(const ProcessTrace& p, ProcessNames& names) {
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

}  // namespace gprof::report::timeline::building
