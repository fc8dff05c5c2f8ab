// The Perfetto encoder: the timeline model as Perfetto's native protobuf trace (TracePackets of TrackEvents),
// written field by field into a buffer (no message objects: see docs/performance.md for the speed). The
// fields used, with their numbers, are in perfetto_trace_subset.proto beside this file; tests decode the output
// with it through protoc.
//
// File layout, in this order:
//   sequence 1: a clock snapshot (BOOTTIME <-> REALTIME, from the trace header's clock reference) that makes
//               BOOTTIME the trace clock and lets the UI show wall-clock time; then one TrackDescriptor per group
//               and track: processes, their threads (ThreadDescriptor: the one uuid per OS thread), "GPU N"
//               tracks under their process with one track per stream (and overflow lanes) under them, counter
//               tracks, the analysis rows under a top-level "analysis" track.
//   one sequence per track with events: a first packet that clears incremental state, sets the defaults
//               (track_uuid, clock 64) and snapshots clock 64, an incremental clock whose packets carry ns deltas;
//               then the track's events in time order: SLICE_BEGIN / SLICE_END (END before BEGIN at equal times,
//               children inside parents), INSTANT, COUNTER. Names, categories, arg names and repeated string
//               values are interned per sequence, in the packet that first uses them.
// Flows: flow_ids on the earlier of the API call / GPU op, terminating_flow_ids on the later one.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <map>

#include "model/saturate.h"
#include "output/text.h"
#include "timeline/args.h"
#include "timeline/encoders.h"
#include "timeline/protobuf.h"

namespace gprof::report::timeline {

namespace {

using namespace protobuf;

// ----- interning -------------------------------------------------------------------------------------------------

// What one sequence has interned so far: a stamp per id (the sequence that interned it), so starting a new
// sequence costs nothing. iid = id + 1 (0 means unset).
class Interned {
public:
    void resize(size_t names, size_t values) {
        names_.assign(names, 0);
        values_.assign(values, 0);
    }
    void start_sequence(uint32_t seq) {
        seq_ = seq;
        categories_.fill(0);
        keys_.fill(0);
    }
    bool name_new(uint32_t id) { return mark(names_[id]); }
    bool category_new(Category c) { return mark(categories_[static_cast<size_t>(c)]); }
    bool key_new(ArgKey k) { return mark(keys_[static_cast<size_t>(k)]); }
    bool value_new(uint32_t id) {
        if (id >= values_.size()) values_.resize(id + 1, 0);
        return mark(values_[id]);
    }

private:
    bool mark(uint32_t& stamp) {
        if (stamp == seq_) return false;
        stamp = seq_;
        return true;
    }
    uint32_t seq_ = 0;
    std::vector<uint32_t> names_, values_;
    std::array<uint32_t, static_cast<size_t>(Category::Count)> categories_{};
    std::array<uint32_t, static_cast<size_t>(ArgKey::Count)> keys_{};
};

// ----- the writer ------------------------------------------------------------------------------------------------

class PerfettoWriter {
public:
    PerfettoWriter(const TimelineModel& m, const ByteSink& sink) : m_(m), sink_(sink) {
        interned_.resize(m.names.size(), 0);
        choose_clock();
        rank_rows();
    }

    EncodeStats write() {
        uint32_t seq = 1;
        clock_snapshot(seq);
        for (uint32_t g = 0; g < m_.groups.size(); ++g) group_descriptor(g, seq);
        for (uint32_t t = 0; t < m_.tracks.size(); ++t) track_descriptor(t, seq);
        flush_if_full();
        TrackEvents events = collect_events();
        for (uint32_t g = 0; g < m_.groups.size(); ++g)
            if (!events.group_instants[g].empty()) sequence(++seq, group_uuid(g), {}, events.group_instants[g], {});
        for (uint32_t t = 0; t < m_.tracks.size(); ++t)
            if (!events.slices[t].empty() || !events.instants[t].empty() || !events.counters[t].empty())
                sequence(++seq, track_uuid(t), events.slices[t], events.instants[t], events.counters[t]);
        flush();
        return stats_;
    }

private:
    uint64_t group_uuid(uint32_t g) const { return g + 1; }
    uint64_t track_uuid(uint32_t t) const { return m_.groups.size() + t + 1; }

