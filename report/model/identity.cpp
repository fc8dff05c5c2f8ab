#include "model/identity.h"

#include <map>
#include <set>
#include <tuple>

#include "model/model.h"

namespace gprof::report {

ProcessKey process_key(const trace::TraceHeader& h, int64_t rank) {
    return {h.hostname, h.boot_id, h.pid_ns, h.pid, rank};
}

PidSpaces pid_spaces(const std::vector<ProcessKey>& processes) {
    using Namespace = std::tuple<std::string, std::string, uint64_t>;
    // The ranks seen with each pid of each namespace: more than one, and the rank splits the space.
    std::map<Namespace, std::map<int64_t, std::set<int64_t>>> ranks_of_pid;
    for (const auto& k : processes) ranks_of_pid[{k.host, k.boot_id, k.pid_ns}][k.pid].insert(k.rank);
    using Space = std::tuple<std::string, std::string, uint64_t, int64_t>;
    auto space_of = [&](const ProcessKey& k) {
        bool split = ranks_of_pid[{k.host, k.boot_id, k.pid_ns}][k.pid].size() > 1;
        return Space{k.host, k.boot_id, k.pid_ns, split ? k.rank : -1};
    };
    std::map<Space, size_t> index;
    for (const auto& k : processes) index.emplace(space_of(k), 0);
    size_t i = 0;
    for (auto& [space, n] : index) n = i++;
    PidSpaces out;
    out.count = index.size();
    for (const auto& k : processes) out.of.push_back(index[space_of(k)]);
    return out;
}

HostKey host_key(const trace::TraceHeader& h) { return {h.hostname, h.boot_id}; }

size_t host_count(const Run& run) {
    std::set<HostKey> hosts;
    for (const auto& p : run.processes) hosts.insert(host_key(p.header));
    return hosts.size();
}

std::string rank_ranges(const std::vector<int64_t>& ranks, size_t max_ranges) {
    std::string out;
    size_t ranges = 0;
    for (size_t i = 0; i < ranks.size();) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        if (ranges == max_ranges) return out + ", ...";
        out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
        ++ranges;
        i = j + 1;
    }
    return out;
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
