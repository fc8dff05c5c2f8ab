// compare_ranks(): the cross-rank view from any set of rank figures, and its JSON (docs/distributed.md).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analyze/rank_text.h"
#include "analyze/ranks.h"
#include "model/saturate.h"
#include "model/stats.h"

namespace gprof::report {

using nlohmann::json;

namespace {

// The value at quantile q of v[0, n) (linear interpolation, as percentile_of), by selection: O(n). Reorders v.
double quantile_in_place(double* v, size_t n, double q) {
    if (n == 0) return 0;
    double pos = q * static_cast<double>(n - 1);
    size_t lo = static_cast<size_t>(pos);
    std::nth_element(v, v + lo, v + n);
    double a = v[lo];
    if (lo + 1 >= n) return a;
    double b = *std::min_element(v + lo + 1, v + n);
    return a + (b - a) * (pos - static_cast<double>(lo));
}

AcrossRanks across(std::vector<double> v) {
    AcrossRanks a;
    if (v.empty()) return a;
    a.min = *std::min_element(v.begin(), v.end());
    a.max = *std::max_element(v.begin(), v.end());
    a.p90 = quantile_in_place(v.data(), v.size(), 0.9);
    a.p50 = median_in_place(v.data(), v.size());
    return a;
}

json across_json(const AcrossRanks& a) { return {{"min", a.min}, {"p50", a.p50}, {"p90", a.p90}, {"max", a.max}}; }

}  // namespace

RankView compare_ranks(std::vector<RankFigures> ranks) {
    RankView v;
    std::sort(ranks.begin(), ranks.end(), rank_order);
    v.ranks = std::move(ranks);
    v.lines.resize(v.ranks.size());
    std::set<std::pair<std::string, std::string>> hosts;
    for (const auto& f : v.ranks) {
        hosts.insert({f.host, f.boot_id});
        v.kernels += f.kernels;
        v.nccl_kernels += f.nccl_kernels;
        v.memcpys += f.memcpys;
        v.api_calls += f.api_calls;
        v.kernel_ns = sat_add(v.kernel_ns, f.kernel_ns);
        v.nccl_ns = sat_add(v.nccl_ns, f.nccl_ns);
        v.compute_ns = sat_add(v.compute_ns, f.compute_ns);
        v.memcpy_ns = sat_add(v.memcpy_ns, f.memcpy_ns);
    }
    v.hosts = hosts.size();
    if (v.ranks.size() < 2) {
        v.line = v.ranks.empty() ? "no rank did GPU work or has steps: nothing to compare"
                                 : "one rank only (" + v.ranks[0].label + "): nothing to compare";
        return v;
    }

    // The steps each rank is compared on: its NVTX steps, or (no rank has any) its whole run as one span.
    std::vector<std::vector<RankStep>> whole(v.ranks.size());
    std::vector<const std::vector<RankStep>*> steps(v.ranks.size(), nullptr);
    std::vector<size_t> with_steps;
    for (size_t r = 0; r < v.ranks.size(); ++r)
        if (!v.ranks[r].steps.empty()) with_steps.push_back(r);
    if (with_steps.empty()) {
        v.step_source = "whole run";
        for (size_t r = 0; r < v.ranks.size(); ++r) {
            const RankFigures& f = v.ranks[r];
            whole[r].push_back({f.first_ns, f.last_ns - f.first_ns, f.nccl_ns, f.compute_ns});
            steps[r] = &whole[r];
            with_steps.push_back(r);
        }
    } else {
        for (size_t r : with_steps) steps[r] = &v.ranks[r].steps;
        v.step_source = v.ranks[with_steps.front()].step_source;
        for (size_t r = 0; r < v.ranks.size(); ++r)
            if (v.ranks[r].steps.empty())
                v.notes.push_back(v.ranks[r].label + " has no steps: left out of the step comparison");
    }
    size_t n = SIZE_MAX, most = 0;
    for (size_t r : with_steps) {
        n = std::min(n, steps[r]->size());
        most = std::max(most, steps[r]->size());
    }
    v.steps_compared = n;
    if (n != most)
        v.notes.push_back("the ranks have " + std::to_string(n) + " to " + std::to_string(most) +
                          " steps: the first " + std::to_string(n) + " of each are compared, step by step in order");

    // Per step, across ranks: one pass over the ranks per step, one buffer reused.
    std::vector<double> skews, work(with_steps.size());
    v.steps.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        StepAcrossRanks s;
        s.index = i;
        int64_t first_start = INT64_MAX, last_start = INT64_MIN;
        bool any = false;
        for (size_t k = 0; k < with_steps.size(); ++k) {
            size_t r = with_steps[k];
            const RankStep& rs = (*steps[r])[i];
            int64_t w = rs.work_ns();
            work[k] = static_cast<double>(w);
            if (!any || w > s.max_work_ns) {
                s.max_work_ns = w;
                s.slowest = r;
                any = true;
            }
            first_start = std::min(first_start, rs.start_ns);
            last_start = std::max(last_start, rs.start_ns);
        }
        s.start_ns = first_start;
        s.start_skew_ns = last_start - first_start;
        skews.push_back(static_cast<double>(s.start_skew_ns));
        s.p90_work_ns = quantile_in_place(work.data(), work.size(), 0.9);
        s.median_work_ns = median_in_place(work.data(), work.size());
        s.spread = s.median_work_ns > 0 ? static_cast<double>(s.max_work_ns) / s.median_work_ns : 1.0;
        ++v.lines[s.slowest].slowest_in;
        v.steps.push_back(s);
    }
    // Per rank, over its compared steps.
    std::vector<double> dur(n), wk(n);
    for (size_t r : with_steps) {
        RankLine& l = v.lines[r];
        l.steps = n;
        double nccl = 0, compute = 0, total = 0;
        for (size_t i = 0; i < n; ++i) {
            const RankStep& rs = (*steps[r])[i];
            dur[i] = static_cast<double>(rs.duration_ns);
            wk[i] = static_cast<double>(rs.work_ns());
            total += wk[i];
            nccl += static_cast<double>(rs.nccl_ns);
            compute += static_cast<double>(rs.compute_ns);
        }
        l.median_step_ns = median_in_place(dur.data(), n);
        l.median_work_ns = median_in_place(wk.data(), n);
        l.mean_work_ns = n ? total / double(n) : 0;
        l.nccl_per_step_ns = n ? nccl / double(n) : 0;
        l.compute_per_step_ns = n ? compute / double(n) : 0;
    }

