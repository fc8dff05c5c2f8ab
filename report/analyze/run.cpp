// The analysis itself: utilisation, verdict, idle gaps, findings, steps. Rules and thresholds are documented in
// docs/analysis.md; keep the two in step.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "analyze/analysis.h"
#include "analyze/util.h"
#include "model/call_sites.h"
#include "model/stats.h"
#include "output/table.h"
#include "gprof/trace/names.h"

namespace gprof::report {

namespace {

// Thresholds of the verdict and the rules (docs/analysis.md).
constexpr double kGpuBoundPct = 90.0;
constexpr double kLaunchBoundPct = 80.0;
constexpr double kIoBoundPct = 5.0;
constexpr double kSyncBoundPct = 25.0;
constexpr uint64_t kSmallCopyBytes = 64 * 1024;
constexpr size_t kSmallCopyCount = 50;
constexpr double kMinShareOfWindow = 0.01;
constexpr size_t kMinOccurrences = 10;
constexpr double kTinyGridTimeShare = 0.10;
constexpr double kSingleStreamShare = 0.90;

bool timed(trace::Timestamp s, trace::Timestamp e) { return s != 0 && e >= s; }

std::string pct(double v) { return format_fixed(v, 1) + "%"; }
std::string t(double ns) { return format_time_auto(ns); }

struct ThreadKey {
    size_t process;
    uint64_t tid;
    auto operator<=>(const ThreadKey&) const = default;
};

// What a name means for the rules, computed once per distinct string of a process (the regexes and prefix tests
// are far too slow to run per record on big traces).
enum NameFlag : uint8_t {
    kLaunchName = 1,
    kSyncName = 2,
    kSyncMemcpyName = 4,
    kAllocName = 8,
    kImplicitSyncName = 16,
    kHtoDName = 32,
    kDataLoadingName = 64,
    kFlagsKnown = 128,
};

class NameFlags {
public:
    explicit NameFlags(const ProcessTrace& proc) : proc_(&proc), flags_(proc.strings.size(), 0) {}
    uint8_t operator()(trace::StringId id) const {
        if (id < flags_.size()) {
            uint8_t& f = flags_[id];
            if (!(f & kFlagsKnown)) f = compute(proc_->str(id));
            return f;
        }
        return compute(proc_->str(id));  // not in the string table: a placeholder name, not cached
    }

private:
    static uint8_t compute(std::string_view name) {
        uint8_t f = kFlagsKnown;
        if (is_launch_api(name)) f |= kLaunchName;
        if (is_sync_api(name)) f |= kSyncName;
        if (is_sync_memcpy_api(name)) f |= kSyncMemcpyName;
        if (is_alloc_api(name)) f |= kAllocName;
        if (is_implicit_sync_api(name)) f |= kImplicitSyncName;
        if (name.find("HtoD") != std::string_view::npos) f |= kHtoDName;
        if (is_data_loading_range(name)) f |= kDataLoadingName;
        return f;
    }
    const ProcessTrace* proc_;
    mutable std::vector<uint8_t> flags_;
};

// Host activity of one CPU thread on the run axis.
struct HostThread {
    std::vector<std::pair<Interval, const trace::ApiCall*>> apis;  // sorted by start
    std::vector<std::pair<Interval, const trace::Nvtx*>> ranges;   // sorted by start
    std::vector<int64_t> api_end_max, range_end_max;  // running maximum of `end` over apis / ranges (by index)
    std::vector<Interval> api_union, sync_union;
    size_t launches = 0;
};

// Index of the first entry that may overlap [t, ...): entries before it all end at or before t. `end_max` is the
// running maximum of the entries' ends, so it is sorted and a binary search finds it.
size_t first_ending_after(const std::vector<int64_t>& end_max, int64_t t) {
    return static_cast<size_t>(std::upper_bound(end_max.begin(), end_max.end(), t) - end_max.begin());
}

struct Context {
    const Run& run;
    Interval window;
    std::map<DeviceKey, std::vector<Interval>> busy;
    std::map<DeviceKey, std::vector<Interval>> gaps;  // holes of `busy` inside the window
    std::map<ThreadKey, HostThread> threads;
    std::vector<ThreadKey> launch_threads;  // one per process that launched GPU work
    std::map<DeviceKey, std::set<size_t>> device_processes;
    std::vector<NameFlags> names;  // per process
};

Context build_context(const Run& run) {
    Context c{run, capture_window(run), gpu_busy_by_device(run), {}, {}, {}, {}, {}};
    for (const auto& [key, busy] : c.busy) c.gaps[key] = gaps_within(busy, c.window);
    c.names.reserve(run.processes.size());
    for (const ProcessTrace& proc : run.processes) c.names.emplace_back(proc);
    for (size_t p = 0; p < run.processes.size(); ++p) {
        const ProcessTrace& proc = run.processes[p];
        const NameFlags& names = c.names[p];
        std::set<uint32_t> devices;
        auto note_device = [&devices, last = std::optional<uint32_t>{}](uint32_t dev) mutable {
            if (last != dev) devices.insert(dev);
            last = dev;
        };
        for (const auto& k : proc.kernels) note_device(k.device);
        for (const auto& m : proc.memcpys) note_device(m.device);
        for (const auto& m : proc.memsets) note_device(m.device);
        for (size_t i = 0; i < proc.graph_launches.size(); ++i)
            if (proc.graph_launch_is_gpu_work(i)) note_device(proc.graph_launches[i].device);
        for (uint32_t dev : devices) c.device_processes[{proc.header.hostname, dev}].insert(p);
        HostThread* h = nullptr;
        uint64_t h_tid = 0;
        auto thread = [&](uint64_t tid) -> HostThread& {
            if (!h || tid != h_tid) {
                h = &c.threads[{p, tid}];
                h_tid = tid;
            }
            return *h;
        };
        for (const trace::ApiCall& a : proc.api_calls) {
            if (!timed(a.start, a.end)) continue;
            HostThread& ht = thread(a.tid);
            ht.apis.push_back({{proc.to_run_ns(a.start), proc.to_run_ns(a.end)}, &a});
            if (names(a.name) & kLaunchName) ++ht.launches;
        }
        for (const trace::Nvtx& r : proc.nvtx) {
            if (r.type == trace::NvtxType::Mark || !timed(r.start, r.end) || r.end == r.start) continue;
            thread(r.tid).ranges.push_back({{proc.to_run_ns(r.start), proc.to_run_ns(r.end)}, &r});
        }
        const HostThread* best = nullptr;
        ThreadKey best_key{p, 0};
        for (auto it = c.threads.lower_bound({p, 0}); it != c.threads.end() && it->first.process == p; ++it) {
            const HostThread& ht = it->second;
            if (!best || ht.launches > best->launches ||
                (ht.launches == best->launches && ht.apis.size() > best->apis.size())) {
                best = &ht;
                best_key = it->first;
            }
        }
        if (best && best->launches > 0) c.launch_threads.push_back(best_key);
    }
    for (auto& [key, h] : c.threads) {
        auto by_start = [](const auto& a, const auto& b) { return a.first.start < b.first.start; };
        // Already strictly increasing (the usual case: one thread's calls in record order) has one sorted order,
        // so skipping the sort then gives the order std::sort would; ties keep going through std::sort.
        auto not_increasing = [](const auto& a, const auto& b) { return a.first.start >= b.first.start; };
        if (std::adjacent_find(h.apis.begin(), h.apis.end(), not_increasing) != h.apis.end())
            std::sort(h.apis.begin(), h.apis.end(), by_start);
        if (std::adjacent_find(h.ranges.begin(), h.ranges.end(), not_increasing) != h.ranges.end())
            std::sort(h.ranges.begin(), h.ranges.end(), by_start);
        std::vector<Interval> all, sync;
        all.reserve(h.apis.size());
        const NameFlags& names = c.names[key.process];
        h.api_end_max.reserve(h.apis.size());
        int64_t end_max = INT64_MIN;
        for (auto& [i, a] : h.apis) {
            all.push_back(i);
            if (names(a->name) & kSyncName) sync.push_back(i);
            end_max = std::max(end_max, i.end);
            h.api_end_max.push_back(end_max);
        }
        end_max = INT64_MIN;
        h.range_end_max.reserve(h.ranges.size());
        for (auto& [i, r] : h.ranges) {
            end_max = std::max(end_max, i.end);
            h.range_end_max.push_back(end_max);
        }
        h.api_union = interval_union(std::move(all));
        h.sync_union = interval_union(std::move(sync));
    }
    return c;
}

std::vector<DeviceUtilisation> utilisation(const Context& c) {
    std::vector<DeviceUtilisation> out;
    std::vector<std::set<uint32_t>> streams;
    std::map<DeviceKey, size_t> index;
    for (const auto& [key, busy] : c.busy) {
        DeviceUtilisation d;
        d.key = key;
        d.window_ns = c.window.length();
        d.busy_ns = length_within(busy, c.window);
        d.busy_pct = d.window_ns > 0 ? 100.0 * static_cast<double>(d.busy_ns) / static_cast<double>(d.window_ns) : 0;
        if (!busy.empty()) {
            d.steady_start = std::clamp(busy.front().start, c.window.start, c.window.end);
            const int64_t middle = c.window.start + c.window.length() / 2;
            const double long_gap = kStartupGapShare * static_cast<double>(c.window.length());
            const Interval* pause = nullptr;
            for (const Interval& g : c.gaps.at(key))
                if (g.start < middle && static_cast<double>(g.length()) >= long_gap &&
                    (!pause || g.length() > pause->length()))
                    pause = &g;
            if (pause) d.steady_start = std::max(d.steady_start, pause->end);
            d.steady_ns = c.window.end - d.steady_start;
            d.steady_busy_pct =
                d.steady_ns > 0 ? 100.0 * static_cast<double>(length_within(busy, {d.steady_start, c.window.end})) /
                                      static_cast<double>(d.steady_ns)
                                : d.busy_pct;
        }
        index[key] = out.size();
        out.push_back(std::move(d));
        streams.emplace_back();
    }
    // One pass over the GPU records of each process (every timed one has its device in `busy`).
    for (const ProcessTrace& proc : c.run.processes) {
        std::map<uint32_t, size_t> mine;  // device id -> index into out, for this process's host
        for (auto it = index.lower_bound({proc.header.hostname, 0});
             it != index.end() && it->first.host == proc.header.hostname; ++it)
            mine[it->first.device] = it->second;
        if (mine.empty()) continue;
        for (const auto& dev : proc.devices) {
            auto it = mine.find(dev.id);
            if (it != mine.end() && out[it->second].name.empty()) out[it->second].name = std::string(proc.str(dev.name));
        }
        // Last device and stream seen: records come in long runs of one device and stream.
        uint32_t last_dev = 0;
        size_t last_idx = SIZE_MAX;
        auto add = [&](uint32_t dev, uint32_t stream, trace::Timestamp s, trace::Timestamp e, int64_t DeviceUtilisation::*sum,
                       uint32_t& last_stream, size_t& last_stream_idx) {
            if (!timed(s, e)) return;
            if (last_idx == SIZE_MAX || dev != last_dev) {
                auto it = mine.find(dev);
                if (it == mine.end()) return;
                last_dev = dev;
                last_idx = it->second;
            }
            out[last_idx].*sum = sat_add(out[last_idx].*sum, sat_duration(s, e));
            if (last_stream_idx != last_idx || last_stream != stream) {
                streams[last_idx].insert(stream);
                last_stream = stream;
                last_stream_idx = last_idx;
            }
        };
        uint32_t ls = 0;
        size_t lsi = SIZE_MAX;
        for (const auto& k : proc.kernels) add(k.device, k.stream, k.start, k.end, &DeviceUtilisation::kernel_ns, ls, lsi);
        for (const auto& m : proc.memcpys) add(m.device, m.stream, m.start, m.end, &DeviceUtilisation::memcpy_ns, ls, lsi);
        for (const auto& m : proc.memsets) add(m.device, m.stream, m.start, m.end, &DeviceUtilisation::memset_ns, ls, lsi);
        for (size_t i = 0; i < proc.graph_launches.size(); ++i) {
            const auto& g = proc.graph_launches[i];
            if (proc.graph_launch_is_gpu_work(i)) add(g.device, g.stream, g.start, g.end, &DeviceUtilisation::graph_ns, ls, lsi);
        }
    }
    for (size_t i = 0; i < out.size(); ++i) out[i].streams = streams[i].size();
    return out;
}

// The reference span for "share of step time": first step start to last step end, else the capture window.
Interval reference_span(const Context& c, const StepSet& steps) {
    if (steps.steps.empty()) return c.window;
    Interval r{INT64_MAX, INT64_MIN};
    for (const Step& s : steps.steps) {
        r.start = std::min(r.start, s.start);
        r.end = std::max(r.end, s.end);
    }
    return r;
}

VerdictEvidence evidence(const Context& c, const std::vector<DeviceUtilisation>& devs, const StepSet& steps) {
    VerdictEvidence e;
    double sum = 0, steady_sum = 0;
    size_t n = 0;
    int64_t steady_start = INT64_MAX;
    for (const auto& d : devs)
        if (d.busy_ns > 0) {
            sum += d.busy_pct;
            steady_sum += d.steady_busy_pct;
            steady_start = std::min(steady_start, d.steady_start);
            ++n;
        }
    e.busy_pct = n ? sum / static_cast<double>(n) : 0;
    e.steady_busy_pct = n ? steady_sum / static_cast<double>(n) : 0;
    e.startup_ns = n ? std::max<int64_t>(0, sat_sub(steady_start, c.window.start)) : 0;

    // Where the launching threads were while their devices sat idle.
    int64_t idle = 0, in_api = 0;
    for (const auto& [key, gaps] : c.gaps) {
        auto procs = c.device_processes.find(key);
        for (const ThreadKey& tk : c.launch_threads) {
            if (procs == c.device_processes.end() || !procs->second.count(tk.process)) continue;
            const HostThread& h = c.threads.at(tk);
            idle = sat_add(idle, total_length(gaps));
            in_api = sat_add(in_api, intersection_length(gaps, h.api_union));
        }
    }
    if (idle > 0) {
        e.idle_in_api_pct = 100.0 * static_cast<double>(in_api) / static_cast<double>(idle);
        e.idle_in_host_code_pct = 100.0 - e.idle_in_api_pct;
    }

    // Launch cost against kernel length.
    std::vector<double> launch_ns;
    size_t launches = 0;
    for (const auto& [key, h] : c.threads) {
        const NameFlags& names = c.names[key.process];
        for (auto& [i, a] : h.apis)
            if (names(a->name) & kLaunchName) {
                launch_ns.push_back(static_cast<double>(i.length()));
                ++launches;
            }
    }
    e.median_launch_ns = median_of(std::move(launch_ns));
    double window_s = static_cast<double>(c.window.length()) / 1e9;
    e.launch_rate_per_s = window_s > 0 ? static_cast<double>(launches) / window_s : 0;
    size_t kernels = 0, tiny = 0;
    for (const ProcessTrace& proc : c.run.processes)
        for (const auto& k : proc.kernels) {
            if (!timed(k.start, k.end)) continue;
            ++kernels;
            if (static_cast<double>(k.end - k.start) < e.median_launch_ns) ++tiny;
        }
    e.tiny_kernel_pct = kernels ? 100.0 * static_cast<double>(tiny) / static_cast<double>(kernels) : 0;

    // Host blocked in synchronisation: the most blocked thread.
    for (const auto& [key, h] : c.threads)
        e.sync_blocked_ns = std::max(e.sync_blocked_ns, length_within(h.sync_union, c.window));
    e.sync_blocked_pct = c.window.length() > 0
                             ? 100.0 * static_cast<double>(e.sync_blocked_ns) / static_cast<double>(c.window.length())
                             : 0;

    // Data loading: data-loading NVTX ranges and blocking H->D copies on the launching threads.
    Interval ref = reference_span(c, steps);
    e.reference_ns = ref.length();
    for (const ThreadKey& tk : c.launch_threads) {
        const HostThread& h = c.threads.at(tk);
        const ProcessTrace& proc = c.run.processes[tk.process];
        const NameFlags& names = c.names[tk.process];
        std::vector<Interval> io;
        for (auto& [i, r] : h.ranges)
            if (names(r->name) & kDataLoadingName) io.push_back(i);
        for (auto& [i, a] : h.apis) {
            uint8_t f = names(a->name);
            if (!(f & kSyncMemcpyName)) continue;
            bool htod = (f & kHtoDName) != 0;
            for (const GpuOpRef& op : proc.gpu_ops_for_correlation(a->correlation))
                if (op.kind == GpuOpKind::Memcpy && proc.memcpys[op.index].copy_kind == trace::MemcpyKind::HtoD)
                    htod = true;
            if (htod) io.push_back(i);
        }
        e.io_ns = sat_add(e.io_ns, length_within(interval_union(std::move(io)), ref));
    }
    e.io_pct = e.reference_ns > 0 ? 100.0 * static_cast<double>(e.io_ns) / static_cast<double>(e.reference_ns) : 0;
    return e;
}

// "GPU busy 7.6% after start-up (< 80%; start-up: the first 5.35s; 1.3% of the whole capture window)": both figures
// when start-up changes the figure, the window's alone when it does not. `bound` is the threshold it was held to.
std::string busy_text(const VerdictEvidence& e, const std::string& bound) {
    std::string s = "GPU busy " + pct(e.steady_busy_pct);
    if (std::abs(e.steady_busy_pct - e.busy_pct) < 0.05)
        return s + " of the capture window" + (bound.empty() ? "" : " (" + bound + ")");
    return s + " after start-up (" + (bound.empty() ? "" : bound + "; ") + "start-up: the first " +
           t(static_cast<double>(e.startup_ns)) + "; " + pct(e.busy_pct) + " of the whole capture window)";
}

// Decided on the utilisation after start-up (VerdictEvidence::steady_busy_pct).
void decide(AnalysisResult& a) {
    const VerdictEvidence& e = a.evidence;
    const double busy = e.steady_busy_pct;
    std::ostringstream why;
    if (a.devices.empty() || e.busy_pct <= 0) {
        a.verdict = Verdict::NoGpuWork;
        why << "no kernel, memcpy or memset was recorded";
    } else if (busy > kGpuBoundPct) {
        a.verdict = Verdict::GpuBound;
        why << busy_text(e, "> " + format_fixed(kGpuBoundPct, 0) + "%")
            << ": speed up the kernels themselves (see the kernel summary)";
    } else if (e.io_pct > kIoBoundPct) {
        a.verdict = Verdict::IoBound;
        why << "data loading (data-loading NVTX ranges and blocking H->D copies) takes " << pct(e.io_pct)
            << " of step time (" << t(static_cast<double>(e.io_ns)) << " of " << t(static_cast<double>(e.reference_ns))
            << ", > " << kIoBoundPct << "%) while the " << busy_text(e, "");
    } else if (e.sync_blocked_pct >= kSyncBoundPct) {
        a.verdict = Verdict::SyncBound;
        why << "the host is blocked in synchronisation calls " << pct(e.sync_blocked_pct) << " of the window ("
            << t(static_cast<double>(e.sync_blocked_ns)) << ") and the " << busy_text(e, "");
    } else if (busy < kLaunchBoundPct) {
        a.verdict = Verdict::CpuLaunchBound;
        why << busy_text(e, "< " + format_fixed(kLaunchBoundPct, 0) + "%") << "; during GPU idle time the launching "
            << "thread spent " << pct(e.idle_in_api_pct) << " in CUDA API calls and " << pct(e.idle_in_host_code_pct)
            << " in host code; " << format_fixed(e.launch_rate_per_s, 0) << " launches/s, median launch "
            << t(e.median_launch_ns) << ", " << pct(e.tiny_kernel_pct) << " of kernels shorter than a launch";
    } else {
        a.verdict = Verdict::Balanced;
        why << busy_text(e, "between " + format_fixed(kLaunchBoundPct, 0) + "% and " + format_fixed(kGpuBoundPct, 0) + "%")
            << ": no single bottleneck dominates; look at the largest idle gaps";
    }
    a.verdict_reason = why.str();
}

std::vector<IdleGap> idle_gaps(const Context& c, size_t max_gaps) {
    // Rank every gap by (longest, earliest, device order) without materialising them all, then keep the top ones.
    struct Candidate {
        int64_t duration, start;
        size_t device;
        const Interval* gap;
    };
    std::vector<Candidate> cand;
    std::vector<const DeviceKey*> keys;
    for (const auto& [key, gaps] : c.gaps) {
        for (const Interval& g : gaps) cand.push_back({g.length(), g.start, keys.size(), &g});
        keys.push_back(&key);
    }
    auto better = [](const Candidate& a, const Candidate& b) {
        if (a.duration != b.duration) return a.duration > b.duration;
        if (a.start != b.start) return a.start < b.start;
        return a.device < b.device;
    };
    size_t keep = std::min(max_gaps, cand.size());
    std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), cand.end(), better);
    std::vector<IdleGap> all;
    all.reserve(keep);
    for (size_t i = 0; i < keep; ++i) all.push_back({*keys[cand[i].device], cand[i].gap->start, cand[i].gap->end, {}});
    for (IdleGap& gap : all) {
        Interval gi{gap.start, gap.end};
        for (const auto& [key, h] : c.threads) {
            const ProcessTrace& proc = c.run.processes[key.process];
            if (proc.header.hostname != gap.device.host) continue;
            ThreadActivity act;
            act.pid = proc.pid();
            act.tid = key.tid;
            act.thread_name = std::string(proc.thread_name(key.tid));
            act.api_ns = length_within(h.api_union, gi);
            std::map<std::string, int64_t> per_api;
            for (size_t k = first_ending_after(h.api_end_max, gi.start); k < h.apis.size(); ++k) {
                const auto& [i, a] = h.apis[k];
                if (i.start >= gi.end) break;
                if (int64_t o = overlap(i, gi)) per_api[std::string(proc.str(a->name))] += o;
            }
            for (auto& [name, ns] : per_api)
                if (ns > act.top_ns) {
                    act.top_ns = ns;
                    act.top_activity = name;
                }
            // The innermost range that covers much of the gap: of the ranges overlapping it by at least half the
            // best overlap, the shortest (an enclosing "step" range would otherwise always win).
            std::vector<Interval> covered;
            std::vector<std::pair<int64_t, const std::pair<Interval, const trace::Nvtx*>*>> hits;
            int64_t best = 0;
            for (size_t k = first_ending_after(h.range_end_max, gi.start); k < h.ranges.size(); ++k) {
                const auto& entry = h.ranges[k];
                if (entry.first.start >= gi.end) break;
                int64_t o = overlap(entry.first, gi);
                if (!o) continue;
                covered.push_back(entry.first);
                hits.push_back({o, &entry});
                best = std::max(best, o);
            }
            int64_t best_len = INT64_MAX;
            for (auto& [o, entry] : hits) {
                if (o < best - o || entry->first.length() >= best_len) continue;  // o * 2 < best, no overflow
                best_len = entry->first.length();
                act.range_ns = o;
                act.range = std::string(proc.str(entry->second->name));
            }
            act.nvtx_ns = length_within(interval_union(std::move(covered)), gi);
            bool launcher = std::find(c.launch_threads.begin(), c.launch_threads.end(), key) != c.launch_threads.end();
            if (act.api_ns == 0 && act.nvtx_ns == 0 && !launcher) continue;
            if (act.top_ns < gap.duration() - act.top_ns) {  // top * 2 < duration, without overflow
                act.top_activity = "host code (no CUDA call)";
                act.top_ns = gap.duration() - act.api_ns;
            }
            gap.threads.push_back(std::move(act));
        }
        std::sort(gap.threads.begin(), gap.threads.end(), [](const ThreadActivity& a, const ThreadActivity& b) {
            return a.api_ns + a.nvtx_ns > b.api_ns + b.nvtx_ns;
        });
        if (gap.threads.size() > 4) gap.threads.resize(4);
    }
    return all;
}

