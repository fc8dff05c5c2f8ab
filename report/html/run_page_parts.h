// The parts of the run report (report.html) shared by its two files: run_page.cpp (the frame, the verdict and the
// utilisation) and run_sections.cpp (the tables: kernels, copies, memory, steps, NVTX, API calls, call sites,
// processes). Not for use outside html/.
#pragma once

#include <algorithm>
#include <ctime>
#include <optional>
#include <set>
#include <sstream>
#include "html/escape.h"
#include "html/html.h"
#include "html/page.h"
#include "html/svg.h"
#include "output/table.h"
#include "reports/reports.h"

namespace gprof::report::html::run_page {

inline std::string T(double ns) { return escape(format_time_auto(ns)); }
inline std::string pct(double v, int decimals = 1) { return format_fixed(v, decimals) + "%"; }
inline std::string B(uint64_t bytes) { return escape(format_bytes(bytes)); }
// Decimal units, like nsys's throughput columns: "13.19 GB/s", "4.00 MB/s".
inline std::string bandwidth(double gb_per_s) {
    if (gb_per_s >= 1 || gb_per_s == 0) return format_fixed(gb_per_s, 2) + " GB/s";
    if (gb_per_s >= 1e-3) return format_fixed(gb_per_s * 1e3, 2) + " MB/s";
    return format_fixed(gb_per_s * 1e6, 2) + " kB/s";
}
inline std::string count(uint64_t n) {
    // Thin spaces between thousands, never a locale's separator: "10 218".
    std::string d = std::to_string(n), out;
    for (size_t i = 0; i < d.size(); ++i) {
        if (i && (d.size() - i) % 3 == 0) out += "\xE2\x80\x89";
        out += d[i];
    }
    return out;
}
inline std::string plural(uint64_t n, const char* one, const char* many) { return count(n) + " " + (n == 1 ? one : many); }

inline std::string utc_date(int64_t realtime_ns) {
    if (realtime_ns <= 0) return "";
    std::time_t secs = static_cast<std::time_t>(realtime_ns / 1'000'000'000);
    std::tm tm{};
    if (!::gmtime_r(&secs, &tm)) return "";
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

inline std::string device_title(const DeviceKey& k, const std::string& name, bool several_hosts) {
    std::string s = "GPU " + std::to_string(k.device);
    if (!name.empty()) s += " \xC2\xB7 " + escape(name);
    if (several_hosts && !k.host.empty()) s += " \xC2\xB7 " + escape(k.host);
    return s;
}

// The process gprof-run started: the first whose parent is not itself traced.
inline const ProcessInfo* root_process(const Aggregate& agg) {
    std::set<int64_t> pids;
    for (const auto& p : agg.processes) pids.insert(p.header.pid);
    for (const auto& p : agg.processes)
        if (!pids.count(p.header.ppid)) return &p;
    return agg.processes.empty() ? nullptr : &agg.processes.front();
}

inline std::string command_line(const ProcessInfo& p) {
    std::string s;
    for (const auto& a : p.header.argv) s += (s.empty() ? "" : " ") + a;
    return s.empty() ? p.header.executable : s;
}

inline std::string stats_cells(SortableTable& t, const Stats& st) {
    t.num(T(static_cast<double>(st.total)), static_cast<double>(st.total))
        .num(count(st.count), static_cast<double>(st.count))
        .num(T(st.mean), st.mean)
        .num(T(static_cast<double>(st.min)), static_cast<double>(st.min))
        .num(T(st.median), st.median)
        .num(T(static_cast<double>(st.max)), static_cast<double>(st.max));
    return {};
}

inline void stats_columns(SortableTable& t, const char* count_title) {
    t.column("Total").column(count_title).column("Avg").column("Min").column("Median").column("Max");
}

inline std::string more_rows(const Table& t, const char* what, const char* report) {
    if (t.rows.size() >= t.total_rows) return "";
    return "<p class=\"note\">The " + std::to_string(t.rows.size()) + " " + what + " with the most time of " +
           count(t.total_rows) + "; <code>gprof-report " + report + " RUN</code> lists them all.</p>";
}

std::string kernels_section(const RunPageInputs& in, const Limits& limits);
std::string memops_section(const RunPageInputs& in);
std::string memory_section(const RunPageInputs& in, const Limits& limits);
// GPU metrics over time (gpu_metrics_section.cpp): "" for a run without them.
std::string gpu_metrics_section(const RunPageInputs& in, const Limits& limits);
std::string steps_section(const RunPageInputs& in, const Limits& limits);
std::string nvtx_section(const RunPageInputs& in, const Limits& limits);
std::string api_section(const RunPageInputs& in, const Limits& limits);
std::string call_sites_section(const RunPageInputs& in, const Limits& limits);
std::string cpu_section(const RunPageInputs& in, const Limits& limits);
std::string processes_section(const RunPageInputs& in, const Limits& limits);

}  // namespace gprof::report::html::run_page
