#include "analyze/host.h"

#include <algorithm>
#include <map>

#include "model/cpu_samples.h"
#include "model/saturate.h"
#include "output/table.h"

namespace gprof::report {

struct HostActivity::Impl {
    const Run& run;
    std::vector<std::unique_ptr<SampleStacks>> stacks;  // by process, made when first needed
    explicit Impl(const Run& r) : run(r), stacks(r.processes.size()) {}
    SampleStacks& of(size_t i) {
        if (!stacks[i]) stacks[i] = std::make_unique<SampleStacks>(run.processes[i]);
        return *stacks[i];
    }
};

HostActivity::HostActivity(const Run& run) : impl_(std::make_unique<Impl>(run)) {}
HostActivity::~HostActivity() = default;

namespace {

std::vector<SampledFrame> top_of(const std::map<std::pair<std::string, std::string>, std::pair<uint64_t, int64_t>>& m,
                                 int64_t total_ns, size_t top) {
    std::vector<SampledFrame> out;
    for (const auto& [k, v] : m) out.push_back({k.first, k.second, v.first, v.second, 0});
    std::stable_sort(out.begin(), out.end(), [](const SampledFrame& a, const SampledFrame& b) { return a.cpu_ns > b.cpu_ns; });
    if (out.size() > top) out.resize(top);
    for (auto& f : out) f.pct = total_ns > 0 ? 100.0 * static_cast<double>(f.cpu_ns) / static_cast<double>(total_ns) : 0;
    return out;
}

}  // namespace

HostProfile HostActivity::profile(const Interval& span, const std::string* host, size_t top) {
    HostProfile h;
    std::map<std::pair<std::string, std::string>, std::pair<uint64_t, int64_t>> functions, lines;
    struct Wait {
        size_t calls = 0;
        int64_t ns = 0;
        std::map<std::string, int64_t> sites;
    };
    std::map<std::string, Wait> waits;
    for (size_t pi = 0; pi < impl_->run.processes.size(); ++pi) {
        const ProcessTrace& p = impl_->run.processes[pi];
        if (host && p.header.hostname != *host) continue;
        if (p.cpu_samples.empty() && p.osrt_calls.empty()) continue;
        SampleStacks& stacks = impl_->of(pi);
        for (const auto& s : p.cpu_samples) {
            int64_t at = p.to_run_ns(s.timestamp);
            if (!s.timestamp || at < span.start || at >= span.end) continue;
            auto ns = static_cast<int64_t>(sample_cpu_ns(s));
            h.samples += s.periods;
            h.cpu_ns = sat_add(h.cpu_ns, ns);
            const auto& frames = stacks.of(s);
            if (frames.empty()) continue;
            auto& f = functions[sample_key(frames.front(), SampleKey::Line)];
            f.first += s.periods;
            f.second = sat_add(f.second, ns);
            for (const auto& fr : frames)
                if (fr.python) {
                    auto& l = lines[sample_key(fr, SampleKey::Line)];
                    l.first += s.periods;
                    l.second = sat_add(l.second, ns);
                    break;
                }
        }
        for (const auto& c : p.osrt_calls) {
            if (!c.start) continue;
            Interval i{p.to_run_ns(c.start), p.to_run_ns(std::max(c.end, c.start))};
            int64_t o = overlap(i, span);
            if (o <= 0) continue;
            Wait& w = waits[std::string(p.str(c.name))];
            ++w.calls;
            w.ns = sat_add(w.ns, o);
            if (c.stack || c.py_stack) {
                const auto& frames = stacks.of(c);
                if (!frames.empty()) w.sites[frames.front().location()] += o;
            }
        }
    }
    h.functions = top_of(functions, h.cpu_ns, top);
    h.python_lines = top_of(lines, h.cpu_ns, top);
    for (auto& [name, w] : waits) {
        HostWait hw{name, "", w.calls, w.ns};
        int64_t best = -1;
        for (auto& [site, ns] : w.sites)
            if (ns > best) hw.site = site, best = ns;
        h.waits.push_back(std::move(hw));
    }
    std::stable_sort(h.waits.begin(), h.waits.end(), [](const HostWait& a, const HostWait& b) { return a.ns > b.ns; });
    if (h.waits.size() > top) h.waits.resize(top);
    return h;
}

std::string frames_text(const std::vector<SampledFrame>& frames, size_t max) {
    std::string out;
    for (size_t i = 0; i < frames.size() && i < max; ++i) {
        const auto& f = frames[i];
        out += (out.empty() ? "" : ", ") + f.name + (f.location.empty() ? "" : " (" + f.location + ")") + " " +
               format_fixed(f.pct, 0) + "%";
    }
    return out;
}

std::string waits_text(const std::vector<HostWait>& waits, size_t max) {
    std::string out;
    for (size_t i = 0; i < waits.size() && i < max; ++i) {
        const auto& w = waits[i];
        out += (out.empty() ? "" : ", ") + w.name + " " + format_time_auto(static_cast<double>(w.ns)) +
               (w.site.empty() ? "" : " at " + w.site);
    }
    return out;
}

}  // namespace gprof::report