struct Span {
    int64_t first = INT64_MAX, last = INT64_MIN;
    void add(int64_t s, int64_t e) {
        first = std::min(first, s);
        last = std::max(last, e);
    }
};

// The steady state: inside steps after the first when steps are known, else the middle 80% of the window.
std::vector<Interval> steady_state(const Context& c, const StepSet& steps) {
    std::vector<Interval> out;
    if (steps.steps.size() >= 2) {
        for (size_t i = 0; i < steps.steps.size(); ++i) {
            // The first step of each process is warm-up.
            if (i == 0 || steps.steps[i].process != steps.steps[i - 1].process) continue;
            out.push_back({steps.steps[i].start, steps.steps[i].end});
        }
        return interval_union(std::move(out));
    }
    int64_t len = c.window.length();
    out.push_back({c.window.start + len / 10, c.window.end - len / 10});
    return out;
}

bool inside(const std::vector<Interval>& set, int64_t t) {
    auto it = std::upper_bound(set.begin(), set.end(), t, [](int64_t x, const Interval& i) { return x < i.end; });
    return it != set.end() && it->start <= t;
}

void add_finding(std::vector<Finding>& out, Finding f, const Span& span) {
    f.first = span.first == INT64_MAX ? 0 : span.first;
    f.last = span.last == INT64_MIN ? f.first : span.last;
    out.push_back(std::move(f));
}

