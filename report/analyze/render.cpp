// Renderings of an AnalysisResult: console table, markdown, JSON (docs/analysis.md), the end-of-run section and
// the slices of the timeline's "analysis" track.
#include <sstream>

#include "output/text.h"
#include "analyze/analysis.h"
#include "output/table.h"

namespace gprof::report {

namespace {

std::string t(double ns) { return format_time_auto(ns); }
std::string t(int64_t ns) { return format_time_auto(static_cast<double>(ns)); }
std::string pct(double v) { return format_fixed(v, 1) + "%"; }

std::string device_label(const DeviceKey& k, const std::string& name) {
    std::string s = "GPU " + std::to_string(k.device);
    if (!name.empty()) s += " (" + name + ")";
    if (!k.host.empty()) s += " on " + k.host;
    return s;
}

std::string thread_label(const ThreadActivity& a) {
    std::string s = "pid " + std::to_string(a.pid) + " tid " + std::to_string(a.tid);
    if (!a.thread_name.empty()) s += " [" + a.thread_name + "]";
    return s;
}

std::string activity_text(const ThreadActivity& a) {
    std::string s = a.top_activity + " " + t(a.top_ns);
    if (!a.range.empty()) s += ", in NVTX range '" + a.range + "' " + t(a.range_ns);
    return s;
}

// A markdown cell must not break the table.
std::string md(const std::string& s) { return markdown_cell(s); }

// "app.cu:42 train_step() x12 (3.1 ms); ...": the program lines behind a finding, heaviest first.
std::string sites_text(const Finding& f) {
    std::string s;
    for (const FindingSite& site : f.sites) {
        s += (s.empty() ? "" : "; ") + site.site;
        if (!site.function.empty()) s += " " + site.function;
        s += " x" + std::to_string(site.count) + " (" + t(site.time_ns) + ")";
    }
    return s;
}

// "host CPU: work_a (app.cpp:12) 62%, ...; blocked: read 1.2 s at loader.py:10": a host profile on one line.
std::string host_text(const HostProfile& h) {
    std::string s;
    if (!h.functions.empty()) s = "CPU: " + frames_text(h.functions);
    if (!h.python_lines.empty()) s += (s.empty() ? "" : "; ") + std::string("Python: ") + frames_text(h.python_lines);
    if (!h.waits.empty()) s += (s.empty() ? "" : "; ") + std::string("blocked: ") + waits_text(h.waits);
    return s;
}

nlohmann::json frames_json(const std::vector<SampledFrame>& frames) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& f : frames)
        a.push_back({{"name", f.name}, {"location", f.location}, {"samples", f.samples}, {"cpu_ns", f.cpu_ns},
                     {"percent", f.pct}});
    return a;
}

nlohmann::json host_json(const HostProfile& h) {
    nlohmann::json waits = nlohmann::json::array();
    for (const auto& w : h.waits) waits.push_back({{"name", w.name}, {"site", w.site}, {"calls", w.calls}, {"ns", w.ns}});
    return {{"samples", h.samples}, {"cpu_ns", h.cpu_ns}, {"functions", frames_json(h.functions)},
            {"python_lines", frames_json(h.python_lines)}, {"waits", waits}};
}

nlohmann::json sites_json(const Finding& f) {
    nlohmann::json a = nlohmann::json::array();
    for (const FindingSite& site : f.sites)
        a.push_back({{"site", site.site}, {"function", site.function}, {"count", site.count}, {"time_ns", site.time_ns}});
    return a;
}

}  // namespace

