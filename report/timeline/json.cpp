// The Chrome Trace Event encoder (object form; Perfetto and chrome://tracing load it).
//
// Layout: one pid per profiled process (its threads as tids; an overflow lane L of thread T is tid T + L*1e8;
// CUPTI overhead at tid 4e9 + L); one pid per (process, device) below every CPU process, with one tid per stream
// (context-wide syncs at 3e9, graph launches at stream + 2e9, lane L at + L*1e8) and the device-memory counter;
// the analysis process (pid 1e9 - 1) last. Every pid and tid stays within 0..2^32-1 (Perfetto keeps ids apart
// only there): a track whose natural id is out of range or taken in its group gets the next free id from 2^31 + 2^30. `ts` is microseconds relative to baseTimeNanoseconds (CLOCK_REALTIME
// ns) with three decimals, so no nanosecond is lost. Flows are kineto's "ac2g" s/f pairs. Per group: its
// metadata, then its slices (each followed by its flow event), instants and counter samples.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "gprof/version.h"
#include "timeline/args.h"
#include "timeline/encoders.h"
#include "output/text.h"

namespace gprof::report::timeline {

namespace {

// A hand-rolled JSON appender: numbers and strings go straight into a buffer handed to the sink in large blocks.
// nlohmann::json would build a DOM of the whole trace first (slow and several times the memory).
class JsonOut {
public:
    explicit JsonOut(const ByteSink& sink) : sink_(sink) { buf_.reserve(kBlock + 4096); }

