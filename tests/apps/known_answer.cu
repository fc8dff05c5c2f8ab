// gprof-test-ka: CUDA programs with known answers, for validating gprof-run on a real GPU.
//
// One source, many modes (nvcc time matters more than elegance: CI has two cores). Every mode does a fixed amount
// of work and, when it ends normally, prints one line
//     KNOWN_ANSWER {json}
// on stdout: what a correct profiler must have recorded (kernels by name with launch configuration and count,
// memcpy/memset by kind and bytes, API call counts, NVTX ranges, stream counts) plus timings measured from inside
// the process. `gprof-test-ka expect MODE` prints the same answer without touching CUDA (device count assumed 1), so
// the expectation logic can be tested on a machine without a GPU.
//
// Exit status: 0 done; 77 no usable CUDA device (message on stderr); 2 usage; 1 a CUDA call failed;
// mode "abort" ends with SIGABRT by design.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kExitNoDevice = 77;
constexpr int kExitCudaError = 1;
constexpr int kExitUsage = 2;

// The object is compiled once and linked twice; which cudart this binary uses is found at run time: a shared
// cudart is a loaded libcudart.so.*, a static one is not.
const char* cudart_kind() {
    void* h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        dlclose(h);
        return "shared";
    }
    return "static";
}

// ----- kernels: extern "C" so the expected names are exact; one template for mangled names ----------------

}  // namespace

extern "C" __global__ void ka_vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void ka_grid2d(float* out, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * width + x] = float(x) * 0.5f + float(y);
}