    // The robust test over the ranks' median work per step (analyze/straggler.h).
    std::vector<double> medians, med_steps, nccls;
    for (size_t r : with_steps) {
        medians.push_back(v.lines[r].median_work_ns);
        med_steps.push_back(v.lines[r].median_step_ns);
        nccls.push_back(v.lines[r].nccl_per_step_ns);
    }
    double pair_scale = 0;
    if (with_steps.size() == 2) {  // two ranks: held to each other in units of their medians' own standard errors
        double se[2];
        for (size_t k = 0; k < 2; ++k) {
            for (size_t i = 0; i < n; ++i) wk[i] = static_cast<double>((*steps[with_steps[k]])[i].work_ns());
            se[k] = median_standard_error(wk);
        }
        pair_scale = std::sqrt(se[0] * se[0] + se[1] * se[1]);
    }
    v.outliers = find_outliers(medians, kTopRanks, pair_scale);
    for (auto& o : v.outliers.top) o.index = with_steps[o.index];
    for (size_t r : with_steps)
        v.lines[r].over_median_pct =
            v.outliers.reference > 0 ? (v.lines[r].median_work_ns / v.outliers.reference - 1) * 100 : 0;
    v.step_across = across(med_steps);
    v.work_across = across(medians);
    v.nccl_across = across(nccls);
    for (const auto& o : v.outliers.top)
        if (o.stands_out) v.stragglers.push_back(o.index);
    if (!v.outliers.top.empty()) v.over_median_pct = v.outliers.top.front().excess_pct;

