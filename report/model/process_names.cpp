// How the summary names and groups processes: the helpers folded into one line, a process's short name, why a
// program it started could not be traced.
#include <algorithm>
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

std::vector<bool> helper_processes(const std::vector<ProcessInfo>& processes) {
    std::set<ProcessKey> traced;  // a parent is the process of that pid on the same host
    for (const auto& p : processes) traced.insert(process_key(p.header));
    std::vector<bool> helper(processes.size(), false);
    for (size_t i = 0; i < processes.size(); ++i) {
        const ProcessInfo& p = processes[i];
        ProcessKey parent = process_key(p.header);
        parent.pid = p.header.ppid;
        bool started_by_traced = p.header.ppid != p.header.pid && traced.count(parent);
        bool news = !p.complete || p.ended_by_signal || p.dropped || p.read_stats.damaged() ||
                    std::any_of(p.status_lines.begin(), p.status_lines.end(), [](const std::string& s) {
                        return s.find(" info: ") == std::string::npos;
                    });
        helper[i] = p.quiet() && started_by_traced && !news;
    }
    return helper;
}

std::string process_short_name(const ProcessInfo& p) {
    const std::string& path = p.header.argv.empty() || p.header.argv[0].empty() ? p.header.executable : p.header.argv[0];
    size_t slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return name.empty() ? "pid " + std::to_string(p.header.pid) : name;
}

}  // namespace gprof::report
