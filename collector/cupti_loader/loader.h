// Loads one libcupti at run time into a table of function pointers, and learns from the library itself what it
// writes: its API version (cupti_loader/release.h), the size of each activity record it emits, and how many callback ids
// it knows. Where to look for one is cupti_loader/search.h.
//
// The collector has no link-time dependency on libcupti or libcuda: a process without CUDA, or with a CUPTI this
// build cannot use, must keep running unharmed with one clear line saying why there is no GPU data. Every CUPTI
// function the collector calls goes through CuptiApi, so a test can point the same code at the stand-in library
// (tests/collector/cupti_standin) through GPROF_CUPTI_LIB. This part is also linked by gprof-run for --check: no
// session state, nothing but dlopen and the CUPTI calls that need no driver.
#pragma once

#include <cupti.h>
#include <dlfcn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cupti_loader/release.h"

namespace gprof::collector::cupti {

// The size of each activity record the loaded CUPTI writes, by kind: the stride cuptiActivityGetNextRecord steps
// by, asked of the library at load time (CUPTI fills only its newest struct of a kind, so the record layout
// follows the library, not the headers: 12.4 writes Kernel9, Memcpy5, Synchronization, Memory3, MemoryPool2; 12.9
// Memcpy6, Synchronization2, Memory4; 13.0 Kernel10 and MemoryPool3). 0: the library does not walk that kind.
struct RecordSizes {
    static constexpr size_t kKinds = 64;
    std::array<uint16_t, kKinds> by_kind{};
    size_t of(uint32_t kind) const { return kind < kKinds ? by_kind[kind] : 0; }
};

// Whether a record of `size` bytes holds the member `field` of struct `type` (the newest struct of its kind in the
// 13.0 headers): a field a release lacks is unknown, never read from the next record.
#define GPROF_CUPTI_HAS_FIELD(size, type, field) (offsetof(type, field) + sizeof(type::field) <= (size))

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
    // CUDA 12.5 and later; without them (12.4) the collector drops the calls it filters itself (Translator).
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;
    CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute, size_t*, void*) = nullptr;
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType) = nullptr;
    CUptiResult (*GetErrorMessage)(CUptiResult, const char**) = nullptr;
    CUptiResult (*GetContextId)(CUcontext, uint32_t*) = nullptr;
    CUptiResult (*GetDeviceId)(CUcontext, uint32_t*) = nullptr;
    // CUDA 13.0: a named subscription, and the holder's name when refused (12.x: refusals cannot name the holder).
    CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) = nullptr;

    void* handle = nullptr;    // dlopen handle; never closed once a session uses it
    uint32_t version = 0;      // cuptiGetVersion
    CuptiRelease release;      // what that version means
    std::string path;          // the file that was loaded (CudaInfo.cupti_library)
    std::string found_by;      // "GPROF_CUPTI_LIB", "already loaded", "next to libcudart", "CUDA_HOME", ...
    RecordSizes record_sizes;  // what it writes per activity kind
    // Callback ids it knows per domain (cuptiGetCallbackName names each id below the count and refuses the rest):
    // 12.4 754 driver / 468 runtime, 12.9 784 / 487, 13.0 807 / 523. 0 when it could not be told.
    uint32_t driver_cbids = 0;
    uint32_t runtime_cbids = 0;

    // Whether `cbid` is one of this CUPTI's ids in `domain` (an id newer than it is not; unknown counts: every id).
    bool knows_cbid(CUpti_CallbackDomain domain, uint32_t cbid) const {
        uint32_t count = domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_cbids
                         : domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_cbids : 0;
        return count == 0 || cbid < count;
    }
};

struct LoadResult {
    CuptiApi* api = nullptr;  // owned by the caller (leaked by the session on purpose); null on failure
    std::string reason;       // why nothing usable was loaded: one line, fit for stderr and the trace
    bool opened = false;      // the file was found and opened (then refused, when api is null)
    uint32_t version = 0;     // its cuptiGetVersion, when it got that far (also when refused)
};

// Loads exactly `path` (no search; cupti_loader/search.h searches). Refused, with the reason: a file that will not load, a
// library without a function the collector needs, a CUPTI release this build does not read. Never throws, never
// crashes on a bad file. found_by: how it was found, kept in the CuptiApi.
LoadResult load_cupti_file(const std::string& path, const char* found_by);

// The fields the loaded CUPTI's records lack, as a phrase ("a kernel's isDeviceLaunched (Kernel9), a memory pool's
// isManagedPool (MemoryPool2)" for 12.x); empty when its records hold every field the translator reads. Those fields
// stay 0 in the trace, said to be unknown there.
std::string fields_unknown(const CuptiApi& api);

// CUPTI's text for a result code ("CUPTI_ERROR_UNKNOWN"); a fallback when the library does not know it.
std::string result_name(const CuptiApi* api, CUptiResult result);

// Resolves entry points a CUPTI release may lack (the PM sampling and profiler host APIs came in 12.6) one by one
// from the loaded library, remembering the first that is missing: that is the name the one-line refusal gives.
struct OptionalSymbols {
    explicit OptionalSymbols(const CuptiApi& api) : handle(api.handle) {}
    template <class F>
    void operator()(F& slot, const char* name) {
        slot = handle ? reinterpret_cast<F>(dlsym(handle, name)) : nullptr;
        if (!slot && first_missing.empty()) first_missing = name;
    }
    bool all_found() const { return first_missing.empty(); }

    void* handle;
    std::string first_missing;
};

}  // namespace gprof::collector::cupti
