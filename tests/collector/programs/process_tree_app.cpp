// Test program: process trees as frameworks make them (Triton and torch.compile run helpers and ldconfig, a static
// binary on Ubuntu; Python's subprocess uses vfork; JAX starts dozens of compilers). Uses NVTX v3 through the real
// NVTX loader. Prints a fixed text on stdout (compared with and without the collector) and exits 0 when every
// helper did what it should.
//
//   process_tree_app helpers N STATIC SCRIPT
//       N helpers running /bin/true (half fork + execv, half posix_spawn), then STATIC (a statically linked
//       program) started four ways: fork + execv, posix_spawn, vfork + execv, and through SCRIPT (a #! script that
//       execs it, as Ubuntu's /sbin/ldconfig once was); NVTX ranges in the parent before and after
//   process_tree_app exec-fails FILE [quiet]
//       5 NVTX ranges "before" (none with quiet), execv(FILE) which fails (FILE is executable but no program the
//       kernel runs), then 5 ranges "after" and exit 0
//   process_tree_app exec-traced
//       fork: the child records 3 NVTX ranges, then execs /bin/true; the parent waits
//   process_tree_app signal-handler SIG
//       installs a handler for SIG that records the signal and lets the program finish normally (exit 0), then
//       raises SIG: a program with its own handler must run as without the collector
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

void ranges(int n, const char* name) {
    for (int i = 0; i < n; ++i) {
        nvtxRangePushA(name);
        nvtxRangePop();
    }
}

int wait_exit(pid_t pid) {
    int st = 0;
    if (pid <= 0 || ::waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t fork_exec(const char* path, const char* arg) {
    pid_t pid = ::fork();
    if (pid == 0) {
        char* argv[] = {const_cast<char*>(path), const_cast<char*>(arg), nullptr};
        ::execv(path, argv);
        ::_exit(120);
    }
    return pid;
}

pid_t vfork_exec(const char* path, const char* arg) {
    char* argv[] = {const_cast<char*>(path), const_cast<char*>(arg), nullptr};
    pid_t pid = ::vfork();
    if (pid == 0) {
        ::execv(path, argv);
        ::_exit(121);
    }
    return pid;
}

pid_t spawn(const char* path, const char* arg) {
    char* argv[] = {const_cast<char*>(path), const_cast<char*>(arg), nullptr};
    pid_t pid = 0;
    return ::posix_spawn(&pid, path, nullptr, nullptr, argv, environ) == 0 ? pid : -1;
}

int helpers(int n, const char* static_program, const char* script) {
    ranges(5, "parent-before");
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        pid_t pid = i % 2 == 0 ? fork_exec("/bin/true", nullptr) : spawn("/bin/true", nullptr);
        if (wait_exit(pid) != 0) ++bad;
    }
    // The static helper exits with 7 when it ran.
    int a = wait_exit(fork_exec(static_program, "fork"));
    int b = wait_exit(spawn(static_program, "spawn"));
    int c = wait_exit(vfork_exec(static_program, "vfork"));
    int d = wait_exit(fork_exec(script, "script"));
    ranges(5, "parent-after");
    std::printf("helpers %d failed; static %d %d %d %d\n", bad, a, b, c, d);
    return bad == 0 && a == 7 && b == 7 && c == 7 && d == 7 ? 0 : 1;
}

int exec_fails(const char* file, bool quiet) {
    if (!quiet) ranges(5, "before");
    char* argv[] = {const_cast<char*>(file), nullptr};
    ::execv(file, argv);
    int err = errno;
    ranges(5, "after");
    std::printf("exec failed: %s\n", std::strerror(err));
    return 0;
}

int exec_traced() {
    std::fflush(stdout);
    pid_t pid = ::fork();
    if (pid == 0) {
        ranges(3, "child-before-exec");
        char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
        ::execv("/bin/true", argv);
        ::_exit(122);
    }
    std::printf("child %d\n", wait_exit(pid));
    return 0;
}

volatile sig_atomic_t g_got = 0;
void on_signal(int sig) { g_got = sig; }

int signal_handler(int sig) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
    ranges(3, "before-signal");
    ::raise(sig);
    struct sigaction now {};
    ::sigaction(sig, nullptr, &now);
    ranges(3, "after-signal");
    std::printf("got %d, handler %s\n", static_cast<int>(g_got), now.sa_handler == on_signal ? "kept" : "lost");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "helpers" && argc == 5) return helpers(std::atoi(argv[2]), argv[3], argv[4]);
    if (mode == "exec-fails" && argc >= 3) return exec_fails(argv[2], argc > 3 && std::strcmp(argv[3], "quiet") == 0);
    if (mode == "exec-traced") return exec_traced();
    if (mode == "signal-handler" && argc == 3) return signal_handler(std::atoi(argv[2]));
    std::fprintf(stderr, "usage: process_tree_app helpers N STATIC SCRIPT | exec-fails FILE [quiet] | exec-traced | "
                         "signal-handler SIG\n");
    return 2;
}
