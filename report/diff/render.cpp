// Renderings of a DiffResult: the console table (regressions first, colour only when asked), markdown for a
// pull-request comment, and the JSON of docs/diff-schema.md.
#include <cmath>
#include <sstream>

#include "diff/diff.h"
#include "output/table.h"
#include "output/text.h"

namespace gprof::report {

namespace {

std::string t(double ns) { return format_time_auto(ns); }

std::string signed_time(double ns) { return (ns >= 0 ? "+" : "-") + format_time_auto(std::abs(ns)); }

std::string change_text(const DiffKey& k) {
    if (k.status == DiffStatus::New) return "new";
    if (k.status == DiffStatus::Vanished) return "vanished";
    if (!k.change_pct) return "n/a";
    return (*k.change_pct >= 0 ? "+" : "") + format_fixed(*k.change_pct, 1) + "%";
}

std::string confidence_text(const DiffKey& k) {
    if (!k.confidence) return "-";
    return format_fixed(100.0 * *k.confidence, 1) + "%";
}

std::string count_text(double c) { return std::floor(c) == c ? std::to_string(static_cast<int64_t>(c)) : format_fixed(c, 1); }

bool listed(const DiffKey& k, const DiffRenderOptions& o) { return o.show_unchanged || k.status != DiffStatus::Unchanged; }

std::string header_line(const DiffResult& r) {
    std::ostringstream h;
    h << r.base_labels.size() << " base run" << (r.base_labels.size() == 1 ? "" : "s") << " vs " << r.new_labels.size()
      << " new run" << (r.new_labels.size() == 1 ? "" : "s") << "; metric " << diff_metric_name(r.thresholds.metric)
      << "; fail above " << format_fixed(r.thresholds.fail_above_pct, 1) << "% and "
      << t(static_cast<double>(r.thresholds.min_delta_ns));
    return h.str();
}

std::string verdict_line(const DiffResult& r) {
    size_t f = r.failures();
    if (f == 0) return "No regression beyond the thresholds.";
    return std::to_string(f) + " regression" + (f == 1 ? "" : "s") + " beyond the thresholds.";
}

}  // namespace

void render_diff_table(const DiffResult& r, const DiffRenderOptions& o, std::ostream& out) {
    const char* red = o.colour ? "\033[31;1m" : "";
    const char* green = o.colour ? "\033[32m" : "";
    const char* yellow = o.colour ? "\033[33m" : "";
    const char* reset = o.colour ? "\033[0m" : "";
    out << "gprof-report diff: " << header_line(r) << "\n";
    out << "noise: " << r.protection_note << "\n\n";
    std::string m = diff_metric_name(r.thresholds.metric);
    std::vector<std::vector<std::string>> rows;
    std::vector<const DiffKey*> keys;
    rows.push_back({"Status", "Key", "Count", "Base " + m, "New " + m, "Change", "Delta", "Confidence"});
    size_t hidden = 0;
    for (const DiffKey& k : r.keys) {
        if (!listed(k, o)) continue;
        if (rows.size() > o.max_rows) {
            ++hidden;
            continue;
        }
        rows.push_back({diff_status_text(k), shorten_name(printable_line(k.key), o.name_width), count_text(k.base.count) + " -> " + count_text(k.cand.count),
                        k.base.runs_present ? t(diff_metric_value(k.base, r.thresholds.metric)) : "-",
                        k.cand.runs_present ? t(diff_metric_value(k.cand, r.thresholds.metric)) : "-", change_text(k),
                        signed_time(k.delta_ns), confidence_text(k)});
        keys.push_back(&k);
    }
    // Widths in characters (code points): keys are valid UTF-8 by now.
    auto chars = [](const std::string& s) {
        size_t n = 0;
        for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        return n;
    };
    std::vector<size_t> width(rows[0].size(), 0);
    for (auto& row : rows)
        for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], chars(row[i]));
    for (size_t ri = 0; ri < rows.size(); ++ri) {
        const char* colour = "";
        if (ri > 0) {
            const DiffKey& k = *keys[ri - 1];
            if (k.fails) colour = red;
            else if (k.status == DiffStatus::Improvement) colour = green;
            else if (k.status != DiffStatus::Unchanged) colour = yellow;
        }
        out << colour;
        for (size_t i = 0; i < rows[ri].size(); ++i) {
            const std::string& cell = rows[ri][i];
            bool left = i < 2;
            std::string pad(width[i] - chars(cell), ' ');
            out << (i ? "  " : "") << (left ? cell + pad : pad + cell);
        }
        out << (*colour ? reset : "") << "\n";
    }
    if (rows.size() == 1) out << "(no key changed beyond the thresholds)\n";
    if (hidden) out << "... " << hidden << " more changed key(s); --format json lists all\n";
    for (const auto& w : r.warnings) out << "warning: " << printable_line(w) << "\n";
    out << "\n" << verdict_line(r) << "\n";
}

