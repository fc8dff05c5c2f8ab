// report.html's "GPU metrics" section (issue 37), under the utilisation chart: per process and device sampled, its
// shares of peak over time (one line each, binned like the other charts over the time the samples cover) and the
// summary's figures per metric (model/gpu_metric_summary.h). Nothing for a run without GPU metrics: the section,
// its link and its colours exist only then, so every other page stays as it was.
#include <cmath>

#include "html/run_page_parts.h"

namespace gprof::report::html::run_page {

namespace {

// The lines' colours, light and dark, kept with the section (the page's CSS is the same for every run).
constexpr const char* kMetricStyle =
    "<style>:root{--m0:#1f9d6b;--m1:#d97706;--m2:#2f6fde;--m3:#c026d3}"
    "@media (prefers-color-scheme:dark){:root{--m0:#3ccf91;--m1:#f0a030;--m2:#6b9cff;--m3:#e879f9}}"
    ".chart .series.m0{stroke:var(--m0)}.chart .series.m1{stroke:var(--m1)}.chart .series.m2{stroke:var(--m2)}"
    ".chart .series.m3{stroke:var(--m3)}.legend .m0{background:var(--m0)}.legend .m1{background:var(--m1)}"
    ".legend .m2{background:var(--m2)}.legend .m3{background:var(--m3)}</style>";
constexpr size_t kChartedShares = 4;

// The time-weighted mean of each bin's samples, as a share 0..1; a bin without a value (a sample lacking it, samples
// lost) keeps the bin before's, as the timeline's counters do.
std::vector<double> binned_share(const GpuMetricSeries& s, size_t metric, const ProcessTrace& p, int64_t x0,
                                 int64_t bin, size_t bins) {
    std::vector<double> sum(bins, 0.0), weight(bins, 0.0);
    for (size_t i = 0; i < s.samples(); ++i) {
        const double v = s.value(i, metric);
        if (!std::isfinite(v) || s.ends[i] <= s.starts[i]) continue;
        int64_t a = p.to_run_ns(s.starts[i]) - x0, b = p.to_run_ns(s.ends[i]) - x0;
        if (b <= 0 || a >= bin * static_cast<int64_t>(bins)) continue;
        a = std::max<int64_t>(a, 0);
        for (int64_t k = a / bin; k < static_cast<int64_t>(bins) && k * bin < b; ++k) {
            const double w = static_cast<double>(std::min(b, (k + 1) * bin) - std::max(a, k * bin));
            if (w <= 0) continue;
            sum[static_cast<size_t>(k)] += v * w;
            weight[static_cast<size_t>(k)] += w;
        }
    }
    std::vector<double> out(bins, 0.0);
    for (size_t k = 0; k < bins; ++k)
        out[k] = weight[k] > 0 ? std::clamp(sum[k] / weight[k] / 100.0, 0.0, 1.0) : k ? out[k - 1] : 0.0;
    return out;
}

const GpuMetricsSummary* summary_of(const Aggregate& agg, const ProcessTrace& p, uint32_t device) {
    for (const auto& s : agg.gpu_metrics)
        if (s.pid == p.pid() && s.process.host == p.header.hostname && s.device == device) return &s;
    return nullptr;
}

}  // namespace

std::string gpu_metrics_section(const RunPageInputs& in, const Limits& limits) {
    std::string s;
    std::set<std::string> hosts;
    for (const auto& p : in.run->processes) hosts.insert(p.header.hostname);
    size_t processes = 0;
    for (const auto& p : in.run->processes) processes += p.gpu_metrics.series.empty() ? 0 : 1;
    for (const ProcessTrace& p : in.run->processes)
        for (const GpuMetricSeries& series : p.gpu_metrics.series) {
            if (!series.samples()) continue;
            int64_t x0 = p.to_run_ns(series.first_start());
            int64_t x1 = p.to_run_ns(series.last_end());
            if (x1 <= x0) continue;
            std::vector<size_t> shares;
            for (size_t m = 0; m < series.metrics.size() && shares.size() < kChartedShares; ++m)
                if (gpu_metric_label(series.metrics[m]).unit == GpuMetricUnit::Percent) shares.push_back(m);
            const size_t bins = std::max<size_t>(limits.bins, 1);
            const int64_t bin = std::max<int64_t>((x1 - x0 + static_cast<int64_t>(bins) - 1) / static_cast<int64_t>(bins), 1);
            TimeChart c;
            std::string device_name;
            for (const trace::Device& d : p.devices)
                if (d.id == series.device) device_name = p.str(d.name);
            std::string title = device_title({p.header.hostname, series.device}, device_name, hosts.size() > 1);
            if (processes > 1) title += " \xC2\xB7 pid " + std::to_string(p.pid());
            c.aria_label = "GPU metrics over time, " + title;
            c.x0 = x0;
            c.x1 = x1;
            c.bin = bin;
            c.y = percent_axis();
            c.value_format = "pct";
            c.height = 140;
            std::string legend = "<div class=\"legend\">";
            for (size_t i = 0; i < shares.size(); ++i) {
                const std::string label = escape(gpu_metric_label(series.metrics[shares[i]]).label);
                c.series.push_back({binned_share(series, shares[i], p, x0, bin, static_cast<size_t>((x1 - x0 + bin - 1) / bin)),
                                    "m" + std::to_string(i), false, label});
                legend += "<span><i class=\"m" + std::to_string(i) + "\"></i>" + label + "</span>";
            }
            legend += "</div>";
            const GpuMetricsSummary* sum = in.aggregate ? summary_of(*in.aggregate, p, series.device) : nullptr;
            std::string sub = escape(p.str(series.chip)) + ", set " + escape(p.str(series.name)) + ", " +
                              plural(series.samples(), "sample", "samples") + " every " +
                              T(static_cast<double>(series.interval_ns));
            if (sum) sub += "; kernels ran " + T(static_cast<double>(sum->busy_ns)) + " of the " +
                            T(static_cast<double>(sum->sampled_ns)) + " sampled";
            s += "<div class=\"device\"><h3>" + title + " <span class=\"sub\">" + sub + "</span></h3>" + legend +
                 (shares.empty() ? std::string() : time_chart(c));
            if (sum) {
                SortableTable t;
                t.column("Metric", SortableTable::Sort::Text)
                    .column("Mean")
                    .column("p50")
                    .column("p90")
                    .column("Max")
                    .column("While kernels ran", SortableTable::Sort::Number,
                            "each sample weighed by the kernel time inside it");
                auto cell = [&](const GpuMetricFigures& f, double v) {
                    t.num(escape(format_gpu_metric(f.label.unit, v)), std::isfinite(v) ? v : -1);
                };
                for (const GpuMetricFigures& f : sum->metrics) {
                    t.row().cell("<span class=\"name\">" + escape(f.label.label) + "</span>");
                    cell(f, f.mean);
                    cell(f, f.p50);
                    cell(f, f.p90);
                    cell(f, f.max);
                    cell(f, f.busy_mean);
                }
                s += t.html();
            }
            s += "</div>";
        }
    if (s.empty()) return "";
    return section("gpumetrics", "GPU metrics over time",
                   "How busy each sampled device's SMs, tensor cores and memory were (PM sampling, "
                   "--gpu-metrics-devices): the mean of the samples in each bin, then per metric over the run and "
                   "while kernels ran. Times are since the run started.",
                   kMetricStyle + s);
}

}  // namespace gprof::report::html::run_page
