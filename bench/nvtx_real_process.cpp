// NVTX in a real process: T threads each run N push+pop pairs through the real NVTX loader, the way an
// instrumented application does, bare and with the collector injected (LD_PRELOAD + NVTX_INJECTION64_PATH, as
// gprof-run sets them). Unlike bench/collector_nvtx (Google Benchmark, one process), every run here is a fresh
// process with the collector's start-up, its writer thread and its exit drain, which is what a user pays.
//
//   nvtx_real_process [--runs N] [--threads T] [--pairs P ...]   driver: N runs of each case, bare and attached,
//                                                                 alternating; best, median and worst per figure
//   nvtx_real_process --child T P                                 one measured run (prints NVTX_REAL {json})
//
// Figures per run: wall time of a thread's loop per pair (the slowest thread), the app threads' CPU per pair, the
// whole process's CPU per pair (wait4: start-up, writer thread and exit drain included), page faults, context
// switches. Arguments it does not know (scripts/bench passes --benchmark_*) are ignored.
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

uint64_t mono_ns() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

uint64_t thread_cpu_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

double tv_ns(const timeval& tv) { return tv.tv_sec * 1e9 + tv.tv_usec * 1e3; }

struct ThreadResult {
    uint64_t wall_ns = 0;
    uint64_t cpu_ns = 0;
};

int child(int threads, long pairs) {
    const int rounds = 1;
    // The first NVTX call loads the tool (and, under gprof-run, the collector is already running from
    // LD_PRELOAD): done once before timing, as any real program's first range would.
    nvtxRangePushA("warm-up");
    nvtxRangePop();
    for (int round = 0; round < rounds; ++round) {
        std::vector<ThreadResult> results(static_cast<size_t>(threads));
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        rusage before{}, after{};
        getrusage(RUSAGE_SELF, &before);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&, t] {
                // Each thread's first NVTX call attaches its stream: part of what a real thread pays, but not per
                // pair; it is made before the start line so that the loop times pairs only.
                nvtxRangePushA("thread-start");
                nvtxRangePop();
                ready.fetch_add(1);
                while (!go.load(std::memory_order_acquire)) {
                }
                uint64_t c0 = thread_cpu_ns();
                uint64_t w0 = mono_ns();
                for (long i = 0; i < pairs; ++i) {
                    nvtxRangePushA("step");
                    nvtxRangePop();
                }
                uint64_t w1 = mono_ns();
                results[static_cast<size_t>(t)].wall_ns = w1 - w0;
                results[static_cast<size_t>(t)].cpu_ns = thread_cpu_ns() - c0;
            });
        }
        while (ready.load() < threads) std::this_thread::yield();
        uint64_t w0 = mono_ns();
        go.store(true, std::memory_order_release);
        for (auto& th : pool) th.join();
        uint64_t wall = mono_ns() - w0;
        getrusage(RUSAGE_SELF, &after);
        uint64_t slowest = 0, cpu = 0;
        for (const auto& r : results) {
            if (r.wall_ns > slowest) slowest = r.wall_ns;
            cpu += r.cpu_ns;
        }
        double total_pairs = static_cast<double>(pairs) * threads;
        double proc_cpu = tv_ns(after.ru_utime) + tv_ns(after.ru_stime) - tv_ns(before.ru_utime) - tv_ns(before.ru_stime);
        std::printf(
            "NVTX_REAL {\"round\": %d, \"threads\": %d, \"pairs\": %ld, \"ns_per_pair_wall\": %.2f, "
            "\"ns_per_pair_all_threads\": %.2f, \"ns_per_pair_app_cpu\": %.2f, \"ns_per_pair_process_cpu\": %.2f, "
            "\"minor_faults\": %ld, \"voluntary_switches\": %ld, \"involuntary_switches\": %ld, \"max_rss_kib\": %ld}\n",
            round, threads, pairs, static_cast<double>(slowest) / static_cast<double>(pairs),
            static_cast<double>(wall) / static_cast<double>(pairs), static_cast<double>(cpu) / total_pairs,
            proc_cpu / total_pairs, after.ru_minflt - before.ru_minflt, after.ru_nvcsw - before.ru_nvcsw,
            after.ru_nivcsw - before.ru_nivcsw, after.ru_maxrss);
        std::fflush(stdout);
    }
    return 0;
}

