#include "analyze/straggler.h"

#include <algorithm>
#include <cmath>

#include "model/stats.h"
#include "output/table.h"

namespace gprof::report {

namespace {

// 1.4826 x MAD estimates the standard deviation of normally distributed values (1 / the normal's 75th percentile).
constexpr double kMadToSigma = 1.4826;

double excess_pct(double value, double reference) { return reference > 0 ? (value / reference - 1) * 100 : 0; }

}  // namespace

double median_standard_error(std::vector<double>& v) {
    const size_t n = v.size();
    if (n < 3) return 0;
    double m = median_in_place(v.data(), n);
    for (double& x : v) x = std::abs(x - m);
    double mad = median_in_place(v.data(), n);
    // The median of n normal values varies sqrt(pi/2) = 1.2533 times as much as their mean.
    return 1.2533 * kMadToSigma * mad / std::sqrt(double(n));
}

OutlierTest find_outliers(const std::vector<double>& values, size_t keep, double pair_scale) {
    OutlierTest t;
    const size_t n = values.size();
    if (n < 2) return t;
    std::vector<RankOutlier> above;
    std::vector<double> v = values;
    if (n == 2) {
        // Two ranks: no spread across ranks. The larger is held to the smaller, in units of the two medians' own
        // standard error; without one (a single step each), nothing can be told from noise.
        t.reference = std::min(values[0], values[1]);
        t.scale = pair_scale > 0 ? std::max({pair_scale, 1e-3 * std::abs(t.reference), 1.0}) : 0;
    } else {
        t.reference = median_in_place(v.data(), v.size());
        for (double& x : v) x = std::abs(x - t.reference);
        t.mad = median_in_place(v.data(), v.size());
        t.scale = std::max({kMadToSigma * t.mad, 1e-3 * std::abs(t.reference), 1.0});
    }
    for (size_t i = 0; i < n; ++i) {
        if (!(values[i] > t.reference)) continue;
        RankOutlier o;
        o.index = i;
        o.value = values[i];
        o.excess_pct = excess_pct(o.value, t.reference);
        o.z = t.scale > 0 ? (o.value - t.reference) / t.scale : 0;
        // The chance that noise puts any of the n ranks this far out: n x the tail beyond z (Bonferroni) of a
        // Laplace distribution of unit variance. Not the normal's: the medians of steps with random spikes have a
        // heavier tail (test_straggler: with the normal tail, pure noise made a straggler at 10 000 ranks, z 4.85).
        double tail = t.scale > 0 ? 0.5 * std::exp(-std::sqrt(2.0) * o.z) : 1;
        o.confidence = std::clamp(1 - double(n) * tail, 0.0, 1.0);
        above.push_back(o);
    }
    for (auto& o : above) {
        o.stands_out = o.excess_pct >= kStragglerMarginPct && o.confidence >= kStragglerConfidence;
        t.standing_out += o.stands_out;
    }
    // Most outstanding first. Reference and scale are shared, so that is the largest value first; the index breaks
    // ties, so the order never depends on the sort.
    std::sort(above.begin(), above.end(), [](const RankOutlier& a, const RankOutlier& b) {
        return a.value != b.value ? a.value > b.value : a.index < b.index;
    });
    above.resize(std::min(above.size(), std::max(keep, t.standing_out)));
    t.top = std::move(above);
    return t;
}

std::string confidence_text(double c) {
    if (c >= 0.999) return "> 99.9 %";
    if (c < 0.001) return "< 0.1 %";
    return format_fixed(c * 100, 1) + " %";
}

}  // namespace gprof::report
