// The GPU metrics of aggregate_run, at the end of each trace: each device's samples (kept by the fold in file order)
// summarised with the device's kernel time and the trace's NVTX ranges (model/gpu_metric_summary.h).
#include <unordered_map>

#include "model/aggregator.h"

namespace gprof::report::aggregation {

void Aggregator::finish_gpu_metrics(const ProcessInfo& p, const StreamContext& ctx) {
    std::vector<std::string> lines;
    gpu_metrics_.warnings(lines);
    for (const std::string& w : lines) out_.warnings.push_back(trace_label(p.path) + ": " + w);
    // The rows of the NVTX ranges: one per domain:name, as the summary's NVTX section names them.
    std::vector<std::string> row_names;
    std::vector<uint32_t> row_of_group(groups_.groups.size());
    if (!gpu_metrics_.series.empty()) {
        std::unordered_map<std::string, uint32_t> rows;
        for (size_t g = 0; g < groups_.groups.size(); ++g) {
            const RangeGroupKey& k = groups_.groups[g].key;
            std::string name = std::string(k.domain ? strings_.get(k.domain) : std::string_view()) + ":" +
                               std::string(strings_.get(k.name));
            auto [it, added] = rows.emplace(name, static_cast<uint32_t>(row_names.size()));
            if (added) row_names.push_back(std::move(name));
            row_of_group[g] = it->second;
        }
    }
    for (const GpuMetricSeries& series : gpu_metrics_.series) {
        GpuMetricsSummarizer summarizer(series);
        auto busy = kernel_time_.find(series.device);
        if (busy != kernel_time_.end()) summarizer.add_busy(busy->second);
        for (const KeptBatch& batch : kept_)
            for (const RangeStream& stream : batch.ranges)
                stream.for_each([&](Timestamp start, Timestamp end, uint32_t group) {
                    if (group < batch.groups.size() && batch.groups[group] < row_of_group.size())
                        summarizer.add_range(start, end, row_of_group[batch.groups[group]]);
                });
        GpuMetricsSummary s = summarizer.finish(row_names);
        s.process = process_key(p.header, p.rank);
        s.pid = p.header.pid;
        s.set = std::string(strings_.get(series.name));
        s.chip = std::string(strings_.get(series.chip));
        if (series.samples()) {
            s.first_ns = ctx.to_run_ns(series.first_start());
            s.last_ns = ctx.to_run_ns(series.last_end());
        }
        out_.gpu_metrics.push_back(std::move(s));
    }
    gpu_metrics_ = GpuMetrics();
    kernel_time_.clear();
}

}  // namespace gprof::report::aggregation
