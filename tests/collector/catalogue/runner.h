// The catalogue's one runner: runs a case's command without the profiler and under gprof-run (this build tree's), and
// compares what the program did (stdout, stderr, exit status, its own files, about its exit time) and what was
// recorded. cases.cpp holds the table; nothing here knows about any one case.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gprof::catalogue {

// How the traces of a run end.
enum class Ending {
    Complete,      // every trace has its End record
    CrashKeepsOld, // the process died of a fatal signal: no End, but what is older than one flush period is there
};

struct Case {
    const char* name;  // the ctest name: catalogue:<name>
    // What the program does, and what the collector before issue 29 did with it (the case's history).
    const char* what;
    std::vector<std::string> args;  // after the program; "{out}" is the program's own file (an absolute path)
    // How a shell runs it; {cmd} is the command (bare, or gprof-run ... app ...). Status is the shell's.
    std::string shell = "exec {cmd}";
    // NVTX ranges by name, summed over every trace of the run: exact counts, or -1 for "at least one".
    std::vector<std::pair<std::string, long>> ranges;
    int traces = 1;                            // trace files in the run directory
    Ending ending = Ending::Complete;
    std::vector<std::string> stderr_lines;      // gprof-run's lines the program's stderr must show (and no others)
    std::vector<std::string> trace_statuses;    // texts some Status record of the run must contain
    // The profiled program may live this much longer than the bare one (its lifetime is read from its trace: from
    // the collector's start to the End record; the bare run's is its wall time). gprof-run's own work afterwards
    // (reading the traces, the reports) is not the program's and is not counted here.
    double extra_seconds = 5.0;
    bool waits_for_daemon = false;             // the bare run leaves a daemon: wait for OUT's ".done" marker
};

const std::vector<Case>& cases();
void run_case(const Case& c);

}  // namespace gprof::catalogue
