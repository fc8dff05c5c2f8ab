// Which loaded objects' frames are never the user's call site, by file name: one list, shared by the collector
// (which cuts them from a stack at capture, collector/cupti/call_stacks.cpp) and the reports (which drop them from
// what a trace still holds, report/model/call_sites.cpp). Each from a real stack (H200, CUDA 13.0, 2026-11-27):
// the CUDA runtime's initialisation ran inside libc's pthread_once, between libcudart.so's frames; a backward
// GEMM's 16 frames were all cuBLASLt's and cuBLAS's. Keep tests/gpu/checks.py's NVIDIA_LIBRARIES in step.
#pragma once

#include <initializer_list>
#include <string_view>

namespace gprof::trace {

// "/usr/lib/libcuda.so.1" -> "libcuda.so.1".
inline std::string_view module_base_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

inline bool base_name_starts_with_any(std::string_view base, std::initializer_list<std::string_view> prefixes) {
    for (std::string_view p : prefixes)
        if (base.starts_with(p)) return true;
    return false;
}

// CUPTI, the driver, the CUDA runtime, and NVIDIA's libraries built on them: their call into the runtime was made
// for the program's call into them.
inline bool is_cuda_or_nvidia_library(std::string_view base) {
    return base_name_starts_with_any(
        base, {"libcupti.so", "libcuda.so", "libcudart.so", "libcublas", "libcudnn", "libnccl", "libcufft",
               "libcurand", "libcusparse", "libcusolver", "libcutensor", "libnvrtc", "libnvJitLink", "libnvjitlink",
               "libnvblas", "libnvjpeg", "libnpp", "libcufile", "libcudss"});
}

// The C and C++ runtime's: CUDA's runtime calls back through them (its initialisation inside pthread_once, its
// clean-up inside exit's handlers), so their frames sit between CUDA's own; never the user's line.
inline bool is_system_library(std::string_view base) {
    return base_name_starts_with_any(base,
                                     {"libc.so", "libpthread.so", "libdl.so", "ld-linux", "libgcc_s.so", "libstdc++.so"});
}

}  // namespace gprof::trace