void render_analysis_table(const AnalysisResult& a, std::ostream& out) {
    out << "Verdict: " << verdict_title(a.verdict) << "\n  " << a.verdict_reason << "\n\n";
    out << "GPU utilisation over the capture window (" << t(a.window.length()) << "; times count from the program's start, "
        << "+0):\n";
    for (const auto& d : a.devices) {
        out << "  " << device_label(d.key, d.name) << ": busy " << pct(d.busy_pct) << ", " << pct(d.steady_busy_pct)
            << " after start-up (from +" << t(d.steady_start) << ") (" << t(d.busy_ns)
            << "; kernels " << t(d.kernel_ns) << ", memcpy " << t(d.memcpy_ns) << ", memset " << t(d.memset_ns)
            << (d.graph_ns ? ", graphs " + t(d.graph_ns) : std::string()) << "; " << d.streams << " stream" << (d.streams == 1 ? "" : "s") << ")\n";
    }
    if (a.devices.empty()) out << "  (no GPU operations recorded)\n";
    const VerdictEvidence& e = a.evidence;
    out << "\nEvidence:\n"
        << "  GPU idle time spent by the launching thread in CUDA API calls: " << pct(e.idle_in_api_pct)
        << ", in host code: " << pct(e.idle_in_host_code_pct) << "\n"
        << "  launch rate " << format_fixed(e.launch_rate_per_s, 0) << "/s, median launch call " << t(e.median_launch_ns)
        << ", kernels shorter than a launch call: " << pct(e.tiny_kernel_pct) << "\n"
        << "  host blocked in synchronisation: " << pct(e.sync_blocked_pct) << " (" << t(e.sync_blocked_ns) << ")\n"
        << "  data loading + blocking H->D copies: " << pct(e.io_pct) << " of " << t(e.reference_ns) << "\n";
    if (!a.host.empty()) out << "  host (CPU samples, OS-runtime calls): " << printable_line(host_text(a.host)) << "\n";

    out << "\nLargest GPU idle gaps:\n";
    if (a.gaps.empty()) out << "  (none)\n";
    for (const IdleGap& g : a.gaps) {
        out << "  " << t(g.duration()) << " on GPU " << g.device.device << " at +" << t(g.start) << "\n";
        for (const ThreadActivity& th : g.threads) out << "      " << thread_label(th) << ": " << activity_text(th) << "\n";
        if (!g.host.empty()) out << "      the host meanwhile: " << printable_line(host_text(g.host)) << "\n";
    }

    out << "\nFindings:\n";
    if (a.findings.empty()) out << "  (none)\n";
    for (const Finding& f : a.findings) {
        out << "  [" << f.rule << "] " << f.title << "\n      " << f.evidence << "\n";
        if (!f.sites.empty()) out << "      at: " << printable_line(sites_text(f)) << "\n";
        out << "      fix: " << f.fix << "\n";
    }

    const StepView& s = a.steps;
    out << "\nSteps: ";
    if (s.steps.empty()) {
        out << "none found (NVTX pattern '" << s.pattern << "', no cudaProfilerStart/Stop windows)\n";
    } else {
        out << s.steps.size() << " from " << (s.source == "nvtx" ? "NVTX ranges" : "cudaProfilerStart/Stop windows")
            << "; step time min " << t(s.min) << ", median " << t(s.median) << ", mean " << t(s.mean) << ", p90 "
            << t(s.p90) << ", max " << t(s.max) << ", stddev " << t(s.stddev) << "\n";
        if (s.ips) out << "  throughput: " << format_fixed(*s.ips, 2) << " items/s\n";
        if (!s.modules.empty()) {
            Table tb;
            tb.name = "model_summary";
            tb.columns = {{"module", "Module", ColumnKind::Text},
                          {"calls", "Calls", ColumnKind::Count},
                          {"cpu_total", "CPU Total ({unit})", ColumnKind::TimeNs},
                          {"cpu_ratio", "CPU Ratio (%)", ColumnKind::Percent},
                          {"gpu_total", "GPU Total ({unit})", ColumnKind::TimeNs},
                          {"gpu_ratio", "GPU Ratio (%)", ColumnKind::Percent}};
            for (const StepModule& m : s.modules) {
                double cr = s.total_ns ? 100.0 * static_cast<double>(m.cpu_ns) / static_cast<double>(s.total_ns) : 0;
                double gr = s.gpu_total_ns ? 100.0 * static_cast<double>(m.gpu_ns) / static_cast<double>(s.gpu_total_ns) : 0;
                tb.rows.push_back({m.name, static_cast<int64_t>(m.calls), m.cpu_ns, cr, m.gpu_ns, gr});
            }
            RenderOptions ro;
            ro.format = OutputFormat::Table;
            ro.time_unit = TimeUnit::Ms;
            render_table(tb, ro, out);
        }
    }
    for (const auto& w : a.warnings) out << "warning: " << w << "\n";
}

