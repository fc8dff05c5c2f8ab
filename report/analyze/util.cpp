#include "analyze/util.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

namespace gprof::report {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// Driver entry points carry version suffixes ("cuMemcpyHtoD_v2", "cuLaunchKernel_ptsz"); compare without them.
std::string_view base_name(std::string_view api) {
    for (std::string_view suffix : {"_ptsz", "_ptds", "_v2", "_v3"}) {
        while (api.size() > suffix.size() && api.substr(api.size() - suffix.size()) == suffix)
            api.remove_suffix(suffix.size());
    }
    return api;
}

}  // namespace

bool is_sync_memcpy_api(std::string_view api) {
    api = base_name(api);
    if (contains(api, "Async")) return false;
    return starts_with(api, "cudaMemcpy") || starts_with(api, "cuMemcpy");
}

bool is_sync_api(std::string_view api) {
    api = base_name(api);
    static constexpr std::string_view kSync[] = {
        "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
        "cuCtxSynchronize",      "cuStreamSynchronize",   "cuEventSynchronize",
    };
    for (auto s : kSync)
        if (api == s) return true;
    return is_sync_memcpy_api(api);
}

bool is_launch_api(std::string_view api) {
    api = base_name(api);
    return starts_with(api, "cudaLaunch") || starts_with(api, "cuLaunch") || api == "cudaGraphLaunch" ||
           api == "cuGraphLaunch";
}

bool is_alloc_api(std::string_view api) {
    api = base_name(api);
    static constexpr std::string_view kAlloc[] = {
        "cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost", "cudaHostAlloc", "cudaMallocManaged",
        "cudaMallocPitch", "cuMemAlloc", "cuMemFree", "cuMemAllocHost", "cuMemFreeHost", "cuMemHostAlloc",
        "cuMemAllocManaged", "cuMemAllocPitch",
    };
    for (auto s : kAlloc)
        if (api == s) return true;
    return false;
}

bool is_implicit_sync_api(std::string_view api) {
    api = base_name(api);
    // From the CUDA programming guide's "implicit synchronization" list: these wait for all prior device work.
    static constexpr std::string_view kImplicit[] = {
        "cudaFree",        "cudaFreeHost",  "cudaMallocHost", "cudaHostAlloc", "cudaHostRegister",
        "cudaHostUnregister", "cudaMemset", "cudaMemset2D",   "cudaMemset3D",  "cudaDeviceSetCacheConfig",
        "cudaDeviceSetLimit", "cuMemFree",  "cuMemFreeHost",  "cuMemAllocHost", "cuMemHostAlloc",
        "cuMemHostRegister",  "cuMemsetD8", "cuMemsetD16",    "cuMemsetD32",
    };
    for (auto s : kImplicit)
        if (api == s) return true;
    return false;
}

bool is_data_loading_range(std::string_view name) {
    static const std::regex kData(
        R"((^|[^a-z])(data|dataloader|data_?load(ing|er)?|load_?(batch|data)|prefetch|fetch|read_?batch|io|h2d|to_device)([^a-z]|$))",
        std::regex::icase | std::regex::optimize);
    std::string s(name);
    return std::regex_search(s, kData);
}

}  // namespace gprof::report
