// The decision of `diff`: per key, the change of the chosen metric between the sides, the thresholds, and with
// several runs per side an exact one-sided Mann-Whitney U test over the per-run values, so run-to-run noise
// alone does not fail a build.
#include <algorithm>
#include <cmath>
#include <set>

#include "diff/diff.h"
#include "diff/stats.h"

namespace gprof::report {

const char* diff_status_name(DiffStatus s) {
    switch (s) {
        case DiffStatus::Regression: return "regression";
        case DiffStatus::Improvement: return "improvement";
        case DiffStatus::NotSignificant: return "not_significant";
        case DiffStatus::Unchanged: return "unchanged";
        case DiffStatus::New: return "new";
        case DiffStatus::Vanished: return "vanished";
    }
    return "unchanged";
}

std::string diff_status_text(const DiffKey& k) {
    switch (k.status) {
        case DiffStatus::Regression: return k.fails ? "REGRESSION" : "regression (not gated)";
        case DiffStatus::Improvement: return "improvement";
        case DiffStatus::NotSignificant: return "noise?";
        case DiffStatus::Unchanged: return "unchanged";
        case DiffStatus::New: return "new";
        case DiffStatus::Vanished: return "vanished";
    }
    return "";
}

double diff_metric_value(const DiffSide& s, DiffMetric m) {
    switch (m) {
        case DiffMetric::Total: return s.total;
        case DiffMetric::Mean: return s.mean;
        case DiffMetric::Median: return s.median;
    }
    return s.total;
}

size_t DiffResult::failures() const {
    return static_cast<size_t>(std::count_if(keys.begin(), keys.end(), [](const DiffKey& k) { return k.fails; }));
}

namespace {

// Below this many runs per side the exact test cannot reach alpha = 0.05 (1 / C(4, 2) = 0.17).
constexpr size_t kMinRunsForTest = 3;

DiffSide summarise(const std::vector<RunFigures>& runs, const std::string& key, DiffMetric metric) {
    DiffSide s;
    std::vector<double> counts, totals, means, medians;
    for (const RunFigures& r : runs) {
        auto it = r.instances.find(key);
        if (it == r.instances.end() || it->second.empty()) {
            counts.push_back(0);
            totals.push_back(0);
            if (metric == DiffMetric::Total) s.samples.push_back(0);
            continue;
        }
        ++s.runs_present;
        std::vector<double> d(it->second.begin(), it->second.end());
        double total = 0;
        for (double x : d) total += x;
        counts.push_back(static_cast<double>(d.size()));
        totals.push_back(total);
        means.push_back(total / static_cast<double>(d.size()));
        medians.push_back(median_of(d));
        switch (metric) {
            case DiffMetric::Total: s.samples.push_back(total); break;
            case DiffMetric::Mean: s.samples.push_back(means.back()); break;
            case DiffMetric::Median: s.samples.push_back(medians.back()); break;
        }
    }
    s.count = median_of(counts);
    s.total = median_of(totals);
    s.mean = median_of(means);
    s.median = median_of(medians);
    return s;
}

int rank(const DiffKey& k) {
    if (k.fails) return 0;
    switch (k.status) {
        case DiffStatus::Regression: return 1;
        case DiffStatus::New: return 2;
        case DiffStatus::Vanished: return 3;
        case DiffStatus::NotSignificant: return 4;
        case DiffStatus::Improvement: return 5;
        case DiffStatus::Unchanged: return 6;
    }
    return 6;
}

}  // namespace

DiffResult compare_runs(const std::vector<RunFigures>& base, const std::vector<RunFigures>& cand,
                        const Thresholds& th) {
    DiffResult r;
    r.thresholds = th;
    for (const auto& f : base) r.base_labels.push_back(f.label);
    for (const auto& f : cand) r.new_labels.push_back(f.label);
    size_t nmin = std::min(base.size(), cand.size());
    r.noise_protected = nmin >= kMinRunsForTest;
    r.test = r.noise_protected ? "mann-whitney-u" : "none";
    if (r.noise_protected) {
        r.protection_note = "each key is tested with an exact one-sided Mann-Whitney U test over the per-run values (" +
                            std::to_string(base.size()) + " vs " + std::to_string(cand.size()) +
                            " runs) against the threshold itself: a key fails only when it is slower than the baseline by more "
                            "than the threshold with confidence >= " + std::to_string(100.0 * (1.0 - th.alpha)).substr(0, 4) +
                            "% and beyond --min-delta";
    } else if (nmin == 1) {
        r.protection_note = "one run per side: the verdict is unprotected against run-to-run noise; profile each "
                            "side 3 or more times (5 recommended) for a statistically tested verdict";
    } else {
        r.protection_note = "fewer than 3 runs on a side: the test cannot reach significance, plain thresholds are "
                            "applied and the verdict is unprotected against noise; use 3 or more runs per side";
    }

    std::set<std::string> keys;
    for (const auto* side : {&base, &cand})
        for (const RunFigures& f : *side)
            for (const auto& [k, v] : f.instances) keys.insert(k);

    for (const std::string& key : keys) {
        KeyThreshold kt = threshold_for(th, key);
        if (kt.ignore) continue;
        DiffKey d;
        d.key = key;
        auto colon = key.find(':');
        d.kind = colon == std::string::npos ? key : key.substr(0, colon);
        d.name = colon == std::string::npos ? key : key.substr(colon + 1);
        d.threshold = kt;
        d.base = summarise(base, key, th.metric);
        d.cand = summarise(cand, key, th.metric);
        double b = diff_metric_value(d.base, th.metric), c = diff_metric_value(d.cand, th.metric);
        d.delta_ns = c - b;
        if (d.base.runs_present == 0) {
            d.status = DiffStatus::New;
        } else if (d.cand.runs_present == 0) {
            d.status = DiffStatus::Vanished;
        } else {
            if (b > 0) d.change_pct = d.delta_ns / b * 100.0;
            bool up = d.change_pct ? *d.change_pct > kt.fail_above_pct : d.delta_ns > 0;
            bool down = d.change_pct ? *d.change_pct < -kt.fail_above_pct : false;
            up = up && d.delta_ns >= static_cast<double>(kt.min_delta_ns);
            down = down && -d.delta_ns >= static_cast<double>(kt.min_delta_ns);
            bool tested = r.noise_protected && d.base.samples.size() >= kMinRunsForTest &&
                          d.cand.samples.size() >= kMinRunsForTest;
            if (tested) {
                // Test against the threshold, not against "no change": H0 is "new <= base * (1 + fail_above)"
                // (for a slowdown), so noise that merely crosses the threshold now and then cannot fail a build,
                // and the confidence reads "slower by more than the threshold".
                double f = kt.fail_above_pct / 100.0;
                std::vector<double> shifted;
                for (double x : d.base.samples) shifted.push_back(x * (d.delta_ns >= 0 ? 1.0 + f : 1.0 - f));
                MannWhitney mw = mann_whitney(shifted, d.cand.samples);
                d.p_value = d.delta_ns >= 0 ? mw.p_greater : mw.p_less;
                d.confidence = 1.0 - *d.p_value;
                bool significant = *d.p_value <= th.alpha;
                if (up) d.status = significant ? DiffStatus::Regression : DiffStatus::NotSignificant;
                else if (down) d.status = significant ? DiffStatus::Improvement : DiffStatus::NotSignificant;
            } else {
                if (up) d.status = DiffStatus::Regression;
                else if (down) d.status = DiffStatus::Improvement;
            }
        }
        d.fails = d.status == DiffStatus::Regression && kt.gate;
        r.keys.push_back(std::move(d));
    }
    std::stable_sort(r.keys.begin(), r.keys.end(), [](const DiffKey& a, const DiffKey& b) {
        int ra = rank(a), rb = rank(b);
        if (ra != rb) return ra < rb;
        // Whole-run figures summarise the other keys: name the specific key first.
        bool wa = a.kind == "run", wb = b.kind == "run";
        if (wa != wb) return wb;
        double da = std::abs(a.delta_ns), db = std::abs(b.delta_ns);
        if (da != db) return da > db;
        return a.key < b.key;
    });
    for (const auto* side : {&base, &cand})
        for (const RunFigures& f : *side)
            for (const auto& w : f.warnings) r.warnings.push_back(f.label + ": " + w);
    return r;
}

}  // namespace gprof::report
