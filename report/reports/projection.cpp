// The nsys reports that join CPU-side records with the GPU work they launched (AnalysisGuide, "Statistical
// Reports"):
//   cuda_kern_exec_sum  per launching thread, API and kernel: the launch call (A), the queue wait from the call's
//                       end to the kernel's start (Q, when > 0), the kernel (K) and the whole (T = call start ->
//                       the later of call end and kernel end).
//   nvtx_gpu_proj_sum   NVTX ranges projected onto the GPU: an operation belongs to a range when the CUDA call that
//                       launched it started inside the range, on the range's thread; the projection runs from the
//                       first such operation's start to the last one's end. Children are not subtracted.
//   nvtx_kern_sum       per range and kernel: the kernels launched inside every enclosing range of the launching
//                       thread (the whole push/pop stack), with their durations.
// A GPU operation without a launching API call in the trace belongs to no range and no launch: the table notes
// how many were left out.
#include <algorithm>
#include <map>
#include <tuple>

#include "gprof/trace/names.h"
#include "model/names.h"
#include "reports/reports.h"

namespace gprof::report {

using namespace gprof::trace;

namespace {

// One GPU operation with its launching call, on the launching thread.
struct Launch {
    Timestamp api_start = 0, api_end = 0;
    Timestamp op_start = 0, op_end = 0;
    uint64_t tid = 0;
    const ApiCall* api = nullptr;
    const Kernel* kernel = nullptr;  // null for memcpy/memset/graph work
};

// Every GPU operation of a process that has its launching call, sorted by (tid, api_start); `orphans` counts the
// others.
std::vector<Launch> launches_of(const ProcessTrace& p, bool kernels_only, uint64_t& orphans) {
    std::vector<Launch> out;
    auto add = [&](uint32_t corr, Timestamp s, Timestamp e, const Kernel* k) {
        const ApiCall* a = p.api_for_correlation(corr);
        if (!a) {
            ++orphans;
            return;
        }
        out.push_back({a->start, a->end, s, std::max(e, s), a->tid, a, k});
    };
    for (const auto& k : p.kernels) add(k.correlation, k.start, k.end, &k);
    if (!kernels_only) {
        for (const auto& m : p.memcpys) add(m.correlation, m.start, m.end, nullptr);
        for (const auto& m : p.memsets) add(m.correlation, m.start, m.end, nullptr);
        for (size_t i = 0; i < p.graph_launches.size(); ++i)
            if (p.graph_launch_is_gpu_work(i))
                add(p.graph_launches[i].correlation, p.graph_launches[i].start, p.graph_launches[i].end, nullptr);
    }
    std::sort(out.begin(), out.end(), [](const Launch& a, const Launch& b) {
        return std::tie(a.tid, a.api_start) < std::tie(b.tid, b.api_start);
    });
    return out;
}

// The launches of thread `tid` whose call started in [start, end].
std::pair<const Launch*, const Launch*> launches_in(const std::vector<Launch>& l, uint64_t tid, Timestamp start,
                                                    Timestamp end) {
    auto lo = std::lower_bound(l.begin(), l.end(), std::make_pair(tid, start), [](const Launch& x, const auto& key) {
        return std::tie(x.tid, x.api_start) < std::tie(key.first, key.second);
    });
    auto hi = std::upper_bound(l.begin(), l.end(), std::make_pair(tid, end), [](const auto& key, const Launch& x) {
        return std::tie(key.first, key.second) < std::tie(x.tid, x.api_start);
    });
    if (hi < lo) hi = lo;
    return {l.data() + (lo - l.begin()), l.data() + (hi - l.begin())};
}

// A closed range (push/pop or start/end; marks and ranges that never ended have no extent) with its name as
// nvtx_sum keys it ("domain:name") and its place in its thread's push/pop stack.
struct Range {
    const Nvtx* n = nullptr;
    std::string name;
    uint32_t level = 0;     // push/pop depth; start/end ranges 0
    uint32_t children = 0;  // push/pop ranges directly inside it
};

std::vector<Range> closed_ranges(const ProcessTrace& p) {
    std::vector<Range> out;
    for (const auto& n : p.nvtx) {
        if (n.type == NvtxType::Mark || n.end == 0 || n.end < n.start) continue;
        Range r;
        r.n = &n;
        r.name = std::string(n.domain ? p.str(n.domain) : std::string_view()) + ":" + std::string(p.str(n.name));
        r.level = n.type == NvtxType::PushPop ? n.depth : 0;
        out.push_back(std::move(r));
    }
    // Children of push/pop ranges: per thread in start order, the innermost open range that contains a range is
    // its parent (push/pop ranges nest properly on their thread).
    std::vector<size_t> order;
    for (size_t i = 0; i < out.size(); ++i)
        if (out[i].n->type == NvtxType::PushPop) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const Nvtx &x = *out[a].n, &y = *out[b].n;
        return std::tie(x.tid, x.start, y.end) < std::tie(y.tid, y.start, x.end);  // outer first on equal starts
    });
    std::vector<size_t> stack;
    uint64_t tid = ~0ull;
    for (size_t i : order) {
        const Nvtx& n = *out[i].n;
        if (n.tid != tid) stack.clear(), tid = n.tid;
        while (!stack.empty() && out[stack.back()].n->end < n.start) stack.pop_back();
        if (!stack.empty() && n.end <= out[stack.back()].n->end) ++out[stack.back()].children;
        stack.push_back(i);
    }
    return out;
}

