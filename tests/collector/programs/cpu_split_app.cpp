// A known answer for CPU sampling (issue 35): one thread spends about 70 % of its CPU time in work_a and 30 % in
// work_b, measured here with the thread's own CPU clock and printed ("measured a=70.1 b=29.9"), so the test compares
// the sampled split with the real one. The chunk sizes vary at random: a loop that repeats in step with the kernel's
// tick would be sampled at a few phases of it only (docs/collector.md, "CPU sampling").
//   cpu_split_app SECONDS          run for SECONDS of CPU time
//   cpu_split_app SECONDS threads  the same, and a second thread running work_b only, joined at the end
//   cpu_split_app SECONDS fork     the same, and a forked child running work_b only, waited for at the end
// A test double, never installed. Built -O2 -g without frame pointers, as programs are.
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double thread_cpu() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

volatile double sink;

}  // namespace

__attribute__((noinline)) void work_a(long n) {
    double x = 0;
    for (long i = 0; i < n; ++i) x += static_cast<double>(i) * 0.5 + static_cast<double>(i & 3);
    sink = x;
}

__attribute__((noinline)) void work_b(long n) {
    double x = 0;
    for (long i = 0; i < n; ++i) x += static_cast<double>(i) * 0.25 + static_cast<double>(i & 7);
    sink = x;
}

namespace {

double g_seconds = 1;

void* other_thread(void*) {
    double t0 = thread_cpu();
    while (thread_cpu() - t0 < g_seconds) work_b(50000);
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    g_seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    pthread_t t{};
    bool threads = argc > 2 && std::strcmp(argv[2], "threads") == 0;
    bool forks = argc > 2 && std::strcmp(argv[2], "fork") == 0;
    if (threads) pthread_create(&t, nullptr, other_thread, nullptr);
    pid_t child = forks ? fork() : -1;
    if (child == 0) {
        other_thread(nullptr);
        std::exit(0);
    }
    unsigned seed = 12345;
    double in_a = 0, in_b = 0, start = thread_cpu();
    while (thread_cpu() - start < g_seconds) {
        seed = seed * 1103515245u + 12345u;
        long r = 20000 + static_cast<long>((seed >> 16) % 60000);
        double t0 = thread_cpu();
        work_a(7 * r);
        double t1 = thread_cpu();
        work_b(3 * r);
        double t2 = thread_cpu();
        in_a += t1 - t0;
        in_b += t2 - t1;
    }
    if (threads) pthread_join(t, nullptr);
    if (child > 0) waitpid(child, nullptr, 0);
    std::printf("measured a=%.1f b=%.1f\n", 100 * in_a / (in_a + in_b), 100 * in_b / (in_a + in_b));
    return 0;
}
