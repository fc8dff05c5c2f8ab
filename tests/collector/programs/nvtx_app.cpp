// Test program: an app that uses NVTX v3 (header-only, through the real NVTX loader) in the ways the collector
// tests check. Usage: test_nvtx_app SCENARIO [N]. Prints a fixed text on stdout (compared byte for byte with
// and without the collector) and exits / dies as the scenario says.
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

void ranges(int n, const char* name = "range") {
    for (int i = 0; i < n; ++i) {
        nvtxRangePushA(name);
        nvtxRangePop();
    }
}

void sleep_ms(int ms) { usleep(static_cast<useconds_t>(ms) * 1000); }

int nested() {
    nvtxRangePushA("outer");
    nvtxRangePushA("middle");
    nvtxRangePushA("inner");
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePop();
    nvtxMarkA("mark-a");
    nvtxRangePushW(L"wide-\u00e9t\u00e9");
    nvtxRangePop();
    std::printf("nested done\n");
    return 0;
}

int threads() {
    nvtxNameOsThreadA(static_cast<uint32_t>(gettid()), "main-thread");
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
        ts.emplace_back([t] {
            std::string name = "worker-" + std::to_string(t);
            nvtxNameOsThreadA(static_cast<uint32_t>(gettid()), name.c_str());
            for (int i = 0; i < 1000; ++i) {
                nvtxRangePushA(name.c_str());
                nvtxRangePushA("inner");
                nvtxRangePop();
                nvtxRangePop();
            }
        });
    }
    for (auto& t : ts) t.join();
    // start on one thread, end on another
    nvtxRangeId_t id = nvtxRangeStartA("cross-thread");
    std::thread ender([id] { nvtxRangeEnd(id); });
    ender.join();
    std::printf("threads done\n");
    return 0;
}

// A worker that names itself, uses NVTX and ends long before the process, as pool and DataLoader threads do: its
// name is read on the thread as it ends.
int named_workers() {
    std::thread worker([] {
        pthread_setname_np(pthread_self(), "dl-worker-0");
        nvtxRangePushA("load-batch");
        nvtxRangePop();
    });
    worker.join();
    sleep_ms(300);  // several writer periods after it ended
    std::printf("named workers done\n");
    return 0;
}

int domains() {
    nvtxDomainHandle_t d = nvtxDomainCreateA("my-domain");
    nvtxDomainNameCategoryA(d, 7, "io");
    nvtxNameCategoryA(3, "default-cat");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(d, "registered-name");

    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF00FF00u;
    a.category = 7;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = 424242;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg;
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);

    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "domain-mark";
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = 2.5;
    nvtxDomainMarkEx(d, &a);

    a.message.ascii = "domain-startend";
    nvtxRangeId_t id = nvtxDomainRangeStartEx(d, &a);
    nvtxDomainRangeEnd(d, id);

    nvtxEventAttributes_t b{};
    b.version = NVTX_VERSION;
    b.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    b.category = 3;
    b.colorType = NVTX_COLOR_ARGB;
    b.color = 0xFFFF0000u;
    b.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    b.payload.iValue = -5;
    b.messageType = NVTX_MESSAGE_TYPE_ASCII;
    b.message.ascii = "default-ex";
    nvtxRangePushEx(&b);
    nvtxRangePop();
    std::printf("domains done\n");
    return 0;
}

int many(int n) {
    for (int i = 0; i < n; ++i) {
        nvtxRangePushA("r");
        nvtxRangePop();
    }
    std::printf("many done %d\n", n);
    return 0;
}

// N ranges, then wait past two flush periods so they are on disk, then die the way `how` says.
[[noreturn]] void die_after(int n, const char* how) {
    ranges(n, "before-death");
    nvtxRangePushA("open-at-death");
    std::printf("dying %s\n", how);
    std::fflush(stdout);
    sleep_ms(500);
    if (std::strcmp(how, "segv") == 0) {
        volatile int* p = nullptr;
        *p = 1;
    } else if (std::strcmp(how, "abort") == 0) {
        std::abort();
    } else if (std::strcmp(how, "kill") == 0) {
        ::kill(getpid(), SIGKILL);
    } else if (std::strcmp(how, "_exit") == 0) {
        _exit(3);
    }
    std::exit(4);
}

