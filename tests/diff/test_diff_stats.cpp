#include <catch2/catch.hpp>

#include "diff/diff.h"
#include "diff/stats.h"

using namespace gprof::report;

TEST_CASE("order statistics") {
    CHECK(median_of({3, 1, 2}) == 2);
    CHECK(median_of({4, 1, 2, 3}) == 2.5);
    CHECK(median_of({}) == 0);
    CHECK(percentile_of({1, 2, 3, 4, 5}, 0.9) == Approx(4.6));
    CHECK(stddev_of({2, 4, 4, 4, 5, 5, 7, 9}) == Approx(2.138).epsilon(0.001));
}

TEST_CASE("Mann-Whitney U exact p-values for small samples") {
    // Complete separation, 3 vs 3: one arrangement in C(6,3) = 20.
    MannWhitney r = mann_whitney({1, 2, 3}, {4, 5, 6});
    CHECK(r.exact);
    CHECK(r.u == 9);
    CHECK(r.p_greater == Approx(1.0 / 20));
    CHECK(r.p_less == Approx(1.0));
    CHECK(r.min_p == Approx(1.0 / 20));
    // 5 vs 5: 1 / 252.
    CHECK(mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p_greater == Approx(1.0 / 252));
    // One swap at the boundary: U = 24 of 25, P(U >= 24) = 2/252.
    CHECK(mann_whitney({1, 2, 3, 4, 6}, {5, 7, 8, 9, 10}).p_greater == Approx(2.0 / 252));
    // Interleaved: no evidence either way.
    MannWhitney mixed = mann_whitney({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10});
    CHECK(mixed.p_greater > 0.2);
    // Ties: exact permutation count.
    MannWhitney ties = mann_whitney({1, 1, 1}, {1, 1, 1});
    CHECK(ties.p_greater == Approx(1.0));
    // Large samples use the normal approximation.
    std::vector<double> a, b;
    for (int i = 0; i < 60; ++i) {
        a.push_back(i);
        b.push_back(i + 30);
    }
    MannWhitney big = mann_whitney(a, b);
    CHECK_FALSE(big.exact);
    CHECK(big.p_greater < 1e-4);
}

TEST_CASE("durations parse with units") {
    CHECK(parse_duration_ns("250") == 250);
    CHECK(parse_duration_ns("250ns") == 250);
    CHECK(parse_duration_ns("10us") == 10'000);
    CHECK(parse_duration_ns("1.5ms") == 1'500'000);
    CHECK(parse_duration_ns("2s") == 2'000'000'000);
    CHECK_THROWS_AS(parse_duration_ns("10 parsecs"), std::invalid_argument);
    CHECK_THROWS_AS(parse_duration_ns("ms"), std::invalid_argument);
}
