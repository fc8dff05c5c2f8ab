// The findings that read the GPU metrics (issue 37): a GPU-bound device whose SMs are mostly idle while kernels run
// (small grids, gaps between launches), a memory-bound one (DRAM busy, SMs not), and tensor cores unused by matmul
// kernels. Each from the device's figures while kernels ran (model/gpu_metric_summary.h). Thresholds: docs/analysis.md.
#include <cctype>
#include <cmath>

#include "analyze/run_parts.h"
#include "model/gpu_metric_summary.h"
#include "model/names.h"

namespace gprof::report::analysis_run {

namespace {

// A figure of the series by metric name while kernels ran; NaN when the set does not have it.
double busy_figure(const GpuMetricsSummary& s, std::string_view metric) {
    for (const GpuMetricFigures& f : s.metrics)
        if (f.metric == metric) return f.busy_mean;
    return std::nan("");
}

// cuBLAS, cuBLASLt, CUTLASS and PyTorch matmul kernels by their names: "sm80_xmma_gemm_...", "ampere_sgemm_...",
// "cutlass::Kernel<...>", "gemmSN_TN_kernel", "void gemv2T_kernel..." (a gemv is a matmul too).
bool matmul_kernel(std::string_view name) {
    std::string lower(name.substr(0, 512));
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const char* word : {"gemm", "gemv", "cutlass", "cublas", "matmul", "xmma"})
        if (lower.find(word) != std::string::npos) return true;
    return false;
}

}  // namespace

void gpu_metric_findings(const Context& c, const std::vector<DeviceUtilisation>& devs, std::vector<Finding>& out) {
    for (const ProcessTrace& p : c.run.processes) {
        for (const GpuMetricSeries& series : p.gpu_metrics.series) {
            // The device's kernel time and its matmul share, from this process's kernels.
            std::vector<BusySpan> kernels;
            int64_t kernel_ns = 0, matmul_ns = 0;
            std::map<std::string_view, int64_t> matmul_by_name;
            for (const trace::Kernel& k : p.kernels) {
                if (k.device != series.device || !timed(k.start, k.end)) continue;
                kernels.push_back({k.start, k.end});
                const int64_t d = sat_duration(k.start, k.end);
                kernel_ns = sat_add(kernel_ns, d);
                if (matmul_kernel(p.str(k.name))) {
                    matmul_ns = sat_add(matmul_ns, d);
                    matmul_by_name[p.str(k.name)] += d;
                }
            }
            GpuMetricsSummarizer summarizer(series);
            summarizer.add_busy(std::move(kernels));
            const GpuMetricsSummary s = summarizer.finish({});
            // Too little kernel time inside the samples to say anything (fewer than kMinMetricSamples samples' worth).
            if (s.busy_ns < kMinMetricSamples * std::max<uint64_t>(s.interval_ns, 1)) continue;
            const double sm = busy_figure(s, kSmActiveMetric), dram = busy_figure(s, kDramThroughputMetric),
                         tensor = busy_figure(s, kTensorPipeMetric);
            const int64_t first = p.to_run_ns(series.first_start());
            const int64_t last = p.to_run_ns(series.last_end());
            const std::string gpu = "GPU " + std::to_string(series.device);
            const DeviceUtilisation* util = nullptr;
            for (const DeviceUtilisation& d : devs)
                if (d.key.host == p.header.hostname && d.key.device == series.device) util = &d;
            const int64_t busy = static_cast<int64_t>(s.busy_ns);
            if (util && util->steady_busy_pct >= kGpuBoundPct && sm < kSmIdlePct && !(dram >= kMemoryBoundDramPct)) {
                Finding f{"sm_idle_while_busy", "the GPU is busy but its SMs mostly idle", sm, "%",
                          gpu + " is busy " + pct(util->steady_busy_pct) + " after start-up, yet its SMs were active " +
                              pct(sm) + " of the time kernels ran (DRAM throughput " + pct(dram) + ")",
                          "the kernels leave SMs without work: grids too small for the device (see tiny_grids), "
                          "short kernels with gaps between them (CUDA graphs, fusing kernels, a larger batch)",
                          busy, first, last};
                out.push_back(std::move(f));
            }
            if (dram >= kMemoryBoundDramPct) {
                Finding f{"memory_bound", "the kernels wait on device memory", dram, "%",
                          "while kernels ran on " + gpu + ", DRAM throughput was " + pct(dram) +
                              " of peak and the SMs active " + pct(sm),
                          "the kernels are limited by memory bandwidth: fuse elementwise kernels, use lower precision "
                          "(FP16/BF16), improve reuse (tiling through shared memory); ncu's memory workload analysis "
                          "names the kernels",
                          busy, first, last};
                out.push_back(std::move(f));
            }
            const double matmul_share = kernel_ns > 0 ? static_cast<double>(matmul_ns) / static_cast<double>(kernel_ns) : 0;
            if (matmul_share >= kMatmulKernelShare && tensor < kTensorUnusedPct) {
                auto top = std::max_element(matmul_by_name.begin(), matmul_by_name.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; });
                Finding f{"tensor_cores_unused", "matmul kernels without tensor cores", tensor, "%",
                          "matrix-multiply kernels take " + pct(100.0 * matmul_share) + " of kernel time on " + gpu +
                              " (most: " + shorten_name(demangle(std::string(top->first)), 60) +
                              "), yet the tensor pipe was active " + pct(tensor) + " while kernels ran",
                          "use a tensor-core precision: TF32 (torch.backends.cuda.matmul.allow_tf32 = True, "
                          "CUBLAS_TF32_TENSOR_OP_MATH), FP16/BF16 (torch.autocast), dimensions multiple of 8",
                          matmul_ns, first, last};
                out.push_back(std::move(f));
            }
        }
    }
}

}  // namespace gprof::report::analysis_run
