// Finds and loads libcupti at run time, into a table of function pointers.
//
// The collector has no link-time dependency on libcupti or libcuda: a process without CUDA, or with a CUPTI of
// the wrong major version, must keep running unharmed with one clear line saying why there is no GPU data.
// Every CUPTI function the collector calls goes through CuptiApi, so a test can point the same code at the
// stand-in library (tests/collector/cupti_standin) through GPROF_CUPTI_LIB.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gprof::collector::cupti {

// Record layouts are those of the headers we compile against (CUDA 13.0, CUPTI_API_VERSION 130001). A CUDA 13
// libcupti of any minor only appends fields to them; another major may change them, so it is refused.
inline constexpr uint32_t kMinCuptiApiVersion = 130000;
inline constexpr uint32_t kMaxCuptiApiVersion = 139999;
inline constexpr const char* kCuptiSoname = "libcupti.so.13";

struct CuptiApi {
    // Required: a library lacking any of these is refused.
    CUptiResult (*GetVersion)(uint32_t*) = nullptr;
    CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle) = nullptr;
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) =
        nullptr;
    CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) = nullptr;
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
        nullptr;
    CUptiResult (*ActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
    CUptiResult (*ActivityFlushAll)(uint32_t) = nullptr;
    CUptiResult (*GetTimestamp)(uint64_t*) = nullptr;
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;

    // Optional: used when present, their absence is noted in the trace.
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc) = nullptr;
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;  // CUDA >= 12.5
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;
    CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute, size_t*, void*) = nullptr;
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
    CUptiResult (*GetErrorMessage)(CUptiResult, const char**) = nullptr;
    CUptiResult (*GetContextId)(CUcontext, uint32_t*) = nullptr;
    CUptiResult (*GetDeviceId)(CUcontext, uint32_t*) = nullptr;
    // CUDA 13.0: a named subscription, and the holder's name when refused.
    CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) = nullptr;

    void* handle = nullptr;    // dlopen handle; never closed once a session uses it
    uint32_t version = 0;      // cuptiGetVersion
    std::string path;          // the file that was loaded (CudaInfo.cupti_library)
    std::string found_by;      // "GPROF_CUPTI_LIB", "already loaded", "next to libcudart", "CUDA_HOME", ...
};

struct LoadOptions {
    std::string explicit_path;  // GPROF_CUPTI_LIB: when set, only this file is tried
    std::string cuda_home;      // $CUDA_HOME (empty: not set)
    // GPROF_PYTHON_SITE_PACKAGES, split at ':': the Python environments' site-packages, where pip puts CUPTI.
    std::vector<std::string> python_site_packages;
    bool search_process = true; // look for a libcupti / libcudart already in the process
    bool search_defaults = true;// /usr/local/cuda/... and the plain soname through the loader path
};

// Options from the environment: GPROF_CUPTI_LIB, GPROF_PYTHON_SITE_PACKAGES and CUDA_HOME.
LoadOptions load_options_from_environment();

struct LoadResult {
    CuptiApi* api = nullptr;  // owned by the caller (leaked by the session on purpose); null on failure
    std::string reason;       // why nothing usable was loaded: one line, fit for stderr and the trace
    bool opened = false;      // the file was found and opened (then refused, when api is null)
};

// Tries the candidates in order (see docs/cupti.md) and returns the first usable library. Never throws, never
// crashes on a bad file: a missing symbol or an unsupported version is a reason text.
LoadResult load_cupti(const LoadOptions& options);

// Loads exactly `path` (no search). Used by load_cupti and by tests.
LoadResult load_cupti_file(const std::string& path, const char* found_by);

// CUPTI's text for a result code ("CUPTI_ERROR_UNKNOWN"); a fallback when the library does not know it.
std::string result_name(const CuptiApi* api, CUptiResult result);

}  // namespace gprof::collector::cupti