    // ----- clocks -----

    // Timestamps are written on BOOTTIME: the run axis plus the run's REALTIME base, minus REALTIME - MONOTONIC
    // read together at a session start (so a Perfetto system trace of the same machine lines up; MONOTONIC
    // stands in for BOOTTIME, which differs only by time spent suspended). Without a usable reference, BOOTTIME
    // is declared equal to REALTIME.
    void choose_clock() {
        realtime_ref_ = boottime_ref_ = m_.base_realtime_ns;
        for (const auto& p : m_.run->processes)
            if (p.header.clock.monotonic_ns > 0 && p.header.clock.realtime_ns > 0) {
                realtime_ref_ = p.header.clock.realtime_ns;
                boottime_ref_ = p.header.clock.monotonic_ns;
                break;
            }
        int64_t earliest = 0;
        bool any = false;
        auto see = [&](int64_t t) {
            earliest = any ? std::min(earliest, t) : t;
            any = true;
        };
        for (const auto& s : m_.slices) see(s.start);
        for (const auto& e : m_.instants) see(e.ts);
        for (const auto& c : m_.counters) see(c.ts);
        first_ts_ = any ? earliest : 0;
        if (boot(first_ts_) < 0) realtime_ref_ = boottime_ref_ = m_.base_realtime_ns;  // never a negative time
    }
    // Modulo 2^64 (a crafted trace's times can be anywhere): the same bits as signed arithmetic, without overflow.
    int64_t boot(int64_t run_ns) const {
        return static_cast<int64_t>(static_cast<uint64_t>(run_ns) + static_cast<uint64_t>(m_.base_realtime_ns) -
                                    static_cast<uint64_t>(realtime_ref_) + static_cast<uint64_t>(boottime_ref_));
    }

    void clock_snapshot(uint32_t seq) {
        size_t pk = begin_packet(seq, kSeqIncrementalStateCleared);
        o_.uint(f::kFirstPacketOnSequence, 1);
        size_t cs = o_.begin(f::kClockSnapshot);
        clock(kClockBoottime, static_cast<uint64_t>(boottime_ref_), false);
        clock(kClockRealtime, static_cast<uint64_t>(realtime_ref_), false);
        o_.uint(f::kPrimaryTraceClock, kClockBoottime);
        o_.end(cs);
        end_packet(pk);
    }
    void clock(uint32_t id, uint64_t ts, bool incremental) {
        size_t c = o_.begin(f::kClocks);
        o_.uint(f::kClockId, id);
        o_.uint(f::kClockTimestamp, ts);
        if (incremental) o_.uint(f::kClockIncremental, 1);
        o_.end(c);
    }

    // ----- packets -----

    size_t begin_packet(uint32_t seq, uint32_t flags) {
        size_t pk = o_.begin(f::kTracePacket);
        o_.uint(f::kSequenceId, seq);
        if (flags) o_.uint(f::kSequenceFlags, flags);
        return pk;
    }
    void end_packet(size_t pk) {
        o_.end(pk);
        ++stats_.events;
    }
    void flush_if_full() {
        if (o_.size() >= (1u << 20)) flush();
    }
    void flush() {
        if (o_.buf().empty()) return;
        stats_.bytes += o_.size();
        sink_(o_.buf().data(), o_.size());
        o_.buf().clear();
    }

    // ----- descriptors (sequence 1, before any event) -----

    size_t begin_descriptor(uint32_t seq, uint64_t uuid, size_t& packet) {
        packet = begin_packet(seq, 0);
        o_.uint(f::kTimestamp, static_cast<uint64_t>(boot(first_ts_)));
        size_t d = o_.begin(f::kTrackDescriptor);
        o_.uint(f::kUuid, uuid);
        return d;
    }

