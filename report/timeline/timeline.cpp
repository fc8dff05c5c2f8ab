#include "timeline/timeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include <zlib.h>

#include "reports/reports.h"
#include "analyze/analysis.h"
#include "gprof/trace/names.h"
#include "gprof/version.h"

namespace gprof::report {

using namespace gprof::trace;

namespace {

// A hand-rolled JSON appender: numbers and strings go straight into a buffer that is handed to `sink` in
// large blocks. nlohmann::json would build a DOM of the whole trace first (slow and several times the memory).
class JsonOut {
public:
    explicit JsonOut(std::function<void(const char*, size_t)> sink) : sink_(std::move(sink)) { buf_.reserve(kBlock + 4096); }
    ~JsonOut() = default;

    void raw(const char* s, size_t n) { buf_.append(s, n); }
    void raw(std::string_view s) { buf_.append(s.data(), s.size()); }
    void ch(char c) { buf_.push_back(c); }
    void u64(uint64_t v) {
        char tmp[24];
        char* p = tmp + sizeof tmp;
        do {
            *--p = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v);
        buf_.append(p, tmp + sizeof tmp - p);
    }
    void i64(int64_t v) {
        if (v < 0) {
            ch('-');
            u64(static_cast<uint64_t>(-(v + 1)) + 1);
        } else {
            u64(static_cast<uint64_t>(v));
        }
    }
    // ns -> microseconds with exactly three decimals ("12.345"): integer arithmetic, no rounding loss.
    void us3(int64_t ns) {
        if (ns < 0) {
            ch('-');
            ns = -ns;
        }
        u64(static_cast<uint64_t>(ns) / 1000);
        unsigned frac = static_cast<unsigned>(static_cast<uint64_t>(ns) % 1000);
        char t[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                     static_cast<char>('0' + frac % 10)};
        buf_.append(t, 4);
    }
    void f2(double v) {
        char tmp[64];
        int n = std::snprintf(tmp, sizeof tmp, "%.3f", v);
        buf_.append(tmp, static_cast<size_t>(n));
    }
    void str(std::string_view s) {
        ch('"');
        size_t start = 0;
        for (size_t i = 0; i < s.size(); ++i) {
            unsigned char c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c != '"' && c != '\\') continue;
            buf_.append(s.data() + start, i - start);
            start = i + 1;
            switch (c) {
                case '"': raw("\\\"", 2); break;
                case '\\': raw("\\\\", 2); break;
                case '\n': raw("\\n", 2); break;
                case '\t': raw("\\t", 2); break;
                case '\r': raw("\\r", 2); break;
                default: {
                    char u[8];
                    std::snprintf(u, sizeof u, "\\u%04x", c);
                    raw(u, 6);
                }
            }
        }
        buf_.append(s.data() + start, s.size() - start);
        ch('"');
    }
    void maybe_flush() {
        if (buf_.size() >= kBlock) flush();
    }
    void flush() {
        if (buf_.empty()) return;
        total_ += buf_.size();
        sink_(buf_.data(), buf_.size());
        buf_.clear();
    }
    uint64_t total() const { return total_ + buf_.size(); }

private:
    static constexpr size_t kBlock = 1 << 20;
    std::function<void(const char*, size_t)> sink_;
    std::string buf_;
    uint64_t total_ = 0;
};

struct Slice {
    Timestamp start, end;
    uint32_t order;  // index into the caller's item list
};

// Assigns slices of one track to lanes (lane 0 = the track itself). nest=true: slices may nest (NVTX ranges and
// the API calls inside them) but not partially overlap; nest=false: no overlap at all (GPU work on one stream).
// Returns lane per slice (by order) and the number of slices moved off lane 0.
std::vector<uint32_t> assign_lanes(std::vector<Slice>& slices, bool nest, uint64_t& moved) {
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
        if (a.start != b.start) return a.start < b.start;
        return a.end > b.end;  // the longer one first, so it becomes the parent
    });
    std::vector<uint32_t> lane_of(slices.size());
    std::vector<std::vector<Timestamp>> lanes;  // per lane: stack of open ends (nest) or [last end]
    for (const auto& s : slices) {
        uint32_t chosen = 0;
        for (;; ++chosen) {
            if (chosen == lanes.size()) lanes.emplace_back();
            auto& st = lanes[chosen];
            if (nest) {
                while (!st.empty() && st.back() <= s.start) st.pop_back();
                if (st.empty() || s.end <= st.back()) {
                    st.push_back(s.end);
                    break;
                }
            } else {
                if (st.empty() || st.back() <= s.start) {
                    if (st.empty()) st.push_back(s.end);
                    else st.back() = s.end;
                    break;
                }
            }
        }
        if (chosen) ++moved;
        lane_of[s.order] = chosen;
    }
    return lane_of;
}

constexpr int64_t kGpuPidBase = 1'000'000'000;
constexpr int64_t kOverflowTidStep = 100'000'000;

