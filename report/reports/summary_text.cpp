// The nvprof-style summary gprof-run prints after a run (and `gprof-report summary`), and its JSON header.
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

// ----- the nvprof-style summary text -----------------------------------------------------------------------

namespace {

std::string plural(uint64_t n, const char* word) {
    std::string w = word;
    if (n != 1) w += w.back() == 's' ? "es" : "s";
    return std::to_string(n) + " " + w;
}

std::string gib(uint64_t bytes) { return format_fixed(static_cast<double>(bytes) / (1024.0 * 1024 * 1024), 1) + " GiB"; }

struct Row8 {
    std::string type, pct, time, calls, avg, min, max, name;
};

void print_rows(const std::vector<Row8>& rows, size_t name_width, std::ostream& out) {
    // nvprof's fixed layout: right-aligned numeric columns, then the name.
    auto pad = [](const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; };
    out << pad("Type", 16) << "  " << pad("Time(%)", 7) << "  " << pad("Time", 8) << "  " << pad("Calls", 8) << "  "
        << pad("Avg", 8) << "  " << pad("Min", 8) << "  " << pad("Max", 8) << "  Name\n";
    for (const auto& r : rows)
        out << pad(r.type, 16) << "  " << pad(r.pct, 7) << "  " << pad(r.time, 8) << "  " << pad(r.calls, 8) << "  "
            << pad(r.avg, 8) << "  " << pad(r.min, 8) << "  " << pad(r.max, 8) << "  "
            << shorten_name(printable_line(r.name), name_width) << '\n';
}

using NamedStats = std::vector<std::pair<std::string, Stats>>;

NamedStats with_stats(const std::map<std::string, Distribution>& m, bool demangle_names) {
    NamedStats out;
    for (const auto& [k, v] : m) out.emplace_back(demangle_names ? demangle(k) : k, v.stats());
    return out;
}

void section_rows(const char* type, const NamedStats& keys, size_t max_rows, std::vector<Row8>& rows) {
    std::vector<std::pair<Stats, std::string>> stats;
    uint64_t total = 0;
    for (const auto& [name, st] : keys) {
        stats.emplace_back(st, name);
        total += st.total;
    }
    std::stable_sort(stats.begin(), stats.end(), [](const auto& a, const auto& b) {
        return a.first.total != b.first.total ? a.first.total > b.first.total : a.second < b.second;
    });
    size_t shown = 0;
    for (const auto& [s, name] : stats) {
        if (max_rows && shown == max_rows) {
            rows.push_back({"", "", "", "", "", "", "", "... " + plural(stats.size() - shown, "more row")});
            break;
        }
        double pct = total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(total) : 0.0;
        rows.push_back({shown == 0 ? std::string(type) + ":" : "", format_fixed(pct, 2) + "%", format_time_auto(double(s.total)),
                        std::to_string(s.count), format_time_auto(s.mean), format_time_auto(double(s.min)),
                        format_time_auto(double(s.max)), name});
        ++shown;
    }
}

NamedStats named(const std::vector<const KeyData*>& keys) {
    NamedStats out;
    for (auto* k : keys) out.emplace_back(display_name(*k), k->time_stats);
    return out;
}

}  // namespace

