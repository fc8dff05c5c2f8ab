// The threads' tracks of a process: API calls, NVTX ranges and OS-runtime calls in lanes, CPU samples, marks, CUPTI
// overheads, capture ranges.
#include "gprof/trace/names.h"
#include "model/identity.h"
#include "model/memory.h"
#include "timeline/builder.h"

namespace gprof::report::timeline::building {

// API calls, NVTX ranges and OS-runtime calls, per thread, nesting checked; written in start order (parents first).
void Builder::cpu_slices(const ProcessTrace& p, ProcessNames& names) {
    enum class From : uint8_t { Api, Nvtx, Osrt };
    struct CpuItem {
        Timestamp start, end;
        uint64_t tid;
        From from;
        uint32_t index;
    };
    std::vector<CpuItem> cpu;
    cpu.reserve(p.api_calls.size() + p.nvtx.size() + p.osrt_calls.size());
    for (uint32_t i = 0; i < p.api_calls.size(); ++i) {
        const auto& a = p.api_calls[i];
        if (!a.start) {
            ++m_.counts.zero_timestamps;
            continue;
        }
        cpu.push_back({a.start, std::max(a.end, a.start), a.tid, From::Api, i});
    }
    for (uint32_t i = 0; i < p.osrt_calls.size(); ++i) {
        const auto& c = p.osrt_calls[i];
        if (!c.start) {
            ++m_.counts.zero_timestamps;
            continue;
        }
        cpu.push_back({c.start, std::max(c.end, c.start), c.tid, From::Osrt, i});
    }
    for (uint32_t i = 0; i < p.nvtx.size(); ++i) {
        const auto& n = p.nvtx[i];
        if (!n.start) {
            ++m_.counts.zero_timestamps;
            continue;
        }
        if (n.type == NvtxType::Mark) continue;  // instants, see marks()
        cpu.push_back({n.start, std::max(nvtx_end(p, n), n.start), n.tid, From::Nvtx, i});
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
            if (it.from == From::Api) api_slice(p, it.index, track, names);
            else if (it.from == From::Nvtx) nvtx_slice(p, it.index, track, names);
            else osrt_slice(p, it.index, track, names);
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

void Builder::osrt_slice(const ProcessTrace& p, uint32_t i, uint32_t track, ProcessNames& names) {
    const auto& c = p.osrt_calls[i];
    uint32_t s = push_slice(track, p.to_run_ns(c.start), static_cast<int64_t>(c.end - c.start), names.plain(c.name),
                            SliceSource::OsRuntime, Category::OsRuntime, i);
    if ((c.stack || c.py_stack) && samples_) m_.slices[s].stack = sample_stack(samples_->of(c));
}

// The frames of a sample or a call, interned by their text: one StackText per distinct stack shown.
uint32_t Builder::sample_stack(const std::vector<SourceFrame>& frames) {
    if (frames.empty()) return kNone;
    auto [it, fresh] = sample_stack_ids_.emplace(&frames, static_cast<uint32_t>(m_.stacks.size()));
    if (fresh) {
        StackText t;
        t.site = frames.front().location();
        for (size_t i = 0; i < frames.size() && i < kTimelineStackFrames; ++i)
            t.text += (i ? "\n" : "") + frames[i].text();
        if (frames.size() > kTimelineStackFrames)
            t.text += "\n... " + std::to_string(frames.size() - kTimelineStackFrames) + " more frames";
        m_.stacks.push_back(std::move(t));
    }
    return it->second;
}

// CPU samples: an instant on the thread's row each, named by its innermost frame, its stack in the args.
void Builder::cpu_samples(const ProcessTrace& p, ProcessNames& names) {
    if (!samples_) return;
    std::unordered_map<const std::vector<SourceFrame>*, uint32_t> leaf_names;
    for (uint32_t i = 0; i < p.cpu_samples.size(); ++i) {
        const auto& smp = p.cpu_samples[i];
        if (!smp.timestamp) {
            ++m_.counts.zero_timestamps;
            continue;
        }
        const auto& frames = samples_->of(smp);
        auto [ln, fresh] = leaf_names.emplace(&frames, 0);
        if (fresh) ln->second = names.intern(frames.empty() ? std::string("[no frame]") : folded_frame(frames.front()));
        Instant e;
        e.ts = p.to_run_ns(smp.timestamp);
        e.track = thread_track(p, smp.tid, 0);
        e.group = process_group_;
        e.name = ln->second;
        e.record = i;
        e.source = SliceSource::CpuSample;
        e.category = Category::CpuSample;
        e.scope = InstantScope::Thread;
        e.stack = sample_stack(frames);
        m_.instants.push_back(e);
    }
}

}  // namespace gprof::report::timeline::building
