// Who a process is in a job that spans hosts. Pids repeat across hosts (and inside containers every rank is
// often pid 1 or 7), so a process is named by (host, boot id, pid), never by its pid alone; its rank comes from
// the Role record its launcher's environment gave it. docs/distributed.md describes the whole multi-host view.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gprof/trace/header.h"
#include "gprof/trace/records.h"

namespace gprof::report {

struct Run;
struct ProcessTrace;

// The key of a process: (host, boot id, pid namespace, pid), then its rank. Containers on one host (Kubernetes pods
// with hostNetwork) share the host name and boot id and each number their processes from 1: the pid namespace keeps
// them apart. Traces older than format 1.3 have no boot id (""), older than 1.6 no pid namespace (0): there the rank
// keeps ranks apart that share all the rest.
struct ProcessKey {
    std::string host;
    std::string boot_id;
    uint64_t pid_ns = 0;
    int64_t pid = 0;
    int64_t rank = -1;
    auto operator<=>(const ProcessKey&) const = default;
};
// rank -1: the process as its host knows it (what a child's ppid names: the child does not know its parent's rank).
ProcessKey process_key(const trace::TraceHeader& header, int64_t rank = -1);

// The pid spaces of a set of processes: those numbered apart (another host, boot, or pid namespace; in traces before
// 1.6, the same pid again with another rank). Within one space pids are distinct, so an output that names processes
// by pid (the timeline's tracks) gives each space an offset of its own.
struct PidSpaces {
    std::vector<size_t> of;  // per process, in the order given: its space (numbered in key order)
    size_t count = 0;
};
PidSpaces pid_spaces(const std::vector<ProcessKey>& processes);

// A host of the run: its name and boot id ("node07" booted twice is two hosts: their clocks and pids differ).
struct HostKey {
    std::string host;
    std::string boot_id;
    auto operator<=>(const HostKey&) const = default;
};
HostKey host_key(const trace::TraceHeader& header);
// How many hosts the run's processes ran on.
size_t host_count(const Run& run);

// Up to this many ranks the outputs give each rank a line of its own (the summary's process lines, the ranks table);
// above, the ranks with nothing to say are counted in one line and the ranks table shows their distribution.
inline constexpr size_t kRanksListedWhole = 32;

// "0-41, 43-9999": rank numbers (sorted, distinct) as ranges, at most `max_ranges` of them, then "...".
std::string rank_ranges(const std::vector<int64_t>& sorted_ranks, size_t max_ranges = 6);

// The rank of a process, from its Role record; -1 when it has none (or the launcher set no rank).
int64_t process_rank(const ProcessTrace& p);

// The label of a process in a run with ranks or several hosts, as the timeline and the summary print it:
//   "rank 3 @ node07 (pid 7)"   the process has a rank
//   "train @ node07 (pid 7)"    no rank, but the run spans several hosts (the executable's base name)
//   ""                          neither: callers keep their single-host naming ("app (pid 7)", "process 7")
std::string process_label(const trace::TraceHeader& header, int64_t rank, bool several_hosts);

}  // namespace gprof::report
