// A test program playing a CUDA application against the CUPTI stand-in, with the collector injected the way
// gprof-run injects it (LD_PRELOAD + CUDA_INJECTION64_PATH + GPROF_CUPTI_LIB=<stand-in>). It does what the CUDA
// driver would do during cuInit: dlopen CUDA_INJECTION64_PATH and call InitializeInjection. Then it drives the
// stand-in's gprof_test_standin_* functions as if it made CUDA calls.
//
//   test_cupti_standin_app <mode> [n]
//     basic N       N kernel launches + memcpys, then a normal exit (exit flush)
//     dropped N     N launches, with 1000 records reported dropped by CUPTI
//     profiler N    N launches before, inside and after a cudaProfilerStart/Stop range (N each)
//     periodic N    N launches, sleep 600 ms (> periodic flush), then SIGKILL itself
//     crash N       N launches, sleep 600 ms, then SIGSEGV
//     fork N        N launches, fork; the child re-initialises (InitializeInjection), launches N, exits
//     exit-hang N   N launches, exit normally while the forced flush hangs (GPROF_TEST_STANDIN_SCRIPT=flush-hang)
//     graph N       N launches of a CUDA graph (1 memset, 3 kernels, 1 memcpy), then one plain kernel launch
//     nvtx-capture N   work outside and inside NVTX ranges named "compute" (through the real NVTX loader): N
//                   launches before any range, in a "compute" range of another domain, in a range "computer";
//                   then 3 times: push "compute" { N launches, a nested "compute" { N }, N } pop, N launches
//                   after it. Kernels inside are "_Z6insidev", all others "_Z7outsidev".
//     nvtx-capture-ex N   domain "train": a push of the registered string "step" (N inside), then a start/end
//                   range L"step" (wide) ended on another thread (N inside), N outside before, between, after
//     second-tool N N launches; then a second CUPTI client (GPROF_TEST_SECOND_TOOL, like kineto in a PyTorch
//                   process) asks for a subscription twice, with cuptiSubscribe and with cuptiSubscribe_v2 named
//                   "kineto-test"; N launches more
//     fork-cpu-child N   N launches; fork: the child does CPU work only (no CUDA call) and exits; N launches more
//     app-queries-device N   N launches, then the program's own cuDeviceGet + cuDeviceGetName (needs the libcuda
//                   stand-in): its calls are recorded, the collector's own device queries are not
//     short-after-context N   the context, N launches, then 20 ms of other work and a normal exit: a short
//                   program (the H200's known-answer runs ended 8-26 ms after their first context)
//     exit-at-context    the context, then at once a normal exit: the collector's writer has no time to run
//                   anything before the exit handlers
//     loaded-no-init     libcuda is loaded (GPROF_TEST_CUDA_STANDIN) but cuInit is never called: no CUDA call
//     init-without-injection   cuInit with CUDA_INJECTION64_PATH removed from the environment first
//     call-sites N  call sites (issue 18): N launches from gprof_test_site_launch, N memcpys from
//                   gprof_test_site_memcpy, N cudaDeviceSynchronize taking 3 ms from gprof_test_site_slow_sync, N
//                   taking no time from gprof_test_site_fast_sync, N cudaEventRecord from gprof_test_site_other;
//                   prints "site NAME 0xADDRESS" for each of these functions first
//     call-sites-init N   2 runtime calls from gprof_test_site_first_call, the first one initialising the runtime
//                   stand-in: N driver calls made inside libc's pthread_once (the real runtime's shape)
//     call-sites-deep N   3 launches from each of N distinct stacks (gprof_test_site_recurse at depth 0..N-1)
//     call-sites-fork N   N launches from gprof_test_site_launch; fork: the child re-initialises and does the same
//     mix N         every kind of record the stand-in makes, N times: a launch, a cudaMemcpy, a cudaMemset, a
//                   cudaMallocAsync + cudaFreeAsync of 1 MiB from the default pool (its MEMORY_POOL "created" record
//                   comes with the first), a cudaMalloc + cudaFree; then one cudaMemPoolTrimTo(0). Personality
//                   tests read every field back (tests/collector/test_cupti_personalities.cpp)
//     gpu-metrics N   PM sampling's values (GPROF_GPU_METRICS_DEVICES): SM active 99.5 %, DRAM throughput 12.25 %,
//                   166 400 GR cycles a sample, N launches, 300 ms; then SM active and DRAM throughput 0 for 200 ms;
//                   prints "busy T0 T1 idle T2" (cuptiGetTimestamp): the busy values hold from T0 to T1, the zeros
//                   from T2 on
//     timed-launches N    N launches (+ the runtime's cuKernelGetName) from 16 frames below main, timed; prints
//                   "launch ns: X" (the thread's CPU time per launch over the loop; docs/performance.md, call sites)
// With GPROF_TEST_CUDA_STANDIN (the libcuda stand-in) the program initialises CUDA through it (cuInit, which
// calls InitializeInjection as the driver does); without, it calls InitializeInjection itself.
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include "standin_control.h"

