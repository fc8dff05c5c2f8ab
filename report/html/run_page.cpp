// The run report: verdict, utilisation, kernels, copies, memory, steps, NVTX, API calls, call sites (when recorded),
// processes and devices, in the order a newcomer asks about them (issue #20), with what went wrong in recording
// (dropped records, damaged traces) at the top where nobody can miss it. The tables are in run_sections.cpp.
#include "gprof/version.h"
#include "html/ranks_section.h"
#include "html/run_page_parts.h"

namespace gprof::report::html {

namespace run_page {
namespace {

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
    if (!g.host.functions.empty()) t += "\nCPU: " + frames_text(g.host.functions);
    if (!g.host.waits.empty()) t += "\nblocked: " + waits_text(g.host.waits);
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
            // What the CPU samples and OS-runtime calls say the host did meanwhile (issue 35).
            if (!g.host.functions.empty())
                what += std::string(what.empty() ? "" : "<br>") + "CPU: " + escape(frames_text(g.host.functions));
            if (!g.host.waits.empty())
                what += std::string(what.empty() ? "" : "<br>") + "blocked: " + escape(waits_text(g.host.waits));
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

}  // namespace
}  // namespace run_page

using namespace run_page;

std::string render_run_page(const RunPageInputs& in, const Limits& limits) {
    if (!in.run || !in.aggregate) throw std::invalid_argument("render_run_page: no run");
    const ProcessInfo* root = root_process(*in.aggregate);
    std::string title = "gprof-run: " + (root ? shorten_name(command_line(*root), 80) : std::string("run"));
    std::string body = header(in, root);
    const std::string call_sites = call_sites_section(in, limits);
    const std::string cpu = cpu_section(in, limits);
    const std::string gpu_metrics = gpu_metrics_section(in, limits);
    std::vector<std::pair<std::string, std::string>> links = {{"verdict", "Verdict"},
                                                              {"utilisation", "GPU utilisation"},
                                                              {"kernels", "Kernels"},
                                                              {"copies", "Copies"},
                                                              {"memory", "Memory"},
                                                              {"steps", "Steps"},
                                                              {"nvtx", "NVTX"},
                                                              {"api", "API calls"}};
    if (!gpu_metrics.empty()) links.insert(links.begin() + 2, {"gpumetrics", "GPU metrics"});
    if (!call_sites.empty()) links.emplace_back("callsites", "Call sites");
    if (!cpu.empty()) links.emplace_back("cpu", "CPU samples");
    links.emplace_back("processes", "Processes and devices");
    if (in.ranks) links.insert(links.begin() + 1, {"ranks", "Ranks"});
    body += nav(links);
    body += alert(recording_problems(in));
    body += verdict_section(in);
    if (in.ranks) body += ranks_section(*in.ranks);
    body += utilisation_section(in, limits);
    body += gpu_metrics;
    body += kernels_section(in, limits);
    body += memops_section(in);
    body += memory_section(in, limits);
    body += steps_section(in, limits);
    body += nvtx_section(in, limits);
    body += api_section(in, limits);
    body += call_sites;
    body += cpu;
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
    // A distributed job: its ranks compared (from this model: the traces are in memory already).
    std::optional<RankView> ranks;
    if (auto figures = rank_figures(run, analysis_options.step_pattern); count_ranks(figures) >= 2) {
        ranks = compare_ranks(std::move(figures));
        in.ranks = &*ranks;
    }
    return render_run_page(in);
}

}  // namespace gprof::report::html
