// The GPU metrics of a run (issue 37): the summary's "GPU metrics" section, its JSON, and the gpu_metrics_sum report,
// all from the aggregate's GpuMetricsSummary (model/gpu_metric_summary.h).
#include <cmath>
#include <set>

#include "output/text.h"
#include "reports/reports.h"

namespace gprof::report {

using nlohmann::json;

namespace {

std::string pad_left(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

// "process 4242" or "rank 3" where several processes sampled devices; "" otherwise.
std::string owner(const GpuMetricsSummary& s, bool several) {
    if (!several) return "";
    return s.process.rank >= 0 ? " of rank " + std::to_string(s.process.rank) : " of process " + std::to_string(s.pid);
}

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

const char* unit_name(GpuMetricUnit unit) {
    switch (unit) {
        case GpuMetricUnit::Percent: return "percent";
        case GpuMetricUnit::BytesPerSecond: return "bytes_per_second";
        default: return "per_second";
    }
}

}  // namespace

std::string format_gpu_metric(GpuMetricUnit unit, double value) {
    if (std::isnan(value)) return "-";
    if (unit == GpuMetricUnit::Percent) return format_fixed(value, 1) + " %";
    static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P"};
    size_t p = 0;
    double v = value;
    while (std::fabs(v) >= 1000 && p + 1 < std::size(kPrefixes)) {
        v /= 1000;
        ++p;
    }
    const int decimals = std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 10 ? 1 : 2;
    return format_fixed(v, decimals) + " " + kPrefixes[p] + (unit == GpuMetricUnit::BytesPerSecond ? "B/s" : "/s");
}

void print_gpu_metrics_section(const Aggregate& agg, size_t max_rows, size_t name_width, std::ostream& out) {
    if (agg.gpu_metrics.empty()) return;
    std::set<ProcessKey> processes;
    for (const auto& s : agg.gpu_metrics) processes.insert(s.process);
    const bool several = processes.size() > 1;
    out << "GPU metrics:\n";
    for (const GpuMetricsSummary& s : agg.gpu_metrics) {
        out << "  GPU " << s.device << owner(s, several) << " (" << printable_line(s.chip) << ", set "
            << printable_line(s.set) << "): " << s.samples << (s.samples == 1 ? " sample" : " samples") << " every "
            << format_time_auto(double(s.interval_ns));
        if (s.samples)
            out << " from +" << format_time_auto(double(s.first_ns)) << " to +" << format_time_auto(double(s.last_ns))
                << "; kernels ran " << format_time_auto(double(s.busy_ns)) << " of the "
                << format_time_auto(double(s.sampled_ns)) << " sampled";
        out << '\n';
        if (!s.samples) continue;
        size_t label_width = 6;
        for (const auto& m : s.metrics) label_width = std::max(label_width, m.label.label.size());
        label_width = std::min(label_width, std::max<size_t>(name_width, 24));
        out << "    " << pad_left("Metric", label_width) << "  " << pad_left("Mean", 11) << "  " << pad_left("p50", 11)
            << "  " << pad_left("p90", 11) << "  " << pad_left("Max", 11) << "  While kernels ran\n";
        for (const auto& m : s.metrics) {
            const GpuMetricUnit u = m.label.unit;
            out << "    " << pad_left(shorten_name(printable_line(m.label.label), label_width), label_width) << "  "
                << pad_left(format_gpu_metric(u, m.mean), 11) << "  " << pad_left(format_gpu_metric(u, m.p50), 11)
                << "  " << pad_left(format_gpu_metric(u, m.p90), 11) << "  " << pad_left(format_gpu_metric(u, m.max), 11)
                << "  " << pad_left(format_gpu_metric(u, m.busy_mean), 17) << '\n';
        }
        // The ranges: the shares only (a byte rate per range is in the JSON), the first four of the set's order.
        std::vector<size_t> shown;
        for (size_t m = 0; m < s.metrics.size() && shown.size() < 4; ++m)
            if (s.metrics[m].label.unit == GpuMetricUnit::Percent) shown.push_back(m);
        if (s.ranges.empty() || shown.empty()) continue;
        out << "  NVTX ranges on GPU " << s.device << " (the mean of the samples each range overlaps, by time):\n";
        out << "    " << pad_left("Time", 9) << "  " << pad_left("Ranges", 7);
        for (size_t m : shown) out << "  " << pad_left(s.metrics[m].label.label, 8);
        out << "  Name\n";
        size_t rows = 0;
        for (const GpuMetricRangeRow& r : s.ranges) {
            if (max_rows && rows == max_rows) {
                out << "    ... " << (s.ranges.size() - rows) << " more ranges\n";
                break;
            }
            out << "    " << pad_left(format_time_auto(double(r.total_ns)), 9) << "  " << pad_left(std::to_string(r.count), 7);
            for (size_t m : shown)
                out << "  " << pad_left(format_gpu_metric(GpuMetricUnit::Percent, r.means[m]),
                                        std::max<size_t>(8, s.metrics[m].label.label.size()));
            out << "  " << shorten_name(printable_line(r.name), name_width) << '\n';
            ++rows;
        }
    }
}

json gpu_metrics_json(const Aggregate& agg) {
    json out = json::array();
    for (const GpuMetricsSummary& s : agg.gpu_metrics) {
        json metrics = json::array();
        for (const auto& m : s.metrics)
            metrics.push_back({{"metric", m.metric},
                               {"label", m.label.label},
                               {"unit", unit_name(m.label.unit)},
                               {"samples", m.samples},
                               {"mean", number_or_null(m.mean)},
                               {"p50", number_or_null(m.p50)},
                               {"p90", number_or_null(m.p90)},
                               {"max", number_or_null(m.max)},
                               {"mean_while_kernels_ran", number_or_null(m.busy_mean)}});
        json ranges = json::array();
        for (const auto& r : s.ranges) {
            json means = json::object();
            for (size_t m = 0; m < s.metrics.size(); ++m) means[s.metrics[m].metric] = number_or_null(r.means[m]);
            ranges.push_back({{"name", r.name}, {"count", r.count}, {"total_ns", r.total_ns}, {"means", means}});
        }
        out.push_back({{"pid", s.pid},
                       {"rank", s.process.rank},
                       {"device", s.device},
                       {"set", s.set},
                       {"chip", s.chip},
                       {"interval_ns", s.interval_ns},
                       {"samples", s.samples},
                       {"first_ns", s.first_ns},
                       {"last_ns", s.last_ns},
                       {"sampled_ns", s.sampled_ns},
                       {"kernel_ns", s.busy_ns},
                       {"metrics", metrics},
                       {"nvtx_ranges", ranges}});
    }
    return out;
}

Table gpu_metrics_sum(const Aggregate& agg) {
    Table t;
    t.name = "gpu_metrics_sum";
    t.columns = {{"pid", "PID", ColumnKind::Count},          {"device", "Device", ColumnKind::Count},
                 {"set", "Set", ColumnKind::Text},           {"metric", "Metric", ColumnKind::Text},
                 {"unit", "Unit", ColumnKind::Text},         {"samples", "Samples", ColumnKind::Count},
                 {"mean", "Mean", ColumnKind::Number, 3},    {"p50", "p50", ColumnKind::Number, 3},
                 {"p90", "p90", ColumnKind::Number, 3},      {"max", "Max", ColumnKind::Number, 3},
                 {"mean_while_kernels_ran", "While kernels ran", ColumnKind::Number, 3},
                 {"label", "Label", ColumnKind::Text}};
    auto cell = [](double v) { return std::isnan(v) ? Cell{} : Cell{v}; };
    for (const GpuMetricsSummary& s : agg.gpu_metrics)
        for (const auto& m : s.metrics)
            t.rows.push_back({static_cast<int64_t>(s.pid), static_cast<int64_t>(s.device), s.set, m.metric,
                              std::string(unit_name(m.label.unit)), static_cast<int64_t>(m.samples), cell(m.mean),
                              cell(m.p50), cell(m.p90), cell(m.max), cell(m.busy_mean), m.label.label});
    return t;
}

}  // namespace gprof::report
