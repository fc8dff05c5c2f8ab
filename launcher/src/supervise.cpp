#include "supervise.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "gprof/env/variables.h"

namespace gprof::launcher {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kTouched[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};

double monotonic_now() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Direct children of this process (the orphans re-parented to us), or -1 if the kernel does not say.
long count_children() {
    std::ifstream in("/proc/self/task/" + std::to_string(::getpid()) + "/children");
    if (!in) return -1;
    long n = 0;
    std::string pid;
    while (in >> pid) ++n;
    return n;
}

// Async-signal-safe decimal formatting for the child between fork and exec.
void write_decimal(char* out, long value) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = static_cast<char>('0' + value % 10);
        value /= 10;
    } while (value > 0 && n < 23);
    for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
    out[n] = '\0';
}

// bash's test for a file it will not run as a script: a NUL byte before the first newline of its first 80
// bytes. Async-signal-safe (the child calls it between fork and exec).
bool looks_binary(const char* path) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char head[80];
    ssize_t n = ::read(fd, head, sizeof head);
    ::close(fd);
    for (ssize_t i = 0; i < n; ++i) {
        if (head[i] == '\n') return false;
        if (head[i] == '\0') return true;
    }
    return false;
}

}  // namespace

int shell_exit_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

ResolvedApp resolve_app(const std::string& name, const char* path_env) {
    ResolvedApp r;
    auto check = [](const std::string& candidate, std::string& why) {
        struct stat st {};
        if (::stat(candidate.c_str(), &st) != 0) {
            why = std::strerror(errno);
            return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
        }
        if (S_ISDIR(st.st_mode)) {
            why = std::strerror(EISDIR);
            return 126;
        }
        if (::access(candidate.c_str(), X_OK) != 0) {
            why = std::strerror(errno);
            return 126;
        }
        return 0;
    };
    if (name.find('/') != std::string::npos) {
        std::string why;
        r.exit_code = check(name, why);
        if (r.exit_code == 0) r.path = name;
        else r.error = "gprof-run: " + name + ": " + why;
        return r;
    }
    std::string path = path_env ? path_env : "/bin:/usr/bin";
    std::string denied, denied_why;
    size_t start = 0;
    while (start <= path.size()) {
        size_t colon = path.find(':', start);
        if (colon == std::string::npos) colon = path.size();
        std::string dir = path.substr(start, colon - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;  // an empty entry is the cwd
        std::string why;
        int code = check(candidate, why);
        if (code == 0) {
            r.path = candidate;
            return r;
        }
        if (code == 126 && denied.empty()) {
            denied = candidate;
            denied_why = why;
        }
        start = colon + 1;
    }
    if (!denied.empty()) {
        r.exit_code = 126;
        r.error = "gprof-run: " + denied + ": " + denied_why;
    } else {
        r.exit_code = 127;
        r.error = "gprof-run: " + name + ": command not found";
    }
    return r;
}

AppOutcome supervise(const SuperviseConfig& config, Console& console) {
    AppOutcome out;

    // Orphans of the app come back to us, so the whole tree is waited for.
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        console.debug(std::string("PR_SET_CHILD_SUBREAPER failed: ") + std::strerror(errno) +
                      "; only the app itself is waited for");

    sigset_t watched;
    sigemptyset(&watched);
    for (int s : kTouched) sigaddset(&watched, s);
    sigset_t old_mask;
    ::sigprocmask(SIG_BLOCK, &watched, &old_mask);
    struct sigaction old_actions[sizeof kTouched / sizeof kTouched[0]] = {};
    {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        for (size_t i = 0; i < std::size(kTouched); ++i) ::sigaction(kTouched[i], nullptr, &old_actions[i]);
        // An inherited SIG_IGN for SIGCHLD would make the kernel reap the app and lose its status.
        ::sigaction(SIGCHLD, &dfl, nullptr);
    }

    auto restore = [&] {
        // A terminal's Ctrl-C reaches every process of the group at once, so by now our copy of the one that ended
        // the app is pending: discard it, or unblocking would kill gprof-run before the summary. A later Ctrl-C
        // does stop gprof-run (while the report is written, for instance), as the user means it to.
        timespec zero{};
        while (::sigtimedwait(&watched, nullptr, &zero) > 0) {}
        for (size_t i = 0; i < std::size(kTouched); ++i) ::sigaction(kTouched[i], &old_actions[i], nullptr);
        ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    };

    // Everything the child needs is built before fork: between fork and exec only async-signal-safe calls.
    std::vector<char*> argv;
    for (const auto& a : config.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> env = config.env;
    std::string root_prefix = std::string(gprof::env::kRootPid) + "=";
    if (config.export_root_pid) env.push_back(root_prefix + std::string(24, '0'));
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    char* root_value = config.export_root_pid ? env.back().data() + root_prefix.size() : nullptr;
    // A file the kernel refuses (ENOEXEC) is run by /bin/sh when it is text, as a shell does: `sh FILE ARGS`.
    static char sh_path[] = "/bin/sh";
    std::vector<char*> sh_argv{sh_path, const_cast<char*>(config.file.c_str())};
    for (size_t i = 1; i < config.argv.size(); ++i) sh_argv.push_back(const_cast<char*>(config.argv[i].c_str()));
    sh_argv.push_back(nullptr);

    int errpipe[2];
    if (::pipe2(errpipe, O_CLOEXEC) != 0) {
        out.exec_errno = errno;
        out.exit_code = 126;
        console.error(std::string("cannot start the application: pipe: ") + std::strerror(errno));
        restore();
        return out;
    }

    pid_t pid = ::fork();
    if (pid == 0) {
        // The app starts with the signal state gprof-run was given, not gprof-run's own.
        for (size_t i = 0; i < std::size(kTouched); ++i) ::sigaction(kTouched[i], &old_actions[i], nullptr);
        ::signal(SIGPIPE, config.sigpipe_ignored ? SIG_IGN : SIG_DFL);
        ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
        if (root_value) write_decimal(root_value, static_cast<long>(::getpid()));
        ::close(errpipe[0]);
        ::execve(config.file.c_str(), argv.data(), envp.data());
        int e = errno;
        if (e == ENOEXEC) {
            // Not a format the kernel runs: a script without #! goes to /bin/sh; a binary file (a NUL in its first
            // line, as bash judges it: a corrupt or foreign executable) is refused with 126, as a shell does.
            if (!looks_binary(config.file.c_str())) {
                ::execve(sh_path, sh_argv.data(), envp.data());
                e = errno;
            }
        }
        ssize_t ignored = ::write(errpipe[1], &e, sizeof e);
        (void)ignored;
        ::_exit(e == ENOENT ? 127 : 126);
    }
    ::close(errpipe[1]);
    if (pid < 0) {
        out.exec_errno = errno;
        out.exit_code = 126;
        console.error(std::string("cannot start the application: fork: ") + std::strerror(errno));
        ::close(errpipe[0]);
        restore();
        return out;
    }
    out.pid = pid;

    int child_errno = 0;
    ssize_t got;
    do {
        got = ::read(errpipe[0], &child_errno, sizeof child_errno);
    } while (got < 0 && errno == EINTR);
    ::close(errpipe[0]);
    if (got == static_cast<ssize_t>(sizeof child_errno)) {
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        out.exec_errno = child_errno;
        out.exit_code = child_errno == ENOENT ? 127 : 126;
        console.error(config.file + ": " + (child_errno == ENOEXEC ? "cannot execute binary file: " : "") +
                      std::strerror(child_errno));
        restore();
        return out;
    }
    out.started = true;
    console.debug("started " + config.file + " as pid " + std::to_string(pid));

    if (config.release_stdin_stdout) {
        int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null_fd >= 0) {
            ::dup2(null_fd, STDIN_FILENO);
            ::dup2(null_fd, STDOUT_FILENO);
            if (null_fd > STDOUT_FILENO) ::close(null_fd);
        }
    }

    bool app_done = false;
    int app_status = 0;
    bool waiting_for_tree = false;
    double deadline = 0;
    for (;;) {
        bool no_children = false;
        for (;;) {
            int st = 0;
            pid_t p = ::waitpid(-1, &st, WNOHANG);
            if (p > 0) {
                if (p == pid) {
                    app_done = true;
                    app_status = st;
                }
                continue;
            }
            if (p < 0 && errno == EINTR) continue;
            if (p < 0 && errno == ECHILD) no_children = true;
            break;
        }
        siginfo_t info{};
        int sig;
        if (app_done) {
            if (no_children) break;
            if (!waiting_for_tree) {
                waiting_for_tree = true;
                deadline = monotonic_now() + config.wait_children_sec;
                console.debug("the app has exited; waiting for the processes it started");
            }
            double left = deadline - monotonic_now();
            if (left <= 0) {
                out.children_left = count_children();
                break;
            }
            timespec ts{};
            ts.tv_sec = static_cast<time_t>(left);
            ts.tv_nsec = static_cast<long>((left - std::floor(left)) * 1e9);
            sig = ::sigtimedwait(&watched, &info, &ts);
        } else {
            sig = ::sigwaitinfo(&watched, &info);
        }
        if (sig < 0 || sig == SIGCHLD) continue;  // EINTR, EAGAIN (timeout): loop re-checks
        if (!app_done) {
            bool from_terminal = info.si_code == SI_KERNEL && ::getpgid(pid) == ::getpgrp();
            if (!from_terminal) {
                ::kill(pid, sig);
                console.debug(std::string("passed ") + ::sigabbrev_np(sig) + " on to the app");
            }
            continue;
        }
        // The user asked gprof-run itself to stop while it waits for leftover processes: stop waiting.
        out.wait_interrupted = true;
        out.children_left = count_children();
        break;
    }

    restore();
    out.exit_code = shell_exit_code(app_status);
    if (WIFSIGNALED(app_status)) {
        out.signal = WTERMSIG(app_status);
        out.core_dumped = WCOREDUMP(app_status);
    }
    return out;
}

}  // namespace gprof::launcher
