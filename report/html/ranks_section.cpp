// report.html's ranks section (issue 31): a distributed job's ranks compared. The straggler verdict, every rank's
// median work per step as a sorted bar chart (at most kWorkBars bars: above, each bar stands for an equal share of
// the ranks), a step x rank heat map of each rank's work against the step's median (at most kHeatRows x kHeatColumns
// cells: above, a cell is the largest of the ranks and steps it stands for, so a straggler never averages away),
// and the ranks that stand out with their hosts.
#include "html/ranks_section.h"

#include <algorithm>
#include <cmath>

#include "analyze/rank_text.h"
#include "html/escape.h"
#include "html/page.h"
#include "html/svg.h"

namespace gprof::report::html {

namespace {

constexpr size_t kWorkBars = 200;
constexpr size_t kHeatRows = 128;     // heat map: ranks
constexpr size_t kHeatColumns = 200;  // heat map: steps

std::string time_text(double ns) { return escape(format_time_auto(ns)); }

// Every rank's median work per step, largest first; above kWorkBars, each bar is the largest of its share.
std::string work_chart(const RankView& v) {
    std::vector<size_t> order;
    for (size_t r = 0; r < v.ranks.size(); ++r)
        if (v.lines[r].steps) order.push_back(r);
    if (order.empty()) return {};
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return v.lines[a].median_work_ns != v.lines[b].median_work_ns ? v.lines[a].median_work_ns > v.lines[b].median_work_ns
                                                                        : a < b;
    });
    std::vector<bool> slow(v.ranks.size(), false);
    for (size_t r : v.stragglers) slow[r] = true;
    BarChart c;
    c.aria_label = "median work per step of each rank, largest first";
    const size_t bars = std::min(order.size(), kWorkBars);
    for (size_t b = 0; b < bars; ++b) {
        size_t lo = b * order.size() / bars, hi = (b + 1) * order.size() / bars;
        const size_t top = order[lo];  // the largest of the share
        Bar bar;
        bar.value = v.lines[top].median_work_ns;
        std::string who = escape(rank_short_name(v.ranks[top])) +
                          (hi - lo > 1 ? " and " + std::to_string(hi - lo - 1) + " more" : std::string());
        bar.tip = who + ": " + time_text(bar.value) + " of work per step (" + escape(pct_text(v.lines[top].over_median_pct)) +
                  " on the median rank)" + (slow[top] ? ", a straggler" : "");
        if (slow[top]) bar.inner = bar.value;  // drawn in the darker colour
        c.bars.push_back(std::move(bar));
    }
    double max = v.lines[order.front()].median_work_ns;
    c.y = time_axis(max > 0 ? max : 1);
    c.lines.push_back({v.outliers.reference, "median rank " + time_text(v.outliers.reference), "ref"});
    c.x_first = escape(rank_short_name(v.ranks[order.front()]));
    c.x_last = escape(rank_short_name(v.ranks[order.back()]));
    c.x_title = bars < order.size() ? std::to_string(order.size()) + " ranks, largest first (a bar per " +
                                          std::to_string((order.size() + bars - 1) / bars) + " ranks: the largest)"
                                    : std::to_string(order.size()) + " ranks, largest first";
    return bar_chart(c);
}