void render_analysis_markdown(const AnalysisResult& a, std::ostream& out) {
    out << "## Bottleneck analysis: " << verdict_title(a.verdict) << "\n\n" << md(a.verdict_reason) << "\n\n";
    out << "| Device | Busy | Busy time | Kernels | Memcpy | Memset | Streams |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& d : a.devices)
        out << "| " << md(device_label(d.key, d.name)) << " | " << pct(d.busy_pct) << " | " << t(d.busy_ns) << " | "
            << t(d.kernel_ns) << " | " << t(d.memcpy_ns) << " | " << t(d.memset_ns) << " | " << d.streams << " |\n";
    if (!a.gaps.empty()) {
        out << "\n### Largest GPU idle gaps\n\n| Gap | Device | At | Host activity |\n|---:|---:|---:|---|\n";
        for (const IdleGap& g : a.gaps) {
            std::string acts;
            for (const auto& th : g.threads) acts += (acts.empty() ? "" : "<br>") + thread_label(th) + ": " + activity_text(th);
            if (!g.host.empty()) acts += (acts.empty() ? "" : "<br>") + std::string("the host meanwhile: ") + host_text(g.host);
            out << "| " << t(g.duration()) << " | " << g.device.device << " | +" << t(g.start) << " | " << md(acts) << " |\n";
        }
    }
    if (!a.findings.empty()) {
        out << "\n### Findings\n\n| Rule | Evidence | Suggested fix |\n|---|---|---|\n";
        for (const Finding& f : a.findings)
            out << "| `" << f.rule << "` " << md(f.title) << " | " << md(f.evidence)
                << (f.sites.empty() ? std::string() : "<br>at: " + md(sites_text(f))) << " | " << md(f.fix) << " |\n";
    }
    const StepView& s = a.steps;
    if (!s.steps.empty()) {
        out << "\n### Steps\n\n" << s.steps.size() << " steps (" << s.source << "): median " << t(s.median) << ", p90 "
            << t(s.p90) << ", min " << t(s.min) << ", max " << t(s.max);
        if (s.ips) out << ", " << format_fixed(*s.ips, 2) << " items/s";
        out << "\n";
        if (!s.modules.empty()) {
            out << "\n| Module | Calls | CPU total | GPU total |\n|---|---:|---:|---:|\n";
            for (const auto& m : s.modules)
                out << "| " << md(m.name) << " | " << m.calls << " | " << t(m.cpu_ns) << " | " << t(m.gpu_ns) << " |\n";
        }
    }
}

nlohmann::json analysis_to_json(const AnalysisResult& a) {
    using nlohmann::json;
    json j;
    j["schema"] = "gprof-analysis";
    j["schema_version"] = kAnalysisSchemaVersion;
    j["window"] = {{"start_ns", a.window.start}, {"end_ns", a.window.end}, {"duration_ns", a.window.length()}};
    j["verdict"] = {{"id", verdict_id(a.verdict)}, {"title", verdict_title(a.verdict)}, {"reason", a.verdict_reason}};
    const VerdictEvidence& e = a.evidence;
    j["evidence"] = {{"busy_pct", e.busy_pct},
                     {"steady_busy_pct", e.steady_busy_pct},
                     {"startup_ns", e.startup_ns},
                     {"idle_in_api_pct", e.idle_in_api_pct},
                     {"idle_in_host_code_pct", e.idle_in_host_code_pct},
                     {"launch_rate_per_s", e.launch_rate_per_s},
                     {"median_launch_ns", e.median_launch_ns},
                     {"tiny_kernel_pct", e.tiny_kernel_pct},
                     {"sync_blocked_pct", e.sync_blocked_pct},
                     {"sync_blocked_ns", e.sync_blocked_ns},
                     {"io_pct", e.io_pct},
                     {"io_ns", e.io_ns},
                     {"reference_ns", e.reference_ns}};
    j["devices"] = json::array();
    for (const auto& d : a.devices)
        j["devices"].push_back({{"host", d.key.host}, {"device", d.key.device}, {"name", d.name},
                                {"window_ns", d.window_ns}, {"busy_ns", d.busy_ns}, {"busy_pct", d.busy_pct},
                                {"steady_start_ns", d.steady_start}, {"steady_ns", d.steady_ns},
                                {"steady_busy_pct", d.steady_busy_pct},
                                {"kernel_ns", d.kernel_ns}, {"memcpy_ns", d.memcpy_ns}, {"memset_ns", d.memset_ns},
                                {"graph_ns", d.graph_ns}, {"streams", d.streams}});
    j["gaps"] = json::array();
    for (const auto& g : a.gaps) {
        json threads = json::array();
        for (const auto& th : g.threads)
            threads.push_back({{"pid", th.pid}, {"tid", th.tid}, {"thread_name", th.thread_name},
                               {"activity", th.top_activity}, {"activity_ns", th.top_ns}, {"range", th.range},
                               {"range_ns", th.range_ns}, {"api_ns", th.api_ns}, {"nvtx_ns", th.nvtx_ns}});
        j["gaps"].push_back({{"host", g.device.host}, {"device", g.device.device}, {"start_ns", g.start},
                             {"end_ns", g.end}, {"duration_ns", g.duration()}, {"threads", threads},
                             {"host_activity", host_json(g.host)}});
    }
    j["host"] = host_json(a.host);
    j["findings"] = json::array();
    for (const auto& f : a.findings)
        j["findings"].push_back({{"rule", f.rule}, {"title", f.title}, {"value", f.value}, {"unit", f.unit},
                                 {"evidence", f.evidence}, {"fix", f.fix}, {"time_ns", f.time_ns},
                                 {"first_ns", f.first}, {"last_ns", f.last}, {"call_sites", sites_json(f)}});
    const StepView& s = a.steps;
    json steps = {{"source", s.source}, {"pattern", s.pattern}, {"count", s.steps.size()}};
    if (!s.steps.empty()) {
        steps["time_ns"] = {{"min", s.min}, {"median", s.median}, {"mean", s.mean}, {"p90", s.p90}, {"max", s.max},
                            {"stddev", s.stddev}, {"total", s.total_ns}};
        steps["gpu_total_ns"] = s.gpu_total_ns;
        steps["ips"] = s.ips ? json(*s.ips) : json(nullptr);
        json list = json::array();
        for (size_t i = 0; i < s.steps.size(); ++i)
            list.push_back({{"name", s.steps[i].name}, {"start_ns", s.steps[i].start},
                            {"duration_ns", s.steps[i].duration()}, {"gpu_ns", s.gpu_ns[i]}});
        steps["steps"] = list;
        json mods = json::array();
        for (const auto& m : s.modules)
            mods.push_back({{"name", m.name}, {"calls", m.calls}, {"cpu_ns", m.cpu_ns}, {"gpu_ns", m.gpu_ns}});
        steps["modules"] = mods;
    }
    j["steps"] = steps;
    j["warnings"] = a.warnings;
    return j;
}

