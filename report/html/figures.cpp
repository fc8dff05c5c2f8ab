#include "html/figures.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "model/cpu_samples.h"
#include "model/memory.h"
#include "model/names.h"

namespace gprof::report::html {

namespace {

// Bin i covers [window.start + i*bin, window.start + (i+1)*bin); the bin width is rounded up so the bins cover the
// whole window (the last one may reach past its end).
int64_t bin_width(Interval window, size_t bins) {
    int64_t len = std::max<int64_t>(window.length(), 1);
    int64_t n = static_cast<int64_t>(std::max<size_t>(bins, 1));
    return (len + n - 1) / n;
}

std::vector<const KeyData*> sorted_keys(const Aggregate& agg, std::initializer_list<KeyCategory> cats) {
    std::vector<const KeyData*> keys;
    for (KeyCategory c : cats) {
        auto k = agg.of(c);
        keys.insert(keys.end(), k.begin(), k.end());
    }
    std::stable_sort(keys.begin(), keys.end(), [](const KeyData* a, const KeyData* b) {
        return a->time_stats.total != b->time_stats.total ? a->time_stats.total > b->time_stats.total
                                                          : a->name < b->name;
    });
    return keys;
}

uint64_t total_time(const std::vector<const KeyData*>& keys) {
    uint64_t t = 0;
    for (const KeyData* k : keys) t += k->time_stats.total;
    return t;
}

KeyRow row_of(const KeyData& k, uint64_t section_total) {
    KeyRow r;
    r.raw_name = k.name;
    r.name = k.category == KeyCategory::Kernel ? demangle(k.name) : k.name;
    r.time = k.time_stats;
    r.size = k.size_stats;
    r.share_pct = section_total ? 100.0 * static_cast<double>(k.time_stats.total) / static_cast<double>(section_total)
                                : 0.0;
    if (r.size.total && r.time.total)
        r.bandwidth_gbs = static_cast<double>(r.size.total) / static_cast<double>(r.time.total);  // bytes/ns = GB/s
    return r;
}

Table limited(const std::vector<const KeyData*>& keys, uint64_t section_total, size_t limit) {
    Table t;
    t.total_rows = keys.size();
    t.total_ns = total_time(keys);
    for (size_t i = 0; i < keys.size() && i < limit; ++i) t.rows.push_back(row_of(*keys[i], section_total));
    return t;
}

}  // namespace

// ----- utilisation -------------------------------------------------------------------------------------------

std::vector<float> busy_fractions(const std::vector<Interval>& busy, Interval window, size_t bins) {
    std::vector<float> out(bins, 0.0f);
    if (bins == 0 || window.length() <= 0) return out;
    int64_t w = bin_width(window, bins);
    std::vector<int64_t> ns(bins, 0);
    for (const Interval& iv : busy) {
        int64_t s = std::max(iv.start, window.start), e = std::min(iv.end, window.end);
        if (e <= s) continue;
        // Walk the bins the interval touches; intervals are disjoint, so the total work is bins + intervals.
        size_t b = static_cast<size_t>((s - window.start) / w);
        while (s < e && b < bins) {
            int64_t bin_end = window.start + static_cast<int64_t>(b + 1) * w;
            int64_t piece = std::min(e, bin_end) - s;
            ns[b] += piece;
            s += piece;
            ++b;
        }
    }
    for (size_t b = 0; b < bins; ++b) {
        // The last bin may reach past the window: its fraction is of the part inside.
        int64_t start = window.start + static_cast<int64_t>(b) * w;
        int64_t len = std::min(w, window.end - start);
        out[b] = len > 0 ? static_cast<float>(std::min(1.0, static_cast<double>(ns[b]) / static_cast<double>(len)))
                         : 0.0f;
    }
    return out;
}

Interval work_span(const std::map<DeviceKey, std::vector<Interval>>& busy, double trim) {
    std::vector<Interval> all;
    for (const auto& [key, set] : busy) all.insert(all.end(), set.begin(), set.end());
    all = interval_union(std::move(all));
    int64_t total = total_length(all);
    if (total == 0) return {0, 0};
    // The point where `part` of the busy time lies before it.
    auto at_share = [&](double part) {
        int64_t want = static_cast<int64_t>(part * static_cast<double>(total)), seen = 0;
        for (const Interval& i : all) {
            if (seen + i.length() >= want) return i.start + (want - seen);
            seen += i.length();
        }
        return all.back().end;
    };
    return {at_share(trim), at_share(1 - trim)};
}

Utilisation utilisation(const Run& run, const AnalysisResult& analysis, const Limits& limits) {
    Utilisation u;
    u.window = analysis.window;
    u.bin_ns = bin_width(u.window, limits.bins);
    auto busy = gpu_busy_by_device(run);
    u.active = work_span(busy, 0.01);
    for (const DeviceUtilisation& d : analysis.devices) {
        DeviceBusy db;
        db.key = d.key;
        db.name = d.name;
        db.busy_pct = d.busy_pct;
        auto it = busy.find(d.key);
        db.busy = busy_fractions(it == busy.end() ? std::vector<Interval>{} : it->second, u.window, limits.bins);
        for (const IdleGap& g : analysis.gaps)
            if (g.device == d.key) db.gaps.push_back(g);
        u.devices.push_back(std::move(db));
    }
    return u;
}

// ----- tables --------------------------------------------------------------------------------------------------

Table kernel_table(const Aggregate& agg, const Run& run, const Limits& limits) {
    auto gpu = sorted_keys(agg, {KeyCategory::Kernel, KeyCategory::Memcpy, KeyCategory::Memset, KeyCategory::Graph});
    auto kernels = sorted_keys(agg, {KeyCategory::Kernel, KeyCategory::Graph});
    Table t = limited(kernels, total_time(gpu), limits.kernel_rows);

    // Launch shapes of the kernels shown: counted per process by interned name (no string per kernel), then merged.
    using Shape = std::array<int32_t, 6>;
    std::map<std::string, size_t> shown;
    for (size_t i = 0; i < t.rows.size(); ++i) shown[t.rows[i].raw_name] = i;
    std::vector<std::map<Shape, uint64_t>> shapes(t.rows.size());
    for (const ProcessTrace& p : run.processes) {
        std::vector<int64_t> row_of_id(p.strings.size(), -2);  // -2 unknown, -1 not shown
        for (const trace::Kernel& k : p.kernels) {
            if (k.name >= row_of_id.size()) continue;
            int64_t& r = row_of_id[k.name];
            if (r == -2) {
                auto it = shown.find(std::string(p.str(k.name)));
                r = it == shown.end() ? -1 : static_cast<int64_t>(it->second);
            }
            if (r >= 0) ++shapes[static_cast<size_t>(r)][{k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z}];
        }
    }
    for (size_t i = 0; i < t.rows.size(); ++i) {
        std::vector<std::pair<Shape, uint64_t>> v(shapes[i].begin(), shapes[i].end());
        std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        for (size_t j = 0; j < v.size() && j < limits.launch_configs; ++j) {
            const Shape& s = v[j].first;
            t.rows[i].configs.push_back(
                {"grid " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]) + ", block " +
                     std::to_string(s[3]) + "x" + std::to_string(s[4]) + "x" + std::to_string(s[5]),
                 v[j].second});
        }
        if (v.size() > limits.launch_configs) {
            uint64_t rest = 0;
            for (size_t j = limits.launch_configs; j < v.size(); ++j) rest += v[j].second;
            t.rows[i].configs.push_back({std::to_string(v.size() - limits.launch_configs) + " other shapes", rest});
        }
    }
    return t;
}