class TimelineWriter {
public:
    TimelineWriter(const Run& run, JsonOut& out, TimelineStats& stats, const TimelineOptions& options)
        : run_(run), o_(out), st_(stats), opt_(options) {}

    void write() {
        o_.raw("{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":");
        o_.i64(run_.base_realtime_ns);
        o_.raw(",\"generator\":");
        o_.str("gprof-report " GPROF_VERSION);
        o_.raw(",\"deviceProperties\":[");
        bool first_dev = true;
        for (const auto& p : run_.processes)
            for (const auto& d : p.devices) {
                if (!first_dev) o_.ch(',');
                first_dev = false;
                o_.raw("{\"id\":");
                o_.u64(d.id);
                o_.raw(",\"pid\":");
                o_.i64(p.pid());
                o_.raw(",\"name\":");
                o_.str(p.str(d.name));
                o_.raw(",\"computeMajor\":");
                o_.u64(d.cc_major);
                o_.raw(",\"computeMinor\":");
                o_.u64(d.cc_minor);
                o_.raw(",\"numSms\":");
                o_.u64(d.sm_count);
                o_.raw(",\"totalGlobalMem\":");
                o_.u64(d.global_memory_bytes);
                o_.ch('}');
            }
        o_.raw("],\"traceEvents\":[");
        for (size_t i = 0; i < run_.processes.size(); ++i) process(i);
        if (opt_.analysis_track) analysis();
        o_.raw("]}\n");
    }

private:
    // ----- event helpers -----
    void begin_event() {
        if (!first_event_) o_.ch(',');
        first_event_ = false;
        o_.ch('\n');
        ++st_.events;
    }
    void meta(const char* what, int64_t pid, const int64_t* tid, std::string_view name_value, int64_t sort_index,
              bool with_sort) {
        begin_event();
        o_.raw("{\"ph\":\"M\",\"name\":\"");
        o_.raw(what);
        o_.raw("\",\"pid\":");
        o_.i64(pid);
        if (tid) {
            o_.raw(",\"tid\":");
            o_.i64(*tid);
        }
        o_.raw(",\"args\":{");
        if (with_sort) {
            o_.raw("\"sort_index\":");
            o_.i64(sort_index);
        } else {
            o_.raw("\"name\":");
            o_.str(name_value);
        }
        o_.raw("}}");
    }
    void x_head(std::string_view name, const char* cat, int64_t pid, int64_t tid, int64_t ts, int64_t dur) {
        begin_event();
        o_.raw("{\"ph\":\"X\",\"cat\":\"");
        o_.raw(cat);
        o_.raw("\",\"name\":");
        o_.str(name);
        o_.raw(",\"pid\":");
        o_.i64(pid);
        o_.raw(",\"tid\":");
        o_.i64(tid);
        o_.raw(",\"ts\":");
        o_.us3(ts);
        o_.raw(",\"dur\":");
        o_.us3(dur < 0 ? 0 : dur);
        o_.raw(",\"args\":{");
    }
    void x_tail() {
        o_.raw("}}");
        o_.maybe_flush();
    }
    void arg_u(const char* key, uint64_t v, bool comma = true) {
        if (comma) o_.ch(',');
        o_.ch('"');
        o_.raw(key);
        o_.raw("\":");
        o_.u64(v);
    }
    void arg_s(const char* key, std::string_view v, bool comma = true) {
        if (comma) o_.ch(',');
        o_.ch('"');
        o_.raw(key);
        o_.raw("\":");
        o_.str(v);
    }
    void flow(char ph, uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
        begin_event();
        o_.raw("{\"ph\":\"");
        o_.ch(ph);
        o_.raw("\",\"id\":");
        o_.u64(id);
        o_.raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"pid\":");
        o_.i64(pid);
        o_.raw(",\"tid\":");
        o_.i64(tid);
        o_.raw(",\"ts\":");
        o_.us3(ts);
        if (ph == 'f') o_.raw(",\"bp\":\"e\"");
        o_.ch('}');
    }

    // Demangling is expensive: once per distinct kernel name, not once per launch.
    const std::string& kernel_name(const ProcessTrace& p, StringId id) {
        if (id >= demangled_.size()) demangled_.resize(id + 1);
        auto& slot = demangled_[id];
        if (!slot) slot = demangle(std::string(p.str(id)));
        return *slot;
    }

