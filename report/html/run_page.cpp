// The run report: verdict, utilisation, kernels, copies, memory, steps, NVTX, API calls, call sites (when recorded),
// processes and devices, in the order a newcomer asks about them (issue #20), with what went wrong in recording
// (dropped records, damaged traces) at the top where nobody can miss it.
#include <algorithm>
#include <ctime>
#include <optional>
#include <set>
#include <sstream>

#include "gprof/version.h"
#include "html/escape.h"
#include "html/html.h"
#include "html/page.h"
#include "html/svg.h"
#include "output/table.h"
#include "reports/reports.h"

namespace gprof::report::html {

namespace {

std::string T(double ns) { return escape(format_time_auto(ns)); }
std::string pct(double v, int decimals = 1) { return format_fixed(v, decimals) + "%"; }
std::string B(uint64_t bytes) { return escape(format_bytes(bytes)); }
// Decimal units, like nsys's throughput columns: "13.19 GB/s", "4.00 MB/s".
std::string bandwidth(double gb_per_s) {
    if (gb_per_s >= 1 || gb_per_s == 0) return format_fixed(gb_per_s, 2) + " GB/s";
    if (gb_per_s >= 1e-3) return format_fixed(gb_per_s * 1e3, 2) + " MB/s";
    return format_fixed(gb_per_s * 1e6, 2) + " kB/s";
}
std::string count(uint64_t n) {
    // Thin spaces between thousands, never a locale's separator: "10 218".
    std::string d = std::to_string(n), out;
    for (size_t i = 0; i < d.size(); ++i) {
        if (i && (d.size() - i) % 3 == 0) out += "\xE2\x80\x89";
        out += d[i];
    }
    return out;
}
std::string plural(uint64_t n, const char* one, const char* many) { return count(n) + " " + (n == 1 ? one : many); }

std::string utc_date(int64_t realtime_ns) {
    if (realtime_ns <= 0) return "";
    std::time_t secs = static_cast<std::time_t>(realtime_ns / 1'000'000'000);
    std::tm tm{};
    if (!::gmtime_r(&secs, &tm)) return "";
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

std::string device_title(const DeviceKey& k, const std::string& name, bool several_hosts) {
    std::string s = "GPU " + std::to_string(k.device);
    if (!name.empty()) s += " \xC2\xB7 " + escape(name);
    if (several_hosts && !k.host.empty()) s += " \xC2\xB7 " + escape(k.host);
    return s;
}

// The process gprof-run started: the first whose parent is not itself traced.
const ProcessInfo* root_process(const Aggregate& agg) {
    std::set<int64_t> pids;
    for (const auto& p : agg.processes) pids.insert(p.header.pid);
    for (const auto& p : agg.processes)
        if (!pids.count(p.header.ppid)) return &p;
    return agg.processes.empty() ? nullptr : &agg.processes.front();
}

std::string command_line(const ProcessInfo& p) {
    std::string s;
    for (const auto& a : p.header.argv) s += (s.empty() ? "" : " ") + a;
    return s.empty() ? p.header.executable : s;
}

// ----- sections ---------------------------------------------------------------------------------------------------

std::string header(const RunPageInputs& in, const ProcessInfo* root) {
    const Aggregate& agg = *in.aggregate;
    std::string cmd = root ? command_line(*root) : std::string("(no readable trace)");
    std::set<std::string> hosts;
    for (const auto& p : agg.processes) hosts.insert(p.header.hostname);
    std::string host_text;
    for (const auto& h : hosts) host_text += (host_text.empty() ? "" : ", ") + escape(h);
    std::string s = "<header class=\"top\"><div class=\"meta\">gprof-run report</div><h1 title=\"" + escape(cmd) +
                    "\">" + escape(shorten_name(cmd, 160)) + "</h1><div class=\"meta\">";
    std::string date = utc_date(in.run->base_realtime_ns);
    std::vector<std::string> parts;
    if (!date.empty()) parts.push_back("recorded " + date);
    if (!host_text.empty()) parts.push_back("on " + host_text);
    parts.push_back(T(static_cast<double>(agg.last_ns - agg.first_ns)) + " captured");
    parts.push_back(plural(agg.processes.size(), "process", "processes"));
    parts.push_back(plural(agg.devices.size(), "device", "devices"));
    parts.push_back(plural(agg.records, "record", "records"));
    parts.push_back(plural(agg.dropped, "dropped", "dropped"));
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? " \xC2\xB7 " : "") + parts[i];
    if (!in.source.empty()) s += "<br><span class=\"mono\">" + escape(in.source) + "</span>";
    return s + "</div></header>\n";
}

std::vector<std::string> recording_problems(const RunPageInputs& in) {
    const Aggregate& agg = *in.aggregate;
    std::vector<std::string> lines;
    auto add = [&](const std::string& l) {
        if (std::find(lines.begin(), lines.end(), l) == lines.end()) lines.push_back(l);
    };
    // One line per fact: dropped records, damage and a missing end record are in agg.warnings already, once per
    // trace with their figures (the reader's and the aggregate's words), so they are not said again here.
    for (const auto& w : agg.warnings) add(w);
    for (const auto& p : agg.processes)
        for (const auto& line : p.status_lines)
            if (line.find(" info: ") == std::string::npos) add(trace_label(p.path) + ": " + line);
    if (!in.analysis) add("analysis not available: " + in.analysis_error);
    return lines;
}

std::string alert(const std::vector<std::string>& lines) {
    if (lines.empty()) return "";
    std::string s = "<div class=\"alert\" id=\"warnings\" role=\"alert\"><h2>" +
                    plural(lines.size(), "warning", "warnings") + " about this recording</h2><ul>";
    for (const auto& l : lines) s += "<li>" + escape(l) + "</li>";
    return s + "</ul></div>\n";
}

std::string nav(const std::vector<std::pair<std::string, std::string>>& links) {
    std::string s = "<nav class=\"toc\">";
    for (const auto& [id, text] : links) s += "<a href=\"#" + id + "\">" + text + "</a>";
    return s + "</nav>\n";
}

std::string verdict_section(const RunPageInputs& in) {
    if (!in.analysis)
        return section("verdict", "Verdict", "", "<p>No verdict: " + escape(in.analysis_error) + "</p>");
    const AnalysisResult& a = *in.analysis;
    const VerdictEvidence& e = a.evidence;
    std::string s = "<div class=\"verdict " + std::string(verdict_id(a.verdict)) + "\"><div><div class=\"title\">" +
                    escape(verdict_title(a.verdict)) + "</div><div class=\"why\">" + escape(a.verdict_reason) +
                    "</div></div></div><div class=\"cards\">";
    bool gpu = a.verdict != Verdict::NoGpuWork;
    if (gpu) {
        // Both utilisations (issue 30): after start-up, which decides the verdict, and over the whole window.
        std::string cls = e.steady_busy_pct >= 80 ? "good" : e.steady_busy_pct >= 40 ? "warn" : "bad";
        s += card(pct(e.steady_busy_pct), "GPU busy after start-up (mean of devices)",
                  "Share of the time after start-up (the first " + T(static_cast<double>(e.startup_ns)) +
                      ") in which a kernel, copy or memset ran: what the verdict is decided on",
                  cls);
        s += card(pct(e.busy_pct), "GPU busy over the whole window",
                  "Share of the whole capture window, start-up included, in which a kernel, copy or memset ran");
        s += card(pct(e.idle_in_host_code_pct), "of GPU idle time the host ran its own code",
                  "What the launching thread did while the GPU was idle: outside any CUDA call");
        s += card(pct(e.idle_in_api_pct), "of GPU idle time the host was in CUDA calls",
                  "What the launching thread did while the GPU was idle: inside CUDA API calls");
        s += card(escape(format_fixed(e.launch_rate_per_s, 0)) + "/s", "kernel launches",
                  "Kernel launches per second of the capture window");
        s += card(T(e.median_launch_ns), "median launch call", "Median duration of the launch API calls");
        s += card(pct(e.tiny_kernel_pct), "kernels shorter than a launch",
                  "Kernels that ran for less time than the median launch call took: launch-bound when high",
                  e.tiny_kernel_pct >= 50 ? "warn" : "");
        s += card(pct(e.sync_blocked_pct), "host blocked in sync", "Host time blocked in synchronisation calls (busiest thread)",
                  e.sync_blocked_pct >= 25 ? "warn" : "");
        s += card(pct(e.io_pct), "data loading + blocking H\xE2\x86\x92" "D",
                  "Data-loading NVTX ranges and blocking host-to-device copies, share of step time (or of the window)",
                  e.io_pct >= 5 ? "warn" : "");
    }
    s += card(T(static_cast<double>(a.window.length())), "capture window");
    s += "</div>";
    if (!a.findings.empty()) {
        s += "<h3>Findings</h3><ul class=\"findings\">";
        for (const Finding& f : a.findings)
            s += "<li><b>" + escape(f.title) + "</b> <span class=\"mono\">" + escape(f.rule) + "</span><br>" +
                 escape(f.evidence) + "<br><span class=\"fix\">Fix: " + escape(f.fix) + "</span></li>";
        s += "</ul>";
    }
    return section("verdict", "Verdict", "", s);
}

std::string gap_tip(const IdleGap& g) {
    std::string t = "GPU idle " + format_time_auto(static_cast<double>(g.duration())) + ", " +
                    format_time_auto(static_cast<double>(g.start)) + " \xE2\x80\x93 " +
                    format_time_auto(static_cast<double>(g.end));
    for (const ThreadActivity& a : g.threads) {
        t += "\npid " + std::to_string(a.pid) + " tid " + std::to_string(a.tid);
        if (!a.thread_name.empty()) t += " [" + a.thread_name + "]";
        t += ": " + a.top_activity + " " + format_time_auto(static_cast<double>(a.top_ns));
        if (!a.range.empty()) t += ", in NVTX range '" + a.range + "'";
    }
    return escape(t);
}

std::string utilisation_section(const RunPageInputs& in, const Limits& limits) {
    if (!in.analysis) return "";
    Utilisation u = utilisation(*in.run, *in.analysis, limits);
    if (u.devices.empty())
        return section("utilisation", "GPU utilisation over time", "",
                       "<p>No kernel, copy or memset was recorded: nothing ran on a GPU in the capture window.</p>");
    std::set<std::string> hosts;
    for (const auto& d : u.devices) hosts.insert(d.key.host);
    std::string s = "<div class=\"legend\"><span><i class=\"busy\"></i>share of each " +
                    T(static_cast<double>(u.bin_ns)) +
                    " bin the GPU was busy</span><span><i class=\"gap\"></i>largest idle gaps (hover: what the host "
                    "did)</span></div>";
    // Programs often spend most of the window starting up (imports, compilation, data) and do their GPU work in the
    // last part: then a second chart per device zooms to where the GPU work ran, where its pattern shows.
    std::optional<Utilisation> zoom;
    if (u.active.length() > 0 && u.active.length() < u.window.length() - u.active.length()) {  // twice, no overflow
        AnalysisResult narrowed = *in.analysis;
        narrowed.window = u.active;
        zoom = utilisation(*in.run, narrowed, limits);
    }
    auto chart = [&](const Utilisation& src, const DeviceBusy& d, int height) {
        TimeChart c;
        c.aria_label = "GPU utilisation over time, " + device_title(d.key, d.name, hosts.size() > 1);
        c.x0 = src.window.start;
        c.x1 = src.window.end;
        c.bin = src.bin_ns;
        c.y = percent_axis();
        c.value_format = "pct";
        c.height = height;
        c.series.push_back({std::vector<double>(d.busy.begin(), d.busy.end()), "busy", true, "busy"});
        for (const IdleGap& g : d.gaps)
            if (g.end > src.window.start && g.start < src.window.end) c.spans.push_back({g.start, g.end, "gap", gap_tip(g)});
        return time_chart(c);
    };
    for (size_t i = 0; i < u.devices.size(); ++i) {
        const DeviceBusy& d = u.devices[i];
        s += "<div class=\"device\"><h3>" + device_title(d.key, d.name, hosts.size() > 1) + " <span class=\"sub\">busy " +
             pct(d.busy_pct) + " of " + T(static_cast<double>(u.window.length())) + "</span></h3>" + chart(u, d, 120);
        if (zoom && i < zoom->devices.size())
            s += "<p class=\"note\">Zoomed to where 98% of the GPU work ran, " + T(static_cast<double>(u.active.start)) +
                 " \xE2\x80\x93 " + T(static_cast<double>(u.active.end)) + " (" +
                 pct(100.0 * static_cast<double>(u.active.length()) / static_cast<double>(u.window.length())) +
                 " of the window):</p>" + chart(*zoom, zoom->devices[i], 120);
        s += "</div>";
    }
    if (!in.analysis->gaps.empty()) {
        SortableTable t;
        t.column("GPU", SortableTable::Sort::Text)
            .column("Idle")
            .column("From")
            .column("What the host did", SortableTable::Sort::Text);
        for (const IdleGap& g : in.analysis->gaps) {
            std::string what;
            for (const ThreadActivity& a : g.threads) {
                if (!what.empty()) what += "<br>";
                what += "pid " + std::to_string(a.pid) + " tid " + std::to_string(a.tid) +
                        (a.thread_name.empty() ? "" : " [" + escape(a.thread_name) + "]") + ": " +
                        escape(a.top_activity) + " " + T(static_cast<double>(a.top_ns)) +
                        (a.range.empty() ? "" : ", in NVTX range <span class=\"name\">" + escape(a.range) + "</span>");
            }
            t.row()
                .cell(escape("GPU " + std::to_string(g.device.device)))
                .num(T(static_cast<double>(g.duration())), static_cast<double>(g.duration()))
                .num(T(static_cast<double>(g.start)), static_cast<double>(g.start))
                .cell(what.empty() ? "no traced thread was active" : what);
        }
        s += "<h3>Largest idle gaps</h3>" + t.html();
    }
    return section("utilisation", "GPU utilisation over time",
                   "Each device's busy share (kernels, copies and memsets together, overlaps counted once) across "
                   "the capture window; times are since the run started.",
                   s);
}

std::string stats_cells(SortableTable& t, const Stats& st) {
    t.num(T(static_cast<double>(st.total)), static_cast<double>(st.total))
        .num(count(st.count), static_cast<double>(st.count))
        .num(T(st.mean), st.mean)
        .num(T(static_cast<double>(st.min)), static_cast<double>(st.min))
        .num(T(st.median), st.median)
        .num(T(static_cast<double>(st.max)), static_cast<double>(st.max));
    return {};
}

void stats_columns(SortableTable& t, const char* count_title) {
    t.column("Total").column(count_title).column("Avg").column("Min").column("Median").column("Max");
}

std::string more_rows(const Table& t, const char* what, const char* report) {
    if (t.rows.size() >= t.total_rows) return "";
    return "<p class=\"note\">The " + std::to_string(t.rows.size()) + " " + what + " with the most time of " +
           count(t.total_rows) + "; <code>gprof-report " + report + " RUN</code> lists them all.</p>";
}

std::string kernels_section(const RunPageInputs& in, const Limits& limits) {
    Table k = kernel_table(*in.aggregate, *in.run, limits);
    if (k.rows.empty()) return section("kernels", "Top kernels", "", "<p>No kernel was recorded.</p>");
    SortableTable t;
    t.column("#").column("Kernel", SortableTable::Sort::Text, "Hover a name for the full name and its launch shapes")
        .column("GPU time", SortableTable::Sort::Number, "Share of all GPU time (kernels, copies, memsets)");
    stats_columns(t, "Count");
    for (size_t i = 0; i < k.rows.size(); ++i) {
        const KeyRow& r = k.rows[i];
        std::string more;
        if (r.raw_name != r.name) more += r.raw_name + "\n";
        for (const LaunchConfig& c : r.configs) more += c.text + ": " + std::to_string(c.count) + "\xC3\x97\n";
        if (!more.empty()) more.pop_back();
        t.row().num(std::to_string(i + 1), static_cast<double>(i + 1)).cell(name_cell(r.name, more));
        t.num(share_bar(r.share_pct, pct(r.share_pct)), r.share_pct);
        stats_cells(t, r.time);
    }
    uint64_t kernel_ns = k.total_ns;
    std::string intro = plural(k.total_rows, "kernel", "different kernels") + ", " + T(static_cast<double>(kernel_ns)) +
                        " of GPU time in all. Shares are of all GPU time, as in the summary's GPU activities.";
    return section("kernels", "Top kernels", intro, t.html() + more_rows(k, "kernels", "cuda_gpu_kern_sum"));
}

std::string memops_section(const RunPageInputs& in) {
    Table m = memop_table(*in.aggregate);
    if (m.rows.empty()) return section("copies", "Memory copies and sets", "", "<p>No memcpy or memset was recorded.</p>");
    SortableTable t;
    t.column("Operation", SortableTable::Sort::Text)
        .column("Share", SortableTable::Sort::Number, "Share of the time of all copies and sets");
    stats_columns(t, "Count");
    t.column("Bytes").column("Avg size").column("Bandwidth", SortableTable::Sort::Number,
                                                 "Bytes moved / time spent, decimal GB/s");
    for (const KeyRow& r : m.rows) {
        t.row().cell("<span class=\"name\">" + escape(r.name) + "</span>").num(share_bar(r.share_pct, pct(r.share_pct)), r.share_pct);
        stats_cells(t, r.time);
        t.num(B(r.size.total), static_cast<double>(r.size.total))
            .num(B(static_cast<uint64_t>(r.size.mean)), r.size.mean)
            .num(bandwidth(r.bandwidth_gbs), r.bandwidth_gbs);
    }
    return section("copies", "Memory copies and sets", "By direction, like nvprof's [CUDA memcpy HtoD] rows.", t.html());
}

std::string memory_section(const RunPageInputs& in, const Limits& limits) {
    Interval window = in.analysis ? in.analysis->window : capture_window(*in.run);
    MemoryFigures f = memory_figures(*in.run, window, limits);
    if (f.devices.empty() && f.budgets.empty())
        return section("memory", "Device memory", "", "<p>No allocation was recorded.</p>");
    std::string s;
    bool pools = false;
    for (const auto& d : f.devices) pools = pools || !d.pool_reserved.empty();
    if (!f.devices.empty())
        s += "<div class=\"legend\"><span><i class=\"mem\"></i>device memory in use (cudaMalloc, async pools, module "
             "statics; the most at any moment of each " + T(static_cast<double>(f.bin_ns)) + " bin)</span>" +
             (pools ? "<span><i class=\"pool\"></i>reserved by cudaMallocAsync pools</span>" : "") + "</div>";
    for (const DeviceMemorySeries& d : f.devices) {
        TimeChart c;
        std::string title = device_title({d.host, d.device}, d.name, false);
        c.aria_label = "Device memory over time, " + title;
        c.x0 = f.window.start;
        c.x1 = f.window.end;
        c.bin = f.bin_ns;
        double top = static_cast<double>(std::max(d.peak_bytes, d.pool_reserved_peak));
        c.y = bytes_axis(top);
        c.value_format = "bytes";
        c.series.push_back({std::vector<double>(d.max_in_use.begin(), d.max_in_use.end()), "mem", true, "in use"});
        if (!d.pool_reserved.empty())
            c.series.push_back({std::vector<double>(d.pool_reserved.begin(), d.pool_reserved.end()), "pool", false,
                                "pools reserved"});
        std::string peak = "peak " + format_bytes(d.peak_bytes);
        c.points.push_back({d.peak_at, static_cast<double>(d.peak_bytes), escape(peak),
                            escape(peak + " in use at " + format_time_auto(static_cast<double>(d.peak_at)))});
        std::string sub = "peak " + B(d.peak_bytes) + " at " + T(static_cast<double>(d.peak_at));
        if (d.capacity) sub += " (" + pct(100.0 * static_cast<double>(d.peak_bytes) / static_cast<double>(d.capacity)) +
                               " of " + B(d.capacity) + ")";
        if (d.pool_reserved_peak) sub += "; pools reserved up to " + B(d.pool_reserved_peak);
        if (d.processes > 1) sub += "; " + std::to_string(d.processes) + " processes together";
        s += "<div class=\"device\"><h3>" + title + " <span class=\"sub\">" + sub + "</span></h3>" + time_chart(c) + "</div>";
    }
    if (!f.budgets.empty()) {
        SortableTable t;
        t.column("PID").column("GPU").column("Kind", SortableTable::Sort::Text).column("Allocations").column("Allocated")
            .column("Peak in use").column("Still allocated at the end");
        for (const MemoryBudgetRow& r : f.budgets)
            t.row()
                .num(std::to_string(r.pid), static_cast<double>(r.pid))
                .num(std::to_string(r.device), r.device)
                .cell(escape(r.kind))
                .num(count(r.allocations), static_cast<double>(r.allocations))
                .num(B(r.allocated_bytes), static_cast<double>(r.allocated_bytes))
                .num(B(r.peak_bytes), static_cast<double>(r.peak_bytes))
                .num(r.live_count ? B(r.live_bytes) + " in " + plural(r.live_count, "allocation", "allocations") : "none",
                     static_cast<double>(r.live_bytes));
        s += "<h3>By kind of memory</h3>" + t.html() +
             "<p class=\"note\"><code>gprof-report memory RUN</code> lists what was never freed, with its call site.</p>";
    }
    return section("memory", "Device memory", "Memory the program allocated through CUDA while it was recorded.", s);
}

std::string steps_section(const RunPageInputs& in, const Limits& limits) {
    if (!in.analysis) return "";
    const StepView& v = in.analysis->steps;
    if (v.steps.empty())
        return section("steps", "Steps", "",
                       "<p>No steps found. Mark each training step with an NVTX range named <code>step</code> "
                       "(torch.profiler's <code>ProfilerStep#N</code> and <code>iteration</code> work too), or name "
                       "yours with <code>gprof-report analyze --step-range NAME</code>.</p>");
    StepFigures f = step_figures(v, limits);
    std::string s = "<div class=\"cards\">";
    s += card(count(v.steps.size()), "steps (" + escape(v.source == "nvtx" ? "NVTX ranges" : "profiler windows") + ")");
    s += card(T(v.median), "median step");
    s += card(T(v.p90), "p90 step", "", v.p90 > 1.5 * v.median ? "warn" : "");
    s += card(T(v.mean), "mean step");
    s += card(T(v.min) + " \xE2\x80\x93 " + T(v.max), "fastest \xE2\x80\x93 slowest");
    s += card(T(v.stddev), "standard deviation");
    if (v.total_ns > 0)
        s += card(pct(100.0 * static_cast<double>(v.gpu_total_ns) / static_cast<double>(v.total_ns)),
                  "GPU busy inside steps");
    if (v.ips) s += card(escape(format_fixed(*v.ips, 1)), "items per second");
    s += "</div>";

    BarChart bars;
    bars.aria_label = "Step times";
    double top = 0;
    for (const StepBar& b : f.bars) top = std::max(top, b.count > 1 ? b.max_ns : b.mean_ns);
    bars.y = time_axis(top);
    bool binned = !f.bars.empty() && f.bars.front().count > 1;
    for (const StepBar& b : f.bars) {
        Bar bar;
        bar.value = b.mean_ns;
        bar.inner = std::min(b.gpu_mean_ns, b.mean_ns);
        std::string tip;
        if (b.count == 1) {
            const Step& st = v.steps[b.first];
            tip = "step " + std::to_string(b.first + 1) + " (" + st.name + "): " + format_time_auto(b.mean_ns) +
                  ", GPU busy " + format_time_auto(b.gpu_mean_ns) + "\nstarts at " +
                  format_time_auto(static_cast<double>(st.start));
        } else {
            bar.low = b.min_ns;
            bar.high = b.max_ns;
            tip = "steps " + std::to_string(b.first + 1) + "\xE2\x80\x93" + std::to_string(b.first + b.count) +
                  ": mean " + format_time_auto(b.mean_ns) + " (" + format_time_auto(b.min_ns) + " \xE2\x80\x93 " +
                  format_time_auto(b.max_ns) + "), GPU busy " + format_time_auto(b.gpu_mean_ns);
        }
        bar.tip = escape(tip);
        bars.bars.push_back(bar);
    }
    bars.lines.push_back({v.median, "median " + T(v.median), "median"});
    bars.x_first = "step 1";
    bars.x_last = "step " + std::to_string(v.steps.size());
    bars.x_title = binned ? "bars: mean of " + std::to_string(f.bars.front().count) + " consecutive steps, whiskers: min \xE2\x80\x93 max"
                          : "";
    s += "<div class=\"legend\"><span><i class=\"bar\"></i>step time</span><span><i class=\"bar-inner\"></i>GPU busy "
         "inside the step</span></div>" + bar_chart(bars);

    BarChart hist;
    hist.aria_label = "Distribution of step times";
    hist.height = 150;
    uint64_t most = 0;
    for (uint64_t h : f.histogram) most = std::max(most, h);
    hist.y = count_axis(static_cast<double>(most));
    double width = f.histogram.empty() ? 0 : (f.hist_max - f.hist_min) / static_cast<double>(f.histogram.size());
    for (size_t i = 0; i < f.histogram.size(); ++i) {
        Bar b;
        b.value = static_cast<double>(f.histogram[i]);
        b.tip = escape(plural(f.histogram[i], "step", "steps") + " of " +
                       format_time_auto(f.hist_min + width * static_cast<double>(i)) + " \xE2\x80\x93 " +
                       format_time_auto(f.hist_min + width * static_cast<double>(i + 1)));
        hist.bars.push_back(b);
    }
    hist.x_first = T(f.hist_min);
    hist.x_last = T(f.hist_max);
    hist.x_title = "step time";
    s += "<h3>Distribution</h3>" + bar_chart(hist);

    if (!v.modules.empty()) {
        // Paddle's model summary: where the step time goes, by the outermost NVTX ranges inside the steps.
        static const char* colours[] = {"#2f6fde", "#1f9d6b", "#d97706", "#7c5cd6", "#d92d20", "#0891b2", "#a16207",
                                        "#be185d"};
        std::string stack = "<div class=\"stack\">", legend = "<div class=\"legend\">";
        SortableTable t;
        t.column("Part", SortableTable::Sort::Text).column("Share of step time").column("CPU time").column("GPU busy").column("Calls");
        for (size_t i = 0; i < v.modules.size(); ++i) {
            const StepModule& m = v.modules[i];
            double share = v.total_ns ? 100.0 * static_cast<double>(m.cpu_ns) / static_cast<double>(v.total_ns) : 0;
            std::string colour = m.name == "Others" ? "var(--line)" : colours[i % std::size(colours)];
            stack += "<span style=\"width:" + trim_number(share, 2) + "%;background:" + colour + "\" title=\"" +
                     escape(m.name + ": " + format_fixed(share, 1) + "% of step time") + "\"></span>";
            legend += "<span><i style=\"background:" + colour + "\"></i>" + escape(shorten_name(m.name, 40)) + "</span>";
            t.row()
                .cell(name_cell(m.name))
                .num(share_bar(share, pct(share)), share)
                .num(T(static_cast<double>(m.cpu_ns)), static_cast<double>(m.cpu_ns))
                .num(T(static_cast<double>(m.gpu_ns)), static_cast<double>(m.gpu_ns))
                .num(count(m.calls), static_cast<double>(m.calls));
        }
        s += "<h3>Inside the steps</h3>" + stack + "</div>" + legend + "</div>" + t.html();
    }
    std::string intro = "From " + std::string(v.source == "nvtx" ? "NVTX ranges matching <code>" + escape(v.pattern) + "</code>"
                                                                 : "cudaProfilerStart/Stop windows") + ".";
    return section("steps", "Steps", intro, s);
}

std::string nvtx_section(const RunPageInputs& in, const Limits& limits) {
    Table n = nvtx_table(*in.aggregate, limits);
    if (n.rows.empty()) return section("nvtx", "NVTX ranges", "", "<p>No NVTX range was recorded.</p>");
    SortableTable t;
    t.column("Range", SortableTable::Sort::Text, "domain:name; :name is the default domain")
        .column("Share", SortableTable::Sort::Number, "Share of the time of all ranges (nested ranges count in each)");
    stats_columns(t, "Instances");
    for (const KeyRow& r : n.rows) {
        t.row().cell(name_cell(r.name)).num(share_bar(r.share_pct, pct(r.share_pct)), r.share_pct);
        stats_cells(t, r.time);
    }
    return section("nvtx", "NVTX ranges", "As nsys's nvtx_sum: <code>:name</code> is the default domain.",
                   t.html() + more_rows(n, "ranges", "nvtx_sum"));
}

std::string api_section(const RunPageInputs& in, const Limits& limits) {
    Table a = api_table(*in.aggregate, limits);
    if (a.rows.empty()) return "";
    SortableTable t;
    t.column("Call", SortableTable::Sort::Text).column("Share");
    stats_columns(t, "Calls");
    for (const KeyRow& r : a.rows) {
        t.row().cell("<span class=\"name\">" + escape(r.name) + "</span>").num(share_bar(r.share_pct, pct(r.share_pct)), r.share_pct);
        stats_cells(t, r.time);
    }
    std::string note;
    if (in.aggregate->hidden_driver_calls)
        note = "<p class=\"note\">" + count(in.aggregate->hidden_driver_calls) +
               " driver calls the CUDA runtime made itself are left out (<code>--cuda-nested-driver-calls</code> "
               "shows them).</p>";
    return section("api", "CUDA API calls", "Host time inside CUDA calls, as nvprof's API calls section.",
                   t.html() + note + more_rows(a, "calls", "cuda_api_sum"));
}

// The program's lines behind the GPU work, when the run recorded call sites (gprof-run --backtrace or
// --cudabacktrace): cuda_callsite_sum's first rows, the stack on hover. No section when none were recorded.
std::string call_sites_section(const RunPageInputs& in, const Limits& limits) {
    bool any = false;
    for (const auto& p : in.run->processes) any = any || !p.backtraces.empty();
    if (!any) return "";
    nlohmann::json j = callsite_report_json(*in.run);
    const auto& rows = j["rows"];
    if (!rows.is_array() || rows.empty()) return "";
    SortableTable t;
    t.column("Call site", SortableTable::Sort::Text, "The program's own frame calling CUDA; hover for its stack")
        .column("Function", SortableTable::Sort::Text)
        .column("API calls")
        .column("Kernel GPU time", SortableTable::Sort::Number, "GPU time of the kernels launched from here")
        .column("Sync time", SortableTable::Sort::Number, "Host time blocked in synchronisation called from here")
        .column("Copied", SortableTable::Sort::Number, "Bytes of memcpy called from here");
    auto u = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : 0.0; };
    size_t shown = 0;
    for (const auto& r : rows) {
        if (shown++ == limits.callsite_rows) break;
        std::string stack;
        if (r.contains("stack"))
            for (const auto& f : r["stack"]) stack += f.value("location", std::string()) + "  " + f.value("function", std::string()) + "\n";
        if (!stack.empty()) stack.pop_back();
        double kernel_ns = u(r["kernel_time_ns"]), sync_ns = u(r["sync_time_ns"]), bytes = u(r["memcpy_bytes"]);
        t.row().cell(name_cell(r.value("site", std::string()), stack)).cell(name_cell(r.value("function", std::string())));
        t.num(count(static_cast<uint64_t>(u(r["api_calls"]))), u(r["api_calls"]));
        t.num(T(kernel_ns), kernel_ns).num(T(sync_ns), sync_ns).num(B(static_cast<uint64_t>(bytes)), bytes);
    }
    std::string note;
    if (rows.size() > limits.callsite_rows)
        note = "<p class=\"note\">The " + std::to_string(limits.callsite_rows) + " call sites with the most kernel time of " +
               count(rows.size()) + "; <code>gprof-report cuda_callsite_sum RUN</code> lists them all.</p>";
    return section("callsites", "Call sites",
                   "Where in the program the GPU work comes from: by kernel time, then sync time, then bytes copied.",
                   t.html() + note);
}

std::string processes_section(const RunPageInputs& in, const Limits& limits) {
    const Aggregate& agg = *in.aggregate;
    std::string s;
    SortableTable p;
    p.column("PID").column("Program", SortableTable::Sort::Text).column("Parent").column("Duration").column("Records")
        .column("Dropped").column("CUDA calls").column("GPU ops").column("Ended", SortableTable::Sort::Text);
    std::vector<bool> helper = helper_processes(agg.processes);
    size_t helpers = 0;
    for (size_t i = 0; i < agg.processes.size(); ++i) {
        const ProcessInfo& pr = agg.processes[i];
        if (helper[i]) ++helpers;
        if (p.rows() >= limits.process_rows) continue;
        uint64_t ops = 0;
        for (const auto& [dev, w] : pr.gpu_work) ops += w.ops;
        std::string ended = pr.ended_by_signal   ? "by signal " + std::to_string(pr.ended_by_signal)
                            : !pr.ended_by_exec.empty() ? pr.ended_by_exec
                            : pr.complete          ? "normally"
                                                   : "trace cut short";
        std::string program = command_line(pr);
        if (!pr.role.empty()) program += "\n" + pr.role;
        if (helper[i]) program += "\n(helper: no GPU or NVTX activity)";
        p.row()
            .num(std::to_string(pr.header.pid), static_cast<double>(pr.header.pid))
            .cell(name_cell(program, {}, 70))
            .num(std::to_string(pr.header.ppid), static_cast<double>(pr.header.ppid))
            .num(T(static_cast<double>(pr.last_ns - pr.first_ns)), static_cast<double>(pr.last_ns - pr.first_ns))
            .num(count(pr.records), static_cast<double>(pr.records))
            .num(count(pr.dropped), static_cast<double>(pr.dropped))
            .num(count(pr.api_calls), static_cast<double>(pr.api_calls))
            .num(count(ops), static_cast<double>(ops))
            .cell(escape(ended));
    }
    s += "<h3>" + plural(agg.processes.size(), "process", "processes") +
         (helpers ? " (" + std::to_string(helpers) + " helpers with no GPU or NVTX activity)" : "") + "</h3>" + p.html();
    if (agg.processes.size() > limits.process_rows)
        s += "<p class=\"note\">The first " + std::to_string(limits.process_rows) +
             " processes; <code>gprof-report summary --all-processes RUN</code> lists every one.</p>";

    if (!agg.devices.empty()) {
        std::map<DeviceKey, double> busy;
        if (in.analysis)
            for (const auto& d : in.analysis->devices) busy[d.key] = d.busy_pct;
        SortableTable d;
        d.column("GPU").column("Name", SortableTable::Sort::Text).column("Host", SortableTable::Sort::Text)
            .column("PID").column("Compute capability", SortableTable::Sort::Text).column("SMs").column("Memory")
            .column("Busy");
        std::map<int64_t, std::string> host_of;
        for (const auto& pr : agg.processes) host_of[pr.header.pid] = pr.header.hostname;
        for (const DeviceInfo& di : agg.devices) {
            std::string host = host_of[di.pid];
            auto it = busy.find({host, di.device.id});
            d.row()
                .num(std::to_string(di.device.id), di.device.id)
                .cell(escape(di.name))
                .cell(escape(host))
                .num(std::to_string(di.pid), static_cast<double>(di.pid))
                .cell(std::to_string(di.device.cc_major) + "." + std::to_string(di.device.cc_minor))
                .num(std::to_string(di.device.sm_count), di.device.sm_count)
                .num(B(di.device.global_memory_bytes), static_cast<double>(di.device.global_memory_bytes))
                .num(it == busy.end() ? "\xE2\x80\x94" : pct(it->second), it == busy.end() ? -1 : it->second);
        }
        s += "<h3>" + plural(agg.devices.size(), "device", "devices") + "</h3>" + d.html();
    }
    return section("processes", "Processes and devices", "", s);
}

}  // namespace

std::string render_run_page(const RunPageInputs& in, const Limits& limits) {
    if (!in.run || !in.aggregate) throw std::invalid_argument("render_run_page: no run");
    const ProcessInfo* root = root_process(*in.aggregate);
    std::string title = "gprof-run: " + (root ? shorten_name(command_line(*root), 80) : std::string("run"));
    std::string body = header(in, root);
    const std::string call_sites = call_sites_section(in, limits);
    std::vector<std::pair<std::string, std::string>> links = {{"verdict", "Verdict"},
                                                              {"utilisation", "GPU utilisation"},
                                                              {"kernels", "Kernels"},
                                                              {"copies", "Copies"},
                                                              {"memory", "Memory"},
                                                              {"steps", "Steps"},
                                                              {"nvtx", "NVTX"},
                                                              {"api", "API calls"}};
    if (!call_sites.empty()) links.emplace_back("callsites", "Call sites");
    links.emplace_back("processes", "Processes and devices");
    body += nav(links);
    body += alert(recording_problems(in));
    body += verdict_section(in);
    body += utilisation_section(in, limits);
    body += kernels_section(in, limits);
    body += memops_section(in);
    body += memory_section(in, limits);
    body += steps_section(in, limits);
    body += nvtx_section(in, limits);
    body += api_section(in, limits);
    body += call_sites;
    body += processes_section(in, limits);
    body += "<footer>Made by gprof-report " GPROF_VERSION
            " from the run's traces. This page holds aggregates only; the timeline (<code>gprof-report timeline "
            "RUN</code>, opened in ui.perfetto.dev) holds every event. Times are on the run's axis: since the first "
            "process started recording.</footer>\n";
    return document(escape(title), body);
}

std::string render_run_page(const std::vector<std::filesystem::path>& inputs, const Filter& filter,
                            const AnalysisOptions& analysis_options) {
    auto traces = expand_inputs(inputs);
    AggregateOptions ao;
    ao.filter = filter;
    ao.nvtx_detail = false;
    Aggregate agg = aggregate_run(traces, ao);
    LoadOptions lo;
    lo.filter = filter;
    Run run = load_run(traces, lo);  // with its call sites: the page's section and the findings name them
    if (run.processes.empty() && agg.processes.empty()) {
        std::string why = "no readable trace among the inputs";
        for (const auto& w : run.warnings) why += "\n  " + w;
        throw std::runtime_error(why);
    }
    RunPageInputs in;
    in.run = &run;
    in.aggregate = &agg;
    std::optional<AnalysisResult> analysis;
    try {
        analysis = analyze_run(run, analysis_options);
        in.analysis = &*analysis;
    } catch (const std::exception& e) {
        in.analysis_error = e.what();
    }
    if (inputs.size() == 1) in.source = inputs.front().string();
    return render_run_page(in);
}

}  // namespace gprof::report::html
