// What a CUPTI's API version means: the CUDA release it shipped with, whether this build reads its records, and
// which CUDA driver runs it. One table for the collector's loader and for `gprof-run --check` (docs/cupti.md, the
// support matrix).
//
// cuptiGetVersion answers small numbers up to CUDA 12.9 (22 = 12.4, 23 = 12.5, 24 = 12.6, 25 = 12.7, 26 = 12.8,
// 27 = 12.9, 28 = 12.9 Update 1: CUPTI_API_VERSION's documented history) and xxyyzz from 13.0 (130001 = 13.0).
#pragma once

#include <cstdint>
#include <string>

namespace gprof::collector::cupti {

// The CUPTI releases this build reads: 12.4 .. 12.9 and every 13.x. Records are read by the loaded library's own
// struct sizes (loader.h, RecordSizes), so the 13.0 headers serve them all; 12.0-12.3 are not supported (their
// overhead records and callback ids were not checked), a 14.x may change any layout.
inline constexpr uint32_t kMinCupti12ApiVersion = 22;       // CUDA 12.4
inline constexpr uint32_t kMaxCupti12ApiVersion = 28;       // CUDA 12.9 Update 1, the last of CUDA 12
inline constexpr uint32_t kMinCupti13ApiVersion = 130000;
inline constexpr uint32_t kMaxCupti13ApiVersion = 139999;

struct CuptiRelease {
    uint32_t api_version = 0;
    uint32_t cuda_major = 0;  // 12 or 13 for a supported release; a guess or 0 for others
    uint32_t cuda_minor = 0;
    std::string name;         // "12.4", "12.9 Update 1", "13.0", "13.2"; "API version N" when not known
    bool supported = false;   // this build reads its records
};

CuptiRelease cupti_release(uint32_t api_version);

// "CUPTI 12.9 Update 1 (API version 28)".
std::string cupti_release_text(const CuptiRelease& release);

// Why this build cannot use that CUPTI at all (empty when it can): "CUPTI 12.3 (API version 21) is older than
// CUPTI 12.4, the oldest gprof-run reads".
std::string unsupported_reason(const CuptiRelease& release);

// Whether a CUDA driver (cuDriverGetVersion: 12040 for 12.4) runs a CUPTI of CUDA `cuda_major`: a CUPTI newer than its
// driver fails with CUPTI_ERROR_NOT_INITIALIZED (CUPTI 13 on an r570 driver), an older one works (CUPTI 12.9 on r580).
// An unknown driver (0) is given the benefit of the doubt.
bool driver_runs(uint32_t driver_version, uint32_t cuda_major);

// "12.4" for 12040.
std::string cuda_version_text(uint32_t driver_version);

// The way out when no CUPTI this driver runs was found: what to install. "pip install nvidia-cuda-cupti-cu12 (CUPTI
// 12.x) into the program's Python environment, or set GPROF_CUPTI_LIB to a libcupti.so.12 of CUDA 12.4 to 12.9".
std::string cupti_install_hint(uint32_t driver_version);

}  // namespace gprof::collector::cupti
