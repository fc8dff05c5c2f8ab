#include "output/suggest.h"

#include <algorithm>
#include <cctype>

namespace gprof::report {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Levenshtein with adjacent transpositions: "cuad" -> "cuda" is one edit).
size_t edit_distance(std::string_view a, std::string_view b) {
    const size_t n = a.size(), m = b.size();
    std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
    for (size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (size_t i = 1; i <= n; ++i)
        for (size_t j = 1; j <= m; ++j) {
            size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

}  // namespace

std::string closest_name(std::string_view typed, const std::vector<std::string>& known) {
    if (typed.empty() || typed.size() > 200) return {};
    const size_t allowed = typed.size() <= 4 ? 1 : typed.size() <= 8 ? 2 : 3;
    std::string best;
    size_t best_distance = allowed + 1;
    for (const auto& name : known) {
        size_t d = edit_distance(typed, name);
        if (d < best_distance) {
            best_distance = d;
            best = name;
        }
    }
    if (!best.empty()) return best;
    // A prefix of one name only ("cuda_gpu_k" -> cuda_gpu_kern_sum).
    std::string only;
    for (const auto& name : known) {
        if (name.size() <= typed.size() || name.compare(0, typed.size(), typed) != 0) continue;
        if (!only.empty()) return {};
        only = name;
    }
    return typed.size() >= 3 ? only : std::string();
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
    std::string name = closest_name(typed, known);
    return name.empty() ? std::string() : "; did you mean '" + name + "'?";
}

}  // namespace gprof::report
