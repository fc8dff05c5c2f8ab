#include "cupti/loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gprof/env/variables.h"

namespace gprof::collector::cupti {
namespace {

struct Candidate {
    std::string path;
    const char* found_by;
};

std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// The path the dynamic loader actually used for a handle (dlopen("libcupti.so.13") gives no path otherwise).
std::string real_path_of(void* handle, const std::string& fallback) {
    struct link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]) return map->l_name;
    return fallback;
}

// Directories of libcudart copies already mapped into the process: a pip-installed CUDA keeps libcupti next
// to (or beside the package of) its libcudart, and that is the copy matching the app's CUDA.
std::vector<std::string> loaded_cudart_dirs() {
    std::vector<std::string> dirs;
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) -> int {
            auto* out = static_cast<std::vector<std::string>*>(data);
            if (info->dlpi_name && std::strstr(info->dlpi_name, "/libcudart.so")) {
                std::string dir = dir_of(info->dlpi_name);
                if (!dir.empty()) out->push_back(dir);
            }
            return 0;
        },
        &dirs);
    return dirs;
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

}  // namespace

LoadOptions load_options_from_environment() {
    LoadOptions o;
    if (const char* p = std::getenv(env::kCuptiLib); p && *p) o.explicit_path = p;
    if (const char* p = std::getenv("CUDA_HOME"); p && *p) o.cuda_home = p;
    if (const char* p = std::getenv(env::kPythonSitePackages); p && *p) {
        std::string list = p;
        for (size_t start = 0; start <= list.size();) {
            size_t end = std::min(list.find(':', start), list.size());
            if (end > start) o.python_site_packages.push_back(list.substr(start, end - start));
            start = end + 1;
        }
    }
    return o;
}

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
    if (!missing.empty()) {
        result.reason = api->path + " is not a usable CUPTI (missing " + missing + ")";
        delete api;
        dlclose(handle);
        return result;
    }
    uint32_t version = 0;
    if (api->GetVersion(&version) != CUPTI_SUCCESS || version == 0) {
        result.reason = api->path + ": cuptiGetVersion failed";
        delete api;
        dlclose(handle);
        return result;
    }
    api->version = version;
    // Activity record layouts are fixed per CUPTI major (CUDA 13: Kernel10, Memcpy6, ...); a CUPTI of another
    // major would hand us records our structs misread, so it is refused rather than trusted.
    if (version < kMinCuptiApiVersion || version > kMaxCuptiApiVersion) {
        result.reason = api->path + " has CUPTI API version " + std::to_string(version) +
                        "; this gprof-run was built for CUDA 13 (CUPTI API version " +
                        std::to_string(CUPTI_API_VERSION) + ") and needs a CUDA 13 libcupti.so.13";
        delete api;
        dlclose(handle);
        return result;
    }
    result.api = api;
    return result;
}

LoadResult load_cupti(const LoadOptions& options) {
    // An explicit choice is honoured exactly: quietly loading some other CUPTI instead would surprise the user.
    if (!options.explicit_path.empty()) {
        LoadResult r = load_cupti_file(options.explicit_path, "GPROF_CUPTI_LIB");
        if (!r.api) r.reason = "GPROF_CUPTI_LIB: " + r.reason;
        return r;
    }

    // A libcupti the process already has (torch wheels, the app's own CUPTI use): a second copy by another
    // path would put two CUPTIs into one process.
    if (options.search_process) {
        if (void* h = dlopen(kCuptiSoname, RTLD_NOW | RTLD_NOLOAD)) {
            std::string path = real_path_of(h, kCuptiSoname);
            dlclose(h);  // drops only the reference NOLOAD took
            LoadResult r = load_cupti_file(path, "already loaded");
            if (r.api) return r;
        }
    }

    std::vector<Candidate> candidates;
    if (options.search_process) {
        for (const std::string& dir : loaded_cudart_dirs()) {
            candidates.push_back({dir + "/" + kCuptiSoname, "next to libcudart"});
            // pip wheels: .../nvidia/cuda_runtime/lib/libcudart.so.13 beside .../nvidia/cuda_cupti/lib
            candidates.push_back({dir + "/../../cuda_cupti/lib/" + kCuptiSoname, "next to libcudart"});
            candidates.push_back({dir + "/../extras/CUPTI/lib64/" + kCuptiSoname, "next to libcudart"});
        }
    }
    // The CUPTI pip installed into the program's Python environment (gprof-run names its site-packages): PyTorch's
    // CUDA 13 wheels put it in nvidia/cu13/lib, the per-library wheels in nvidia/cuda_cupti/lib.
    for (const std::string& dir : options.python_site_packages) {
        candidates.push_back({dir + "/nvidia/cu13/lib/" + kCuptiSoname, "Python environment"});
        candidates.push_back({dir + "/nvidia/cuda_cupti/lib/" + kCuptiSoname, "Python environment"});
    }
    if (!options.cuda_home.empty()) {
        candidates.push_back({options.cuda_home + "/lib64/" + kCuptiSoname, "CUDA_HOME"});
        candidates.push_back({options.cuda_home + "/extras/CUPTI/lib64/" + kCuptiSoname, "CUDA_HOME"});
    }
    if (options.search_defaults) {
        candidates.push_back({std::string("/usr/local/cuda/lib64/") + kCuptiSoname, "/usr/local/cuda"});
        candidates.push_back({std::string("/usr/local/cuda/extras/CUPTI/lib64/") + kCuptiSoname, "/usr/local/cuda"});
        candidates.push_back({kCuptiSoname, "loader search path"});
    }

    std::string tried;
    std::string last_refusal;  // a file that exists but was refused says more than "not found"
    for (const Candidate& c : candidates) {
        if (c.path.find('/') != std::string::npos && access(c.path.c_str(), F_OK) != 0) continue;
        LoadResult r = load_cupti_file(c.path, c.found_by);
        if (r.api) return r;
        if (!r.opened && c.path.find('/') == std::string::npos) continue;  // plain soname: simply not found
        last_refusal = r.reason;
        if (!tried.empty()) tried += "; ";
        tried += r.reason;
    }
    LoadResult failed;
    if (!last_refusal.empty())
        failed.reason = "no usable libcupti.so.13: " + tried;
    else
        failed.reason = "libcupti.so.13 not found (searched next to libcudart, the Python environment, $CUDA_HOME, "
                        "/usr/local/cuda and the loader path; set GPROF_CUPTI_LIB to its path)";
    return failed;
}

std::string result_name(const CuptiApi* api, CUptiResult result) {
    const char* text = nullptr;
    if (api && api->GetResultString && api->GetResultString(result, &text) == CUPTI_SUCCESS && text) return text;
    return "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace gprof::collector::cupti