    // Correlations that launched a kernel/memcpy/memset (arrow sources), and a "first op already has its arrow"
    // mark per correlation. Dense bitmaps: CUPTI correlation ids are small sequential integers per process.
    void index_correlations(const ProcessTrace& p) {
        uint32_t max_corr = 0;
        for (const auto& k : p.kernels) max_corr = std::max(max_corr, k.correlation);
        for (const auto& m : p.memcpys) max_corr = std::max(max_corr, m.correlation);
        for (const auto& m : p.memsets) max_corr = std::max(max_corr, m.correlation);
        has_op_.assign(static_cast<size_t>(max_corr) + 1, false);
        flow_done_.assign(static_cast<size_t>(max_corr) + 1, false);
        for (const auto& k : p.kernels) has_op_[k.correlation] = true;
        for (const auto& m : p.memcpys) has_op_[m.correlation] = true;
        for (const auto& m : p.memsets) has_op_[m.correlation] = true;
        demangled_.clear();
    }
    const std::string& memcpy_name(const Memcpy& m) {
        uint32_t key = (uint32_t(m.copy_kind) << 16) | (uint32_t(m.src_kind) << 8) | uint32_t(m.dst_kind);
        auto it = memcpy_names_.find(key);
        if (it == memcpy_names_.end())
            it = memcpy_names_.emplace(key, "Memcpy " + std::string(memcpy_kind_name(m.copy_kind)) + " (" +
                                                std::string(memory_kind_name(m.src_kind)) + " -> " +
                                                std::string(memory_kind_name(m.dst_kind)) + ")").first;
        return it->second;
    }
    bool has_gpu_op(uint32_t corr) const { return corr < has_op_.size() && has_op_[corr]; }