    void raw(std::string_view s) { buf_.append(s.data(), s.size()); }
    void ch(char c) { buf_.push_back(c); }
    void u64(uint64_t v) {
        char tmp[24];
        char* p = tmp + sizeof tmp;
        do {
            *--p = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v);
        buf_.append(p, static_cast<size_t>(tmp + sizeof tmp - p));
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
    void fixed3(double v) {
        char tmp[64];
        int n = std::snprintf(tmp, sizeof tmp, "%.3f", v);
        buf_.append(tmp, static_cast<size_t>(n));
    }
    // A JSON string: quotes, backslashes and control characters escaped, invalid UTF-8 bytes replaced by U+FFFD
    // (names are whatever the program chose; one stray byte must not make the whole file unreadable).
    void str(std::string_view s) {
        if (!is_valid_utf8(s)) {
            std::string fixed = valid_utf8(s);
            str_valid(fixed);
            return;
        }
        str_valid(s);
    }
    void str_valid(std::string_view s) {
        ch('"');
        size_t start = 0;
        for (size_t i = 0; i < s.size(); ++i) {
            unsigned char c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c != '"' && c != '\\') continue;
            buf_.append(s.data() + start, i - start);
            start = i + 1;
            switch (c) {
                case '"': raw("\\\""); break;
                case '\\': raw("\\\\"); break;
                case '\n': raw("\\n"); break;
                case '\t': raw("\\t"); break;
                case '\r': raw("\\r"); break;
                default: {
                    char u[8];
                    std::snprintf(u, sizeof u, "\\u%04x", c);
                    raw(std::string_view(u, 6));
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
    const ByteSink& sink_;
    std::string buf_;
    uint64_t total_ = 0;
};

// Args as the members of an "args" object.
class ArgsOut {
public:
    explicit ArgsOut(JsonOut& o) : o_(o) {}
    void u(ArgKey k, uint64_t v) {
        key(k);
        o_.u64(v);
    }
    void i(ArgKey k, int64_t v) {
        key(k);
        o_.i64(v);
    }
    void f3(ArgKey k, double v) {
        key(k);
        o_.fixed3(v);
    }
    void s(ArgKey k, std::string_view v) {
        key(k);
        o_.str(v);
    }
    void dims(ArgKey k, int32_t x, int32_t y, int32_t z) {
        key(k);
        o_.ch('[');
        o_.i64(x);
        o_.ch(',');
        o_.i64(y);
        o_.ch(',');
        o_.i64(z);
        o_.ch(']');
    }
    void object(const nlohmann::json& args) {
        std::string text = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (text.size() > 2) {
            if (!first_) o_.ch(',');
            o_.raw(std::string_view(text).substr(1, text.size() - 2));  // the object's members
            first_ = false;
        }
    }

private:
    void key(ArgKey k) {
        if (!first_) o_.ch(',');
        first_ = false;
        o_.ch('"');
        o_.raw(arg_name(k));
        o_.raw("\":");
    }
    JsonOut& o_;
    bool first_ = true;
};

constexpr int64_t kGpuPidBase = 1'000'000'000;
constexpr int64_t kThreadLaneStep = 100'000'000;
constexpr int64_t kStreamLaneStep = 100'000'000;
constexpr int64_t kMaxId = 0xFFFFFFFFLL;
constexpr int64_t kFallbackTidBase = 0xC0000000LL;

int64_t group_pid(const Group& g) {
    switch (g.kind) {
        case GroupKind::Process: return g.track_pid;
        case GroupKind::GpuDevice: return kGpuPidBase + static_cast<int64_t>(g.process) * 10000 + g.device;
        case GroupKind::Analysis: return kGpuPidBase - 1;
    }
    return 0;
}

// Processes in Run order, their GPUs below every CPU process, the analysis last.
int64_t group_sort_index(const Group& g) {
    switch (g.kind) {
        case GroupKind::Process: return g.process;
        case GroupKind::GpuDevice: return 100000 + static_cast<int64_t>(g.process) * 1000 + g.device_rank;
        case GroupKind::Analysis: return 10'000'000;
    }
    return 0;
}

int64_t track_tid(const Track& t) {
    switch (t.kind) {
        case TrackKind::CpuThread: return static_cast<int64_t>(t.tid) + t.lane * kThreadLaneStep;
        case TrackKind::Overhead: return 4'000'000'000LL + t.lane;  // above any Linux tid
        case TrackKind::GpuStream:
        case TrackKind::GraphLaunches:
        case TrackKind::ContextSync: {
            int64_t base = t.stream == 0xFFFFFFFFu ? 3'000'000'000LL : static_cast<int64_t>(t.stream);
            if (t.kind == TrackKind::GraphLaunches) base += 2'000'000'000LL;
            return base + t.lane * kStreamLaneStep;
        }
        case TrackKind::Analysis: return 1 + static_cast<int64_t>(t.row) * 1000 + t.lane;
        case TrackKind::Counter: return 0;
    }
    return 0;
}

// The tid of every track: its natural id (track_tid) when that fits 32 bits and is still free in its group, else
// the next free id from kFallbackTidBase. The OS threads' own rows claim their ids first, so an overflow lane can
// never take a real thread's tid.
std::vector<int64_t> assign_tids(const TimelineModel& m) {
    std::vector<int64_t> tids(m.tracks.size(), 0);
    std::vector<std::set<int64_t>> used(m.groups.size());
    std::vector<int64_t> next_free(m.groups.size(), kFallbackTidBase);
    std::vector<uint32_t> pending;
    auto claim = [&](uint32_t t) {
        int64_t natural = track_tid(m.tracks[t]);
        if (natural >= 0 && natural <= kMaxId && used[m.tracks[t].group].insert(natural).second) tids[t] = natural;
        else pending.push_back(t);
    };
    for (int pass = 0; pass < 2; ++pass)
        for (uint32_t t = 0; t < m.tracks.size(); ++t) {
            const Track& tr = m.tracks[t];
            if (tr.kind == TrackKind::Counter) continue;
            bool os_thread = tr.kind == TrackKind::CpuThread && tr.lane == 0;
            if (os_thread == (pass == 0)) claim(t);
        }
    for (uint32_t t : pending) {
        uint32_t g = m.tracks[t].group;
        while (used[g].count(next_free[g])) ++next_free[g];
        tids[t] = next_free[g];
        used[g].insert(next_free[g]++);
    }
    return tids;
}

class ChromeWriter {
public:
    ChromeWriter(const TimelineModel& m, JsonOut& o) : m_(m), o_(o), tids_(assign_tids(m)) {}

    uint64_t write() {
        header();
        std::vector<std::vector<uint32_t>> tracks_of(m_.groups.size());
        for (uint32_t t = 0; t < m_.tracks.size(); ++t) tracks_of[m_.tracks[t].group].push_back(t);
        for (uint32_t g = 0; g < m_.groups.size(); ++g) group(m_.groups[g], tracks_of[g]);
        o_.raw("]}\n");
        return events_;
    }

private:
    void header() {
        o_.raw("{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":");
        o_.i64(m_.base_realtime_ns);
        o_.raw(",\"generator\":");
        o_.str("gprof-report " GPROF_VERSION);
        o_.raw(",\"deviceProperties\":[");
        for (size_t i = 0; i < m_.devices.size(); ++i) {
            const auto& d = *m_.devices[i].device;
            if (i) o_.ch(',');
            o_.raw("{\"id\":");
            o_.u64(d.id);
            o_.raw(",\"pid\":");
            o_.i64(m_.devices[i].pid);
            o_.raw(",\"name\":");
            o_.str(m_.devices[i].name);
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
    }

    void group(const Group& g, const std::vector<uint32_t>& tracks) {
        const int64_t pid = group_pid(g);
        meta_name("process_name", pid, nullptr, g.name);
        meta_sort("process_sort_index", pid, nullptr, group_sort_index(g));
        // Rows by tid; a process's rows are ranked in that order, a GPU's and the analysis' by their tid.
        std::map<int64_t, const Track*> rows;
        for (uint32_t t : tracks)
            if (m_.tracks[t].kind != TrackKind::Counter) rows.emplace(tids_[t], &m_.tracks[t]);
        int64_t rank = 0;
        for (const auto& [tid, t] : rows) {
            meta_name("thread_name", pid, &tid, t->name);
            meta_sort("thread_sort_index", pid, &tid, g.kind == GroupKind::Process ? rank++ : tid);
        }
        for (uint32_t i = g.slices_begin; i < g.slices_end; ++i) slice(i, pid);
        for (uint32_t i = g.instants_begin; i < g.instants_end; ++i) instant(m_.instants[i], pid);
        for (uint32_t i = g.counters_begin; i < g.counters_end; ++i) counter(m_.counters[i], pid);
    }

    void begin_event() {
        if (!first_event_) o_.ch(',');
        first_event_ = false;
        o_.ch('\n');
        ++events_;
    }

    void meta_head(std::string_view what, int64_t pid, const int64_t* tid) {
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
    }
    void meta_name(std::string_view what, int64_t pid, const int64_t* tid, std::string_view name) {
        meta_head(what, pid, tid);
        o_.raw("\"name\":");
        o_.str(name);
        o_.raw("}}");
    }
    void meta_sort(std::string_view what, int64_t pid, const int64_t* tid, int64_t sort_index) {
        meta_head(what, pid, tid);
        o_.raw("\"sort_index\":");
        o_.i64(sort_index);
        o_.raw("}}");
    }

    void slice(uint32_t index, int64_t pid) {
        const Slice& s = m_.slices[index];
        const int64_t tid = tids_[s.track];
        begin_event();
        o_.raw("{\"ph\":\"X\",\"cat\":\"");
        o_.raw(category_name(s.category));
        o_.raw("\",\"name\":");
        o_.str(m_.name(s.name));
        o_.raw(",\"pid\":");
        o_.i64(pid);
        o_.raw(",\"tid\":");
        o_.i64(tid);
        o_.raw(",\"ts\":");
        o_.us3(s.start);
        o_.raw(",\"dur\":");
        o_.us3(s.dur);
        o_.raw(",\"args\":{");
        ArgsOut args(o_);
        visit_args(m_, s, args);
        o_.raw("}}");
        for_each_flow(m_.flows, s.flow, index,
                      [&](const Flow& f) { flow(f.from == index ? 's' : 'f', f.id, pid, tid, s.start); });
        o_.maybe_flush();
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

    void instant(const Instant& e, int64_t pid) {
        begin_event();
        o_.raw(e.scope == InstantScope::Thread ? "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"" : "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"");
        o_.raw(category_name(e.category));
        o_.raw("\",\"name\":");
        o_.str(m_.name(e.name));
        o_.raw(",\"pid\":");
        o_.i64(pid);
        o_.raw(",\"tid\":");
        o_.i64(e.scope == InstantScope::Thread ? tids_[e.track] : 0);
        o_.raw(",\"ts\":");
        o_.us3(e.ts);
        if (e.source == SliceSource::CpuSample) {
            o_.raw(",\"args\":{");
            ArgsOut args(o_);
            visit_instant_args(m_, e, args);
            o_.ch('}');
        }
        o_.ch('}');
        o_.maybe_flush();
    }

    void counter(const CounterSample& c, int64_t pid) {
        const Track& t = m_.tracks[c.track];
        begin_event();
        o_.raw("{\"ph\":\"C\",\"name\":");
        o_.str(t.name);
        o_.raw(",\"pid\":");
        o_.i64(pid);
        o_.raw(",\"tid\":0,\"ts\":");
        o_.us3(c.ts);
        o_.raw(t.unit == CounterUnit::Bytes ? ",\"args\":{\"bytes\":" : ",\"args\":{\"value\":");
        if (counter_is_real(t.unit)) o_.fixed3(c.real());
        else o_.i64(c.value);
        o_.raw("}}");
        o_.maybe_flush();
    }

    const TimelineModel& m_;
    JsonOut& o_;
    std::vector<int64_t> tids_;  // by track
    bool first_event_ = true;
    uint64_t events_ = 0;
};

}  // namespace

EncodeStats write_chrome_json(const TimelineModel& model, const ByteSink& sink) {
    JsonOut out(sink);
    EncodeStats st;
    st.events = ChromeWriter(model, out).write();
    out.flush();
    st.bytes = out.total();
    return st;
}

}  // namespace gprof::report::timeline
