// One synthetic training-like workload with run-to-run noise, shared by the diff tests and the false-alarm
// benchmark: per step an H->D copy, three kernels (one of them "gemm"), a D->H copy, inside NVTX "step N".
#pragma once

#include <cmath>
#include <random>

#include "synthetic_trace.h"

namespace gprof::testing {

struct WorkloadSpec {
    int steps = 20;
    double gemm_scale = 1.0;        // planted slowdown of the gemm kernel (1.10 = 10% slower)
    double run_noise = 0.01;        // sigma of a per-run multiplicative factor (GPU clocks, thermal state)
    double instance_noise = 0.01;   // sigma per kernel instance
    double outlier_prob = 0.0;      // chance that a run is disturbed (noisy neighbour) ...
    double outlier_scale = 1.15;    // ... and then this much slower
    bool extra_kernel = false;      // a kernel only this side has ("new_kernel")
    bool drop_relu = false;         // the relu kernel vanished
};

inline void synth_workload(Synth& s, const WorkloadSpec& w, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> n01(0.0, 1.0);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    double run_factor = std::exp(w.run_noise * n01(rng));
    if (u01(rng) < w.outlier_prob) run_factor *= w.outlier_scale;
    auto dur = [&](double base_ns) {
        return static_cast<uint64_t>(base_ns * run_factor * std::exp(w.instance_noise * n01(rng)));
    };
    uint64_t t = 1000;
    for (int i = 0; i < w.steps; ++i) {
        uint64_t step_start = t;
        uint64_t d = dur(50'000);
        s.memcpy(trace::MemcpyKind::HtoD, 1 << 20, t + 5'000, t + 5'000 + d, true, trace::MemoryKind::Pinned, 7,
                 t, t + 4'000);
        t += 5'000 + d;
        const char* kernels[] = {"gemm", "relu", "softmax"};
        double base[] = {400'000 * w.gemm_scale, 80'000, 60'000};
        for (int k = 0; k < 3; ++k) {
            if (k == 1 && w.drop_relu) continue;
            uint64_t kd = dur(base[k]);
            s.kernel(kernels[k], t + 5'000, t + 5'000 + kd, 7, 1024, 256, t, t + 4'000);
            t += 5'000 + kd;
        }
        if (w.extra_kernel) {
            uint64_t kd = dur(30'000);
            s.kernel("new_kernel", t + 5'000, t + 5'000 + kd, 7, 1024, 256, t, t + 4'000);
            t += 5'000 + kd;
        }
        d = dur(20'000);
        s.memcpy(trace::MemcpyKind::DtoH, 4096, t + 5'000, t + 5'000 + d, true, trace::MemoryKind::Pinned, 7, t,
                 t + 4'000);
        t += 5'000 + d + 10'000;
        std::string name = "step " + std::to_string(i);
        s.range(name.c_str(), step_start, t);
    }
}

}  // namespace gprof::testing