    // ----- one process -----
    void process(size_t index) {
        const ProcessTrace& p = run_.processes[index];
        const int64_t pid = p.pid();
        index_correlations(p);
        std::string exe = p.header.executable;
        auto slash = exe.find_last_of('/');
        std::string pname = (slash == std::string::npos ? exe : exe.substr(slash + 1)) + " (pid " + std::to_string(pid) + ")";
        meta("process_name", pid, nullptr, pname, 0, false);
        meta("process_sort_index", pid, nullptr, {}, static_cast<int64_t>(index), true);

        // Flow ids must be unique in the file; correlation ids are per process.
        const uint64_t flow_base = static_cast<uint64_t>(index) << 32;

        // First API call per correlation: the arrow's source. GPU ops: first op per correlation gets the arrow.
        std::map<uint64_t, std::string> tid_names;
        for (const auto& t : p.threads) tid_names[t.tid] = std::string(p.str(t.name));

        // --- CPU: API calls + NVTX ranges per thread, nesting checked ---
        struct CpuItem {
            Timestamp start, end;
            uint64_t tid;
            bool is_api;
            uint32_t index;
        };
        std::vector<CpuItem> cpu;
        cpu.reserve(p.api_calls.size() + p.nvtx.size());
        for (uint32_t i = 0; i < p.api_calls.size(); ++i) {
            const auto& a = p.api_calls[i];
            if (!a.start) {
                ++st_.zero_timestamps;
                continue;
            }
            cpu.push_back({a.start, std::max(a.end, a.start), a.tid, true, i});
        }
        std::vector<uint32_t> marks;
        for (uint32_t i = 0; i < p.nvtx.size(); ++i) {
            const auto& n = p.nvtx[i];
            if (!n.start) {
                ++st_.zero_timestamps;
                continue;
            }
            if (n.type == NvtxType::Mark) {
                marks.push_back(i);
                continue;
            }
            Timestamp end = n.end ? n.end : std::max(p.last_ns, n.start);  // never ended: drawn to the end
            cpu.push_back({n.start, std::max(end, n.start), n.tid, false, i});
        }
        std::stable_sort(cpu.begin(), cpu.end(), [](const CpuItem& a, const CpuItem& b) { return a.tid < b.tid; });
        std::map<int64_t, std::string> cpu_tracks;  // tid -> name
        std::vector<std::pair<uint32_t, int64_t>> api_track(p.api_calls.size(), {0, 0});  // for flow sources
        std::vector<bool> api_placed(p.api_calls.size(), false);
        for (size_t b = 0; b < cpu.size();) {
            size_t e = b;
            while (e < cpu.size() && cpu[e].tid == cpu[b].tid) ++e;
            std::vector<Slice> slices;
            for (size_t i = b; i < e; ++i) slices.push_back({cpu[i].start, cpu[i].end, static_cast<uint32_t>(i - b)});
            auto lanes = assign_lanes(slices, true, st_.overflow_slices);
            // Emit in start order (parents first) so a viewer builds the nesting without re-sorting.
            for (const auto& s : slices) {
                const CpuItem& it = cpu[b + s.order];
                uint32_t lane = lanes[s.order];
                int64_t tid = static_cast<int64_t>(it.tid) + lane * kOverflowTidStep;
                if (!cpu_tracks.count(tid)) {
                    auto tn = tid_names.count(it.tid) ? tid_names[it.tid] : std::string();
                    std::string name = tn.empty() ? "thread " + std::to_string(it.tid) : tn + " (" + std::to_string(it.tid) + ")";
                    if (lane) name += " (overlap " + std::to_string(lane) + ")";
                    cpu_tracks[tid] = name;
                }
                if (it.is_api) emit_api(p, it.index, pid, tid, flow_base, api_placed);
                else emit_nvtx(p, p.nvtx[it.index], pid, tid);
            }
            b = e;
        }
        for (uint32_t i : marks) {
            const auto& n = p.nvtx[i];
            int64_t tid = static_cast<int64_t>(n.tid);
            if (!cpu_tracks.count(tid))
                cpu_tracks[tid] = tid_names.count(n.tid) && !tid_names[n.tid].empty()
                                      ? tid_names[n.tid] + " (" + std::to_string(n.tid) + ")"
                                      : "thread " + std::to_string(n.tid);
            begin_event();
            o_.raw("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
            o_.str(p.str(n.name));
            o_.raw(",\"pid\":");
            o_.i64(pid);
            o_.raw(",\"tid\":");
            o_.i64(tid);
            o_.raw(",\"ts\":");
            o_.us3(p.to_run_ns(n.start));
            o_.ch('}');
        }
        // Overheads: their own track in the process, lanes as needed.
        if (!p.overheads.empty()) {
            std::vector<Slice> slices;
            for (uint32_t i = 0; i < p.overheads.size(); ++i)
                if (p.overheads[i].start) slices.push_back({p.overheads[i].start, std::max(p.overheads[i].end, p.overheads[i].start), i});
            auto lanes = assign_lanes(slices, false, st_.overflow_slices);
            const int64_t base_tid = 4'000'000'000LL;  // above any Linux tid
            for (const auto& s : slices) {
                int64_t tid = base_tid + lanes[s.order];
                cpu_tracks.emplace(tid, lanes[s.order] ? "CUPTI overhead (overlap " + std::to_string(lanes[s.order]) + ")"
                                                       : std::string("CUPTI overhead"));
                const auto& ov = p.overheads[s.order];
                x_head("overhead", "overhead", pid, tid, p.to_run_ns(ov.start), static_cast<int64_t>(ov.end - ov.start));
                arg_u("overhead kind", ov.overhead_kind, false);
                arg_u("object kind", ov.object_kind);
                arg_u("object id", ov.object_id);
                x_tail();
            }
        }
        int64_t sort = 0;
        for (const auto& [tid, name] : cpu_tracks) {
            meta("thread_name", pid, &tid, name, 0, false);
            meta("thread_sort_index", pid, &tid, {}, sort++, true);
        }
        // Captures: global instants.
        for (const auto& c : p.captures) {
            if (!c.timestamp) continue;
            begin_event();
            o_.raw("{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"capture\",\"name\":");
            o_.str(std::string(c.action == CaptureAction::Start ? "capture start (" : "capture stop (") +
                   std::string(capture_reason_name(c.reason)) + ")");
            o_.raw(",\"pid\":");
            o_.i64(pid);
            o_.raw(",\"tid\":0,\"ts\":");
            o_.us3(p.to_run_ns(c.timestamp));
            o_.ch('}');
        }

        gpu(p, index, flow_base, api_placed);
    }

    void emit_api(const ProcessTrace& p, uint32_t i, int64_t pid, int64_t tid, uint64_t flow_base,
                  std::vector<bool>& api_placed) {
        const auto& a = p.api_calls[i];
        std::string_view name = p.str(a.name);
        const char* cat = a.domain == ApiDomain::Driver ? "cuda_driver" : "cuda_runtime";
        if (name.find("Synchronize") != std::string_view::npos) cat = "cuda_sync";
        int64_t ts = p.to_run_ns(a.start);
        x_head(name, cat, pid, tid, ts, static_cast<int64_t>(a.end - a.start));
        arg_u("correlation", a.correlation, false);
        o_.raw(",\"result\":");
        o_.i64(a.result);
        arg_u("cbid", a.cbid);
        x_tail();
        // The arrow starts here only when a GPU op of this correlation exists (checked via the index).
        if (a.correlation && has_gpu_op(a.correlation) && !api_placed[i]) {
            flow('s', flow_base | a.correlation, pid, tid, ts);
            api_placed[i] = true;
        }
    }


    void emit_nvtx(const ProcessTrace& p, const Nvtx& n, int64_t pid, int64_t tid) {
        Timestamp end = n.end ? n.end : std::max(p.last_ns, n.start);
        std::string name(p.str(n.name));
        x_head(name, "user_annotation", pid, tid, p.to_run_ns(n.start), static_cast<int64_t>(end - n.start));
        arg_s("domain", n.domain ? p.str(n.domain) : std::string_view(), false);
        arg_s("type", nvtx_type_name(n.type));
        if (!n.end) arg_s("note", "range never ended; drawn to the end of the trace");
        if (n.category) arg_u("category", n.category);
        if (n.color) arg_u("color", n.color);
        if (n.payload_type != NvtxPayload::None) arg_u("payload", n.payload);
        x_tail();
    }

    // ----- GPU tracks -----
    void gpu(const ProcessTrace& p, size_t index, uint64_t flow_base, const std::vector<bool>& api_placed) {
        (void)api_placed;
        const int64_t pid = p.pid();
        struct GpuItem {
            Timestamp start, end;
            uint32_t device, stream;
            GpuOpKind kind;
            uint32_t index;
        };
        // Sync records carry a context, not a device: map contexts to devices through the other GPU records.
        std::map<uint32_t, uint32_t> ctx_device;
        for (const auto& k : p.kernels) ctx_device.emplace(k.context, k.device);
        for (const auto& m : p.memcpys) ctx_device.emplace(m.context, m.device);
        for (const auto& m : p.memsets) ctx_device.emplace(m.context, m.device);
        std::vector<GpuItem> items;
        items.reserve(p.kernels.size() + p.memcpys.size() + p.memsets.size() + p.syncs.size());
        auto add = [&](Timestamp s, Timestamp e, uint32_t dev, uint32_t stream, GpuOpKind kind, uint32_t i) {
            if (!s) {
                ++st_.zero_timestamps;
                return;
            }
            items.push_back({s, std::max(s, e), dev, stream, kind, i});
        };
        for (uint32_t i = 0; i < p.kernels.size(); ++i)
            add(p.kernels[i].start, p.kernels[i].end, p.kernels[i].device, p.kernels[i].stream, GpuOpKind::Kernel, i);
        for (uint32_t i = 0; i < p.memcpys.size(); ++i)
            add(p.memcpys[i].start, p.memcpys[i].end, p.memcpys[i].device, p.memcpys[i].stream, GpuOpKind::Memcpy, i);
        for (uint32_t i = 0; i < p.memsets.size(); ++i)
            add(p.memsets[i].start, p.memsets[i].end, p.memsets[i].device, p.memsets[i].stream, GpuOpKind::Memset, i);
        for (uint32_t i = 0; i < p.syncs.size(); ++i) {
            auto it = ctx_device.find(p.syncs[i].context);
            add(p.syncs[i].start, p.syncs[i].end, it == ctx_device.end() ? 0 : it->second, p.syncs[i].stream,
                GpuOpKind::Sync, i);
        }
        for (uint32_t i = 0; i < p.graph_launches.size(); ++i)
            add(p.graph_launches[i].start, p.graph_launches[i].end, p.graph_launches[i].device,
                p.graph_launches[i].stream, GpuOpKind::GraphLaunch, i);

        std::map<uint32_t, std::string> dev_names;
        std::map<uint32_t, uint32_t> dev_sms;
        for (const auto& d : p.devices) {
            dev_names[d.id] = std::string(p.str(d.name));
            dev_sms[d.id] = d.sm_count;
        }
        for (const auto& it : items) dev_names.emplace(it.device, std::string());
        for (const auto& m : p.memory) dev_names.emplace(m.device, std::string());

        auto gpu_pid = [&](uint32_t dev) { return kGpuPidBase + static_cast<int64_t>(index) * 10000 + dev; };
        int64_t dev_sort = 0;
        for (const auto& [dev, name] : dev_names) {
            int64_t gp = gpu_pid(dev);
            std::string label = "GPU " + std::to_string(dev) + (name.empty() ? "" : ": " + name);
            if (run_.processes.size() > 1) label += " (pid " + std::to_string(pid) + ")";
            meta("process_name", gp, nullptr, label, 0, false);
            // GPU pids sort below every CPU process.
            meta("process_sort_index", gp, nullptr, {}, 100000 + static_cast<int64_t>(index) * 1000 + dev_sort++, true);
        }

        // Group by (device, track key). Graph launches get their own track per stream: their interval spans the
        // graph's kernels on that same stream, so they would otherwise overlap.
        auto track_key = [](const GpuItem& g) -> uint64_t {
            uint64_t base = g.stream == 0xFFFFFFFFu ? 0xFFFFFFFFull : g.stream;
            if (g.kind == GpuOpKind::GraphLaunch) base |= 1ull << 33;
            return (static_cast<uint64_t>(g.device) << 40) | base;
        };
        std::stable_sort(items.begin(), items.end(),
                         [&](const GpuItem& a, const GpuItem& b) { return track_key(a) < track_key(b); });
        std::map<std::pair<int64_t, int64_t>, std::string> track_names;
        for (size_t b = 0; b < items.size();) {
            size_t e = b;
            uint64_t key = track_key(items[b]);
            while (e < items.size() && track_key(items[e]) == key) ++e;
            std::vector<Slice> slices;
            for (size_t i = b; i < e; ++i) slices.push_back({items[i].start, items[i].end, static_cast<uint32_t>(i - b)});
            auto lanes = assign_lanes(slices, false, st_.overflow_slices);
            const GpuItem& first = items[b];
            bool graph = first.kind == GpuOpKind::GraphLaunch;
            bool ctx_sync = first.stream == 0xFFFFFFFFu;
            int64_t base_tid = ctx_sync ? 3'000'000'000LL : static_cast<int64_t>(first.stream);
            if (graph) base_tid += 2'000'000'000LL;
            for (const auto& s : slices) {
                const GpuItem& g = items[b + s.order];
                uint32_t lane = lanes[s.order];
                int64_t tid = base_tid + lane * kOverflowTidStep * 100;
                int64_t gp = gpu_pid(g.device);
                auto tk = std::make_pair(gp, tid);
                if (!track_names.count(tk)) {
                    std::string name = ctx_sync ? std::string("context sync") : "stream " + std::to_string(g.stream);
                    if (graph) name = "graph launches (stream " + std::to_string(g.stream) + ")";
                    if (lane) name += " (overlap " + std::to_string(lane) + ")";
                    track_names[tk] = name;
                }
                emit_gpu(p, g.kind, g.index, gp, tid, flow_base, dev_sms);
            }
            b = e;
        }
        for (const auto& [tk, name] : track_names) {
            meta("thread_name", tk.first, &tk.second, name, 0, false);
            meta("thread_sort_index", tk.first, &tk.second, {}, tk.second, true);
        }

        // Device memory in use, per device, as a counter.
        std::map<uint32_t, int64_t> in_use;
        std::vector<const Memory*> mem;
        for (const auto& m : p.memory)
            if (m.timestamp) mem.push_back(&m);
        std::stable_sort(mem.begin(), mem.end(), [](const Memory* a, const Memory* b) { return a->timestamp < b->timestamp; });
        for (const Memory* m : mem) {
            if (m->op == MemoryOp::Allocation) in_use[m->device] += static_cast<int64_t>(m->bytes);
            else if (m->op == MemoryOp::Release) in_use[m->device] -= static_cast<int64_t>(m->bytes);
            else continue;
            begin_event();
            o_.raw("{\"ph\":\"C\",\"name\":\"Device memory in use\",\"pid\":");
            o_.i64(gpu_pid(m->device));
            o_.raw(",\"tid\":0,\"ts\":");
            o_.us3(p.to_run_ns(m->timestamp));
            o_.raw(",\"args\":{\"bytes\":");
            o_.i64(std::max<int64_t>(0, in_use[m->device]));
            o_.raw("}}");
        }
    }

    void emit_gpu(const ProcessTrace& p, GpuOpKind kind, uint32_t i, int64_t gp, int64_t tid, uint64_t flow_base,
                  const std::map<uint32_t, uint32_t>& dev_sms) {
        uint32_t corr = 0;
        int64_t ts = 0;
        switch (kind) {
            case GpuOpKind::Kernel: {
                const auto& k = p.kernels[i];
                corr = k.correlation;
                ts = p.to_run_ns(k.start);
                x_head(kernel_name(p, k.name), "kernel", gp, tid, ts, static_cast<int64_t>(k.end - k.start));
                arg_u("device", k.device, false);
                arg_u("context", k.context);
                arg_u("stream", k.stream);
                arg_u("correlation", k.correlation);
                arg_u("registers per thread", k.registers_per_thread);
                arg_u("shared memory", uint64_t(k.static_shared_bytes) + k.dynamic_shared_bytes);
                arg_u("static shared memory", k.static_shared_bytes);
                arg_u("dynamic shared memory", k.dynamic_shared_bytes);
                uint64_t blocks = uint64_t(std::max(k.grid_x, 0)) * std::max(k.grid_y, 0) * std::max(k.grid_z, 0);
                auto sms = dev_sms.find(k.device);
                if (sms != dev_sms.end() && sms->second) {
                    o_.raw(",\"blocks per SM\":");
                    o_.f2(static_cast<double>(blocks) / sms->second);
                }
                o_.raw(",\"grid\":[");
                o_.i64(k.grid_x); o_.ch(','); o_.i64(k.grid_y); o_.ch(','); o_.i64(k.grid_z);
                o_.raw("],\"block\":[");
                o_.i64(k.block_x); o_.ch(','); o_.i64(k.block_y); o_.ch(','); o_.i64(k.block_z);
                o_.ch(']');
                if (k.graph_id) {
                    arg_u("graph id", k.graph_id);
                    arg_u("graph node id", k.graph_node_id);
                }
                x_tail();
                break;
            }
            case GpuOpKind::Memcpy: {
                const auto& m = p.memcpys[i];
                corr = m.correlation;
                ts = p.to_run_ns(m.start);
                const std::string& name = memcpy_name(m);
                int64_t d = static_cast<int64_t>(m.end - m.start);
                x_head(name, "gpu_memcpy", gp, tid, ts, d);
                arg_u("device", m.device, false);
                arg_u("context", m.context);
                arg_u("stream", m.stream);
                arg_u("correlation", m.correlation);
                arg_u("bytes", m.bytes);
                if (d > 0) {
                    o_.raw(",\"memory bandwidth (GB/s)\":");
                    o_.f2(static_cast<double>(m.bytes) / static_cast<double>(d));
                }
                arg_s("src memory kind", memory_kind_name(m.src_kind));
                arg_s("dst memory kind", memory_kind_name(m.dst_kind));
                if (m.copy_kind == MemcpyKind::PtoP) arg_u("peer device", m.peer_device);
                if (m.graph_id) {
                    arg_u("graph id", m.graph_id);
                    arg_u("graph node id", m.graph_node_id);
                }
                x_tail();
                break;
            }
            case GpuOpKind::Memset: {
                const auto& m = p.memsets[i];
                corr = m.correlation;
                ts = p.to_run_ns(m.start);
                int64_t d = static_cast<int64_t>(m.end - m.start);
                x_head("Memset (" + std::string(memory_kind_name(m.memory_kind)) + ")", "gpu_memset", gp, tid, ts, d);
                arg_u("device", m.device, false);
                arg_u("context", m.context);
                arg_u("stream", m.stream);
                arg_u("correlation", m.correlation);
                arg_u("bytes", m.bytes);
                if (d > 0) {
                    o_.raw(",\"memory bandwidth (GB/s)\":");
                    o_.f2(static_cast<double>(m.bytes) / static_cast<double>(d));
                }
                arg_s("memory kind", memory_kind_name(m.memory_kind));
                arg_u("value", m.value);
                if (m.graph_id) {
                    arg_u("graph id", m.graph_id);
                    arg_u("graph node id", m.graph_node_id);
                }
                x_tail();
                break;
            }
            case GpuOpKind::Sync: {
                const auto& s = p.syncs[i];
                x_head(std::string(sync_type_name(s.type)), "cuda_sync", gp, tid, p.to_run_ns(s.start),
                       static_cast<int64_t>(s.end - s.start));
                arg_u("context", s.context, false);
                if (s.stream != 0xFFFFFFFFu) arg_u("stream", s.stream);
                arg_u("event", s.event);
                arg_u("correlation", s.correlation);
                x_tail();
                return;  // sync activity: no arrow (the API call is on the CPU track already)
            }
            case GpuOpKind::GraphLaunch: {
                const auto& g = p.graph_launches[i];
                x_head("Graph " + std::to_string(g.graph_id), "cuda_graph", gp, tid, p.to_run_ns(g.start),
                       static_cast<int64_t>(g.end - g.start));
                arg_u("device", g.device, false);
                arg_u("stream", g.stream);
                arg_u("correlation", g.correlation);
                arg_u("graph id", g.graph_id);
                x_tail();
                return;
            }
        }
        // Arrow end: only the first GPU op of a correlation (one flow v1 pair per id), and only with an API source.
        const ApiCall* api = corr ? p.api_for_correlation(corr) : nullptr;
        if (!api || !api->start) {
            ++st_.unmatched_gpu_ops;
            return;
        }
        uint64_t id = flow_base | corr;
        if (flow_done_[corr]) return;
        flow_done_[corr] = true;
        flow('f', id, gp, tid, ts);
        ++st_.flows;
    }

    // The analysis slices (verdict, idle gaps, findings, steps): one track per slice track name in an
    // "analysis" process sorted below everything else. Failures there never cost the timeline.
    void analysis() {
        std::vector<AnalysisSlice> computed;
        const std::vector<AnalysisSlice>* given = opt_.analysis_slices;
        try {
            if (!given) computed = analysis_timeline_slices(run_);
        } catch (const std::exception& e) {
            st_.warnings.push_back(std::string("analysis track left out: ") + e.what());
            return;
        }
        const std::vector<AnalysisSlice>& slices = given ? *given : computed;
        if (slices.empty()) return;
        const int64_t pid = kGpuPidBase - 1;
        meta("process_name", pid, nullptr, "analysis", 0, false);
        meta("process_sort_index", pid, nullptr, {}, 10'000'000, true);
        std::map<std::string, std::vector<size_t>> by_track;
        for (size_t i = 0; i < slices.size(); ++i) by_track[slices[i].track].push_back(i);
        int64_t tid_base = 1;
        for (const auto& [track, idx] : by_track) {
            std::vector<Slice> sl;
            for (uint32_t k = 0; k < idx.size(); ++k) {
                const auto& a = slices[idx[k]];
                Timestamp s0 = static_cast<Timestamp>(std::max<int64_t>(a.start, 0));
                sl.push_back({s0, s0 + static_cast<Timestamp>(std::max<int64_t>(a.dur, 0)), k});
            }
            auto lanes = assign_lanes(sl, false, st_.overflow_slices);
            std::set<int64_t> named;
            for (const auto& s : sl) {
                const auto& a = slices[idx[s.order]];
                int64_t tid = tid_base + lanes[s.order];
                if (named.insert(tid).second) {
                    meta("thread_name", pid, &tid, lanes[s.order] ? track + " (overlap)" : track, 0, false);
                    meta("thread_sort_index", pid, &tid, {}, tid, true);
                }
                x_head(a.name, "analysis", pid, tid, a.start, a.dur);
                std::string args = a.args.is_object()
                                       ? a.args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                                       : std::string("{}");
                o_.raw(std::string_view(args).substr(1, args.size() - 2));  // the object's members
                x_tail();
            }
            tid_base += 1000;
        }
        st_.analysis_track = true;
    }

    const Run& run_;
    JsonOut& o_;
    TimelineStats& st_;
    const TimelineOptions& opt_;
    bool first_event_ = true;
    std::vector<bool> has_op_, flow_done_;
    std::vector<std::optional<std::string>> demangled_;
    std::map<uint32_t, std::string> memcpy_names_;
};

void finish_stats(TimelineStats& st, const TimelineOptions& options) {
    if (st.json_bytes > options.too_big_bytes)
        st.warnings.push_back("the timeline JSON is " + format_fixed(static_cast<double>(st.json_bytes) / 1e9, 2) +
                              " GB: Perfetto UI fails to load traces around 1 GB; narrow it with --time-range, "
                              "--process, --device or --kernel-filter (or open it with trace_processor)");
    if (st.overflow_slices)
        st.warnings.push_back(std::to_string(st.overflow_slices) +
                              " slices overlapped others on their track and were moved to overflow tracks");
    if (st.unmatched_gpu_ops)
        st.warnings.push_back(std::to_string(st.unmatched_gpu_ops) +
                              " GPU operations have no launching API call in the trace: drawn without a flow arrow");
    if (st.zero_timestamps)
        st.warnings.push_back(std::to_string(st.zero_timestamps) +
                              " records have an unknown (zero) timestamp and could not be placed on the timeline");
}

}  // namespace

