// The host side of a run (issue 35): cpu_sample_sum, a flat profile of the CPU samples (model/cpu_samples.h), and
// osrt_sum, nsys's summary of OS-runtime calls.
//
// cpu_sample_sum counts sampling periods: a sample stands for the periods of CPU time that passed since the thread's
// last one (CpuSample.periods; 1 ms each at the default 1 kHz), so "samples" x the period is CPU time whatever the
// kernel's tick let the timer fire at. Self: the sample's innermost frame is the row's; total: the row's function (or
// line) is anywhere in the sample's stack (once per sample, however deep the recursion). Percentages are of every
// period in the selection (all threads, all processes).
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "model/cpu_samples.h"
#include "model/stats.h"
#include "reports/reports.h"

namespace gprof::report {

namespace {

struct Counts {
    uint64_t self = 0, total = 0;
};

std::string period_text(uint64_t ns) {
    if (ns % 1000000 == 0) return std::to_string(ns / 1000000) + " ms";
    if (ns % 1000 == 0) return std::to_string(ns / 1000) + " us";
    return std::to_string(ns) + " ns";
}

}  // namespace

Table cpu_sample_sum(const Run& run, const ReportOptions& options) {
    const SampleKey by = options.sample_key;
    Table t;
    t.name = "cpu_sample_sum";
    t.columns = {{"name", "Name", ColumnKind::Text},
                 {"location", by == SampleKey::Line ? "Line" : "Location", ColumnKind::Text},
                 {"self_samples", "Self Samples", ColumnKind::Count},
                 {"self_percent", "Self (%)", ColumnKind::Percent},
                 {"total_samples", "Total Samples", ColumnKind::Count},
                 {"total_percent", "Total (%)", ColumnKind::Percent}};
    std::map<std::pair<std::string, std::string>, Counts> rows;
    uint64_t periods = 0, records = 0;
    std::set<uint32_t> period_ns;
    std::set<std::pair<int64_t, uint64_t>> threads;
    for (const auto& p : run.processes) {
        if (p.cpu_samples.empty()) continue;
        SampleStacks stacks(p);
        std::set<std::pair<std::string, std::string>> seen;
        for (const auto& s : p.cpu_samples) {
            ++records;
            periods += s.periods;
            period_ns.insert(s.period_ns);
            threads.insert({p.pid(), s.tid});
            const auto& frames = stacks.of(s);
            if (frames.empty()) {
                Counts& c = rows[{"[no frame]", ""}];
                c.self += s.periods;
                c.total += s.periods;
                continue;
            }
            seen.clear();
            for (size_t i = 0; i < frames.size(); ++i) {
                auto key = sample_key(frames[i], by);
                Counts& c = rows[key];
                if (i == 0) c.self += s.periods;
                if (seen.insert(key).second) c.total += s.periods;
            }
        }
    }
    std::vector<std::pair<const std::pair<std::string, std::string>*, Counts>> order;
    for (const auto& [k, c] : rows) order.push_back({&k, c});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return std::make_tuple(a.second.self, a.second.total) > std::make_tuple(b.second.self, b.second.total);
    });
    auto pct = [periods](uint64_t n) { return periods ? 100.0 * static_cast<double>(n) / static_cast<double>(periods) : 0.0; };
    for (const auto& [k, c] : order)
        t.rows.push_back({k->first, k->second, static_cast<int64_t>(c.self), pct(c.self), static_cast<int64_t>(c.total),
                          pct(c.total)});
    if (records) {
        std::string periods_text;
        for (uint32_t ns : period_ns) periods_text += (periods_text.empty() ? "" : ", ") + period_text(ns);
        t.notes.push_back(std::to_string(periods) + " samples of " + periods_text + " CPU time (" +
                          std::to_string(records) + " taken) on " + std::to_string(threads.size()) +
                          " threads; sorted by self samples; " +
                          (by == SampleKey::Line ? "by line (--by function groups by function)"
                                                 : "by function (--by line for lines)"));
    } else {
        t.notes.push_back("no CPU samples in these traces (gprof-run samples every thread unless -s none; traces "
                          "older than format 1.5 have none)");
    }
    return t;
}

Table osrt_sum(const Run& run) {
    Table t;
    t.name = "osrt_sum";
    t.columns = {{"time_percent", "Time (%)", ColumnKind::Percent}, {"total_time_ns", "Total Time ({unit})", ColumnKind::TimeNs},
                 {"num_calls", "Num Calls", ColumnKind::Count},        {"avg_ns", "Avg ({unit})", ColumnKind::TimeNs},
                 {"med_ns", "Med ({unit})", ColumnKind::TimeNs},        {"min_ns", "Min ({unit})", ColumnKind::TimeNs},
                 {"max_ns", "Max ({unit})", ColumnKind::TimeNs},        {"stddev_ns", "StdDev ({unit})", ColumnKind::TimeNs},
                 {"name", "Name", ColumnKind::Text},
                 // Not nsys's: where the program spent the most time in this call (calls past the backtrace
                 // threshold, 80 us by default, carry their call site).
                 {"top_call_site", "Top Call Site", ColumnKind::Text}};
    std::map<std::string, std::vector<double>> by_name;
    std::map<std::string, std::map<std::string, double>> sites;  // name -> call site -> time
    for (const auto& p : run.processes) {
        std::unique_ptr<SampleStacks> stacks;
        for (const auto& c : p.osrt_calls) {
            double ns = c.end > c.start ? static_cast<double>(c.end - c.start) : 0.0;
            std::string name(p.str(c.name));
            by_name[name].push_back(ns);
            if (!c.stack && !c.py_stack) continue;
            if (!stacks) stacks = std::make_unique<SampleStacks>(p);
            const auto& frames = stacks->of(c);
            if (!frames.empty()) sites[name][frames.front().text()] += ns;
        }
    }
    double all = 0;
    struct Row {
        std::string name;
        double total, mean, median, min, max, stddev;
        size_t n;
        std::string site;
    };
    std::vector<Row> out;
    for (auto& [name, d] : by_name) {
        double total = 0;
        for (double v : d) total += v;
        all += total;
        std::string site;
        double site_ns = -1;
        for (const auto& [text, ns] : sites[name])
            if (ns > site_ns) site = text, site_ns = ns;
        out.push_back({name, total, mean_of(d), median_of(d), *std::min_element(d.begin(), d.end()),
                       *std::max_element(d.begin(), d.end()), stddev_of(d), d.size(), site});
    }
    std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return a.total > b.total; });
    for (const Row& r : out)
        t.rows.push_back({all > 0 ? 100.0 * r.total / all : 0.0, static_cast<int64_t>(r.total), static_cast<int64_t>(r.n),
                          r.mean, r.median, static_cast<int64_t>(r.min), static_cast<int64_t>(r.max), r.stddev, r.name,
                          r.site});
    if (out.empty())
        t.notes.push_back("no OS-runtime calls in these traces (gprof-run records them with --trace ...,osrt, its "
                          "default; traces older than format 1.5 have none)");
    else
        t.notes.push_back("blocking C library calls that lasted at least the threshold (1 us by default: gprof-run "
                          "--osrt-threshold); Time (%) is of the calls listed");
    return t;
}

}  // namespace gprof::report