    const std::string reference =
        with_steps.size() == 2 && !v.outliers.top.empty()
            ? rank_short_name(v.ranks[with_steps[0] == v.outliers.top.front().index ? with_steps[1] : with_steps[0]])
            : std::string("the median rank");
    const std::string steps_text =
        v.step_source == "whole run" ? std::string("no steps found: whole runs compared") : plural_steps(n);
    if (!v.stragglers.empty()) {
        const RankOutlier& top = v.outliers.top.front();
        const size_t slow = top.index;
        v.straggler = slow;
        const RankFigures& sf = v.ranks[slow];
        const RankLine& sl = v.lines[slow];
        // The others wait for it in NCCL when their extra time in NCCL kernels accounts for at least half of the
        // work the straggler does beyond the median rank.
        std::vector<double> others_nccl;
        std::set<size_t> slow_set(v.stragglers.begin(), v.stragglers.end());
        for (size_t r : with_steps)
            if (!slow_set.count(r)) others_nccl.push_back(v.lines[r].nccl_per_step_ns);
        double others = median_of(others_nccl);
        double extra_work = sl.median_work_ns - v.outliers.reference;
        v.others_wait_in_nccl = others > 0 && others - sl.nccl_per_step_ns >= 0.5 * extra_work;
        const std::string figures = pct_text(top.excess_pct) + " work per step on " + reference + " (" +
                                    format_time_auto(sl.median_work_ns) + " against " +
                                    format_time_auto(v.outliers.reference) + ", " + steps_text + "; confidence " +
                                    confidence_text(top.confidence) + ")";
        if (v.stragglers.size() == 1) {
            v.line = sf.label + " is a straggler: " + figures;
        } else {
            v.line = std::to_string(v.stragglers.size()) + " stragglers; the slowest, " + sf.label + ": " + figures +
                     "; then";
            size_t named = std::min(v.stragglers.size(), kTopRanks);
            for (size_t k = 1; k < named; ++k)
                v.line += (k > 1 ? ", " : " ") + rank_short_name(v.ranks[v.stragglers[k]]) + " (" +
                          pct_text(v.lines[v.stragglers[k]].over_median_pct) + ")";
            if (v.stragglers.size() > named)
                v.line += " and " + std::to_string(v.stragglers.size() - named) + " more";
        }
        if (v.others_wait_in_nccl)
            v.line += "; the others wait for it in NCCL (" + format_time_auto(others) + " per step, against " +
                      format_time_auto(sl.nccl_per_step_ns) + " on " + rank_short_name(sf) + ")";
        // Several stragglers on one host point at the host (a slow node, a shared link), not at the ranks.
        if (v.stragglers.size() >= 2) {
            std::map<std::string, size_t> per_host;
            for (size_t r : v.stragglers) ++per_host[v.ranks[r].host];
            for (const auto& [host, count] : per_host)
                if (count >= 2)
                    v.notes.push_back(std::to_string(count) + " of the " + std::to_string(v.stragglers.size()) +
                                      " stragglers run on " + (host.empty() ? std::string("an unknown host") : host) +
                                      ": a slow host or link rather than slow ranks?");
        }
    } else {
        v.line = "no straggler: no rank works " + format_fixed(kStragglerMarginPct, 0) + " % more per step than " +
                 reference + " with " + format_fixed(kStragglerConfidence * 100, 0) + " % confidence";
        if (!v.outliers.top.empty()) {
            const RankOutlier& top = v.outliers.top.front();
            v.line += " (the slowest, " + v.ranks[top.index].label + ": " + pct_text(top.excess_pct) + ", confidence " +
                      confidence_text(top.confidence) + ")";
        } else {
            v.line += " (every rank works the same per step)";
        }
    }
    if (v.hosts > 1) {
        std::string skew = skews.empty() ? std::string() : format_time_auto(median_of(skews));
        v.notes.insert(v.notes.begin(),
                       std::to_string(v.hosts) + " hosts on one realtime axis: their clocks are taken as in sync "
                       "(NTP: about a millisecond apart, PTP: microseconds); the same step starts " + skew +
                       " apart across ranks at the median. Correct a host with --clock-offset HOST=NS");
    }
    return v;
}

// ----- JSON of the view ------------------------------------------------------------------------------------------

namespace {

json outlier_json(const RankView& v, const RankOutlier& o) {
    const RankFigures& f = v.ranks[o.index];
    const RankLine& l = v.lines[o.index];
    return {{"label", f.label},
            {"rank", f.rank},
            {"host", f.host},
            {"pid", f.pid},
            {"median_work_ns", l.median_work_ns},
            {"mean_work_ns", l.mean_work_ns},
            {"excess_ns", o.value - v.outliers.reference},
            {"over_median_pct", o.excess_pct},
            {"z", o.z},
            {"confidence", o.confidence},
            {"straggler", o.stands_out},
            {"slowest_in", l.slowest_in},
            {"steps", v.steps_compared},
            {"others_wait_in_nccl", v.straggler == o.index && v.others_wait_in_nccl}};
}

}  // namespace

