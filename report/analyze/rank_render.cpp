// render_rank_view(): the ranks view as text (table or markdown). Readable at 10 000 ranks: up to kRanksListedWhole
// ranks one row each; above, the distribution across ranks and the ranks that stand out, --all-ranks for every row.
#include <algorithm>

#include "analyze/rank_text.h"
#include "analyze/ranks.h"
#include "output/text.h"

namespace gprof::report {

namespace {

// The stragglers beyond the top few are listed up to this many (JSON lists all).
constexpr size_t kMaxOutlierRows = 20;

void every_rank_table(const RankView& v, const RenderOptions& ro, std::ostream& out) {
    Table t;
    t.name = "ranks";
    t.columns = {{"rank", "Rank", ColumnKind::Text},
                 {"steps", "Steps", ColumnKind::Count},
                 {"median_step", "Median step ({unit})", ColumnKind::TimeNs},
                 {"median_work", "Median work ({unit})", ColumnKind::TimeNs},
                 {"mean_work", "Mean work ({unit})", ColumnKind::TimeNs},
                 {"over_median_pct", "vs median (%)", ColumnKind::Number, 1},
                 {"nccl_per_step", "NCCL/step ({unit})", ColumnKind::TimeNs},
                 {"compute_per_step", "Compute/step ({unit})", ColumnKind::TimeNs},
                 {"kernel_ns", "Kernels ({unit})", ColumnKind::TimeNs},
                 {"straggler", "Straggler", ColumnKind::Text}};
    std::vector<bool> slow(v.ranks.size(), false);
    for (size_t r : v.stragglers) slow[r] = true;
    for (size_t r = 0; r < v.ranks.size(); ++r) {
        const auto& f = v.ranks[r];
        const auto& l = v.lines[r];
        t.rows.push_back({f.label, int64_t(l.steps), l.median_step_ns, l.median_work_ns, l.mean_work_ns,
                          l.over_median_pct, l.nccl_per_step_ns, l.compute_per_step_ns, double(f.kernel_ns),
                          std::string(slow[r] ? "yes" : "")});
    }
    out << "\n";
    render_table(t, ro, out);
}

void distribution_table(const RankView& v, const RenderOptions& ro, std::ostream& out) {
    Table t;
    t.name = "across_ranks";
    t.columns = {{"figure", "Across " + std::to_string(v.ranks.size()) + " ranks", ColumnKind::Text},
                 {"min", "Min ({unit})", ColumnKind::TimeNs},
                 {"p50", "p50 ({unit})", ColumnKind::TimeNs},
                 {"p90", "p90 ({unit})", ColumnKind::TimeNs},
                 {"max", "Max ({unit})", ColumnKind::TimeNs}};
    auto row = [&](const char* name, const AcrossRanks& a) {
        t.rows.push_back({std::string(name), a.min, a.p50, a.p90, a.max});
    };
    row("median step", v.step_across);
    row("median work per step", v.work_across);
    row("NCCL per step", v.nccl_across);
    out << "\n";
    render_table(t, ro, out);
}

void outlier_table(const RankView& v, const RenderOptions& ro, std::ostream& out) {
    if (v.outliers.top.empty()) return;
    Table t;
    t.name = "ranks_standing_out";
    t.columns = {{"rank", "Rank", ColumnKind::Text},
                 {"median_work", "Median work ({unit})", ColumnKind::TimeNs},
                 {"mean_work", "Mean work ({unit})", ColumnKind::TimeNs},
                 {"excess", "Excess/step ({unit})", ColumnKind::TimeNs},
                 {"over_median_pct", "vs median (%)", ColumnKind::Number, 1},
                 {"confidence", "Confidence", ColumnKind::Text},
                 {"straggler", "Straggler", ColumnKind::Text}};
    size_t rows = std::min(v.outliers.top.size(), std::max(kTopRanks, std::min(v.stragglers.size(), kMaxOutlierRows)));
    for (size_t k = 0; k < rows; ++k) {
        const RankOutlier& o = v.outliers.top[k];
        const auto& l = v.lines[o.index];
        t.rows.push_back({v.ranks[o.index].label, l.median_work_ns, l.mean_work_ns, o.value - v.outliers.reference,
                          o.excess_pct, confidence_text(o.confidence), std::string(o.stands_out ? "yes" : "")});
    }
    t.notes.push_back("the " + std::to_string(rows) + " ranks of the most work per step of " +
                      std::to_string(v.ranks.size()) + (v.stragglers.size() > rows
                                                             ? " (" + std::to_string(v.stragglers.size() - rows) +
                                                                   " more stragglers not shown)"
                                                             : std::string()) +
                      "; --all-ranks lists every rank, --format json all of them");
    out << "\n";
    render_table(t, ro, out);
}

void step_table(const RankView& v, const RenderOptions& ro, size_t max_step_rows, std::ostream& out) {
    if (v.steps.empty()) return;
    Table st;
    st.name = "rank_steps";
    st.columns = {{"step", "Step", ColumnKind::Count},
                  {"median_work", "Median work ({unit})", ColumnKind::TimeNs},
                  {"p90_work", "p90 work ({unit})", ColumnKind::TimeNs},
                  {"max_work", "Max work ({unit})", ColumnKind::TimeNs},
                  {"slowest", "Max by", ColumnKind::Text},
                  {"spread", "Spread (max/median)", ColumnKind::Number, 2},
                  {"start_skew", "Start skew ({unit})", ColumnKind::TimeNs}};
    // The first steps, then the worst spreads among the rest: a long run stays readable.
    std::vector<size_t> shown;
    for (size_t i = 0; i < v.steps.size(); ++i) shown.push_back(i);
    if (max_step_rows && shown.size() > max_step_rows) {
        std::vector<size_t> rest(shown.begin() + static_cast<long>(max_step_rows / 2), shown.end());
        std::stable_sort(rest.begin(), rest.end(), [&](size_t a, size_t b) { return v.steps[a].spread > v.steps[b].spread; });
        rest.resize(max_step_rows - max_step_rows / 2);
        shown.resize(max_step_rows / 2);
        shown.insert(shown.end(), rest.begin(), rest.end());
        std::sort(shown.begin(), shown.end());
        st.notes.push_back(std::to_string(shown.size()) + " of " + std::to_string(v.steps.size()) +
                           " steps shown: the first ones and those of the widest spread (--format json lists all)");
    }
    for (size_t i : shown) {
        const auto& s = v.steps[i];
        st.rows.push_back({int64_t(s.index), s.median_work_ns, s.p90_work_ns, double(s.max_work_ns),
                           rank_short_name(v.ranks[s.slowest]), s.spread, double(s.start_skew_ns)});
    }
    out << "\n";
    render_table(st, ro, out);
}

}  // namespace

void render_rank_view(const RankView& v, OutputFormat format, std::ostream& out, const RankRenderOptions& options) {
    const bool md = format == OutputFormat::Markdown;
    out << (md ? "## Ranks\n\n" : "Ranks: ") << v.ranks.size() << (v.ranks.size() == 1 ? " rank" : " ranks") << " on "
        << v.hosts << (v.hosts == 1 ? " host" : " hosts") << "; GPU kernels " << format_time_auto(double(v.kernel_ns))
        << " (NCCL " << format_time_auto(double(v.nccl_ns)) << ", compute " << format_time_auto(double(v.compute_ns))
        << "), memcpy " << format_time_auto(double(v.memcpy_ns)) << ", " << v.api_calls << " API calls\n";
    // Labels carry host names: whatever bytes a host is called, the text stays one line each.
    out << (md ? "\n**" : "  ") << printable_line(v.line) << (md ? "**\n" : "\n");
    for (const auto& n : v.notes) out << (md ? "\n" : "  note: ") << printable_line(n) << "\n";
    if (v.ranks.empty()) return;
    RenderOptions ro;
    ro.format = md ? OutputFormat::Markdown : OutputFormat::Table;
    ro.time_unit = TimeUnit::Ms;
    if (options.all_ranks || v.ranks.size() <= kRanksListedWhole) {
        every_rank_table(v, ro, out);
    } else {
        distribution_table(v, ro, out);
        outlier_table(v, ro, out);
    }
    step_table(v, ro, options.max_step_rows, out);
}

}  // namespace gprof::report