extern "C" __global__ void ka_dyn_shared(float* out) {
    extern __shared__ float tile[];
    tile[threadIdx.x] = float(threadIdx.x);
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

template <typename T>
__global__ void ka_scale(T* data, T factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

extern "C" __global__ void ka_tiny(int* counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1);
}

extern "C" __global__ void ka_stream_kernel(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * 1.0001f + 1.0f;
}

extern "C" __global__ void ka_thread_kernel(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1.0f;
}

extern "C" __global__ void ka_graph_a(float* d) { d[threadIdx.x] += 1.0f; }
extern "C" __global__ void ka_graph_b(float* d) { d[threadIdx.x] *= 2.0f; }
extern "C" __global__ void ka_graph_c(float* d) { d[threadIdx.x] -= 1.0f; }

extern "C" __global__ void ka_outside_before(int* c) { atomicAdd(c, 1); }
extern "C" __global__ void ka_inside_range(int* c) { atomicAdd(c, 1); }
extern "C" __global__ void ka_outside_after(int* c) { atomicAdd(c, 1); }

extern "C" __global__ void ka_nvtx_setup(float* d) { d[threadIdx.x] = 0.0f; }
extern "C" __global__ void ka_nvtx_compute(float* d) { d[threadIdx.x] += 1.0f; }

extern "C" __global__ void ka_parent_kernel(int* c) { atomicAdd(c, 1); }
extern "C" __global__ void ka_child_kernel(int* c) { atomicAdd(c, 1); }
extern "C" __global__ void ka_before_abort(int* c) { atomicAdd(c, 1); }

// Spins for a fixed number of SM clock cycles: a long kernel whose length does not depend on memory speed.
extern "C" __global__ void ka_large(unsigned long long cycles, int* sink) {
    long long start = clock64();
    while (static_cast<unsigned long long>(clock64() - start) < cycles) {
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(sink, 1);
}

namespace {

// ----- a tiny JSON builder (no dependency: the app must build with nvcc alone) ------------------------------

struct Json {
    std::string s;
    bool first = true;
    void open(char c) { sep(); s += c; first = true; }
    void close(char c) { s += c; first = false; }
    void sep() { if (!first) s += ','; first = false; }
    void key(const char* k) { sep(); s += '"'; s += k; s += "\":"; first = true; }
    void str(const std::string& v) { sep(); s += '"'; for (char c : v) { if (c == '"' || c == '\\') s += '\\'; s += c; } s += '"'; }
    void num(double v) { sep(); char b[64]; std::snprintf(b, sizeof b, "%.17g", v); s += b; }
    void integer(long long v) { sep(); s += std::to_string(v); }
    void boolean(bool v) { sep(); s += v ? "true" : "false"; }
};

struct KernelExpect {
    std::vector<std::string> names;     // exact names a profiler may report (plain or mangled)
    std::vector<std::string> contains;  // substrings of a demangled name, as a fallback
    long long count;
    int grid[3], block[3];
    int dyn_shared;
    int streams;                        // distinct streams the launches used (0: not checked)
    bool from_graph;
};
struct MemcpyExpect { const char* kind; const char* src; const char* dst; long long bytes; long long count; int streams; };
struct MemsetExpect { long long bytes; long long count; unsigned value; };
struct CountExpect { std::string name; long long count; bool at_least; };
// Memory by the kind the reports keep apart ("device", "pool" = cudaMallocAsync, "pinned_host", "managed"), summed
// over devices: allocations made, their bytes, releases, and what is still allocated at exit.
struct MemoryExpect { const char* kind; long long allocations, bytes, releases, live_count, live_bytes; };

struct Answer {
    std::string mode;
    int device_count = 1;
    std::vector<KernelExpect> kernels;
    std::vector<MemcpyExpect> memcpys;
    std::vector<MemsetExpect> memsets;
    std::vector<CountExpect> api;
    std::vector<CountExpect> nvtx;
    std::vector<std::string> absent_kernels;  // names that must NOT be recorded (outside the capture range)
    std::vector<MemoryExpect> memory;         // empty: not checked
    long long device_peak_bytes = -1;         // device 0's peak device memory in use (device + pool), -1 unchecked
    std::string capture = "none";             // capture range the check must ask gprof-run for
    int processes = 1;                        // traces expected (fork: parent, CUDA child, CPU-only child)
    int threads = 0;                          // distinct host threads issuing launches (0: not checked)
    bool expect_abort = false;
    // measured inside the process
    long long iters = 0;
    double loop_ns = 0;
    double gpu_event_ms = -1;                 // cudaEvent-timed GPU time of the measured region, -1 none
};

void kernel(Answer& a, const char* name, long long count, int gx, int gy, int gz, int bx, int by, int bz,
            int dyn = 0, int streams = 1, bool graph = false) {
    a.kernels.push_back(KernelExpect{{name}, {}, count, {gx, gy, gz}, {bx, by, bz}, dyn, streams, graph});
}

void print_answer(const Answer& a) {
    Json j;
    j.open('{');
    j.key("app"); j.str("gprof-test-ka");
    j.key("mode"); j.str(a.mode);
    j.key("cudart"); j.str(cudart_kind());
    j.key("device_count"); j.integer(a.device_count);
    j.key("capture"); j.str(a.capture);
    j.key("processes"); j.integer(a.processes);
    j.key("threads"); j.integer(a.threads);
    j.key("expect_abort"); j.boolean(a.expect_abort);
    j.key("kernels"); j.open('[');
    for (const auto& k : a.kernels) {
        j.open('{');
        j.key("names"); j.open('['); for (const auto& n : k.names) j.str(n); j.close(']');
        j.key("contains"); j.open('['); for (const auto& n : k.contains) j.str(n); j.close(']');
        j.key("count"); j.integer(k.count);
        j.key("grid"); j.open('['); for (int v : k.grid) j.integer(v); j.close(']');
        j.key("block"); j.open('['); for (int v : k.block) j.integer(v); j.close(']');
        j.key("dynamic_shared_bytes"); j.integer(k.dyn_shared);
        j.key("streams"); j.integer(k.streams);
        j.key("graph"); j.boolean(k.from_graph);
        j.close('}');
    }
    j.close(']');
    j.key("memcpy"); j.open('[');
    for (const auto& m : a.memcpys) {
        j.open('{');
        j.key("kind"); j.str(m.kind); j.key("src"); j.str(m.src); j.key("dst"); j.str(m.dst);
        j.key("bytes"); j.integer(m.bytes); j.key("count"); j.integer(m.count); j.key("streams"); j.integer(m.streams);
        j.close('}');
    }
    j.close(']');
    j.key("memset"); j.open('[');
    for (const auto& m : a.memsets) {
        j.open('{');
        j.key("bytes"); j.integer(m.bytes); j.key("count"); j.integer(m.count); j.key("value"); j.integer(m.value);
        j.close('}');
    }
    j.close(']');
    auto counts = [&](const char* key, const std::vector<CountExpect>& v) {
        j.key(key); j.open('[');
        for (const auto& c : v) {
            j.open('{'); j.key("name"); j.str(c.name); j.key("count"); j.integer(c.count);
            j.key("at_least"); j.boolean(c.at_least); j.close('}');
        }
        j.close(']');
    };
    counts("api", a.api);
    counts("nvtx", a.nvtx);
    j.key("absent_kernels"); j.open('['); for (const auto& n : a.absent_kernels) j.str(n); j.close(']');
    j.key("memory"); j.open('[');
    for (const auto& m : a.memory) {
        j.open('{');
        j.key("kind"); j.str(m.kind); j.key("allocations"); j.integer(m.allocations); j.key("bytes"); j.integer(m.bytes);
        j.key("releases"); j.integer(m.releases); j.key("live_count"); j.integer(m.live_count);
        j.key("live_bytes"); j.integer(m.live_bytes);
        j.close('}');
    }
    j.close(']');
    j.key("device_peak_bytes"); j.integer(a.device_peak_bytes);
    j.key("timing"); j.open('{');
    j.key("iters"); j.integer(a.iters);
    j.key("loop_ns"); j.num(a.loop_ns);
    j.key("per_iter_ns"); j.num(a.iters > 0 ? a.loop_ns / double(a.iters) : 0.0);
    j.key("gpu_event_ms"); j.num(a.gpu_event_ms);
    j.close('}');
    j.close('}');
    std::printf("KNOWN_ANSWER %s\n", j.s.c_str());
    std::fflush(stdout);
}

// ----- CUDA helpers ----------------------------------------------------------------------------------------

#define CK(call)                                                                                          \
    do {                                                                                                  \
        cudaError_t err_ = (call);                                                                        \
        if (err_ != cudaSuccess) {                                                                        \
            std::fprintf(stderr, "gprof-test-ka: %s failed: %s (%s) at %s:%d\n", #call, cudaGetErrorName(err_), \
                         cudaGetErrorString(err_), __FILE__, __LINE__);                                   \
            std::exit(kExitCudaError);                                                                    \
        }                                                                                                 \
    } while (0)

// Exits with kExitNoDevice and a clear message when CUDA has no device to offer (no driver, no GPU, ...).
int require_device() {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        std::fprintf(stderr, "gprof-test-ka: no CUDA device: cudaGetDeviceCount returned %s (%s), %d device(s)\n",
                     cudaGetErrorName(err), cudaGetErrorString(err), n);
        std::exit(kExitNoDevice);
    }
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::fprintf(stderr, "gprof-test-ka: device 0: %s (sm_%d%d), %d device(s), cudart %s\n", prop.name, prop.major,
                 prop.minor, n, cudart_kind());
    return n;
}

using Clock = std::chrono::steady_clock;
double ns_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

// ----- modes: each fills the answer (always) and does the work (when run is true) --------------------------

void mode_kernels(Answer& a, bool run) {
    kernel(a, "ka_vec_add", 10, 256, 1, 1, 256, 1, 1);
    kernel(a, "ka_grid2d", 5, 16, 8, 1, 16, 16, 1);
    kernel(a, "ka_dyn_shared", 3, 32, 1, 1, 128, 1, 1, 128 * 4);
    a.kernels.push_back(KernelExpect{{"_Z8ka_scaleIfEvPT_S0_i"}, {"ka_scale<float>"}, 7, {64, 1, 1}, {128, 1, 1}, 0, 1, false});
    a.kernels.push_back(KernelExpect{{"_Z8ka_scaleIdEvPT_S0_i"}, {"ka_scale<double>"}, 2, {64, 1, 1}, {128, 1, 1}, 0, 1, false});
    a.api.push_back({"cudaLaunchKernel", 27, false});
    a.api.push_back({"cudaDeviceSynchronize", 1, false});
    if (!run) return;
    const int n = 256 * 256;
    float *x, *y, *z;
    double* w;
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMalloc(&y, n * sizeof(float)));
    CK(cudaMalloc(&z, n * sizeof(float)));
    CK(cudaMalloc(&w, n * sizeof(double)));
    for (int i = 0; i < 10; ++i) ka_vec_add<<<256, 256>>>(x, y, z, n);
    for (int i = 0; i < 5; ++i) ka_grid2d<<<dim3(16, 8, 1), dim3(16, 16, 1)>>>(z, 256);
    for (int i = 0; i < 3; ++i) ka_dyn_shared<<<32, 128, 128 * 4>>>(z);
    for (int i = 0; i < 7; ++i) ka_scale<float><<<64, 128>>>(x, 1.5f, 64 * 128);
    for (int i = 0; i < 2; ++i) ka_scale<double><<<64, 128>>>(w, 2.0, 64 * 128);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(z)); CK(cudaFree(w));
}