Table memop_table(const Aggregate& agg) {
    auto keys = sorted_keys(agg, {KeyCategory::Memcpy, KeyCategory::Memset});
    return limited(keys, total_time(keys), keys.size());
}

Table api_table(const Aggregate& agg, const Limits& limits) {
    auto keys = sorted_keys(agg, {KeyCategory::Api});
    return limited(keys, total_time(keys), limits.api_rows);
}

Table nvtx_table(const Aggregate& agg, const Limits& limits) {
    auto keys = sorted_keys(agg, {KeyCategory::Nvtx});
    Table t = limited(keys, total_time(keys), limits.nvtx_rows);
    for (KeyRow& r : t.rows) r.domain = r.name.substr(0, r.name.find(':'));
    return t;
}

// ----- memory --------------------------------------------------------------------------------------------------

MemoryFigures memory_figures(const Run& run, Interval window, const Limits& limits) {
    MemoryFigures f;
    f.window = window;
    f.bin_ns = bin_width(window, limits.bins);
    using Key = std::pair<std::string, uint32_t>;  // (host, device)
    struct Change {
        int64_t at;
        int64_t delta;
        bool pool;
    };
    std::map<Key, std::vector<Change>> changes;
    std::map<Key, size_t> processes;
    for (const ProcessTrace& p : run.processes) {
        if (p.memory.empty() && p.memory_pools.empty()) continue;
        MemoryLedger ledger;
        // The ledger says a budget's new value; the device line needs the change, summed over budgets and processes.
        std::map<std::tuple<uint32_t, MemoryBudget, bool>, uint64_t> last;
        ledger.on_sample = [&](const MemorySample& s) {
            if (!s.pool_reserved && !is_device_budget(s.budget)) return;
            uint64_t& prev = last[{s.device, s.pool_reserved ? MemoryBudget::Device : s.budget, s.pool_reserved}];
            int64_t delta = static_cast<int64_t>(s.bytes) - static_cast<int64_t>(prev);
            prev = s.bytes;
            if (delta) changes[{p.header.hostname, s.device}].push_back({p.to_run_ns(s.timestamp), delta, s.pool_reserved});
        };
        replay_memory(ledger, p.memory, p.memory_pools);
        std::map<uint32_t, bool> devices;
        for (const BudgetUsage& b : ledger.budgets()) {
            MemoryBudgetRow r;
            r.pid = p.pid();
            r.device = b.device;
            r.kind = std::string(memory_budget_name(b.budget));
            r.allocations = b.allocations;
            r.allocated_bytes = b.allocated_bytes;
            r.peak_bytes = b.peak_bytes;
            r.live_bytes = b.live_bytes;
            r.live_count = b.live_count;
            f.budgets.push_back(std::move(r));
            if (is_device_budget(b.budget)) devices[b.device] = true;
        }
        for (const auto& [d, yes] : devices) ++processes[{p.header.hostname, d}];
    }
    for (auto& [key, list] : changes) {
        std::stable_sort(list.begin(), list.end(), [](const Change& a, const Change& b) { return a.at < b.at; });
        DeviceMemorySeries s;
        s.host = key.first;
        s.device = key.second;
        s.processes = processes[key];
        for (const ProcessTrace& p : run.processes)
            if (p.header.hostname == key.first)
                for (const trace::Device& d : p.devices)
                    if (d.id == key.second) {
                        s.name = std::string(p.str(d.name));
                        s.capacity = d.global_memory_bytes;
                    }
        s.max_in_use.assign(limits.bins, 0);
        bool any_pool = false;
        std::vector<uint64_t> pool(limits.bins, 0);
        int64_t in_use = 0, reserved = 0;
        size_t bin = 0;
        auto bin_of = [&](int64_t t) {
            int64_t b = (std::clamp(t, window.start, std::max(window.start, window.end - 1)) - window.start) / f.bin_ns;
            return std::min(static_cast<size_t>(std::max<int64_t>(b, 0)), limits.bins - 1);
        };
        // A bin's value is the most in use at any moment in it, so a short peak is never averaged away; a bin with
        // no change carries the level of the one before.
        for (const Change& c : list) {
            size_t b = bin_of(c.at);
            for (; bin < b; ++bin) {
                s.max_in_use[bin + 1] = static_cast<uint64_t>(std::max<int64_t>(in_use, 0));
                pool[bin + 1] = static_cast<uint64_t>(std::max<int64_t>(reserved, 0));
            }
            if (c.pool) {
                any_pool = true;
                reserved += c.delta;
                pool[b] = std::max(pool[b], static_cast<uint64_t>(std::max<int64_t>(reserved, 0)));
                s.pool_reserved_peak = std::max(s.pool_reserved_peak, pool[b]);
            } else {
                in_use += c.delta;
                uint64_t now = static_cast<uint64_t>(std::max<int64_t>(in_use, 0));
                s.max_in_use[b] = std::max(s.max_in_use[b], now);
                if (now > s.peak_bytes) {
                    s.peak_bytes = now;
                    s.peak_at = c.at;
                }
            }
        }
        for (; bin + 1 < limits.bins; ++bin) {
            s.max_in_use[bin + 1] = static_cast<uint64_t>(std::max<int64_t>(in_use, 0));
            pool[bin + 1] = static_cast<uint64_t>(std::max<int64_t>(reserved, 0));
        }
        if (any_pool) s.pool_reserved = std::move(pool);
        f.devices.push_back(std::move(s));
    }
    return f;
}

