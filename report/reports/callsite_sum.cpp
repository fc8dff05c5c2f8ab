// cuda_callsite_sum: the program's call sites of CUDA API calls (model/resolved_call_sites.h), with what each launched and
// waited for: API calls and their time, kernels and their GPU time, host time blocked in synchronisation, memcpy
// count, bytes and time. Named in nsys's <domain>_<subject>_sum pattern so it sits beside cuda_api_sum, whose rows
// it splits by call site (nsys itself only shows call stacks in its GUI; torch.profiler groups by stack with
// group_by_stack_n).
#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "model/resolved_call_sites.h"
#include "reports/reports.h"

namespace gprof::report {

namespace {

struct SiteTotals {
    std::string site, function;
    uint64_t calls = 0, kernels = 0, syncs = 0, copies = 0, copy_bytes = 0;
    int64_t api_ns = 0, kernel_ns = 0, sync_ns = 0, copy_ns = 0;
    std::map<std::pair<int64_t, std::pair<uint32_t, uint32_t>>, bool> stacks;  // (pid, (stack, py_stack)) seen
    nlohmann::json stack;  // the full stack of the first call seen here
};

int64_t span(uint64_t start, uint64_t end) { return end > start ? static_cast<int64_t>(end - start) : 0; }

nlohmann::json frames_json(const ResolvedStack& r) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& f : r.frames) {
        nlohmann::json o = {{"function", f.function}, {"file", f.file}, {"line", f.line}, {"module", f.module},
                            {"location", f.location()}, {"inlined", f.inlined}, {"python", f.python}};
        a.push_back(std::move(o));
    }
    return a;
}

struct Built {
    Table table;
    std::vector<nlohmann::json> stacks;  // by row
};

Built build(const Run& run) {
    Built b;
    Table& t = b.table;
    t.name = "cuda_callsite_sum";
    t.columns = {{"site", "Call Site", ColumnKind::Text},
                 {"function", "Function", ColumnKind::Text},
                 {"api_calls", "API Calls", ColumnKind::Count},
                 {"api_time_ns", "API Time ({unit})", ColumnKind::TimeNs},
                 {"kernels", "Kernels", ColumnKind::Count},
                 {"kernel_time_ns", "Kernel Time ({unit})", ColumnKind::TimeNs},
                 {"sync_calls", "Syncs", ColumnKind::Count},
                 {"sync_time_ns", "Sync Time ({unit})", ColumnKind::TimeNs},
                 {"memcpy_count", "Memcpys", ColumnKind::Count},
                 {"memcpy_bytes", "Memcpy (MB)", ColumnKind::BytesMB},
                 {"memcpy_time_ns", "Memcpy Time ({unit})", ColumnKind::TimeNs},
                 {"stacks", "Stacks", ColumnKind::Count}};
    std::map<std::pair<std::string, std::string>, SiteTotals> sites;
    uint64_t without = 0, calls_total = 0;
    for (const auto& p : run.processes) {
        if (p.backtraces.empty()) {
            calls_total += p.api_calls.size();
            without += p.api_calls.size();
            continue;
        }
        CallSites cs(p);
        for (const auto& a : p.api_calls) {
            ++calls_total;
            const BacktraceFrames* bt = p.backtrace_for_correlation(a.correlation);
            const ResolvedStack* r = bt ? &cs.of(*bt) : nullptr;
            if (!r || r->frames.empty()) {
                ++without;
                continue;
            }
            SiteTotals& s = sites[{r->site, r->function}];
            if (s.calls == 0) {
                s.site = r->site;
                s.function = r->function;
                s.stack = frames_json(*r);
            }
            s.stacks[{p.pid(), {bt->stack, bt->py_stack}}] = true;
            ++s.calls;
            int64_t api_ns = span(a.start, a.end);
            s.api_ns += api_ns;
            bool sync = std::string_view(p.str(a.name)).find("Synchronize") != std::string_view::npos;
            for (const GpuOpRef& op : p.gpu_ops_for_correlation(a.correlation)) {
                switch (op.kind) {
                    case GpuOpKind::Kernel: {
                        const auto& k = p.kernels[op.index];
                        ++s.kernels;
                        s.kernel_ns += span(k.start, k.end);
                        break;
                    }
                    case GpuOpKind::Memcpy: {
                        const auto& m = p.memcpys[op.index];
                        ++s.copies;
                        s.copy_bytes += m.bytes;
                        s.copy_ns += span(m.start, m.end);
                        break;
                    }
                    case GpuOpKind::Sync: sync = true; break;
                    default: break;
                }
            }
            if (sync) {
                ++s.syncs;
                s.sync_ns += api_ns;  // the host time blocked in the call
            }
        }
    }
    std::vector<SiteTotals*> order;
    for (auto& [k, v] : sites) order.push_back(&v);
    std::stable_sort(order.begin(), order.end(), [](const SiteTotals* x, const SiteTotals* y) {
        return std::make_tuple(-x->kernel_ns, -x->sync_ns, -static_cast<int64_t>(x->copy_bytes), -x->api_ns) <
               std::make_tuple(-y->kernel_ns, -y->sync_ns, -static_cast<int64_t>(y->copy_bytes), -y->api_ns);
    });
    for (SiteTotals* s : order) {
        t.rows.push_back({s->site, s->function, int64_t(s->calls), s->api_ns, int64_t(s->kernels), s->kernel_ns,
                          int64_t(s->syncs), s->sync_ns, int64_t(s->copies), int64_t(s->copy_bytes), s->copy_ns,
                          int64_t(s->stacks.size())});
        b.stacks.push_back(std::move(s->stack));
    }
    t.notes.push_back("sorted by kernel time, then sync time, then memcpy bytes; a site is the program's own frame "
                      "calling the CUDA API (--format json has each site's full stack)");
    if (without)
        t.notes.push_back(std::to_string(without) + " of " + std::to_string(calls_total) +
                          " API calls have no call site (record them with gprof-run --backtrace)");
    return b;
}

}  // namespace

Table cuda_callsite_sum(const Run& run) { return build(run).table; }

nlohmann::json callsite_report_json(const Run& run) {
    Built b = build(run);
    nlohmann::json j = table_to_json(b.table);
    for (size_t i = 0; i < b.stacks.size() && i < j["rows"].size(); ++i) j["rows"][i]["stack"] = std::move(b.stacks[i]);
    return j;
}

}  // namespace gprof::report
