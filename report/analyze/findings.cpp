// The findings: one function per rule (small copies, tiny grids, one busy stream, calls in the steady state,
// dropped records, ranks; the GPU metrics' in gpu_metric_findings.cpp), each with its evidence and advice. Rules and thresholds: docs/analysis.md.
#include "analyze/run_parts.h"

namespace gprof::report::analysis_run {

std::vector<Interval> steady_state(const Context& c, const StepSet& steps) {
    std::vector<Interval> out;
    if (steps.steps.size() >= 2) {
        for (size_t i = 0; i < steps.steps.size(); ++i) {
            // The first step of each process is warm-up.
            if (i == 0 || steps.steps[i].process != steps.steps[i - 1].process) continue;
            out.push_back({steps.steps[i].start, steps.steps[i].end});
        }
        return interval_union(std::move(out));
    }
    int64_t len = c.window.length();
    out.push_back({c.window.start + len / 10, c.window.end - len / 10});
    return out;
}

namespace {

struct Span {
    int64_t first = INT64_MAX, last = INT64_MIN;
    void add(int64_t s, int64_t e) {
        first = std::min(first, s);
        last = std::max(last, e);
    }
};

// The steady state: inside steps after the first when steps are known, else the middle 80% of the window.

bool inside(const std::vector<Interval>& set, int64_t t) {
    auto it = std::upper_bound(set.begin(), set.end(), t, [](int64_t x, const Interval& i) { return x < i.end; });
    return it != set.end() && it->start <= t;
}

void add_finding(std::vector<Finding>& out, Finding f, const Span& span) {
    f.first = span.first == INT64_MAX ? 0 : span.first;
    f.last = span.last == INT64_MIN ? f.first : span.last;
    out.push_back(std::move(f));
}

// The call sites of API calls (model/resolved_call_sites.h), per process, made when a finding first asks; nullptr for a
// call without one (a trace recorded without --backtrace/--cudabacktrace has none).
class SiteLookup {
public:
    explicit SiteLookup(const Run& run) : run_(run), sites_(run.processes.size()) {}
    const ResolvedStack* of(size_t process, uint32_t correlation) {
        const ProcessTrace& p = run_.processes[process];
        if (p.backtraces.empty() || !correlation) return nullptr;
        auto& s = sites_[process];
        if (!s) s = std::make_unique<CallSites>(p);
        const ResolvedStack* r = s->of_correlation(correlation);
        return r && !r->frames.empty() ? r : nullptr;
    }

private:
    const Run& run_;
    std::vector<std::unique_ptr<CallSites>> sites_;
};

// A finding's occurrences per call site; top() the heaviest kFindingSites.
struct SiteTally {
    std::map<std::pair<std::string, std::string>, FindingSite> by_site;
    void add(const ResolvedStack* r, int64_t ns) {
        if (!r) return;
        FindingSite& f = by_site[{r->site, r->function}];
        f.site = r->site;
        f.function = r->function;
        ++f.count;
        f.time_ns = sat_add(f.time_ns, ns);
    }
    std::vector<FindingSite> top() const {
        std::vector<FindingSite> v;
        for (const auto& [k, f] : by_site) v.push_back(f);
        std::stable_sort(v.begin(), v.end(), [](const FindingSite& a, const FindingSite& b) {
            return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.count > b.count;
        });
        if (v.size() > kFindingSites) v.resize(kFindingSites);
        return v;
    }
};

// What the copies of the run add up to, per kind the copy rules look at.
struct CopyTally {
    size_t pageable = 0, small = 0, sync = 0, copies = 0;
    int64_t pageable_ns = 0, small_ns = 0, sync_ns = 0;
    uint64_t pageable_bytes = 0, small_bytes = 0;
    Span pageable_span, small_span, sync_span;
    SiteTally pageable_sites, sync_sites;
};

CopyTally tally_copies(const Context& c, SiteLookup& sites) {
    CopyTally n;
    for (size_t pi = 0; pi < c.run.processes.size(); ++pi) {
        const ProcessTrace& proc = c.run.processes[pi];
        for (const trace::Memcpy& m : proc.memcpys) {
            if (!timed(m.start, m.end)) continue;
            int64_t s = proc.to_run_ns(m.start), e = proc.to_run_ns(m.end), d = e - s;
            ++n.copies;
            bool host_side = m.copy_kind == trace::MemcpyKind::HtoD || m.copy_kind == trace::MemcpyKind::DtoH;
            if (host_side && (m.src_kind == trace::MemoryKind::Pageable || m.dst_kind == trace::MemoryKind::Pageable)) {
                ++n.pageable;
                n.pageable_ns = sat_add(n.pageable_ns, d);
                n.pageable_bytes += m.bytes;
                n.pageable_span.add(s, e);
                n.pageable_sites.add(sites.of(pi, m.correlation), d);
            }
            if (m.bytes < kSmallCopyBytes) {
                ++n.small;
                n.small_ns = sat_add(n.small_ns, d);
                n.small_bytes += m.bytes;
                n.small_span.add(s, e);
            }
            if (!m.async) {
                ++n.sync;
                n.sync_ns = sat_add(n.sync_ns, d);
                n.sync_span.add(s, e);
                n.sync_sites.add(sites.of(pi, m.correlation), d);
            }
        }
    }
    return n;
}

// Copies from pageable host memory, many small copies, synchronous copies: each when it is frequent or costly.
void copy_findings(const Context& c, double window, SiteLookup& sites, std::vector<Finding>& out) {
    const CopyTally n = tally_copies(c, sites);
    if (n.pageable && (n.pageable >= kMinOccurrences || static_cast<double>(n.pageable_ns) >= kMinShareOfWindow * window)) {
        add_finding(out, {"pageable_memcpy", "H<->D copies from pageable host memory", static_cast<double>(n.pageable),
                          "count",
                          std::to_string(n.pageable) + " copies, " + std::to_string(n.pageable_bytes) + " bytes, " +
                              t(static_cast<double>(n.pageable_ns)) + " of copy time (" +
                              pct(100.0 * static_cast<double>(n.pageable_ns) / window) + " of the window)",
                          "allocate the host buffers pinned (cudaMallocHost / cudaHostAlloc, or pin_memory=True in "
                          "a PyTorch DataLoader): pageable copies are staged through a driver buffer and cannot "
                          "overlap with kernels",
                          n.pageable_ns, 0, 0, n.pageable_sites.top()},
                    n.pageable_span);
    }
    if (n.small >= kSmallCopyCount) {
        add_finding(out, {"small_copies", "many small copies", static_cast<double>(n.small), "count",
                          std::to_string(n.small) + " of " + std::to_string(n.copies) + " copies move less than " +
                              std::to_string(kSmallCopyBytes / 1024) + " KiB (average " +
                              std::to_string(n.small_bytes / n.small) + " bytes), " + t(static_cast<double>(n.small_ns)) +
                              " of copy time",
                          "batch small transfers into one buffer and copy it once; each copy pays a fixed cost of "
                          "several microseconds",
                          n.small_ns, 0, 0},
                    n.small_span);
    }
    if (n.sync && (n.sync >= kMinOccurrences || static_cast<double>(n.sync_ns) >= kMinShareOfWindow * window)) {
        add_finding(out, {"sync_copies", "synchronous copies (default-stream cudaMemcpy)", static_cast<double>(n.sync),
                          "count",
                          std::to_string(n.sync) + " copies issued by a synchronous API, " +
                              t(static_cast<double>(n.sync_ns)) + " of copy time; the host waits for each",
                          "use cudaMemcpyAsync on a non-default stream with pinned host memory, and synchronise "
                          "once where the result is needed",
                          n.sync_ns, 0, 0, n.sync_sites.top()},
                    n.sync_span);
    }
}

// Kernels with fewer blocks than the device has SMs, when they take a real share of kernel time.
void tiny_grid_finding(const Context& c, std::vector<Finding>& out) {
    int64_t kernel_ns = 0, tiny_ns = 0;
    size_t tiny = 0;
    Span span;
    uint32_t sms_seen = 0;
    for (const ProcessTrace& proc : c.run.processes) {
        std::map<uint32_t, uint32_t> sms;
        for (const auto& d : proc.devices) sms[d.id] = d.sm_count;
        for (const trace::Kernel& k : proc.kernels) {
            if (!timed(k.start, k.end)) continue;
            int64_t d = sat_duration(k.start, k.end);
            kernel_ns = sat_add(kernel_ns, d);
            auto it = sms.find(k.device);
            if (it == sms.end() || it->second == 0) continue;
            sms_seen = it->second;
            int64_t blocks = int64_t{k.grid_x} * std::max(k.grid_y, 1) * std::max(k.grid_z, 1);
            if (blocks < it->second) {
                ++tiny;
                tiny_ns = sat_add(tiny_ns, d);
                span.add(proc.to_run_ns(k.start), proc.to_run_ns(k.end));
            }
        }
    }
    double share = kernel_ns > 0 ? static_cast<double>(tiny_ns) / static_cast<double>(kernel_ns) : 0;
    if (tiny && share >= kTinyGridTimeShare) {
        add_finding(out, {"tiny_grids", "kernels with fewer blocks than SMs", 100.0 * share, "%",
                          std::to_string(tiny) + " launches with fewer blocks than the " +
                              std::to_string(sms_seen) + " SMs take " + pct(100.0 * share) + " of kernel time (" +
                              t(static_cast<double>(tiny_ns)) + ")",
                          "give these kernels more parallelism (smaller blocks, more of them, or split the work) "
                          "or run independent ones concurrently on several streams",
                          tiny_ns, 0, 0},
                    span);
    }
}

// One stream does almost everything while others exist and the device has idle time.
void single_busy_stream_findings(const Context& c, const std::vector<DeviceUtilisation>& devs, std::vector<Finding>& out) {
    for (const DeviceUtilisation& d : devs) {
        if (d.streams < 2 || d.busy_pct >= kGpuBoundPct) continue;
        std::map<uint32_t, int64_t> per_stream;
        Span span;
        int64_t sum = 0;
        for (const ProcessTrace& proc : c.run.processes) {
            if (proc.header.hostname != d.key.host) continue;
            auto add = [&](uint32_t dev, uint32_t stream, trace::Timestamp s, trace::Timestamp e) {
                if (dev != d.key.device || !timed(s, e)) return;
                per_stream[stream] = sat_add(per_stream[stream], sat_duration(s, e));
                sum = sat_add(sum, sat_duration(s, e));
                span.add(proc.to_run_ns(s), proc.to_run_ns(e));
            };
            for (const auto& k : proc.kernels) add(k.device, k.stream, k.start, k.end);
            for (const auto& m : proc.memcpys) add(m.device, m.stream, m.start, m.end);
            for (const auto& m : proc.memsets) add(m.device, m.stream, m.start, m.end);
        }
        auto top = std::max_element(per_stream.begin(), per_stream.end(),
                                    [](auto& a, auto& b) { return a.second < b.second; });
        double share = sum > 0 ? static_cast<double>(top->second) / static_cast<double>(sum) : 0;
        if (share >= kSingleStreamShare) {
            add_finding(out, {"single_busy_stream", "one stream carries the work while others idle", 100.0 * share,
                              "%",
                              "stream " + std::to_string(top->first) + " on GPU " + std::to_string(d.key.device) +
                                  " holds " + pct(100.0 * share) + " of GPU operation time across " +
                                  std::to_string(d.streams) + " streams; the GPU is busy " + pct(d.busy_pct),
                              "move independent kernels and copies to other streams so they overlap (copy/compute "
                              "overlap needs pinned memory and cudaMemcpyAsync)",
                              top->second, 0, 0},
                        span);
        }
    }
}

// Allocation and implicit synchronisation in the steady-state loop.
void steady_state_call_findings(const Context& c, const StepSet& steps, SiteLookup& sites, std::vector<Finding>& out) {
    std::vector<Interval> steady = steady_state(c, steps);
    size_t alloc = 0, implicit = 0;
    int64_t alloc_ns = 0, implicit_ns = 0;
    Span alloc_span, implicit_span;
    SiteTally alloc_sites, implicit_sites;
    std::map<std::string, size_t> implicit_names;
    for (const auto& [key, h] : c.threads) {
        const ProcessTrace& proc = c.run.processes[key.process];
        const NameFlags& names = c.names[key.process];
        for (auto& [i, a] : h.apis) {
            uint8_t f = names(a->name);
            if (!(f & (kAllocName | kImplicitSyncName)) || !inside(steady, i.start)) continue;
            std::string_view name = proc.str(a->name);
            if (f & kAllocName) {
                ++alloc;
                alloc_ns = sat_add(alloc_ns, i.length());
                alloc_span.add(i.start, i.end);
                alloc_sites.add(sites.of(key.process, a->correlation), i.length());
            }
            if (f & kImplicitSyncName) {
                ++implicit;
                implicit_ns = sat_add(implicit_ns, i.length());
                implicit_span.add(i.start, i.end);
                implicit_sites.add(sites.of(key.process, a->correlation), i.length());
                ++implicit_names[std::string(name)];
            }
        }
    }
    std::string where = steps.steps.size() >= 2 ? "inside steps after the first" : "in the middle 80% of the run";
    if (alloc > 0) {
        add_finding(out, {"alloc_in_loop", "cudaMalloc/cudaFree in the steady-state loop",
                          static_cast<double>(alloc), "count",
                          std::to_string(alloc) + " allocation calls " + where + ", " +
                              t(static_cast<double>(alloc_ns)) + " of host time",
                          "allocate once before the loop and reuse the buffers (or use a caching allocator / "
                          "cudaMallocAsync with a memory pool); cudaFree synchronises the device",
                          alloc_ns, 0, 0, alloc_sites.top()},
                    alloc_span);
    }
    if (implicit > 0) {
        std::string names;
        for (auto& [n, k] : implicit_names) names += (names.empty() ? "" : ", ") + n + " x" + std::to_string(k);
        add_finding(out, {"implicit_sync", "calls that synchronise the device implicitly",
                          static_cast<double>(implicit), "count",
                          std::to_string(implicit) + " calls " + where + " (" + names + "), " +
                              t(static_cast<double>(implicit_ns)) + " of host time",
                          "move these calls out of the loop, or use their asynchronous forms (cudaMemsetAsync, "
                          "cudaFreeAsync) on a stream",
                          implicit_ns, 0, 0, implicit_sites.top()},
                    implicit_span);
    }
}

// Records lost: every number above is then a lower bound. Each way of losing records has its own remedy, named
// with the setting that really controls it (docs/environment.md). NVTX ranges left open are not lost (they are in
// the trace, "never ended": model/model.h drop_loses_records), so they never make this finding.
void dropped_records_finding(const Context& c, std::vector<Finding>& out) {
    uint64_t by_source[4] = {};
    size_t unfinished = 0, damaged = 0;
    for (const ProcessTrace& proc : c.run.processes) {
        for (const trace::Dropped& d : proc.dropped)
            if (drop_loses_records(d.source)) by_source[std::min<size_t>(static_cast<size_t>(d.source), 3)] += d.count;
        if (!proc.end) ++unfinished;
        if (proc.read_stats.damaged()) ++damaged;
    }
    const uint64_t cupti = by_source[static_cast<size_t>(trace::DropSource::CuptiBuffer)];
    const uint64_t queue = by_source[static_cast<size_t>(trace::DropSource::CollectorQueue)];
    const uint64_t write = by_source[static_cast<size_t>(trace::DropSource::WriteError)];
    const uint64_t dropped = cupti + queue + write;
    if (!dropped && !unfinished && !damaged) return;
    std::vector<std::string> ev, fix;
    if (cupti) {
        ev.push_back(std::to_string(cupti) + " records dropped by CUPTI (its device buffers were full)");
        fix.push_back("give CUPTI larger device buffers: GPROF_CUPTI_DEVICE_BUFFER_MB=16 (or more) in gprof-run's "
                      "environment (default 3 MiB per context)");
    }
    if (queue) {
        ev.push_back(std::to_string(queue) + " records dropped by the collector (its buffers were full)");
        fix.push_back("record less at a time: a capture range (-c nvtx:NAME, -c cudaProfilerApi) or -d SEC");
    }
    if (write) {
        ev.push_back(std::to_string(write) + " records could not be written (disk full or I/O error)");
        fix.push_back("free space where the run directory is (-o)");
    }
    if (unfinished) {
        ev.push_back(std::to_string(unfinished) + " process(es) did not finish their trace");
        fix.push_back("let the program exit normally (a SIGKILL or a crash loses the last flush period)");
    }
    if (damaged) ev.push_back(std::to_string(damaged) + " trace(s) damaged");
    auto join = [](const std::vector<std::string>& v, const char* sep) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
        return s;
    };
    add_finding(out, {"dropped_records", "records were lost: figures are lower bounds", static_cast<double>(dropped),
                      "count", join(ev, ", "), fix.empty() ? "check the disk and the traces' warnings" : join(fix, "; "),
                      0, 0, 0},
                Span{});
}

// Lost records first (they qualify every other figure), then by the time involved.
void rank_findings(std::vector<Finding>& out) {
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
        if (a.rule == "dropped_records" || b.rule == "dropped_records") return a.rule == "dropped_records" && b.rule != a.rule;
        return a.time_ns > b.time_ns;
    });
}

}  // namespace

std::vector<Finding> findings(const Context& c, const StepSet& steps, const std::vector<DeviceUtilisation>& devs) {
    std::vector<Finding> out;
    const double window = static_cast<double>(std::max<int64_t>(c.window.length(), 1));
    SiteLookup sites(c.run);
    copy_findings(c, window, sites, out);
    tiny_grid_finding(c, out);
    single_busy_stream_findings(c, devs, out);
    steady_state_call_findings(c, steps, sites, out);
    dropped_records_finding(c, out);
    gpu_metric_findings(c, devs, out);
    rank_findings(out);
    return out;
}

}  // namespace gprof::report::analysis_run