std::string style_of(const Nvtx& n) { return std::string(nvtx_type_name(n.type)); }

std::vector<Cell> stat_cells(std::vector<uint64_t>& v) {
    Stats s = compute_stats(v);
    return {s.mean, s.median, static_cast<int64_t>(s.min), static_cast<int64_t>(s.max), s.stddev};
}

std::vector<Column> stat_columns(const std::string& prefix, const std::string& key) {
    return {{key + "avg_ns", prefix + "Avg ({unit})", ColumnKind::TimeNs},
            {key + "med_ns", prefix + "Med ({unit})", ColumnKind::TimeNs},
            {key + "min_ns", prefix + "Min ({unit})", ColumnKind::TimeNs},
            {key + "max_ns", prefix + "Max ({unit})", ColumnKind::TimeNs},
            {key + "stddev_ns", prefix + "StdDev ({unit})", ColumnKind::TimeNs}};
}

void note_orphans(Table& t, uint64_t orphans, const char* what) {
    if (orphans)
        t.notes.push_back(std::to_string(orphans) + " GPU operation" + (orphans == 1 ? "" : "s") +
                          " without a launching API call in the trace left out (" + what + ")");
}

}  // namespace

Table cuda_kern_exec_sum(const Run& run) {
    Table t;
    t.name = "cuda_kern_exec_sum";
    t.columns = {{"pid", "PID", ColumnKind::Count},     {"tid", "TID", ColumnKind::Count},
                 {"device", "DevId", ColumnKind::Count}, {"count", "Count", ColumnKind::Count},
                 {"queued_count", "QCount", ColumnKind::Count}};
    for (const auto& [p, k] : {std::pair{"T", "total_"}, {"A", "api_"}, {"Q", "queue_"}, {"K", "kernel_"}}) {
        auto c = stat_columns(p, k);
        t.columns.insert(t.columns.end(), c.begin(), c.end());
    }
    t.columns.push_back({"api_name", "API Name", ColumnKind::Text});
    t.columns.push_back({"kernel_name", "Kernel Name", ColumnKind::Text});

    struct Group {
        std::vector<uint64_t> total, api, queue, kernel;
        uint64_t queued = 0, total_ns = 0;
    };
    using Key = std::tuple<int64_t, uint64_t, uint32_t, std::string, std::string>;  // pid, tid, device, api, kernel
    std::map<Key, Group> groups;
    uint64_t orphans = 0;
    for (const auto& p : run.processes) {
        for (const auto& l : launches_of(p, true, orphans)) {
            Group& g = groups[{p.pid(), l.tid, l.kernel->device, std::string(p.str(l.api->name)),
                               demangle(p.str(l.kernel->name))}];
            uint64_t a = l.api_end > l.api_start ? l.api_end - l.api_start : 0;
            uint64_t q = l.op_start > l.api_end ? l.op_start - l.api_end : 0;
            uint64_t k = l.op_end - l.op_start;
            Timestamp end = std::max(l.api_end, l.op_end);
            uint64_t tot = end > l.api_start ? end - l.api_start : 0;
            g.api.push_back(a);
            g.queue.push_back(q);
            g.kernel.push_back(k);
            g.total.push_back(tot);
            g.total_ns += tot;
            if (q > 0) ++g.queued;
        }
    }
    std::vector<std::pair<const Key*, Group*>> rows;
    for (auto& [k, g] : groups) rows.emplace_back(&k, &g);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second->total_ns > b.second->total_ns; });
    for (auto& [k, g] : rows) {
        const auto& [pid, tid, device, api, kernel] = *k;
        std::vector<Cell> row = {pid, static_cast<int64_t>(tid), static_cast<int64_t>(device),
                                 static_cast<int64_t>(g->kernel.size()), static_cast<int64_t>(g->queued)};
        for (auto* v : {&g->total, &g->api, &g->queue, &g->kernel}) {
            auto c = stat_cells(*v);
            row.insert(row.end(), c.begin(), c.end());
        }
        row.push_back(api);
        row.push_back(kernel);
        t.rows.push_back(std::move(row));
    }
    note_orphans(t, orphans, "kernels");
    return t;
}

