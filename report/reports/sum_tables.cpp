// The summary-style tables (nsys stats' *_sum reports and the nvprof sections as one table), from the streamed
// aggregate.
#include "reports/reports.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include "model/names.h"
#include "model/resolved_call_sites.h"
#include "output/cli_options.h"
#include "output/suggest.h"
#include "output/text.h"
#include "gprof/trace/names.h"
#include "gprof/version.h"
#include "reports/key_lists.h"

namespace gprof::report {

using namespace gprof::trace;
using nlohmann::json;

std::string display_name(const KeyData& k) { return k.category == KeyCategory::Kernel ? demangle(k.name) : k.name; }

namespace {

uint64_t total_of(const std::vector<const KeyData*>& keys) {
    uint64_t t = 0;
    for (auto* k : keys) t += k->time_stats.total;
    return t;
}

std::vector<Column> time_stat_columns(const char* count_key, const char* count_title) {
    return {
        {"time_percent", "Time (%)", ColumnKind::Percent},
        {"total_time_ns", "Total Time ({unit})", ColumnKind::TimeNs},
        {count_key, count_title, ColumnKind::Count},
        {"avg_ns", "Avg ({unit})", ColumnKind::TimeNs},
        {"med_ns", "Med ({unit})", ColumnKind::TimeNs},
        {"min_ns", "Min ({unit})", ColumnKind::TimeNs},
        {"max_ns", "Max ({unit})", ColumnKind::TimeNs},
        {"stddev_ns", "StdDev ({unit})", ColumnKind::TimeNs},
    };
}

std::vector<Cell> time_stat_cells(const Stats& s, uint64_t section_total) {
    double pct = section_total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(section_total) : 0.0;
    return {pct,
            static_cast<int64_t>(s.total),
            static_cast<int64_t>(s.count),
            s.mean,
            s.median,
            static_cast<int64_t>(s.min),
            static_cast<int64_t>(s.max),
            s.stddev};
}

Table time_sum(const std::string& name, const std::vector<const KeyData*>& keys, const char* count_key,
               const char* count_title, const std::vector<Column>& tail_cols,
               const std::function<std::vector<Cell>(const KeyData&)>& tail) {
    Table t;
    t.name = name;
    t.columns = time_stat_columns(count_key, count_title);
    t.columns.insert(t.columns.end(), tail_cols.begin(), tail_cols.end());
    uint64_t total = total_of(keys);
    for (const auto* k : keys) {
        auto row = time_stat_cells(k->time(), total);
        auto extra = tail(*k);
        row.insert(row.end(), extra.begin(), extra.end());
        t.rows.push_back(std::move(row));
    }
    return t;
}


}  // namespace

std::vector<const KeyData*> memops(const Aggregate& agg) {
    auto a = agg.of(KeyCategory::Memcpy);
    auto b = agg.of(KeyCategory::Memset);
    a.insert(a.end(), b.begin(), b.end());
    std::stable_sort(a.begin(), a.end(), [](const KeyData* x, const KeyData* y) {
        uint64_t tx = x->time_stats.total, ty = y->time_stats.total;
        return tx != ty ? tx > ty : x->name < y->name;
    });
    return a;
}

// GPU activities (kernels, memory ops and graph launches that stand for their work), sorted by time: nvprof's
// section.
std::vector<const KeyData*> gpu_activities(const Aggregate& agg) {
    auto a = agg.of(KeyCategory::Kernel);
    auto m = memops(agg);
    auto g = agg.of(KeyCategory::Graph);
    a.insert(a.end(), m.begin(), m.end());
    a.insert(a.end(), g.begin(), g.end());
    std::stable_sort(a.begin(), a.end(), [](const KeyData* x, const KeyData* y) {
        uint64_t tx = x->time_stats.total, ty = y->time_stats.total;
        return tx != ty ? tx > ty : x->name < y->name;
    });
    return a;
}

// ----- summary-style tables --------------------------------------------------------------------------------

Table cuda_api_sum(const Aggregate& agg) {
    return time_sum("cuda_api_sum", agg.of(KeyCategory::Api), "num_calls", "Num Calls",
                    {{"name", "Name", ColumnKind::Text}}, [](const KeyData& k) { return std::vector<Cell>{k.name}; });
}

Table cuda_gpu_kern_sum(const Aggregate& agg) {
    return time_sum("cuda_gpu_kern_sum", agg.of(KeyCategory::Kernel), "instances", "Instances",
                    {{"name", "Name", ColumnKind::Text}},
                    [](const KeyData& k) { return std::vector<Cell>{demangle(k.name)}; });
}

Table cuda_gpu_mem_time_sum(const Aggregate& agg) {
    return time_sum("cuda_gpu_mem_time_sum", memops(agg), "count", "Count", {{"operation", "Operation", ColumnKind::Text}},
                    [](const KeyData& k) { return std::vector<Cell>{k.memop}; });
}

Table cuda_gpu_mem_size_sum(const Aggregate& agg) {
    Table t;
    t.name = "cuda_gpu_mem_size_sum";
    t.columns = {{"total_bytes", "Total (MB)", ColumnKind::BytesMB}, {"count", "Count", ColumnKind::Count},
                 {"avg_bytes", "Avg (MB)", ColumnKind::BytesMB},     {"med_bytes", "Med (MB)", ColumnKind::BytesMB},
                 {"min_bytes", "Min (MB)", ColumnKind::BytesMB},     {"max_bytes", "Max (MB)", ColumnKind::BytesMB},
                 {"stddev_bytes", "StdDev (MB)", ColumnKind::BytesMB}, {"operation", "Operation", ColumnKind::Text}};
    auto keys = memops(agg);
    std::vector<std::pair<Stats, const KeyData*>> rows;
    for (auto* k : keys) rows.emplace_back(k->size(), k);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a.first.total != b.first.total ? a.first.total > b.first.total : a.second->name < b.second->name;
    });
    for (const auto& [s, k] : rows)
        t.rows.push_back({static_cast<int64_t>(s.total), static_cast<int64_t>(s.count), s.mean, s.median,
                          static_cast<int64_t>(s.min), static_cast<int64_t>(s.max), s.stddev, k->memop});
    return t;
}

