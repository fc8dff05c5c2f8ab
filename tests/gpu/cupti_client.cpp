// gprof-test-cupti-client: a program that is its own CUPTI client, as a PyTorch process with torch.profiler is, for
// gpu-check's coexistence check on a real GPU.
//
// It starts CUDA, then asks CUPTI for a subscription twice, the way tools do: cuptiSubscribe_v2 with a subscriber
// name (CUPTI 13.0+; a refusal names the holder), then plain cuptiSubscribe. It is linked against libcupti.so.13 and
// calls both through its PLT, as kineto does, so gprof-run's interposers (inject/src/cupti_interpose.cpp) see the
// calls exactly as they see a real profiler's. It prints one line
//     CUPTI_CLIENT {"cupti_api_version": N, "v2": {"result": rc, "holder": "..."}, "v1": {"result": rc}}
// and unsubscribes after each successful subscription. What gpu-check expects: bare, both succeed; under gprof-run,
// either both are refused (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, the v2 holder "CUPTI for gprof-run") and
// the trace says so once per client with the way out (-t nvtx), or CUPTI accepts a second subscriber and the trace
// says both record; under gprof-run -t nvtx both succeed.
//
// Exit: 0 done (whatever CUPTI answered), 77 no CUDA device. Never installed; scripts/gpu-check packs it.
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>
#include <string>

namespace {

constexpr int kExitNoDevice = 77;
constexpr const char* kName = "gpu-check CUPTI client";

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

std::string quoted(const char* s) {
    std::string out = "\"";
    for (const char* c = s; *c; ++c) {
        if (*c == '"' || *c == '\\') out += '\\';
        if (static_cast<unsigned char>(*c) >= 0x20) out += *c;
    }
    return out + "\"";
}

}  // namespace

int main() {
    int devices = 0;
    cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "no CUDA device: cudaGetDeviceCount returned %s\n", cudaGetErrorString(ce));
        return kExitNoDevice;
    }
    cudaFree(nullptr);  // the context exists, as it does when a framework starts its profiler

    uint32_t version = 0;
    cuptiGetVersion(&version);

    CUpti_SubscriberHandle handle = nullptr;
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = kName;
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    CUptiResult v2 = cuptiSubscribe_v2(&handle, on_callback, nullptr, &params);
    if (v2 == CUPTI_SUCCESS) cuptiUnsubscribe(handle);

    handle = nullptr;
    CUptiResult v1 = cuptiSubscribe(&handle, on_callback, nullptr);
    if (v1 == CUPTI_SUCCESS) cuptiUnsubscribe(handle);

    std::printf("CUPTI_CLIENT {\"cupti_api_version\": %u, \"name\": %s, \"v2\": {\"result\": %d, \"holder\": %s}, "
                "\"v1\": {\"result\": %d}}\n",
                version, quoted(kName).c_str(), static_cast<int>(v2), quoted(holder).c_str(), static_cast<int>(v1));
    return 0;
}