// The call sites of API calls (model/call_sites.h), per process, made when a finding first asks; nullptr for a
// call without one (a trace recorded without --backtrace/--cudabacktrace has none).
class SiteLookup {
public:
    explicit SiteLookup(const Run& run) : run_(run), sites_(run.processes.size()) {}
    const ResolvedStack* of(size_t process, uint32_t correlation) {
        const ProcessTrace& p = run_.processes[process];
        if (p.backtraces.empty() || !correlation) return nullptr;
        auto& s = sites_[process];
        if (!s) s = std::make_unique<CallSites>(p);
        const ResolvedStack* r = s->of_correlation(correlation);
        return r && !r->frames.empty() ? r : nullptr;
    }

private:
    const Run& run_;
    std::vector<std::unique_ptr<CallSites>> sites_;
};

// A finding's occurrences per call site; top() the heaviest kFindingSites.
struct SiteTally {
    std::map<std::pair<std::string, std::string>, FindingSite> by_site;
    void add(const ResolvedStack* r, int64_t ns) {
        if (!r) return;
        FindingSite& f = by_site[{r->site, r->function}];
        f.site = r->site;
        f.function = r->function;
        ++f.count;
        f.time_ns = sat_add(f.time_ns, ns);
    }
    std::vector<FindingSite> top() const {
        std::vector<FindingSite> v;
        for (const auto& [k, f] : by_site) v.push_back(f);
        std::stable_sort(v.begin(), v.end(), [](const FindingSite& a, const FindingSite& b) {
            return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.count > b.count;
        });
        if (v.size() > kFindingSites) v.resize(kFindingSites);
        return v;
    }
};