Table nvtx_sum(const Aggregate& agg) {
    return time_sum("nvtx_sum", agg.of(KeyCategory::Nvtx), "instances", "Instances",
                    {{"style", "Style", ColumnKind::Text}, {"range", "Range", ColumnKind::Text}},
                    [](const KeyData& k) { return std::vector<Cell>{k.nvtx_style, k.name}; });
}

Table cuda_gpu_sum(const Aggregate& agg) {
    return time_sum("cuda_gpu_sum", gpu_activities(agg), "instances", "Instances",
                    {{"category", "Category", ColumnKind::Text}, {"operation", "Operation", ColumnKind::Text}},
                    [](const KeyData& k) {
                        bool kernel = k.category == KeyCategory::Kernel;
                        const char* category = kernel                                 ? "CUDA_KERNEL"
                                               : k.category == KeyCategory::Graph ? "CUDA_GRAPH"
                                                                                    : "MEMORY_OPER";
                        return std::vector<Cell>{std::string(category), kernel ? demangle(k.name) : k.memop};
                    });
}

Table summary_table(const Aggregate& agg) {
    Table t;
    t.name = "summary";
    t.columns = {{"type", "Type", ColumnKind::Text},       {"time_percent", "Time(%)", ColumnKind::Percent},
                 {"total_time_ns", "Time ({unit})", ColumnKind::TimeNs}, {"calls", "Calls", ColumnKind::Count},
                 {"avg_ns", "Avg ({unit})", ColumnKind::TimeNs},  {"min_ns", "Min ({unit})", ColumnKind::TimeNs},
                 {"max_ns", "Max ({unit})", ColumnKind::TimeNs},  {"name", "Name", ColumnKind::Text}};
    auto section = [&](const char* type, const std::vector<const KeyData*>& keys) {
        uint64_t total = total_of(keys);
        for (auto* k : keys) {
            Stats s = k->time();
            double pct = total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(total) : 0.0;
            t.rows.push_back({std::string(type), pct, static_cast<int64_t>(s.total), static_cast<int64_t>(s.count),
                              s.mean, static_cast<int64_t>(s.min), static_cast<int64_t>(s.max), display_name(*k)});
        }
    };
    section("GPU activities", gpu_activities(agg));
    section("API calls", agg.of(KeyCategory::Api));
    section("NVTX ranges", agg.of(KeyCategory::Nvtx));
    return t;
}

}  // namespace gprof::report
