// The catalogue's program: what real programs do to their own process, one mode per case (cases.cpp holds the
// table that runs them). Every mode records NVTX ranges with names the table counts, prints a fixed text on stdout
// and, where the case is about the program's own files, writes one (OUT, an absolute path) that must come out byte
// for byte as without the profiler. Usage: test_catalogue_app MODE [OUT].
//
// Adding a case: a mode here (keep its output deterministic: no pids, no times, no addresses), and a row in cases.cpp.
#include <errno.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

const char* g_self = nullptr;  // this program, for the modes that run it again (argv[0] is absolute: see cases.cpp)

void ranges(int n, const char* name) {
    for (int i = 0; i < n; ++i) {
        nvtxRangePushA(name);
        nvtxRangePop();
    }
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Longer than the flush period the catalogue runs with (GPROF_FLUSH_MS=50): what came before is on disk.
void past_a_flush() { sleep_ms(150); }

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "catalogue app: %s: %s\n", what, std::strerror(errno));
    std::exit(99);
}

void write_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail("write");
        p += w;
        n -= static_cast<size_t>(w);
    }
}

// The program's own file: 20 000 numbered lines written in 20 pieces, with NVTX ranges and flush periods between
// them, so the collector writes its trace while the file is open (a collector that writes to a descriptor it no
// longer owns writes into this file).
void write_own_file(const char* path, const char* ranges_name) {
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) fail("open OUT");
    for (int piece = 0; piece < 20; ++piece) {
        std::string text;
        for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(piece * 1000 + i) + " of the program's own file\n";
        write_all(fd, text.data(), text.size());
        ranges(500, ranges_name);
        if (piece % 5 == 4) sleep_ms(60);
    }
    if (::close(fd) != 0) fail("close OUT");
}

int max_descriptors() {
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    return r.rlim_cur == RLIM_INFINITY || r.rlim_cur > 65536 ? 65536 : static_cast<int>(r.rlim_cur);
}

// ---- descriptors closed or replaced under the collector ----

int close_then_write(const std::string& how, const char* out) {
    ranges(1000, "before");
    past_a_flush();
    if (how == "close-loop") {
        for (int fd = 3; fd < max_descriptors() + 64; ++fd) ::close(fd);  // past the limit too: a sloppy loop
    } else if (how == "close-range") {
        if (::close_range(3, ~0U, 0) != 0) fail("close_range");
    } else if (how == "closefrom") {
        ::closefrom(3);
    } else if (how == "raw-close-range") {
        // The system call itself, as a statically linked helper or a sandbox would make it: no library function
        // to interpose. Only a check before each write can notice.
        if (::syscall(SYS_close_range, 3, ~0U, 0) != 0) fail("close_range syscall");
    } else if (how == "dup2-over") {
        // Every number from 3 to the limit made a copy of /dev/null, then all closed again.
        int null_fd = ::open("/dev/null", O_RDONLY);
        if (null_fd < 0) fail("open /dev/null");
        int top = max_descriptors();
        for (int fd = 3; fd < top; ++fd)
            if (fd != null_fd && ::dup2(null_fd, fd) != fd) fail("dup2");
        for (int fd = 3; fd < top; ++fd) ::close(fd);
    }
    write_own_file(out, "after");
    std::printf("%s: closed, then wrote the program's own file\n", how.c_str());
    return 0;
}

// stdin or stdout closed by the shell (`<&-`, `>&-`): the program's first open() gets that number, as without the
// profiler, and writing to "stdout" writes into whatever the program opened there.
int stdio_closed(const char* out) {
    ranges(100, "before");
    past_a_flush();
    int fd = ::open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) fail("open OUT");
    char line[128];
    int n = std::snprintf(line, sizeof line, "the program's own file got descriptor %d\n", fd);
    write_all(fd, line, static_cast<size_t>(n));
    ranges(100, "after");
    past_a_flush();
    // Written to descriptor 1: the file above when stdout was closed, else stdout.
    const char tail[] = "written to descriptor 1\n";
    ssize_t w = ::write(1, tail, sizeof tail - 1);
    n = std::snprintf(line, sizeof line, "write to descriptor 1: %s\n", w < 0 ? std::strerror(errno) : "ok");
    write_all(2, line, static_cast<size_t>(n));
    ::close(fd);
    return 0;
}

// ---- the process ends from another thread while threads record ----

