// The statistics of a stream of durations (or sizes) in bounded memory: exact while small, a relative-error
// histogram once large. This is what lets the summary of 10^8 records fit in well under 1 GB.
//
// Exact while at most kExactLimit values were pushed: every value is kept and Stats are computed from them as they
// always were (identical output for every run of ordinary size). Past that, the values go into a log-linear
// histogram (2^kSubBucketBits buckets per power of two, like HdrHistogram) and the kept values are dropped:
//   - count, total, min, max and mean stay exact;
//   - the median is read from the histogram: within kMedianRelativeError (1/256, 0.39 %) of the exact median,
//     and exact for values below 128;
//   - the standard deviation comes from exact integer sums of the values and their squares (128-bit), so it is
//     exact up to the last bits of a long double (only a sum of squares beyond 2^128 falls back to the histogram).
// Two distributions merge (merge()), and the result does not depend on how the values were split: it is exact iff
// the total count is at most kExactLimit, and then holds the values in the order of the parts. That is what makes
// per-thread aggregation merge to the single-threaded result, byte for byte.
// stats() depends only on the values, not on the order they were pushed or merged in (the exact values are sorted
// before the standard deviation is summed): the NVTX block fills a range's distributions from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gprof::report {

// Count / total / min / max / mean / median / stddev of a set of durations (or sizes).
struct Stats {
    uint64_t count = 0;
    uint64_t total = 0;
    uint64_t min = 0, max = 0;
    double mean = 0, median = 0, stddev = 0;  // stddev: sample (n-1), 0 for one value, like nsys
};
Stats compute_stats(std::vector<uint64_t>& values);  // exact; reorders values (selection, not a full sort)

class Distribution {
public:
    static constexpr uint64_t kExactLimit = 65536;  // values kept exactly per distribution
    static constexpr int kSubBucketBits = 7;          // 128 buckets per power of two
    static constexpr double kMedianRelativeError = 1.0 / (2 << kSubBucketBits);  // 1/256

    Distribution() = default;
    Distribution(Distribution&&) noexcept = default;
    Distribution& operator=(Distribution&&) noexcept = default;
    Distribution(const Distribution&) = default;
    Distribution& operator=(const Distribution&) = default;

    void push(uint64_t v) {
        if (!sketch_) {
            if (count_ < kExactLimit) {
                ++count_;
                if (!wide_ && v <= UINT32_MAX) narrow_.push_back(static_cast<uint32_t>(v));
                else push_wide(v);
                return;
            }
            to_sketch();
        }
        ++count_;
        add_to_sketch(v);
    }
    // Adds `later`'s values as if pushed after this one's; `later` is left empty.
    void merge(Distribution&& later);
    // Histogram from now on. Only for a part that will be merged into a distribution already past the limit (the
    // merge would turn it into a histogram anyway): lets a decoding thread bucket values instead of the fold.
    void force_sketch() { to_sketch(); }

    uint64_t count() const { return count_; }
    bool empty() const { return count_ == 0; }
    bool exact() const { return !sketch_; }
    Stats stats() const;
    void release() { *this = Distribution(); }

    // The histogram's bucket of a value, and the value a bucket stands for (its middle). Public for the tests.
    // Values below 2^k have a bucket each; above, bucket = (octave, the k bits after the leading one).
    static uint32_t bucket_of(uint64_t v) {
        constexpr int k = kSubBucketBits;
        if (v < (uint64_t(1) << k)) return static_cast<uint32_t>(v);
        int e = 63 - __builtin_clzll(v);  // >= k
        return (static_cast<uint32_t>(e - k + 1) << k) + static_cast<uint32_t>((v >> (e - k)) & ((uint64_t(1) << k) - 1));
    }
    static double bucket_value(uint32_t bucket);

private:
    __extension__ typedef unsigned __int128 u128;

    void widen();  // 32-bit values to 64-bit, in order
    void push_wide(uint64_t v);
    void to_sketch();
    // One value into the histogram. Inline, since every API call, kernel and copy of a big run comes here (twice
    // with the NVTX block); only a value outside the buckets spanned so far (or the first) goes out of line.
    void add_to_sketch(uint64_t v) {
        uint32_t i = bucket_of(v) - first_bucket_;  // wraps for a bucket below the first
        if (i >= counts_.size()) [[unlikely]] i = span_bucket(v);
        ++counts_[i];
        if (v < min_) min_ = v;
        if (v > max_) max_ = v;
        sum_ += v;
        if (__builtin_add_overflow(sum_squares_, static_cast<u128>(v) * v, &sum_squares_)) squares_overflowed_ = true;
    }
    uint32_t span_bucket(uint64_t v);  // grows the histogram to v's bucket; its index in counts_
    double value_at_rank(uint64_t rank) const;  // histogram estimate of the rank-th smallest (0-based)

    uint64_t count_ = 0;
    // Exact: the values in arrival order, 32 bits each until one does not fit.
    std::vector<uint32_t> narrow_;
    std::vector<uint64_t> wide_values_;
    bool wide_ = false;
    // Histogram: counts_[i] values fell in bucket first_bucket_ + i; exact sums for total, mean and stddev.
    bool sketch_ = false;
    bool squares_overflowed_ = false;
    uint32_t first_bucket_ = 0;
    std::vector<uint64_t> counts_;
    u128 sum_ = 0, sum_squares_ = 0;
    uint64_t min_ = 0, max_ = 0;
};

}  // namespace gprof::report