void mode_memcpy(Answer& a, bool run) {
    const long long MiB = 1 << 20;
    const int nstreams = 4;
    a.memcpys.push_back({"HtoD", "Pageable", "Device", 1 * MiB, 4, 1});
    a.memcpys.push_back({"DtoH", "Device", "Pageable", 1 * MiB, 4, 1});
    a.memcpys.push_back({"HtoD", "Pinned", "Device", 2 * MiB, 3, 1});
    a.memcpys.push_back({"DtoH", "Device", "Pinned", 2 * MiB, 3, 1});
    a.memcpys.push_back({"DtoD", "Device", "Device", 3 * MiB, 2, 1});
    a.memcpys.push_back({"HtoD", "Pinned", "Device", 256 * 1024, 5 * nstreams, nstreams});
    a.memcpys.push_back({"DtoH", "Device", "Pinned", 128 * 1024, 5 * nstreams, nstreams});
    a.api.push_back({"cudaMemcpy", 4 + 4 + 3 + 3 + 2, false});
    a.api.push_back({"cudaMemcpyAsync", 10 * nstreams, false});
    bool peer = a.device_count >= 2;
    if (peer) {
        a.memcpys.push_back({"PtoP", "Device", "Device", 1 * MiB, 2, 1});
        a.api.push_back({"cudaMemcpyPeer", 2, false});
    }
    // The pinned buffer is host memory: device 0's peak is the two device buffers only (issue #12).
    a.memory.push_back({"device", peer ? 3 : 2, (peer ? 7 : 6) * MiB, peer ? 3 : 2, 0, 0});
    a.memory.push_back({"pinned_host", 1, 3 * MiB, 1, 0, 0});
    a.device_peak_bytes = 6 * MiB;
    if (!run) return;
    std::vector<char> pageable(3 * MiB, 1);
    char *pinned, *d0, *d1;
    CK(cudaMallocHost(&pinned, 3 * MiB));
    CK(cudaMalloc(&d0, 3 * MiB));
    CK(cudaMalloc(&d1, 3 * MiB));
    for (int i = 0; i < 4; ++i) CK(cudaMemcpy(d0, pageable.data(), 1 * MiB, cudaMemcpyHostToDevice));
    for (int i = 0; i < 4; ++i) CK(cudaMemcpy(pageable.data(), d0, 1 * MiB, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 3; ++i) CK(cudaMemcpy(d0, pinned, 2 * MiB, cudaMemcpyHostToDevice));
    for (int i = 0; i < 3; ++i) CK(cudaMemcpy(pinned, d0, 2 * MiB, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 2; ++i) CK(cudaMemcpy(d1, d0, 3 * MiB, cudaMemcpyDeviceToDevice));
    cudaStream_t s[nstreams];
    for (auto& st : s) CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int r = 0; r < 5; ++r)
        for (int k = 0; k < nstreams; ++k) {
            size_t off = size_t(k) * 256 * 1024;
            CK(cudaMemcpyAsync(d0 + off, pinned + off, 256 * 1024, cudaMemcpyHostToDevice, s[k]));
            CK(cudaMemcpyAsync(pinned + off, d1 + off, 128 * 1024, cudaMemcpyDeviceToHost, s[k]));
        }
    CK(cudaDeviceSynchronize());
    for (auto& st : s) CK(cudaStreamDestroy(st));
    if (peer) {
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, 1, 0));
        char* p1;
        CK(cudaSetDevice(1));
        CK(cudaMalloc(&p1, 1 * MiB));
        CK(cudaSetDevice(0));
        // cudaMemcpyPeer works with or without peer access (staged through the host when not available).
        for (int i = 0; i < 2; ++i) CK(cudaMemcpyPeer(p1, 1, d0, 0, 1 * MiB));
        CK(cudaDeviceSynchronize());
        std::fprintf(stderr, "gprof-test-ka: peer copies done (peer access %s)\n", can ? "available" : "not available");
        CK(cudaFree(p1));
    }
    CK(cudaFree(d0)); CK(cudaFree(d1)); CK(cudaFreeHost(pinned));
}

