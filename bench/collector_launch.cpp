// Cost model per kernel launch and per API call, on CPU (issue 17): the collector's real in-target code (CUPTI
// session: callbacks and buffer handlers; pipeline: writer thread, translation, encoding, the trace writer) driven at
// launch rates through the CUPTI stand-in (tests/collector/cupti_standin, a test double that plays CUPTI: it copies
// real CUpti_Activity* structs into our buffers and calls our callbacks as CUPTI does).
//
// What is ours and what is CUPTI's: on the application's thread ours is the time inside our callbacks (API
// callbacks, buffer requested, buffer completed), which the stand-in measures around each call (TSC; the cost of the
// measurement itself, calibrated here on an empty function, is taken off). The writer thread's CPU time is read on
// that thread itself (a periodic hook) and is all ours except the record walk (cuptiActivityGetNextRecord, the
// stand-in's here; the real libcupti's costs 12-15 ns a record, bench/collector_translate). For scale, the same
// workload is played with a null client (this program subscribed with empty callbacks and a static buffer, the same
// kinds and callback domains enabled): the stand-in's own CPU per unit, what CUPTI's work costs in this model (not
// CUPTI's real cost: only a GPU run measures that). Rounds alternate between the null client and ours; the median
// round is printed with the spread (max - min).
//
//   collector_launch [--launches N] [--rounds R] [--api activity,callback,off]
//
// Prints one table per workload: per launch (cudaLaunchKernel: the runtime's cuKernelGetName driver call, the runtime
// call, the kernel record) and per API call (a runtime call with no GPU work, like cudaEventQuery), for each way of
// recording API calls (GPROF_CUDA_API). Arguments it does not know (scripts/bench passes --benchmark_*) are ignored.
#include <dlfcn.h>
#include <x86intrin.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cupti/session.h"
#include "pipeline/pipeline.h"
#include "standin_bench.h"
#include "standin_control.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::collector;
using namespace gprof::collector::cupti;
using namespace gprof::bench;

namespace {

// TSC ticks per ns, and the ticks a timed empty call costs (what the stand-in's measurement adds per callback).
double g_ticks_per_ns = 1;
double g_empty_call_ticks = 0;
__attribute__((noinline)) void empty_call() { asm volatile(""); }

void calibrate() {
    auto mono = [] {
        timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
    };
    double n0 = mono();
    uint64_t t0 = __rdtsc();
    while (mono() - n0 < 50e6) {
    }
    g_ticks_per_ns = static_cast<double>(__rdtsc() - t0) / (mono() - n0);
    std::vector<uint64_t> d(200000);
    for (auto& x : d) {
        uint64_t a = __rdtsc();
        empty_call();
        x = __rdtsc() - a;
    }
    std::sort(d.begin(), d.end());
    g_empty_call_ticks = static_cast<double>(d[d.size() / 2]);
}

// What happened inside our callbacks since the last take(): API callbacks made (kind 0), and the ns spent in the
// buffer handlers (kinds 1 and 2: requested, completed), less the measurement's own cost. The API callbacks' time is
// not taken from these wall-clock intervals (a preempted callback on a loaded machine would count milliseconds) but
// from direct_callback_ns(), their CPU cost measured alone.
struct ClientClock {
    uint64_t ticks[3] = {}, calls[3] = {};
    uint64_t api_calls = 0;
    double buffer_ns = 0;
    void take() {
        buffer_ns = 0;
        for (int w = 0; w < 3; ++w) {
            uint64_t t = SI(gprof_test_standin_client_ticks)(w), c = SI(gprof_test_standin_client_calls)(w);
            if (w == 0) api_calls = c - calls[0];
            else buffer_ns += (static_cast<double>(t - ticks[w]) - static_cast<double>(c - calls[w]) * g_empty_call_ticks) /
                              g_ticks_per_ns;
            ticks[w] = t;
            calls[w] = c;
        }
    }
};
double g_callback_ns = 0;  // one API callback of ours (half an enter + exit pair), CPU ns: direct_callback_ns() / 2

enum class Workload { Launch, ApiCall };

// One unit of the workload, through the stand-in (as the CUDA runtime would make it with CUPTI present).
void play(Workload w, decltype(&gprof_test_standin_launch_kernel) launch,
          decltype(&gprof_test_standin_runtime_call) call) {
    if (w == Workload::Launch) launch("_Z4tinyPf", 7);
    else call(CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020);
}

// ---- the null client: CUPTI's work alone ------------------------------------------------------------------------

alignas(8) uint8_t g_null_buffer[8u << 20];
void CUPTIAPI null_requested(uint8_t** buffer, size_t* size, size_t* max) {
    *buffer = g_null_buffer;
    *size = sizeof g_null_buffer;
    *max = 0;
}
void CUPTIAPI null_completed(CUcontext, uint32_t, uint8_t*, size_t, size_t) {}
void CUPTIAPI null_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// The stand-in set up as our session would set it up (same kinds, same callback domains), with empty callbacks.
void start_null_client(ApiRecords api) {
    SI(gprof_test_standin_reset)();
    CUpti_SubscriberHandle h = nullptr;
    SI(cuptiSubscribe)(&h, null_callback, nullptr);
    SI(cuptiActivityRegisterCallbacks)(null_requested, null_completed);
    SI(cuptiActivityRegisterTimestampCallback)(
        &gprof_collector_cupti_timestamp);
    for (CUpti_ActivityKind k : traced_activity_kinds(false, api)) SI(cuptiActivityEnable)(k);
    if (api == ApiRecords::Callback)
        for (CUpti_CallbackDomain d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API})
            SI(cuptiEnableDomain)(1, h, d);
}

