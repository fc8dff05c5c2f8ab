// How the summary and the timeline name and group processes: the helpers folded into one line (the same rule on the
// aggregate and on the loaded model), a process's short name, why a program it started could not be traced.
#include <algorithm>
#include <map>
#include <set>

#include "model/aggregator.h"

namespace gprof::report {

// Why a program a process started could not be traced (Exec records), in a few words.
std::string aggregation::untraced_reason(trace::ExecImage image) {
    switch (image) {
        case trace::ExecImage::Static: return "a statically linked program that cannot be traced";
        case trace::ExecImage::Foreign: return "a program of another architecture that cannot be traced";
        case trace::ExecImage::Privileged: return "a set-user-ID program the collector cannot enter";
        case trace::ExecImage::NoCollector: return "its environment no longer loads the collector";
        case trace::ExecImage::Traced: break;
    }
    return "traced";
}

bool process_has_news(const ProcessInfo& p) {
    return !p.complete || p.ended_by_signal || p.dropped || p.read_stats.damaged() ||
           std::any_of(p.status_lines.begin(), p.status_lines.end(),
                       [](const std::string& s) { return s.find(" info: ") == std::string::npos; });
}

std::vector<bool> helper_processes(const std::vector<ProcessInfo>& processes) {
    std::set<ProcessKey> traced;  // a parent is the process of that pid on the same host
    for (const auto& p : processes) traced.insert(process_key(p.header));
    std::vector<bool> helper(processes.size(), false);
    for (size_t i = 0; i < processes.size(); ++i) {
        const ProcessInfo& p = processes[i];
        ProcessKey parent = process_key(p.header);
        parent.pid = p.header.ppid;
        bool started_by_traced = p.header.ppid != p.header.pid && traced.count(parent);
        helper[i] = p.quiet() && started_by_traced && !process_has_news(p);
    }
    return helper;
}

std::string process_short_name(const ProcessInfo& p) { return process_short_name(p.header); }

std::vector<bool> helper_processes(const Run& run) {
    std::set<ProcessKey> traced;
    for (const auto& p : run.processes) traced.insert(process_key(p.header));
    std::vector<bool> helper(run.processes.size(), false);
    for (size_t i = 0; i < run.processes.size(); ++i) {
        const ProcessTrace& p = run.processes[i];
        ProcessKey parent = process_key(p.header);
        parent.pid = p.header.ppid;
        bool started_by_traced = p.header.ppid != p.header.pid && traced.count(parent);
        bool quiet = p.api_calls.empty() && p.nvtx.empty() && p.kernels.empty() && p.memcpys.empty() &&
                     p.memsets.empty() && p.graph_launches.empty();
        bool news = !p.end || p.end->signal || p.dropped_total() || p.read_stats.damaged() ||
                    std::any_of(p.statuses.begin(), p.statuses.end(),
                                [](const trace::Status& s) { return s.level != trace::StatusLevel::Info; });
        helper[i] = quiet && started_by_traced && !news;
    }
    return helper;
}

std::string process_short_name(const trace::TraceHeader& h) {
    const std::string& path = h.argv.empty() || h.argv[0].empty() ? h.executable : h.argv[0];
    size_t slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return name.empty() ? "pid " + std::to_string(h.pid) : name;
}

std::string helpers_line(const std::map<std::string, size_t>& folded) {
    std::vector<std::pair<std::string, size_t>> names(folded.begin(), folded.end());
    std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    size_t total = 0;
    std::string list;
    for (const auto& [name, n] : names) {
        total += n;
        list += (list.empty() ? "" : ", ") + name + " \u00d7" + std::to_string(n);
    }
    return std::to_string(total) + (total == 1 ? " helper process" : " helper processes") +
           " with no GPU or NVTX activity: " + list;
}

}  // namespace gprof::report