void mode_memset(Answer& a, bool run) {
    a.memsets.push_back({1 << 20, 3, 0x5A});
    a.memsets.push_back({512 * 1024, 2, 0});
    a.api.push_back({"cudaMemset", 3, false});
    a.api.push_back({"cudaMemsetAsync", 2, false});
    if (!run) return;
    char* d;
    cudaStream_t s;
    CK(cudaMalloc(&d, 1 << 20));
    CK(cudaStreamCreate(&s));
    for (int i = 0; i < 3; ++i) CK(cudaMemset(d, 0x5A, 1 << 20));
    for (int i = 0; i < 2; ++i) CK(cudaMemsetAsync(d, 0, 512 * 1024, s));
    CK(cudaDeviceSynchronize());
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d));
}

void mode_streams(Answer& a, bool run) {
    const int nstreams = 16, per = 100, n = 4096;
    kernel(a, "ka_stream_kernel", nstreams * per, n / 256, 1, 1, 256, 1, 1, 0, nstreams);
    a.api.push_back({"cudaLaunchKernel", nstreams * per, false});
    if (!run) return;
    std::vector<cudaStream_t> s(nstreams);
    float* d;
    CK(cudaMalloc(&d, size_t(nstreams) * n * sizeof(float)));
    for (auto& st : s) CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int r = 0; r < per; ++r)
        for (int k = 0; k < nstreams; ++k) ka_stream_kernel<<<n / 256, 256, 0, s[k]>>>(d + size_t(k) * n, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    for (auto& st : s) CK(cudaStreamDestroy(st));
    CK(cudaFree(d));
}

