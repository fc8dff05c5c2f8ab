// The run model: loading, names, correlation lookups, statistics, symbolisation.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <link.h>

#include <fstream>

#include "model/aggregate.h"
#include "model/model.h"
#include "model/symbolize.h"
#include "report_fixture.h"

using namespace gprof::report;
using namespace gprof::testing;

TEST_CASE("model: loads every record kind with names and lookups", "[model]") {
    TempDir dir;
    write_small_run(dir);
    Run run = load_run({dir.path()});
    REQUIRE(run.processes.size() == 1);
    const ProcessTrace& p = run.processes[0];
    CHECK(p.pid() == 4242);
    CHECK(p.kernels.size() == 5);
    CHECK(p.memcpys.size() == 3);
    CHECK(p.memsets.size() == 3);
    CHECK(p.api_calls.size() == 11);
    CHECK(p.devices.size() == 2);
    CHECK(p.thread_name(100) == "main");
    CHECK(p.dropped_total() == 5);
    CHECK(p.end.has_value());
    const auto* api = p.api_for_correlation(11);
    REQUIRE(api);
    CHECK(p.str(api->name) == "cudaMemcpyAsync");
    auto ops = p.gpu_ops_for_correlation(10);
    REQUIRE(ops.size() == 1);
    CHECK(ops[0].kind == GpuOpKind::Kernel);
    CHECK(p.gpu_ops_for_correlation(12345).empty());
    CHECK(p.api_for_correlation(999) == nullptr);
    REQUIRE(p.backtrace_for_correlation(10));
    CHECK(p.stack_frames(p.backtrace_for_correlation(10)->stack).size() == 2);
    CHECK(p.to_run_ns(kT0 + 1000) == 1000);
}

TEST_CASE("model: unreadable traces become warnings", "[model]") {
    TempDir dir;
    write_small_run(dir);
    std::ofstream(dir.file("bad.gprof")) << "garbage";
    Run run = load_run({dir.path()});
    CHECK(run.processes.size() == 1);
    REQUIRE(run.warnings.size() == 1);
    CHECK(run.warnings[0].find("bad.gprof") != std::string::npos);
    CHECK_THROWS(load_run({dir.path() / "missing"}));
}

TEST_CASE("stats: median and sample stddev", "[model]") {
    std::vector<uint64_t> v = {5, 1, 3, 2, 4};
    Stats s = compute_stats(v);
    CHECK(s.count == 5);
    CHECK(s.total == 15);
    CHECK(s.median == 3);
    CHECK(s.stddev == Approx(1.5811388));
    std::vector<uint64_t> even = {1, 2, 3, 10};
    CHECK(compute_stats(even).median == 2.5);
    std::vector<uint64_t> one = {7};
    CHECK(compute_stats(one).stddev == 0);
}

namespace {
__attribute__((noinline)) int gprof_test_symbol_target(int x) { return x * 3 + 1; }

int find_main(struct dl_phdr_info* info, size_t, void* data) {
    if (info->dlpi_name && info->dlpi_name[0]) return 0;  // the main program has an empty name
    uint64_t min_vaddr = UINT64_MAX, max_end = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            min_vaddr = std::min<uint64_t>(min_vaddr, info->dlpi_phdr[i].p_vaddr & ~uint64_t(0xfff));
            max_end = std::max<uint64_t>(max_end, info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz);
        }
    auto* out = static_cast<std::pair<uint64_t, uint64_t>*>(data);
    out->first = info->dlpi_addr + min_vaddr;
    out->second = max_end - min_vaddr;
    return 1;
}
}  // namespace

TEST_CASE("symbolizer: resolves a function of a real ELF, falls back to module+offset", "[model][symbolize]") {
    std::pair<uint64_t, uint64_t> self{0, 0};
    dl_iterate_phdr(find_main, &self);
    REQUIRE(self.first);
    TempDir dir;
    std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    uint64_t target = reinterpret_cast<uint64_t>(&gprof_test_symbol_target) + 4;
    CHECK(gprof_test_symbol_target(1) == 4);
    write_trace(dir.file("s.gprof"), [&](gprof::trace::TraceWriter& w) {
        gprof::trace::Module m;
        m.base = self.first;
        m.size = self.second;
        m.path = w.intern(exe.c_str());
        w.add(m);
        gprof::trace::Module gone;
        gone.base = 0x1000;
        gone.size = 0x1000;
        gone.path = w.intern("/nonexistent/libgone.so");
        w.add(gone);
    });
    Run run = load_run({dir.file("s.gprof")});
    Symbolizer sym(run.processes.at(0));
    std::string f = sym.frame(target);
    INFO(f);
    CHECK(f.find("gprof_test_symbol_target") != std::string::npos);
    CHECK(sym.frame(0x1010) == "libgone.so+0x10");
    CHECK(sym.frame(0x10) == "0x10");
}