namespace {

void* g_standin = nullptr;
void* g_driver = nullptr;  // the libcuda stand-in, when GPROF_TEST_CUDA_STANDIN names it

template <class F>
F fn(const char* name) {
    auto f = reinterpret_cast<F>(dlsym(g_standin, name));
    if (!f) {
        std::fprintf(stderr, "standin_app: %s missing\n", name);
        std::exit(3);
    }
    return f;
}
#define SI(name) fn<decltype(&name)>(#name)

void initialize_injection() {
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    if (!path) return;
    void* h = dlopen(path, RTLD_NOW);
    if (!h) {
        std::fprintf(stderr, "standin_app: %s\n", dlerror());
        std::exit(3);
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection"));
    if (init) init();
}

// cuInit through the libcuda stand-in (which injects the collector), or InitializeInjection directly.
void init_cuda() {
    if (g_driver) {
        auto cu_init = reinterpret_cast<int (*)(unsigned)>(dlsym(g_driver, "cuInit"));
        if (!cu_init) std::exit(3);
        cu_init(0);
    } else {
        initialize_injection();
    }
}

// The path of a libcupti* object in the process ("" when none).
std::string loaded_cupti() {
    std::string path;
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) -> int {
            const char* name = info->dlpi_name;
            const char* slash = name ? std::strrchr(name, '/') : nullptr;
            if (slash && std::strncmp(slash + 1, "libcupti.so", 11) == 0) {
                *static_cast<std::string*>(data) = name;
                return 1;
            }
            return 0;
        },
        &path);
    return path;
}

