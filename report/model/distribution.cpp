#include "model/distribution.h"

#include <algorithm>
#include <cmath>

#include "model/stats.h"

namespace gprof::report {

namespace {

// Count, total, min, max, mean, median and stddev of v[0, n); reorders v. With `sort`, v is sorted and the stddev
// summed in sorted order, so the result depends only on the values, not on the order they came in (a Distribution:
// the NVTX block gives values to a range from several threads, in no fixed order); without, the median's selection
// permutes v (compute_stats, as it always did). One definition for 32- and 64-bit values: identical results.
template <class T> Stats stats_of(T* v, size_t n, bool sort) {
    Stats s;
    if (n == 0) return s;
    s.count = n;
    long double sum = 0;
    T mn = v[0], mx = v[0];
    for (size_t i = 0; i < n; ++i) {
        T x = v[i];
        sum += x;
        mn = std::min(mn, x);
        mx = std::max(mx, x);
    }
    s.total = sum >= 0x1p64L ? UINT64_MAX : static_cast<uint64_t>(sum);  // crafted durations can pass 2^64
    s.min = mn;
    s.max = mx;
    s.mean = static_cast<double>(sum / n);
    if (sort) {
        std::sort(v, v + n);
        // median_in_place's value, to the bit.
        s.median = n % 2 ? static_cast<double>(v[n / 2])
                         : static_cast<double>(v[n / 2 - 1]) +
                               (static_cast<double>(v[n / 2]) - static_cast<double>(v[n / 2 - 1])) * 0.5;
    } else {
        s.median = median_in_place(v, n);
    }
    if (n > 1) {
        long double sq = 0;
        for (size_t i = 0; i < n; ++i) {
            long double d = v[i] - static_cast<long double>(s.mean);
            sq += d * d;
        }
        s.stddev = static_cast<double>(std::sqrt(sq / (n - 1)));
    }
    return s;
}

}  // namespace

Stats compute_stats(std::vector<uint64_t>& v) { return stats_of(v.data(), v.size(), false); }

// The middle of the bucket's integers: at most (width - 1) / 2 from any of them, and every value in it is at
// least 2^k times the width, hence the relative error bound 2^-(k+1).
double Distribution::bucket_value(uint32_t bucket) {
    constexpr int k = kSubBucketBits;
    if (bucket < (uint32_t(1) << k)) return bucket;
    int e = static_cast<int>(bucket >> k) + k - 1;
    uint64_t sub = bucket & ((uint32_t(1) << k) - 1);
    uint64_t lo = ((uint64_t(1) << k) + sub) << (e - k);
    uint64_t width = uint64_t(1) << (e - k);
    return static_cast<double>(lo) + static_cast<double>(width - 1) / 2;
}

void Distribution::widen() {
    if (wide_) return;
    wide_values_.reserve(narrow_.size() + 1);
    wide_values_.assign(narrow_.begin(), narrow_.end());
    narrow_ = {};
    wide_ = true;
}

void Distribution::push_wide(uint64_t v) {
    widen();
    wide_values_.push_back(v);
}

uint32_t Distribution::span_bucket(uint64_t v) {
    uint32_t b = bucket_of(v);
    if (counts_.empty()) {
        first_bucket_ = b;
        counts_.assign(1, 0);
        min_ = max_ = v;
    } else if (b < first_bucket_) {
        counts_.insert(counts_.begin(), first_bucket_ - b, 0);
        first_bucket_ = b;
    } else if (b - first_bucket_ >= counts_.size()) {
        counts_.resize(b - first_bucket_ + 1, 0);
    }
    return b - first_bucket_;
}

void Distribution::to_sketch() {
    if (sketch_) return;
    sketch_ = true;
    if (wide_)
        for (uint64_t v : wide_values_) add_to_sketch(v);
    else
        for (uint32_t v : narrow_) add_to_sketch(v);
    narrow_ = {};
    wide_values_ = {};
    wide_ = false;
}

void Distribution::merge(Distribution&& later) {
    if (later.count_ == 0) return;
    if (count_ == 0) {
        *this = std::move(later);
        later.release();
        return;
    }
    if (!sketch_ && !later.sketch_ && count_ + later.count_ <= kExactLimit) {
        if (later.wide_) widen();
        if (wide_) {
            if (later.wide_) wide_values_.insert(wide_values_.end(), later.wide_values_.begin(), later.wide_values_.end());
            else wide_values_.insert(wide_values_.end(), later.narrow_.begin(), later.narrow_.end());
        } else {
            narrow_.insert(narrow_.end(), later.narrow_.begin(), later.narrow_.end());
        }
        count_ += later.count_;
        later.release();
        return;
    }
    to_sketch();
    later.to_sketch();
    uint32_t last = std::max<uint32_t>(first_bucket_ + static_cast<uint32_t>(counts_.size()),
                                       later.first_bucket_ + static_cast<uint32_t>(later.counts_.size()));
    uint32_t first = std::min(first_bucket_, later.first_bucket_);
    if (first < first_bucket_) counts_.insert(counts_.begin(), first_bucket_ - first, 0);
    counts_.resize(last - first, 0);
    first_bucket_ = first;
    for (size_t i = 0; i < later.counts_.size(); ++i) counts_[later.first_bucket_ - first + i] += later.counts_[i];
    min_ = std::min(min_, later.min_);
    max_ = std::max(max_, later.max_);
    sum_ += later.sum_;
    if (later.squares_overflowed_ || __builtin_add_overflow(sum_squares_, later.sum_squares_, &sum_squares_))
        squares_overflowed_ = true;
    count_ += later.count_;
    later.release();
}

double Distribution::value_at_rank(uint64_t rank) const {
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
        seen += counts_[i];
        if (seen > rank) {
            double v = bucket_value(first_bucket_ + static_cast<uint32_t>(i));
            return std::clamp(v, static_cast<double>(min_), static_cast<double>(max_));
        }
    }
    return static_cast<double>(max_);
}