namespace {

// "SIGTERM" for 15.
std::string signal_name(uint32_t sig) {
    const char* abbrev = ::sigabbrev_np(static_cast<int>(sig));
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// What a process is in a multi-process run: its parent (when traced), its rank, its GPU work per device.
//   "    parent 4120; RANK=1 LOCAL_RANK=1 WORLD_SIZE=2; GPU 0: 1,204 ops, 85.1 ms"
void print_process_role(const ProcessInfo& p, bool parent_traced, std::ostream& out) {
    // The rank is in the line's label already ("rank 3 @ node07 (pid 7)"); the variables still say which launcher.
    std::vector<std::string> parts;
    if (parent_traced) parts.push_back("parent " + std::to_string(p.header.ppid));
    if (!p.role.empty()) parts.push_back(p.role);
    std::string work;
    for (const auto& [device, w] : p.gpu_work)
        work += (work.empty() ? "GPU " : ", GPU ") + std::to_string(device) + ": " + plural(w.ops, "op") + ", " +
                format_time_auto(double(w.busy_ns));
    if (!work.empty()) parts.push_back(work);
    else if (p.quiet()) parts.push_back("no GPU or NVTX activity");
    else parts.push_back("no GPU work");
    std::string line;
    for (const auto& part : parts) line += (line.empty() ? "" : "; ") + part;
    out << "    " << line << '\n';
}

}  // namespace

namespace {
void print_summary_body(const Aggregate& agg, bool full, bool list_helpers, size_t max_rows, std::ostream& out,
                        size_t name_width);
}  // namespace

void print_summary_text(const Aggregate& agg, bool full, bool list_helpers, size_t max_rows, std::ostream& out,
                        size_t name_width, std::string_view analysis_section) {
    // Names are made printable where they are printed; this keeps whatever else a trace carried (status lines,
    // paths, device names) valid UTF-8 too.
    std::ostringstream text;
    print_summary_body(agg, full, list_helpers, max_rows, text, name_width);
    text << analysis_section;
    out << valid_utf8(text.str());
}

namespace {
void print_summary_body(const Aggregate& agg, bool full, bool list_helpers, size_t max_rows, std::ostream& out,
                        size_t name_width) {
    // Header: what was recorded, and why anything is missing.
    std::set<std::tuple<HostKey, int64_t, uint32_t>> seen_dev;
    std::vector<const DeviceInfo*> devs;
    for (const auto& d : agg.devices)
        if (seen_dev.insert({d.host, d.pid, d.device.id}).second) devs.push_back(&d);
    std::set<HostKey> hosts;
    for (const auto& p : agg.processes) hosts.insert(host_key(p.header));
    const bool several_hosts = hosts.size() > 1;
    // Labels ("rank 3 @ node07 (pid 7)") where pids alone would not tell processes apart: several hosts, or several
    // pid namespaces of one host (containers).
    std::vector<ProcessKey> keys;
    for (const auto& p : agg.processes) keys.push_back(process_key(p.header, p.rank));
    const bool labelled = several_hosts || pid_spaces(keys).count > 1;
    // A device is one per host: GPU 0 of node07 and GPU 0 of node08 are two devices.
    std::set<std::string> dev_names;
    for (auto* d : devs)
        dev_names.insert((several_hosts ? d->host.host + "/" + d->host.boot_id + ": " : std::string()) +
                         std::to_string(d->device.id) + ": " + d->name);
    out << "gprof-run profile: " << plural(agg.processes.size(), "process") << ", "
        << plural(dev_names.size(), "device") << ", " << format_time_auto(double(agg.last_ns - agg.first_ns))
        << " recorded, " << plural(agg.records, "record") << ", " << agg.dropped << " dropped\n";
    // Every time printed below is on the run axis: +0 is the program's start (issue 30: "peak at 11.39s" of a run
    // "6.46s recorded" said nothing about where 0 was).
    if (agg.last_ns > agg.first_ns)
        out << "  times count from the program's start (+0); records from +" << format_time_auto(double(agg.first_ns))
            << " to +" << format_time_auto(double(agg.last_ns)) << '\n';
    size_t status_printed = 0;
    std::vector<bool> helper = helper_processes(agg.processes);
    std::set<ProcessKey> traced;
    for (const auto& p : agg.processes) traced.insert(process_key(p.header));
    std::map<std::string, size_t> folded;  // helper name -> processes folded into the helpers line
    std::map<std::pair<std::string, std::string>, size_t> folded_untraced;  // {program, why} -> times, in helpers
    // A job of 1 000 ranks would print 20 000 lines here: above kRanksListedWhole ranks, those with nothing to say
    // fold into one line (--all-processes lists each); any with news keep their lines.
    const size_t ranked = static_cast<size_t>(
        std::count_if(agg.processes.begin(), agg.processes.end(), [](const ProcessInfo& p) { return p.rank >= 0; }));
    const bool fold_ranks = !list_helpers && ranked > kRanksListedWhole;
    std::vector<int64_t> folded_ranks;
    std::set<HostKey> folded_rank_hosts;
    uint64_t folded_rank_records = 0;
    for (size_t i = 0; i < agg.processes.size(); ++i) {
        const ProcessInfo& p = agg.processes[i];
        if (helper[i] && !list_helpers) {
            ++folded[process_short_name(p)];
            for (const auto& program : p.untraced_programs) ++folded_untraced[program];
            continue;
        }
        if (fold_ranks && p.rank >= 0 && !process_has_news(p)) {
            folded_ranks.push_back(p.rank);
            folded_rank_hosts.insert(host_key(p.header));
            folded_rank_records += p.records;
            continue;
        }
        // The command as it was typed (argv, like nvprof's "Profiling application: ./app"): the executable's
        // resolved path is in the JSON header, and would put one machine's directories into every summary.
        std::string cmd = p.header.argv.empty() || p.header.argv[0].empty() ? p.header.executable : p.header.argv[0];
        for (size_t a = 1; a < p.header.argv.size(); ++a) cmd += " " + p.header.argv[a];
        const std::string label = process_label(p.header, p.rank, labelled);
        out << "  " << (label.empty() ? "process " + std::to_string(p.header.pid) : printable_line(label)) << ": "
            << printable_line(cmd) << " (" << trace_label(p.path) << ", "
            << format_time_auto(double(p.last_ns - p.first_ns)) << ", " << plural(p.records, "record")
            << (p.dropped ? ", " + std::to_string(p.dropped) + " dropped" : std::string())
            << (!p.complete ? ", trace incomplete: the process did not finish normally"
                : p.ended_by_signal ? ", ended by " + signal_name(p.ended_by_signal)
                : !p.ended_by_exec.empty() ? ", " + p.ended_by_exec
                                           : std::string())
            << ")\n";
        ProcessKey parent = process_key(p.header);
        parent.pid = p.header.ppid;
        if (agg.processes.size() > 1) print_process_role(p, traced.count(parent) > 0, out);
        for (const auto& child : p.untraced_children) out << "    started " << child << '\n';
        for (const auto& s : p.status_lines) {
            // The collector's info lines (its memory, the trace clock, where CUPTI was loaded from) are for the full
            // summary only: the default one says what was recorded and what went wrong.
            if (!full && s.find(": info:") == std::string::npos && s.find(" info: ") != std::string::npos) continue;
            out << "    " << s << '\n';
            ++status_printed;
        }
        print_memory_lines(p, out);
    }
    if (!folded_ranks.empty()) {
        std::sort(folded_ranks.begin(), folded_ranks.end());
        folded_ranks.erase(std::unique(folded_ranks.begin(), folded_ranks.end()), folded_ranks.end());
        out << "  " << plural(folded_ranks.size(), "rank") << " (" << rank_ranges(folded_ranks) << ") on "
            << plural(folded_rank_hosts.size(), "host") << ", " << plural(folded_rank_records, "record")
            << ": ended normally, nothing dropped (one line each with --all-processes; gprof-report ranks compares them)\n";
    }
    if (!folded.empty()) out << "  " << helpers_line(folded) << '\n';
    // What the folded helpers ran that could not be traced, once per program: "not traced: /sbin/ldconfig.real
    // \u00d72 (a statically linked program that cannot be traced)".
    for (const auto& [program, n] : folded_untraced)
        out << "  not traced: " << program.first << " \u00d7" << n << " (" << program.second << ")\n";
    std::set<std::string> printed;
    for (auto* d : devs) {
        std::string line = "  device " + std::to_string(d->device.id) + ": " + printable_line(d->name) + " (compute capability " +
                           std::to_string(d->device.cc_major) + "." + std::to_string(d->device.cc_minor) + ", " +
                           std::to_string(d->device.sm_count) + " SMs, " + gib(d->device.global_memory_bytes) + ")";
        if (printed.insert(line).second) out << line << '\n';
    }
    bool any_gpu = !gpu_activities(agg).empty();
    bool any_api = !agg.of(KeyCategory::Api).empty();
    if (!any_gpu && !any_api) {
        // -t nvtx: CUDA was not traced, which says nothing about whether the program used it (issue 30).
        bool not_traced = !agg.processes.empty() && std::all_of(agg.processes.begin(), agg.processes.end(), [](const auto& p) {
            return (p.header.features & kFeatureCudaNotTraced) != 0;
        });
        bool explained = status_printed > 0;
        out << (not_traced ? "  CUDA was not traced (-t/--trace without cuda): no CUDA activity recorded"
                : explained ? "  no CUDA activity was recorded (see the status lines above)"
                            : "  no CUDA activity was recorded (the program made no CUDA calls in the capture window)")
            << '\n';
    }
    if (agg.unmatched_gpu_ops)
        out << "  " << plural(agg.unmatched_gpu_ops, "GPU operation") << " had no launching API call in the trace\n";
    if (agg.hidden_driver_calls)
        out << "  " << plural(agg.hidden_driver_calls, "driver call") << " the CUDA runtime made itself (cuKernelGetName, "
            << "...) left out of the API tables (--cuda-nested-driver-calls shows them)\n";
    size_t wshown = 0;
    for (const auto& w : agg.warnings) {
        if (max_rows && wshown == 5) {  // the console's brief summary; summary.txt (all rows) has them all
            out << "  warning: ... " << plural(agg.warnings.size() - wshown, "more warning") << '\n';
            break;
        }
        out << "  warning: " << w << '\n';
        ++wshown;
    }
    for (const auto& n : agg.notes) out << "  note: " << n << '\n';

    std::vector<Row8> rows;
    section_rows(" GPU activities", named(gpu_activities(agg)), max_rows, rows);
    section_rows("      API calls", named(agg.of(KeyCategory::Api)), max_rows, rows);
    // NVTX ranges get one section of their own (nsys's nvtx_sum), which is all a run without a GPU shows; the full
    // summary adds nvprof's per-thread NVTX block below.
    section_rows("    NVTX ranges", named(agg.of(KeyCategory::Nvtx)), max_rows, rows);
    for (auto& r : rows) {
        // Keep nvprof's right-aligned "GPU activities:" labels.
        while (!r.type.empty() && r.type.front() == ' ') r.type.erase(0, 1);
    }
    // Nothing recorded: the lines above say why; an empty table under a "Profiling result:" header says nothing.
    if (!rows.empty()) {
        out << "Profiling result:\n";
        print_rows(rows, name_width, out);
    }
    print_gpu_metrics_section(agg, max_rows, name_width, out);

    if (!full || agg.nvtx_ranges.empty()) return;
    out << "NVTX result:\n";
    std::vector<const NvtxRangeSummary*> ranges;
    for (const auto& r : agg.nvtx_ranges) ranges.push_back(&r);
    std::stable_sort(ranges.begin(), ranges.end(), [](auto* a, auto* b) {
        return std::tie(a->process, a->tid, a->domain, a->name) < std::tie(b->process, b->tid, b->domain, b->name);
    });
    // Each thread under its own process: ranks that share a pid (containers, hosts) never share a block.
    std::map<ProcessKey, std::string> process_names;
    for (const auto& p : agg.processes) {
        std::string label = process_label(p.header, p.rank, labelled);
        process_names[process_key(p.header, p.rank)] =
            label.empty() ? "process " + std::to_string(p.header.pid) : printable_line(label);
    }
    const NvtxRangeSummary* prev = nullptr;
    for (auto* r : ranges) {
        const bool new_thread = !prev || prev->process != r->process || prev->tid != r->tid;
        if (new_thread)
            out << "  Thread \"" << (r->thread_name.empty() ? "<unnamed>" : printable_line(r->thread_name)) << "\" (id = " << r->tid
                << (agg.processes.size() > 1 ? ", " + process_names[r->process] : std::string()) << ")\n";
        if (new_thread || prev->domain != r->domain)
            out << "    Domain \"" << (r->domain.empty() ? "<unnamed>" : shorten_name(printable_line(r->domain), name_width)) << "\"\n";
        prev = r;
        out << "      Range \"" << shorten_name(printable_line(r->name), name_width) << "\"\n";
        std::vector<Row8> nrows;
        section_rows("Range", {{r->name, r->durations.stats()}}, 0, nrows);
        NamedStats gpu = with_stats(r->gpu, true), api = with_stats(r->api, false);
        section_rows("GPU activities", gpu, max_rows, nrows);
        section_rows("API calls", api, max_rows, nrows);
        if (gpu.empty()) nrows.push_back({"GPU activities:", "", "", "", "", "", "", "(none)"});
        if (api.empty()) nrows.push_back({"API calls:", "", "", "", "", "", "", "(none)"});
        print_rows(nrows, name_width, out);
    }
}
}  // namespace

json summary_header_json(const Aggregate& agg) {
    json procs = json::array();
    std::vector<bool> helper = helper_processes(agg.processes);
    for (size_t i = 0; i < agg.processes.size(); ++i) {
        const ProcessInfo& p = agg.processes[i];
        json work = json::array();
        for (const auto& [device, w] : p.gpu_work) work.push_back({{"device", device}, {"ops", w.ops}, {"busy_ns", w.busy_ns}});
        procs.push_back({{"pid", p.header.pid},
                         {"ppid", p.header.ppid},
                         {"helper", bool(helper[i])},
                         {"role", p.role},
                         {"api_calls", p.api_calls},
                         {"nvtx_events", p.nvtx_events},
                         {"gpu_work", work},
                         {"ended_by_signal", p.ended_by_signal ? signal_name(p.ended_by_signal) : std::string()},
                         {"ended_by_exec", p.ended_by_exec},
                         {"untraced_children", p.untraced_children},
                         {"hidden_driver_calls", p.hidden_driver_calls},
                         {"memory", process_memory_json(p.memory, p.device_memory, p.run_offset_ns)},
                         {"executable", p.header.executable},
                         {"argv", p.header.argv},
                         {"hostname", p.header.hostname},
                         {"boot_id", p.header.boot_id},
                         {"pid_ns", p.header.pid_ns},
                         {"rank", p.rank},
                         {"label", process_label(p.header, p.rank, true)},
                         {"trace", trace_label(p.path)},
                         {"first_ns", p.first_ns},
                         {"last_ns", p.last_ns},
                         {"records", p.records},
                         {"dropped", p.dropped},
                         {"complete", p.complete},
                         {"status", p.status_lines}});
    }
    json devs = json::array();
    for (const auto& d : agg.devices)
        devs.push_back({{"pid", d.pid},
                        {"id", d.device.id},
                        {"name", d.name},
                        {"uuid", d.uuid},
                        {"compute_capability", std::to_string(d.device.cc_major) + "." + std::to_string(d.device.cc_minor)},
                        {"sm_count", d.device.sm_count},
                        {"global_memory_bytes", d.device.global_memory_bytes}});
    return {{"processes", procs},
            {"devices", devs},
            {"duration_ns", agg.last_ns - agg.first_ns},
            {"records", agg.records},
            {"dropped", agg.dropped},
            {"hidden_driver_calls", agg.hidden_driver_calls},
            {"unmatched_gpu_ops", agg.unmatched_gpu_ops}};
}

}  // namespace gprof::report
