#include "cupti_loader/release.h"

namespace gprof::collector::cupti {

CuptiRelease cupti_release(uint32_t v) {
    CuptiRelease r;
    r.api_version = v;
    if (v >= kMinCupti13ApiVersion) {
        r.cuda_major = v / 10000;
        r.cuda_minor = v / 100 % 100;
        r.name = std::to_string(r.cuda_major) + "." + std::to_string(r.cuda_minor);
        r.supported = v <= kMaxCupti13ApiVersion;
        return r;
    }
    // CUPTI_API_VERSION's history (cupti_version.h): 19 12.0, 20 12.2, 21 12.3, 22 12.4 ... 27 12.9, 28 12.9 Update 1.
    if (v >= 19 && v <= kMaxCupti12ApiVersion) {
        static const uint32_t minors[] = {0, 2, 3, 4, 5, 6, 7, 8, 9, 9};  // by v - 19 (19 served 12.0 and 12.1)
        r.cuda_major = 12;
        r.cuda_minor = minors[v - 19];
        r.name = "12." + std::to_string(r.cuda_minor) + (v == 28 ? " Update 1" : "");
        r.supported = v >= kMinCupti12ApiVersion;
        return r;
    }
    if (v >= 13 && v <= 18) {  // CUDA 11.0 .. 11.8
        r.cuda_major = 11;
        r.name = "11.x";
        return r;
    }
    r.name = "API version " + std::to_string(v);
    return r;
}

std::string cupti_release_text(const CuptiRelease& r) {
    if (r.name.rfind("API version", 0) == 0) return "CUPTI of " + r.name;
    return "CUPTI " + r.name + " (API version " + std::to_string(r.api_version) + ")";
}

std::string unsupported_reason(const CuptiRelease& r) {
    if (r.supported) return {};
    const std::string what = cupti_release_text(r);
    if (r.api_version > kMaxCupti13ApiVersion)
        return what + " is newer than any gprof-run reads (CUPTI 12.4 to 12.9 and 13.x): its record layouts may differ";
    return what + " is older than CUPTI 12.4, the oldest gprof-run reads (it reads 12.4 to 12.9 and 13.x)";
}

bool driver_runs(uint32_t driver_version, uint32_t cuda_major) {
    return driver_version == 0 || driver_version / 1000 >= cuda_major;
}

std::string cuda_version_text(uint32_t v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string cupti_install_hint(uint32_t driver_version) {
    if (driver_version != 0 && driver_version < 13000)
        return "pip install nvidia-cuda-cupti-cu12 (a CUPTI 12 this driver runs) into the program's Python environment, "
               "or set GPROF_CUPTI_LIB to a libcupti.so.12 of CUDA 12.4 to 12.9";
    return "pip install nvidia-cuda-cupti-cu12 (CUDA 12) or nvidia-cuda-cupti (CUDA 13) into the program's Python "
           "environment, or set GPROF_CUPTI_LIB to a libcupti.so";
}

}  // namespace gprof::collector::cupti