void launches(int n, const char* kernel) {
    for (int i = 0; i < n; ++i) {
        SI(gprof_test_standin_launch_kernel)(kernel, 7);
        SI(gprof_test_standin_memcpy)(4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    }
}

void outside(int n) { launches(n, "_Z7outsidev"); }
void inside(int n) { launches(n, "_Z6insidev"); }

nvtxEventAttributes_t attributes() {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

void nvtx_capture(int n) {
    outside(n);
    nvtxDomainHandle_t other = nvtxDomainCreateA("other");
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "compute";
    nvtxDomainRangePushEx(other, &a);  // the right name in the wrong domain
    outside(n);
    nvtxDomainRangePop(other);
    nvtxRangePushA("computer");  // a longer name
    outside(n);
    nvtxRangePop();
    for (int phase = 0; phase < 3; ++phase) {
        nvtxRangePushA("compute");
        inside(n);
        nvtxRangePushA("compute");  // nested, same name: the outer range still holds
        inside(n);
        nvtxRangePop();
        inside(n);
        nvtxRangePop();
        outside(n);
    }
}

void nvtx_capture_ex(int n) {
    nvtxDomainHandle_t train = nvtxDomainCreateA("train");
    nvtxStringHandle_t step = nvtxDomainRegisterStringA(train, "step");
    outside(n);
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = step;
    nvtxDomainRangePushEx(train, &a);
    inside(n);
    nvtxDomainRangePop(train);
    outside(n);
    nvtxEventAttributes_t w = attributes();
    w.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    w.message.unicode = L"step";
    nvtxRangeId_t id = nvtxDomainRangeStartEx(train, &w);
    inside(n);
    std::thread ender([train, id] { nvtxDomainRangeEnd(train, id); });
    ender.join();
    outside(n);
}

}  // namespace

// Call sites: each CUDA call below is made from a function of its own, so the test can check that the first frame
// of its stack lies inside that function (extent from this binary's symbol table, address printed at run time).
// The empty asm after each call keeps it a call (never a tail jump out of the function).
#define SITE_END asm volatile("" ::: "memory")
extern "C" __attribute__((noinline)) uint32_t gprof_test_site_launch() {
    uint32_t c = SI(gprof_test_standin_launch_kernel)("_Z4sitev", 7);
    SITE_END;
    return c;
}
extern "C" __attribute__((noinline)) uint32_t gprof_test_site_memcpy() {
    uint32_t c = SI(gprof_test_standin_memcpy)(1 << 20, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    SITE_END;
    return c;
}
extern "C" __attribute__((noinline)) uint32_t gprof_test_site_slow_sync() {
    uint32_t c = SI(gprof_test_standin_blocking_call)(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 3000000);
    SITE_END;
    return c;
}
extern "C" __attribute__((noinline)) uint32_t gprof_test_site_fast_sync() {
    uint32_t c = SI(gprof_test_standin_blocking_call)(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 0);
    SITE_END;
    return c;
}
extern "C" __attribute__((noinline)) uint32_t gprof_test_site_other() {
    uint32_t c = SI(gprof_test_standin_runtime_call)(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020);
    SITE_END;
    return c;
}
extern "C" __attribute__((noinline)) uint32_t gprof_test_site_first_call(uint32_t driver_calls) {
    uint32_t c = SI(gprof_test_standin_runtime_first_call)(driver_calls);
    SITE_END;
    return c;
}
extern "C" __attribute__((noinline)) uint32_t gprof_test_site_recurse(int depth) {
    uint32_t c = depth <= 0 ? SI(gprof_test_standin_launch_kernel)("_Z4deepv", 7) : gprof_test_site_recurse(depth - 1);
    SITE_END;
    return c;
}

extern "C" __attribute__((noinline)) double gprof_test_timed_launches(int depth, int n) {
    double r = 0;
    if (depth > 0) {
        r = gprof_test_timed_launches(depth - 1, n);
    } else {
        // The launching thread's CPU time: what the program's thread pays, unmoved by other processes on a shared
        // machine (the collector's writer thread runs beside it and is not counted here).
        auto launch = SI(gprof_test_standin_launch_kernel);
        timespec t0, t1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        for (int i = 0; i < n; ++i) launch("_Z5timedv", 7);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        r = (static_cast<double>(t1.tv_sec - t0.tv_sec) * 1e9 + static_cast<double>(t1.tv_nsec - t0.tv_nsec)) / n;
    }
    SITE_END;
    return r;
}

namespace {
void print_sites() {
    std::printf("site gprof_test_site_launch %p\n", reinterpret_cast<void*>(&gprof_test_site_launch));
    std::printf("site gprof_test_site_memcpy %p\n", reinterpret_cast<void*>(&gprof_test_site_memcpy));
    std::printf("site gprof_test_site_slow_sync %p\n", reinterpret_cast<void*>(&gprof_test_site_slow_sync));
    std::printf("site gprof_test_site_fast_sync %p\n", reinterpret_cast<void*>(&gprof_test_site_fast_sync));
    std::printf("site gprof_test_site_other %p\n", reinterpret_cast<void*>(&gprof_test_site_other));
    std::printf("site gprof_test_site_recurse %p\n", reinterpret_cast<void*>(&gprof_test_site_recurse));
    std::printf("site gprof_test_site_first_call %p\n", reinterpret_cast<void*>(&gprof_test_site_first_call));
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    const char* mode = argv[1];
    int n = argc > 2 ? std::atoi(argv[2]) : 100;
    // The stand-in is GPROF_CUPTI_LIB, or (unset) whichever libcupti* the collector's own search loaded.
    const char* lib = std::getenv("GPROF_CUPTI_LIB");
    if (const char* driver = std::getenv("GPROF_TEST_CUDA_STANDIN")) {
        g_driver = dlopen(driver, RTLD_NOW | RTLD_GLOBAL);
        if (!g_driver) {
            std::fprintf(stderr, "standin_app: %s\n", dlerror());
            return 3;
        }
    }
    if (!std::strcmp(mode, "loaded-no-init")) {
        std::printf("done %s\n", mode);  // libcuda in the process, no CUDA call made
        return 0;
    }
    if (!std::strcmp(mode, "init-without-injection")) {
        ::unsetenv("CUDA_INJECTION64_PATH");
        init_cuda();
        std::printf("done %s\n", mode);
        return 0;
    }
    // The collector's session loads the stand-in itself; open the same object to drive it.
    init_cuda();
    std::string found = lib ? lib : loaded_cupti();
    if (found.empty()) {
        std::printf("done %s (no CUPTI loaded)\n", mode);  // the collector found none it could use: nothing to drive
        return 0;
    }
    g_standin = dlopen(found.c_str(), RTLD_NOW);
    if (!g_standin) return 3;
    SI(gprof_test_standin_context_created)(0);

    if (!std::strcmp(mode, "basic") || !std::strcmp(mode, "exit-hang")) {
        launches(n, "_Z6kernelv");
    } else if (!std::strcmp(mode, "transient-names")) {
        // Each name lives in a buffer that is overwritten right after its launch and freed at the end, before the
        // collector's writer has necessarily read the records: the names in the trace must still be right.
        for (int i = 0; i < n; ++i) {
            char* name = static_cast<char*>(std::malloc(32));
            std::snprintf(name, 32, "_Z9transientILi%dEEvv", i % 4);
            SI(gprof_test_standin_launch_kernel)(name, 7);
            std::memset(name, 'X', 31);
            name[31] = '\0';
            std::free(name);
        }
    } else if (!std::strcmp(mode, "mix")) {
        for (int i = 0; i < n; ++i) {
            uint64_t address = 0x7e0000100000ull + (static_cast<uint64_t>(i) << 20);
            SI(gprof_test_standin_launch_kernel)("_Z3mixv", 7);
            SI(gprof_test_standin_memcpy)(4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
            SI(gprof_test_standin_memset)(512, 0xAB);
            SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, 0,
                                          CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, address, 1 << 20, 1);
            SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, 1,
                                          CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, address, 1 << 20, 1);
            SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 0, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                          0x7f0000000000ull + (static_cast<uint64_t>(i) << 12), 4096, 0);
            SI(gprof_test_standin_memory)(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, 1, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                          0x7f0000000000ull + (static_cast<uint64_t>(i) << 12), 4096, 0);
        }
        SI(gprof_test_standin_pool_trim)(0);
    } else if (!std::strcmp(mode, "dropped")) {
        launches(n, "_Z6kernelv");
        SI(gprof_test_standin_add_dropped)(1000);
        launches(1, "_Z6kernelv");
    } else if (!std::strcmp(mode, "profiler")) {
        launches(n, "_Z6beforev");
        SI(gprof_test_standin_profiler_start)();
        launches(n, "_Z6insidev");
        SI(gprof_test_standin_profiler_stop)();
        launches(n, "_Z5afterv");
    } else if (!std::strcmp(mode, "periodic") || !std::strcmp(mode, "crash")) {
        launches(n, "_Z6kernelv");
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        if (!std::strcmp(mode, "periodic")) ::kill(::getpid(), SIGKILL);
        ::raise(SIGSEGV);
    } else if (!std::strcmp(mode, "fork")) {
        launches(n, "_Z6parentv");
        pid_t pid = ::fork();
        if (pid == 0) {
            initialize_injection();  // the driver re-initialising in the child
            launches(n, "_Z5childv");
            std::exit(0);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        launches(1, "_Z6parentv");
        std::printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else if (!std::strcmp(mode, "second-tool")) {
        launches(n, "_Z6beforev");
        const char* tool_path = std::getenv("GPROF_TEST_SECOND_TOOL");
        void* tool = tool_path ? dlopen(tool_path, RTLD_NOW) : nullptr;
        auto subscribe = tool ? reinterpret_cast<int (*)(int, const char*)>(
                                    dlsym(tool, "gprof_test_second_tool_subscribe"))
                              : nullptr;
        if (!subscribe) {
            std::fprintf(stderr, "standin_app: no second tool (%s)\n", dlerror());
            return 3;
        }
        subscribe(0, nullptr);
        subscribe(1, "kineto-test");
        launches(n, "_Z5afterv");
    } else if (!std::strcmp(mode, "app-queries-device")) {
        launches(n, "_Z6kernelv");
        auto get = reinterpret_cast<int (*)(int*, int)>(g_driver ? dlsym(g_driver, "cuDeviceGet") : nullptr);
        auto name = reinterpret_cast<int (*)(char*, int, int)>(g_driver ? dlsym(g_driver, "cuDeviceGetName") : nullptr);
        if (!get || !name) return 3;
        int device = -1;
        char text[64] = {};
        get(&device, 0);
        name(text, sizeof text, device);
        std::printf("device %d: %s\n", device, text);
    } else if (!std::strcmp(mode, "exit-at-context")) {
        std::printf("done %s\n", mode);
        std::exit(0);
    } else if (!std::strcmp(mode, "short-after-context")) {
        launches(n, "_Z5shortv");
        timespec pause{0, 20 * 1000 * 1000};
        ::nanosleep(&pause, nullptr);
    } else if (!std::strcmp(mode, "fork-cpu-child")) {
        launches(n, "_Z6parentv");
        std::fflush(stdout);
        pid_t pid = ::fork();
        if (pid == 0) {
            volatile double x = 0;
            for (int i = 0; i < 100000; ++i) x = x + 1.0;
            std::exit(0);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        launches(n, "_Z6parentv");
        std::printf("cpu child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else if (!std::strcmp(mode, "graph")) {
        for (int i = 0; i < n; ++i) SI(gprof_test_standin_graph_launch)(3, "_Z7graph_kv", 3, 1, 1, 5, 0);
        launches(1, "_Z5plainv");
    } else if (!std::strcmp(mode, "call-sites")) {
        print_sites();
        for (int i = 0; i < n; ++i) gprof_test_site_launch();
        for (int i = 0; i < n; ++i) gprof_test_site_memcpy();
        for (int i = 0; i < n; ++i) gprof_test_site_slow_sync();
        for (int i = 0; i < n; ++i) gprof_test_site_fast_sync();
        for (int i = 0; i < n; ++i) gprof_test_site_other();
    } else if (!std::strcmp(mode, "timed-launches")) {
        gprof_test_timed_launches(16, n / 10 + 1);  // warm-up: first launches load the "module", fill caches
        std::printf("launch ns: %.1f\n", gprof_test_timed_launches(16, n));
    } else if (!std::strcmp(mode, "call-sites-init")) {
        print_sites();
        for (int i = 0; i < 2; ++i) gprof_test_site_first_call(static_cast<uint32_t>(n));
    } else if (!std::strcmp(mode, "call-sites-deep")) {
        print_sites();
        // The count hidden from the compiler: a loop of a known 3 is unrolled into three call sites of one line (a
        // distinct stack each).
        int three = 3;
        asm volatile("" : "+r"(three));
        for (int depth = 0; depth < n; ++depth)
            for (int i = 0; i < three; ++i) gprof_test_site_recurse(depth);
    } else if (!std::strcmp(mode, "call-sites-fork")) {
        print_sites();
        for (int i = 0; i < n; ++i) gprof_test_site_launch();
        std::fflush(stdout);
        pid_t pid = ::fork();
        if (pid == 0) {
            initialize_injection();  // the driver re-initialising in the child
            for (int i = 0; i < n; ++i) gprof_test_site_launch();
            std::exit(0);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        std::printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else if (!std::strcmp(mode, "gpu-metrics")) {
        auto pm_set = SI(gprof_test_standin_pm_set);
        pm_set("sm__cycles_active.avg.pct_of_peak_sustained_elapsed", 99.5);
        pm_set("dram__throughput.avg.pct_of_peak_sustained_elapsed", 12.25);
        pm_set("gr__cycles_elapsed.max", 166400);
        // Samples within [busy_from, busy_until] hold the values above, those starting after idle_from the zeros.
        uint64_t busy_from = 0, busy_until = 0, idle_from = 0;
        SI(cuptiGetTimestamp)(&busy_from);
        launches(n, "_Z4busyv");
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        SI(cuptiGetTimestamp)(&busy_until);
        pm_set("sm__cycles_active.avg.pct_of_peak_sustained_elapsed", 0);
        pm_set("dram__throughput.avg.pct_of_peak_sustained_elapsed", 0);
        SI(cuptiGetTimestamp)(&idle_from);
        std::printf("busy %llu %llu idle %llu\n", static_cast<unsigned long long>(busy_from),
                    static_cast<unsigned long long>(busy_until), static_cast<unsigned long long>(idle_from));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } else if (!std::strcmp(mode, "nvtx-capture")) {
        nvtx_capture(n);
    } else if (!std::strcmp(mode, "nvtx-capture-ex")) {
        nvtx_capture_ex(n);
    } else {
        return 2;
    }
    std::printf("done %s (CUPTI subscribed: %d)\n", mode, SI(gprof_test_standin_subscribed)());
    return 0;
}