// What the copies of the run add up to, per kind the copy rules look at.
struct CopyTally {
    size_t pageable = 0, small = 0, sync = 0, copies = 0;
    int64_t pageable_ns = 0, small_ns = 0, sync_ns = 0;
    uint64_t pageable_bytes = 0, small_bytes = 0;
    Span pageable_span, small_span, sync_span;
    SiteTally pageable_sites, sync_sites;
};

CopyTally tally_copies(const Context& c, SiteLookup& sites) {
    CopyTally n;
    for (size_t pi = 0; pi < c.run.processes.size(); ++pi) {
        const ProcessTrace& proc = c.run.processes[pi];
        for (const trace::Memcpy& m : proc.memcpys) {
            if (!timed(m.start, m.end)) continue;
            int64_t s = proc.to_run_ns(m.start), e = proc.to_run_ns(m.end), d = e - s;
            ++n.copies;
            bool host_side = m.copy_kind == trace::MemcpyKind::HtoD || m.copy_kind == trace::MemcpyKind::DtoH;
            if (host_side && (m.src_kind == trace::MemoryKind::Pageable || m.dst_kind == trace::MemoryKind::Pageable)) {
                ++n.pageable;
                n.pageable_ns = sat_add(n.pageable_ns, d);
                n.pageable_bytes += m.bytes;
                n.pageable_span.add(s, e);
                n.pageable_sites.add(sites.of(pi, m.correlation), d);
            }
            if (m.bytes < kSmallCopyBytes) {
                ++n.small;
                n.small_ns = sat_add(n.small_ns, d);
                n.small_bytes += m.bytes;
                n.small_span.add(s, e);
            }
            if (!m.async) {
                ++n.sync;
                n.sync_ns = sat_add(n.sync_ns, d);
                n.sync_span.add(s, e);
                n.sync_sites.add(sites.of(pi, m.correlation), d);
            }
        }
    }
    return n;
}

