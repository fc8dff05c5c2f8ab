// Distribution (model/distribution.h): exact while small (the same Stats as compute_stats, to the bit), within the
// stated error once large, and the same result however the values are split and merged back.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "model/distribution.h"

using namespace gprof::report;

namespace {

bool same(const Stats& a, const Stats& b) {
    return a.count == b.count && a.total == b.total && a.min == b.min && a.max == b.max && a.mean == b.mean &&
           a.median == b.median && a.stddev == b.stddev;
}

Stats exact_stats(std::vector<uint64_t> v) { return compute_stats(v); }

Distribution pushed(const std::vector<uint64_t>& v) {
    Distribution d;
    for (uint64_t x : v) d.push(x);
    return d;
}

// The same values pushed into `parts` distributions at random cut points, merged back in order.
Distribution split_and_merged(const std::vector<uint64_t>& v, int parts, std::mt19937_64& rng) {
    std::vector<size_t> cuts = {0, v.size()};
    for (int i = 1; i < parts; ++i) cuts.push_back(rng() % (v.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    Distribution all;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
        Distribution part;
        for (size_t j = cuts[i]; j < cuts[i + 1]; ++j) part.push(v[j]);
        all.merge(std::move(part));
        CHECK(part.empty());
    }
    return all;
}

std::vector<uint64_t> sample(const char* shape, size_t n, std::mt19937_64& rng) {
    std::vector<uint64_t> v(n);
    std::lognormal_distribution<double> lognormal(9.0, 1.5);  // ~8 us, spread over decades
    std::uniform_int_distribution<uint64_t> uniform(1000, 9000);
    for (size_t i = 0; i < n; ++i) {
        std::string s = shape;
        if (s == "lognormal") v[i] = static_cast<uint64_t>(lognormal(rng));
        else if (s == "uniform") v[i] = uniform(rng);
        else if (s == "bimodal") v[i] = i % 3 ? 2000 + rng() % 50 : 5'000'000 + rng() % 100000;
        else if (s == "small") v[i] = rng() % 100;  // every value has a bucket of its own
        else if (s == "wide") v[i] = i % 7 ? 3000 + rng() % 1000 : (uint64_t(1) << 40) + rng() % 1000000;  // > 32 bits
        else v[i] = 4242;  // constant
    }
    return v;
}

}  // namespace

TEST_CASE("distribution: exact up to the limit, the very Stats compute_stats gives", "[model][distribution]") {
    std::mt19937_64 rng(1);
    for (const char* shape : {"lognormal", "uniform", "bimodal", "small", "wide", "constant"}) {
        for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(1000), size_t(Distribution::kExactLimit)}) {
            INFO(shape << " n=" << n);
            auto v = sample(shape, n, rng);
            Distribution d = pushed(v);
            CHECK(d.exact());
            CHECK(same(d.stats(), exact_stats(v)));
            CHECK(same(d.stats(), d.stats()));  // stats() does not disturb the kept values
        }
    }
    CHECK(same(Distribution().stats(), Stats{}));
}

TEST_CASE("distribution: past the limit, exact count/total/min/max/mean, median within 1/256, stddev exact",
          "[model][distribution]") {
    std::mt19937_64 rng(2);
    for (const char* shape : {"lognormal", "uniform", "bimodal", "small", "wide", "constant"}) {
        INFO(shape);
        auto v = sample(shape, 3 * Distribution::kExactLimit + 1, rng);
        Distribution d = pushed(v);
        CHECK_FALSE(d.exact());
        Stats s = d.stats(), e = exact_stats(v);
        CHECK(s.count == e.count);
        CHECK(s.total == e.total);
        CHECK(s.min == e.min);
        CHECK(s.max == e.max);
        CHECK(s.mean == e.mean);
        CHECK(std::abs(s.median - e.median) <= e.median * Distribution::kMedianRelativeError);
        if (std::string(shape) == "small") CHECK(s.median == e.median);  // values below 128 are exact
        CHECK(s.stddev == Approx(e.stddev).epsilon(1e-12).margin(1e-9));
        if (std::string(shape) == "constant") CHECK(s.stddev == 0);
    }
    // Even count: the mean of the two middle values, as the exact median (exact below 128, within 1/256 above).
    std::vector<uint64_t> v(Distribution::kExactLimit + 1, 100);
    v.push_back(500000);
    CHECK(pushed(v).stats().median == 100);
    std::fill(v.begin(), v.end() - 1, 1000);
    CHECK(pushed(v).stats().median == Approx(1000).epsilon(Distribution::kMedianRelativeError));
    v.back() = 1001;  // middle values 1000 and 1001: bucket [1000, 1003] stands for 1001.5
    CHECK(std::abs(pushed(v).stats().median - 1000) <= 1000 * Distribution::kMedianRelativeError);
}

TEST_CASE("distribution: a bucket's value is within 1/256 of every value in it, buckets in value order",
          "[model][distribution]") {
    std::mt19937_64 rng(3);
    std::vector<uint64_t> v = {0, 1, 127, 128, 129, 255, 256, 1000, 65535, 65536, UINT32_MAX, uint64_t(UINT32_MAX) + 1,
                               uint64_t(1) << 63, UINT64_MAX};
    for (int i = 0; i < 100000; ++i) v.push_back(rng() >> (rng() % 64));
    std::sort(v.begin(), v.end());
    for (size_t i = 0; i < v.size(); ++i) {
        INFO(v[i]);
        double b = Distribution::bucket_value(Distribution::bucket_of(v[i]));
        CHECK(std::abs(b - static_cast<double>(v[i])) <= static_cast<double>(v[i]) * Distribution::kMedianRelativeError);
        if (v[i] < 128) CHECK(b == static_cast<double>(v[i]));
        if (i) CHECK(Distribution::bucket_of(v[i - 1]) <= Distribution::bucket_of(v[i]));
    }
}

TEST_CASE("distribution: merged parts give the sequential result to the bit, below and above the limit",
          "[model][distribution]") {
    std::mt19937_64 rng(4);
    for (size_t n : {size_t(10), size_t(5000), size_t(Distribution::kExactLimit), size_t(Distribution::kExactLimit + 1),
                     size_t(2 * Distribution::kExactLimit + 17)}) {
        for (const char* shape : {"lognormal", "wide"}) {
            INFO(shape << " n=" << n);
            auto v = sample(shape, n, rng);
            Stats sequential = pushed(v).stats();
            for (int parts : {2, 3, 8}) {
                Distribution m = split_and_merged(v, parts, rng);
                CHECK(m.count() == n);
                CHECK(m.exact() == (n <= Distribution::kExactLimit));
                CHECK(same(m.stats(), sequential));
            }
        }
    }
}
