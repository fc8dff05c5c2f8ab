#include "cupti/call_categories.h"

#include "cupti_loader/loader.h"

namespace gprof::collector::cupti {

namespace {
bool has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }
}  // namespace

env::CallCategory classify_call(std::string_view name) {
    using env::CallCategory;
    if (has(name, "GraphLaunch")) return CallCategory::Kernel;
    // Graph construction and update calls name copies and launches they only describe.
    if (has(name, "Graph")) return CallCategory::Other;
    if (has(name, "Launch") && !has(name, "HostFunc")) return CallCategory::Kernel;
    if (has(name, "Synchronize") || has(name, "StreamWait") || has(name, "EventQuery") || has(name, "StreamQuery"))
        return CallCategory::Sync;
    if (has(name, "Memcpy") || has(name, "Memset") || has(name, "Malloc") || name.starts_with("cudaFree") ||
        has(name, "MemFree") || has(name, "MemAlloc") || has(name, "HostAlloc"))
        return CallCategory::Memory;
    return CallCategory::Other;
}

void CallCategories::build(const CuptiApi& api) {
    const auto other = static_cast<uint8_t>(env::CallCategory::Other);
    for (uint32_t cbid = 0; cbid < kMaxCbid; ++cbid) {
        runtime_[cbid] = driver_[cbid] = other;
        if (!api.GetCallbackName) continue;
        const char* name = nullptr;
        if (api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name)
            runtime_[cbid] = static_cast<uint8_t>(classify_call(name));
        name = nullptr;
        if (api.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name)
            driver_[cbid] = static_cast<uint8_t>(classify_call(name));
    }
}

}  // namespace gprof::collector::cupti
