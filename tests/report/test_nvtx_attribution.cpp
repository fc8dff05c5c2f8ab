// The NVTX block (nvprof's "NVTX result") against a brute-force reference: for every finished range, the API calls
// of its thread that start inside it and end by its end, and every GPU op of those calls' correlation ids; GPU ops
// whose id no call has are counted as unmatched. aggregate_run keeps calls and ops compactly and gives them to
// ranges on several threads after the trace is read: the result must equal the reference to the bit, on 1, 2 and 3
// threads, on traces that exercise every path: nested push/pop ranges, start/end ranges overlapping without nesting,
// unfinished and empty ranges, calls that outlive their range, ops written before, just after and far after their
// call, several ops of one call, several calls of one id, ops without a call, durations past 2^32 ns, and
// correlation ids too sparse for a bitmap.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "model/aggregate.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::report;
using namespace gprof::testing;

namespace {

struct Emit {
    uint64_t at;   // when the collector would write it (records are written in this order)
    uint64_t seq;  // ties: creation order
    trace::Record r;
};

// A random run of `calls` API calls on three threads. `corr_step` spaces correlation ids (sparse ids for a large one).
void fill(trace::TraceWriter& w, uint64_t seed, uint64_t calls, uint32_t corr_step) {
    using namespace trace;
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t n) { return rng() % n; };
    StringId api_names[3] = {w.intern("cudaLaunchKernel"), w.intern("cudaMemcpyAsync"), w.intern("cudaStreamSynchronize")};
    StringId kernels[4];
    for (int i = 0; i < 4; ++i) kernels[i] = w.intern(("_Z6kernel" + std::to_string(i) + "v").c_str());
    StringId range_names[4] = {w.intern("step"), w.intern("forward"), w.intern("backward"), w.intern("epoch")};
    StringId domain = w.intern("train");
    std::vector<Emit> out;
    uint64_t seq = 0;
    auto emit = [&](uint64_t at, const Record& r) { out.push_back({at, seq++, r}); };
    uint32_t corr = 1;
    for (uint64_t tid = 1; tid <= 3; ++tid) {
        uint64_t t = 1'000'000'000 + tid * 777;
        struct Open {
            uint64_t start;
            StringId name, dom;
            uint16_t depth;
        };
        std::vector<Open> stack;
        std::vector<Nvtx> start_end;  // open start/end ranges of this thread
        const uint64_t n = calls / 3;
        for (uint64_t i = 0; i < n; ++i) {
            // Ranges: push, pop, or a start/end range opened or closed here.
            uint64_t roll = pick(100);
            if (roll < 8 && stack.size() < 6) {
                stack.push_back({t, range_names[pick(4)], pick(5) == 0 ? domain : StringId(0),
                                 static_cast<uint16_t>(stack.size())});
            } else if (roll < 16 && !stack.empty()) {
                Nvtx r;
                r.tid = r.end_tid = tid;
                r.start = stack.back().start;
                r.end = t;
                r.name = stack.back().name;
                r.domain = stack.back().dom;
                r.depth = stack.back().depth;
                stack.pop_back();
                Record rec;
                rec.kind = RecordKind::Nvtx;
                rec.nvtx = r;
                emit(t + pick(3) * 5000, rec);  // the NVTX drain writes it a little later
            } else if (roll < 18) {
                Nvtx r;
                r.tid = tid;
                r.start = t + pick(3000);  // may start inside a call
                r.name = range_names[pick(4)];
                r.type = NvtxType::StartEnd;
                start_end.push_back(r);
            } else if (roll < 20 && !start_end.empty()) {
                size_t k = pick(start_end.size());
                Nvtx r = start_end[k];
                start_end.erase(start_end.begin() + static_cast<std::ptrdiff_t>(k));
                r.end = t + pick(4000);  // may end inside a call: that call is not the range's
                r.end_tid = tid;
                Record rec;
                rec.kind = RecordKind::Nvtx;
                rec.nvtx = r;
                emit(r.end, rec);
            }
            // One API call, with 0-2 GPU ops of its correlation id.
            ApiCall a;
            a.tid = tid;
            a.start = t + 100;
            a.end = a.start + 500 + pick(4000);
            a.name = api_names[pick(3)];
            a.correlation = corr;
            if (pick(500) == 0 && corr > 10 * corr_step) a.correlation = corr - corr_step * 3;  // an id used twice
            corr += corr_step;
            Record rec;
            rec.kind = RecordKind::ApiCall;
            rec.api = a;
            emit(a.end, rec);
            uint64_t ops = pick(10) < 6 ? 1 : pick(2) * 2;
            for (uint64_t o = 0; o < ops; ++o) {
                Record op;
                uint64_t start = a.end + 1000 + pick(5000);
                uint64_t end = start + 1000 + pick(20000) + (pick(2000) == 0 ? 6'000'000'000ull : 0);
                if (pick(3)) {
                    op.kind = RecordKind::Kernel;
                    op.kernel.start = start;
                    op.kernel.end = end;
                    op.kernel.correlation = a.correlation;
                    op.kernel.name = kernels[pick(4)];
                } else {
                    op.kind = RecordKind::Memcpy;
                    op.memcpy.start = start;
                    op.memcpy.end = end;
                    op.memcpy.correlation = a.correlation;
                    op.memcpy.bytes = 4096;
                    op.memcpy.copy_kind = pick(2) ? MemcpyKind::HtoD : MemcpyKind::DtoH;
                }
                // Where the op lands in the file: just before its call (real CUPTI activity buffers), just
                // after, or much later (a buffer flushed late).
                uint64_t where = pick(10);
                uint64_t at = where < 4 ? a.end - 1 : where < 9 ? a.end + 10 : a.end + 200'000'000 + pick(100'000'000);
                emit(at, op);
            }
            if (pick(300) == 0) {  // an op with no call
                Record op;
                op.kind = RecordKind::Kernel;
                op.kernel.start = a.end + 10;
                op.kernel.end = a.end + 2000;
                op.kernel.correlation = 0x7fff0000u + static_cast<uint32_t>(pick(1000));
                op.kernel.name = kernels[0];
                emit(a.end + 20, op);
            }
            t = a.end + 200 + pick(3000);
        }
        // One range still open at the end (written with end = 0), and an empty one.
        Nvtx open;
        open.tid = tid;
        open.start = t;
        open.name = range_names[0];
        Record rec;
        rec.kind = RecordKind::Nvtx;
        rec.nvtx = open;
        emit(t + 10, rec);
        rec.nvtx.start = rec.nvtx.end = t + 5;
        emit(t + 11, rec);
    }
    std::stable_sort(out.begin(), out.end(), [](const Emit& a, const Emit& b) { return a.at < b.at; });
    for (const Emit& e : out) {
        switch (e.r.kind) {
            case RecordKind::ApiCall: w.add(e.r.api); break;
            case RecordKind::Kernel: w.add(e.r.kernel); break;
            case RecordKind::Memcpy: w.add(e.r.memcpy); break;
            case RecordKind::Nvtx: w.add(e.r.nvtx); break;
            default: break;
        }
    }
}

using Values = std::map<std::string, Distribution>;
struct RefRange {
    Distribution durations;
    Values api, gpu;
};
using RefKey = std::tuple<int64_t, uint64_t, std::string, std::string>;  // pid, tid, domain, name

// The NVTX block by definition, one range at a time; adds to `ranges` and returns the unmatched op count.
uint64_t reference(const std::string& path, std::map<RefKey, RefRange>& ranges) {
    trace::TraceReader reader(path);
    std::vector<trace::Record> records = read_all_records(reader);
    auto name = [&](trace::StringId id) { return std::string(reader.string(id)); };
    std::vector<trace::ApiCall> calls;
    std::vector<std::pair<trace::Record, std::string>> ops;  // op, its row name
    std::map<std::string, uint32_t> row_ids;                   // row names numbered, for speed
    std::vector<std::string> rows;
    auto row = [&](const std::string& n) {
        auto [it, fresh] = row_ids.emplace(n, static_cast<uint32_t>(rows.size()));
        if (fresh) rows.push_back(n);
        return it->second;
    };
    std::vector<trace::Nvtx> nvtx;
    for (const auto& r : records) {
        if (r.kind == trace::RecordKind::ApiCall) calls.push_back(r.api);
        if (r.kind == trace::RecordKind::Kernel) ops.emplace_back(r, name(r.kernel.name));
        if (r.kind == trace::RecordKind::Memcpy) ops.emplace_back(r, memop_row_name(r.memcpy.copy_kind));
        if (r.kind == trace::RecordKind::Nvtx) nvtx.push_back(r.nvtx);
    }
    auto corr_of = [](const trace::Record& r) {
        return r.kind == trace::RecordKind::Kernel ? r.kernel.correlation : r.memcpy.correlation;
    };
    auto dur_of = [](const trace::Record& r) {
        auto s = r.kind == trace::RecordKind::Kernel ? r.kernel.start : r.memcpy.start;
        auto e = r.kind == trace::RecordKind::Kernel ? r.kernel.end : r.memcpy.end;
        return e > s ? e - s : 0;
    };
    std::set<uint32_t> call_ids;
    for (const auto& a : calls) call_ids.insert(a.correlation);
    uint64_t unmatched = 0;
    for (const auto& [op, n] : ops) unmatched += !call_ids.count(corr_of(op));
    std::map<uint64_t, std::vector<trace::ApiCall>> calls_of;  // by thread, by start
    for (const auto& a : calls) calls_of[a.tid].push_back(a);
    for (auto& [tid, v] : calls_of)
        std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.start < y.start; });
    std::multimap<uint32_t, size_t> ops_by_corr;
    for (size_t i = 0; i < ops.size(); ++i) ops_by_corr.emplace(corr_of(ops[i].first), i);
    std::vector<uint32_t> op_row(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) op_row[i] = row(ops[i].second);
    std::map<RefKey, std::pair<std::map<uint32_t, Distribution>, std::map<uint32_t, Distribution>>> by_id;
    for (const auto& r : nvtx) {
        if (r.end == 0 || r.end < r.start) continue;
        RefKey key{reader.header().pid, r.tid, r.domain ? name(r.domain) : "", name(r.name)};
        ranges[key].durations.push(r.end - r.start);
        auto& [api, gpu] = by_id[key];
        const auto& mine = calls_of[r.tid];
        auto from = std::lower_bound(mine.begin(), mine.end(), r.start,
                                     [](const trace::ApiCall& a, trace::Timestamp t) { return a.start < t; });
        for (auto c = from; c != mine.end() && c->start < r.end; ++c) {
            const trace::ApiCall& a = *c;
            if (a.end > r.end) continue;
            api[a.name].push(a.end > a.start ? a.end - a.start : 0);
            auto [lo, hi] = ops_by_corr.equal_range(a.correlation);
            for (auto it = lo; it != hi; ++it) gpu[op_row[it->second]].push(dur_of(ops[it->second].first));
        }
    }
    for (auto& [key, parts] : by_id) {
        for (auto& [id, d] : parts.first) ranges[key].api[name(id)].merge(std::move(d));
        for (auto& [id, d] : parts.second) ranges[key].gpu[rows[id]].merge(std::move(d));
    }
    return unmatched;
}