    void group_descriptor(uint32_t gi, uint32_t seq) {
        const Group& g = m_.groups[gi];
        size_t pk, d = begin_descriptor(seq, group_uuid(gi), pk);
        switch (g.kind) {
            case GroupKind::Process: {
                size_t p = o_.begin(f::kProcess);
                o_.sint(f::kPid, g.track_pid);
                o_.bytes(f::kProcessName, g.label.empty() ? g.process_name : g.label);
                o_.end(p);
                break;
            }
            case GroupKind::GpuDevice:
                o_.uint(f::kParentUuid, group_uuid(process_group(gi)));
                o_.bytes(f::kName, g.name);
                o_.uint(f::kChildOrdering, kChildOrderingExplicit);
                o_.uint(f::kSiblingOrderRank, g.device_rank);
                o_.uint(f::kSiblingMergeBehavior, kMergeNone);
                break;
            case GroupKind::Analysis:
                o_.bytes(f::kName, g.name);
                o_.uint(f::kChildOrdering, kChildOrderingExplicit);
                break;
        }
        o_.end(d);
        end_packet(pk);
    }

    // The process group of a GPU device group: the nearest Process group before it.
    uint32_t process_group(uint32_t gi) const {
        while (gi > 0 && m_.groups[gi].kind != GroupKind::Process) --gi;
        return gi;
    }

    void track_descriptor(uint32_t ti, uint32_t seq) {
        const Track& t = m_.tracks[ti];
        const Group& g = m_.groups[t.group];
        size_t pk, d = begin_descriptor(seq, track_uuid(ti), pk);
        switch (t.kind) {
            case TrackKind::CpuThread:
                if (t.lane == 0) {  // the OS thread itself: one uuid per (pid, tid)
                    size_t th = o_.begin(f::kThread);
                    o_.sint(f::kPid, g.track_pid);
                    o_.sint(f::kTid, static_cast<int64_t>(t.tid));
                    if (!t.thread_name.empty()) o_.bytes(f::kThreadName, t.thread_name);
                    o_.end(th);
                    break;
                }
                [[fallthrough]];  // an overflow lane: a plain track beside the thread in its process
            case TrackKind::Overhead:
                o_.uint(f::kParentUuid, group_uuid(t.group));
                o_.bytes(f::kName, t.name);
                o_.uint(f::kSiblingMergeBehavior, kMergeNone);
                break;
            case TrackKind::GpuStream:
            case TrackKind::GraphLaunches:
            case TrackKind::ContextSync:
            case TrackKind::Analysis:
                o_.uint(f::kParentUuid, group_uuid(t.group));
                o_.bytes(f::kName, t.name);
                o_.sint(f::kSiblingOrderRank, rank_[ti]);
                o_.uint(f::kSiblingMergeBehavior, kMergeNone);
                break;
            case TrackKind::Counter: {
                // Counters hang off the process track (the UI's safe place), named after their device.
                o_.uint(f::kParentUuid, group_uuid(process_group(t.group)));
                o_.bytes(f::kName, g.kind == GroupKind::GpuDevice ? t.name + " (GPU " + std::to_string(g.device) + ")" : t.name);
                size_t c = o_.begin(f::kCounter);
                if (t.unit == CounterUnit::Bytes) o_.uint(f::kCounterUnit, kUnitSizeBytes);
                o_.end(c);
                break;
            }
        }
        o_.end(d);
        end_packet(pk);
    }

    // Sibling ranks (int32) of the rows in each group: streams in id order with their graph-launch and overflow
    // rows beside them, context syncs last; analysis rows by name.
    void rank_rows() {
        std::vector<uint32_t> rows;
        for (uint32_t t = 0; t < m_.tracks.size(); ++t)
            if (m_.tracks[t].kind != TrackKind::Counter) rows.push_back(t);
        auto key = [&](uint32_t ti) {
            const Track& t = m_.tracks[ti];
            bool ctx = t.kind == TrackKind::ContextSync;
            return std::make_tuple(t.group, ctx, ctx ? 0u : t.stream, t.row, t.kind == TrackKind::GraphLaunches, t.lane);
        };
        std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
        rank_.assign(m_.tracks.size(), 0);
        for (size_t i = 0; i < rows.size(); ++i)
            rank_[rows[i]] = i > 0 && m_.tracks[rows[i - 1]].group == m_.tracks[rows[i]].group ? rank_[rows[i - 1]] + 1 : 0;
    }

