// The field lists: for every record kind (and the trace header), its fields in on-disk order, each with its
// name and encoding. The writer encodes, the reader decodes and the test dumper prints through these lists, so a
// field added here is written, read and shown everywhere at once. docs/trace-format.md is their prose form.
//
// Append new fields at the end only (and bump kFormatMinor); never reorder or remove.
//
// A field visitor V has one member per encoding; `name` is the struct member's name (a string literal):
//   u(name, T&)                          unsigned LEB128 (enumerations by their number)
//   s(name, T&)                          zigzag LEB128
//   str(name, StringId&)                 an interned string id, encoded like u
//   time(name, Timestamp&)               zigzag LEB128 of the difference to the previous time field of the chunk
//   end(name, Timestamp&, start)         zigzag LEB128 of (end - start) of the same record
//   corr(name, uint32_t&)                zigzag LEB128 of the difference to the previous correlation of the chunk
//   bytes(name, uint8_t*, uint32_t& size, uint32_t max)    u length, then the bytes
//   frames(name, uint64_t*, uint32_t& count, uint32_t max) u count, then each address as a zigzag delta
//   reals(name, double*, uint32_t& count, uint32_t max)    u count, then each value's IEEE-754 bits, byte-swapped,
//                                        as u (integral values and zeros, the common ones, take 1-5 bytes)
// and, for the header only:
//   text(name, S&)                       u length, then the bytes (S: const char*, std::string or a view)
//   texts(name, H&)                      u count, then count texts (the header's argv)
#pragma once

#include <cstddef>
#include <cstdint>

#include "gprof/trace/records.h"