// Rows: ranks in rank order; columns: steps; a cell's shade: the rank's work in that step over the step's median
// (1.0 clear, 1.5 and more full). A cell standing for several ranks or steps shows the largest of them.
std::string heat_map(const RankView& v) {
    std::vector<size_t> rows_of;
    for (size_t r = 0; r < v.ranks.size(); ++r)
        if (v.lines[r].steps) rows_of.push_back(r);
    const size_t steps = v.steps.size();
    if (rows_of.empty() || steps == 0) return {};
    // Whole runs compared (no steps): one column, the rank's run.
    const bool whole = v.step_source == "whole run";
    const size_t rows = std::min(rows_of.size(), kHeatRows), cols = std::min(steps, kHeatColumns);
    std::vector<double> cell(rows * cols, 0.0);
    for (size_t k = 0; k < rows_of.size(); ++k) {
        const size_t r = rows_of[k], row = k * rows / rows_of.size();
        const RankFigures& f = v.ranks[r];
        for (size_t i = 0; i < steps; ++i) {
            double work = whole ? double(f.last_ns - f.first_ns - f.nccl_ns)
                                : (i < f.steps.size() ? double(f.steps[i].work_ns()) : 0.0);
            double med = v.steps[i].median_work_ns;
            double ratio = med > 0 ? work / med : 1.0;
            double& c = cell[row * cols + i * cols / steps];
            c = std::max(c, ratio);
        }
    }
    const int cw = std::max(2, 800 / int(cols)), ch = std::max(3, std::min(14, 480 / int(rows)));
    const int left = 70, top = 8, width = left + cw * int(cols) + 10, height = top + ch * int(rows) + 34;
    std::string s = "<svg class=\"chart heat\" role=\"img\" aria-label=\"work of each rank in each step against the "
                    "step's median\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
                    "\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) + "\">";
    std::vector<bool> slow(v.ranks.size(), false);
    for (size_t r : v.stragglers) slow[r] = true;
    for (size_t row = 0; row < rows; ++row) {
        size_t lo = row * rows_of.size() / rows, hi = (row + 1) * rows_of.size() / rows;
        bool any_slow = false;
        for (size_t k = lo; k < hi; ++k) any_slow = any_slow || slow[rows_of[k]];
        const RankFigures& first = v.ranks[rows_of[lo]];
        std::string who = escape(hi - lo > 1 ? rank_short_name(first) + " to " + rank_short_name(v.ranks[rows_of[hi - 1]])
                                             : first.label);
        s += "<g class=\"heat-row" + std::string(any_slow ? " slow" : "") + "\"><title>" + who +
             (any_slow ? " (a straggler among them)" : "") + "</title>";
        for (size_t c = 0; c < cols; ++c) {
            double ratio = cell[row * cols + c];
            // 1.0 (the median) clear, 1.5 and more full; below the median clear too: only the slow stand out.
            double shade = std::clamp((ratio - 1.0) / 0.5, 0.0, 1.0);
            if (shade < 0.02) continue;
            s += "<rect x=\"" + std::to_string(left + int(c) * cw) + "\" y=\"" + std::to_string(top + int(row) * ch) +
                 "\" width=\"" + std::to_string(cw) + "\" height=\"" + std::to_string(ch) + "\" fill-opacity=\"" +
                 trim_number(shade, 2) + "\"/>";
        }
        s += "</g>";
    }
    // The frame, and labels: the first and last rank rows, the first and last steps.
    s += "<rect class=\"heat-frame\" x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(top) + "\" width=\"" +
         std::to_string(cw * int(cols)) + "\" height=\"" + std::to_string(ch * int(rows)) + "\"/>";
    auto text = [&](int x, int y, const std::string& anchor, const std::string& t) {
        s += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" text-anchor=\"" + anchor + "\">" + t +
             "</text>";
    };
    text(left - 4, top + ch, "end", escape(rank_short_name(v.ranks[rows_of.front()])));
    text(left - 4, top + ch * int(rows), "end", escape(rank_short_name(v.ranks[rows_of.back()])));
    text(left, top + ch * int(rows) + 14, "start", whole ? "whole run" : "step 0");
    if (!whole) text(left + cw * int(cols), top + ch * int(rows) + 14, "end", "step " + std::to_string(steps - 1));
    text(left + cw * int(cols) / 2, top + ch * int(rows) + 28, "middle",
         "shade: the rank's work in the step over the step's median (clear 1.0, full 1.5 and more)");
    return s + "</svg>";
}

std::string standing_out_table(const RankView& v) {
    if (v.outliers.top.empty()) return {};
    SortableTable t;
    t.column("Rank", SortableTable::Sort::Text)
        .column("Host", SortableTable::Sort::Text)
        .column("Median work / step")
        .column("Mean work / step", SortableTable::Sort::Number, "moved by its spikes, unlike the median")
        .column("vs median rank")
        .column("Confidence", SortableTable::Sort::Number, "that noise would put no rank this far out")
        .column("Straggler", SortableTable::Sort::Text);
    size_t shown = std::max(kTopRanks, std::min(v.stragglers.size(), size_t(50)));
    for (size_t k = 0; k < v.outliers.top.size() && k < shown; ++k) {
        const RankOutlier& o = v.outliers.top[k];
        const RankFigures& f = v.ranks[o.index];
        const RankLine& l = v.lines[o.index];
        t.row()
            .cell(escape(f.label))
            .cell(escape(f.host))
            .num(time_text(l.median_work_ns), l.median_work_ns)
            .num(time_text(l.mean_work_ns), l.mean_work_ns)
            .num(escape(pct_text(o.excess_pct)), o.excess_pct)
            .num(escape(confidence_text(o.confidence)), o.confidence)
            .cell(o.stands_out ? "<strong>yes</strong>" : "");
    }
    return t.html();
}

}  // namespace

std::string ranks_section(const RankView& v) {
    std::string s = "<p class=\"verdict-line\"><strong>" + escape(v.line) + "</strong></p>";
    for (const auto& n : v.notes) s += "<p class=\"note\">" + escape(n) + "</p>";
    s += "<p>" + std::to_string(v.ranks.size()) + " ranks on " + std::to_string(v.hosts) +
         (v.hosts == 1 ? " host" : " hosts") + ", " + std::to_string(v.steps_compared) + " " +
         (v.step_source == "whole run" ? "whole runs compared" : "steps compared") + ". Median work per step across "
         "ranks: min " + time_text(v.work_across.min) + ", p50 " + time_text(v.work_across.p50) + ", p90 " + time_text(v.work_across.p90) +
         ", max " + time_text(v.work_across.max) + ".</p>";
    s += "<h3>Work per step of each rank</h3>" + work_chart(v);
    s += "<h3>Step &times; rank</h3>" + heat_map(v);
    if (!v.outliers.top.empty()) s += "<h3>The ranks of the most work</h3>" + standing_out_table(v);
    return section("ranks", "Ranks",
                   "A distributed job's ranks side by side: work is a step's time less its NCCL time, where ranks "
                   "wait for each other; a straggler works at least 5 % more per step than the median rank, beyond "
                   "what noise explains (<code>gprof-report ranks</code>).",
                   s);
}

}  // namespace gprof::report::html
