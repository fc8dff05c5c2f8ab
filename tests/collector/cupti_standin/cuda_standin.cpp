// A stand-in for the CUDA driver (libcuda.so.1) on machines without a GPU. Built with the soname libcuda.so.1, so
// that the collector's dlopen("libcuda.so.1", RTLD_NOLOAD) finds it once a test program has loaded it by path.
// Never installed.
//
// What it models of the real driver (CUDA 13.0 driver API documentation, unless marked otherwise):
//   - cuInit reads CUDA_INJECTION64_PATH, dlopens that library and calls its InitializeInjection (the injection
//     entry of the CUDA driver).
//   - Every driver function but cuInit, cuDriverGetVersion and cuGetErrorName returns CUDA_ERROR_NOT_INITIALIZED
//     until cuInit has succeeded in this process.
//   - cuDriverGetVersion works without cuInit; GPROF_TEST_CUDA_DRIVER_VERSION plays its answer (default 13000, a
//     CUDA 13.0 driver; 12040 plays an r550 driver).
//   - The driver shuts itself down at process exit, in exit handlers it sets up when it is loaded and initialised:
//     these run before the handler a preloaded tool registered at the process's start, so from the tool's exit
//     handler on, every driver function returns CUDA_ERROR_DEINITIALIZED (seen on an H200, 2026-11-27: the
//     collector's device query left to its exit found no device in every known-answer run; they end 8-26 ms after
//     their first context). Here: an atexit handler registered by the first cuInit.
//   - Every driver API call is recorded by CUPTI as DRIVER activity of the calling thread, also the ones a tool
//     makes from inside CUPTI's callbacks (seen on an H100: the collector's device queries in its context-created
//     callback showed as the program's calls). Here: through the CUPTI stand-in, when it is in the process.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define DRIVER_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::atomic<bool> g_initialised{false};
std::atomic<bool> g_shut_down{false};  // the process is exiting: the driver has torn itself down

void shut_down() { g_shut_down.store(true, std::memory_order_release); }

// The CUPTI stand-in's gprof_test_standin_driver_call, once it is loaded (GPROF_CUPTI_LIB): looked up again until
// then, as the collector asks the driver's version before it loads CUPTI.
void record(CUpti_CallbackId cbid) {
    using Call = uint32_t (*)(uint32_t);
    static std::atomic<Call> call{nullptr};
    Call c = call.load(std::memory_order_acquire);
    if (!c) {
        const char* lib = std::getenv("GPROF_CUPTI_LIB");
        void* h = lib ? dlopen(lib, RTLD_LAZY | RTLD_NOLOAD) : nullptr;
        c = h ? reinterpret_cast<Call>(dlsym(h, "gprof_test_standin_driver_call")) : nullptr;
        if (!c) return;
        call.store(c, std::memory_order_release);
    }
    c(cbid);
}

bool initialised() { return g_initialised.load(std::memory_order_acquire); }

// What every function but cuInit, cuDriverGetVersion and cuGetErrorName answers before doing anything.
CUresult driver_state() {
    if (g_shut_down.load(std::memory_order_acquire)) return CUDA_ERROR_DEINITIALIZED;
    return initialised() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

}  // namespace

DRIVER_EXPORT CUresult cuDriverGetVersion(int* version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    const char* v = std::getenv("GPROF_TEST_CUDA_DRIVER_VERSION");
    *version = v ? std::atoi(v) : 13000;
    record(CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion);
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuInit(unsigned int) {
    if (g_shut_down.load(std::memory_order_acquire)) return CUDA_ERROR_DEINITIALIZED;
    if (!g_initialised.exchange(true)) {
        std::atexit(shut_down);
        if (const char* path = std::getenv("CUDA_INJECTION64_PATH"); path && *path) {
            void* h = dlopen(path, RTLD_NOW);
            auto init = h ? reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection")) : nullptr;
            if (init) init();
        }
    }
    record(CUPTI_DRIVER_TRACE_CBID_cuInit);
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
        case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
        case CUDA_ERROR_NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; break;
        case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
        case CUDA_ERROR_DEINITIALIZED: *name = "CUDA_ERROR_DEINITIALIZED"; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuCtxGetCurrent(CUcontext* ctx) {
    if (CUresult rc = driver_state(); rc != CUDA_SUCCESS) return rc;
    record(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent);
    if (ctx) *ctx = nullptr;
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    if (CUresult rc = driver_state(); rc != CUDA_SUCCESS) return rc;
    record(CUPTI_DRIVER_TRACE_CBID_cuDeviceGet);
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice) {
    if (CUresult rc = driver_state(); rc != CUDA_SUCCESS) return rc;
    record(CUPTI_DRIVER_TRACE_CBID_cuDeviceGetName);
    std::snprintf(name, static_cast<size_t>(len), "%s", "Stand-in GPU");
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
    if (CUresult rc = driver_state(); rc != CUDA_SUCCESS) return rc;
    record(CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute);
    switch (attribute) {
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
        default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) {
    if (CUresult rc = driver_state(); rc != CUDA_SUCCESS) return rc;
    record(CUPTI_DRIVER_TRACE_CBID_cuDeviceTotalMem_v2);
    *bytes = size_t(80) << 30;
    return CUDA_SUCCESS;
}

DRIVER_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice) {
    if (CUresult rc = driver_state(); rc != CUDA_SUCCESS) return rc;
    record(CUPTI_DRIVER_TRACE_CBID_cuDeviceGetUuid_v2);
    for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(0x10 + i);
    return CUDA_SUCCESS;
}
