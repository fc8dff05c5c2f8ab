#include "metrics/metric_sets.h"

#include <array>
#include <cstddef>

namespace gprof::collector::metrics {
namespace {

// The quantities nsys's GPU metrics show (SM active, tensor active, DRAM bandwidth, warps in flight, GR active,
// PCIe), as PM-sampling metrics. Order = what is kept when a chip cannot count them all in one pass: the shares
// first (each says the most in one number), then the cycle counts (GR active over elapsed cycles gives the GR active
// share, elapsed cycles over the sample's length the clock), then byte counts. Which of them each chip counts in one
// pass: tests/collector/test_metric_config.cpp, docs/gpu-metrics.md. On Hopper these are the eight the PM-sampling
// probe sampled on an H200 (2026-11-27, values checked phase by phase: docs/validation.md "PM sampling on the
// H200") and PCIe traffic; all ten fit in one pass there.
constexpr std::array kCoreMetrics = {
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_elapsed",
    "gr__cycles_active.sum",
    "gr__cycles_elapsed.max",
};
constexpr std::array kDramBytes = {"dram__bytes_read.sum", "dram__bytes_write.sum"};  // none for GB20x (CUDA 13.0)
constexpr std::array kPcieBytes = {"pcie__read_bytes.sum", "pcie__write_bytes.sum"};  // none for GB100 (CUDA 13.0)

template <size_t A, size_t B>
constexpr std::array<const char*, A + B> join(const std::array<const char*, A>& a, const std::array<const char*, B>& b) {
    std::array<const char*, A + B> out{};
    for (size_t i = 0; i < A; ++i) out[i] = a[i];
    for (size_t i = 0; i < B; ++i) out[A + i] = b[i];
    return out;
}

constexpr auto kAllMetrics = join(join(kCoreMetrics, kDramBytes), kPcieBytes);
constexpr auto kBlackwellDatacenterMetrics = join(kCoreMetrics, kDramBytes);
constexpr auto kBlackwellClientMetrics = join(kCoreMetrics, kPcieBytes);

constexpr std::array kHopperChips = {"GH100"};
constexpr std::array kAmpereDatacenterChips = {"GA100"};
constexpr std::array kAmpereChips = {"GA102", "GA103", "GA104", "GA106", "GA107", "GA10B"};
constexpr std::array kAdaChips = {"AD102", "AD103", "AD104", "AD106", "AD107"};
constexpr std::array kBlackwellDatacenterChips = {"GB100", "GB102", "GB110"};
constexpr std::array kBlackwellClientChips = {"GB202", "GB203", "GB205", "GB206", "GB207"};

constexpr std::array kSets = {
    MetricSet{"gh100", "Hopper (H100, H200, GH200)", kHopperChips, kAllMetrics},
    MetricSet{"ga100", "Ampere datacenter (A100, A30)", kAmpereDatacenterChips, kAllMetrics},
    MetricSet{"ga10x", "Ampere (A10, A40, RTX 30, Orin)", kAmpereChips, kAllMetrics},
    MetricSet{"ad10x", "Ada (L4, L40, RTX 40)", kAdaChips, kAllMetrics},
    MetricSet{"gb100", "Blackwell datacenter (B200, GB200)", kBlackwellDatacenterChips,
              kBlackwellDatacenterMetrics},
    MetricSet{"gb20x", "Blackwell (RTX PRO 6000, RTX 50)", kBlackwellClientChips, kBlackwellClientMetrics},
};

}  // namespace

std::span<const MetricSet> metric_sets() { return kSets; }

const MetricSet* find_metric_set(std::string_view name) {
    for (const auto& s : kSets)
        if (s.name == name) return &s;
    return nullptr;
}

const MetricSet* default_metric_set(std::string_view chip) {
    for (const auto& s : kSets)
        for (std::string_view c : s.chips)
            if (c == chip) return &s;
    return nullptr;
}

std::string metric_set_names() {
    std::string out;
    for (const auto& s : kSets) {
        if (!out.empty()) out += ", ";
        out += s.name;
    }
    return out;
}

}  // namespace gprof::collector::metrics