// ----- steps ---------------------------------------------------------------------------------------------------

StepFigures step_figures(const StepView& steps, const Limits& limits) {
    StepFigures f;
    size_t n = steps.steps.size();
    if (n == 0) return f;
    size_t per_bar = std::max<size_t>(1, (n + limits.step_bars - 1) / std::max<size_t>(limits.step_bars, 1));
    for (size_t first = 0; first < n; first += per_bar) {
        StepBar bar;
        bar.first = first;
        bar.count = std::min(per_bar, n - first);
        bar.min_ns = 1e300;
        double sum = 0, gpu = 0;
        for (size_t i = first; i < first + bar.count; ++i) {
            double d = static_cast<double>(steps.steps[i].duration());
            sum += d;
            bar.min_ns = std::min(bar.min_ns, d);
            bar.max_ns = std::max(bar.max_ns, d);
            if (i < steps.gpu_ns.size()) gpu += static_cast<double>(steps.gpu_ns[i]);
        }
        bar.mean_ns = sum / static_cast<double>(bar.count);
        bar.gpu_mean_ns = gpu / static_cast<double>(bar.count);
        f.bars.push_back(bar);
    }
    f.hist_min = steps.min;
    f.hist_max = steps.max;
    size_t hb = std::max<size_t>(1, limits.histogram_bins);
    if (f.hist_max <= f.hist_min) hb = 1;
    f.histogram.assign(hb, 0);
    double width = (f.hist_max - f.hist_min) / static_cast<double>(hb);
    for (const Step& s : steps.steps) {
        double d = static_cast<double>(s.duration());
        size_t b = width > 0 ? static_cast<size_t>((d - f.hist_min) / width) : 0;
        ++f.histogram[std::min(b, hb - 1)];
    }
    return f;
}