void mode_tiny(Answer& a, bool run) {
    const long long n = 100000;
    const int warmup = 100;  // launched before the timed loop
    kernel(a, "ka_tiny", n + warmup, 1, 1, 1, 32, 1, 1);
    a.api.push_back({"cudaLaunchKernel", n + warmup, false});
    a.memsets.push_back({sizeof(int), 1, 0});
    a.memcpys.push_back({"DtoH", "Device", "Pageable", sizeof(int), 1, 1});
    a.iters = n;
    if (!run) return;
    int* c;
    cudaStream_t s;
    CK(cudaMalloc(&c, sizeof(int)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < warmup; ++i) ka_tiny<<<1, 32, 0, s>>>(c);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemset(c, 0, sizeof(int)));
    auto t0 = Clock::now();
    for (long long i = 0; i < n; ++i) ka_tiny<<<1, 32, 0, s>>>(c);
    CK(cudaStreamSynchronize(s));
    a.loop_ns = ns_since(t0);
    int got = 0;
    CK(cudaMemcpy(&got, c, sizeof(int), cudaMemcpyDeviceToHost));
    if (got != n) std::fprintf(stderr, "gprof-test-ka: tiny: counter %d, expected %lld\n", got, n);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(c));
}

// Latency-bound: 32 dependent tiny kernels on one stream, then a stream synchronisation, per iteration (small-batch
// inference, RL): every launch's CPU cost and the GPU's start-up latency are on the critical path (issue 17).
void mode_latency(Answer& a, bool run) {
    const long long iters = 3000;
    const int per = 32;
    const int warmup = 10;  // iterations before the timed loop
    kernel(a, "ka_tiny", (iters + warmup) * per, 1, 1, 1, 32, 1, 1);
    a.api.push_back({"cudaLaunchKernel", (iters + warmup) * per, false});
    a.api.push_back({"cudaStreamSynchronize", iters + warmup, false});
    a.memsets.push_back({sizeof(int), 1, 0});
    a.memcpys.push_back({"DtoH", "Device", "Pageable", sizeof(int), 1, 1});
    a.iters = iters;
    if (!run) return;
    int* c;
    cudaStream_t s;
    CK(cudaMalloc(&c, sizeof(int)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < warmup; ++i) {
        for (int k = 0; k < per; ++k) ka_tiny<<<1, 32, 0, s>>>(c);
        CK(cudaStreamSynchronize(s));
    }
    CK(cudaMemset(c, 0, sizeof(int)));
    auto t0 = Clock::now();
    for (long long i = 0; i < iters; ++i) {
        for (int k = 0; k < per; ++k) ka_tiny<<<1, 32, 0, s>>>(c);
        CK(cudaStreamSynchronize(s));
    }
    a.loop_ns = ns_since(t0);
    int got = 0;
    CK(cudaMemcpy(&got, c, sizeof(int), cudaMemcpyDeviceToHost));
    if (got != iters * per) std::fprintf(stderr, "gprof-test-ka: latency: counter %d, expected %lld\n", got, iters * per);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(c));
}

// Cheap API calls, no GPU work: what a profiler's per-call cost shows up in.
void mode_api(Answer& a, bool run) {
    const long long n = 100000;
    a.api.push_back({"cudaEventRecord", n, false});
    a.api.push_back({"cudaEventQuery", n, false});
    a.iters = n;
    if (!run) return;
    cudaStream_t s;
    cudaEvent_t ev;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    auto t0 = Clock::now();
    for (long long i = 0; i < n; ++i) {
        cudaEventRecord(ev, s);
        cudaEventQuery(ev);
    }
    CK(cudaStreamSynchronize(s));
    a.loop_ns = ns_since(t0);
    CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(s));
}

void mode_memcpy_loop(Answer& a, bool run) {
    const long long n = 20000;
    const long long bytes = 4096;
    a.memcpys.push_back({"HtoD", "Pinned", "Device", bytes, n, 1});
    a.memcpys.push_back({"DtoH", "Device", "Pinned", bytes, n, 1});
    a.api.push_back({"cudaMemcpyAsync", 2 * n, false});
    a.iters = n;
    if (!run) return;
    char *h, *d;
    cudaStream_t s;
    CK(cudaMallocHost(&h, 2 * bytes));
    CK(cudaMalloc(&d, bytes));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto t0 = Clock::now();
    for (long long i = 0; i < n; ++i) {
        CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
        CK(cudaMemcpyAsync(h + bytes, d, bytes, cudaMemcpyDeviceToHost, s));
    }
    CK(cudaStreamSynchronize(s));
    a.loop_ns = ns_since(t0);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d));
    CK(cudaFreeHost(h));
}

