// An NVTX-heavy program, for the end of a run under gprof-run (bench/end_of_run_timing): T threads, each a loop of
// N nested push/push/pop/pop with a handful of names, as PyTorch's emit_nvtx() (a range per op) or a decorator on
// every function makes them. 6 threads x 800 000 iterations (the defaults) make 9.6 M ranges, a ~165 MB trace.
//
//   nvtx_heavy_app [THREADS [ITERATIONS]]
//
// Its last act is one line on stderr, "nvtx_heavy_app: exit at <CLOCK_MONOTONIC ns>", so that a driver can time
// what happens after the program ended (gprof-run's end of run).
#include <nvtx3/nvToolsExt.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 6;
    const long iterations = argc > 2 ? std::atol(argv[2]) : 800'000;
    if (threads < 1 || threads > 256 || iterations < 0) {
        std::fprintf(stderr, "usage: nvtx_heavy_app [THREADS (1-256) [ITERATIONS]]\n");
        return 2;
    }
    static const char* outer[] = {"aten::linear", "aten::conv2d", "aten::layer_norm", "aten::softmax"};
    static const char* inner[] = {"aten::addmm", "aten::mul", "aten::add", "aten::copy_"};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([t, iterations] {
            for (long i = 0; i < iterations; ++i) {
                nvtxRangePushA(outer[i % 4]);
                nvtxRangePushA(inner[(i + t) % 4]);
                nvtxRangePop();
                nvtxRangePop();
            }
        });
    for (auto& th : pool) th.join();
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    std::fprintf(stderr, "nvtx_heavy_app: exit at %llu\n",
                 static_cast<unsigned long long>(ts.tv_sec) * 1000000000ull + static_cast<unsigned long long>(ts.tv_nsec));
    return 0;
}