// Copies from pageable host memory, many small copies, synchronous copies: each when it is frequent or costly.
void copy_findings(const Context& c, double window, SiteLookup& sites, std::vector<Finding>& out) {
    const CopyTally n = tally_copies(c, sites);
    if (n.pageable && (n.pageable >= kMinOccurrences || static_cast<double>(n.pageable_ns) >= kMinShareOfWindow * window)) {
        add_finding(out, {"pageable_memcpy", "H<->D copies from pageable host memory", static_cast<double>(n.pageable),
                          "count",
                          std::to_string(n.pageable) + " copies, " + std::to_string(n.pageable_bytes) + " bytes, " +
                              t(static_cast<double>(n.pageable_ns)) + " of copy time (" +
                              pct(100.0 * static_cast<double>(n.pageable_ns) / window) + " of the window)",
                          "allocate the host buffers pinned (cudaMallocHost / cudaHostAlloc, or pin_memory=True in "
                          "a PyTorch DataLoader): pageable copies are staged through a driver buffer and cannot "
                          "overlap with kernels",
                          n.pageable_ns, 0, 0, n.pageable_sites.top()},
                    n.pageable_span);
    }
    if (n.small >= kSmallCopyCount) {
        add_finding(out, {"small_copies", "many small copies", static_cast<double>(n.small), "count",
                          std::to_string(n.small) + " of " + std::to_string(n.copies) + " copies move less than " +
                              std::to_string(kSmallCopyBytes / 1024) + " KiB (average " +
                              std::to_string(n.small_bytes / n.small) + " bytes), " + t(static_cast<double>(n.small_ns)) +
                              " of copy time",
                          "batch small transfers into one buffer and copy it once; each copy pays a fixed cost of "
                          "several microseconds",
                          n.small_ns, 0, 0},
                    n.small_span);
    }
    if (n.sync && (n.sync >= kMinOccurrences || static_cast<double>(n.sync_ns) >= kMinShareOfWindow * window)) {
        add_finding(out, {"sync_copies", "synchronous copies (default-stream cudaMemcpy)", static_cast<double>(n.sync),
                          "count",
                          std::to_string(n.sync) + " copies issued by a synchronous API, " +
                              t(static_cast<double>(n.sync_ns)) + " of copy time; the host waits for each",
                          "use cudaMemcpyAsync on a non-default stream with pinned host memory, and synchronise "
                          "once where the result is needed",
                          n.sync_ns, 0, 0, n.sync_sites.top()},
                    n.sync_span);
    }
}