    // ----- events per track -----

    struct TrackEvents {
        std::vector<std::vector<uint32_t>> slices, instants, counters, group_instants;
    };

    TrackEvents collect_events() const {
        TrackEvents e;
        e.slices.resize(m_.tracks.size());
        e.instants.resize(m_.tracks.size());
        e.counters.resize(m_.tracks.size());
        e.group_instants.resize(m_.groups.size());
        for (uint32_t i = 0; i < m_.slices.size(); ++i) e.slices[m_.slices[i].track].push_back(i);
        for (uint32_t i = 0; i < m_.instants.size(); ++i) {
            const Instant& x = m_.instants[i];
            (x.scope == InstantScope::Thread ? e.instants[x.track] : e.group_instants[x.group]).push_back(i);
        }
        for (uint32_t i = 0; i < m_.counters.size(); ++i) e.counters[m_.counters[i].track].push_back(i);
        auto by_ts = [&](std::vector<uint32_t>& v) {
            std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return m_.instants[a].ts < m_.instants[b].ts; });
        };
        for (auto& v : e.instants) by_ts(v);
        for (auto& v : e.group_instants) by_ts(v);
        return e;
    }

    // One sequence: its first packet, then its events in time order. Slices come in start order (parents
    // first); an END goes out when the next event starts at or after it.
    void sequence(uint32_t seq, uint64_t uuid, const std::vector<uint32_t>& slices, const std::vector<uint32_t>& instants,
                  const std::vector<uint32_t>& counters) {
        seq_ = seq;
        interned_.start_sequence(seq);
        int64_t first = INT64_MAX;
        if (!slices.empty()) first = std::min(first, m_.slices[slices.front()].start);
        if (!instants.empty()) first = std::min(first, m_.instants[instants.front()].ts);
        if (!counters.empty()) first = std::min(first, m_.counters[counters.front()].ts);
        last_ts_ = first;
        size_t pk = begin_packet(seq, kSeqIncrementalStateCleared);
        o_.uint(f::kFirstPacketOnSequence, 1);
        size_t defaults = o_.begin(f::kDefaults);
        o_.uint(f::kDefaultsClockId, kClockIncremental);
        size_t te = o_.begin(f::kDefaultsTrackEvent);
        o_.uint(f::kDefaultsTrackUuid, uuid);
        o_.end(te);
        o_.end(defaults);
        size_t cs = o_.begin(f::kClockSnapshot);
        clock(kClockBoottime, static_cast<uint64_t>(boot(first)), false);
        clock(kClockIncremental, static_cast<uint64_t>(boot(first)), true);
        o_.end(cs);
        end_packet(pk);

        std::vector<int64_t> open_ends;  // the END stack
        size_t si = 0, ii = 0;
        for (;;) {
            int64_t next_begin = si < slices.size() ? m_.slices[slices[si]].start : INT64_MAX;
            int64_t next_instant = ii < instants.size() ? m_.instants[instants[ii]].ts : INT64_MAX;
            int64_t next_start = std::min(next_begin, next_instant);
            if (!open_ends.empty() && open_ends.back() <= next_start) {
                slice_end(open_ends.back());
                open_ends.pop_back();
            } else if (next_instant <= next_begin && ii < instants.size()) {
                instant(m_.instants[instants[ii++]]);
            } else if (si < slices.size()) {
                const Slice& s = m_.slices[slices[si]];
                slice_begin(slices[si++]);
                open_ends.push_back(sat_add(s.start, s.dur));
            } else if (!open_ends.empty()) {
                slice_end(open_ends.back());
                open_ends.pop_back();
            } else {
                break;
            }
            flush_if_full();
        }
        for (uint32_t c : counters) {
            counter(m_.counters[c]);
            flush_if_full();
        }
    }

    size_t begin_event_packet(int64_t ts) {
        size_t pk = begin_packet(seq_, kSeqNeedsIncrementalState);
        o_.uint(f::kTimestamp, static_cast<uint64_t>(ts) - static_cast<uint64_t>(last_ts_));  // modulo 2^64
        last_ts_ = ts;
        return pk;
    }