Table nvtx_gpu_proj_sum(const Run& run) {
    Table t;
    t.name = "nvtx_gpu_proj_sum";
    t.columns = {{"range", "Range", ColumnKind::Text},
                 {"style", "Style", ColumnKind::Text},
                 {"total_proj_time_ns", "Total Proj Time ({unit})", ColumnKind::TimeNs},
                 {"total_range_time_ns", "Total Range Time ({unit})", ColumnKind::TimeNs},
                 {"range_instances", "Range Instances", ColumnKind::Count}};
    auto c = stat_columns("Proj ", "proj_");
    t.columns.insert(t.columns.end(), c.begin(), c.end());
    t.columns.push_back({"total_gpu_ops", "Total GPU Ops", ColumnKind::Count});
    t.columns.push_back({"avg_gpu_ops", "Avg GPU Ops", ColumnKind::Number, 1});
    t.columns.push_back({"avg_range_level", "Avg Range Lvl", ColumnKind::Number, 1});
    t.columns.push_back({"avg_num_child", "Avg Num Child", ColumnKind::Number, 1});

    struct Group {
        std::vector<uint64_t> proj;
        uint64_t range_ns = 0, ops = 0, levels = 0, children = 0;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;  // (range, style)
    uint64_t orphans = 0;
    for (const auto& p : run.processes) {
        auto launches = launches_of(p, false, orphans);
        for (const auto& r : closed_ranges(p)) {
            auto [first, last] = launches_in(launches, r.n->tid, r.n->start, r.n->end);
            if (first == last) continue;  // no GPU work: nothing to project (nsys lists only ranges with some)
            Timestamp b = first->op_start, e = first->op_end;
            for (const Launch* l = first; l != last; ++l) {
                b = std::min(b, l->op_start);
                e = std::max(e, l->op_end);
            }
            Group& g = groups[{r.name, style_of(*r.n)}];
            g.proj.push_back(e - b);
            g.range_ns += r.n->end - r.n->start;
            g.ops += static_cast<uint64_t>(last - first);
            g.levels += r.level;
            g.children += r.children;
        }
    }
    struct Row {
        const std::pair<std::string, std::string>* key;
        Group* g;
        uint64_t proj_total;
    };
    std::vector<Row> rows;
    for (auto& [k, g] : groups) {
        uint64_t total = 0;
        for (uint64_t v : g.proj) total += v;
        rows.push_back({&k, &g, total});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.proj_total > b.proj_total; });
    for (auto& r : rows) {
        double n = static_cast<double>(r.g->proj.size());
        std::vector<Cell> row = {r.key->first, r.key->second, static_cast<int64_t>(r.proj_total),
                                 static_cast<int64_t>(r.g->range_ns), static_cast<int64_t>(r.g->proj.size())};
        auto s = stat_cells(r.g->proj);
        row.insert(row.end(), s.begin(), s.end());
        row.push_back(static_cast<int64_t>(r.g->ops));
        row.push_back(static_cast<double>(r.g->ops) / n);
        row.push_back(static_cast<double>(r.g->levels) / n);
        row.push_back(static_cast<double>(r.g->children) / n);
        t.rows.push_back(std::move(row));
    }
    note_orphans(t, orphans, "kernels, memory operations and graph launches");
    return t;
}

