#include "model/identity.h"

#include <set>

#include "model/model.h"

namespace gprof::report {

ProcessKey process_key(const trace::TraceHeader& h) { return {h.hostname, h.boot_id, h.pid}; }

HostKey host_key(const trace::TraceHeader& h) { return {h.hostname, h.boot_id}; }

size_t host_count(const Run& run) {
    std::set<HostKey> hosts;
    for (const auto& p : run.processes) hosts.insert(host_key(p.header));
    return hosts.size();
}

int64_t process_rank(const ProcessTrace& p) { return p.role ? p.role->rank : -1; }

std::string process_label(const trace::TraceHeader& h, int64_t rank, bool several_hosts) {
    const std::string host = h.hostname.empty() ? std::string("unknown host") : h.hostname;
    const std::string pid = " (pid " + std::to_string(h.pid) + ")";
    if (rank >= 0) return "rank " + std::to_string(rank) + " @ " + host + pid;
    if (!several_hosts) return {};
    std::string exe = h.executable;
    if (auto slash = exe.find_last_of('/'); slash != std::string::npos) exe = exe.substr(slash + 1);
    if (exe.empty()) exe = "process";
    return exe + " @ " + host + pid;
}

}  // namespace gprof::report
