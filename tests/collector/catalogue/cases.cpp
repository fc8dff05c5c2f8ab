// The catalogue: what real programs do to their own process, each run without the profiler and under gprof-run, and
// compared (runner.h: stdout, stderr, exit status as a shell reports it, the program's own file byte for byte, exit
// time; then the ranges recorded, the traces' ends, and the lines gprof-run said).
//
// Adding a case: a mode in catalogue_app.cpp, and a row below. Each row is one ctest test, catalogue:<name>
// (`ctest -R catalogue:` runs them all). Fields not given take the defaults of runner.h's Case. `what` keeps the
// case's history: what the collector did before issue 29, so that a fix is never undone unnoticed.
#include <catch2/catch.hpp>

#include "runner.h"

namespace gprof::catalogue {

namespace {

// The lines said where the profiler cannot follow, and the Status record of a process that ended while its other
// threads went on recording.
const std::string kNotRecordedAtExit = "not recorded: they came after the process began to exit";
// What the end cost, with the writer's CPU apart from waiting for a core (the exit figures in docs/performance.md).
const std::string kEndCost = "ms of the writer thread's CPU)";

}  // namespace

const std::vector<Case>& cases() {
    static const std::vector<Case> table = {
        // ---- descriptors closed or replaced under the collector ----
        Case{.name = "close-loop",
             .what = "closes every descriptor from 3 to past its limit with close(), then writes its own file. Before "
                     "issue 29: the trace's descriptor (a low number) was closed with the rest, the program's file got "
                     "170 kB of trace chunks among its 20 000 lines, and the trace lost everything after the close and "
                     "had no end",
             .args = {"close-loop", "{out}"},
             .ranges = {{"before", 1000}, {"after", 10000}}},
        Case{.name = "close-range",
             .what = "close_range(3, ~0U, 0), then writes its own file. Before issue 29: the trace's descriptor (a low "
                     "number) was closed with the rest, the program's file got 170 kB of trace chunks among its 20 000 "
                     "lines, and the trace lost everything after the close and had no end",
             .args = {"close-range", "{out}"},
             .ranges = {{"before", 1000}, {"after", 10000}}},
        Case{.name = "closefrom",
             .what = "closefrom(3), then writes its own file. Before issue 29: the trace's descriptor (a low number) "
                     "was closed with the rest, the program's file got 170 kB of trace chunks among its 20 000 lines, "
                     "and the trace lost everything after the close and had no end",
             .args = {"closefrom", "{out}"},
             .ranges = {{"before", 1000}, {"after", 10000}}},
        Case{.name = "raw-close-range",
             .what = "the close_range system call itself (nothing to interpose), then writes its own file; the check "
                     "before each chunk written opens the trace again. Before issue 29: the trace's descriptor (a low "
                     "number) was closed with the rest, the program's file got 170 kB of trace chunks among its 20 000 "
                     "lines, and the trace lost everything after the close and had no end",
             .args = {"raw-close-range", "{out}"},
             .ranges = {{"before", 1000}, {"after", 10000}}},
        Case{.name = "dup2-over",
             .what = "dup2()s /dev/null over every number from 3 to its limit, closes them all, then writes its own "
                     "file: the trace's descriptor steps aside while it can; with the table full it is given up, and "
                     "the trace is opened again once a number is free. Before issue 29: the trace's descriptor (a low "
                     "number) was closed with the rest, the program's file got 170 kB of trace chunks among its 20 000 "
                     "lines, and the trace lost everything after the close and had no end",
             .args = {"dup2-over", "{out}"},
             .ranges = {{"before", 1000}, {"after", 10000}}},
        Case{.name = "stdout-closed",
             .what = "run with stdout closed (>&-): its first open() must get descriptor 1. Before issue 29: the trace "
                     "took descriptor 1 (and the finisher's eventfds 3 and 4), the program's file got 5, and its "
                     "writes to descriptor 1 went into the trace, which had no end",
             .args = {"stdio-closed", "{out}"},
             .shell = "exec {cmd} >&-",
             .ranges = {{"before", 100}, {"after", 100}}},
        Case{.name = "stdin-closed",
             .what = "run with stdin closed (<&-): its first open() must get descriptor 0. Before issue 29: the trace "
                     "took 0, the program's file got 5",
             .args = {"stdio-closed", "{out}"},
             .shell = "exec {cmd} <&-",
             .ranges = {{"before", 100}, {"after", 100}}},

        // ---- the process ends from a thread while others record ----
        Case{.name = "exit-from-thread",
             .what = "exit(7) from one thread while 7 threads push NVTX ranges. Before issue 29 the last drain chased "
                     "the threads: 1.5-3 s instead of 0.23 s (15 s on a loaded 2-core machine), up to a 468 MB trace "
                     "and 1.6 M records dropped; often cut by the 3 s watchdog, leaving the trace without its end",
             .args = {"exit-thread"},
             .ranges = {{"busy", -1}},
             .trace_statuses = {kNotRecordedAtExit, kEndCost},
             .extra_seconds = 0.5},
        Case{.name = "_exit-from-thread",
             .what = "_exit(7) from one thread while 7 threads record. Before issue 29: 1.65 s instead of 0.25 s (the "
                     "same chase as exit)",
             .args = {"_exit-thread"},
             .ranges = {{"busy", -1}},
             .trace_statuses = {kNotRecordedAtExit, kEndCost},
             .extra_seconds = 0.5},
        Case{.name = "quick_exit-from-thread",
             .what = "quick_exit(7) from one thread while 7 threads record. Before issue 29: no end at all (quick_exit "
                     "runs no atexit handler, and the _exit it calls is glibc's own, not the interposer)",
             .args = {"quick_exit-thread"},
             .ranges = {{"busy", -1}},
             .trace_statuses = {kNotRecordedAtExit, kEndCost},
             .extra_seconds = 0.5},
        Case{.name = "return-from-main",
             .what = "main returns 7 while 7 threads record (the same end as exit)",
             .args = {"return-main"},
             .ranges = {{"busy", -1}},
             .trace_statuses = {kNotRecordedAtExit, kEndCost},
             .extra_seconds = 0.5},
        Case{.name = "abort-in-thread",
             .what = "abort() in a thread while 7 threads record: dies of SIGABRT as without the profiler; the trace "
                     "keeps what is older than one flush period. Did not misbehave before issue 29",
             .args = {"abort-thread"},
             .ranges = {{"busy", -1}},
             .ending = Ending::CrashKeepsOld,
             .extra_seconds = 0.5},

        // ---- process trees ----
        Case{.name = "daemonise",
             .what = "double fork + setsid, the parent gone first; the daemon closes every descriptor (close_range), "
                     "moves to / and writes its own file. Before issue 29: the daemon's file got the trace's chunks, "
                     "its trace lost its records and its end",
             .args = {"daemonise", "{out}"},
             .ranges = {{"parent", 10}, {"daemon", 10000}},
             .traces = 3,
             .waits_for_daemon = true},
        Case{.name = "vfork-exec",
             .what = "vfork + exec of itself. Did not misbehave before issue 29",
             .args = {"vfork-exec"},
             .ranges = {{"parent", 10}, {"child", 100}},
             .traces = 2},
        Case{.name = "posix-spawn",
             .what = "posix_spawn of itself. Did not misbehave before issue 29",
             .args = {"posix-spawn"},
             .ranges = {{"parent", 10}, {"child", 100}},
             .traces = 2},
        Case{.name = "sigchld-ignored",
             .what = "SIGCHLD ignored, 8 forked children that record and exit, wait() gives ECHILD. Did not misbehave "
                     "before issue 29",
             .args = {"sigchld-ignored"},
             .ranges = {{"parent", 10}, {"child", 400}},
             .traces = 9},
        Case{.name = "exec-chain",
             .what = "execs itself 10 times, each image recording 100 ranges. Did not misbehave before issue 29",
             .args = {"exec-chain", "10"},
             .ranges = {{"link", 1100}},
             .traces = 11},

        // ---- limits ----
        Case{.name = "nofile-exhausted",
             .what = "lowers RLIMIT_NOFILE to 64, opens descriptors until EMFILE, forks a worker. Before issue 29 it "
                     "got 3 descriptors fewer (58, not 61: the trace and the signal finisher's two eventfds); now the "
                     "trace sits at the limit's own number, beyond the program's, and the worker's collector still "
                     "starts",
             .args = {"nofile-exhausted"},
             .ranges = {{"before", 100}, {"at-limit", 100}, {"worker", 100}},
             .traces = 2},
        Case{.name = "fsize",
             .what = "RLIMIT_FSIZE of 256 KiB, SIGXFSZ ignored: its writes stop with EFBIG; the trace stays under the "
                     "limit, says in one line that it cannot write more, and counts what did not fit. Did not "
                     "misbehave before issue 29",
             .args = {"fsize", "{out}"},
             .ranges = {{"writing", -1}},
             .stderr_lines = {"cannot write the trace (File too large)"},
             .trace_statuses = {"records could not be written to this trace"}},

        // ---- signals ----
        Case{.name = "sigpipe",
             .what = "writes lines into `| head -1` until SIGPIPE ends it. Did not misbehave before issue 29",
             .args = {"sigpipe"},
             .shell = "{cmd} | head -1; exit ${PIPESTATUS[0]}",
             .ranges = {{"before", 100}}},
        Case{.name = "segv-handler",
             .what = "its own SIGSEGV handler on an alternate stack (SA_ONSTACK), left with siglongjmp, 1000 faults (a "
                     "JVM's or XLA's null checks). Did not misbehave before issue 29",
             .args = {"segv-handler"},
             .ranges = {{"between-faults", 10000}}},

        // ---- threads ----
        Case{.name = "thread-churn",
             .what = "4000 threads that live for 10 ranges each, 8 at a time; their streams are freed as they end. Did "
                     "not misbehave before issue 29 (but kept about 1 KiB per thread it ever had)",
             .args = {"thread-churn"},
             .ranges = {{"short-lived", 40000}}},
    };
    return table;
}

namespace {

// One Catch2 test per row, so that ctest lists, runs (in parallel) and reports each case on its own.
struct CaseInvoker : Catch::ITestInvoker {
    explicit CaseInvoker(const Case& c) : c_(c) {}
    void invoke() const override { run_case(c_); }
    const Case& c_;
};

const bool registered = [] {
    for (const Case& c : cases())
        Catch::AutoReg(new CaseInvoker(c), Catch::SourceLineInfo(__FILE__, static_cast<std::size_t>(__LINE__)),
                       Catch::StringRef(), Catch::NameAndTags{Catch::StringRef(c.name), "[catalogue]"});
    return true;
}();

}  // namespace

}  // namespace gprof::catalogue