// Kernels with fewer blocks than the device has SMs, when they take a real share of kernel time.
void tiny_grid_finding(const Context& c, std::vector<Finding>& out) {
    int64_t kernel_ns = 0, tiny_ns = 0;
    size_t tiny = 0;
    Span span;
    uint32_t sms_seen = 0;
    for (const ProcessTrace& proc : c.run.processes) {
        std::map<uint32_t, uint32_t> sms;
        for (const auto& d : proc.devices) sms[d.id] = d.sm_count;
        for (const trace::Kernel& k : proc.kernels) {
            if (!timed(k.start, k.end)) continue;
            int64_t d = sat_duration(k.start, k.end);
            kernel_ns = sat_add(kernel_ns, d);
            auto it = sms.find(k.device);
            if (it == sms.end() || it->second == 0) continue;
            sms_seen = it->second;
            int64_t blocks = int64_t{k.grid_x} * std::max(k.grid_y, 1) * std::max(k.grid_z, 1);
            if (blocks < it->second) {
                ++tiny;
                tiny_ns = sat_add(tiny_ns, d);
                span.add(proc.to_run_ns(k.start), proc.to_run_ns(k.end));
            }
        }
    }
    double share = kernel_ns > 0 ? static_cast<double>(tiny_ns) / static_cast<double>(kernel_ns) : 0;
    if (tiny && share >= kTinyGridTimeShare) {
        add_finding(out, {"tiny_grids", "kernels with fewer blocks than SMs", 100.0 * share, "%",
                          std::to_string(tiny) + " launches with fewer blocks than the " +
                              std::to_string(sms_seen) + " SMs take " + pct(100.0 * share) + " of kernel time (" +
                              t(static_cast<double>(tiny_ns)) + ")",
                          "give these kernels more parallelism (smaller blocks, more of them, or split the work) "
                          "or run independent ones concurrently on several streams",
                          tiny_ns, 0, 0},
                    span);
    }
}

// One stream does almost everything while others exist and the device has idle time.
void single_busy_stream_findings(const Context& c, const std::vector<DeviceUtilisation>& devs, std::vector<Finding>& out) {
    for (const DeviceUtilisation& d : devs) {
        if (d.streams < 2 || d.busy_pct >= kGpuBoundPct) continue;
        std::map<uint32_t, int64_t> per_stream;
        Span span;
        int64_t sum = 0;
        for (const ProcessTrace& proc : c.run.processes) {
            if (proc.header.hostname != d.key.host) continue;
            auto add = [&](uint32_t dev, uint32_t stream, trace::Timestamp s, trace::Timestamp e) {
                if (dev != d.key.device || !timed(s, e)) return;
                per_stream[stream] = sat_add(per_stream[stream], sat_duration(s, e));
                sum = sat_add(sum, sat_duration(s, e));
                span.add(proc.to_run_ns(s), proc.to_run_ns(e));
            };
            for (const auto& k : proc.kernels) add(k.device, k.stream, k.start, k.end);
            for (const auto& m : proc.memcpys) add(m.device, m.stream, m.start, m.end);
            for (const auto& m : proc.memsets) add(m.device, m.stream, m.start, m.end);
        }
        auto top = std::max_element(per_stream.begin(), per_stream.end(),
                                    [](auto& a, auto& b) { return a.second < b.second; });
        double share = sum > 0 ? static_cast<double>(top->second) / static_cast<double>(sum) : 0;
        if (share >= kSingleStreamShare) {
            add_finding(out, {"single_busy_stream", "one stream carries the work while others idle", 100.0 * share,
                              "%",
                              "stream " + std::to_string(top->first) + " on GPU " + std::to_string(d.key.device) +
                                  " holds " + pct(100.0 * share) + " of GPU operation time across " +
                                  std::to_string(d.streams) + " streams; the GPU is busy " + pct(d.busy_pct),
                              "move independent kernels and copies to other streams so they overlap (copy/compute "
                              "overlap needs pinned memory and cudaMemcpyAsync)",
                              top->second, 0, 0},
                        span);
        }
    }
}

// Allocation and implicit synchronisation in the steady-state loop.
void steady_state_call_findings(const Context& c, const StepSet& steps, SiteLookup& sites, std::vector<Finding>& out) {
    std::vector<Interval> steady = steady_state(c, steps);
    size_t alloc = 0, implicit = 0;
    int64_t alloc_ns = 0, implicit_ns = 0;
    Span alloc_span, implicit_span;
    SiteTally alloc_sites, implicit_sites;
    std::map<std::string, size_t> implicit_names;
    for (const auto& [key, h] : c.threads) {
        const ProcessTrace& proc = c.run.processes[key.process];
        const NameFlags& names = c.names[key.process];
        for (auto& [i, a] : h.apis) {
            uint8_t f = names(a->name);
            if (!(f & (kAllocName | kImplicitSyncName)) || !inside(steady, i.start)) continue;
            std::string_view name = proc.str(a->name);
            if (f & kAllocName) {
                ++alloc;
                alloc_ns = sat_add(alloc_ns, i.length());
                alloc_span.add(i.start, i.end);
                alloc_sites.add(sites.of(key.process, a->correlation), i.length());
            }
            if (f & kImplicitSyncName) {
                ++implicit;
                implicit_ns = sat_add(implicit_ns, i.length());
                implicit_span.add(i.start, i.end);
                implicit_sites.add(sites.of(key.process, a->correlation), i.length());
                ++implicit_names[std::string(name)];
            }
        }
    }
    std::string where = steps.steps.size() >= 2 ? "inside steps after the first" : "in the middle 80% of the run";
    if (alloc > 0) {
        add_finding(out, {"alloc_in_loop", "cudaMalloc/cudaFree in the steady-state loop",
                          static_cast<double>(alloc), "count",
                          std::to_string(alloc) + " allocation calls " + where + ", " +
                              t(static_cast<double>(alloc_ns)) + " of host time",
                          "allocate once before the loop and reuse the buffers (or use a caching allocator / "
                          "cudaMallocAsync with a memory pool); cudaFree synchronises the device",
                          alloc_ns, 0, 0, alloc_sites.top()},
                    alloc_span);
    }
    if (implicit > 0) {
        std::string names;
        for (auto& [n, k] : implicit_names) names += (names.empty() ? "" : ", ") + n + " x" + std::to_string(k);
        add_finding(out, {"implicit_sync", "calls that synchronise the device implicitly",
                          static_cast<double>(implicit), "count",
                          std::to_string(implicit) + " calls " + where + " (" + names + "), " +
                              t(static_cast<double>(implicit_ns)) + " of host time",
                          "move these calls out of the loop, or use their asynchronous forms (cudaMemsetAsync, "
                          "cudaFreeAsync) on a stream",
                          implicit_ns, 0, 0, implicit_sites.top()},
                    implicit_span);
    }
}

