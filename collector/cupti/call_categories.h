// The category of each CUDA API call for call-site filtering (--cudabacktrace=kernel|memory|sync|other), decided
// once per callback id from CUPTI's own name for it (cuptiGetCallbackName), so every id a CUPTI version knows is
// placed, including ones newer than our headers.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string_view>

#include "gprof/env/cuda_backtrace.h"

namespace gprof::collector::cupti {

struct CuptiApi;

// From a runtime or driver call's name ("cudaMemcpyAsync_v3020", "cuLaunchKernel"):
//   kernel: launches: *Launch* except *LaunchHostFunc, and cudaGraphLaunch/cuGraphLaunch
//   sync:   *Synchronize*, *StreamWait* (cudaStreamWaitEvent, cuStreamWaitValue*), *EventQuery*, *StreamQuery*
//   memory: *Memcpy*, *Memset*, *Malloc*, cudaFree*, *MemFree*, *MemAlloc*, *HostAlloc*
//   other:  the rest, including graph construction (cudaGraphAddMemcpyNode is not a copy) and memory advice,
//           prefetch, pools and registration.
env::CallCategory classify_call(std::string_view name);

// Categories of every callback id of the runtime and driver domains. Ids the table does not cover are Other.
class CallCategories {
public:
    static constexpr uint32_t kMaxCbid = 1024;  // CUDA 13.0: 523 runtime, 807 driver ids

    // Fills the table from `api`'s cuptiGetCallbackName; an id it does not name stays Other.
    void build(const CuptiApi& api);

    env::CallCategory of(CUpti_CallbackDomain domain, uint32_t cbid) const {
        if (cbid >= kMaxCbid) return env::CallCategory::Other;
        if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return static_cast<env::CallCategory>(runtime_[cbid]);
        if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return static_cast<env::CallCategory>(driver_[cbid]);
        return env::CallCategory::Other;
    }

private:
    uint8_t runtime_[kMaxCbid] = {};
    uint8_t driver_[kMaxCbid] = {};
};

}  // namespace gprof::collector::cupti
