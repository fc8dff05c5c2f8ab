#include "analyze/ranks.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>

#include "analyze/steps.h"
#include "model/identity.h"
#include "model/stats.h"
#include "output/text.h"

namespace gprof::report {

using nlohmann::json;

bool is_nccl_kernel(std::string_view name) {
    return name.find("ncclDevKernel") != std::string_view::npos || name.find("ncclKernel") != std::string_view::npos;
}

// ----- one rank's figures --------------------------------------------------------------------------------------

namespace {

struct KernelSpan {
    int64_t start = 0, end = 0;  // run axis
    bool nccl = false;
};

// Which entry a process belongs to: its (job, rank), or the process itself when it has no rank. The host is part of
// the key too, so rank 0 of two different jobs merged by mistake stays two entries.
using RankKey = std::tuple<int, std::string, int64_t, std::string, std::string, int64_t>;

RankKey rank_key(const ProcessTrace& p, const std::string& job) {
    int64_t rank = process_rank(p);
    if (rank >= 0) return {0, job, rank, p.header.hostname, p.header.boot_id, 0};
    return {1, "", -1, p.header.hostname, p.header.boot_id, p.pid()};
}

}  // namespace

std::vector<RankFigures> rank_figures(const Run& run, const std::string& step_pattern) {
    StepSet steps = detect_steps(run, step_pattern);
    std::map<RankKey, std::vector<size_t>> groups;  // key -> process indexes
    for (size_t i = 0; i < run.processes.size(); ++i) {
        const ProcessTrace& p = run.processes[i];
        std::string job = p.role && p.role->job ? std::string(p.str(p.role->job)) : std::string();
        groups[rank_key(p, job)].push_back(i);
    }
    std::vector<std::vector<const Step*>> steps_of(run.processes.size());
    for (const Step& s : steps.steps) steps_of[s.process].push_back(&s);

    std::vector<RankFigures> out;
    for (const auto& [key, members] : groups) {
        RankFigures f;
        const ProcessTrace& first = run.processes[members.front()];
        f.rank = process_rank(first);
        if (first.role) {
            f.local_rank = first.role->local_rank;
            f.world_size = first.role->world_size;
            f.job = std::get<1>(key);
        }
        f.host = first.header.hostname;
        f.boot_id = first.header.boot_id;
        std::vector<KernelSpan> spans;
        int64_t best_kernel_ns = -1;
        bool any_time = false;
        std::vector<const Step*> mine;
        for (size_t i : members) {
            const ProcessTrace& p = run.processes[i];
            f.pids.push_back(p.pid());
            int64_t own_kernel_ns = 0;
            std::vector<int8_t> nccl_name(p.strings.size(), -1);  // by string id: the name test runs once per name
            for (const trace::Kernel& k : p.kernels) {
                if (k.start == 0 || k.end < k.start) continue;  // unknown times (CUPTI's zero timestamps)
                int64_t d = sat_duration(k.start, k.end);
                bool nccl;
                if (k.name < nccl_name.size()) {
                    int8_t& known = nccl_name[k.name];
                    if (known < 0) known = is_nccl_kernel(p.str(k.name)) ? 1 : 0;
                    nccl = known == 1;
                } else {
                    nccl = is_nccl_kernel(p.str(k.name));
                }
                ++f.kernels;
                f.kernel_ns = sat_add(f.kernel_ns, d);
                own_kernel_ns = sat_add(own_kernel_ns, d);
                if (nccl) {
                    ++f.nccl_kernels;
                    f.nccl_ns = sat_add(f.nccl_ns, d);
                } else {
                    f.compute_ns = sat_add(f.compute_ns, d);
                }
                spans.push_back({p.to_run_ns(k.start), p.to_run_ns(k.end), nccl});
            }
            for (const trace::Memcpy& m : p.memcpys) {
                ++f.memcpys;
                if (m.start && m.end > m.start) f.memcpy_ns = sat_add(f.memcpy_ns, sat_duration(m.start, m.end));
            }
            f.api_calls += p.api_calls.size();
            if (p.first_ns) {
                int64_t a = p.to_run_ns(p.first_ns) + run.base_realtime_ns, b = p.to_run_ns(p.last_ns) + run.base_realtime_ns;
                if (!any_time || a < f.first_ns) f.first_ns = a;
                if (!any_time || b > f.last_ns) f.last_ns = b;
                any_time = true;
            }
            if (own_kernel_ns > best_kernel_ns) {
                best_kernel_ns = own_kernel_ns;
                f.pid = p.pid();
            }
            mine.insert(mine.end(), steps_of[i].begin(), steps_of[i].end());
        }
        if (f.rank < 0 && f.kernels == 0 && mine.empty()) continue;  // a helper of no rank: nothing to compare
        trace::TraceHeader h = first.header;
        h.pid = f.pid;
        f.label = process_label(h, f.rank, true);

        std::sort(spans.begin(), spans.end(), [](const KernelSpan& a, const KernelSpan& b) { return a.start < b.start; });
        int64_t longest = 0;
        for (const auto& s : spans) longest = std::max(longest, s.end - s.start);
        std::sort(mine.begin(), mine.end(), [](const Step* a, const Step* b) { return a->start < b->start; });
        f.step_source = mine.empty() ? "none" : steps.source;
        for (const Step* s : mine) {
            RankStep rs;
            rs.start_ns = s->start + run.base_realtime_ns;
            rs.duration_ns = s->duration();
            // Kernels that overlap the step: those starting before its end, from the first that can reach into it.
            auto it = std::lower_bound(spans.begin(), spans.end(), sat_sub(s->start, longest),
                                       [](const KernelSpan& k, int64_t t) { return k.start < t; });
            for (; it != spans.end() && it->start < s->end; ++it) {
                int64_t overlap = std::min(it->end, s->end) - std::max(it->start, s->start);
                if (overlap <= 0) continue;
                int64_t& into = it->nccl ? rs.nccl_ns : rs.compute_ns;
                into = sat_add(into, overlap);
            }
            f.steps.push_back(rs);
        }
        out.push_back(std::move(f));
    }
    std::sort(out.begin(), out.end(), [](const RankFigures& a, const RankFigures& b) {
        bool ra = a.rank >= 0, rb = b.rank >= 0;
        if (ra != rb) return ra;
        return std::tie(a.rank, a.job, a.host, a.boot_id, a.pid) < std::tie(b.rank, b.job, b.host, b.boot_id, b.pid);
    });
    return out;
}

// ----- JSON of one rank ----------------------------------------------------------------------------------------

json rank_figures_to_json(const RankFigures& f) {
    json steps = json::array();
    for (const RankStep& s : f.steps)
        steps.push_back({{"start_ns", s.start_ns}, {"duration_ns", s.duration_ns}, {"nccl_ns", s.nccl_ns},
                         {"compute_ns", s.compute_ns}});
    return {{"schema_version", kRankFiguresSchemaVersion},
            {"rank", f.rank},
            {"local_rank", f.local_rank},
            {"world_size", f.world_size},
            {"host", f.host},
            {"boot_id", f.boot_id},
            {"job", f.job},
            {"pid", f.pid},
            {"pids", f.pids},
            {"label", f.label},
            {"first_ns", f.first_ns},
            {"last_ns", f.last_ns},
            {"kernels", f.kernels},
            {"nccl_kernels", f.nccl_kernels},
            {"memcpys", f.memcpys},
            {"api_calls", f.api_calls},
            {"kernel_ns", f.kernel_ns},
            {"nccl_ns", f.nccl_ns},
            {"compute_ns", f.compute_ns},
            {"memcpy_ns", f.memcpy_ns},
            {"step_source", f.step_source},
            {"steps", steps}};
}

namespace {

template <class T> T field(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) throw std::invalid_argument(std::string("rank figures without \"") + key + "\"");
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        throw std::invalid_argument(std::string("rank figures: \"") + key + "\" has the wrong type");
    }
}

}  // namespace

