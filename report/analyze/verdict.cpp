// Device utilisation, the verdict with its evidence, and the largest GPU idle gaps.
#include "analyze/run_parts.h"

namespace gprof::report::analysis_run {

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
        // Which code (issue 35): the CPU samples' top functions and Python lines, and where the host blocked.
        if (!a.host.functions.empty()) why << ". The host's CPU time went to " << frames_text(a.host.functions);
        if (!a.host.python_lines.empty()) why << "; Python lines " << frames_text(a.host.python_lines);
        if (!a.host.waits.empty()) why << "; it blocked in " << waits_text(a.host.waits);
    } else {
        a.verdict = Verdict::Balanced;
        why << busy_text(e, "between " + format_fixed(kLaunchBoundPct, 0) + "% and " + format_fixed(kGpuBoundPct, 0) + "%")
            << ": no single bottleneck dominates; look at the largest idle gaps";
    }
    a.verdict_reason = why.str();
}

std::vector<IdleGap> idle_gaps(const Context& c, size_t max_gaps) {
    if (max_gaps == 0) return {};  // every gap would be ranked for none (the summary's section shows none)
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

}  // namespace gprof::report::analysis_run
