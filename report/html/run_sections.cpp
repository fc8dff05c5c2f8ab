// The tables of the run report: top kernels, copies, memory, steps, NVTX ranges, API calls, call sites (when
// recorded), processes and devices.
#include "html/run_page_parts.h"

namespace gprof::report::html::run_page {

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

// Where the host's CPU time went (issue 35): an icicle per process (its threads, then their stacks from the
// outermost frame), and the functions with the most self time.
std::string cpu_section(const RunPageInputs& in, const Limits& limits) {
    std::vector<FlameGraph> graphs = flame_graphs(*in.run, limits);
    if (graphs.empty()) return "";
    std::string s = "<div class=\"legend\"><span><i class=\"fl-native\"></i>native frame</span><span><i "
                    "class=\"fl-python\"></i>Python frame</span><span><i class=\"fl-thread\"></i>process, "
                    "thread</span></div>";
    for (const FlameGraph& g : graphs) {
        double cpu_ns = static_cast<double>(g.samples) * static_cast<double>(g.period_ns);
        s += "<div class=\"device\"><h3>" + escape(g.title) + " <span class=\"sub\">" + count(g.samples) +
             " samples (" + T(cpu_ns) + " of CPU time) on " + plural(g.threads, "thread", "threads") + "</span></h3>";
        std::vector<IcicleBox> boxes;
        boxes.reserve(g.boxes.size());
        for (const FlameBox& b : g.boxes) {
            const char* cls = b.kind == FlameBox::Kind::Python   ? "fl-python"
                              : b.kind == FlameBox::Kind::Native ? "fl-native"
                                                                 : "fl-thread";
            double share = g.samples ? 100.0 * static_cast<double>(b.samples) / static_cast<double>(g.samples) : 0;
            boxes.push_back({b.depth, b.x, b.w, cls, escape(b.name),
                             escape(b.name + "\n" + std::to_string(b.samples) + " samples, " +
                                    format_time_auto(static_cast<double>(b.samples) * static_cast<double>(g.period_ns)) +
                                    ", " + format_fixed(share, 1) + "% of the process")});
        }
        s += "<div class=\"scroll flame-box\">" + icicle("CPU flame graph of " + escape(g.title), g.depth, boxes) + "</div>";
        if (g.left_out)
            s += "<p class=\"note\">" + count(g.left_out) + " frames narrower than " +
                 format_fixed(100 * limits.flame_min_share, 1) +
                 "% left out; <code>gprof-report export --format folded RUN -o stacks.folded</code> has every stack "
                 "(flamegraph.pl, speedscope).</p>";
        s += "</div>";
    }
    ReportOptions ro;
    gprof::report::Table top = cpu_sample_sum(*in.run, ro);
    SortableTable t;
    t.column("Function", SortableTable::Sort::Text)
        .column("Location", SortableTable::Sort::Text)
        .column("Self")
        .column("Total");
    size_t rows = 0;
    for (const auto& row : top.rows) {
        if (rows++ >= limits.callsite_rows) break;
        auto text = [&](size_t i) { return std::holds_alternative<std::string>(row[i]) ? std::get<std::string>(row[i]) : std::string(); };
        auto num = [&](size_t i) { return std::holds_alternative<double>(row[i]) ? std::get<double>(row[i]) : 0.0; };
        t.row()
            .cell("<span class=\"name\">" + escape(text(0)) + "</span>")
            .cell(escape(text(1)))
            .num(pct(num(3)), num(3))
            .num(pct(num(5)), num(5));
    }
    s += "<h3>Functions by CPU time</h3>" + t.html();
    return section("cpu", "CPU samples",
                   "Where the host threads spent their CPU time: each thread sampled every millisecond of its CPU time "
                   "(native and Python frames). Boxes are as wide as the time under them; hover for figures.",
                   s);
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

}  // namespace gprof::report::html::run_page
