#include "model/stats.h"

#include <cmath>
#include <numeric>

namespace gprof::report {

double median_of(std::vector<double> v) { return median_in_place(v.data(), v.size()); }

double mean_of(const std::vector<double>& v) {
    if (v.empty()) return 0;
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double percentile_of(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, v.size() - 1);
    double frac = pos - static_cast<double>(lo);
    return v[lo] + (v[hi] - v[lo]) * frac;
}

double stddev_of(const std::vector<double>& v) {
    if (v.size() < 2) return 0;
    double m = mean_of(v), ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

}  // namespace gprof::report
