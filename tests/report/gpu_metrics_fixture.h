// A run with GPU metrics (trace format 1.7, issue 37) whose figures are known by hand: device 0 sampled every
// 100 us for 1 ms from kT0 with four metrics, kernels on it, two NVTX ranges, and a device 1 with kernels and no
// metrics. What each output must show of it is worked out beside each test.
//
//   sample i (0..9): [kT0 + i*100us, +100us)
//     SM active          10*i %            (sample 7 has only this value: the others missing there)
//     tensor pipe        5 %
//     DRAM throughput    90 - 10*i %
//     DRAM bytes read    100 000 bytes     (1 GB/s)
//   kernels, device 0:   [200us, 400us) and [300us, 550us): kernel time 350us, in samples 2, 3, 4 whole and half of 5
//   kernel, device 1:    [0, 1000us) (no metrics on device 1: it weighs nothing)
//   NVTX ranges (thread 100): "step" [0, 500us) and "eval" [500us, 1000us)
#pragma once

#include "report_fixture.h"

namespace gprof::testing {

inline constexpr const char* kSmActive = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kTensor = "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kDramRead = "dram__bytes_read.sum";

inline void fill_gpu_metrics_run(trace::TraceWriter& w) {
    using namespace gprof::trace;
    w.add(Thread{100, w.intern("main")});
    for (uint32_t id = 0; id < 2; ++id) {
        Device d;
        d.id = id;
        d.name = w.intern("NVIDIA H100 80GB HBM3");
        d.cc_major = 9;
        d.sm_count = 132;
        d.global_memory_bytes = 80ull << 30;
        w.add(d);
    }
    GpuMetricSet set;
    set.device = 0;
    set.name = w.intern("gh100");
    set.chip = w.intern("GH100");
    set.metrics = w.intern((std::string(kSmActive) + " " + kTensor + " " + kDram + " " + kDramRead).c_str());
    set.interval_ns = 100'000;
    w.add(set);
    const StringId kernel = w.intern("_Z6kernelPfi");
    auto add_kernel = [&](uint32_t device, uint64_t start_us, uint64_t end_us, uint32_t correlation) {
        Kernel k;
        k.start = kT0 + start_us * 1000;
        k.end = kT0 + end_us * 1000;
        k.device = device;
        k.stream = 7;
        k.correlation = correlation;
        k.grid_x = 1;
        k.block_x = 32;
        k.name = kernel;
        w.add(k);
    };
    add_kernel(0, 200, 400, 1);
    add_kernel(0, 300, 550, 2);
    add_kernel(1, 0, 1000, 3);
    for (uint32_t i = 0; i < 10; ++i) {
        GpuMetricSample s;
        s.start = kT0 + i * 100'000;
        s.end = s.start + 100'000;
        s.device = 0;
        s.values[s.value_count++] = 10.0 * i;
        if (i != 7) {
            s.values[s.value_count++] = 5;
            s.values[s.value_count++] = 90 - 10.0 * i;
            s.values[s.value_count++] = 100'000;
        }
        w.add(s);
    }
    auto add_range = [&](const char* name, uint64_t start_us, uint64_t end_us) {
        Nvtx n;
        n.start = kT0 + start_us * 1000;
        n.end = kT0 + end_us * 1000;
        n.tid = n.end_tid = 100;
        n.name = w.intern(name);
        w.add(n);
    };
    add_range("step", 0, 500);
    add_range("eval", 500, 1000);
}

}  // namespace gprof::testing