std::string collector_path() {
    if (const char* p = std::getenv("GPROF_COLLECTOR_LIB")) return p;
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    return self.substr(0, self.rfind('/')) + "/../lib/gprof-run/libgprof-collector.so";
}

// One figure of one run: "key": value in the child's NVTX_REAL line.
double field(const std::string& line, const char* key) {
    std::string k = std::string("\"") + key + "\": ";
    size_t p = line.find(k);
    return p == std::string::npos ? -1 : std::atof(line.c_str() + p + k.size());
}

struct Run {
    std::string line;
    double total_cpu_ns = 0;  // the whole child process (wait4)
    long faults = 0;
};

// Runs this program as a child (--child T P), attached or bare; its output line and its whole-process CPU time.
Run run_child(int threads, long pairs, bool attached, const std::string& lib, const std::string& scratch) {
    int fds[2];
    Run r;
    if (::pipe(fds) != 0) return r;
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::close(fds[0]);
        if (attached) {
            ::setenv("LD_PRELOAD", lib.c_str(), 1);
            ::setenv("NVTX_INJECTION64_PATH", lib.c_str(), 1);
            ::setenv("GPROF_OUTPUT_DIR", scratch.c_str(), 1);
        }
        std::string t = std::to_string(threads), p = std::to_string(pairs);
        ::execl("/proc/self/exe", "nvtx_real_process", "--child", t.c_str(), p.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) r.line.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    rusage ru{};
    ::wait4(pid, &status, 0, &ru);
    r.total_cpu_ns = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
    r.faults = ru.ru_minflt;
    return r;
}

void print_figure(const char* what, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return;
    std::printf("    %-34s best %8.1f  median %8.1f  worst %8.1f\n", what, v.front(), v[v.size() / 2], v.back());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && std::strcmp(argv[1], "--child") == 0) {
        int threads = std::atoi(argv[2]);
        long pairs = std::atol(argv[3]);
        if (threads < 1 || threads > 64 || pairs < 1) return 2;
        return child(threads, pairs);
    }
    int runs = 5, threads = 2;
    std::vector<long> cases;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && i + 1 < argc) threads = std::clamp(std::atoi(argv[++i]), 1, 64);
        else if (a == "--pairs" && i + 1 < argc) cases.push_back(std::max(1L, std::atol(argv[++i])));
    }
    if (cases.empty()) cases = {1000000, 100000};
    std::string lib = collector_path();
    if (::access(lib.c_str(), R_OK) != 0) {
        std::fprintf(stderr, "nvtx_real_process: no collector at %s (set GPROF_COLLECTOR_LIB)\n", lib.c_str());
        return 1;
    }
    char scratch[] = "/tmp/gprof-nvtx-real-XXXXXX";
    if (!::mkdtemp(scratch)) return 1;
    std::printf("nvtx_real_process: %d threads, %d runs per case, alternating bare / collector (%s)\n", threads, runs,
                lib.c_str());
    for (long pairs : cases) {
        std::vector<double> wall[2], app[2], total[2], rest[2], faults[2];
        for (int run = 0; run < runs; ++run) {
            for (int k = 0; k < 2; ++k) {
                bool attached = (run + k) % 2 == 1;
                Run r = run_child(threads, pairs, attached, lib, scratch);
                std::string rm = std::string("rm -rf ") + scratch + "/*";
                if (attached && std::system(rm.c_str()) != 0) return 1;
                double total_pairs = static_cast<double>(pairs) * threads;
                wall[attached].push_back(field(r.line, "ns_per_pair_wall"));
                app[attached].push_back(field(r.line, "ns_per_pair_app_cpu"));
                total[attached].push_back(r.total_cpu_ns / total_pairs);
                rest[attached].push_back(r.total_cpu_ns / total_pairs - app[attached].back());
                faults[attached].push_back(static_cast<double>(r.faults));
            }
        }
        for (int attached = 0; attached < 2; ++attached) {
            std::printf("  %s, %d x %ld pairs (ns per pair):\n", attached ? "collector" : "bare", threads, pairs);
            print_figure("loop wall per thread", wall[attached]);
            print_figure("app threads CPU", app[attached]);
            print_figure("whole process CPU (incl. writer)", total[attached]);
            print_figure("process minus app threads (writer)", rest[attached]);  // + start-up and exit
            print_figure("page faults (count)", faults[attached]);
        }
    }
    std::string rm = std::string("rm -rf ") + scratch;
    return std::system(rm.c_str()) == 0 ? 0 : 1;
}