void print_analysis_section(const Run& run, std::ostream& out) {
    AnalysisResult a;
    try {
        a = analyze_run(run, {});
    } catch (const std::exception& e) {
        out << "Analysis: not available (" << e.what() << ")\n";
        return;
    }
    print_analysis_section(a, out);
}

void print_analysis_section(const AnalysisResult& a, std::ostream& out) {
    out << "Analysis: " << verdict_title(a.verdict) << " - " << a.verdict_reason << "\n";
    for (const auto& d : a.devices)
        out << "  " << device_label(d.key, d.name) << " busy " << pct(d.steady_busy_pct) << " after start-up (from +"
            << t(d.steady_start) << "), " << pct(d.busy_pct) << " of the whole " << t(d.window_ns) << "\n";
    size_t shown = 0;
    for (const Finding& f : a.findings) {
        if (shown++ == 3) {
            out << "  ... " << a.findings.size() - 3 << " more finding(s): gprof-report analyze <run dir>\n";
            break;
        }
        out << "  [" << f.rule << "] " << f.evidence << "\n";
        if (!f.sites.empty()) out << "      at " << printable_line(sites_text(f)) << "\n";
    }
    if (!a.steps.steps.empty())
        out << "  steps: " << a.steps.steps.size() << ", median " << t(a.steps.median) << ", p90 " << t(a.steps.p90) << "\n";
}

std::vector<AnalysisSlice> analysis_timeline_slices(const AnalysisResult& a) {
    std::vector<AnalysisSlice> out;
    if (a.window.length() > 0)
        out.push_back({"verdict", a.window.start, a.window.length(), std::string("verdict: ") + verdict_title(a.verdict),
                       {{"reason", a.verdict_reason}, {"verdict", verdict_id(a.verdict)}}});
    for (const IdleGap& g : a.gaps) {
        nlohmann::json threads = nlohmann::json::array();
        for (const auto& th : g.threads) threads.push_back(thread_label(th) + ": " + activity_text(th));
        if (!g.host.empty()) threads.push_back("the host meanwhile: " + host_text(g.host));
        out.push_back({"idle gaps GPU " + std::to_string(g.device.device), g.start, g.duration(),
                       "GPU idle " + t(g.duration()), {{"host_activity", threads}, {"device", g.device.device}}});
    }
    for (const Finding& f : a.findings) {
        int64_t start = f.first, dur = std::max<int64_t>(sat_sub(f.last, f.first), 0);
        if (f.first == 0 && f.last == 0) {
            start = a.window.start;
            dur = a.window.length();
        }
        nlohmann::json args = {{"evidence", f.evidence}, {"fix", f.fix}};
        if (!f.sites.empty()) args["call sites"] = sites_text(f);
        out.push_back({"finding: " + f.rule, start, dur, f.title, std::move(args)});
    }
    for (size_t i = 0; i < a.steps.steps.size(); ++i) {
        const Step& s = a.steps.steps[i];
        out.push_back({s.process == 0 ? std::string("steps") : "steps #" + std::to_string(s.process), s.start, s.duration(), s.name,
                       {{"gpu_busy_ns", a.steps.gpu_ns[i]}}});
    }
    return out;
}

std::vector<AnalysisSlice> analysis_timeline_slices(const Run& run) {
    return analysis_timeline_slices(analyze_run(run, {}));
}

}  // namespace gprof::report