// ---- our session -------------------------------------------------------------------------------------------------

// The writer thread's CPU time, read on that thread by a hook (run at every flush).
std::atomic<uint64_t> g_writer_cpu{0};
void writer_cpu_hook(void*, trace::TraceWriter&, bool) { g_writer_cpu.store(thread_cpu_ns()); }

Ours start_ours(ApiRecords api, bool zeroed) {
    SessionOptions so;
    so.api_records = api;
    so.zeroed_buffers = zeroed;
    return bench::start_ours(so, writer_cpu_hook);
}

// CPU ns per unit of the calling thread over `n` units.
double app_ns(Workload w, long n) {
    auto launch = SI(gprof_test_standin_launch_kernel);
    auto call = SI(gprof_test_standin_runtime_call);
    uint64_t c0 = thread_cpu_ns();
    for (long i = 0; i < n; ++i) play(w, launch, call);
    return static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(n);
}

struct Figures {
    std::vector<double> cupti, callbacks, buffers, writer, records;
};

void measure(Workload w, ApiRecords api, bool zeroed, long n, int rounds, Figures& f) {
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < 2; ++k) {
            bool null_client = (r + k) % 2 == 0;  // alternate which goes first
            if (null_client) {
                start_null_client(api);
                app_ns(w, n / 10);  // warm-up
                f.cupti.push_back(app_ns(w, n));
                continue;
            }
            Ours o = start_ours(api, zeroed);
            app_ns(w, n / 10);
            // Everything so far translated and written; then one more round so the hook samples after that drain
            // (hooks run before the queue in a round).
            auto settle = [&] {
                o.session->flush(true);
                o.pipeline->flush(std::chrono::seconds(30));
                o.pipeline->flush(std::chrono::seconds(30));
            };
            settle();
            uint64_t before = g_writer_cpu.load();
            uint64_t records_before = o.pipeline->activity_records();
            ClientClock clientclock;
            clientclock.take();
            app_ns(w, n);
            clientclock.take();
            f.callbacks.push_back(static_cast<double>(clientclock.api_calls) * g_callback_ns / static_cast<double>(n));
            f.buffers.push_back(clientclock.buffer_ns / static_cast<double>(n));
            settle();
            f.writer.push_back(static_cast<double>(g_writer_cpu.load() - before) / static_cast<double>(n));
            f.records.push_back(static_cast<double>(o.pipeline->activity_records() - records_before) / static_cast<double>(n));
            o.pipeline->finish();
        }
    }
}