// A few long kernels; their GPU time is also measured with CUDA events so the profiler's durations can be
// compared with an independent clock.
void mode_large(Answer& a, bool run) {
    const int n = 10;
    int sms = 132;  // H100 SXM; replaced by the real count when running
    if (run) CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    kernel(a, "ka_large", n, sms, 1, 1, 256, 1, 1);
    a.api.push_back({"cudaLaunchKernel", n, false});
    a.iters = n;
    if (!run) return;
    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    // About 50 ms per kernel at the nominal clock.
    unsigned long long cycles = static_cast<unsigned long long>(clock_khz) * 50ULL;
    int* sink;
    cudaEvent_t e0, e1;
    CK(cudaMalloc(&sink, sizeof(int)));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto t0 = Clock::now();
    CK(cudaEventRecord(e0));
    for (int i = 0; i < n; ++i) ka_large<<<sms, 256>>>(cycles, sink);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    a.loop_ns = ns_since(t0);
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    a.gpu_event_ms = ms;
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    CK(cudaFree(sink));
}

void mode_graph(Answer& a, bool run) {
    const int launches = 200;
    kernel(a, "ka_graph_a", launches, 1, 1, 1, 64, 1, 1, 0, 1, true);
    kernel(a, "ka_graph_b", launches, 1, 1, 1, 64, 1, 1, 0, 1, true);
    kernel(a, "ka_graph_c", launches, 1, 1, 1, 64, 1, 1, 0, 1, true);
    a.memsets.push_back({64 * sizeof(float), launches, 0});
    a.api.push_back({"cudaGraphLaunch", launches, false});
    a.api.push_back({"cudaGraphInstantiate", 1, true});  // cudaGraphInstantiateWithFlags also counts
    if (!run) return;
    float* d;
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaMalloc(&d, 64 * sizeof(float)));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemsetAsync(d, 0, 64 * sizeof(float), s));
    ka_graph_a<<<1, 64, 0, s>>>(d);
    ka_graph_b<<<1, 64, 0, s>>>(d);
    ka_graph_c<<<1, 64, 0, s>>>(d);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    auto t0 = Clock::now();
    for (int i = 0; i < launches; ++i) CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    a.loop_ns = ns_since(t0);
    a.iters = launches;
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d));
}

// cudaProfilerStart/Stop around the middle phase; run under gprof-run's cudaProfilerApi capture range.
void mode_range(Answer& a, bool run) {
    a.capture = "cudaProfilerApi";
    kernel(a, "ka_inside_range", 50, 1, 1, 1, 32, 1, 1);
    a.absent_kernels = {"ka_outside_before", "ka_outside_after"};
    if (!run) return;
    int* c;
    CK(cudaMalloc(&c, sizeof(int)));
    for (int i = 0; i < 20; ++i) ka_outside_before<<<1, 32>>>(c);
    CK(cudaDeviceSynchronize());
    CK(cudaProfilerStart());
    for (int i = 0; i < 50; ++i) ka_inside_range<<<1, 32>>>(c);
    CK(cudaDeviceSynchronize());
    CK(cudaProfilerStop());
    for (int i = 0; i < 20; ++i) ka_outside_after<<<1, 32>>>(c);
    CK(cudaDeviceSynchronize());
    CK(cudaFree(c));
}

void launch_from_thread(float* d, int n, int per) {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < per; ++i) ka_thread_kernel<<<n / 128, 128, 0, s>>>(d, n);
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
}

void mode_threads(Answer& a, bool run) {
    const int nthreads = 8, per = 1000, n = 1024;
    kernel(a, "ka_thread_kernel", nthreads * per, n / 128, 1, 1, 128, 1, 1, 0, nthreads);
    a.api.push_back({"cudaLaunchKernel", nthreads * per, false});
    a.threads = nthreads;
    if (!run) return;
    float* d;
    CK(cudaMalloc(&d, size_t(nthreads) * n * sizeof(float)));
    std::vector<std::thread> ts;
    for (int t = 0; t < nthreads; ++t) ts.emplace_back(launch_from_thread, d + size_t(t) * n, n, per);
    for (auto& t : ts) t.join();
    CK(cudaFree(d));
}