// 7 threads push ranges in tight loops; after `ms` milliseconds the process ends by `how`, from another thread (or by
// main's return). `ms` defaults to 50 (the catalogue: enough for the writer to fall behind); scripts/exit-time passes
// more, and `stamp`: a last line on stdout then says when the end was called (CLOCK_REALTIME, in µs), so that the time
// from there to the process's end can be measured (never in the catalogue: its output must not vary).
int end_from_thread(const std::string& how, int ms, bool stamp) {
    std::atomic<bool> go{true};
    std::vector<std::thread> workers;
    for (int t = 0; t < 7; ++t)
        workers.emplace_back([&] {
            while (go.load(std::memory_order_relaxed)) {
                nvtxRangePushA("busy");
                nvtxRangePop();
            }
        });
    if (how == "return") {
        sleep_ms(ms);
        std::printf("ending by return from main\n");
        for (auto& w : workers) w.detach();  // still running when main returns: exit() runs with them
        return 7;
    }
    std::thread ender([&] {
        sleep_ms(ms);
        std::printf("ending by %s from a thread\n", how.c_str());
        std::fflush(stdout);
        if (stamp) {  // after the line above: its first printf in this thread (an arena for malloc) is not the end's
            timespec now {};
            ::clock_gettime(CLOCK_REALTIME, &now);
            char line[64];
            int n = std::snprintf(line, sizeof line, "%s called at %lld.%06ld s\n", how.c_str(),
                                  static_cast<long long>(now.tv_sec), now.tv_nsec / 1000);
            if (::write(1, line, static_cast<size_t>(n)) != n) return;
        }
        if (how == "exit") std::exit(7);
        if (how == "_exit") ::_exit(7);
        if (how == "quick_exit") std::quick_exit(7);
        if (how == "abort") std::abort();
    });
    ender.join();
    return 0;
}

// ---- process trees ----

