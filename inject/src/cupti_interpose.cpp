// cuptiSubscribe and cuptiSubscribe_v2, interposed when the collector is LD_PRELOADed: the program's call reaches
// its CUPTI unchanged, and a refusal caused by gprof-run's own subscription is named in the trace and on stderr
// (collector/cupti/clients.h). The collector's own subscription never comes here: it calls CUPTI through the
// table its loader resolved in libcupti itself.
#include <cupti.h>

#include "cupti/clients.h"

namespace {
namespace c = gprof::collector::cupti;
using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
using SubscribeV2Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*);
}  // namespace

extern "C" {

__attribute__((visibility("default"), noinline)) CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                                                            CUpti_CallbackFunc callback,
                                                                            void* userdata) {
    auto real = reinterpret_cast<SubscribeFn>(c::real_cupti_function("cuptiSubscribe"));
    if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult result = real(subscriber, callback, userdata);
    c::note_other_client(nullptr, __builtin_return_address(0), result);
    return result;
}

__attribute__((visibility("default"), noinline)) CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                                                               CUpti_CallbackFunc callback,
                                                                               void* userdata,
                                                                               CUpti_SubscriberParams* params) {
    auto real = reinterpret_cast<SubscribeV2Fn>(c::real_cupti_function("cuptiSubscribe_v2"));
    if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult result = real(subscriber, callback, userdata, params);
    c::note_other_client(params ? params->subscriberName : nullptr, __builtin_return_address(0), result);
    return result;
}

}  // extern "C"
