// Which ranks stand out from the others: a robust outlier test over one figure per rank (its median work per step),
// that holds from 3 to 10 000 ranks and more (docs/distributed.md "The straggler").
//
// The reference is the median rank; the spread is the median absolute deviation (MAD) across ranks, scaled by 1.4826
// so that it estimates the standard deviation of normal noise. Both ignore up to half the ranks being odd, so a slow
// node of 8 ranks among 64 does not hide itself by moving the yardstick. A rank's robust z is its distance from the
// reference in those units; its confidence is the chance that no rank of the N would lie that far out by noise alone
// (1 - N x the tail beyond z of a Laplace distribution, heavier than the normal's: the more ranks, the further out a
// rank must be). A rank stands out when it is
// both practically slower (at least kStragglerMarginPct over the reference) and statistically so (confidence at least
// kStragglerConfidence). Random spikes hit every rank alike: a rank's median work per step does not move with them,
// so they neither make nor hide a straggler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gprof::report {

// A rank is a straggler when it does at least this much more work per step than the median rank ...
inline constexpr double kStragglerMarginPct = 5.0;
// ... and noise alone would put no rank of the job that far out, with this confidence.
inline constexpr double kStragglerConfidence = 0.99;
// How many of the ranks that stand out the text names (JSON lists them all).
inline constexpr size_t kTopRanks = 5;

struct RankOutlier {
    size_t index = 0;         // into the values tested
    double value = 0;         // the rank's figure (median work per step, ns)
    double excess_pct = 0;    // (value / reference - 1) x 100
    double z = 0;             // (value - reference) / scale; +inf when the scale is 0 and the value above
    double confidence = 0;    // in [0, 1]
    bool stands_out = false;  // excess_pct >= margin and confidence >= kStragglerConfidence
};

struct OutlierTest {
    double reference = 0;  // the median of the values (with two values: the smaller, the one the other is held to)
    double mad = 0;        // median absolute deviation from the reference
    double scale = 0;      // 1.4826 x mad, at least 0.1 % of the reference (a spread of exactly 0 says nothing)
    // The values above the reference, most outstanding first (confidence, then excess): every one that stands out,
    // then others up to `keep` entries in all.
    std::vector<RankOutlier> top;
    size_t standing_out = 0;
};

// The test over `values` (one per rank). With two values there is no spread across ranks to measure: the caller
// passes `pair_scale`, the standard error of the difference of the two medians from each rank's own step-to-step
// spread (median_standard_error), and the larger value is held to the smaller in those units.
OutlierTest find_outliers(const std::vector<double>& values, size_t keep, double pair_scale = 0);

// The standard error of the median of `v` (one rank's work per step), from its own spread: 1.2533 x 1.4826 x MAD /
// sqrt(n), robust to the spikes among the steps. Reorders v. 0 for fewer than three values (no spread to tell).
double median_standard_error(std::vector<double>& v);

// "> 99.9 %", "97.3 %", "< 0.1 %".
std::string confidence_text(double confidence);

}  // namespace gprof::report