// Double fork and setsid; the middle process and then the original one exit first. The daemon waits until its parent
// is gone, detaches from stdio, closes every other descriptor, moves to / and writes OUT.
int daemonise(const char* out) {
    ranges(10, "parent");
    std::fflush(stdout);
    pid_t middle = ::fork();
    if (middle < 0) fail("fork");
    if (middle == 0) {
        if (::setsid() < 0) fail("setsid");
        pid_t middle_pid = ::getpid();
        pid_t daemon = ::fork();
        if (daemon < 0) fail("fork");
        if (daemon > 0) ::_exit(0);
        for (int i = 0; i < 1000 && ::getppid() == middle_pid; ++i) sleep_ms(5);  // the middle one is gone
        int null_fd = ::open("/dev/null", O_RDWR);
        ::dup2(null_fd, 0);
        ::dup2(null_fd, 1);
        ::dup2(null_fd, 2);
        ::close_range(3, ~0U, 0);
        if (::chdir("/") != 0) ::_exit(98);
        ::umask(022);
        write_own_file(out, "daemon");
        std::string done = std::string(out) + ".done";  // for the runner: the bare run does not wait for a daemon
        ::close(::open(done.c_str(), O_WRONLY | O_CREAT, 0644));
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(middle, &status, 0);
    std::printf("the middle process exited %d; the daemon goes on alone\n", WEXITSTATUS(status));
    return 0;
}

int child_ranges() {
    ranges(100, "child");
    std::printf("child done\n");
    return 3;
}

int vfork_exec() {
    ranges(10, "parent");
    std::fflush(stdout);
    pid_t pid = ::vfork();
    if (pid == 0) {
        ::execl(g_self, g_self, "child-ranges", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::printf("vfork child exited %d\n", WEXITSTATUS(status));
    return 0;
}

int spawn() {
    ranges(10, "parent");
    std::fflush(stdout);
    pid_t pid = 0;
    char* argv[] = {const_cast<char*>(g_self), const_cast<char*>("child-ranges"), nullptr};
    if (int rc = ::posix_spawn(&pid, g_self, nullptr, nullptr, argv, environ); rc != 0) {
        errno = rc;
        fail("posix_spawn");
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::printf("spawned child exited %d\n", WEXITSTATUS(status));
    return 0;
}

// SIGCHLD ignored: children are reaped by the kernel, wait() reports ECHILD once they are all gone.
int sigchld_ignored() {
    ::signal(SIGCHLD, SIG_IGN);
    ranges(10, "parent");
    std::fflush(stdout);
    for (int i = 0; i < 8; ++i) {
        pid_t pid = ::fork();
        if (pid < 0) fail("fork");
        if (pid == 0) {
            ranges(50, "child");
            std::exit(0);
        }
    }
    int status = 0;
    pid_t got = ::wait(&status);
    std::printf("wait: %s\n", got < 0 ? std::strerror(errno) : "a child was reported");
    return 0;
}

// Execs itself N times; every image records its ranges.
int exec_chain(int left) {
    ranges(100, "link");
    if (left == 0) {
        std::printf("chain done\n");
        return 0;
    }
    std::string next = std::to_string(left - 1);
    ::execl(g_self, g_self, "exec-chain", next.c_str(), static_cast<char*>(nullptr));
    fail("execl");
}

// ---- limits ----

// A program at its descriptor limit: it opens /dev/null until EMFILE, says how many it got (the same number as
// without the profiler), then forks a worker (whose collector has no descriptor to start with).
int nofile_exhausted() {
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = 64;
    if (::setrlimit(RLIMIT_NOFILE, &r) != 0) fail("setrlimit");
    ranges(100, "before");
    int opened = 0;
    while (::open("/dev/null", O_RDONLY) >= 0) ++opened;
    std::printf("opened %d descriptors before %s\n", opened, std::strerror(errno));
    ranges(100, "at-limit");
    std::fflush(stdout);
    pid_t pid = ::fork();
    if (pid == 0) {
        ranges(100, "worker");
        std::printf("worker done\n");
        std::exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::printf("worker exited %d\n", WEXITSTATUS(status));
    return 0;
}

// RLIMIT_FSIZE: the program's writes stop at the limit (EFBIG, SIGXFSZ ignored); the profiler's trace is under the
// same limit and must never make the program receive SIGXFSZ.
int fsize_limit(const char* out) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit r{256 * 1024, 256 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &r) != 0) fail("setrlimit");
    int fd = ::open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) fail("open OUT");
    std::string block(4096, 'x');
    size_t total = 0;
    for (int i = 0; i < 100; ++i) {
        ranges(2000, "writing");
        ssize_t w = ::write(fd, block.data(), block.size());
        if (w < 0) {
            std::printf("write stopped at %zu bytes: %s\n", total, std::strerror(errno));
            break;
        }
        total += static_cast<size_t>(w);
    }
    ::close(fd);
    return 0;
}

// ---- signals ----

// Writes lines until its reader goes away (`app | head -1`): dies of SIGPIPE.
int sigpipe() {
    ranges(100, "before");
    std::string line = "a line for head\n";
    for (long i = 0;; ++i) {
        write_all(1, line.data(), line.size());
        if (i % 1000 == 0) ranges(10, "writing");
    }
}

sigjmp_buf g_recover;
void on_segv(int, siginfo_t*, void*) { siglongjmp(g_recover, 1); }

// Its own SIGSEGV handler on an alternate stack, leaving it with siglongjmp (a JVM's or XLA's null checks).
int segv_handler() {
    static char alt[64 * 1024];
    stack_t ss{};
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    if (::sigaltstack(&ss, nullptr) != 0) fail("sigaltstack");
    struct sigaction sa {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGSEGV, &sa, nullptr) != 0) fail("sigaction");
    int recovered = 0;
    for (int i = 0; i < 1000; ++i) {
        ranges(10, "between-faults");
        if (sigsetjmp(g_recover, 1) == 0) {
            volatile int* p = nullptr;
            *p = i;
        } else {
            ++recovered;
        }
    }
    std::printf("recovered from %d faults\n", recovered);
    return 0;
}

// ---- threads ----

// Thousands of threads that each live for a few ranges, eight at a time.
int thread_churn() {
    for (int round = 0; round < 500; ++round) {
        std::thread ts[8];
        for (auto& t : ts) t = std::thread([] { ranges(10, "short-lived"); });
        for (auto& t : ts) t.join();
    }
    std::printf("4000 threads done\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return 64;
    g_self = argv[0];
    std::string mode = argv[1];
    const char* out = argc > 2 ? argv[2] : nullptr;
    if ((mode == "close-loop" || mode == "close-range" || mode == "closefrom" || mode == "raw-close-range" ||
         mode == "dup2-over") && out)
        return close_then_write(mode, out);
    if (mode == "stdio-closed" && out) return stdio_closed(out);
    int ms = argc > 2 ? std::atoi(argv[2]) : 50;
    bool stamp = argc > 3 && std::strcmp(argv[3], "stamp") == 0;
    if (mode == "exit-thread") return end_from_thread("exit", ms, stamp);
    if (mode == "_exit-thread") return end_from_thread("_exit", ms, stamp);
    if (mode == "quick_exit-thread") return end_from_thread("quick_exit", ms, stamp);
    if (mode == "abort-thread") return end_from_thread("abort", ms, stamp);
    if (mode == "return-main") return end_from_thread("return", ms, stamp);
    if (mode == "daemonise" && out) return daemonise(out);
    if (mode == "child-ranges") return child_ranges();
    if (mode == "vfork-exec") return vfork_exec();
    if (mode == "posix-spawn") return spawn();
    if (mode == "sigchld-ignored") return sigchld_ignored();
    if (mode == "exec-chain") return exec_chain(argc > 2 ? std::atoi(argv[2]) : 10);
    if (mode == "nofile-exhausted") return nofile_exhausted();
    if (mode == "fsize" && out) return fsize_limit(out);
    if (mode == "sigpipe") return sigpipe();
    if (mode == "segv-handler") return segv_handler();
    if (mode == "thread-churn") return thread_churn();
    std::fprintf(stderr, "catalogue app: unknown mode %s\n", mode.c_str());
    return 64;
}