RankFigures rank_figures_from_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("rank figures must be a JSON object");
    int version = field<int>(j, "schema_version");
    if (version != kRankFiguresSchemaVersion)
        throw std::invalid_argument("rank figures of schema " + std::to_string(version) + ", this gprof-report reads " +
                                    std::to_string(kRankFiguresSchemaVersion));
    RankFigures f;
    f.rank = field<int64_t>(j, "rank");
    f.local_rank = field<int64_t>(j, "local_rank");
    f.world_size = field<int64_t>(j, "world_size");
    f.host = field<std::string>(j, "host");
    f.boot_id = field<std::string>(j, "boot_id");
    f.job = field<std::string>(j, "job");
    f.pid = field<int64_t>(j, "pid");
    f.pids = field<std::vector<int64_t>>(j, "pids");
    f.label = field<std::string>(j, "label");
    f.first_ns = field<int64_t>(j, "first_ns");
    f.last_ns = field<int64_t>(j, "last_ns");
    f.kernels = field<uint64_t>(j, "kernels");
    f.nccl_kernels = field<uint64_t>(j, "nccl_kernels");
    f.memcpys = field<uint64_t>(j, "memcpys");
    f.api_calls = field<uint64_t>(j, "api_calls");
    f.kernel_ns = field<int64_t>(j, "kernel_ns");
    f.nccl_ns = field<int64_t>(j, "nccl_ns");
    f.compute_ns = field<int64_t>(j, "compute_ns");
    f.memcpy_ns = field<int64_t>(j, "memcpy_ns");
    f.step_source = field<std::string>(j, "step_source");
    const json& steps = j.at("steps");
    if (!steps.is_array()) throw std::invalid_argument("rank figures: \"steps\" must be an array");
    for (const json& s : steps) {
        RankStep rs;
        rs.start_ns = field<int64_t>(s, "start_ns");
        rs.duration_ns = field<int64_t>(s, "duration_ns");
        rs.nccl_ns = field<int64_t>(s, "nccl_ns");
        rs.compute_ns = field<int64_t>(s, "compute_ns");
        f.steps.push_back(rs);
    }
    return f;
}

