// aggregate_run decodes chunks on several threads and folds them in file order: the Aggregate must be the same,
// to the bit, for any number of threads (keys in the same order, every Stats field equal, the same NVTX block,
// warnings and damage figures), on a trace of many chunks with keys past the exact limit, names defined mid-trace,
// several threads, nested ranges, graph launches, memory records and a damaged chunk.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "address_space.h"
#include "model/aggregate.h"
#include "reports/reports.h"
#include "record_builders.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::report;
using namespace gprof::testing;

namespace {

void fill(trace::TraceWriter& w) {
    using namespace trace;
    w.add(Thread{1, w.intern("main")});
    w.add(Thread{2, w.intern("loader")});
    Device d;
    d.name = w.intern("Test GPU");
    d.sm_count = 132;
    w.add(d);
    StringId launch = w.intern("cudaLaunchKernel"), copy = w.intern("cudaMemcpyAsync"), step = w.intern("step"),
             epoch = w.intern("epoch"), domain = w.intern("train");
    uint64_t t = 1'000'000'000;
    uint32_t corr = 1;
    std::vector<StringId> kernels;
    const uint64_t iterations = 80'000;  // the first kernel name runs more than Distribution::kExactLimit times
    for (uint64_t i = 0; i < iterations; ++i) {
        if (i % 4000 == 0) kernels.push_back(w.intern(("_Z6kernelILi" + std::to_string(i / 4000) + "EEvPf").c_str()));
        uint64_t tid = i % 5 == 4 ? 2 : 1;
        w.add(api_call(tid, t, t + 3000 + (i * 7919) % 900, corr, launch));
        Kernel k = kernel_op(t + 4000,
                             t + 9000 + (i * 104729) % 7000 + (i % 1000 == 0 ? 5'000'000'000ull : 0),  // a few > 2^32 ns
                             corr++, i % 3 ? kernels[0] : kernels[(i / 7) % kernels.size()]);
        k.graph_id = i % 997 == 0 ? 9 : 0;
        w.add(k);
        if (i % 2) {
            w.add(api_call(tid, t + 10000, t + 12000 + i % 300, corr, copy));
            w.add(memcpy_op(t + 15000, t + 17000 + (i * 31) % 500, 4096 * (1 + i % 64), corr++,
                            i % 4 == 1 ? MemcpyKind::HtoD : MemcpyKind::DtoH));
        }
        if (i % 50 == 0) {
            Memset s;
            s.start = t + 18000;
            s.end = t + 18500;
            s.bytes = 1 << 20;
            s.correlation = corr++;
            w.add(s);
            Memory mem;
            mem.timestamp = t + 100;
            mem.bytes = 1 << 20;
            mem.address = 0x1000 + i;
            w.add(mem);
        }
        if (i % 16 == 15) {
            Nvtx n = nvtx_range(1, t - 15 * 20000, t + 20000, step);
            n.domain = i % 32 == 31 ? domain : 0;
            w.add(n);
        }
        if (i % 1600 == 1599) {
            w.add(nvtx_range(1, t - 1599 * 20000, t + 20000, epoch));
            GraphLaunch g;
            g.start = t + 1000;
            g.end = t + 30000;
            g.graph_id = 4;
            g.correlation = corr++;
            w.add(g);
        }
        t += 20000;
    }
}

std::string fingerprint(const Aggregate& agg) {
    std::ostringstream out;
    print_summary_text(agg, true, true, 0, out);
    out << summary_header_json(agg).dump() << '\n';
    auto stats = [&](const char* what, const Stats& s) {
        out << what << ' ' << s.count << ' ' << s.total << ' ' << s.min << ' ' << s.max << ' ';
        out.write(reinterpret_cast<const char*>(&s.mean), sizeof s.mean);  // the bits, not a rounding of them
        out.write(reinterpret_cast<const char*>(&s.median), sizeof s.median);
        out.write(reinterpret_cast<const char*>(&s.stddev), sizeof s.stddev);
        out << '\n';
    };
    for (const auto& k : agg.keys) {
        out << static_cast<int>(k.category) << ' ' << k.name << ' ' << k.memop << ' ' << k.nvtx_style << '\n';
        stats("time", k.time_stats);
        stats("size", k.size_stats);
    }
    for (const auto& r : agg.nvtx_ranges) {
        out << r.pid << ' ' << r.tid << ' ' << r.domain << ' ' << r.name << '\n';
        stats("range", r.durations.stats());
        for (const auto& [name, d] : r.api) stats(name.c_str(), d.stats());
        for (const auto& [name, d] : r.gpu) stats(name.c_str(), d.stats());
    }
    for (const auto& w : agg.warnings) out << w << '\n';
    out << agg.records << ' ' << agg.unmatched_gpu_ops << ' ' << agg.hidden_driver_calls << '\n';
    return out.str();
}

}  // namespace

TEST_CASE("aggregate: the same result, to the bit, on one, two or three threads", "[model][aggregate]") {
    TempDir dir;
    write_trace(dir.file("app.1.gprof"), fill, true, test_header(1), 16 * 1024);
    // A second process whose trace has a damaged chunk in the middle (a flipped payload byte: CRC mismatch).
    std::string damaged = dir.file("app.2.gprof");
    write_trace(damaged, fill, true, test_header(2), 16 * 1024);
    {
        std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(damaged) / 2));
        char c = 0;
        f.read(&c, 1);
        f.seekp(-1, std::ios::cur);
        c = static_cast<char>(c ^ 0x5A);
        f.write(&c, 1);
    }
    std::vector<std::filesystem::path> traces = {dir.file("app.1.gprof"), damaged};

    AggregateOptions one;
    one.threads = 1;
    Aggregate a1 = aggregate_run(traces, one);
    REQUIRE(a1.processes.size() == 2);
    REQUIRE(a1.damaged_traces() == 1);
    const KeyData* busiest = a1.of(KeyCategory::Kernel).front();
    REQUIRE(busiest->time_stats.count > Distribution::kExactLimit);  // the histogram's merge is exercised
    REQUIRE_FALSE(a1.nvtx_ranges.empty());
    std::string expected = fingerprint(a1);
    for (unsigned threads : {2u, 3u}) {
        INFO(threads << " threads");
        AggregateOptions o;
        o.threads = threads;
        CHECK(fingerprint(aggregate_run(traces, o)) == expected);
    }
    // And with a filter (the time range and device filters decode on every thread).
    AggregateOptions f1, f2;
    f1.threads = 1;
    f2.threads = 2;
    f1.filter.time_begin = f2.filter.time_begin = 200'000'000;
    Aggregate filtered = aggregate_run(traces, f1);
    CHECK(filtered.records < a1.records);
    CHECK(fingerprint(aggregate_run(traces, f2)) == fingerprint(filtered));
}

TEST_CASE("aggregate: a trace whose calls come from very many threads is read in bounded memory", "[model][aggregate]") {
    // Every call on a thread of its own (a crafted trace, or a huge thread pool): room reserved per thread and
    // batch once took 8 GB for 2 x 10^6 such calls. The address space may grow by 1 GiB at most here.
    TempDir dir;
    const std::string path = dir.file("app.1.gprof");
    write_trace(path, [](trace::TraceWriter& w) {
        auto launch = w.intern("cudaLaunchKernel"), step = w.intern("step");
        uint64_t t = 1'000'000'000;
        for (uint32_t i = 0; i < 300'000; ++i) {
            w.add(api_call(1000 + i, t, t + 500, i + 1, launch));
            if (i % 64 == 0) w.add(nvtx_range(1000 + i, t, t + 1000, step));
            t += 1000;
        }
    });
    cap_address_space(1ull << 30);
    AggregateOptions o;
    o.threads = 2;
    Aggregate agg = aggregate_run({path}, o);
    CHECK(agg.records >= 300'000);
    CHECK(agg.damaged_traces() == 0);
}