// Our API callback alone, called directly as CUPTI would (enter + exit of one runtime call), in callback mode: the
// app-thread stage of GPROF_CUDA_API=callback without the stand-in around it. Best of 20 batches of 10 000 pairs.
double direct_callback_ns() {
    Ours o = start_ours(ApiRecords::Callback, false);
    CUpti_CallbackData cb{};
    int32_t result = 0;
    cb.functionName = "cudaEventQuery";
    double best = 1e30;
    for (int batch = 0; batch < 20; ++batch) {
        uint64_t c0 = thread_cpu_ns();
        for (int i = 0; i < 10000; ++i) {
            cb.correlationId = static_cast<uint32_t>(batch * 10000 + i + 1);
            cb.callbackSite = CUPTI_API_ENTER;
            cb.functionReturnValue = nullptr;
            o.session->on_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, &cb);
            cb.callbackSite = CUPTI_API_EXIT;
            cb.functionReturnValue = &result;
            o.session->on_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, &cb);
        }
        best = std::min(best, static_cast<double>(thread_cpu_ns() - c0) / 10000.0);
    }
    o.session->flush(true);
    o.pipeline->finish();
    return best;
}

const char* api_name(ApiRecords a) {
    return a == ApiRecords::Activity ? "activity" : a == ApiRecords::Callback ? "callback" : "off";
}

}  // namespace

int main(int argc, char** argv) {
    long n = 200000;
    int rounds = 5;
    std::vector<ApiRecords> apis = {ApiRecords::Activity, ApiRecords::Callback, ApiRecords::Off};
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--launches" && i + 1 < argc) n = std::max(1000L, std::atol(argv[++i]));
        else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--api" && i + 1 < argc) {
            apis.clear();
            std::string list = argv[++i];
            for (const char* name : {"activity", "callback", "off"})
                if (list.find(name) != std::string::npos)
                    apis.push_back(name[0] == 'a' ? ApiRecords::Activity : name[0] == 'c' ? ApiRecords::Callback : ApiRecords::Off);
        }
    }
    bench::open_standin("collector_launch");
    clock::init();
    calibrate();
    double pair = direct_callback_ns();
    g_callback_ns = pair / 2;
    ::setenv("GPROF_LOG_LEVEL", "error", 1);
    std::printf("collector_launch: %ld units per round, %d rounds (median, spread max-min); ns: TSC %.3f ticks/ns, a timed "
                "empty call %.0f ticks (taken off)\n",
                n, rounds, g_ticks_per_ns, g_empty_call_ticks);
    std::printf("our API callback (GPROF_CUDA_API=callback) called directly, enter + exit of one call: %.1f ns CPU "
                "(best of 20 x 10 000); the 'our callbacks' column is that times the callbacks CUPTI made\n", pair);
    for (Workload w : {Workload::Launch, Workload::ApiCall}) {
        std::printf("\n%s\n", w == Workload::Launch
                                  ? "per kernel launch (cuKernelGetName + cudaLaunchKernel + kernel record)"
                                  : "per API call (cudaEventQuery: a runtime call, no GPU work)");
        std::printf("  %-20s %16s %15s %15s %15s %15s %10s\n", "GPROF_CUDA_API", "CUPTI (stand-in)", "our callbacks",
                    "buffer handlers", "ours: writer", "ours: total", "CUPTI recs");
        struct Variant {
            ApiRecords api;
            bool zeroed;
        };
        std::vector<Variant> variants;
        for (ApiRecords api : apis) variants.push_back({api, false});
        if (std::find(apis.begin(), apis.end(), ApiRecords::Activity) != apis.end())
            variants.push_back({ApiRecords::Activity, true});
        for (const Variant& v : variants) {
            Figures f;
            measure(w, v.api, v.zeroed, n, rounds, f);
            std::vector<double> total;
            double cupti = median(f.cupti);
            for (size_t i = 0; i < f.writer.size(); ++i) total.push_back(f.callbacks[i] + f.buffers[i] + f.writer[i]);
            std::string label = std::string(api_name(v.api)) + (v.zeroed ? " + zeroed" : "");
            std::printf("  %-20s %10.1f ±%4.0f %9.1f ±%4.0f %9.1f ±%4.0f %9.1f ±%4.0f %9.1f ±%4.0f %10.2f\n", label.c_str(),
                        cupti, spread(f.cupti), median(f.callbacks), spread(f.callbacks), median(f.buffers),
                        spread(f.buffers), median(f.writer), spread(f.writer), median(total), spread(total),
                        median(f.records));
            if (v.zeroed) std::printf("  %-20s (the same, GPROF_CUPTI_ZEROED_BUFFERS=1: buffers zeroed by us on the writer)\n", "");
        }
    }
    return 0;
}
