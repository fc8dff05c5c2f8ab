// Order statistics and moments, one definition for every layer: the summary's per-name statistics
// (model/aggregate), `analyze` (median launch cost, step-time distribution) and `diff` (figures over runs).
// In model/ because that is the bottom layer: everything above may use it, it uses nothing above.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gprof::report {

// The median of v[0, n) by selection, O(n): the mean of the two middle values when n is even, 0 when n == 0.
// Reorders v (std::nth_element at n/2). A full sort of 10 M durations would dominate the summary's time.
template <class T> double median_in_place(T* v, size_t n) {
    if (n == 0) return 0;
    std::nth_element(v, v + n / 2, v + n);
    double upper = static_cast<double>(v[n / 2]);
    if (n % 2) return upper;
    double lower = static_cast<double>(*std::max_element(v, v + n / 2));
    return lower + (upper - lower) * 0.5;  // percentile_of(v, 0.5)'s interpolation, to the bit
}

double median_of(std::vector<double> v);                 // median_in_place on a copy; 0 when empty
double mean_of(const std::vector<double>& v);            // 0 when empty
double percentile_of(std::vector<double> v, double q);   // q in [0,1], linear interpolation; 0 when empty
double stddev_of(const std::vector<double>& v);          // sample standard deviation (n-1); 0 when n < 2

}  // namespace gprof::report
