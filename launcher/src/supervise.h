// Starting the app and staying with it until its whole process tree is gone.
//
// gprof-run makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so descendants orphaned by the app are
// re-parented to it rather than to init: it reaps them, and it knows when the tree is empty (waitpid says ECHILD)
// and every trace is complete. A descendant that outlives the app (a daemon) is waited for at most
// `wait_children_sec` seconds, then left running: gprof-run neither kills it nor hangs on it.
//
// No signal handlers: the watched signals are blocked and taken with sigwaitinfo(), so nothing runs in signal
// context. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to gprof-run are passed on to the app, except those the
// terminal sent to the whole foreground process group (si_code SI_KERNEL): the app, in the same group, already
// got its own copy and must not see it twice.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "console.h"

namespace gprof::launcher {

struct ResolvedApp {
    std::string path;   // contains a '/', ready for exec
    int exit_code = 0;  // 127 not found, 126 not executable; 0 when found
    std::string error;  // one line, for stderr
};

// Resolves `name` like a shell: with a '/' as given, otherwise along PATH (unset PATH: /bin:/usr/bin).
ResolvedApp resolve_app(const std::string& name, const char* path_env);

struct SuperviseConfig {
    std::string file;                // resolved executable
    std::vector<std::string> argv;   // argv[0] as the user typed it
    std::vector<std::string> env;    // complete environment, "NAME=VALUE"
    bool export_root_pid = false;    // add GPROF_ROOT_PID=<the app's pid> (known only after fork)
    double wait_children_sec = 10.0;
    // After the start, gprof-run's own stdin and stdout become /dev/null: an app that closes its stdout must
    // give its reader EOF exactly as without gprof-run, which cannot happen while gprof-run holds a copy.
    bool release_stdin_stdout = true;
    // Whether gprof-run was started with SIGPIPE ignored (it ignores SIGPIPE itself): the app gets the same.
    bool sigpipe_ignored = false;
};

struct AppOutcome {
    bool started = false;
    pid_t pid = -1;
    int exec_errno = 0;        // exec failed in the child
    int exit_code = 0;         // shell convention: the code, 128+N for signal N, 127/126 for exec failures
    int signal = 0;            // killed by this signal, 0 if it exited
    bool core_dumped = false;
    long children_left = 0;    // descendants still running when gprof-run stopped waiting (-1: unknown number)
    bool wait_interrupted = false;  // a signal to gprof-run ended the wait for them
};

AppOutcome supervise(const SuperviseConfig& config, Console& console);

// Exit status of a shell for a waitpid() status.
int shell_exit_code(int wait_status);

}  // namespace gprof::launcher