TimelineStats timeline_to_string(const Run& run, std::string& out, const TimelineOptions& options) {
    TimelineStats st;
    out.clear();
    JsonOut o([&](const char* d, size_t n) { out.append(d, n); });
    TimelineWriter(run, o, st, options).write();
    o.flush();
    st.json_bytes = st.file_bytes = o.total();
    finish_stats(st, options);
    return st;
}

namespace {

// The output descriptor: a plain create-or-truncate for gprof-report's -o, an exclusive 0600 create that refuses
// symlinks for gprof-run's run directory.
int open_output(const std::filesystem::path& path, bool exclusive) {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL | O_NOFOLLOW : O_TRUNC);
    int fd = ::open(path.c_str(), flags, exclusive ? 0600 : 0666);
    if (fd < 0) throw std::runtime_error("cannot write '" + path.string() + "': " + std::strerror(errno));
    return fd;
}

}  // namespace

TimelineStats write_timeline(const Run& run, const std::filesystem::path& path, const TimelineOptions& options) {
    TimelineStats st;
    bool gzip = options.gzip;
    std::string err;
    if (gzip) {
        int fd = open_output(path, options.create_exclusive);
        gzFile gz = gzdopen(fd, "wb6");
        if (!gz) {
            ::close(fd);
            throw std::runtime_error("cannot write '" + path.string() + "': " + std::strerror(errno));
        }
        bool failed = false;
        JsonOut o([&](const char* d, size_t n) {
            if (!failed && gzwrite(gz, d, static_cast<unsigned>(n)) != static_cast<int>(n)) failed = true;
        });
        TimelineWriter(run, o, st, options).write();
        o.flush();
        if (gzclose(gz) != Z_OK) failed = true;
        if (failed) throw std::runtime_error("cannot write '" + path.string() + "' (disk full?)");
        st.json_bytes = o.total();
        std::error_code ec;
        st.file_bytes = std::filesystem::file_size(path, ec);
        st.gzipped = true;
        finish_stats(st, options);
        return st;
    }
    int fd = open_output(path, options.create_exclusive);
    FILE* f = ::fdopen(fd, "wb");
    if (!f) {
        ::close(fd);
        throw std::runtime_error("cannot write '" + path.string() + "': " + std::strerror(errno));
    }
    bool failed = false;
    JsonOut o([&](const char* d, size_t n) {
        if (!failed && std::fwrite(d, 1, n, f) != n) failed = true;
    });
    TimelineWriter(run, o, st, options).write();
    o.flush();
    if (std::fclose(f) != 0) failed = true;
    if (failed) throw std::runtime_error("cannot write '" + path.string() + "' (disk full?)");
    st.json_bytes = st.file_bytes = o.total();
    finish_stats(st, options);
    return st;
}

}  // namespace gprof::report
