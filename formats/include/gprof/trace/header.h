// The trace header: who produced the trace, for which process, and how its clock relates to wall time.
// Never holds the environment (it carries secrets).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gprof/trace/records.h"

namespace gprof::trace {

// What the writer is given (borrowed C strings: usable inside the target without allocation).
struct HeaderInfo {
    uint32_t features = 0;
    const char* producer = "";     // "gprof-run 0.1.0"
    int64_t pid = 0;
    int64_t ppid = 0;
    const char* hostname = "";
    const char* executable = "";
    const char* const* argv = nullptr;
    uint32_t argc = 0;
    ClockReference clock;
    uint32_t cuda_driver_version = 0;  // 0 when not known at start (the usual case: CUDA starts later)
    uint32_t cupti_api_version = 0;
    const char* run_id = "";           // shared by every process of one gprof-run invocation
    // 1.3: the host's boot id (/proc/sys/kernel/random/boot_id), "machine:<id>" (/etc/machine-id) where that cannot
    // be read, "" where neither can. With hostname and pid it names the process in a multi-host job: pids repeat
    // across hosts (and in containers), host names can repeat across clusters.
    const char* boot_id = "";
    // 1.6: the inode of the process's pid namespace (/proc/self/ns/pid), 0 where it cannot be read. Containers on one
    // host (Kubernetes pods with hostNetwork: same host name, same boot id) each number their processes from 1: with
    // it, (host, boot id, pid namespace, pid) names one process.
    uint64_t pid_ns = 0;
};

// What the reader returns.
struct TraceHeader {
    uint16_t version_major = 0;
    uint16_t version_minor = 0;
    uint32_t features = 0;
    std::string producer;
    int64_t pid = 0;
    int64_t ppid = 0;
    std::string hostname;
    std::string executable;
    std::vector<std::string> argv;
    ClockReference clock;
    uint32_t cuda_driver_version = 0;
    uint32_t cupti_api_version = 0;
    std::string run_id;
    std::string boot_id;  // 1.3; "" in older traces
    uint64_t pid_ns = 0;  // 1.6; 0 in older traces
};

}  // namespace gprof::trace
