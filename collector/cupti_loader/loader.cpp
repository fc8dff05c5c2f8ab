#include "cupti_loader/loader.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <string>

namespace gprof::collector::cupti {
namespace {

// The path the dynamic loader actually used for a handle (dlopen("libcupti.so.13") gives no path otherwise).
std::string real_path_of(void* handle, const std::string& fallback) {
    struct link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]) return map->l_name;
    return fallback;
}

template <class F>
bool resolve(void* handle, const char* name, F& slot, std::string& missing) {
    slot = reinterpret_cast<F>(dlsym(handle, name));
    if (!slot) {
        if (!missing.empty()) missing += ", ";
        missing += name;
        return false;
    }
    return true;
}

template <class F>
void resolve_optional(void* handle, const char* name, F& slot) {
    slot = reinterpret_cast<F>(dlsym(handle, name));
}

// The activity kinds the translator reads (cupti/translate.cpp).
constexpr CUpti_ActivityKind kTranslatedKinds[] = {
    CUPTI_ACTIVITY_KIND_RUNTIME,         CUPTI_ACTIVITY_KIND_DRIVER,       CUPTI_ACTIVITY_KIND_KERNEL,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,     CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,          CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_MEMORY_POOL,     CUPTI_ACTIVITY_KIND_OVERHEAD,     CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_GRAPH_TRACE,     CUPTI_ACTIVITY_KIND_DEVICE,
};

// Asks the library how far it steps over a record of each kind: a buffer holding one record of the kind at offset 0
// and, at every 8-byte boundary after it, the start of a RUNTIME record; the second record cuptiActivityGetNextRecord
// returns begins where the library thinks the first one ends. Works without a driver (it only reads the buffer);
// measured so on the real 12.4, 12.9 and 13.0 libraries (tests/collector/test_cupti12_real.cpp).
RecordSizes probe_record_sizes(CUptiResult (*next)(uint8_t*, size_t, CUpti_Activity**)) {
    RecordSizes sizes;
    constexpr size_t kBytes = 2048;  // several times the largest record of the 13.x headers
    alignas(8) uint8_t buffer[kBytes];
    for (CUpti_ActivityKind kind : kTranslatedKinds) {
        std::memset(buffer, 0, sizeof buffer);
        for (size_t at = 8; at + sizeof(uint32_t) <= kBytes; at += 8) {
            uint32_t filler = CUPTI_ACTIVITY_KIND_RUNTIME;
            std::memcpy(buffer + at, &filler, sizeof filler);
        }
        uint32_t first = kind;
        std::memcpy(buffer, &first, sizeof first);
        CUpti_Activity* record = nullptr;
        if (next(buffer, kBytes, &record) != CUPTI_SUCCESS || reinterpret_cast<uint8_t*>(record) != buffer) continue;
        if (next(buffer, kBytes, &record) != CUPTI_SUCCESS) continue;
        auto stride = static_cast<size_t>(reinterpret_cast<uint8_t*>(record) - buffer);
        if (stride >= sizeof(CUpti_Activity) && stride % 8 == 0 && stride < kBytes / 2 && kind < RecordSizes::kKinds)
            sizes.by_kind[kind] = static_cast<uint16_t>(stride);
    }
    return sizes;
}

// The number of callback ids the library names in `domain`: it names every id below its count and refuses the rest
// (CUPTI_ERROR_INVALID_PARAMETER), so the count is found by bisection. 0 when even id 1 has no name.
uint32_t count_callback_ids(CUptiResult (*name_of)(CUpti_CallbackDomain, uint32_t, const char**),
                            CUpti_CallbackDomain domain) {
    auto named = [&](uint32_t cbid) {
        const char* name = nullptr;
        return name_of(domain, cbid, &name) == CUPTI_SUCCESS && name != nullptr;
    };
    constexpr uint32_t kLimit = 1u << 16;  // the translator's bound on ids
    if (!named(1)) return 0;
    if (named(kLimit - 1)) return 0;  // no end in sight: not a count this code understands
    uint32_t lo = 1, hi = kLimit - 1;  // named(lo), !named(hi)
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        (named(mid) ? lo : hi) = mid;
    }
    return hi;
}

}  // namespace