namespace gprof::trace {

// Field lists are constexpr so the compile-time checks below can run them.
#define GPROF_FIELD(encoding, member, ...) v.encoding(#member, r.member __VA_OPT__(, ) __VA_ARGS__)

template <class V> constexpr void describe(V& v, Thread& r) { GPROF_FIELD(u, tid); GPROF_FIELD(str, name); }
template <class V> constexpr void describe(V& v, Device& r) {
    GPROF_FIELD(u, id); GPROF_FIELD(str, name); GPROF_FIELD(u, cc_major); GPROF_FIELD(u, cc_minor);
    GPROF_FIELD(u, sm_count); GPROF_FIELD(u, global_memory_bytes); GPROF_FIELD(str, uuid);
}
template <class V> constexpr void describe(V& v, CudaInfo& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(u, driver_version); GPROF_FIELD(u, runtime_version);
    GPROF_FIELD(u, cupti_api_version); GPROF_FIELD(str, cupti_library);
}
template <class V> constexpr void describe(V& v, ApiCall& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, tid); GPROF_FIELD(corr, correlation);
    GPROF_FIELD(u, cbid); GPROF_FIELD(str, name); GPROF_FIELD(s, result); GPROF_FIELD(u, domain);
}
template <class V> constexpr void describe(V& v, Kernel& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, device); GPROF_FIELD(u, context);
    GPROF_FIELD(u, stream); GPROF_FIELD(corr, correlation);
    GPROF_FIELD(s, grid_x); GPROF_FIELD(s, grid_y); GPROF_FIELD(s, grid_z);
    GPROF_FIELD(s, block_x); GPROF_FIELD(s, block_y); GPROF_FIELD(s, block_z);
    GPROF_FIELD(u, registers_per_thread); GPROF_FIELD(u, static_shared_bytes); GPROF_FIELD(u, dynamic_shared_bytes);
    GPROF_FIELD(u, local_bytes_per_thread); GPROF_FIELD(str, name); GPROF_FIELD(u, graph_id);
    GPROF_FIELD(u, graph_node_id); GPROF_FIELD(u, device_launched);
}
template <class V> constexpr void describe(V& v, Memcpy& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, bytes); GPROF_FIELD(u, device);
    GPROF_FIELD(u, peer_device); GPROF_FIELD(u, context); GPROF_FIELD(u, stream); GPROF_FIELD(corr, correlation);
    GPROF_FIELD(u, graph_id); GPROF_FIELD(u, graph_node_id); GPROF_FIELD(u, copy_kind); GPROF_FIELD(u, src_kind);
    GPROF_FIELD(u, dst_kind); GPROF_FIELD(u, async);
}
template <class V> constexpr void describe(V& v, Memset& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, bytes); GPROF_FIELD(u, value);
    GPROF_FIELD(u, device); GPROF_FIELD(u, context); GPROF_FIELD(u, stream); GPROF_FIELD(corr, correlation);
    GPROF_FIELD(u, graph_id); GPROF_FIELD(u, graph_node_id); GPROF_FIELD(u, memory_kind);
}
template <class V> constexpr void describe(V& v, Sync& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, context); GPROF_FIELD(u, stream);
    GPROF_FIELD(u, event); GPROF_FIELD(corr, correlation); GPROF_FIELD(u, type);
}
template <class V> constexpr void describe(V& v, Nvtx& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, tid); GPROF_FIELD(u, end_tid);
    GPROF_FIELD(str, name); GPROF_FIELD(str, domain); GPROF_FIELD(u, color); GPROF_FIELD(u, category);
    GPROF_FIELD(str, category_name); GPROF_FIELD(u, payload); GPROF_FIELD(u, depth); GPROF_FIELD(u, type);
    GPROF_FIELD(u, payload_type);
}
template <class V> constexpr void describe(V& v, Memory& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(u, address); GPROF_FIELD(u, bytes); GPROF_FIELD(u, device);
    GPROF_FIELD(u, context); GPROF_FIELD(u, stream); GPROF_FIELD(corr, correlation); GPROF_FIELD(u, op);
    GPROF_FIELD(u, memory_kind);
    // 1.1
    GPROF_FIELD(u, async); GPROF_FIELD(u, pool_type); GPROF_FIELD(u, pool_address); GPROF_FIELD(u, pool_size);
    GPROF_FIELD(u, pool_used); GPROF_FIELD(u, pool_release_threshold);
}
template <class V> constexpr void describe(V& v, MemoryPool& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(u, address); GPROF_FIELD(u, device); GPROF_FIELD(corr, correlation);
    GPROF_FIELD(u, op); GPROF_FIELD(u, pool_type); GPROF_FIELD(u, size); GPROF_FIELD(u, used);
    GPROF_FIELD(u, release_threshold); GPROF_FIELD(u, min_bytes_to_keep); GPROF_FIELD(u, managed);
}
template <class V> constexpr void describe(V& v, Overhead& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, overhead_kind);
    GPROF_FIELD(u, object_kind); GPROF_FIELD(u, object_id);
}
template <class V> constexpr void describe(V& v, Dropped& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(u, count); GPROF_FIELD(u, context); GPROF_FIELD(u, stream);
    GPROF_FIELD(u, source);
}
template <class V> constexpr void describe(V& v, Capture& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(u, action); GPROF_FIELD(u, reason);
}
template <class V> constexpr void describe(V& v, Backtrace& r) {
    GPROF_FIELD(u, tid); GPROF_FIELD(corr, correlation);
    GPROF_FIELD(frames, frames, r.frame_count, kMaxBacktraceFrames);
}
template <class V> constexpr void describe(V& v, Module& r) {
    GPROF_FIELD(u, base); GPROF_FIELD(u, size); GPROF_FIELD(u, file_offset); GPROF_FIELD(str, path);
    GPROF_FIELD(bytes, build_id, r.build_id_size, kMaxBuildIdBytes);
}
template <class V> constexpr void describe(V& v, GraphLaunch& r) {
    GPROF_FIELD(time, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, device); GPROF_FIELD(u, context);
    GPROF_FIELD(u, stream); GPROF_FIELD(corr, correlation); GPROF_FIELD(u, graph_id);
}
template <class V> constexpr void describe(V& v, ExternalCorrelation& r) {
    GPROF_FIELD(u, external_id); GPROF_FIELD(corr, correlation); GPROF_FIELD(u, external_kind);
}
template <class V> constexpr void describe(V& v, Status& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(s, code); GPROF_FIELD(str, message); GPROF_FIELD(u, component);
    GPROF_FIELD(u, level);
}
template <class V> constexpr void describe(V& v, End& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(u, records_written); GPROF_FIELD(u, records_dropped);
    // 1.2
    GPROF_FIELD(u, signal);
}
template <class V> constexpr void describe(V& v, Exec& r) {
    GPROF_FIELD(time, timestamp); GPROF_FIELD(u, pid); GPROF_FIELD(str, path); GPROF_FIELD(str, command);
    GPROF_FIELD(u, image); GPROF_FIELD(u, spawned);
}
template <class V> constexpr void describe(V& v, Role& r) {
    GPROF_FIELD(s, rank); GPROF_FIELD(s, local_rank); GPROF_FIELD(s, world_size); GPROF_FIELD(str, variables);
    // 1.3
    GPROF_FIELD(str, job);
}
template <class V> constexpr void describe(V& v, Stack& r) {
    GPROF_FIELD(u, id); GPROF_FIELD(frames, frames, r.frame_count, kMaxBacktraceFrames);
}
template <class V> constexpr void describe(V& v, PyFrame& r) {
    GPROF_FIELD(u, id); GPROF_FIELD(str, file); GPROF_FIELD(str, function); GPROF_FIELD(u, line);
}
template <class V> constexpr void describe(V& v, PyStack& r) {
    GPROF_FIELD(u, id); GPROF_FIELD(frames, frames, r.frame_count, kMaxBacktraceFrames);
}
template <class V> constexpr void describe(V& v, CallSite& r) {
    GPROF_FIELD(u, tid); GPROF_FIELD(corr, correlation); GPROF_FIELD(u, stack); GPROF_FIELD(u, py_stack);
}
// 1.5's kinds write their times as `u` absolute values: a reader of 1.4 skips them, and a `time` field would move
// the chunk's delta base under it (docs/trace-format.md, "Compatibility rules").
template <class V> constexpr void describe(V& v, CpuSample& r) {
    GPROF_FIELD(u, timestamp); GPROF_FIELD(u, tid); GPROF_FIELD(u, ip); GPROF_FIELD(u, stack);
    GPROF_FIELD(u, py_stack); GPROF_FIELD(u, periods); GPROF_FIELD(u, period_ns);
}
template <class V> constexpr void describe(V& v, OsRuntimeCall& r) {
    GPROF_FIELD(u, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, tid); GPROF_FIELD(str, name);
    GPROF_FIELD(u, stack); GPROF_FIELD(u, py_stack);
}
// 1.7's kinds, like 1.5's, write no `time` field.
template <class V> constexpr void describe(V& v, GpuMetricSet& r) {
    GPROF_FIELD(u, device); GPROF_FIELD(str, name); GPROF_FIELD(str, chip); GPROF_FIELD(str, metrics);
    GPROF_FIELD(u, interval_ns);
}
template <class V> constexpr void describe(V& v, GpuMetricSample& r) {
    GPROF_FIELD(u, start); GPROF_FIELD(end, end, r.start); GPROF_FIELD(u, device);
    GPROF_FIELD(reals, values, r.value_count, kMaxGpuMetrics);
}