// NVTX ranges around phases (push/pop, nested, a start/end range, a mark, a named domain). The capture check
// runs this mode with capture range "nvtx:compute": only ka_nvtx_compute may then be recorded.
void mode_nvtx(Answer& a, bool run) {
    kernel(a, "ka_nvtx_setup", 4, 1, 1, 1, 64, 1, 1);
    kernel(a, "ka_nvtx_compute", 3 * 20, 1, 1, 1, 64, 1, 1);
    a.nvtx.push_back({"setup", 1, false});
    a.nvtx.push_back({"compute", 3, false});
    a.nvtx.push_back({"step", 3 * 20, false});
    a.nvtx.push_back({"async-window", 1, false});
    a.nvtx.push_back({"checkpoint", 1, false});   // a mark
    a.nvtx.push_back({"domain-phase", 1, false}); // in domain "gprof-test-ka"
    if (!run) return;
    float* d;
    nvtxDomainHandle_t dom = nvtxDomainCreateA("gprof-test-ka");
    nvtxRangeId_t window = nvtxRangeStartA("async-window");
    nvtxRangePushA("setup");
    CK(cudaMalloc(&d, 64 * sizeof(float)));
    for (int i = 0; i < 4; ++i) ka_nvtx_setup<<<1, 64>>>(d);
    CK(cudaDeviceSynchronize());
    nvtxRangePop();
    nvtxMarkA("checkpoint");
    for (int phase = 0; phase < 3; ++phase) {
        nvtxRangePushA("compute");
        for (int i = 0; i < 20; ++i) {
            nvtxRangePushA("step");
            ka_nvtx_compute<<<1, 64>>>(d);
            nvtxRangePop();
        }
        CK(cudaDeviceSynchronize());
        nvtxRangePop();
    }
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.colorType = NVTX_COLOR_ARGB;
    attr.color = 0xFF00A0FF;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "domain-phase";
    nvtxDomainRangePushEx(dom, &attr);
    CK(cudaDeviceSynchronize());
    nvtxDomainRangePop(dom);
    nvtxRangeEnd(window);
    nvtxDomainDestroy(dom);
    CK(cudaFree(d));
}

// A child forked before the parent touches CUDA uses CUDA itself (a second traced process); after the parent's
// own CUDA work a second child is forked that only does CPU work and exits normally (inherited CUDA/CUPTI state
// must not hang or crash it).
void mode_fork(Answer& a, bool run) {
    kernel(a, "ka_parent_kernel", 30, 1, 1, 1, 32, 1, 1);
    kernel(a, "ka_child_kernel", 20, 1, 1, 1, 32, 1, 1);
    a.processes = 3;  // the parent, the CUDA child and the CPU-only child: each is a process gprof-run traces
    if (!run) return;
    std::fflush(stdout);
    pid_t child = fork();
    if (child < 0) { std::perror("gprof-test-ka: fork"); std::exit(kExitCudaError); }
    if (child == 0) {
        require_device();
        int* c;
        CK(cudaMalloc(&c, sizeof(int)));
        for (int i = 0; i < 20; ++i) ka_child_kernel<<<1, 32>>>(c);
        CK(cudaDeviceSynchronize());
        CK(cudaFree(c));
        std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitNoDevice) std::exit(kExitNoDevice);  // child said why
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "gprof-test-ka: CUDA child failed (status 0x%x)\n", status);
        std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : kExitCudaError);
    }
    require_device();
    int* c;
    CK(cudaMalloc(&c, sizeof(int)));
    for (int i = 0; i < 30; ++i) ka_parent_kernel<<<1, 32>>>(c);
    CK(cudaDeviceSynchronize());
    pid_t cpu_child = fork();
    if (cpu_child == 0) {
        volatile double x = 0;
        for (int i = 0; i < 1000000; ++i) x = x + 1.0;
        std::exit(0);
    }
    waitpid(cpu_child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "gprof-test-ka: CPU-only child failed (status 0x%x)\n", status);
        std::exit(kExitCudaError);
    }
    CK(cudaFree(c));
}

// Every kind of memory the reports keep apart, with a known peak and one allocation never freed.
void mode_memory(Answer& a, bool run) {
    const long long MiB = 1 << 20;
    a.memory.push_back({"device", 2, 64 * MiB + 2 * MiB, 1, 1, 2 * MiB});
    a.memory.push_back({"pool", 1, 16 * MiB, 1, 0, 0});
    a.memory.push_back({"pinned_host", 1, 8 * MiB, 1, 0, 0});
    a.memory.push_back({"managed", 1, 4 * MiB, 1, 0, 0});
    a.device_peak_bytes = 64 * MiB + 2 * MiB + 16 * MiB;  // pinned host and managed memory are not device memory
    a.memsets.push_back({16 * MiB, 1, 0});
    a.api.push_back({"cudaMalloc", 2, false});
    // cudaMallocHost(&pinned, n) on a char** is cuda_runtime.h's C++ template cudaMallocHost(T**, size_t,
    // flags = 0), which calls ::cudaHostAlloc: the runtime (and so CUPTI, nsys and gprof-run) sees cudaHostAlloc,
    // measured so on an H200 with CUDA 13.0 and 12.9's CUPTI (2026-11-27). Only the C API's
    // cudaMallocHost((void**)&p, n) is recorded as cudaMallocHost.
    a.api.push_back({"cudaHostAlloc", 1, false});
    a.api.push_back({"cudaMallocManaged", 1, false});
    a.api.push_back({"cudaMallocAsync", 1, false});
    a.api.push_back({"cudaFreeAsync", 1, false});
    if (!run) return;
    char *dev, *leak, *pinned, *managed, *pooled;
    CK(cudaMalloc(&dev, 64 * MiB));
    CK(cudaMallocHost(&pinned, 8 * MiB));
    CK(cudaMallocManaged(&managed, 4 * MiB));
    CK(cudaMalloc(&leak, 2 * MiB));  // never freed: the memory report lists it
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMallocAsync(&pooled, 16 * MiB, s));  // out of the device's default pool
    CK(cudaMemsetAsync(pooled, 0, 16 * MiB, s));
    CK(cudaFreeAsync(pooled, s));
    CK(cudaStreamSynchronize(s));
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CK(cudaMemPoolTrimTo(pool, 0));  // the pool gives its reservation back: a MemoryPool record
    CK(cudaStreamDestroy(s));
    CK(cudaFree(dev));
    CK(cudaFreeHost(pinned));
    CK(cudaFree(managed));
    (void)leak;
}