LoadResult load_cupti_file(const std::string& path, const char* found_by) {
    LoadResult result;
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* err = dlerror();
        result.reason = "cannot load " + path + ": " + (err ? err : "unknown dlopen error");
        return result;
    }
    result.opened = true;
    auto* api = new CuptiApi();
    std::string missing;
    resolve(handle, "cuptiGetVersion", api->GetVersion, missing);
    resolve(handle, "cuptiGetResultString", api->GetResultString, missing);
    resolve(handle, "cuptiSubscribe", api->Subscribe, missing);
    resolve(handle, "cuptiUnsubscribe", api->Unsubscribe, missing);
    resolve(handle, "cuptiEnableCallback", api->EnableCallback, missing);
    resolve(handle, "cuptiEnableDomain", api->EnableDomain, missing);
    resolve(handle, "cuptiActivityEnable", api->ActivityEnable, missing);
    resolve(handle, "cuptiActivityDisable", api->ActivityDisable, missing);
    resolve(handle, "cuptiActivityRegisterCallbacks", api->ActivityRegisterCallbacks, missing);
    resolve(handle, "cuptiActivityGetNextRecord", api->ActivityGetNextRecord, missing);
    resolve(handle, "cuptiActivityGetNumDroppedRecords", api->ActivityGetNumDroppedRecords, missing);
    resolve(handle, "cuptiActivityFlushAll", api->ActivityFlushAll, missing);
    resolve(handle, "cuptiGetTimestamp", api->GetTimestamp, missing);
    resolve(handle, "cuptiGetCallbackName", api->GetCallbackName, missing);
    resolve_optional(handle, "cuptiActivityRegisterTimestampCallback", api->ActivityRegisterTimestampCallback);
    resolve_optional(handle, "cuptiActivityEnableRuntimeApi", api->ActivityEnableRuntimeApi);
    resolve_optional(handle, "cuptiActivityEnableDriverApi", api->ActivityEnableDriverApi);
    resolve_optional(handle, "cuptiActivitySetAttribute", api->ActivitySetAttribute);
    resolve_optional(handle, "cuptiSetThreadIdType", api->SetThreadIdType);
    resolve_optional(handle, "cuptiGetErrorMessage", api->GetErrorMessage);
    resolve_optional(handle, "cuptiGetContextId", api->GetContextId);
    resolve_optional(handle, "cuptiGetDeviceId", api->GetDeviceId);
    resolve_optional(handle, "cuptiSubscribe_v2", api->Subscribe_v2);

    api->handle = handle;
    api->path = real_path_of(handle, path);
    api->found_by = found_by;
    auto refuse = [&](std::string why) {
        result.reason = std::move(why);
        delete api;
        dlclose(handle);
        return result;
    };
    if (!missing.empty()) return refuse(api->path + " is not a usable CUPTI (missing " + missing + ")");
    uint32_t version = 0;
    if (api->GetVersion(&version) != CUPTI_SUCCESS || version == 0)
        return refuse(api->path + ": cuptiGetVersion failed");
    api->version = result.version = version;
    api->release = cupti_release(version);
    // A release whose record layouts and callback ids were not checked against this build is refused rather than
    // trusted: its records could be misread.
    if (std::string why = unsupported_reason(api->release); !why.empty()) return refuse(api->path + ": " + why);
    api->record_sizes = probe_record_sizes(api->ActivityGetNextRecord);
    api->driver_cbids = count_callback_ids(api->GetCallbackName, CUPTI_CB_DOMAIN_DRIVER_API);
    api->runtime_cbids = count_callback_ids(api->GetCallbackName, CUPTI_CB_DOMAIN_RUNTIME_API);
    result.api = api;
    return result;
}

std::string fields_unknown(const CuptiApi& api) {
    std::string out;
    auto lacks = [&](bool has, const char* what) {
        if (has) return;
        if (!out.empty()) out += ", ";
        out += what;
    };
    size_t kernel = api.record_sizes.of(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    size_t pool = api.record_sizes.of(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
    lacks(kernel == 0 || GPROF_CUPTI_HAS_FIELD(kernel, CUpti_ActivityKernel10, isDeviceLaunched),
          "a kernel's isDeviceLaunched (Kernel9)");
    lacks(pool == 0 || GPROF_CUPTI_HAS_FIELD(pool, CUpti_ActivityMemoryPool3, isManagedPool),
          "a memory pool's isManagedPool (MemoryPool2)");
    return out;
}

std::string result_name(const CuptiApi* api, CUptiResult result) {
    const char* text = nullptr;
    if (api && api->GetResultString && api->GetResultString(result, &text) == CUPTI_SUCCESS && text) return text;
    return "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace gprof::collector::cupti