// Issue 33: LoadOptions::keep_nvtx_named leaves out the NVTX records of the names it refuses, asked once per name,
// counts them and keeps their span in the process's first/last times.
TEST_CASE("model: NVTX records left out by name still count in the span", "[model]") {
    TempDir dir;
    write_trace(dir.file("app.4242.gprof"), [](gprof::trace::TraceWriter& w) {
        auto range = [&](const char* name, uint64_t s, uint64_t e) {
            gprof::trace::Nvtx r;
            r.start = 2'000'000'000 + s;
            r.end = e ? 2'000'000'000 + e : 0;
            r.tid = r.end_tid = 7;
            r.name = w.intern(name);
            w.add(r);
        };
        range("op", 0, 50);         // the earliest record
        range("step", 100, 900);
        range("op", 200, 300);
        range("op", 950, 0);         // never ended: its start is the latest time
        range("step", 400, 500);
    }, true, test_header(4242));
    std::map<std::string, int> asked;
    LoadOptions lo;
    lo.keep_nvtx_named = [&](std::string_view name) {
        ++asked[std::string(name)];
        return name == "step";
    };
    Run reduced = load_run({dir.path()}, lo);
    Run whole = load_run({dir.path()});
    REQUIRE(reduced.processes.size() == 1);
    const ProcessTrace& p = reduced.processes[0];
    CHECK(asked == std::map<std::string, int>{{"op", 1}, {"step", 1}});
    REQUIRE(p.nvtx.size() == 2);
    CHECK(p.str(p.nvtx[0].name) == "step");
    CHECK(p.nvtx_left_out == 3);
    CHECK(p.nvtx_left_out_first == 2'000'000'000);
    CHECK(p.nvtx_left_out_last == 2'000'000'950);
    CHECK(p.first_ns == whole.processes[0].first_ns);
    CHECK(p.last_ns == whole.processes[0].last_ns);
    CHECK(p.first_ns == 2'000'000'000);
    CHECK(p.last_ns == 2'000'000'950);
    CHECK(p.filtered_out == whole.processes[0].filtered_out);  // not a selection: nothing filtered out
}

// Issue 33: the correlation indexes are built by merging each kind's run (sorted already, or sorted alone) instead of
// one stable sort of them all; the order of a correlation's ops must stay the one stable sort gave: by kind in the
// order kernels, memcpys, memsets, syncs, graph launches, then in file order.
TEST_CASE("model: a correlation's ops in kind order, then file order, from unsorted runs", "[model]") {
    ProcessTrace p;
    auto kernel = [&](uint32_t corr) {
        gprof::trace::Kernel k;
        k.correlation = corr;
        p.kernels.push_back(k);
    };
    auto copy = [&](uint32_t corr) {
        gprof::trace::Memcpy m;
        m.correlation = corr;
        p.memcpys.push_back(m);
    };
    kernel(5), kernel(3), kernel(3), kernel(1);  // not in correlation order
    copy(3), copy(1), copy(7);
    gprof::trace::Memset ms;
    ms.correlation = 3;
    p.memsets.push_back(ms);
    gprof::trace::GraphLaunch g;
    g.correlation = 1;
    p.graph_launches.push_back(g);
    p.build_indexes();
    auto ops = [&](uint32_t corr) {
        std::vector<std::pair<int, uint32_t>> out;
        for (const GpuOpRef& op : p.gpu_ops_for_correlation(corr)) out.emplace_back(static_cast<int>(op.kind), op.index);
        return out;
    };
    using V = std::vector<std::pair<int, uint32_t>>;
    CHECK(ops(3) == V{{0, 1}, {0, 2}, {1, 0}, {2, 0}});
    CHECK(ops(1) == V{{0, 3}, {1, 1}, {4, 0}});
    CHECK(ops(5) == V{{0, 0}});
    CHECK(ops(7) == V{{1, 2}});
    CHECK(ops(2).empty());
}
