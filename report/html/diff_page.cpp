// `gprof-report diff --format html`: the CI view of a comparison, one file to attach to a pull request. The verdict
// first, then every key in the order of the diff (failing regressions, other regressions, new, vanished,
// improvements, the rest), each with bars of base and new on one scale and the line the new value had to cross to
// fail. Unchanged keys are folded away unless asked for.
#include <algorithm>
#include <cmath>

#include "gprof/version.h"
#include "html/escape.h"
#include "html/html.h"
#include "html/page.h"
#include "html/svg.h"
#include "output/table.h"

namespace gprof::report::html {

namespace {

constexpr size_t kMaxRows = 2000;  // keys listed at most (a run has as many as it has kernel names)

std::string T(double ns) { return escape(format_time_auto(ns)); }

std::string status_key(const DiffKey& k) { return k.fails ? "fail" : diff_status_name(k.status); }

// The value the new side had to exceed for the key to fail: both the relative and the absolute threshold.
double fail_line(const DiffKey& k, double base) {
    return std::max(base * (1 + k.threshold.fail_above_pct / 100.0), base + static_cast<double>(k.threshold.min_delta_ns));
}

std::string bars(const DiffKey& k, DiffMetric m) {
    double b = diff_metric_value(k.base, m), n = diff_metric_value(k.cand, m);
    bool has_line = k.threshold.gate && b > 0;
    double line = has_line ? fail_line(k, b) : 0;
    double top = std::max({b, n, line, 1.0});
    auto w = [&](double v) { return 100.0 * v / top; };
    std::string cls = k.fails ? "share bad" : k.status == DiffStatus::Improvement ? "share good" : "share new";
    std::string threshold;
    if (has_line)
        threshold = "<span class=\"threshold\" style=\"left:" + trim_number(w(line), 2) + "%\" title=\"" +
                    escape("fails above " + format_time_auto(line) + " (+" + format_fixed(k.threshold.fail_above_pct, 1) +
                           "% and at least +" + format_time_auto(static_cast<double>(k.threshold.min_delta_ns)) + ")") +
                    "\"></span>";
    return "<div class=\"diffbars\"><div style=\"position:relative\">" + share_bar(w(b), "base " + T(b)) +
           "</div><div style=\"position:relative\">" + share_bar(w(n), "new " + T(n), cls) + threshold + "</div></div>";
}

std::string key_table(const std::vector<const DiffKey*>& keys, DiffMetric m) {
    SortableTable t;
    t.column("Status", SortableTable::Sort::Text)
        .column("Key", SortableTable::Sort::Text, "kind:name (docs/diff-schema.md)")
        .column("Base vs new", SortableTable::Sort::None)
        .column("Change", SortableTable::Sort::Number, "(new - base) / base on the metric")
        .column("Delta")
        .column("Count base \xE2\x86\x92 new", SortableTable::Sort::Number)
        .column("Confidence", SortableTable::Sort::Number, "1 - p of the one-sided Mann-Whitney U test (3+ runs a side)")
        .column("Threshold", SortableTable::Sort::Text);
    size_t order = 0;
    for (const DiffKey* k : keys) {
        std::string change = k->status == DiffStatus::New        ? "new"
                             : k->status == DiffStatus::Vanished ? "vanished"
                             : k->change_pct ? (*k->change_pct >= 0 ? "+" : "") + format_fixed(*k->change_pct, 1) + "%"
                                             : "n/a";
        double change_v = k->change_pct ? *k->change_pct : k->status == DiffStatus::New ? 1e9 : -1e9;
        std::string rule = "+" + format_fixed(k->threshold.fail_above_pct, 1) + "%, " +
                           format_time_auto(static_cast<double>(k->threshold.min_delta_ns));
        if (!k->threshold.gate) rule += ", not gated";
        if (!k->threshold.rule.empty()) rule += " (rule " + k->threshold.rule + ")";
        auto cnt = [](double c) { return std::floor(c) == c ? std::to_string(static_cast<int64_t>(c)) : format_fixed(c, 1); };
        t.row()
            .cell("<span class=\"status " + status_key(*k) + "\" data-order=\"" + std::to_string(order++) + "\">" +
                  escape(diff_status_text(*k)) + "</span>")
            .cell(name_cell(k->key, {}, 70))
            .cell(bars(*k, m))
            .num(escape(change), change_v)
            .num((k->delta_ns >= 0 ? "+" : "-") + T(std::abs(k->delta_ns)), k->delta_ns)
            .num(escape(cnt(k->base.count) + " \xE2\x86\x92 " + cnt(k->cand.count)), k->cand.count - k->base.count)
            .num(k->confidence ? escape(format_fixed(100 * *k->confidence, 1) + "%") : "\xE2\x80\x94",
                 k->confidence ? *k->confidence : -1)
            .cell(escape(rule));
    }
    return t.html();
}

}  // namespace

std::string render_diff_page(const DiffResult& r, bool show_unchanged) {
    std::string body = "<header class=\"top\"><div class=\"meta\">gprof-report diff</div><h1>";
    auto labels = [](const std::vector<std::string>& v) {
        std::string s;
        for (size_t i = 0; i < v.size() && i < 4; ++i) s += (i ? ", " : "") + v[i];
        if (v.size() > 4) s += ", \xE2\x80\xA6 (" + std::to_string(v.size()) + " runs)";
        return s;
    };
    body += escape(labels(r.base_labels)) + " \xE2\x86\x92 " + escape(labels(r.new_labels)) + "</h1><div class=\"meta\">" +
            std::to_string(r.base_labels.size()) + " base run" + (r.base_labels.size() == 1 ? "" : "s") + " vs " +
            std::to_string(r.new_labels.size()) + " new run" + (r.new_labels.size() == 1 ? "" : "s") + "; metric " +
            diff_metric_name(r.thresholds.metric) + "; a key fails above +" + format_fixed(r.thresholds.fail_above_pct, 1) +
            "% and " + T(static_cast<double>(r.thresholds.min_delta_ns)) + " slower</div></header>\n";

    if (!r.warnings.empty()) {
        body += "<div class=\"alert\" role=\"alert\"><h2>Warnings</h2><ul>";
        for (const auto& w : r.warnings) body += "<li>" + escape(w) + "</li>";
        body += "</ul></div>";
    }
    size_t fails = r.failures();
    size_t counts[6] = {};
    for (const DiffKey& k : r.keys) ++counts[static_cast<size_t>(k.status)];
    std::string verdict_class = fails ? "cpu_launch_bound" : "gpu_bound";
    body += "<div class=\"verdict " + verdict_class + "\" id=\"verdict\"><div><div class=\"title\">" +
            (fails ? std::to_string(fails) + (fails == 1 ? " regression fails" : " regressions fail") + " the thresholds"
                   : std::string("No regression beyond the thresholds")) +
            "</div><div class=\"why\">" + escape(r.protection_note) + " (exit status " + std::to_string(r.exit_code()) +
            ")</div></div></div><div class=\"cards\">";
    body += card(std::to_string(fails), "failing", "Regressions beyond the thresholds on gated keys", fails ? "bad" : "good");
    body += card(std::to_string(counts[static_cast<size_t>(DiffStatus::Regression)]), "regressions");
    body += card(std::to_string(counts[static_cast<size_t>(DiffStatus::Improvement)]), "improvements", "", "good");
    body += card(std::to_string(counts[static_cast<size_t>(DiffStatus::New)]), "new keys");
    body += card(std::to_string(counts[static_cast<size_t>(DiffStatus::Vanished)]), "vanished keys");
    body += card(std::to_string(counts[static_cast<size_t>(DiffStatus::NotSignificant)]), "within noise");
    body += card(std::to_string(counts[static_cast<size_t>(DiffStatus::Unchanged)]), "unchanged");
    body += "</div>";

    std::vector<const DiffKey*> shown, unchanged;
    for (const DiffKey& k : r.keys) {
        if (k.threshold.ignore) continue;
        (k.status == DiffStatus::Unchanged && !show_unchanged ? unchanged : shown).push_back(&k);
    }
    size_t cut = 0;
    if (shown.size() > kMaxRows) cut = shown.size() - kMaxRows, shown.resize(kMaxRows);
    std::string keys_html = shown.empty() ? "<p>No key changed.</p>" : key_table(shown, r.thresholds.metric);
    if (cut) keys_html += "<p class=\"note\">" + std::to_string(cut) + " more keys left out; the JSON form lists every one.</p>";
    body += section("keys", "Every key that changed",
                    "Regressions first. Bars: base and new on one scale (" +
                        std::string(diff_metric_name(r.thresholds.metric)) +
                        " time); the dashed line is where new would fail.",
                    keys_html);
    if (!unchanged.empty()) {
        if (unchanged.size() > kMaxRows) unchanged.resize(kMaxRows);
        body += "<details><summary>" + std::to_string(unchanged.size()) + " unchanged keys</summary>" +
                key_table(unchanged, r.thresholds.metric) + "</details>";
    }
    std::string runs = "<h3>Base</h3><ul>";
    for (const auto& l : r.base_labels) runs += "<li class=\"mono\">" + escape(l) + "</li>";
    runs += "</ul><h3>New</h3><ul>";
    for (const auto& l : r.new_labels) runs += "<li class=\"mono\">" + escape(l) + "</li>";
    runs += "</ul>";
    body += section("runs", "Runs compared", "", runs);
    body += "<footer>Made by gprof-report " GPROF_VERSION " diff. docs/ci.md explains the thresholds and the test; "
            "<code>--format json</code> gives the same result to a script.</footer>\n";
    return document("gprof-report diff: " + (fails ? std::to_string(fails) + " failing" : std::string("no regression")),
                    body);
}

}  // namespace gprof::report::html
