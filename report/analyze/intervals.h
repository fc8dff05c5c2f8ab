// Interval arithmetic for utilisation: the union of GPU operations (so overlapping streams are not counted
// twice), gaps inside a window, and overlap with host activity. All values are ns on one axis.
#pragma once

#include <cstdint>
#include <vector>

#include "model/saturate.h"

namespace gprof::report {

struct Interval {
    int64_t start = 0, end = 0;  // [start, end)
    int64_t length() const { return end > start ? sat_sub(end, start) : 0; }
};

// Sorted, disjoint union of the intervals (empty ones dropped). Takes its argument by value: it sorts it.
std::vector<Interval> interval_union(std::vector<Interval> intervals);

// Total length of a sorted, disjoint set.
int64_t total_length(const std::vector<Interval>& disjoint);

// Length of the part of a sorted, disjoint set that lies inside [window.start, window.end).
int64_t length_within(const std::vector<Interval>& disjoint, Interval window);

// The holes of a sorted, disjoint set inside `window` (leading and trailing holes included).
std::vector<Interval> gaps_within(const std::vector<Interval>& disjoint, Interval window);

// Length of the overlap of a sorted, disjoint set with one interval (same as length_within).
inline int64_t overlap(const std::vector<Interval>& disjoint, Interval i) { return length_within(disjoint, i); }

// Overlap of two intervals.
inline int64_t overlap(Interval a, Interval b) {
    int64_t s = a.start > b.start ? a.start : b.start;
    int64_t e = a.end < b.end ? a.end : b.end;
    return e > s ? e - s : 0;
}

// Length of the intersection of two sorted, disjoint sets.
int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace gprof::report
