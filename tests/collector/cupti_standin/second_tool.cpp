// A second CUPTI client inside a test program, as torch.profiler's kineto is inside a PyTorch process: a library
// linked against CUPTI (here the stand-in, found through its soname like the real libcupti) that asks for a
// subscription when the program starts its profiler. Its calls bind like kineto's, so the collector's
// interposers (inject/src/cupti_interpose.cpp) see them exactly as they would see kineto's. Never installed.
#include <cupti.h>

#include <cstdio>

namespace {
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
}  // namespace

// v2 = 0: cuptiSubscribe; otherwise cuptiSubscribe_v2 named `name`. Prints CUPTI's answer (and the holder's name
// it gave) on stdout; returns the CUptiResult.
extern "C" __attribute__((visibility("default"))) int gprof_test_second_tool_subscribe(int v2, const char* name) {
    CUpti_SubscriberHandle handle = nullptr;
    CUptiResult rc;
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
    if (!v2) {
        rc = cuptiSubscribe(&handle, on_callback, nullptr);
    } else {
        CUpti_SubscriberParams params{};
        params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        params.subscriberName = name;
        params.oldSubscriberName = holder;
        params.oldSubscriberSize = sizeof holder;
        rc = cuptiSubscribe_v2(&handle, on_callback, nullptr, &params);
    }
    std::printf("second tool: %s -> %d%s%s\n", v2 ? "cuptiSubscribe_v2" : "cuptiSubscribe", static_cast<int>(rc),
                holder[0] ? ", held by " : "", holder);
    std::fflush(stdout);
    return static_cast<int>(rc);
}
