#include "model/model.h"
#include "model/names.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <system_error>
#include <unordered_map>

#include "gprof/trace/names.h"
#include "gprof/trace/runtime_driver_calls.h"
#include "model/identity.h"
#include "model/ingest.h"

namespace gprof::report {

namespace fs = std::filesystem;
using namespace gprof::trace;

// ----- filter ----------------------------------------------------------------------------------------------

namespace {

uint64_t parse_time_value(std::string_view text, std::string_view whole) {
    std::string s(text);
    char* endp = nullptr;
    double v = std::strtod(s.c_str(), &endp);
    std::string unit = endp ? std::string(endp) : std::string();
    double scale = 1;
    if (unit.empty() || unit == "ns") scale = 1;
    else if (unit == "us") scale = 1e3;
    else if (unit == "ms") scale = 1e6;
    else if (unit == "s") scale = 1e9;
    else
        throw std::invalid_argument("--time-range '" + std::string(whole) + "': unknown unit '" + unit +
                                    "' (use ns, us, ms or s)");
    if (endp == s.c_str() || v < 0)
        throw std::invalid_argument("--time-range '" + std::string(whole) +
                                    "': expected A:B with non-negative times such as 10ms:2.5s");
    return static_cast<uint64_t>(v * scale + 0.5);
}

int64_t clock_offset(const TraceHeader& h) {
    return h.clock.realtime_ns - static_cast<int64_t>(h.clock.trace_ns);
}

}  // namespace

void parse_time_range(std::string_view text, Filter& filter) {
    auto colon = text.find(':');
    if (colon == std::string_view::npos)
        throw std::invalid_argument("--time-range '" + std::string(text) + "': expected A:B, e.g. 1s:2s or 500ms:");
    auto a = text.substr(0, colon), b = text.substr(colon + 1);
    if (!a.empty()) filter.time_begin = parse_time_value(a, text);
    if (!b.empty()) filter.time_end = parse_time_value(b, text);
    auto bare = [](std::string_view v) { return !v.empty() && std::isdigit(static_cast<unsigned char>(v.back())); };
    filter.time_range_bare_ns = bare(a) || bare(b);
    if (filter.time_begin && filter.time_end && *filter.time_end <= *filter.time_begin)
        throw std::invalid_argument("--time-range '" + std::string(text) + "': the end must be after the start");
}

void parse_clock_offset(std::string_view text, Filter& filter) {
    const std::string whole(text);
    auto eq = text.rfind('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        throw std::invalid_argument("--clock-offset '" + whole + "': expected HOST=NS, e.g. node07=-1.5ms");
    std::string value(text.substr(eq + 1));
    char* endp = nullptr;
    errno = 0;
    double v = std::strtod(value.c_str(), &endp);
    std::string unit = endp ? std::string(endp) : std::string();
    double scale = unit.empty() || unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 0;
    if (endp == value.c_str() || scale == 0 || errno != 0 || !(std::abs(v * scale) < 1e18))
        throw std::invalid_argument("--clock-offset '" + whole +
                                    "': the offset must be a signed number with an optional unit (ns, us, ms, s)");
    filter.clock_offsets[std::string(text.substr(0, eq))] = static_cast<int64_t>(std::llround(v * scale));
}

RecordFilter::RecordFilter(const Filter& f, std::function<std::string_view(StringId)> names, int64_t offset, int64_t base)
    : f_(f), names_(std::move(names)), offset_(offset), base_(base) {
    if (!f.kernel_regex.empty()) re_ = std::make_unique<std::regex>(f.kernel_regex, std::regex::ECMAScript);
}
RecordFilter::~RecordFilter() = default;

bool RecordFilter::keep(const Record& r) {
    if (!f_.devices.empty()) {
        uint32_t dev;
        if (device_of(r, dev) && std::find(f_.devices.begin(), f_.devices.end(), dev) == f_.devices.end())
            return false;
    }
    if (re_ && r.kind == RecordKind::Kernel && !kernel_matches(r.kernel.name)) return false;
    if (f_.time_begin || f_.time_end) {
        Timestamp s, e;
        if (record_interval(r, s, e)) {
            int64_t rs = static_cast<int64_t>(s) + offset_ - base_;
            int64_t re = static_cast<int64_t>(e) + offset_ - base_;
            if (r.kind == RecordKind::Nvtx && r.nvtx.end == 0) re = INT64_MAX;
            if (f_.time_end && rs >= static_cast<int64_t>(*f_.time_end)) return false;
            if (f_.time_begin && re < static_cast<int64_t>(*f_.time_begin)) return false;
            if (f_.time_begin && re == rs && rs < static_cast<int64_t>(*f_.time_begin)) return false;
        }
    }
    return true;
}

bool RecordFilter::device_of(const Record& r, uint32_t& dev) {
    switch (r.kind) {
        case RecordKind::Device: dev = r.device.id; return true;
        case RecordKind::Kernel: dev = r.kernel.device; return true;
        case RecordKind::Memcpy: dev = r.memcpy.device; return true;
        case RecordKind::Memset: dev = r.memset.device; return true;
        case RecordKind::Memory: dev = r.memory.device; return true;
        case RecordKind::MemoryPool: dev = r.memory_pool.device; return true;
        case RecordKind::GraphLaunch: dev = r.graph_launch.device; return true;
        case RecordKind::GpuMetricSet: dev = r.gpu_metric_set.device; return true;
        case RecordKind::GpuMetricSample: dev = r.gpu_metric_sample.device; return true;
        default: return false;
    }
}

bool RecordFilter::kernel_matches(StringId id) {
    if (id < (1u << 16) && id >= cache_.size()) cache_.resize(id + 1, -1);
    int8_t& cached = id < (1u << 16) ? cache_[id] : sparse_cache_.try_emplace(id, -1).first->second;
    if (cached < 0) {
        // The demangled name the tables show ("void at::native::..."), or the mangled one as recorded, so that
        // filters written either way match.
        std::string name(names_(id));
        cached = std::regex_search(demangle(name), *re_) || std::regex_search(name, *re_) ? 1 : 0;
    }
    return cached == 1;
}

bool record_interval(const Record& r, Timestamp& start, Timestamp& end) {
    switch (r.kind) {
        case RecordKind::ApiCall: start = r.api.start; end = r.api.end; return true;
        case RecordKind::Kernel: start = r.kernel.start; end = r.kernel.end; return true;
        case RecordKind::Memcpy: start = r.memcpy.start; end = r.memcpy.end; return true;
        case RecordKind::Memset: start = r.memset.start; end = r.memset.end; return true;
        case RecordKind::Sync: start = r.sync.start; end = r.sync.end; return true;
        case RecordKind::Nvtx: start = r.nvtx.start; end = r.nvtx.end ? r.nvtx.end : r.nvtx.start; return true;
        case RecordKind::Memory: start = end = r.memory.timestamp; return true;
        case RecordKind::MemoryPool: start = end = r.memory_pool.timestamp; return true;
        case RecordKind::Overhead: start = r.overhead.start; end = r.overhead.end; return true;
        case RecordKind::GraphLaunch: start = r.graph_launch.start; end = r.graph_launch.end; return true;
        case RecordKind::CpuSample: start = end = r.cpu_sample.timestamp; return true;
        case RecordKind::OsRuntimeCall: start = r.osrt_call.start; end = r.osrt_call.end; return true;
        case RecordKind::GpuMetricSample: start = r.gpu_metric_sample.start; end = r.gpu_metric_sample.end; return true;
        default: return false;
    }
}

std::string trace_label(const fs::path& path) { return path.filename().string(); }

// ----- ProcessTrace ----------------------------------------------------------------------------------------

std::string_view ProcessTrace::str(StringId id) const {
    if (id < strings.size()) return strings[id];
    static thread_local std::string placeholder;
    placeholder = "<string #" + std::to_string(id) + ">";
    return placeholder;
}

std::string_view ProcessTrace::thread_name(uint64_t tid) const {
    for (auto it = threads.rbegin(); it != threads.rend(); ++it)
        if (it->tid == tid) return str(it->name);
    return {};
}

uint64_t ProcessTrace::dropped_total() const {
    uint64_t n = 0;
    for (const auto& d : dropped)
        if (drop_loses_records(d.source)) n += d.count;
    return n;
}

void ProcessTrace::build_indexes() {
    api_by_corr_.clear();
    ops_by_corr_.clear();
    bt_by_corr_.clear();
    api_by_corr_.reserve(api_calls.size());
    for (uint32_t i = 0; i < api_calls.size(); ++i)
        if (api_calls[i].correlation) api_by_corr_.emplace_back(api_calls[i].correlation, i);
    ops_by_corr_.reserve(kernels.size() + memcpys.size() + memsets.size() + syncs.size() + graph_launches.size());
    std::vector<size_t> op_runs{0};  // where each kind's ops start in ops_by_corr_, then its size
    auto add_ops = [&](const auto& vec, GpuOpKind kind) {
        for (uint32_t i = 0; i < vec.size(); ++i)
            if (vec[i].correlation) ops_by_corr_.emplace_back(vec[i].correlation, GpuOpRef{kind, i});
        op_runs.push_back(ops_by_corr_.size());
    };
    add_ops(kernels, GpuOpKind::Kernel);
    add_ops(memcpys, GpuOpKind::Memcpy);
    add_ops(memsets, GpuOpKind::Memset);
    add_ops(syncs, GpuOpKind::Sync);
    add_ops(graph_launches, GpuOpKind::GraphLaunch);
    for (uint32_t i = 0; i < backtraces.size(); ++i) bt_by_corr_.emplace_back(backtraces[i].correlation, i);
    // A stable sort of each index by correlation. Each kind's records mostly come in correlation order already: a
    // run found sorted is left as it is, and the runs of the op index (one per kind) are merged, stably, in the order
    // they were appended, which gives what one stable sort of the whole gives, in linear time (the sorts were a large
    // share of the summary's Analysis on a 10^7-record run: docs/performance.md, issue 33).
    auto by_first = [](const auto& a, const auto& b) { return a.first < b.first; };
    auto stable_sort_run = [&](auto first, auto last) {
        if (!std::is_sorted(first, last, by_first)) std::stable_sort(first, last, by_first);
    };
    stable_sort_run(api_by_corr_.begin(), api_by_corr_.end());
    for (size_t r = 0; r + 1 < op_runs.size(); ++r) {
        stable_sort_run(ops_by_corr_.begin() + static_cast<std::ptrdiff_t>(op_runs[r]),
                        ops_by_corr_.begin() + static_cast<std::ptrdiff_t>(op_runs[r + 1]));
        if (r > 0)
            std::inplace_merge(ops_by_corr_.begin(), ops_by_corr_.begin() + static_cast<std::ptrdiff_t>(op_runs[r]),
                               ops_by_corr_.begin() + static_cast<std::ptrdiff_t>(op_runs[r + 1]), by_first);
    }
    stable_sort_run(bt_by_corr_.begin(), bt_by_corr_.end());

    graph_launch_is_work_.assign(graph_launches.size(), true);
    for (size_t i = 0; i < graph_launches.size(); ++i) {
        uint32_t corr = graph_launches[i].correlation;
        if (!corr) continue;
        for (const GpuOpRef& op : gpu_ops_for_correlation(corr)) {
            bool node = (op.kind == GpuOpKind::Kernel && kernels[op.index].graph_id) ||
                        (op.kind == GpuOpKind::Memcpy && memcpys[op.index].graph_id) ||
                        (op.kind == GpuOpKind::Memset && memsets[op.index].graph_id);
            if (node) {
                graph_launch_is_work_[i] = false;
                break;
            }
        }
    }

    first_ns = last_ns = 0;
    auto widen = [&](Timestamp s, Timestamp e) {
        if (s == 0) return;
        if (first_ns == 0 || s < first_ns) first_ns = s;
        if (e > last_ns) last_ns = e;
        if (s > last_ns) last_ns = s;
    };
    for (const auto& r : api_calls) widen(r.start, r.end);
    for (const auto& r : kernels) widen(r.start, r.end);
    for (const auto& r : memcpys) widen(r.start, r.end);
    for (const auto& r : memsets) widen(r.start, r.end);
    for (const auto& r : syncs) widen(r.start, r.end);
    for (const auto& r : nvtx) widen(r.start, r.end);
    for (const auto& r : memory) widen(r.timestamp, r.timestamp);
    for (const auto& r : memory_pools) widen(r.timestamp, r.timestamp);
    for (const auto& r : graph_launches) widen(r.start, r.end);
    widen(nvtx_left_out_first, nvtx_left_out_last);
}

const ApiCall* ProcessTrace::api_for_correlation(uint32_t correlation) const {
    auto it = std::lower_bound(api_by_corr_.begin(), api_by_corr_.end(), correlation,
                               [](const auto& p, uint32_t c) { return p.first < c; });
    if (it == api_by_corr_.end() || it->first != correlation) return nullptr;
    return &api_calls[it->second];
}

std::vector<GpuOpRef> ProcessTrace::gpu_ops_for_correlation(uint32_t correlation) const {
    std::vector<GpuOpRef> out;
    auto it = std::lower_bound(ops_by_corr_.begin(), ops_by_corr_.end(), correlation,
                               [](const auto& p, uint32_t c) { return p.first < c; });
    for (; it != ops_by_corr_.end() && it->first == correlation; ++it) out.push_back(it->second);
    return out;
}

const std::vector<uint64_t>& ProcessTrace::stack_frames(uint32_t stack) const {
    static const std::vector<uint64_t> none;
    auto it = stack ? stacks.find(stack) : stacks.end();
    return it == stacks.end() ? none : it->second;
}

const BacktraceFrames* ProcessTrace::backtrace_for_correlation(uint32_t correlation) const {
    auto it = std::lower_bound(bt_by_corr_.begin(), bt_by_corr_.end(), correlation,
                               [](const auto& p, uint32_t c) { return p.first < c; });
    if (it == bt_by_corr_.end() || it->first != correlation) return nullptr;
    return &backtraces[it->second];
}

std::vector<std::string> Run::all_warnings() const {
    std::vector<std::string> out = warnings;
    for (const auto& p : processes)
        for (const auto& w : p.warnings) out.push_back(trace_label(p.path) + ": " + w);
    return out;
}

// ----- finding and streaming traces ------------------------------------------------------------------------

std::vector<fs::path> find_traces(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".gprof" && !it->is_directory(ec)) out.push_back(it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<fs::path> expand_inputs(const std::vector<fs::path>& inputs) {
    std::vector<fs::path> out;
    for (const auto& in : inputs) {
        std::error_code ec;
        auto st = fs::status(in, ec);
        // Only a missing path "does not exist": a symbolic link loop or a directory we may not enter says so.
        if (ec && ec != std::errc::no_such_file_or_directory)
            throw std::runtime_error("'" + in.string() + "' cannot be read: " + ec.message() +
                                     (ec == std::errc::too_many_symbolic_link_levels ? " (a symbolic link loop)" : ""));
        if (ec || !fs::exists(st)) throw std::runtime_error("'" + in.string() + "' does not exist");
        if (fs::is_directory(st)) {
            fs::directory_iterator probe(in, ec);
            if (ec) throw std::runtime_error("cannot read the directory '" + in.string() + "': " + ec.message());
            auto found = find_traces(in);
            if (found.empty()) {
                // The parent of one run directory per rank (or of one per job, each holding one per rank): the
                // directories below it, up to three levels down, in name order; symbolic links are not followed.
                std::vector<fs::path> subdirs;
                fs::recursive_directory_iterator it(in, fs::directory_options::skip_permission_denied, ec), end;
                for (; !ec && it != end; it.increment(ec)) {
                    if (it.depth() >= 2) it.disable_recursion_pending();
                    if (it->is_directory(ec) && !it->is_symlink(ec)) subdirs.push_back(it->path());
                }
                std::sort(subdirs.begin(), subdirs.end());
                for (const auto& sub : subdirs) {
                    auto more = find_traces(sub);
                    found.insert(found.end(), more.begin(), more.end());
                }
            }
            if (found.empty())
                throw std::runtime_error("'" + in.string() + "' holds no *.gprof traces (is it a gprof-run run directory?)");
            out.insert(out.end(), found.begin(), found.end());
        } else {
            out.push_back(in);
        }
    }
    // The same trace given twice (a run directory and one of its traces, or the directory twice) is read once:
    // counting it twice would double every figure (issue 30).
    std::vector<fs::path> unique;
    std::set<std::string> seen;
    for (auto& p : out) {
        std::error_code ec;
        fs::path key = fs::weakly_canonical(p, ec);
        if (seen.insert(ec ? p.lexically_normal().string() : key.string()).second) unique.push_back(std::move(p));
    }
    return unique;
}

namespace {
ProgressHook& the_progress_hook() {
    static ProgressHook hook;
    return hook;
}
}  // namespace

const ProgressHook& progress_hook() { return the_progress_hook(); }
void set_progress_hook(ProgressHook hook) { the_progress_hook() = std::move(hook); }

OpenedRun open_traces(const std::vector<fs::path>& traces, const Filter& filter,
                      const std::function<void(const fs::path&, const std::string&)>& unreadable) {
    OpenedRun run;
    for (const auto& path : traces) {
        try {
            auto r = std::make_unique<TraceReader>(path.string());
            if (!filter.pids.empty() &&
                std::find(filter.pids.begin(), filter.pids.end(), r->header().pid) == filter.pids.end())
                continue;
            run.traces.push_back({std::move(r), 0});
        } catch (const std::exception& e) {
            if (unreadable) unreadable(path, e.what());
        }
    }
    // Each trace's offset to the common realtime axis: its own realtime anchor (every process of one host reads the
    // same CLOCK_REALTIME), plus the user's correction for its host.
    auto offset_of = [&filter](const TraceHeader& h) {
        auto it = filter.clock_offsets.find(h.hostname);
        return clock_offset(h) + (it == filter.clock_offsets.end() ? 0 : it->second);
    };
    bool have_base = false;
    for (auto& t : run.traces) {
        const TraceHeader& h = t.reader->header();
        t.clock_offset_ns = offset_of(h);
        int64_t start = h.clock.realtime_ns + (t.clock_offset_ns - clock_offset(h));
        if (!have_base || start < run.run_base_realtime_ns) run.run_base_realtime_ns = start;
        have_base = true;
    }
    return run;
}

void stream_run(const std::vector<fs::path>& traces, const Filter& filter, const StreamCallbacks& cb) {
    const ProgressHook& progress = progress_hook();
    // Open every reader first: the run axis needs every header's clock before any record is placed on it.
    OpenedRun opened = open_traces(traces, filter, cb.unreadable);
    const int64_t base = opened.run_base_realtime_ns;
    Progress done;
    for (const auto& t : opened.traces) done.bytes_total += t.reader->stats().file_bytes;
    if (progress) progress(done);  // the clock of the rates starts here
    for (auto& t : opened.traces) {
        auto& r = t.reader;
        StreamContext ctx;
        ctx.reader = r.get();
        ctx.clock_offset_ns = t.clock_offset_ns;
        ctx.run_base_realtime_ns = base;
        if (cb.begin) cb.begin(ctx);
        std::unique_ptr<RecordFilter> rf;
        if (!filter.empty())
            rf = std::make_unique<RecordFilter>(filter, [&r](StringId id) { return r->string(id); }, ctx.clock_offset_ns, base);
        Record rec;
        uint64_t seen = 0;
        done.trace = r->path();
        RecordGate gate(RecordGate::hides_runtime_driver_calls(filter, r->header()), rf.get());
        try {
            while (r->next(rec)) {
                if (progress && (++seen & 0xFFFFF) == 0) {
                    Progress now = done;
                    now.bytes_done += r->bytes_read();
                    now.records += seen;
                    progress(now);
                }
                if (!gate.admit(rec)) continue;
                if (cb.record) cb.record(ctx, rec);
            }
        } catch (const std::exception& e) {
            // The reader promises not to throw on damage; a visitor's own exception ends this trace only.
            if (cb.unreadable) cb.unreadable(r->path(), e.what());
        }
        ctx.hidden_driver_calls = gate.hidden_driver_calls();
        if (cb.end) cb.end(ctx);
        done.bytes_done += r->stats().file_bytes;
        done.records += seen;
        r.reset();  // unmap as soon as we are done with it
    }
    if (progress) {
        done.finished = true;
        progress(done);
    }
}

// ----- loading the model -----------------------------------------------------------------------------------

namespace {

// Files a record where the model keeps its kind: the vectors of GPROF_MODEL_RECORD_VECTORS, and by hand the kinds
// kept otherwise (trace::visit does not compile without a handler for every kind).
struct StoreRecord {
    ProcessTrace& p;
    const LoadOptions& options;
    std::map<std::vector<uint64_t>, uint32_t>& legacy_stack_ids;  // Backtrace frame lists interned (<= 1.3)
    const TraceReader& reader;  // strings are defined before their first use: a set's metric names read at once

#define GPROF_MODEL_STORE(Kind, member) \
    void operator()(const Kind& r) { p.member.push_back(r); }
    GPROF_MODEL_RECORD_VECTORS(GPROF_MODEL_STORE)
#undef GPROF_MODEL_STORE
    void operator()(const Backtrace& r) {
        if (!options.keep_backtraces) return;
        BacktraceFrames bt;
        bt.tid = r.tid;
        bt.correlation = r.correlation;
        uint32_t n = std::min(r.frame_count, kMaxBacktraceFrames);
        std::vector<uint64_t> frames(r.frames, r.frames + n);
        auto [it, fresh] = legacy_stack_ids.emplace(std::move(frames), 0);
        if (fresh) {
            it->second = kLegacyStackIdBase - static_cast<uint32_t>(legacy_stack_ids.size() - 1);
            p.stacks[it->second] = it->first;
        }
        bt.stack = it->second;
        p.backtraces.push_back(bt);
    }
    void operator()(const Stack& r) {
        if (!options.keep_backtraces) return;
        p.stacks[r.id].assign(r.frames, r.frames + std::min(r.frame_count, kMaxBacktraceFrames));
    }
    void operator()(const PyFrame& r) {
        if (options.keep_backtraces) p.py_frames[r.id] = r;
    }
    void operator()(const PyStack& r) {
        if (!options.keep_backtraces) return;
        auto& frames = p.py_stacks[r.id];
        frames.clear();
        for (uint32_t i = 0; i < std::min(r.frame_count, kMaxBacktraceFrames); ++i)
            frames.push_back(static_cast<uint32_t>(r.frames[i]));
    }
    // A call site naming a stack that was never defined keeps what it can (the other stack, its correlation).
    void operator()(const CallSite& r) {
        if (!options.keep_backtraces) return;
        BacktraceFrames bt;
        bt.tid = r.tid;
        bt.correlation = r.correlation;
        bt.stack = r.stack;  // resolved when read: a Stack may follow its first CallSite
        bt.py_stack = r.py_stack;
        p.backtraces.push_back(bt);
    }
    void operator()(const End& r) { p.end = r; }
    void operator()(const Role& r) { p.role = r; }
    void operator()(const GpuMetricSet& r) { p.gpu_metrics.add_set(r, reader.string(r.metrics)); }
    void operator()(const GpuMetricSample& r) { p.gpu_metrics.add_sample(r); }
};

}  // namespace

Run load_run(const std::vector<fs::path>& inputs, const LoadOptions& options) {
    Run run;
    run.traces = expand_inputs(inputs);
    uint64_t total_before = 0;
    ProcessTrace* cur = nullptr;
    std::map<std::vector<uint64_t>, uint32_t> legacy_stack_ids;
    std::vector<int8_t> nvtx_name_kept;  // keep_nvtx_named's answer by string id: -1 not asked yet, 0 no, 1 yes
    StreamCallbacks cb;
    cb.begin = [&](const StreamContext& ctx) {
        run.processes.emplace_back();
        cur = &run.processes.back();
        cur->path = ctx.reader->path();
        cur->header = ctx.reader->header();
        cur->clock_offset_ns = ctx.clock_offset_ns;
        cur->run_base_realtime_ns = ctx.run_base_realtime_ns;
        run.base_realtime_ns = ctx.run_base_realtime_ns;
        total_before = 0;
        legacy_stack_ids.clear();
        nvtx_name_kept.clear();
        for (const ExpectedRecords& e : options.expected)
            if (e.trace == cur->path) {
                cur->api_calls.reserve(e.api_calls);
                if (!options.keep_nvtx_named) cur->nvtx.reserve(e.nvtx);
                break;
            }
    };
    // Whether an NVTX record stays, by keep_nvtx_named; one not kept still widens the process's span.
    auto nvtx_kept = [&](const TraceReader& reader, ProcessTrace& p, const Nvtx& r) {
        if (r.name >= reader.string_count()) return true;  // not defined (yet): kept, never decided on a placeholder
        if (r.name >= nvtx_name_kept.size()) nvtx_name_kept.resize(reader.string_count(), -1);
        int8_t& kept = nvtx_name_kept[r.name];
        if (kept < 0) {
            std::string_view name = reader.string(r.name);
            if (name.starts_with("<string #")) return true;  // the same: an id below others, not defined yet
            kept = options.keep_nvtx_named(name) ? 1 : 0;
        }
        if (kept) return true;
        ++p.nvtx_left_out;
        if (r.start != 0) {
            if (p.nvtx_left_out_first == 0 || r.start < p.nvtx_left_out_first) p.nvtx_left_out_first = r.start;
            p.nvtx_left_out_last = std::max({p.nvtx_left_out_last, r.start, r.end});
        }
        return false;
    };
    cb.record = [&](const StreamContext& ctx, const Record& r) {
        ProcessTrace& p = *cur;
        ++total_before;
        if (r.kind == RecordKind::Nvtx && options.keep_nvtx_named && !nvtx_kept(*ctx.reader, p, r.nvtx)) return;
        deliver(r, StoreRecord{p, options, legacy_stack_ids, *ctx.reader});
    };
    cb.end = [&](const StreamContext& ctx) {
        ProcessTrace& p = *cur;
        const TraceReader& reader = *ctx.reader;
        p.strings.reserve(reader.string_count());
        for (size_t i = 0; i < reader.string_count(); ++i)
            p.strings.emplace_back(reader.string(static_cast<StringId>(i)));
        if (p.strings.empty()) p.strings.emplace_back();
        p.read_stats = reader.stats();
        p.warnings = reader.warnings();
        p.gpu_metrics.warnings(p.warnings);
        if (reader.stats().records > total_before) p.filtered_out = reader.stats().records - total_before;
        p.hidden_driver_calls = ctx.hidden_driver_calls;
        if (uint64_t d = p.dropped_total())
            p.warnings.push_back(std::to_string(d) + " records were dropped while recording (the collector counted "
                                 "them; totals under-count)");
        p.build_indexes();
    };
    cb.unreadable = [&](const fs::path& path, const std::string& message) {
        run.warnings.push_back(trace_label(path) + ": " + message);
    };
    stream_run(run.traces, options.filter, cb);
    std::stable_sort(run.processes.begin(), run.processes.end(),
                     [](const ProcessTrace& a, const ProcessTrace& b) {
                         return process_key(a.header, process_rank(a)) < process_key(b.header, process_rank(b));
                     });
    return run;
}

}  // namespace gprof::report
