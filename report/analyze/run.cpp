// The analysis itself: utilisation, verdict, idle gaps, findings, steps (the parts: run_parts.h). Rules and thresholds are documented in
// docs/analysis.md; keep the two in step.
#include "analyze/run_parts.h"

namespace gprof::report {

namespace analysis_run {

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

}  // namespace analysis_run

using namespace analysis_run;

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

bool summary_section_reads_range(std::string_view name) {
    // detect_steps's default regex, and the names NameFlags marks kDataLoadingName.
    static const std::regex step(kDefaultStepPattern, std::regex::ECMAScript | std::regex::icase);
    return std::regex_match(std::string(name), step) || is_data_loading_range(name);
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
    HostActivity host(run);
    a.host = host.profile(c.window);
    decide(a);
    a.gaps = idle_gaps(c, options.max_gaps);
    for (IdleGap& g : a.gaps) g.host = host.profile({g.start, g.end}, &g.device.host, 3);
    a.findings = findings(c, steps, a.devices);
    a.steps = step_view(c, steps, options);
    a.warnings = run.all_warnings();
    return a;
}

}  // namespace gprof::report