Stats Distribution::stats() const {
    if (!sketch_) {
        if (wide_) {
            std::vector<uint64_t> v = wide_values_;
            return stats_of(v.data(), v.size(), true);
        }
        std::vector<uint32_t> v = narrow_;
        return stats_of(v.data(), v.size(), true);
    }
    Stats s;
    const uint64_t n = count_;
    s.count = n;
    s.total = sum_ > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(sum_);
    s.min = min_;
    s.max = max_;
    s.mean = static_cast<double>(static_cast<long double>(sum_) / n);
    if (n % 2) {
        s.median = value_at_rank(n / 2);
    } else {
        double lower = value_at_rank(n / 2 - 1), upper = value_at_rank(n / 2);
        s.median = lower + (upper - lower) * 0.5;
    }
    if (n > 1) {
        long double m2;
        if (!squares_overflowed_) {
            // Sum of squared deviations from the integer part q of the mean, exactly (no cancellation):
            // sum (x-q)^2 = Q - n q^2 - 2 q r with S = q n + r; then the mean's fraction r/n is taken off.
            u128 q = sum_ / n, r = sum_ % n;
            u128 around_q = sum_squares_ - q * q * n - 2 * q * r;
            m2 = static_cast<long double>(around_q) - static_cast<long double>(r * r) / n;
        } else {
            long double mean = static_cast<long double>(sum_) / n;
            m2 = 0;
            for (size_t i = 0; i < counts_.size(); ++i) {
                long double d = bucket_value(first_bucket_ + static_cast<uint32_t>(i)) - mean;
                m2 += d * d * counts_[i];
            }
        }
        s.stddev = static_cast<double>(std::sqrt(std::max<long double>(m2, 0) / (n - 1)));
    }
    return s;
}

}  // namespace gprof::report