namespace {

// One rank of the view: its figures and how it compares.
json rank_entry_json(const RankView& v, size_t r) {
    json j = rank_figures_to_json(v.ranks[r]);
    const RankLine& l = v.lines[r];
    j["compared"] = {{"steps", l.steps},
                     {"median_step_ns", l.median_step_ns},
                     {"median_work_ns", l.median_work_ns},
                     {"mean_work_ns", l.mean_work_ns},
                     {"nccl_per_step_ns", l.nccl_per_step_ns},
                     {"compute_per_step_ns", l.compute_per_step_ns},
                     {"over_median_pct", l.over_median_pct},
                     {"slowest_in", l.slowest_in}};
    return j;
}

// Every key of the view but "ranks" (one entry per rank: the bulk).
json rank_view_head_json(const RankView& v) {
    json steps = json::array();
    for (const auto& s : v.steps)
        steps.push_back({{"index", s.index},
                         {"start_ns", s.start_ns},
                         {"start_skew_ns", s.start_skew_ns},
                         {"median_work_ns", s.median_work_ns},
                         {"p90_work_ns", s.p90_work_ns},
                         {"max_work_ns", s.max_work_ns},
                         {"slowest", v.ranks[s.slowest].label},
                         {"slowest_rank", v.ranks[s.slowest].rank},
                         {"spread", s.spread}});
    json stragglers = json::array(), top = json::array();
    for (const auto& o : v.outliers.top) {
        top.push_back(outlier_json(v, o));
        if (o.stands_out) stragglers.push_back(top.back());
    }
    return {{"schema_version", kRankViewSchemaVersion},
            {"hosts", v.hosts},
            {"step_source", v.step_source},
            {"steps_compared", v.steps_compared},
            {"straggler", stragglers.empty() ? json(nullptr) : stragglers[0]},
            {"stragglers", stragglers},
            {"over_median_pct", v.over_median_pct},
            {"outliers",
             {{"reference_work_ns", v.outliers.reference},
              {"mad_ns", v.outliers.mad},
              {"scale_ns", v.outliers.scale},
              {"margin_pct", kStragglerMarginPct},
              {"confidence_required", kStragglerConfidence},
              {"top", top}}},
            {"across_ranks",
             {{"median_step_ns", across_json(v.step_across)},
              {"median_work_ns", across_json(v.work_across)},
              {"nccl_per_step_ns", across_json(v.nccl_across)}}},
            {"line", v.line},
            {"notes", v.notes},
            {"totals",
             {{"ranks", v.ranks.size()},
              {"kernels", v.kernels},
              {"nccl_kernels", v.nccl_kernels},
              {"memcpys", v.memcpys},
              {"api_calls", v.api_calls},
              {"kernel_ns", v.kernel_ns},
              {"nccl_ns", v.nccl_ns},
              {"compute_ns", v.compute_ns},
              {"memcpy_ns", v.memcpy_ns}}},
            {"steps", steps}};
}

std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

}  // namespace

json rank_view_to_json(const RankView& v) {
    json ranks = json::array();
    for (size_t r = 0; r < v.ranks.size(); ++r) ranks.push_back(rank_entry_json(v, r));
    json j = rank_view_head_json(v);
    j["ranks"] = std::move(ranks);
    return j;
}

void write_json_at_depth(const json& j, std::ostream& out, int depth) {
    // dump(2) indents a nested value by two spaces a level, and a dumped string never holds a raw newline (it is
    // escaped): so the value dumped alone, with every line after the first indented `depth` levels more, is the same.
    const std::string text = dump(j), pad(2 * size_t(depth), ' ');
    size_t from = 0;
    for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
        out.write(text.data() + from, std::streamsize(nl + 1 - from));
        out << pad;
    }
    out.write(text.data() + from, std::streamsize(text.size() - from));
}

void write_rank_view_json(const RankView& v, std::ostream& out, int depth) {
    // The object's keys in nlohmann's order (sorted), "ranks" at its place, each rank's entry made and let go in turn.
    const json head = rank_view_head_json(v);
    const std::string pad(2 * size_t(depth + 1), ' ');
    bool first = true;
    auto key = [&](const std::string& k) {
        out << (first ? "{\n" : ",\n") << pad << dump(json(k)) << ": ";
        first = false;
    };
    bool ranks_written = false;
    auto write_ranks = [&] {
        key("ranks");
        if (v.ranks.empty()) {
            out << "[]";
        } else {
            for (size_t r = 0; r < v.ranks.size(); ++r) {
                out << (r ? ",\n" : "[\n") << pad << "  ";
                write_json_at_depth(rank_entry_json(v, r), out, depth + 2);
            }
            out << "\n" << pad << "]";
        }
        ranks_written = true;
    };
    for (auto it = head.begin(); it != head.end(); ++it) {
        if (!ranks_written && it.key() > std::string("ranks")) write_ranks();
        key(it.key());
        write_json_at_depth(it.value(), out, depth + 1);
    }
    if (!ranks_written) write_ranks();
    out << "\n" << std::string(2 * size_t(depth), ' ') << "}";
}

}  // namespace gprof::report