int fork_case() {
    ranges(10, "parent-before");
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        ranges(20, "child");
        std::exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ranges(10, "parent-after");
    std::printf("fork done %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

// vfork: the child shares the parent's memory, so its _exit must not finish the parent's session.
int vfork_case() {
    ranges(5, "before-vfork");
    pid_t pid = vfork();
    if (pid == 0) _exit(9);
    int status = 0;
    waitpid(pid, &status, 0);
    std::printf("vfork child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ranges(5, "after-vfork");
    std::printf("vfork done\n");
    return 0;
}

// N ranges, then "ready" on stdout, then waiting for a signal with the default disposition (it ends the process).
// The ranges are in the last flush period when the signal comes: only a flush at the signal keeps them.
[[noreturn]] void wait_signal(int n) {
    ranges(n, "before-signal");
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) pause();
}

// What Python does on an unhandled KeyboardInterrupt: its own SIGINT handler runs, then at exit it puts SIGINT back
// to the default and sends it to itself, so that the process dies of SIGINT.
volatile sig_atomic_t g_interrupted = 0;
[[noreturn]] void python_sigint(int n) {
    struct sigaction sa {};
    sa.sa_handler = [](int) { g_interrupted = 1; };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    raise(SIGINT);
    ranges(n, "after-interrupt");
    std::printf("interrupted %d\n", static_cast<int>(g_interrupted));
    std::fflush(stdout);
    signal(SIGINT, SIG_DFL);
    kill(getpid(), SIGINT);
    for (;;) pause();
}

int open_at_exit() {
    nvtxRangePushA("never-popped");
    nvtxRangeStartA("never-ended");
    std::printf("open done\n");
    return 7;
}

}  // namespace

// A rank of a pretend training job: N steps of MS milliseconds each, each an NVTX range "step" (the distributed
// tests run several at once, one slower). Prints its pid, so a test knows the namespaces gave the same one.
int steps(int n, int ms) {
    for (int i = 0; i < n; ++i) {
        nvtxRangePushA("step");
        sleep_ms(ms);
        nvtxRangePop();
    }
    std::printf("steps done (pid %d)\n", static_cast<int>(getpid()));
    return 0;
}

// One byte to `ready_fd`, then wait for the end of `go_fd` (every writer closed): a barrier the test holds for all
// ranks at once.
void barrier(int ready_fd, int go_fd) {
    char c = 'r';
    if (write(ready_fd, &c, 1) != 1) std::exit(3);
    while (read(go_fd, &c, 1) > 0) {
    }
}

// A rank of a job as real ones run: random spikes on every rank (a step in twenty takes 1.5x to 2.5x, drawn from
// SEED). Its steps start together with the other ranks' and end before any rank exits: barriers on the inherited
// descriptors READY (one byte written before and after the steps), GO and LEAVE (read to their end), so the
// ranks' starts and exits, which cost CPU, never overlap another rank's steps.
int job_rank(int n, int ms, unsigned seed, int ready_fd, int go_fd, int leave_fd) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    barrier(ready_fd, go_fd);
    for (int i = 0; i < n; ++i) {
        const bool spike = unit(random) < 0.05;
        const double extra = unit(random);
        nvtxRangePushA("step");
        usleep(static_cast<useconds_t>(ms * 1000 * (spike ? 1.5 + extra : 1.0)));
        nvtxRangePop();
    }
    barrier(ready_fd, leave_fd);
    std::printf("job rank done\n");
    return 0;
}

int main(int argc, char** argv) {
    std::string s = argc > 1 ? argv[1] : "nested";
    int n = argc > 2 ? std::atoi(argv[2]) : 100;
    if (s == "nested") return nested();
    if (s == "threads") return threads();
    if (s == "domains") return domains();
    if (s == "named-workers") return named_workers();
    if (s == "many") return many(n);
    if (s == "steps") return steps(n, argc > 3 ? std::atoi(argv[3]) : 10);
    if (s == "job-rank" && argc == 8)
        return job_rank(n, std::atoi(argv[3]), static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10)),
                        std::atoi(argv[5]), std::atoi(argv[6]), std::atoi(argv[7]));
    if (s == "fork") return fork_case();
    if (s == "vfork") return vfork_case();
    if (s == "open") return open_at_exit();
    if (s == "wait-signal") wait_signal(n);
    if (s == "python-sigint") python_sigint(n);
    if (s == "segv" || s == "abort" || s == "kill" || s == "_exit") die_after(n, s.c_str());
    if (s == "plain") {
        std::printf("plain output line 1\nplain output line 2\n");
        return 5;
    }
    std::fprintf(stderr, "unknown scenario %s\n", s.c_str());
    return 2;
}
