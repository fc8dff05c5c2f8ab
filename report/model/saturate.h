// Run-axis arithmetic that cannot overflow. Timestamps come from files, and a crafted or damaged trace can hold values
// near 2^64: sums and differences of them saturate at the int64 limits instead of being undefined behaviour (found by
// the report fuzzer under UBSan). Real traces are nowhere near the limits, so their figures do not change.
#pragma once

#include <cstdint>
#include <limits>

namespace gprof::report {

inline int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    return r;
}
inline int64_t sat_sub(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    return r;
}
// A time on the run axis, kept within ±(2^62 - 1) ns (146 years either side of the run's start): any difference or
// sum of two such times fits in int64, so the reports can subtract them freely. Real traces are decades inside it.
inline int64_t run_axis_ns(uint64_t ts, int64_t clock_offset_ns, int64_t run_base_ns) {
    constexpr int64_t kLimit = (int64_t(1) << 62) - 1;
    int64_t v = sat_sub(sat_add(static_cast<int64_t>(ts), clock_offset_ns), run_base_ns);
    return v < -kLimit ? -kLimit : v > kLimit ? kLimit : v;
}
// e - s of two unsigned timestamps as a signed duration: 0 when e <= s, at most INT64_MAX.
inline int64_t sat_duration(uint64_t s, uint64_t e) {
    if (e <= s) return 0;
    uint64_t d = e - s;
    return d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                          : static_cast<int64_t>(d);
}

}  // namespace gprof::report