void require_same(const Stats& a, const Stats& b) {
    CHECK(a.count == b.count);
    CHECK(a.total == b.total);
    CHECK(a.min == b.min);
    CHECK(a.max == b.max);
    CHECK(a.mean == b.mean);  // exact equality: the bits, not a tolerance
    CHECK(a.median == b.median);
    CHECK(a.stddev == b.stddev);
}

void require_same(const Values& a, const std::map<std::string, Distribution>& b) {
    REQUIRE(a.size() == b.size());
    for (const auto& [k, v] : a) {
        INFO(k);
        REQUIRE(b.count(k));
        require_same(v.stats(), b.at(k).stats());
    }
}

}  // namespace

TEST_CASE("NVTX block: calls and GPU ops given to ranges exactly as one range at a time would", "[model][aggregate][nvtx]") {
    TempDir dir;
    // Dense correlation ids (a bitmap), spaced so that far-away ops miss the table of recent calls; and sparse ids.
    write_trace(dir.file("app.1.gprof"), [](trace::TraceWriter& w) { fill(w, 1, 90'000, 3); }, true, test_header(1),
                16 * 1024);
    write_trace(dir.file("app.2.gprof"), [](trace::TraceWriter& w) { fill(w, 2, 9'000, 100'000); }, true,
                test_header(2), 16 * 1024);
    std::vector<std::filesystem::path> traces = {dir.file("app.1.gprof"), dir.file("app.2.gprof")};

    std::map<RefKey, RefRange> expected;
    uint64_t unmatched = 0;
    for (const auto& t : traces) unmatched += reference(t.string(), expected);
    REQUIRE(expected.size() > 20);
    REQUIRE(unmatched > 0);
    size_t with_gpu = 0, past_exact = 0;
    for (const auto& [k, r] : expected) {
        with_gpu += !r.gpu.empty();
        for (const auto& [n, d] : r.api) past_exact += !d.exact();
    }
    REQUIRE(with_gpu > 10);
    REQUIRE(past_exact > 0);  // some (range, call) rows are histograms

    for (unsigned threads : {1u, 2u, 3u}) {
        INFO(threads << " threads");
        AggregateOptions o;
        o.threads = threads;
        Aggregate agg = aggregate_run(traces, o);
        CHECK(agg.unmatched_gpu_ops == unmatched);
        REQUIRE(agg.nvtx_ranges.size() == expected.size());
        for (const auto& r : agg.nvtx_ranges) {
            RefKey key{r.pid, r.tid, r.domain, r.name};
            INFO(r.pid << " " << r.tid << " " << r.domain << ":" << r.name);
            REQUIRE(expected.count(key));
            const RefRange& e = expected.at(key);
            require_same(e.durations.stats(), r.durations.stats());
            require_same(e.api, r.api);
            require_same(e.gpu, r.gpu);
        }
    }
}