// Records lost: every number above is then a lower bound. Each way of losing records has its own remedy, named
// with the setting that really controls it (docs/environment.md). NVTX ranges left open are not lost (they are in
// the trace, "never ended": model/model.h drop_loses_records), so they never make this finding.
void dropped_records_finding(const Context& c, std::vector<Finding>& out) {
    uint64_t by_source[4] = {};
    size_t unfinished = 0, damaged = 0;
    for (const ProcessTrace& proc : c.run.processes) {
        for (const trace::Dropped& d : proc.dropped)
            if (drop_loses_records(d.source)) by_source[std::min<size_t>(static_cast<size_t>(d.source), 3)] += d.count;
        if (!proc.end) ++unfinished;
        if (proc.read_stats.damaged()) ++damaged;
    }
    const uint64_t cupti = by_source[static_cast<size_t>(trace::DropSource::CuptiBuffer)];
    const uint64_t queue = by_source[static_cast<size_t>(trace::DropSource::CollectorQueue)];
    const uint64_t write = by_source[static_cast<size_t>(trace::DropSource::WriteError)];
    const uint64_t dropped = cupti + queue + write;
    if (!dropped && !unfinished && !damaged) return;
    std::vector<std::string> ev, fix;
    if (cupti) {
        ev.push_back(std::to_string(cupti) + " records dropped by CUPTI (its device buffers were full)");
        fix.push_back("give CUPTI larger device buffers: GPROF_CUPTI_DEVICE_BUFFER_MB=16 (or more) in gprof-run's "
                      "environment (default 3 MiB per context)");
    }
    if (queue) {
        ev.push_back(std::to_string(queue) + " records dropped by the collector (its buffers were full)");
        fix.push_back("record less at a time: a capture range (-c nvtx:NAME, -c cudaProfilerApi) or -d SEC");
    }
    if (write) {
        ev.push_back(std::to_string(write) + " records could not be written (disk full or I/O error)");
        fix.push_back("free space where the run directory is (-o)");
    }
    if (unfinished) {
        ev.push_back(std::to_string(unfinished) + " process(es) did not finish their trace");
        fix.push_back("let the program exit normally (a SIGKILL or a crash loses the last flush period)");
    }
    if (damaged) ev.push_back(std::to_string(damaged) + " trace(s) damaged");
    auto join = [](const std::vector<std::string>& v, const char* sep) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
        return s;
    };
    add_finding(out, {"dropped_records", "records were lost: figures are lower bounds", static_cast<double>(dropped),
                      "count", join(ev, ", "), fix.empty() ? "check the disk and the traces' warnings" : join(fix, "; "),
                      0, 0, 0},
                Span{});
}

// Lost records first (they qualify every other figure), then by the time involved.
void rank_findings(std::vector<Finding>& out) {
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
        if (a.rule == "dropped_records" || b.rule == "dropped_records") return a.rule == "dropped_records" && b.rule != a.rule;
        return a.time_ns > b.time_ns;
    });
}

std::vector<Finding> findings(const Context& c, const StepSet& steps, const std::vector<DeviceUtilisation>& devs) {
    std::vector<Finding> out;
    const double window = static_cast<double>(std::max<int64_t>(c.window.length(), 1));
    SiteLookup sites(c.run);
    copy_findings(c, window, sites, out);
    tiny_grid_finding(c, out);
    single_busy_stream_findings(c, devs, out);
    steady_state_call_findings(c, steps, sites, out);
    dropped_records_finding(c, out);
    rank_findings(out);
    return out;
}

StepView step_view(const Context& c, const StepSet& set, const AnalysisOptions& opt) {
    StepView v;
    v.source = set.source;
    v.pattern = set.pattern;
    v.steps = set.steps;
    if (v.steps.empty()) return v;
    std::vector<double> d;
    for (const Step& s : v.steps) {
        d.push_back(static_cast<double>(s.duration()));
        v.total_ns += s.duration();
        int64_t gpu = 0;
        for (const auto& [key, busy] : c.busy) gpu += length_within(busy, {s.start, s.end});
        v.gpu_ns.push_back(gpu);
        v.gpu_total_ns += gpu;
    }
    v.min = *std::min_element(d.begin(), d.end());
    v.max = *std::max_element(d.begin(), d.end());
    v.mean = mean_of(d);
    v.median = median_of(d);
    v.p90 = percentile_of(d, 0.9);
    v.stddev = stddev_of(d);
    if (opt.batch_size && v.total_ns > 0)
        v.ips = *opt.batch_size * static_cast<double>(v.steps.size()) / (static_cast<double>(v.total_ns) / 1e9);

    // Modules: the outermost NVTX ranges inside each step on the step's thread (Paddle's Model Summary rows).
    std::map<std::string, StepModule> modules;
    int64_t module_cpu = 0, module_gpu = 0;
    std::regex step_re(set.pattern, std::regex::ECMAScript | std::regex::icase);
    // Whether a range name is a step name, once per string of each process (-1 = not yet known).
    std::vector<std::vector<int8_t>> is_step(c.run.processes.size());
    auto step_name = [&](size_t p, trace::StringId id, const std::string& name) {
        std::vector<int8_t>& known = is_step[p];
        if (known.empty()) known.assign(c.run.processes[p].strings.size(), -1);
        if (id >= known.size()) return std::regex_match(name, step_re);
        if (known[id] < 0) known[id] = std::regex_match(name, step_re) ? 1 : 0;
        return known[id] == 1;
    };
    for (const Step& s : v.steps) {
        if (s.tid == 0) continue;  // profiler windows have no thread
        auto it = c.threads.find({s.process, s.tid});
        if (it == c.threads.end()) continue;
        const HostThread& h = it->second;
        const ProcessTrace& proc = c.run.processes[s.process];
        int64_t covered_until = INT64_MIN;
        // Ranges are sorted by start: the first one starting inside the step by binary search.
        auto from = std::lower_bound(h.ranges.begin(), h.ranges.end(), s.start,
                                     [](const auto& r, int64_t x) { return r.first.start < x; });
        for (auto ri = from; ri != h.ranges.end(); ++ri) {
            const auto& [i, r] = *ri;
            if (i.start >= s.end) break;
            if (i.end > s.end || (i.start == s.start && i.end == s.end)) continue;
            std::string name(proc.str(r->name));
            if (step_name(s.process, r->name, name)) continue;
            if (i.start < covered_until) continue;  // nested inside a module already counted
            covered_until = i.end;
            StepModule& m = modules[name];
            m.name = name;
            m.cpu_ns += i.length();
            ++m.calls;
            module_cpu += i.length();
            std::vector<Interval> gpu;
            auto first = std::lower_bound(h.apis.begin(), h.apis.end(), i.start,
                                          [](const auto& a, int64_t x) { return a.first.start < x; });
            for (auto a = first; a != h.apis.end() && a->first.start < i.end; ++a) {
                for (const GpuOpRef& op : proc.gpu_ops_for_correlation(a->second->correlation)) {
                    trace::Timestamp os = 0, oe = 0;
                    if (op.kind == GpuOpKind::Kernel) {
                        os = proc.kernels[op.index].start;
                        oe = proc.kernels[op.index].end;
                    } else if (op.kind == GpuOpKind::Memcpy) {
                        os = proc.memcpys[op.index].start;
                        oe = proc.memcpys[op.index].end;
                    } else if (op.kind == GpuOpKind::Memset) {
                        os = proc.memsets[op.index].start;
                        oe = proc.memsets[op.index].end;
                    }
                    if (timed(os, oe)) gpu.push_back({proc.to_run_ns(os), proc.to_run_ns(oe)});
                }
            }
            int64_t g = total_length(interval_union(std::move(gpu)));
            m.gpu_ns += g;
            module_gpu += g;
        }
    }
    for (auto& [name, m] : modules) v.modules.push_back(m);
    std::sort(v.modules.begin(), v.modules.end(), [](auto& a, auto& b) { return a.cpu_ns > b.cpu_ns; });
    if (!v.modules.empty()) {
        StepModule others{"Others", std::max<int64_t>(0, v.total_ns - module_cpu),
                          std::max<int64_t>(0, v.gpu_total_ns - module_gpu), v.steps.size()};
        v.modules.push_back(others);
    }
    return v;
}

}  // namespace

