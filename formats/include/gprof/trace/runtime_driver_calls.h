// The driver calls the CUDA runtime makes on its own around the program's runtime calls: one list, shared by the
// collector (which switches them off at the source, collector/cupti/session.cpp) and the reports (which leave them
// out of API tables when a trace still holds them: every 1.0 trace does).
//
// On an H100 (CUDA 13.0) the runtime made one cuKernelGetName before every cudaLaunchKernel (7218 in 300 PyTorch
// steps), cuLibraryLoadData + cuLibraryGetKernel when a kernel's module loads lazily, cuGetProcAddress_v2 when it
// resolves driver entry points, cuModuleGetLoadingMode at initialisation. They are handle and name lookups a
// program has no reason to make in a loop; CUPTI's records carry no nesting field, and on that machine none of
// them fell inside the runtime call's interval (each came just before it), so the callback id is the signal.
// Launches, copies, allocations and module loads a program makes itself through the driver (Triton, JAX, CuPy:
// cuLaunchKernel, cuModuleLoadData, ...) are not here and stay. Keep docs/cupti.md in step.
#pragma once

#include <cstdint>

#include "gprof/trace/records.h"

namespace gprof::trace {

// CUPTI_DRIVER_TRACE_CBID_* values (cupti_driver_cbid.h; callback ids are never renumbered).
inline constexpr uint32_t kRuntimeInternalDriverCbids[] = {
    719,  // cuKernelGetName
    718,  // cuFuncGetName
    681,  // cuLibraryGetKernel
    683,  // cuKernelGetFunction
    678,  // cuLibraryLoadData
    626,  // cuGetProcAddress
    677,  // cuGetProcAddress_v2
    673,  // cuModuleGetLoadingMode
    774,  // cuStreamGetDevice
};

constexpr bool is_runtime_internal_driver_cbid(uint32_t cbid) {
    for (uint32_t c : kRuntimeInternalDriverCbids)
        if (c == cbid) return true;
    return false;
}

// A driver API record of one of those calls.
constexpr bool is_runtime_internal_driver_call(const ApiCall& a) {
    return a.domain == ApiDomain::Driver && is_runtime_internal_driver_cbid(a.cbid);
}

}  // namespace gprof::trace
