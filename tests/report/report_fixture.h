// A small, fully deterministic run for the report tests: every record kind the reports show, plus the awkward
// cases (a GPU op without an API match, overlapping kernels on one stream, crossing start/end ranges, a range
// that never ended, dropped records, a module and a backtrace).
#pragma once

#include <cstring>
#include <string>

#include "trace_fixture.h"

namespace gprof::testing {

// Trace clock: the header's trace_ns is 1e9, so run-axis time = ts - kT0.
inline constexpr uint64_t kT0 = 1'000'000'000;

inline void fill_small_run(trace::TraceWriter& w) {
    using namespace gprof::trace;
    w.add(Thread{100, w.intern("main")});
    w.add(Thread{101, w.intern("loader")});
    Device d0;
    d0.id = 0;
    d0.name = w.intern("Test GPU");
    d0.cc_major = 9;
    d0.cc_minor = 0;
    d0.sm_count = 132;
    d0.global_memory_bytes = 80ull << 30;
    w.add(d0);
    Device d1 = d0;
    d1.id = 1;
    w.add(d1);
    Status st;
    st.timestamp = kT0 + 10;
    st.message = w.intern("CUPTI activity API enabled");
    st.component = Component::Cupti;
    st.level = StatusLevel::Info;
    w.add(st);

    const StringId launch = w.intern("cudaLaunchKernel");
    const StringId memcpy_api = w.intern("cudaMemcpyAsync");
    const StringId memset_api = w.intern("cudaMemsetAsync");
    const StringId kernel = w.intern("_Z6kernelPfi");
    const StringId other_kernel = w.intern("_Z12other_kernelv");
    uint32_t corr = 10;
    for (int i = 0; i < 3; ++i) {
        uint64_t base = kT0 + 1000 + i * 100'000;
        ApiCall a;
        a.tid = 100;
        a.start = base + 1000;
        a.end = base + 6000 + i * 1000;
        a.correlation = corr;
        a.name = launch;
        a.cbid = 211;
        w.add(a);
        Kernel k;
        k.start = base + 8000;
        k.end = base + 28000 + i * 2000;
        k.device = 0;
        k.context = 1;
        k.stream = 7;
        k.correlation = corr;
        k.grid_x = 256; k.grid_y = 1; k.grid_z = 1;
        k.block_x = 128; k.block_y = 1; k.block_z = 1;
        k.registers_per_thread = 32;
        k.static_shared_bytes = 1024;
        k.dynamic_shared_bytes = 2048;
        k.name = kernel;
        w.add(k);
        ++corr;

        a.start = base + 30000;
        a.end = base + 34000;
        a.correlation = corr;
        a.name = memcpy_api;
        a.cbid = 41;
        w.add(a);
        Memcpy m;
        m.start = base + 35000;
        m.end = base + 45000;
        m.bytes = 1'000'000;
        m.device = 0;
        m.peer_device = 0;
        m.context = 1;
        m.stream = 7;
        m.correlation = corr;
        m.copy_kind = i == 2 ? MemcpyKind::DtoH : MemcpyKind::HtoD;
        m.src_kind = i == 2 ? MemoryKind::Device : MemoryKind::Pageable;
        m.dst_kind = i == 2 ? MemoryKind::Pageable : MemoryKind::Device;
        w.add(m);
        ++corr;

        a.start = base + 50000;
        a.end = base + 52000;
        a.correlation = corr;
        a.name = memset_api;
        a.cbid = 51;
        w.add(a);
        Memset s;
        s.start = base + 53000;
        s.end = base + 54000;
        s.bytes = 4096;
        s.device = 0;
        s.context = 1;
        s.stream = 7;
        s.correlation = corr;
        s.memory_kind = MemoryKind::Device;
        w.add(s);
        ++corr;

        Nvtx n;
        n.tid = 100;
        n.end_tid = 100;
        n.start = base;
        n.end = base + 90000;
        n.name = w.intern("step");
        n.depth = 0;
        w.add(n);
        n.start = base + 500;
        n.end = base + 40000;
        n.name = w.intern("forward");
        n.depth = 1;
        w.add(n);
    }
    // A kernel with no launching API call, overlapping the second step's kernel on stream 7.
    Kernel orphan;
    orphan.start = kT0 + 1000 + 100'000 + 20000;
    orphan.end = orphan.start + 30000;
    orphan.device = 0;
    orphan.context = 1;
    orphan.stream = 7;
    orphan.correlation = 999;
    orphan.grid_x = orphan.grid_y = orphan.grid_z = 1;
    orphan.block_x = orphan.block_y = orphan.block_z = 32;
    orphan.name = other_kernel;
    w.add(orphan);
    // A kernel on device 1, launched from the loader thread.
    ApiCall a;
    a.tid = 101;
    a.start = kT0 + 400'000;
    a.end = kT0 + 405'000;
    a.correlation = 500;
    a.name = launch;
    a.cbid = 211;
    w.add(a);
    Kernel k1 = orphan;
    k1.device = 1;
    k1.stream = 3;
    k1.correlation = 500;
    k1.start = kT0 + 406'000;
    k1.end = kT0 + 416'000;
    w.add(k1);
    // A device-wide synchronisation.
    a.tid = 100;
    a.start = kT0 + 420'000;
    a.end = kT0 + 440'000;
    a.correlation = 501;
    a.name = w.intern("cudaDeviceSynchronize");
    a.cbid = 165;
    w.add(a);
    Sync sy;
    sy.start = kT0 + 420'500;
    sy.end = kT0 + 439'500;
    sy.context = 1;
    sy.stream = 0xFFFFFFFFu;
    sy.correlation = 501;
    sy.type = SyncType::ContextSynchronize;
    w.add(sy);
    // Start/end ranges on the loader thread that cross each other (cannot nest on one track).
    Nvtx io;
    io.type = NvtxType::StartEnd;
    io.tid = io.end_tid = 101;
    io.start = kT0 + 300'000;
    io.end = kT0 + 350'000;
    io.name = w.intern("load");
    io.domain = w.intern("data");
    w.add(io);
    io.start = kT0 + 320'000;
    io.end = kT0 + 380'000;
    io.name = w.intern("decode");
    w.add(io);
    // A mark and a range that never ended.
    Nvtx mark;
    mark.type = NvtxType::Mark;
    mark.tid = mark.end_tid = 100;
    mark.start = mark.end = kT0 + 450'000;
    mark.name = w.intern("checkpoint");
    w.add(mark);
    Nvtx open;
    open.tid = 100;
    open.start = kT0 + 460'000;
    open.end = 0;
    open.name = w.intern("epilogue");
    w.add(open);
    // Device memory: 1 MB + 2 MB allocated, 1 MB released.
    Memory mem;
    mem.timestamp = kT0 + 900;
    mem.address = 0x7f0000000000;
    mem.bytes = 1'000'000;
    mem.device = 0;
    mem.op = MemoryOp::Allocation;
    mem.memory_kind = MemoryKind::Device;
    w.add(mem);
    mem.timestamp = kT0 + 950;
    mem.bytes = 2'000'000;
    w.add(mem);
    mem.timestamp = kT0 + 445'000;
    mem.bytes = 1'000'000;
    mem.op = MemoryOp::Release;
    w.add(mem);
    // Records the collector lost.
    Dropped dr;
    dr.timestamp = kT0 + 470'000;
    dr.count = 5;
    dr.source = DropSource::CuptiBuffer;
    w.add(dr);
    // A module that does not exist on this machine, and a backtrace into it.
    Module mod;
    mod.base = 0x400000;
    mod.size = 0x10000;
    mod.path = w.intern("/nonexistent/libapp.so");
    w.add(mod);
    Backtrace bt;
    bt.tid = 100;
    bt.correlation = 10;
    bt.frame_count = 2;
    bt.frames[0] = 0x401234;
    bt.frames[1] = 0x7fff0000;
    w.add(bt);
}

inline std::string write_small_run(const TempDir& dir, int64_t pid = 4242) {
    std::string path = dir.file("app." + std::to_string(pid) + ".gprof");
    write_trace(path, fill_small_run, true, test_header(pid));
    return path;
}

}  // namespace gprof::testing