    void slice_begin(uint32_t index) {
        const Slice& s = m_.slices[index];
        pending_.clear();
        size_t pk = begin_event_packet(s.start);
        size_t te = o_.begin(f::kTrackEvent);
        o_.uint(f::kType, kSliceBegin);
        name_and_category(s.name, s.category);
        TrackKind row = m_.tracks[s.track].kind;
        Annotations ann(*this, row == TrackKind::GpuStream || row == TrackKind::GraphLaunches || row == TrackKind::ContextSync);
        visit_args(m_, s, ann);
        for_each_flow(m_.flows, s.flow, index, [&](const Flow& fl) {
            const Slice& other = m_.slices[fl.from == index ? fl.to : fl.from];
            bool opens = s.start < other.start || (s.start == other.start && fl.from == index);
            o_.fixed64(opens ? f::kFlowIds : f::kTerminatingFlowIds, fl.id);
        });
        o_.end(te);
        interned_data();
        end_packet(pk);
    }

    void slice_end(int64_t ts) {
        size_t pk = begin_event_packet(ts);
        size_t te = o_.begin(f::kTrackEvent);
        o_.uint(f::kType, kSliceEnd);
        o_.end(te);
        end_packet(pk);
    }

    void instant(const Instant& e) {
        pending_.clear();
        size_t pk = begin_event_packet(e.ts);
        size_t te = o_.begin(f::kTrackEvent);
        o_.uint(f::kType, kInstant);
        name_and_category(e.name, e.category);
        if (e.source == SliceSource::CpuSample) {
            Annotations ann(*this, false);
            visit_instant_args(m_, e, ann);
        }
        o_.end(te);
        interned_data();
        end_packet(pk);
    }

    void counter(const CounterSample& c) {
        size_t pk = begin_event_packet(c.ts);
        size_t te = o_.begin(f::kTrackEvent);
        o_.uint(f::kType, kCounterEvent);
        if (counter_is_real(m_.tracks[c.track].unit)) o_.dbl(f::kDoubleCounterValue, c.real());
        else o_.sint(f::kCounterValue, c.value);
        o_.end(te);
        end_packet(pk);
    }

    void name_and_category(uint32_t name, Category cat) {
        o_.uint(f::kEventNameIid, name + 1);
        if (interned_.name_new(name)) pending_.push_back({f::kEventNames, name + 1, m_.name(name)});
        o_.uint(f::kCategoryIids, static_cast<uint64_t>(cat) + 1);
        if (interned_.category_new(cat))
            pending_.push_back({f::kEventCategories, static_cast<uint64_t>(cat) + 1, category_name(cat)});
    }

    // The interned entries the packet's event used first: in the same packet, so they are valid from it on.
    void interned_data() {
        if (pending_.empty()) return;
        size_t id = o_.begin(f::kInternedData);
        for (const auto& e : pending_) {
            size_t entry = o_.begin(e.field);
            o_.uint(f::kIid, e.iid);
            o_.bytes(f::kIidName, e.text);
            o_.end(entry);
        }
        o_.end(id);
    }

    uint32_t value_id(std::string_view s) {
        auto it = value_ids_.find(s);
        if (it != value_ids_.end()) return it->second;
        uint32_t id = static_cast<uint32_t>(value_ids_.size());
        value_ids_.emplace(s, id);
        return id;
    }

