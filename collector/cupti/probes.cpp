#include "cupti/probes.h"

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "process/process_info.h"

namespace gprof::collector::cupti {
namespace {

struct DriverApi {
    CUresult (*DriverGetVersion)(int*) = nullptr;
    CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
    CUresult (*DeviceGetName)(char*, int, CUdevice) = nullptr;
    CUresult (*DeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
    CUresult (*DeviceTotalMem)(size_t*, CUdevice) = nullptr;
    CUresult (*DeviceGetUuid)(CUuuid*, CUdevice) = nullptr;
    bool loaded = false;
};

// The driver is in the process whenever a context exists; we never bring one in ourselves.
const DriverApi& driver() {
    static const DriverApi api = [] {
        DriverApi d;
        void* h = cuda_driver_handle();
        if (!h) return d;
        d.DriverGetVersion = reinterpret_cast<decltype(d.DriverGetVersion)>(dlsym(h, "cuDriverGetVersion"));
        d.DeviceGet = reinterpret_cast<decltype(d.DeviceGet)>(dlsym(h, "cuDeviceGet"));
        d.DeviceGetName = reinterpret_cast<decltype(d.DeviceGetName)>(dlsym(h, "cuDeviceGetName"));
        d.DeviceGetAttribute =
            reinterpret_cast<decltype(d.DeviceGetAttribute)>(dlsym(h, "cuDeviceGetAttribute"));
        d.DeviceTotalMem = reinterpret_cast<decltype(d.DeviceTotalMem)>(dlsym(h, "cuDeviceTotalMem_v2"));
        d.DeviceGetUuid = reinterpret_cast<decltype(d.DeviceGetUuid)>(dlsym(h, "cuDeviceGetUuid_v2"));
        if (!d.DeviceGetUuid) d.DeviceGetUuid = reinterpret_cast<decltype(d.DeviceGetUuid)>(dlsym(h, "cuDeviceGetUuid"));
        d.loaded = true;
        return d;
    }();
    return api;
}

}  // namespace

uint32_t driver_version() {
    const DriverApi& d = driver();
    int v = 0;
    if (d.DriverGetVersion && d.DriverGetVersion(&v) == CUDA_SUCCESS && v > 0) return static_cast<uint32_t>(v);
    return 0;
}

bool query_device(uint32_t ordinal, DeviceInfo& out) {
    const DriverApi& d = driver();
    if (!d.DeviceGet || !d.DeviceGetName || !d.DeviceGetAttribute) return false;
    CUdevice dev = 0;
    if (d.DeviceGet(&dev, static_cast<int>(ordinal)) != CUDA_SUCCESS) return false;
    out.id = ordinal;
    char name[256] = {};
    if (d.DeviceGetName(name, sizeof name - 1, dev) == CUDA_SUCCESS) out.name = name;
    int v = 0;
    if (d.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS)
        out.cc_major = static_cast<uint32_t>(v);
    if (d.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
        out.cc_minor = static_cast<uint32_t>(v);
    if (d.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS)
        out.sm_count = static_cast<uint32_t>(v);
    size_t mem = 0;
    if (d.DeviceTotalMem && d.DeviceTotalMem(&mem, dev) == CUDA_SUCCESS) out.global_memory_bytes = mem;
    CUuuid uuid{};
    if (d.DeviceGetUuid && d.DeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
        char text[64];
        static const char hex[] = "0123456789abcdef";
        char* p = text;
        std::memcpy(p, "GPU-", 4);
        p += 4;
        for (int i = 0; i < 16; ++i) {
            if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
            auto b = static_cast<uint8_t>(uuid.bytes[i]);
            *p++ = hex[b >> 4];
            *p++ = hex[b & 0xF];
        }
        *p = '\0';
        out.uuid = text;
    }
    return true;
}

}  // namespace gprof::collector::cupti