// Work, a pause long enough for a periodic flush, more work, then abort(): the trace must stay readable.
void mode_abort(Answer& a, bool run) {
    kernel(a, "ka_before_abort", 1000, 1, 1, 1, 32, 1, 1);
    a.expect_abort = true;
    if (!run) return;
    int* c;
    CK(cudaMalloc(&c, sizeof(int)));
    for (int i = 0; i < 1000; ++i) ka_before_abort<<<1, 32>>>(c);
    CK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    for (int i = 0; i < 1000; ++i) ka_before_abort<<<1, 32>>>(c);  // in flight when the process dies
    print_answer(a);  // printed before dying: the check needs it
    std::abort();
}

struct Mode {
    const char* name;
    void (*fn)(Answer&, bool);
    const char* help;
};
const Mode kModes[] = {
    {"kernels", mode_kernels, "kernels of known names, launch configurations and counts"},
    {"memcpy", mode_memcpy, "memcpy of every kind (pageable/pinned H<->D, D<->D, async on 4 streams, peer)"},
    {"memset", mode_memset, "cudaMemset and cudaMemsetAsync"},
    {"streams", mode_streams, "16 concurrent streams"},
    {"tiny", mode_tiny, "100 000 tiny kernels on one stream (timed)"},
    {"latency", mode_latency, "3000 x (32 dependent tiny kernels + cudaStreamSynchronize) (timed)"},
    {"api", mode_api, "100 000 x (cudaEventRecord + cudaEventQuery) (timed)"},
    {"memcpy-loop", mode_memcpy_loop, "20 000 x 4 KiB H2D + D2H async copies (timed)"},
    {"large", mode_large, "10 kernels of ~50 ms each, also timed with CUDA events"},
    {"graph", mode_graph, "a CUDA graph (memset + 3 kernels) launched 200 times"},
    {"range", mode_range, "cudaProfilerStart/Stop around the middle phase"},
    {"threads", mode_threads, "launches from 8 host threads"},
    {"nvtx", mode_nvtx, "NVTX ranges around phases"},
    {"fork", mode_fork, "a forked child that uses CUDA"},
    {"abort", mode_abort, "abort() midway"},
    {"memory", mode_memory, "device, async-pool, pinned host and managed memory; one allocation never freed"},
};

const Mode* find_mode(const char* name) {
    for (const auto& m : kModes)
        if (std::strcmp(m.name, name) == 0) return &m;
    return nullptr;
}

int usage(FILE* out) {
    std::fprintf(out,
                 "usage: gprof-test-ka MODE         run MODE, print KNOWN_ANSWER {json}\n"
                 "       gprof-test-ka expect MODE  print MODE's answer without using CUDA\n"
                 "       gprof-test-ka list         list the modes\n"
                 "exit: 0 ok, 77 no CUDA device, 2 usage, 1 CUDA error\nmodes:\n");
    for (const auto& m : kModes) std::fprintf(out, "  %-12s %s\n", m.name, m.help);
    return out == stdout ? 0 : kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage(stderr);
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help") return usage(stdout);
    if (cmd == "list") {
        for (const auto& m : kModes) std::printf("%s\n", m.name);
        return 0;
    }
    if (cmd == "expect") {
        const Mode* m = argc >= 3 ? find_mode(argv[2]) : nullptr;
        if (!m) return usage(stderr);
        Answer a;
        a.mode = m->name;
        m->fn(a, false);
        print_answer(a);
        return 0;
    }
    const Mode* m = find_mode(cmd.c_str());
    if (!m) return usage(stderr);
    Answer a;
    a.mode = m->name;
    // fork must not initialise CUDA before forking (a child cannot use a parent's CUDA context).
    if (cmd != "fork") a.device_count = require_device();
    auto t0 = Clock::now();
    m->fn(a, true);
    double total = ns_since(t0);
    if (a.iters == 0) a.loop_ns = total;
    print_answer(a);
    return 0;
}