// ----- CPU samples ------------------------------------------------------------------------------------------

namespace {

struct FlameTrie {
    std::string name;
    FlameBox::Kind kind = FlameBox::Kind::Native;
    uint64_t samples = 0;
    std::map<std::string, std::unique_ptr<FlameTrie>> children;
    FlameTrie* child(const std::string& n, FlameBox::Kind k) {
        auto& c = children[n];
        if (!c) {
            c = std::make_unique<FlameTrie>();
            c->name = n;
            c->kind = k;
        }
        return c.get();
    }
};

// Lays the trie out, widest children first, keeping boxes of at least `min_share` of the whole (and at most `cap`).
void lay_out(const FlameTrie& n, uint32_t depth, double x, double total, double min_share, size_t cap, FlameGraph& g) {
    double w = total > 0 ? static_cast<double>(n.samples) / total : 0;
    if (w < min_share || g.boxes.size() >= cap) {
        ++g.left_out;
        return;
    }
    g.boxes.push_back({n.name, depth, x, w, n.samples, n.kind});
    g.depth = std::max(g.depth, depth + 1);
    std::vector<const FlameTrie*> kids;
    for (const auto& [name, c] : n.children) kids.push_back(c.get());
    std::stable_sort(kids.begin(), kids.end(), [](const FlameTrie* a, const FlameTrie* b) { return a->samples > b->samples; });
    double at = x;
    for (const FlameTrie* c : kids) {
        lay_out(*c, depth + 1, at, total, min_share, cap, g);
        at += total > 0 ? static_cast<double>(c->samples) / total : 0;
    }
}

}  // namespace

std::vector<FlameGraph> flame_graphs(const Run& run, const Limits& limits) {
    std::vector<std::pair<uint64_t, size_t>> order;  // (samples, process index)
    for (size_t i = 0; i < run.processes.size(); ++i) {
        uint64_t n = 0;
        for (const auto& s : run.processes[i].cpu_samples) n += s.periods;
        if (n) order.push_back({n, i});
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (order.size() > limits.flame_processes) order.resize(limits.flame_processes);
    std::vector<FlameGraph> out;
    for (const auto& [n, i] : order) {
        const ProcessTrace& p = run.processes[i];
        SampleStacks stacks(p);
        FlameTrie root;
        std::string exe = p.header.executable.substr(p.header.executable.rfind('/') + 1);
        root.name = exe + " (pid " + std::to_string(p.pid()) + ")";
        root.kind = FlameBox::Kind::Process;
        FlameGraph g;
        g.pid = p.pid();
        g.title = root.name;
        std::set<uint64_t> tids;
        for (const auto& s : p.cpu_samples) {
            tids.insert(s.tid);
            g.period_ns = s.period_ns;
            std::string thread(p.thread_name(s.tid));
            FlameTrie* at = root.child((thread.empty() ? std::string("thread") : thread) + " (tid " + std::to_string(s.tid) + ")",
                                       FlameBox::Kind::Thread);
            at->samples += s.periods;
            const auto& frames = stacks.of(s);
            for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
                at = at->child(folded_frame(*it), it->python ? FlameBox::Kind::Python : FlameBox::Kind::Native);
                at->samples += s.periods;
            }
            root.samples += s.periods;
        }
        g.samples = root.samples;
        g.threads = tids.size();
        lay_out(root, 0, 0, static_cast<double>(root.samples), limits.flame_min_share, limits.flame_nodes, g);
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace gprof::report::html