void render_diff_markdown(const DiffResult& r, const DiffRenderOptions& o, std::ostream& out) {
    size_t f = r.failures();
    out << "### gprof-run performance diff: " << (f ? ":x: " : ":white_check_mark: ") << verdict_line(r) << "\n\n";
    out << header_line(r) << ".  \n" << "Noise: " << r.protection_note << ".\n\n";
    out << "| Status | Key | Count | Base total | New total | Base mean | New mean | Base median | New median | Change | Delta | Confidence |\n"
        << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    size_t rows = 0, hidden = 0;
    for (const DiffKey& k : r.keys) {
        if (!listed(k, o)) continue;
        if (rows++ >= o.max_rows) {
            ++hidden;
            continue;
        }
        std::string esc = markdown_cell(shorten_name(printable_line(k.key), o.name_width));
        auto side = [&](const DiffSide& s, double v) { return s.runs_present ? t(v) : std::string("-"); };
        out << "| " << (k.fails ? "**" + diff_status_text(k) + "**" : diff_status_text(k)) << " | " << esc << " | "
            << count_text(k.base.count) << " → " << count_text(k.cand.count) << " | " << side(k.base, k.base.total)
            << " | " << side(k.cand, k.cand.total) << " | " << side(k.base, k.base.mean) << " | "
            << side(k.cand, k.cand.mean) << " | " << side(k.base, k.base.median) << " | " << side(k.cand, k.cand.median)
            << " | " << change_text(k) << " | " << signed_time(k.delta_ns) << " | " << confidence_text(k) << " |\n";
    }
    if (rows == 0) out << "| unchanged | (every key within the thresholds) | | | | | | | | | | |\n";
    if (hidden) out << "\n" << hidden << " more changed key(s) not shown (see the JSON artifact).\n";
    if (!r.warnings.empty()) {
        out << "\n<details><summary>Warnings</summary>\n\n";
        for (const auto& w : r.warnings) out << "- " << markdown_cell(w) << "\n";
        out << "\n</details>\n";
    }
}

nlohmann::json diff_to_json(const DiffResult& r) {
    using nlohmann::json;
    json j;
    j["schema"] = "gprof-diff";
    j["schema_version"] = kDiffSchemaVersion;
    j["base"] = {{"runs", r.base_labels.size()}, {"inputs", r.base_labels}};
    j["new"] = {{"runs", r.new_labels.size()}, {"inputs", r.new_labels}};
    j["thresholds"] = {{"metric", diff_metric_name(r.thresholds.metric)},
                       {"fail_above_pct", r.thresholds.fail_above_pct},
                       {"min_delta_ns", r.thresholds.min_delta_ns},
                       {"alpha", r.thresholds.alpha}};
    j["noise"] = {{"protected", r.noise_protected}, {"test", r.test}, {"note", r.protection_note}};
    j["verdict"] = {{"regressions", r.failures()}, {"exit_code", r.exit_code()}};
    auto side = [](const DiffSide& s) {
        return json{{"runs_present", s.runs_present}, {"count", s.count}, {"total_ns", s.total},
                    {"mean_ns", s.mean}, {"median_ns", s.median}, {"samples_ns", s.samples}};
    };
    j["keys"] = json::array();
    for (const DiffKey& k : r.keys) {
        j["keys"].push_back({{"key", k.key},
                             {"kind", k.kind},
                             {"name", k.name},
                             {"status", diff_status_name(k.status)},
                             {"fails", k.fails},
                             {"gated", k.threshold.gate},
                             {"base", side(k.base)},
                             {"new", side(k.cand)},
                             {"change_pct", k.change_pct ? json(*k.change_pct) : json(nullptr)},
                             {"delta_ns", k.delta_ns},
                             {"p_value", k.p_value ? json(*k.p_value) : json(nullptr)},
                             {"confidence", k.confidence ? json(*k.confidence) : json(nullptr)},
                             {"threshold", {{"fail_above_pct", k.threshold.fail_above_pct},
                                            {"min_delta_ns", k.threshold.min_delta_ns},
                                            {"rule", k.threshold.rule}}}});
    }
    j["warnings"] = r.warnings;
    return j;
}

}  // namespace gprof::report
