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

// The key of a process. Traces older than format 1.3 have no boot id: "" (then host and pid alone).
struct ProcessKey {
    std::string host;
    std::string boot_id;
    int64_t pid = 0;
    auto operator<=>(const ProcessKey&) const = default;
};
ProcessKey process_key(const trace::TraceHeader& header);

// A host of the run: its name and boot id ("node07" booted twice is two hosts: their clocks and pids differ).
struct HostKey {
    std::string host;
    std::string boot_id;
    auto operator<=>(const HostKey&) const = default;
};
HostKey host_key(const trace::TraceHeader& header);
// How many hosts the run's processes ran on.
size_t host_count(const Run& run);

// The rank of a process, from its Role record; -1 when it has none (or the launcher set no rank).
int64_t process_rank(const ProcessTrace& p);

// The label of a process in a run with ranks or several hosts, as the timeline and the summary print it:
//   "rank 3 @ node07 (pid 7)"   the process has a rank
//   "train @ node07 (pid 7)"    no rank, but the run spans several hosts (the executable's base name)
//   ""                          neither: callers keep their single-host naming ("app (pid 7)", "process 7")
std::string process_label(const trace::TraceHeader& header, int64_t rank, bool several_hosts);

}  // namespace gprof::report
