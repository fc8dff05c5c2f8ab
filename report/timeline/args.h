// The args of a timeline slice or instant, read from the record it came from when an encoder asks (the model
// keeps no copy). One list of arg names (kArgKeyNames) serves every encoder: Chrome writes them as "args" keys,
// Perfetto interns them as debug-annotation names.
//
// An encoder passes a Sink with these methods (each call is one arg, in this order in the output):
//   u(ArgKey, uint64_t)   i(ArgKey, int64_t)   f3(ArgKey, double) (3 decimals in text formats)
//   s(ArgKey, std::string_view)   dims(ArgKey, int32_t x, int32_t y, int32_t z)
//   object(const nlohmann::json&)  (the analysis slices' free-form args: the members of an object)
// A new arg: an ArgKey before Count, its name in kArgKeyNames, its line in visit_args. A new value type: a
// method on every Sink (json.cpp, perfetto.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "gprof/trace/names.h"
#include "timeline/model.h"

namespace gprof::report::timeline {

enum class ArgKey : uint8_t {
    Device, Context, Stream, Correlation, RegistersPerThread, SharedMemory, StaticSharedMemory, DynamicSharedMemory,
    BlocksPerSm, Grid, Block, GraphId, GraphNodeId, Bytes, Bandwidth, SrcMemoryKind, DstMemoryKind, PeerDevice,
    MemoryKind, Value, Event, Result, Cbid, Domain, Type, Note, NvtxCategory, Color, Payload, OverheadKind,
    ObjectKind, ObjectId, CallSite, Stack, CpuTime, Count
};
inline constexpr std::string_view kArgKeyNames[] = {
    "device", "context", "stream", "correlation", "registers per thread", "shared memory", "static shared memory",
    "dynamic shared memory", "blocks per SM", "grid", "block", "graph id", "graph node id", "bytes",
    "memory bandwidth (GB/s)", "src memory kind", "dst memory kind", "peer device", "memory kind", "value", "event",
    "result", "cbid", "domain", "type", "note", "category", "color", "payload", "overhead kind", "object kind",
    "object id", "call site", "stack", "cpu time (ns)"};
static_assert(std::size(kArgKeyNames) == static_cast<size_t>(ArgKey::Count));
inline std::string_view arg_name(ArgKey k) { return kArgKeyNames[static_cast<size_t>(k)]; }

// Args a viewer with rows can do without, which the compact Perfetto encoding leaves out (Chrome JSON keeps them
// all): those derived from other args or the name (shared memory = static + dynamic; blocks per SM = grid / the
// device's SMs; bandwidth = bytes / duration; an API call's cbid is CUPTI's number for the function its name
// says; the memory kinds of a copy or memset are in its name, "Memcpy HtoD (Pageable -> Device)"), and the
// device and stream of a slice on a GPU row (the row and its "GPU N" parent say them).
inline constexpr bool arg_is_derived(ArgKey k) {
    switch (k) {
        case ArgKey::SharedMemory:
        case ArgKey::BlocksPerSm:
        case ArgKey::Bandwidth:
        case ArgKey::Cbid:
        case ArgKey::SrcMemoryKind:
        case ArgKey::DstMemoryKind:
        case ArgKey::MemoryKind: return true;
        default: return false;
    }
}
inline constexpr bool arg_is_said_by_gpu_row(ArgKey k) { return k == ArgKey::Device || k == ArgKey::Stream; }
// ... and an API call's result when it is 0 (success, nearly every call): only failed calls carry one there.
inline constexpr bool arg_is_success_result(ArgKey k, int64_t v) { return k == ArgKey::Result && v == 0; }

namespace detail {

template <class Sink, class Op> void graph_args(Sink& sink, const Op& op) {
    if (!op.graph_id) return;
    sink.u(ArgKey::GraphId, op.graph_id);
    sink.u(ArgKey::GraphNodeId, op.graph_node_id);
}

// Where a kernel, copy or memset ran and which API call launched it.
template <class Sink, class Op> void op_identity(Sink& sink, const Op& op) {
    sink.u(ArgKey::Device, op.device);
    sink.u(ArgKey::Context, op.context);
    sink.u(ArgKey::Stream, op.stream);
    sink.u(ArgKey::Correlation, op.correlation);
}

// A copy's or memset's bytes, and bytes per ns = GB/s for one that took time.
template <class Sink, class Op> void transfer(Sink& sink, const Op& op) {
    sink.u(ArgKey::Bytes, op.bytes);
    auto dur = static_cast<int64_t>(op.end - op.start);
    if (dur > 0) sink.f3(ArgKey::Bandwidth, static_cast<double>(op.bytes) / static_cast<double>(dur));
}

template <class Sink> void record_args(const TimelineModel& m, const Slice& s, Sink& sink);

}  // namespace detail

// A slice's args: those of its record, then its call site (the user's frame) and stack (TimelineModel::stacks) when
// its API call has one.
template <class Sink> void visit_args(const TimelineModel& m, const Slice& s, Sink& sink) {
    if (s.source == SliceSource::Analysis) {
        sink.object(m.analysis_args[s.record]);
        return;
    }
    detail::record_args(m, s, sink);
    if (s.stack != kNone) {
        sink.s(ArgKey::CallSite, m.stacks[s.stack].site);
        sink.s(ArgKey::Stack, m.stacks[s.stack].text);
    }
}

namespace detail {

template <class Sink> void record_args(const TimelineModel& m, const Slice& s, Sink& sink) {
    using namespace gprof::trace;
    const Group& g = m.group_of(s);
    const ProcessTrace& p = m.process_of(g);
    switch (s.source) {
        case SliceSource::Api: {
            const auto& a = p.api_calls[s.record];
            sink.u(ArgKey::Correlation, a.correlation);
            sink.i(ArgKey::Result, a.result);
            sink.u(ArgKey::Cbid, a.cbid);
            return;
        }
        case SliceSource::Nvtx: {
            const auto& n = p.nvtx[s.record];
            sink.s(ArgKey::Domain, n.domain ? p.str(n.domain) : std::string_view());
            sink.s(ArgKey::Type, nvtx_type_name(n.type));
            if (!n.end) sink.s(ArgKey::Note, "range never ended; drawn to the end of the trace");
            if (n.category) sink.u(ArgKey::NvtxCategory, n.category);
            if (n.color) sink.u(ArgKey::Color, n.color);
            if (n.payload_type != NvtxPayload::None) sink.u(ArgKey::Payload, n.payload);
            return;
        }
        case SliceSource::Kernel: {
            const auto& k = p.kernels[s.record];
            detail::op_identity(sink, k);
            sink.u(ArgKey::RegistersPerThread, k.registers_per_thread);
            sink.u(ArgKey::SharedMemory, uint64_t(k.static_shared_bytes) + k.dynamic_shared_bytes);
            sink.u(ArgKey::StaticSharedMemory, k.static_shared_bytes);
            sink.u(ArgKey::DynamicSharedMemory, k.dynamic_shared_bytes);
            if (g.sm_count) {
                uint64_t blocks = uint64_t(std::max(k.grid_x, 0)) * std::max(k.grid_y, 0) * std::max(k.grid_z, 0);
                sink.f3(ArgKey::BlocksPerSm, static_cast<double>(blocks) / g.sm_count);
            }
            sink.dims(ArgKey::Grid, k.grid_x, k.grid_y, k.grid_z);
            sink.dims(ArgKey::Block, k.block_x, k.block_y, k.block_z);
            detail::graph_args(sink, k);
            return;
        }
        case SliceSource::Memcpy: {
            const auto& c = p.memcpys[s.record];
            detail::op_identity(sink, c);
            detail::transfer(sink, c);
            sink.s(ArgKey::SrcMemoryKind, memory_kind_name(c.src_kind));
            sink.s(ArgKey::DstMemoryKind, memory_kind_name(c.dst_kind));
            if (c.copy_kind == MemcpyKind::PtoP) sink.u(ArgKey::PeerDevice, c.peer_device);
            detail::graph_args(sink, c);
            return;
        }
        case SliceSource::Memset: {
            const auto& c = p.memsets[s.record];
            detail::op_identity(sink, c);
            detail::transfer(sink, c);
            sink.s(ArgKey::MemoryKind, memory_kind_name(c.memory_kind));
            sink.u(ArgKey::Value, c.value);
            detail::graph_args(sink, c);
            return;
        }
        case SliceSource::Sync: {
            const auto& c = p.syncs[s.record];
            sink.u(ArgKey::Context, c.context);
            if (c.stream != 0xFFFFFFFFu) sink.u(ArgKey::Stream, c.stream);
            sink.u(ArgKey::Event, c.event);
            sink.u(ArgKey::Correlation, c.correlation);
            return;
        }
        case SliceSource::GraphLaunch: {
            const auto& c = p.graph_launches[s.record];
            sink.u(ArgKey::Device, c.device);
            sink.u(ArgKey::Stream, c.stream);
            sink.u(ArgKey::Correlation, c.correlation);
            sink.u(ArgKey::GraphId, c.graph_id);
            return;
        }
        case SliceSource::Overhead: {
            const auto& o = p.overheads[s.record];
            sink.u(ArgKey::OverheadKind, o.overhead_kind);
            sink.u(ArgKey::ObjectKind, o.object_kind);
            sink.u(ArgKey::ObjectId, o.object_id);
            return;
        }
        case SliceSource::Analysis:
        case SliceSource::Mark:
        case SliceSource::Capture:
        case SliceSource::OsRuntime:  // its name says it; its call site follows (visit_args)
        case SliceSource::CpuSample: return;  // marks and captures carry no args (yet); samples: visit_instant_args
    }
}

}  // namespace detail

// An instant's args: a CPU sample's CPU time and stack; nothing for the others (yet).
template <class Sink> void visit_instant_args(const TimelineModel& m, const Instant& e, Sink& sink) {
    if (e.source != SliceSource::CpuSample) return;
    const auto& smp = m.process_of(m.groups[e.group]).cpu_samples[e.record];
    sink.u(ArgKey::CpuTime, uint64_t{smp.periods} * smp.period_ns);
    if (e.stack != kNone) sink.s(ArgKey::Stack, m.stacks[e.stack].text);
}

}  // namespace gprof::report::timeline
