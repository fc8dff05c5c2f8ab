#include "analyze/intervals.h"

#include <algorithm>

namespace gprof::report {

std::vector<Interval> interval_union(std::vector<Interval> in) {
    std::erase_if(in, [](const Interval& i) { return i.end <= i.start; });
    auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
    // Records mostly arrive in time order: skip the sort then (the union does not depend on the order of ties).
    if (!std::is_sorted(in.begin(), in.end(), by_start)) std::sort(in.begin(), in.end(), by_start);
    // Merged in place: the union is never longer than its input, and a second vector of it was the analysis's
    // largest after the model on a 10^7-record run (docs/performance.md, issue 33).
    size_t kept = 0;
    for (const Interval& i : in) {
        if (kept > 0 && i.start <= in[kept - 1].end) {
            in[kept - 1].end = std::max(in[kept - 1].end, i.end);
        } else {
            in[kept++] = i;
        }
    }
    in.resize(kept);
    if (kept < in.capacity() / 2) in.shrink_to_fit();  // much overlap: do not hold the input's room
    return in;
}

int64_t total_length(const std::vector<Interval>& disjoint) {
    int64_t sum = 0;
    for (const Interval& i : disjoint) sum = sat_add(sum, i.length());
    return sum;
}

int64_t length_within(const std::vector<Interval>& disjoint, Interval window) {
    // First interval that ends after the window starts: binary search keeps per-gap queries cheap.
    auto it = std::upper_bound(disjoint.begin(), disjoint.end(), window.start,
                               [](int64_t t, const Interval& i) { return t < i.end; });
    int64_t sum = 0;
    for (; it != disjoint.end() && it->start < window.end; ++it) sum += overlap(*it, window);
    return sum;
}

std::vector<Interval> gaps_within(const std::vector<Interval>& disjoint, Interval window) {
    std::vector<Interval> gaps;
    int64_t cursor = window.start;
    for (const Interval& i : disjoint) {
        if (i.end <= window.start) continue;
        if (i.start >= window.end) break;
        if (i.start > cursor) gaps.push_back({cursor, i.start});
        cursor = std::max(cursor, i.end);
    }
    if (cursor < window.end) gaps.push_back({cursor, window.end});
    return gaps;
}

int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    int64_t sum = 0;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        sum = sat_add(sum, overlap(a[i], b[j]));
        if (a[i].end < b[j].end) ++i; else ++j;
    }
    return sum;
}

}  // namespace gprof::report
