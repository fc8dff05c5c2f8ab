// Statistics for few samples: the exact Mann-Whitney U test. `diff` decides with it when each side has several
// runs. The order statistics (median_of, percentile_of, ...) are model/stats.h's, shared with every layer.
#pragma once

#include <cstdint>
#include <vector>

#include "model/stats.h"

namespace gprof::report {

struct MannWhitney {
    double u = 0;          // pairs (new_i, base_j) with new_i > base_j, ties counted 1/2
    double p_greater = 1;  // one-sided p-value of "new is stochastically larger than base"
    double p_less = 1;     // one-sided p-value of "new is stochastically smaller than base"
    bool exact = true;     // false: normal approximation (large samples, or ties with many arrangements)
    double min_p = 0;      // the smallest p-value these sample sizes can ever give (1 / C(n+m, n) when exact)
};

// Exact distribution of U for small samples without ties (dynamic programming over (n, m, u)); with ties, an
// exact permutation count when the arrangements are few, else the tie-corrected normal approximation.
MannWhitney mann_whitney(const std::vector<double>& base, const std::vector<double>& cand);

}  // namespace gprof::report
