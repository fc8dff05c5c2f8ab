#include "diff/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gprof::report {

namespace {

double u_statistic(const std::vector<double>& base, const std::vector<double>& cand) {
    double u = 0;
    for (double c : cand)
        for (double b : base) u += c > b ? 1.0 : (c == b ? 0.5 : 0.0);
    return u;
}

double binomial(size_t n, size_t k) {
    double r = 1;
    for (size_t i = 1; i <= k; ++i) r = r * static_cast<double>(n - k + i) / static_cast<double>(i);
    return r;
}

// counts[u] = number of arrangements of n "cand" and m "base" values (no ties) giving U = u.
std::vector<double> u_distribution(size_t n, size_t m) {
    // f[i][j][u], built by adding the largest element: it is either a cand (adds j to U) or a base (adds 0).
    std::vector<std::vector<std::vector<double>>> f(n + 1, std::vector<std::vector<double>>(m + 1));
    for (size_t i = 0; i <= n; ++i) {
        for (size_t j = 0; j <= m; ++j) {
            f[i][j].assign(i * j + 1, 0.0);
            if (i == 0 || j == 0) {
                f[i][j][0] = 1;
                continue;
            }
            for (size_t u = 0; u <= i * j; ++u) {
                double from_cand = u >= j ? (u - j < f[i - 1][j].size() ? f[i - 1][j][u - j] : 0) : 0;
                double from_base = u < f[i][j - 1].size() ? f[i][j - 1][u] : 0;
                f[i][j][u] = from_cand + from_base;
            }
        }
    }
    return f[n][m];
}

// Exact permutation p-values with ties: enumerate which positions of the pooled sample are "cand".
void exact_with_ties(const std::vector<double>& base, const std::vector<double>& cand, MannWhitney& r) {
    std::vector<double> pool(base);
    pool.insert(pool.end(), cand.begin(), cand.end());
    size_t total = pool.size(), n = cand.size();
    std::vector<int> pick(total, 0);
    std::fill(pick.end() - static_cast<long>(n), pick.end(), 1);
    double ge = 0, le = 0, all = 0;
    std::vector<double> b, c;
    do {
        b.clear();
        c.clear();
        for (size_t i = 0; i < total; ++i) (pick[i] ? c : b).push_back(pool[i]);
        double u = u_statistic(b, c);
        all += 1;
        if (u >= r.u - 1e-9) ge += 1;
        if (u <= r.u + 1e-9) le += 1;
    } while (std::next_permutation(pick.begin(), pick.end()));
    r.p_greater = ge / all;
    r.p_less = le / all;
    r.min_p = 1.0 / all;
}

void normal_approximation(const std::vector<double>& base, const std::vector<double>& cand, MannWhitney& r) {
    double n = static_cast<double>(cand.size()), m = static_cast<double>(base.size());
    std::vector<double> pool(base);
    pool.insert(pool.end(), cand.begin(), cand.end());
    std::sort(pool.begin(), pool.end());
    double tie_term = 0;
    for (size_t i = 0; i < pool.size();) {
        size_t j = i;
        while (j < pool.size() && pool[j] == pool[i]) ++j;
        double t = static_cast<double>(j - i);
        tie_term += t * t * t - t;
        i = j;
    }
    double nm = n + m;
    double var = n * m / 12.0 * ((nm + 1) - tie_term / (nm * (nm - 1)));
    double mu = n * m / 2.0;
    if (var <= 0) {
        r.p_greater = r.p_less = 1;
        return;
    }
    double sd = std::sqrt(var);
    // Continuity correction of 1/2.
    double z_hi = (r.u - mu - 0.5) / sd, z_lo = (r.u - mu + 0.5) / sd;
    r.p_greater = 0.5 * std::erfc(z_hi / std::sqrt(2.0));
    r.p_less = 0.5 * std::erfc(-z_lo / std::sqrt(2.0));
    r.exact = false;
    r.min_p = 0;
}

}  // namespace

MannWhitney mann_whitney(const std::vector<double>& base, const std::vector<double>& cand) {
    MannWhitney r;
    if (base.empty() || cand.empty()) return r;
    r.u = u_statistic(base, cand);
    std::vector<double> pool(base);
    pool.insert(pool.end(), cand.begin(), cand.end());
    std::sort(pool.begin(), pool.end());
    bool ties = std::adjacent_find(pool.begin(), pool.end()) != pool.end();
    size_t n = cand.size(), m = base.size();
    double arrangements = binomial(n + m, n);
    if (!ties && n <= 50 && m <= 50) {
        std::vector<double> dist = u_distribution(n, m);
        double ge = 0, le = 0;
        for (size_t u = 0; u < dist.size(); ++u) {
            if (static_cast<double>(u) >= r.u) ge += dist[u];
            if (static_cast<double>(u) <= r.u) le += dist[u];
        }
        r.p_greater = ge / arrangements;
        r.p_less = le / arrangements;
        r.min_p = 1.0 / arrangements;
    } else if (ties && arrangements <= 20000) {
        exact_with_ties(base, cand, r);
    } else {
        normal_approximation(base, cand, r);
    }
    return r;
}

}  // namespace gprof::report