// ----- the cross-rank view -------------------------------------------------------------------------------------

namespace {

std::string pct_text(double pct) {
    std::string s = format_fixed(std::abs(pct), std::abs(pct) < 10 ? 1 : 0);
    return (pct < 0 ? "-" : "+") + s + " %";
}

std::string short_name(const RankFigures& f) {
    return f.rank >= 0 ? "rank " + std::to_string(f.rank) : f.label;
}

}  // namespace

RankView compare_ranks(std::vector<RankFigures> ranks) {
    RankView v;
    std::sort(ranks.begin(), ranks.end(), [](const RankFigures& a, const RankFigures& b) {
        bool ra = a.rank >= 0, rb = b.rank >= 0;
        if (ra != rb) return ra;
        return std::tie(a.rank, a.job, a.host, a.boot_id, a.pid) < std::tie(b.rank, b.job, b.host, b.boot_id, b.pid);
    });
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
    std::vector<std::vector<RankStep>> steps(v.ranks.size());
    std::vector<size_t> with_steps;
    for (size_t r = 0; r < v.ranks.size(); ++r)
        if (!v.ranks[r].steps.empty()) with_steps.push_back(r);
    if (with_steps.empty()) {
        v.step_source = "whole run";
        for (size_t r = 0; r < v.ranks.size(); ++r) {
            const RankFigures& f = v.ranks[r];
            steps[r].push_back({f.first_ns, f.last_ns - f.first_ns, f.nccl_ns, f.compute_ns});
            with_steps.push_back(r);
        }
    } else {
        for (size_t r : with_steps) steps[r] = v.ranks[r].steps;
        v.step_source = v.ranks[with_steps.front()].step_source;
        for (size_t r = 0; r < v.ranks.size(); ++r)
            if (v.ranks[r].steps.empty())
                v.notes.push_back(v.ranks[r].label + " has no steps: left out of the step comparison");
    }
    size_t n = SIZE_MAX, most = 0;
    for (size_t r : with_steps) {
        n = std::min(n, steps[r].size());
        most = std::max(most, steps[r].size());
    }
    v.steps_compared = n;
    if (n != most)
        v.notes.push_back("the ranks have " + std::to_string(n) + " to " + std::to_string(most) +
                          " steps: the first " + std::to_string(n) + " of each are compared, step by step in order");

    std::vector<double> skews;
    std::vector<int64_t> total_work(v.ranks.size(), 0);
    for (size_t i = 0; i < n; ++i) {
        StepAcrossRanks s;
        s.index = i;
        std::vector<double> work;
        int64_t first_start = INT64_MAX, last_start = INT64_MIN;
        for (size_t r : with_steps) {
            const RankStep& rs = steps[r][i];
            int64_t w = rs.work_ns();
            work.push_back(static_cast<double>(w));
            total_work[r] = sat_add(total_work[r], w);
            if (w > s.max_work_ns || (s.max_work_ns == 0 && r == with_steps.front())) {
                s.max_work_ns = w;
                s.slowest = r;
            }
            first_start = std::min(first_start, rs.start_ns);
            last_start = std::max(last_start, rs.start_ns);
        }
        s.start_ns = first_start;
        s.start_skew_ns = last_start - first_start;
        skews.push_back(static_cast<double>(s.start_skew_ns));
        s.median_work_ns = median_of(work);
        s.spread = s.median_work_ns > 0 ? static_cast<double>(s.max_work_ns) / s.median_work_ns : 1.0;
        ++v.lines[s.slowest].slowest_in;
        v.steps.push_back(s);
    }
    for (size_t r : with_steps) {
        RankLine& l = v.lines[r];
        l.steps = n;
        std::vector<double> dur, work;
        double nccl = 0, compute = 0;
        for (size_t i = 0; i < n; ++i) {
            dur.push_back(static_cast<double>(steps[r][i].duration_ns));
            work.push_back(static_cast<double>(steps[r][i].work_ns()));
            nccl += static_cast<double>(steps[r][i].nccl_ns);
            compute += static_cast<double>(steps[r][i].compute_ns);
        }
        l.median_step_ns = median_of(dur);
        l.median_work_ns = median_of(work);
        l.nccl_per_step_ns = n ? nccl / double(n) : 0;
        l.compute_per_step_ns = n ? compute / double(n) : 0;
    }

    // The slowest rank: slowest in the most steps; ties by the most work over the compared steps.
    size_t slow = with_steps.front();
    for (size_t r : with_steps)
        if (v.lines[r].slowest_in > v.lines[slow].slowest_in ||
            (v.lines[r].slowest_in == v.lines[slow].slowest_in && total_work[r] > total_work[slow]))
            slow = r;
    v.slowest_rank = slow;
    std::vector<double> totals, others_nccl;
    for (size_t r : with_steps) {
        totals.push_back(static_cast<double>(total_work[r]));
        if (r != slow) others_nccl.push_back(v.lines[r].nccl_per_step_ns);
    }
    double median_total = median_of(totals);
    v.over_median_pct = median_total > 0 ? (static_cast<double>(total_work[slow]) / median_total - 1) * 100 : 0;
    const RankFigures& sf = v.ranks[slow];
    const RankLine& sl = v.lines[slow];
    const std::string where = v.step_source == "whole run" ? std::string(" (no steps found: whole runs compared)")
                                                           : " in " + std::to_string(sl.slowest_in) + " of " +
                                                                 std::to_string(n) + " steps";
    if (v.over_median_pct >= kStragglerMarginPct) {
        v.straggler = slow;
        // The others wait for it in NCCL when their extra time in NCCL kernels accounts for at least half of the
        // work the straggler does beyond the median.
        double others = median_of(others_nccl);
        double extra_work = n ? (static_cast<double>(total_work[slow]) - median_total) / double(n) : 0;
        v.others_wait_in_nccl = others > 0 && others - sl.nccl_per_step_ns >= 0.5 * extra_work;
        v.line = sf.label + " is the slowest" + where + ", " + pct_text(v.over_median_pct) + " on the median";
        if (v.others_wait_in_nccl)
            v.line += "; the others wait for it in NCCL (" + format_time_auto(others) + " per step, against " +
                      format_time_auto(sl.nccl_per_step_ns) + " on " + short_name(sf) + ")";
    } else {
        v.line = "no straggler: the slowest rank, " + sf.label + ", works " + pct_text(v.over_median_pct) +
                 " on the median (within " + format_fixed(kStragglerMarginPct, 0) + " %)";
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

// ----- output ----------------------------------------------------------------------------------------------------

json rank_view_to_json(const RankView& v) {
    json ranks = json::array();
    for (size_t r = 0; r < v.ranks.size(); ++r) {
        json j = rank_figures_to_json(v.ranks[r]);
        const RankLine& l = v.lines[r];
        j["compared"] = {{"steps", l.steps},
                         {"median_step_ns", l.median_step_ns},
                         {"median_work_ns", l.median_work_ns},
                         {"nccl_per_step_ns", l.nccl_per_step_ns},
                         {"compute_per_step_ns", l.compute_per_step_ns},
                         {"slowest_in", l.slowest_in}};
        ranks.push_back(std::move(j));
    }
    json steps = json::array();
    for (const auto& s : v.steps)
        steps.push_back({{"index", s.index},
                         {"start_ns", s.start_ns},
                         {"start_skew_ns", s.start_skew_ns},
                         {"median_work_ns", s.median_work_ns},
                         {"max_work_ns", s.max_work_ns},
                         {"slowest", v.ranks[s.slowest].label},
                         {"slowest_rank", v.ranks[s.slowest].rank},
                         {"spread", s.spread}});
    json straggler = nullptr;
    if (v.straggler) {
        const RankFigures& f = v.ranks[*v.straggler];
        straggler = {{"label", f.label},
                     {"rank", f.rank},
                     {"host", f.host},
                     {"pid", f.pid},
                     {"slowest_in", v.lines[*v.straggler].slowest_in},
                     {"steps", v.steps_compared},
                     {"over_median_pct", v.over_median_pct},
                     {"others_wait_in_nccl", v.others_wait_in_nccl}};
    }
    return {{"schema_version", kRankViewSchemaVersion},
            {"hosts", v.hosts},
            {"step_source", v.step_source},
            {"steps_compared", v.steps_compared},
            {"straggler", straggler},
            {"over_median_pct", v.over_median_pct},
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
            {"ranks", ranks},
            {"steps", steps}};
}

void render_rank_view(const RankView& v, OutputFormat format, std::ostream& out, size_t max_step_rows) {
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
    Table t;
    t.name = "ranks";
    t.columns = {{"rank", "Rank", ColumnKind::Text},
                 {"steps", "Steps", ColumnKind::Count},
                 {"median_step", "Median step ({unit})", ColumnKind::TimeNs},
                 {"median_work", "Median work ({unit})", ColumnKind::TimeNs},
                 {"nccl_per_step", "NCCL/step ({unit})", ColumnKind::TimeNs},
                 {"compute_per_step", "Compute/step ({unit})", ColumnKind::TimeNs},
                 {"slowest_in", "Slowest in", ColumnKind::Count},
                 {"kernel_ns", "Kernels ({unit})", ColumnKind::TimeNs},
                 {"nccl_ns", "NCCL ({unit})", ColumnKind::TimeNs}};
    for (size_t r = 0; r < v.ranks.size(); ++r) {
        const auto& f = v.ranks[r];
        const auto& l = v.lines[r];
        t.rows.push_back({f.label, int64_t(l.steps), l.median_step_ns, l.median_work_ns, l.nccl_per_step_ns,
                          l.compute_per_step_ns, int64_t(l.slowest_in), double(f.kernel_ns), double(f.nccl_ns)});
    }
    out << "\n";
    render_table(t, ro, out);
    if (v.steps.empty()) return;
    Table st;
    st.name = "rank_steps";
    st.columns = {{"step", "Step", ColumnKind::Count},
                  {"slowest", "Slowest", ColumnKind::Text},
                  {"max_work", "Max work ({unit})", ColumnKind::TimeNs},
                  {"median_work", "Median work ({unit})", ColumnKind::TimeNs},
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
        st.rows.push_back({int64_t(s.index), short_name(v.ranks[s.slowest]), double(s.max_work_ns), s.median_work_ns,
                           s.spread, double(s.start_skew_ns)});
    }
    out << "\n";
    render_table(st, ro, out);
}

}  // namespace gprof::report
