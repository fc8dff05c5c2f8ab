// Builds small traces with known answers through the project's own writer, for the diff and analysis tests
// and the false-alarm benchmark. Times are ns on the trace clock, relative to kT0.
#pragma once

#include <cstdint>
#include <string>

#include "trace_fixture.h"

namespace gprof::testing {

inline constexpr uint64_t kT0 = 2'000'000'000;  // after the test header's clock reference

class Synth {
public:
    explicit Synth(trace::TraceWriter& w, uint64_t tid = 100) : w_(w), tid_(tid) {
        trace::Device d;
        d.id = 0;
        d.name = w_.intern("Test GPU");
        d.sm_count = 80;
        w_.add(d);
        trace::Thread t;
        t.tid = tid;
        t.name = w_.intern("main");
        w_.add(t);
    }

    // A host API call [s, e) on `tid` (the default thread when 0); returns its correlation id.
    uint32_t api(const char* name, uint64_t s, uint64_t e, uint64_t tid = 0) {
        trace::ApiCall a;
        a.start = kT0 + s;
        a.end = kT0 + e;
        a.tid = tid ? tid : tid_;
        a.correlation = ++corr_;
        a.name = w_.intern(name);
        w_.add(a);
        return a.correlation;
    }

    // A kernel [s, e) launched by a cudaLaunchKernel call [ls, le) (none when ls == le == 0).
    void kernel(const char* name, uint64_t s, uint64_t e, uint32_t stream = 7, int grid = 1024, int block = 256,
                uint64_t ls = 0, uint64_t le = 0, uint32_t device = 0) {
        uint32_t corr = (ls || le) ? api("cudaLaunchKernel", ls, le) : ++corr_;
        trace::Kernel k;
        k.start = kT0 + s;
        k.end = kT0 + e;
        k.device = device;
        k.stream = stream;
        k.correlation = corr;
        k.grid_x = grid;
        k.grid_y = k.grid_z = 1;
        k.block_x = block;
        k.block_y = k.block_z = 1;
        k.name = w_.intern(name);
        w_.add(k);
    }

    void memcpy(trace::MemcpyKind kind, uint64_t bytes, uint64_t s, uint64_t e, bool async = true,
                trace::MemoryKind host = trace::MemoryKind::Pinned, uint32_t stream = 7, uint64_t ls = 0,
                uint64_t le = 0) {
        uint32_t corr = (ls || le) ? api(async ? "cudaMemcpyAsync" : "cudaMemcpy", ls, le) : ++corr_;
        trace::Memcpy m;
        m.start = kT0 + s;
        m.end = kT0 + e;
        m.bytes = bytes;
        m.stream = stream;
        m.correlation = corr;
        m.copy_kind = kind;
        m.src_kind = kind == trace::MemcpyKind::HtoD ? host : trace::MemoryKind::Device;
        m.dst_kind = kind == trace::MemcpyKind::DtoH ? host : trace::MemoryKind::Device;
        m.async = async ? 1 : 0;
        w_.add(m);
    }

    void range(const char* name, uint64_t s, uint64_t e, uint16_t depth = 0, uint64_t tid = 0) {
        trace::Nvtx r;
        r.start = kT0 + s;
        r.end = kT0 + e;
        r.tid = r.end_tid = tid ? tid : tid_;
        r.name = w_.intern(name);
        r.depth = depth;
        w_.add(r);
    }

    void dropped(uint64_t count, trace::DropSource source = trace::DropSource::CuptiBuffer) {
        trace::Dropped d;
        d.timestamp = kT0;
        d.count = count;
        d.source = source;
        w_.add(d);
    }

    // A push with no pop by the end, as the collector writes it: the range with end 0, and counted in a Dropped
    // record of source NvtxOverflow (collector/nvtx/recorder.cpp).
    void range_never_ended(const char* name, uint64_t s, uint16_t depth = 0) {
        trace::Nvtx r;
        r.start = kT0 + s;
        r.end = 0;
        r.tid = r.end_tid = tid_;
        r.name = w_.intern(name);
        r.depth = depth;
        w_.add(r);
        dropped(1, trace::DropSource::NvtxOverflow);
    }

    trace::TraceWriter& writer() { return w_; }

private:
    trace::TraceWriter& w_;
    uint64_t tid_;
    uint32_t corr_ = 0;
};

// Writes <dir>/app.<pid>.gprof with `fill`, creating dir.
inline std::string write_run(const std::filesystem::path& dir, const std::function<void(Synth&)>& fill,
                             int64_t pid = 4242, bool finish = true) {
    std::filesystem::create_directories(dir);
    std::string path = (dir / ("app." + std::to_string(pid) + ".gprof")).string();
    write_trace(
        path,
        [&](trace::TraceWriter& w) {
            Synth s(w);
            fill(s);
        },
        finish, test_header(pid));
    return path;
}

}  // namespace gprof::testing