Table nvtx_kern_sum(const Run& run) {
    Table t;
    t.name = "nvtx_kern_sum";
    t.columns = {{"range", "NVTX Range", ColumnKind::Text},
                 {"style", "Style", ColumnKind::Text},
                 {"pid", "PID", ColumnKind::Count},
                 {"tid", "TID", ColumnKind::Count},
                 {"nvtx_instances", "NVTX Inst", ColumnKind::Count},
                 {"kernel_instances", "Kern Inst", ColumnKind::Count},
                 {"total_time_ns", "Total Time ({unit})", ColumnKind::TimeNs}};
    auto c = stat_columns("", "");
    t.columns.insert(t.columns.end(), c.begin(), c.end());
    t.columns.push_back({"kernel_name", "Kernel Name", ColumnKind::Text});

    struct Group {
        std::vector<uint64_t> durations;
        uint64_t ranges = 0, total = 0;
    };
    // (range, style, pid, tid, kernel)
    using Key = std::tuple<std::string, std::string, int64_t, uint64_t, std::string>;
    std::map<Key, Group> groups;
    uint64_t orphans = 0;
    for (const auto& p : run.processes) {
        auto launches = launches_of(p, true, orphans);
        std::map<StringId, std::string> demangled;
        for (const auto& r : closed_ranges(p)) {
            auto [first, last] = launches_in(launches, r.n->tid, r.n->start, r.n->end);
            std::map<StringId, Group*> seen;  // kernels of this range instance
            for (const Launch* l = first; l != last; ++l) {
                auto [it, fresh] = demangled.try_emplace(l->kernel->name);
                if (fresh) it->second = demangle(p.str(l->kernel->name));
                Group*& g = seen[l->kernel->name];
                if (!g) {
                    g = &groups[{r.name, style_of(*r.n), p.pid(), r.n->tid, it->second}];
                    ++g->ranges;
                }
                g->durations.push_back(l->op_end - l->op_start);
                g->total += l->op_end - l->op_start;
            }
        }
    }
    std::vector<std::pair<const Key*, Group*>> rows;
    for (auto& [k, g] : groups) rows.emplace_back(&k, &g);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        if (std::get<0>(*a.first) != std::get<0>(*b.first)) return std::get<0>(*a.first) < std::get<0>(*b.first);
        return a.second->total > b.second->total;
    });
    for (auto& [k, g] : rows) {
        const auto& [range, style, pid, tid, kernel] = *k;
        std::vector<Cell> row = {range, style, pid, static_cast<int64_t>(tid), static_cast<int64_t>(g->ranges),
                                 static_cast<int64_t>(g->durations.size()), static_cast<int64_t>(g->total)};
        auto s = stat_cells(g->durations);
        row.insert(row.end(), s.begin(), s.end());
        row.push_back(kernel);
        t.rows.push_back(std::move(row));
    }
    note_orphans(t, orphans, "kernels");
    return t;
}

}  // namespace gprof::report
