// One distinctive record of every kind, and a field-by-field printout used to compare records in tests.
#pragma once

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "gprof/trace/reader.h"
#include "gprof/trace/writer.h"

namespace gprof::testing {

using namespace gprof::trace;

// Writes one record of every kind (values chosen to exercise negative deltas, large numbers, zero timestamps).
inline void add_every_kind(TraceWriter& w, uint64_t base = 1'700'000'000'123'456'789ull) {
    Thread th; th.tid = 12345; th.name = w.intern("worker-1"); w.add(th);
    Device dev; dev.id = 1; dev.name = w.intern("NVIDIA H100 80GB HBM3"); dev.cc_major = 9; dev.cc_minor = 0;
    dev.sm_count = 132; dev.global_memory_bytes = 85'520'809'984ull; dev.uuid = w.intern("GPU-1234"); w.add(dev);
    CudaInfo ci; ci.timestamp = base; ci.driver_version = 13000; ci.runtime_version = 13000;
    ci.cupti_api_version = 130001; ci.cupti_library = w.intern("/usr/local/cuda/lib64/libcupti.so.13"); w.add(ci);
    ApiCall api; api.start = base + 100; api.end = base + 5100; api.tid = 12345; api.correlation = 77; api.cbid = 211;
    api.name = w.intern("cudaLaunchKernel"); api.result = -3; api.domain = ApiDomain::Driver; w.add(api);
    Kernel k; k.start = base + 90; k.end = base + 20'090; k.device = 1; k.context = 3; k.stream = 7; k.correlation = 77;
    k.grid_x = 1024; k.grid_y = 2; k.grid_z = 1; k.block_x = 256; k.block_y = 1; k.block_z = 1;
    k.registers_per_thread = 32; k.static_shared_bytes = 4096; k.dynamic_shared_bytes = 49152;
    k.local_bytes_per_thread = 16; k.name = w.intern("_Z6vecAddPKfS0_Pfi"); k.graph_id = 5; k.graph_node_id = 1ull << 40;
    k.device_launched = 1; w.add(k);
    Memcpy mc; mc.start = base + 30'000; mc.end = base + 31'000; mc.bytes = 1ull << 33; mc.device = 0; mc.peer_device = 1;
    mc.context = 3; mc.stream = 14; mc.correlation = 70; mc.graph_id = 0; mc.graph_node_id = 0;
    mc.copy_kind = MemcpyKind::PtoP; mc.src_kind = MemoryKind::Pinned; mc.dst_kind = MemoryKind::Device; mc.async = 1;
    w.add(mc);
    Memset ms; ms.start = base + 32'000; ms.end = base + 32'500; ms.bytes = 4096; ms.value = 0xAB; ms.device = 1;
    ms.context = 3; ms.stream = 7; ms.correlation = 79; ms.graph_id = 2; ms.graph_node_id = 9;
    ms.memory_kind = MemoryKind::Managed; w.add(ms);
    Sync sy; sy.start = base + 40'000; sy.end = base + 90'000; sy.context = 3; sy.stream = 0xFFFFFFFFu; sy.event = 4;
    sy.correlation = 80; sy.type = SyncType::ContextSynchronize; w.add(sy);
    Nvtx nv; nv.start = base + 10; nv.end = 0; nv.tid = 12345; nv.end_tid = 12346; nv.name = w.intern("forward");
    nv.domain = w.intern("my.domain"); nv.color = 0xFF00FF00u; nv.category = 3; nv.category_name = w.intern("layers");
    nv.payload = 0x400921FB54442D18ull; nv.depth = 2; nv.type = NvtxType::StartEnd; nv.payload_type = NvtxPayload::Double;
    w.add(nv);
    Memory me; me.timestamp = base + 5; me.address = 0x7F12'3456'7000ull; me.bytes = 1 << 20; me.device = 1; me.context = 3;
    me.stream = 7; me.correlation = 81; me.op = MemoryOp::Release; me.memory_kind = MemoryKind::Device; me.async = 1;
    me.pool_type = MemoryPoolType::Local; me.pool_address = 0x7F12'0000'0000ull; me.pool_size = 1ull << 31;
    me.pool_used = 3ull << 20; me.pool_release_threshold = ~0ull; w.add(me);
    Overhead ov; ov.start = base + 1; ov.end = base + 2; ov.overhead_kind = 1u << 16; ov.object_kind = 1; ov.object_id = 99;
    w.add(ov);
    Dropped dr; dr.timestamp = base + 3; dr.count = 17; dr.context = 3; dr.stream = 7; dr.source = DropSource::CuptiBuffer;
    w.add(dr);
    Capture ca; ca.timestamp = 0; ca.action = CaptureAction::Stop; ca.reason = CaptureReason::ProfilerApi; w.add(ca);
    Backtrace bt; bt.tid = 12345; bt.correlation = 77; bt.frame_count = kMaxBacktraceFrames;
    for (uint32_t i = 0; i < kMaxBacktraceFrames; ++i) bt.frames[i] = 0x55'5555'0000ull + i * 0x1234 - (i % 3) * 0x100000;
    w.add(bt);
    Module mo; mo.base = 0x7F00'0000'0000ull; mo.size = 1 << 24; mo.file_offset = 4096; mo.path = w.intern("/lib/libapp.so");
    mo.build_id_size = 20; for (uint32_t i = 0; i < 20; ++i) mo.build_id[i] = static_cast<uint8_t>(0xF0 + i); w.add(mo);
    GraphLaunch gl; gl.start = base + 50'000; gl.end = base + 60'000; gl.device = 1; gl.context = 3; gl.stream = 7;
    gl.correlation = 90; gl.graph_id = 5; w.add(gl);
    ExternalCorrelation ec; ec.external_id = 1ull << 50; ec.correlation = 91; ec.external_kind = 2; w.add(ec);
    Status st; st.timestamp = base + 7; st.code = 999; st.message = w.intern("CUPTI unavailable: no driver");
    st.component = Component::Cupti; st.level = StatusLevel::Warning; w.add(st);
    MemoryPool mp; mp.timestamp = base + 6; mp.address = 0x7F12'0000'0000ull; mp.device = 1; mp.correlation = 82;
    mp.op = MemoryPoolOp::Trimmed; mp.pool_type = MemoryPoolType::Local; mp.size = 1ull << 30; mp.used = 3ull << 20;
    mp.release_threshold = ~0ull; mp.min_bytes_to_keep = 1 << 21; mp.managed = 1; w.add(mp);
    // 1.2
    Exec ex; ex.timestamp = base + 8; ex.pid = 4243; ex.path = w.intern("/sbin/ldconfig.real");
    ex.command = w.intern("/sbin/ldconfig.real -p"); ex.image = ExecImage::Static; ex.spawned = 1; w.add(ex);
    Role ro; ro.rank = 3; ro.local_rank = 1; ro.world_size = -1; ro.variables = w.intern("RANK=3 LOCAL_RANK=1");
    ro.job = w.intern("4711");  // 1.3
    w.add(ro);
    // 1.4
    Stack sk; sk.id = 1; sk.frame_count = 3;
    sk.frames[0] = 0x55'5555'1234ull; sk.frames[1] = 0x55'5555'0100ull; sk.frames[2] = 0x7F00'0000'2000ull; w.add(sk);
    PyFrame pf; pf.id = 2; pf.file = w.intern("/home/u/train.py"); pf.function = w.intern("Model.forward");
    pf.line = 42; w.add(pf);
    PyStack ps; ps.id = 1; ps.frame_count = 2; ps.frames[0] = 2; ps.frames[1] = 1; w.add(ps);
    CallSite cs; cs.tid = 12345; cs.correlation = 77; cs.stack = 1; cs.py_stack = 1; w.add(cs);
    // 1.5
    CpuSample smp; smp.timestamp = base + 11; smp.tid = 12346; smp.ip = 0x55'5555'1240ull; smp.stack = 1; smp.py_stack = 1;
    smp.periods = 4; smp.period_ns = 1'000'000; w.add(smp);
    OsRuntimeCall oc; oc.start = base + 12; oc.end = base + 1'000'000'012ull; oc.tid = 12345; oc.name = w.intern("read");
    oc.stack = 1; oc.py_stack = 0; w.add(oc);
    // 1.7
    GpuMetricSet gs; gs.device = 1; gs.name = w.intern("gh100"); gs.chip = w.intern("GH100");
    gs.metrics = w.intern("sm__cycles_active.avg.pct_of_peak_sustained_elapsed gr__cycles_elapsed.max dram__bytes_read.sum");
    gs.interval_ns = 100'000; w.add(gs);
    GpuMetricSample gm; gm.start = base + 13; gm.end = base + 100'013; gm.device = 1; gm.value_count = 3;
    gm.values[0] = 99.75; gm.values[1] = 166'437.0; gm.values[2] = -0.0; w.add(gm);
}

inline constexpr size_t kEveryKindCount = 29;  // data records add_every_kind writes (strings aside)
// ... of which those a writer of format 1.6 (and 1.5) did not have: the last two;
inline constexpr size_t kEveryKindAddedIn17 = 2;
// ... and before them those a writer of format 1.4 did not have: two more;
inline constexpr size_t kEveryKindAddedIn15 = 2;
// ... and before them those a writer of format 1.3 did not have: four more;
inline constexpr size_t kEveryKindAddedIn14 = 4;
// ... and before them those a writer of format 1.1 (and 1.0) did not have: two more.
inline constexpr size_t kEveryKindAddedIn12 = 2;

// Every field of a record, printed. Written out by hand (not through the codec) so a field the codec forgets
// shows up as a difference.
inline std::string describe_record(const Record& r, const TraceReader* reader = nullptr) {
    std::ostringstream o;
    auto s = [&](StringId id) { return reader ? std::string(reader->string(id)) : std::to_string(id); };
    o << static_cast<int>(r.kind) << ":";
    switch (r.kind) {
        case RecordKind::Thread: o << r.thread.tid << "," << s(r.thread.name); break;
        case RecordKind::Device: { const auto& d = r.device;
            o << d.id << "," << s(d.name) << "," << d.cc_major << "." << d.cc_minor << "," << d.sm_count << ","
              << d.global_memory_bytes << "," << s(d.uuid); break; }
        case RecordKind::CudaInfo: { const auto& c = r.cuda_info;
            o << c.timestamp << "," << c.driver_version << "," << c.runtime_version << "," << c.cupti_api_version
              << "," << s(c.cupti_library); break; }
        case RecordKind::ApiCall: { const auto& a = r.api;
            o << a.start << "," << a.end << "," << a.tid << "," << a.correlation << "," << a.cbid << "," << s(a.name)
              << "," << a.result << "," << int(a.domain); break; }
        case RecordKind::Kernel: { const auto& k = r.kernel;
            o << k.start << "," << k.end << "," << k.device << "," << k.context << "," << k.stream << ","
              << k.correlation << "," << k.grid_x << "," << k.grid_y << "," << k.grid_z << "," << k.block_x << ","
              << k.block_y << "," << k.block_z << "," << k.registers_per_thread << "," << k.static_shared_bytes << ","
              << k.dynamic_shared_bytes << "," << k.local_bytes_per_thread << "," << s(k.name) << "," << k.graph_id
              << "," << k.graph_node_id << "," << int(k.device_launched); break; }
        case RecordKind::Memcpy: { const auto& m = r.memcpy;
            o << m.start << "," << m.end << "," << m.bytes << "," << m.device << "," << m.peer_device << ","
              << m.context << "," << m.stream << "," << m.correlation << "," << m.graph_id << "," << m.graph_node_id
              << "," << int(m.copy_kind) << "," << int(m.src_kind) << "," << int(m.dst_kind) << "," << int(m.async);
            break; }
        case RecordKind::Memset: { const auto& m = r.memset;
            o << m.start << "," << m.end << "," << m.bytes << "," << m.value << "," << m.device << "," << m.context
              << "," << m.stream << "," << m.correlation << "," << m.graph_id << "," << m.graph_node_id << ","
              << int(m.memory_kind); break; }
        case RecordKind::Sync: { const auto& y = r.sync;
            o << y.start << "," << y.end << "," << y.context << "," << y.stream << "," << y.event << ","
              << y.correlation << "," << int(y.type); break; }
        case RecordKind::Nvtx: { const auto& n = r.nvtx;
            o << n.start << "," << n.end << "," << n.tid << "," << n.end_tid << "," << s(n.name) << "," << s(n.domain)
              << "," << n.color << "," << n.category << "," << s(n.category_name) << "," << n.payload << ","
              << n.depth << "," << int(n.type) << "," << int(n.payload_type); break; }
        case RecordKind::Memory: { const auto& m = r.memory;
            o << m.timestamp << "," << m.address << "," << m.bytes << "," << m.device << "," << m.context << ","
              << m.stream << "," << m.correlation << "," << int(m.op) << "," << int(m.memory_kind) << ","
              << int(m.async) << "," << int(m.pool_type) << "," << m.pool_address << "," << m.pool_size << ","
              << m.pool_used << "," << m.pool_release_threshold; break; }
        case RecordKind::MemoryPool: { const auto& m = r.memory_pool;
            o << m.timestamp << "," << m.address << "," << m.device << "," << m.correlation << "," << int(m.op) << ","
              << int(m.pool_type) << "," << m.size << "," << m.used << "," << m.release_threshold << ","
              << m.min_bytes_to_keep << "," << int(m.managed); break; }
        case RecordKind::Overhead: { const auto& v = r.overhead;
            o << v.start << "," << v.end << "," << v.overhead_kind << "," << v.object_kind << "," << v.object_id; break; }
        case RecordKind::Dropped: { const auto& d = r.dropped;
            o << d.timestamp << "," << d.count << "," << d.context << "," << d.stream << "," << int(d.source); break; }
        case RecordKind::Capture: o << r.capture.timestamp << "," << int(r.capture.action) << ","
                                    << int(r.capture.reason); break;
        case RecordKind::Backtrace: { const auto& b = r.backtrace;
            o << b.tid << "," << b.correlation << "," << b.frame_count;
            for (uint32_t i = 0; i < b.frame_count; ++i) o << "," << b.frames[i];
            break; }
        case RecordKind::Module: { const auto& m = r.module;
            o << m.base << "," << m.size << "," << m.file_offset << "," << s(m.path) << "," << m.build_id_size;
            for (uint32_t i = 0; i < m.build_id_size; ++i) o << "," << int(m.build_id[i]);
            break; }
        case RecordKind::GraphLaunch: { const auto& g = r.graph_launch;
            o << g.start << "," << g.end << "," << g.device << "," << g.context << "," << g.stream << ","
              << g.correlation << "," << g.graph_id; break; }
        case RecordKind::ExternalCorrelation: { const auto& e = r.external_correlation;
            o << e.external_id << "," << e.correlation << "," << e.external_kind; break; }
        case RecordKind::Status: { const auto& t = r.status;
            o << t.timestamp << "," << t.code << "," << s(t.message) << "," << int(t.component) << ","
              << int(t.level); break; }
        case RecordKind::End: o << r.end.timestamp << "," << r.end.records_written << "," << r.end.records_dropped
                                << "," << r.end.signal; break;
        case RecordKind::Exec: { const auto& e = r.exec;
            o << e.timestamp << "," << e.pid << "," << s(e.path) << "," << s(e.command) << "," << int(e.image) << ","
              << int(e.spawned); break; }
        case RecordKind::Role: { const auto& ro = r.role;
            o << ro.rank << "," << ro.local_rank << "," << ro.world_size << "," << s(ro.variables) << "," << s(ro.job);
            break; }
        case RecordKind::Stack: { const auto& k = r.stack;
            o << k.id << "," << k.frame_count;
            for (uint32_t i = 0; i < k.frame_count; ++i) o << "," << k.frames[i];
            break; }
        case RecordKind::PyFrame: { const auto& f = r.py_frame;
            o << f.id << "," << s(f.file) << "," << s(f.function) << "," << f.line; break; }
        case RecordKind::PyStack: { const auto& k = r.py_stack;
            o << k.id << "," << k.frame_count;
            for (uint32_t i = 0; i < k.frame_count; ++i) o << "," << k.frames[i];
            break; }
        case RecordKind::CallSite: { const auto& c = r.call_site;
            o << c.tid << "," << c.correlation << "," << c.stack << "," << c.py_stack; break; }
        case RecordKind::CpuSample: { const auto& c = r.cpu_sample;
            o << c.timestamp << "," << c.tid << "," << c.ip << "," << c.stack << "," << c.py_stack << "," << c.periods
              << "," << c.period_ns; break; }
        case RecordKind::OsRuntimeCall: { const auto& c = r.osrt_call;
            o << c.start << "," << c.end << "," << c.tid << "," << s(c.name) << "," << c.stack << "," << c.py_stack;
            break; }
        case RecordKind::GpuMetricSet: { const auto& g = r.gpu_metric_set;
            o << g.device << "," << s(g.name) << "," << s(g.chip) << "," << s(g.metrics) << "," << g.interval_ns;
            break; }
        case RecordKind::GpuMetricSample: { const auto& g = r.gpu_metric_sample;
            o << g.start << "," << g.end << "," << g.device << "," << g.value_count;
            for (uint32_t i = 0; i < g.value_count; ++i) o << "," << (std::signbit(g.values[i]) ? "-" : "") << std::abs(g.values[i]);
            break; }
        default: o << "?"; break;
    }
    return o.str();
}

inline std::vector<std::string> describe_all(TraceReader& reader) {
    std::vector<std::string> out;
    Record r;
    while (reader.next(r)) out.push_back(describe_record(r, &reader));
    return out;
}

}  // namespace gprof::testing
