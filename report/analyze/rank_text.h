// The few words the ranks view is written in, shared by its verdict (rank_view.cpp) and its tables (rank_render.cpp).
#pragma once

#include <cmath>
#include <string>

#include "analyze/ranks.h"
#include "output/table.h"

namespace gprof::report {

// "+29 %", "-3.1 %": one decimal below 10 %.
inline std::string pct_text(double pct) {
    std::string s = format_fixed(std::abs(pct), std::abs(pct) < 10 ? 1 : 0);
    return (pct < 0 ? "-" : "+") + s + " %";
}

// "rank 3", or the whole label of a process without a rank.
inline std::string rank_short_name(const RankFigures& f) {
    return f.rank >= 0 ? "rank " + std::to_string(f.rank) : f.label;
}

inline std::string plural_steps(size_t n) { return std::to_string(n) + (n == 1 ? " step" : " steps"); }

}  // namespace gprof::report