// The Header record (kind 1). H is HeaderInfo when writing and the reader's decoded form when reading; the clock
// fields are flattened (clock.clock is written as "clock", clock.trace_ns as "trace_ns", ...).
template <class V, class H> constexpr void describe_header(V& v, H& r) {
    GPROF_FIELD(text, producer); GPROF_FIELD(s, pid); GPROF_FIELD(s, ppid); GPROF_FIELD(text, hostname);
    GPROF_FIELD(text, executable); v.texts("argv", r);
    v.u("clock", r.clock.clock); v.u("trace_ns", r.clock.trace_ns); v.s("realtime_ns", r.clock.realtime_ns);
    v.s("monotonic_ns", r.clock.monotonic_ns);
    GPROF_FIELD(u, cuda_driver_version); GPROF_FIELD(u, cupti_api_version); GPROF_FIELD(text, run_id);
    // 1.3
    GPROF_FIELD(text, boot_id);
    // 1.6
    GPROF_FIELD(u, pid_ns);
}

#undef GPROF_FIELD

// ----- compile-time checks ---------------------------------------------------------------------------------

namespace fields_check {

// Counts the largest encoding of a record body: every LEB128 value at its 10-byte maximum.
struct MaxBodyBytes {
    size_t total = 0;
    template <class T> constexpr void u(const char*, T&) { total += 10; }
    template <class T> constexpr void s(const char*, T&) { total += 10; }
    constexpr void str(const char*, StringId&) { total += 10; }
    constexpr void time(const char*, Timestamp&) { total += 10; }
    constexpr void end(const char*, Timestamp&, const Timestamp&) { total += 10; }
    constexpr void corr(const char*, uint32_t&) { total += 10; }
    constexpr void bytes(const char*, uint8_t*, uint32_t&, uint32_t max) { total += 10 + max; }
    constexpr void frames(const char*, uint64_t*, uint32_t&, uint32_t max) { total += 10 + size_t(max) * 10; }
    constexpr void reals(const char*, double*, uint32_t&, uint32_t max) { total += 10 + size_t(max) * 10; }
};

template <class R> constexpr size_t max_body_bytes() {
    R r{};
    MaxBodyBytes m;
    describe(m, r);
    return m.total;
}

}  // namespace fields_check

// The largest body any data kind can encode to (a full Backtrace).
inline constexpr size_t kMaxDataBodyBytes = [] {
    size_t max = 0;
#define GPROF_TRACE_MAX_BODY(Kind, number, member, name) \
    max = fields_check::max_body_bytes<Kind>() > max ? fields_check::max_body_bytes<Kind>() : max;
    GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_MAX_BODY)
#undef GPROF_TRACE_MAX_BODY
    return max;
}();

// Every kind of the list has a field list (a kind without one would not encode or decode).
#define GPROF_TRACE_HAS_FIELDS(Kind, number, member, name)                                              \
    static_assert(requires(fields_check::MaxBodyBytes& m, Kind& r) { describe(m, r); },                 \
                  "record kind " #Kind " is in GPROF_TRACE_RECORD_KINDS but has no field list in fields.h");
GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_HAS_FIELDS)
#undef GPROF_TRACE_HAS_FIELDS

}  // namespace gprof::trace
