// gprof-example-nvtx: a small program for trying gprof-run on any machine.
//
// It marks its phases with NVTX (header-only NVTX v3: no library to link) and, when a CUDA driver and a GPU are
// there, also does real CUDA work through the driver API, loaded with dlopen: copies to and from the GPU and a
// kernel JIT-compiled from the PTX below. Without a GPU it still runs and the NVTX ranges are still recorded.
//
//   gprof-example-nvtx [steps]      (default 20 steps)
#include <cuda.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// y[i] = 2 * y[i] for i < n; .target sm_75 is the oldest CUDA 13 accepts, the driver JITs it for the GPU present.
const char* kPtx = R"(
.version 8.0
.target sm_75
.address_size 64
.visible .entry gprof_example_scale(.param .u64 p_data, .param .u32 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p_data];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.s32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  mul.f32 %f2, %f1, 0f40000000;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}
)";

// The few driver entry points used, resolved at run time so the program needs no CUDA to start.
struct Driver {
    decltype(&cuInit) init = nullptr;
    decltype(&cuDeviceGetCount) device_count = nullptr;
    decltype(&cuDeviceGet) device_get = nullptr;
    decltype(&cuDevicePrimaryCtxRetain) ctx_retain = nullptr;
    decltype(&cuDevicePrimaryCtxRelease) ctx_release = nullptr;
    decltype(&cuCtxSetCurrent) ctx_set = nullptr;
    decltype(&cuModuleLoadData) module_load = nullptr;
    decltype(&cuModuleGetFunction) module_function = nullptr;
    decltype(&cuMemAlloc) mem_alloc = nullptr;
    decltype(&cuMemFree) mem_free = nullptr;
    decltype(&cuMemcpyHtoD) copy_htod = nullptr;
    decltype(&cuMemcpyDtoH) copy_dtoh = nullptr;
    decltype(&cuLaunchKernel) launch = nullptr;
    decltype(&cuCtxSynchronize) sync = nullptr;
};

template <typename F>
bool resolve(void* lib, const char* name, F& out) {
    out = reinterpret_cast<F>(dlsym(lib, name));
    return out != nullptr;
}

// The GPU part: a context, a module, a buffer. Absent (ok == false) on machines without a usable GPU.
struct Gpu {
    Driver d;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUfunction fn = nullptr;
    CUdeviceptr buf = 0;
    bool ok = false;
};

bool open_gpu(Gpu& g, size_t bytes) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::printf("no CUDA driver (libcuda.so.1 not found): NVTX ranges only\n");
        return false;
    }
    Driver& d = g.d;
    bool all = resolve(lib, "cuInit", d.init) && resolve(lib, "cuDeviceGetCount", d.device_count) &&
               resolve(lib, "cuDeviceGet", d.device_get) &&
               resolve(lib, "cuDevicePrimaryCtxRetain", d.ctx_retain) &&
               resolve(lib, "cuDevicePrimaryCtxRelease_v2", d.ctx_release) &&
               resolve(lib, "cuCtxSetCurrent", d.ctx_set) && resolve(lib, "cuModuleLoadData", d.module_load) &&
               resolve(lib, "cuModuleGetFunction", d.module_function) &&
               resolve(lib, "cuMemAlloc_v2", d.mem_alloc) && resolve(lib, "cuMemFree_v2", d.mem_free) &&
               resolve(lib, "cuMemcpyHtoD_v2", d.copy_htod) && resolve(lib, "cuMemcpyDtoH_v2", d.copy_dtoh) &&
               resolve(lib, "cuLaunchKernel", d.launch) && resolve(lib, "cuCtxSynchronize", d.sync);
    int count = 0;
    if (!all || d.init(0) != CUDA_SUCCESS || d.device_count(&count) != CUDA_SUCCESS || count == 0) {
        std::printf("CUDA driver present but no usable GPU: NVTX ranges only\n");
        return false;
    }
    CUmodule mod = nullptr;
    if (d.device_get(&g.dev, 0) != CUDA_SUCCESS || d.ctx_retain(&g.ctx, g.dev) != CUDA_SUCCESS ||
        d.ctx_set(g.ctx) != CUDA_SUCCESS || d.module_load(&mod, kPtx) != CUDA_SUCCESS ||
        d.module_function(&g.fn, mod, "gprof_example_scale") != CUDA_SUCCESS ||
        d.mem_alloc(&g.buf, bytes) != CUDA_SUCCESS) {
        std::printf("CUDA set-up failed: NVTX ranges only\n");
        return false;
    }
    std::printf("using GPU 0 of %d\n", count);
    g.ok = true;
    return true;
}

// CPU stand-in for real work, so the ranges have some length.
double busy(std::vector<float>& v, int rounds) {
    double s = 0;
    for (int r = 0; r < rounds; ++r)
        for (auto& x : v) {
            x = std::sqrt(x * x + 1.0f);
            s += x;
        }
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    int steps = argc > 1 ? std::atoi(argv[1]) : 20;
    if (steps <= 0) steps = 20;
    const int n = 1 << 16;
    std::vector<float> host(n, 1.0f);
    Gpu gpu;

    nvtxRangePushA("load");
    busy(host, 20);
    open_gpu(gpu, n * sizeof(float));
    nvtxRangePop();

    nvtxRangePushA("train");
    double checksum = 0;
    for (int s = 0; s < steps; ++s) {
        nvtxRangePushA("step");
        checksum += busy(host, 2);
        if (gpu.ok) {
            int count = n;
            void* args[] = {&gpu.buf, &count};
            gpu.d.copy_htod(gpu.buf, host.data(), n * sizeof(float));
            gpu.d.launch(gpu.fn, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
            gpu.d.copy_dtoh(host.data(), gpu.buf, n * sizeof(float));
        }
        nvtxRangePop();
    }
    nvtxRangePop();

    nvtxMarkA("checkpoint");
    nvtxRangePushA("save");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (gpu.ok) {
        gpu.d.sync();
        gpu.d.mem_free(gpu.buf);
        gpu.d.ctx_release(gpu.dev);
    }
    nvtxRangePop();
    std::printf("%d steps done (checksum %.3g)\n", steps, checksum);
    return 0;
}
