// NVTX push+pop cost through the real NVTX loader: bare (no tool: the loader's no-op), and with the collector
// attached (NVTX_INJECTION64_PATH). The collector is attached by re-running this program with the variables set
// (a process can only load one NVTX tool): `collector_nvtx` runs the bare case itself, then execs itself with
// GPROF_BENCH_CHILD=1 and the injection variables for the attached case.
#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

const char* mode() {
    const char* m = std::getenv("GPROF_BENCH_CHILD");
    return m && *m ? "collector" : "bare";
}

void BM_NvtxPushPop(benchmark::State& state) {
    for (auto _ : state) {
        nvtxRangePushA("bench-range");
        nvtxRangePop();
    }
    state.SetLabel(mode());
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NvtxPushPop)->MinTime(0.5);

// The same loop in batches of 1000 pairs, reporting the fastest batch: on a shared, loaded machine the mean
// includes preemption by other processes (and by the collector's own writer thread on 2 cores); the best batch
// is the cost of the calls themselves.
void BM_NvtxPushPopBestBatch(benchmark::State& state) {
    double best = 1e30;
    for (auto _ : state) {
        timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < 1000; ++i) {
            nvtxRangePushA("bench-range");
            nvtxRangePop();
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
        if (ns < best) best = ns;
    }
    state.counters["best_ns_per_pair"] = best / 1000.0;
    state.SetLabel(mode());
}
BENCHMARK(BM_NvtxPushPopBestBatch)->MinTime(0.5);

void BM_NvtxPushPopThreads(benchmark::State& state) {
    for (auto _ : state) {
        nvtxRangePushA("bench-range");
        nvtxRangePop();
    }
    state.SetLabel(mode());
}
BENCHMARK(BM_NvtxPushPopThreads)->Threads(2)->MinTime(0.5);

void BM_NvtxMark(benchmark::State& state) {
    for (auto _ : state) nvtxMarkA("bench-mark");
    state.SetLabel(mode());
}
BENCHMARK(BM_NvtxMark)->MinTime(0.5);

void BM_NvtxPushExPop(benchmark::State& state) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF336699u;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "bench-ex";
    for (auto _ : state) {
        nvtxRangePushEx(&a);
        nvtxRangePop();
    }
    state.SetLabel(mode());
}
BENCHMARK(BM_NvtxPushExPop)->MinTime(0.5);

std::string collector_path(const char* argv0) {
    if (const char* p = std::getenv("GPROF_COLLECTOR_LIB")) return p;
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string(argv0);
    return self.substr(0, self.rfind('/')) + "/../lib/gprof-run/libgprof-collector.so";
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (std::getenv("GPROF_BENCH_CHILD")) return 0;
    // The attached run: same benchmarks in a fresh process with the collector injected. Its trace (GBs: the
    // loop outruns the writer, which counts what it drops) goes to a scratch folder removed afterwards.
    std::string lib = collector_path(argv[0]);
    char scratch[] = "/tmp/gprof-bench-nvtx-XXXXXX";
    if (!::mkdtemp(scratch)) return 1;
    pid_t child = ::fork();
    if (child == 0) {
        ::setenv("GPROF_BENCH_CHILD", "1", 1);
        ::setenv("NVTX_INJECTION64_PATH", lib.c_str(), 1);
        ::setenv("LD_PRELOAD", lib.c_str(), 1);
        ::setenv("GPROF_OUTPUT_DIR", scratch, 1);
        std::vector<char*> args(argv, argv + argc);
        args.push_back(nullptr);
        ::execv("/proc/self/exe", args.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
