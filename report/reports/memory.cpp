// The `memory` report and the memory lines of the summary: CUDA memory by kind (device, async pools, pinned host,
// managed), peaks and when they happened, and the allocations still alive when the trace ended, with their call
// site. All figures come from model/memory.h's ledger, like the timeline's counters.
#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>

#include "gprof/trace/names.h"
#include "model/resolved_call_sites.h"
#include "reports/reports.h"

namespace gprof::report {

using namespace gprof::trace;
using nlohmann::json;

namespace {

constexpr size_t kLiveRowsShown = 20;  // console and markdown list the largest; JSON holds them all
constexpr size_t kCallSiteFrames = 4;

std::string hex(uint64_t v) {
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

// Tables carry the stable key ("pinned_host"); the summary's prose the display name ("pinned host").
std::string budget_key(MemoryBudget b) { return std::string(memory_budget_key(b)); }
std::string budget_label(MemoryBudget b) { return std::string(memory_budget_name(b)); }

Cell run_time(Timestamp ts, int64_t offset) {
    if (!ts) return Cell{};
    return static_cast<int64_t>(ts) + offset;
}

json run_time_json(Timestamp ts, int64_t offset) {
    if (!ts) return nullptr;
    return static_cast<int64_t>(ts) + offset;
}

// The program's frames of an allocation's call site (model/resolved_call_sites.h: CUDA's own frames are left out), the
// first kCallSiteFrames of them.
std::string call_site(const BacktraceFrames& bt, CallSites& sites) {
    std::string text;
    const ResolvedStack& r = sites.of(bt);
    for (size_t i = 0; i < r.frames.size() && i < kCallSiteFrames; ++i) text += (i ? " <- " : "") + r.frames[i].text();
    return text;
}

struct ProcessLedger {
    const ProcessTrace* process;
    std::vector<BudgetUsage> budgets;
    std::vector<DeviceMemoryPeak> devices;
    std::vector<Memory> live;
    int64_t offset;  // trace clock -> run axis
};

std::vector<ProcessLedger> ledgers(const Run& run) {
    std::vector<ProcessLedger> out;
    for (const auto& p : run.processes) {
        if (p.memory.empty() && p.memory_pools.empty()) continue;
        MemoryLedger ledger;
        replay_memory(ledger, p.memory, p.memory_pools);
        out.push_back({&p, ledger.budgets(), ledger.device_peaks(), ledger.live(), p.to_run_ns(0)});
    }
    return out;
}

Table budget_table(const std::vector<ProcessLedger>& all) {
    Table t;
    t.name = "memory";
    t.columns = {{"pid", "Pid", ColumnKind::Count},
                 {"device", "Device", ColumnKind::Count},
                 {"kind", "Kind", ColumnKind::Text},
                 {"allocations", "Allocs", ColumnKind::Count},
                 {"allocated_bytes", "Allocated (MB)", ColumnKind::BytesMB},
                 {"releases", "Frees", ColumnKind::Count},
                 {"released_bytes", "Freed (MB)", ColumnKind::BytesMB},
                 {"largest_bytes", "Largest (MB)", ColumnKind::BytesMB},
                 {"peak_bytes", "Peak (MB)", ColumnKind::BytesMB},
                 {"peak_ns", "Peak At ({unit})", ColumnKind::TimeNs},
                 {"live_count", "Alive At End", ColumnKind::Count},
                 {"live_bytes", "Alive At End (MB)", ColumnKind::BytesMB},
                 {"unmatched_releases", "Frees Of Earlier Allocs", ColumnKind::Count}};
    for (const auto& l : all) {
        for (const auto& u : l.budgets)
            t.rows.push_back({l.process->pid(), int64_t(u.device), budget_key(u.budget), int64_t(u.allocations),
                              int64_t(u.allocated_bytes), int64_t(u.releases), int64_t(u.released_bytes),
                              int64_t(u.largest_allocation), int64_t(u.peak_bytes), run_time(u.peak_at, l.offset),
                              int64_t(u.live_count), int64_t(u.live_bytes), int64_t(u.unmatched_releases)});
        for (const auto& d : l.devices) {
            // The table's decimal MB (nsys's unit), and the binary one nvidia-smi and the summary use.
            std::string line = "Peak device memory, pid " + std::to_string(l.process->pid()) + " GPU " +
                               std::to_string(d.device) + ": " + format_fixed(double(d.peak_bytes) / 1e6, 3) +
                               " MB (" + format_bytes(d.peak_bytes) + ") in use";
            if (d.peak_at) line += " at +" + format_time_auto(double(static_cast<int64_t>(d.peak_at) + l.offset));
            if (d.pool_reserved_peak)
                line += "; async pools reserved up to " + format_fixed(double(d.pool_reserved_peak) / 1e6, 3) +
                        " MB (" + format_bytes(d.pool_reserved_peak) + ")";
            t.notes.push_back(line);
        }
    }
    return t;
}

struct LiveRow {
    const ProcessLedger* ledger;
    const Memory* record;
};

std::vector<LiveRow> live_rows(const std::vector<ProcessLedger>& all) {
    std::vector<LiveRow> rows;
    for (const auto& l : all)
        for (const auto& m : l.live) rows.push_back({&l, &m});
    // Largest first: the leak that matters; ties in allocation order.
    std::stable_sort(rows.begin(), rows.end(), [](const LiveRow& a, const LiveRow& b) { return a.record->bytes > b.record->bytes; });
    return rows;
}

Table live_table(const std::vector<ProcessLedger>& all, size_t max_rows) {
    Table t;
    t.name = "memory_live";
    t.columns = {{"pid", "Pid", ColumnKind::Count},         {"device", "Device", ColumnKind::Count},
                 {"kind", "Kind", ColumnKind::Text},        {"bytes", "Size (MB)", ColumnKind::BytesMB},
                 {"allocated_ns", "Allocated At ({unit})", ColumnKind::TimeNs},
                 {"address", "Address", ColumnKind::Text},  {"api", "API Call", ColumnKind::Text},
                 {"tid", "Tid", ColumnKind::Count},         {"call_site", "Call Site", ColumnKind::Text}};
    auto rows = live_rows(all);
    std::map<const ProcessTrace*, std::unique_ptr<CallSites>> sites;
    size_t shown = 0;
    for (const auto& r : rows) {
        if (max_rows && shown == max_rows) {
            t.notes.push_back("... " + std::to_string(rows.size() - shown) + " more (--format json lists them all)");
            break;
        }
        const ProcessTrace& p = *r.ledger->process;
        const Memory& m = *r.record;
        const ApiCall* api = m.correlation ? p.api_for_correlation(m.correlation) : nullptr;
        Cell site;
        if (const BacktraceFrames* bt = m.correlation ? p.backtrace_for_correlation(m.correlation) : nullptr)
            {
                auto& cs = sites[&p];
                if (!cs) cs = std::make_unique<CallSites>(p);
                site = call_site(*bt, *cs);
            }
        t.rows.push_back({p.pid(), int64_t(m.device), budget_key(memory_budget(m)), int64_t(m.bytes),
                          run_time(m.timestamp, r.ledger->offset), hex(m.address),
                          api ? Cell{std::string(p.str(api->name))} : Cell{},
                          api ? Cell{static_cast<int64_t>(api->tid)} : Cell{}, site});
        ++shown;
    }
    return t;
}

json device_peak_json(const DeviceMemoryPeak& p, int64_t offset) {
    return {{"device", p.device},
            {"peak_bytes", p.peak_bytes},
            {"peak_ns", run_time_json(p.peak_at, offset)},
            {"pool_reserved_peak_bytes", p.pool_reserved_peak},
            {"pool_reserved_peak_ns", run_time_json(p.pool_reserved_peak_at, offset)}};
}

json pools_json(const ProcessLedger& l) {
    json out = json::array();
    for (const auto& op : l.process->memory_pools)
        out.push_back({{"ns", run_time_json(op.timestamp, l.offset)},
                       {"device", op.device},
                       {"address", op.address},
                       {"op", memory_pool_op_name(op.op)},
                       {"pool_type", memory_pool_type_name(op.pool_type)},
                       {"size_bytes", op.size},
                       {"used_bytes", op.used},
                       {"release_threshold_bytes", op.release_threshold},
                       {"min_bytes_to_keep", op.min_bytes_to_keep},
                       {"managed", op.managed != 0}});
    return out;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    size_t u = 0;
    while (v >= 1024 && u + 1 < std::size(units)) {
        v /= 1024;
        ++u;
    }
    return u == 0 ? std::to_string(bytes) + " B" : format_fixed(v, 2) + " " + units[u];
}

json process_memory_json(const std::vector<BudgetUsage>& budgets, const std::vector<DeviceMemoryPeak>& devices,
                         int64_t run_offset_ns) {
    json b = json::array(), d = json::array();
    for (const auto& u : budgets)
        b.push_back({{"device", u.device},
                     {"kind", memory_budget_key(u.budget)},
                     {"allocations", u.allocations},
                     {"allocated_bytes", u.allocated_bytes},
                     {"releases", u.releases},
                     {"released_bytes", u.released_bytes},
                     {"largest_bytes", u.largest_allocation},
                     {"peak_bytes", u.peak_bytes},
                     {"peak_ns", run_time_json(u.peak_at, run_offset_ns)},
                     {"live_count", u.live_count},
                     {"live_bytes", u.live_bytes},
                     {"unmatched_releases", u.unmatched_releases}});
    for (const auto& p : devices) d.push_back(device_peak_json(p, run_offset_ns));
    return {{"kinds", b}, {"devices", d}};
}

void print_memory_lines(const ProcessInfo& p, std::ostream& out) {
    if (p.memory.empty() && p.device_memory.empty()) return;
    std::string line = "    memory:";
    bool first = true;
    auto part = [&](const std::string& text) {
        line += (first ? " " : "; ") + text;
        first = false;
    };
    for (const auto& d : p.device_memory) {
        if (!d.peak_bytes && !d.pool_reserved_peak) continue;
        std::string text = "GPU " + std::to_string(d.device) + " peak " + format_bytes(d.peak_bytes) + " in use";
        if (d.peak_at) text += " at +" + format_time_auto(double(static_cast<int64_t>(d.peak_at) + p.run_offset_ns));
        if (d.pool_reserved_peak) text += " (async pools reserved up to " + format_bytes(d.pool_reserved_peak) + ")";
        part(text);
    }
    uint64_t live = 0, live_bytes = 0;
    for (const auto& u : p.memory) {
        if (lists_live_allocations(u.budget)) {
            live += u.live_count;
            live_bytes += u.live_bytes;
        }
        if (is_device_budget(u.budget) || !u.peak_bytes) continue;
        part(budget_label(u.budget) + " peak " + format_bytes(u.peak_bytes));
    }
    if (live)
        part(std::to_string(live) + (live == 1 ? " allocation" : " allocations") + " (" + format_bytes(live_bytes) +
             ") never freed" + (p.complete ? "" : " before the trace ended") + ": `gprof-report memory` lists them");
    if (!first) out << line << '\n';
}

Table memory_table(const Run& run) { return budget_table(ledgers(run)); }

Table memory_live_table(const Run& run, size_t max_rows) { return live_table(ledgers(run), max_rows); }

json memory_report_json(const Run& run) {
    auto all = ledgers(run);
    json j = table_to_json(budget_table(all));
    json devices = json::array(), pools = json::array();
    for (const auto& l : all) {
        for (const auto& d : l.devices) {
            json one = device_peak_json(d, l.offset);
            one["pid"] = l.process->pid();
            devices.push_back(std::move(one));
        }
        for (auto& op : pools_json(l)) {
            op["pid"] = l.process->pid();
            pools.push_back(std::move(op));
        }
    }
    j["devices"] = devices;
    j["live_allocations"] = table_to_json(live_table(all, 0))["rows"];
    j["pool_operations"] = pools;
    return j;
}

void print_memory_report(const Run& run, const RenderOptions& options, std::ostream& out) {
    auto all = ledgers(run);
    Table budgets = budget_table(all);
    if (budgets.rows.empty()) {
        out << "(no memory records: the trace holds no CUDA allocation)\n";
        return;
    }
    render_table(budgets, options, out);
    Table live = live_table(all, kLiveRowsShown);
    if (options.format == OutputFormat::Markdown) out << "\n#### Still allocated when the trace ended\n\n";
    else out << "\nStill allocated when the trace ended (largest first):\n\n";
    if (live.rows.empty()) out << "(none: every allocation was freed)\n";
    else render_table(live, options, out);
}

}  // namespace gprof::report