const char* verdict_id(Verdict v) {
    switch (v) {
        case Verdict::GpuBound: return "gpu_bound";
        case Verdict::CpuLaunchBound: return "cpu_launch_bound";
        case Verdict::IoBound: return "io_bound";
        case Verdict::SyncBound: return "sync_bound";
        case Verdict::Balanced: return "balanced";
        case Verdict::NoGpuWork: return "no_gpu_work";
    }
    return "unknown";
}

const char* verdict_title(Verdict v) {
    switch (v) {
        case Verdict::GpuBound: return "GPU-bound";
        case Verdict::CpuLaunchBound: return "CPU/launch-bound";
        case Verdict::IoBound: return "IO/data-bound";
        case Verdict::SyncBound: return "synchronisation-bound";
        case Verdict::Balanced: return "balanced";
        case Verdict::NoGpuWork: return "no GPU work";
    }
    return "unknown";
}

std::map<DeviceKey, std::vector<Interval>> gpu_busy_by_device(const Run& run) {
    std::map<DeviceKey, std::vector<Interval>> raw;
    std::map<DeviceKey, std::vector<size_t>> runs;  // where each (process, record kind) run starts in raw's vector
    for (const ProcessTrace& proc : run.processes) {
        // The device's vector is looked up only when the device changes from one record to the next.
        std::vector<Interval>* cur = nullptr;
        uint32_t cur_dev = 0;
        auto add = [&](uint32_t dev, trace::Timestamp s, trace::Timestamp e) {
            if (!timed(s, e)) return;
            if (!cur || dev != cur_dev) {
                cur = &raw[{proc.header.hostname, dev}];
                cur_dev = dev;
            }
            cur->push_back({proc.to_run_ns(s), proc.to_run_ns(e)});
        };
        auto mark_runs = [&] {
            for (auto& [k, v] : raw) {
                auto& r = runs[k];
                if (r.empty() || r.back() != v.size()) r.push_back(v.size());
            }
        };
        mark_runs();
        for (const auto& k : proc.kernels) add(k.device, k.start, k.end);
        mark_runs();
        cur = nullptr;
        for (const auto& m : proc.memcpys) add(m.device, m.start, m.end);
        mark_runs();
        cur = nullptr;
        for (const auto& m : proc.memsets) add(m.device, m.start, m.end);
        mark_runs();
        // Graph launches traced as a whole (graph-level tracing): the launch's interval is its nodes' work.
        cur = nullptr;
        for (size_t i = 0; i < proc.graph_launches.size(); ++i)
            if (proc.graph_launch_is_gpu_work(i))
                add(proc.graph_launches[i].device, proc.graph_launches[i].start, proc.graph_launches[i].end);
        mark_runs();
    }
    // Each run is usually in time order already: merging sorted runs is linear, and interval_union then finds its
    // input sorted. The union does not depend on the order, so this is only faster.
    auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
    std::map<DeviceKey, std::vector<Interval>> out;
    for (auto& [k, v] : raw) {
        std::vector<size_t> r = runs[k];
        if (r.empty() || r.front() != 0) r.insert(r.begin(), 0);
        if (r.back() != v.size()) r.push_back(v.size());
        bool runs_sorted = true;
        for (size_t i = 0; i + 1 < r.size() && runs_sorted; ++i)
            runs_sorted = std::is_sorted(v.begin() + static_cast<std::ptrdiff_t>(r[i]),
                                         v.begin() + static_cast<std::ptrdiff_t>(r[i + 1]), by_start);
        if (runs_sorted)
            for (size_t i = 1; i + 1 < r.size(); ++i)
                std::inplace_merge(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(r[i]),
                                   v.begin() + static_cast<std::ptrdiff_t>(r[i + 1]), by_start);
        out[k] = interval_union(std::move(v));
    }
    return out;
}

Interval capture_window(const Run& run) {
    Interval w{INT64_MAX, INT64_MIN};
    for (const ProcessTrace& proc : run.processes) {
        if (proc.first_ns == 0) continue;
        w.start = std::min(w.start, proc.to_run_ns(proc.first_ns));
        w.end = std::max(w.end, proc.to_run_ns(proc.last_ns));
    }
    if (w.start > w.end) return {0, 0};
    return w;
}

AnalysisResult analyze_run(const Run& run, const AnalysisOptions& options) {
    AnalysisResult a;
    Context c = build_context(run);
    a.window = c.window;
    StepSet steps;
    try {
        steps = detect_steps(run, options.step_pattern);
    } catch (const std::regex_error& e) {
        throw std::invalid_argument("invalid --step-range pattern '" + options.step_pattern + "': " + e.what());
    }
    a.devices = utilisation(c);
    a.evidence = evidence(c, a.devices, steps);
    decide(a);
    a.gaps = idle_gaps(c, options.max_gaps);
    a.findings = findings(c, steps, a.devices);
    a.steps = step_view(c, steps, options);
    a.warnings = run.all_warnings();
    return a;
}

}  // namespace gprof::report