    // Args as debug annotations: names interned (kArgKeyNames), string values interned (grid and block too, as
    // "[x,y,z]": launch shapes repeat), derived and row-given args, empty strings and success results left out
    // (args.h), the analysis' free-form
    // args as nested dicts and arrays with inline names.
    class Annotations {
    public:
        Annotations(PerfettoWriter& w, bool on_gpu_row) : w_(w), o_(w.o_), gpu_row_(on_gpu_row) {}
        void u(ArgKey k, uint64_t v) {
            if (skip(k)) return;
            size_t a = head(k);
            o_.uint(f::kUint, v);
            o_.end(a);
        }
        void i(ArgKey k, int64_t v) {
            if (arg_is_success_result(k, v)) return;
            size_t a = head(k);
            o_.sint(f::kInt, v);
            o_.end(a);
        }
        void f3(ArgKey k, double v) {
            if (skip(k)) return;
            size_t a = head(k);
            o_.dbl(f::kDouble, v);
            o_.end(a);
        }
        void s(ArgKey k, std::string_view v) {
            if (skip(k) || v.empty()) return;  // an empty value (the default NVTX domain) says nothing
            size_t a = head(k);
            uint32_t id = w_.value_id(v);
            o_.uint(f::kStringIid, id + 1);
            if (w_.interned_.value_new(id)) w_.pending_.push_back({f::kAnnotationStringValues, id + 1, v});
            o_.end(a);
        }
        void dims(ArgKey k, int32_t x, int32_t y, int32_t z) { s(k, w_.dims_text(x, y, z)); }
        void object(const nlohmann::json& args) {
            for (const auto& [key, value] : args.items()) {
                size_t a = o_.begin(f::kDebugAnnotations);
                o_.bytes(f::kAnnName, key);
                json_value(value);
                o_.end(a);
            }
        }

    private:
        bool skip(ArgKey k) const { return arg_is_derived(k) || (gpu_row_ && arg_is_said_by_gpu_row(k)); }
        size_t head(ArgKey k) {
            size_t a = o_.begin(f::kDebugAnnotations);
            o_.uint(f::kAnnNameIid, static_cast<uint64_t>(k) + 1);
            if (w_.interned_.key_new(k))
                w_.pending_.push_back({f::kAnnotationNames, static_cast<uint64_t>(k) + 1, arg_name(k)});
            return a;
        }
        void json_value(const nlohmann::json& v) {
            switch (v.type()) {
                case nlohmann::json::value_t::boolean: o_.uint(f::kBool, v.get<bool>() ? 1 : 0); break;
                case nlohmann::json::value_t::number_unsigned: o_.uint(f::kUint, v.get<uint64_t>()); break;
                case nlohmann::json::value_t::number_integer: o_.sint(f::kInt, v.get<int64_t>()); break;
                case nlohmann::json::value_t::number_float: o_.dbl(f::kDouble, v.get<double>()); break;
                case nlohmann::json::value_t::string: o_.bytes(f::kString, v.get_ref<const std::string&>()); break;
                case nlohmann::json::value_t::object:
                    for (const auto& [key, item] : v.items()) {
                        size_t e = o_.begin(f::kDictEntries);
                        o_.bytes(f::kAnnName, key);
                        json_value(item);
                        o_.end(e);
                    }
                    break;
                case nlohmann::json::value_t::array:
                    for (const auto& item : v) {
                        size_t e = o_.begin(f::kArrayValues);
                        json_value(item);
                        o_.end(e);
                    }
                    break;
                default: o_.bytes(f::kString, v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
            }
        }
        PerfettoWriter& w_;
        Proto& o_;
        bool gpu_row_;
    };

    // "[x,y,z]", made once per distinct shape and kept for the whole write (interned values point to it).
    std::string_view dims_text(int32_t x, int32_t y, int32_t z) {
        auto [it, fresh] = dims_.try_emplace(std::make_tuple(x, y, z));
        if (fresh) it->second = "[" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + "]";
        return it->second;
    }

    struct PendingIntern {
        uint32_t field;
        uint64_t iid;
        std::string_view text;
    };

    const TimelineModel& m_;
    const ByteSink& sink_;
    Proto o_;
    EncodeStats stats_;
    Interned interned_;
    std::vector<PendingIntern> pending_;
    std::unordered_map<std::string_view, uint32_t> value_ids_;
    std::vector<int32_t> rank_;  // per track: its sibling_order_rank
    std::map<std::tuple<int32_t, int32_t, int32_t>, std::string> dims_;
    uint32_t seq_ = 0;
    int64_t last_ts_ = 0;  // run axis; deltas are taken between run-axis times (== BOOTTIME deltas)
    int64_t first_ts_ = 0;
    int64_t realtime_ref_ = 0, boottime_ref_ = 0;
};

}  // namespace

EncodeStats write_perfetto(const TimelineModel& model, const ByteSink& sink) {
    return PerfettoWriter(model, sink).write();
}

}  // namespace gprof::report::timeline
