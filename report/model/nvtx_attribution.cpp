// The NVTX block of aggregate_run, at the end of each trace: the ranges' rows (nvprof's NVTX block and nsys's
// nvtx_sum) and what happened inside each range (the API calls of its thread and the GPU ops they launched).
#include <algorithm>
#include <exception>
#include <map>
#include <thread>
#include <tuple>

#include "gprof/trace/names.h"
#include "model/aggregator.h"

namespace gprof::report::aggregation {
namespace {

// Key id -> values, with a small direct-mapped cache in front of the hash map (a range holds few keys).
struct KeyedValues {
    std::unordered_map<uint32_t, Distribution> map;
    std::pair<uint32_t, Distribution*> cache[16] = {};  // key ids start at 1: {0, nullptr} is an empty slot
    Distribution& operator[](uint32_t key) {
        auto& c = cache[key & 15];
        if (c.first == key) return *c.second;
        Distribution* l = &map[key];  // unordered_map never moves its elements
        c = {key, l};
        return *l;
    }
};

struct RangeIds {
    uint64_t first;
    StringId domain, name;
    bool operator==(const RangeIds&) const = default;
    struct Hash {
        size_t operator()(const RangeIds& k) const {
            return std::hash<uint64_t>()(k.first * 0x9e3779b97f4a7c15ull ^ (uint64_t(k.domain) << 32 | k.name));
        }
    };
};

// A finished range of a thread that made API calls, as its cover needs it.
struct CoverRange {
    Timestamp start, end;
    uint32_t row;  // its row - first_slot
};

// One thread's timeline cut at every start and end of its ranges; each piece lists the ranges covering it (start <=
// t < end), so a call finds its ranges with one search. Ranges nest in practice (push/pop), so the lists are as
// long as the nesting is deep; ranges that overlap without nesting can make them long: capped.
struct ThreadCover {
    static constexpr size_t kMaxMembers = size_t(1) << 25;
    std::vector<Timestamp> bounds;  // sorted, distinct
    std::vector<uint32_t> first;    // piece j (from bounds[j] to bounds[j + 1]): members[first[j], first[j + 1])
    std::vector<uint32_t> members;  // indices into ends and rows
    std::vector<Timestamp> ends;    // per range of the thread, sorted by start
    std::vector<uint32_t> rows;

    // The thread's ranges (each covering something: start < end), in any order. False when the lists would pass
    // kMaxMembers.
    bool build(std::vector<CoverRange>& ranges) {
        auto by_start = [](const CoverRange& a, const CoverRange& b) { return a.start < b.start; };
        if (!std::is_sorted(ranges.begin(), ranges.end(), by_start)) std::sort(ranges.begin(), ranges.end(), by_start);
        // Events (time, i+1 a start / -(i+1) an end) in (time, value) order: ends first at a time. The starts are
        // in that order already (ranges sorted by start), the ends nearly (ranges close in order unless they
        // overlap): sorted apart and merged, not one sort of both (docs/performance.md, fourth pass at issue 19).
        std::vector<std::pair<Timestamp, int64_t>> starts, ends_at, events;
        starts.reserve(ranges.size());
        ends_at.reserve(ranges.size());
        ends.reserve(ranges.size());
        rows.reserve(ranges.size());
        for (size_t i = 0; i < ranges.size(); ++i) {
            const CoverRange& r = ranges[i];
            starts.emplace_back(r.start, static_cast<int64_t>(i) + 1);
            ends_at.emplace_back(r.end, -(static_cast<int64_t>(i) + 1));
            ends.push_back(r.end);
            rows.push_back(r.row);
        }
        ranges = {};
        if (starts.empty()) return true;
        if (!std::is_sorted(ends_at.begin(), ends_at.end())) std::sort(ends_at.begin(), ends_at.end());
        events.resize(starts.size() + ends_at.size());
        std::merge(ends_at.begin(), ends_at.end(), starts.begin(), starts.end(), events.begin());
        starts = {};
        ends_at = {};
        bounds.reserve(events.size());
        first.reserve(events.size() + 1);
        members.reserve(events.size());
        std::vector<uint32_t> active;
        for (size_t e = 0; e < events.size();) {
            Timestamp t = events[e].first;
            for (; e < events.size() && events[e].first == t; ++e) {
                int64_t v = events[e].second;
                if (v > 0) active.push_back(static_cast<uint32_t>(v - 1));
                else active.erase(std::find(active.begin(), active.end(), static_cast<uint32_t>(-v - 1)));
            }
            bounds.push_back(t);
            first.push_back(static_cast<uint32_t>(members.size()));
            if (members.size() + active.size() > kMaxMembers) return false;
            members.insert(members.end(), active.begin(), active.end());
        }
        first.push_back(static_cast<uint32_t>(members.size()));
        return true;
    }
    // The piece holding t (kNone before the first bound); `hint` is the last answer (calls come mostly in order).
    uint32_t piece(Timestamp t, uint32_t& hint) const {
        const size_t n = bounds.size();
        if (hint < n && bounds[hint] <= t && (hint + 1 == n || t < bounds[hint + 1])) return hint;
        if (hint + 1 < n && bounds[hint + 1] <= t && (hint + 2 == n || t < bounds[hint + 2])) return ++hint;
        auto it = std::upper_bound(bounds.begin(), bounds.end(), t);
        if (it == bounds.begin()) return UINT32_MAX;
        return hint = static_cast<uint32_t>(it - bounds.begin() - 1);
    }
};

struct RangeWork {
    KeyedValues api, gpu;  // key id -> durations inside the range
};

// A call remembered by correlation id, for the ops that come near it in the file.
struct RecentCall {
    uint32_t correlation = 0;
    uint32_t cover = 0, piece = 0;
    bool filled = false;
    Timestamp end = 0;
};
constexpr size_t kRecent = size_t(1) << 18;  // correlation ids remembered per thread (6 MiB)

struct SweepWorker {
    PodBuf<uint64_t> bits;           // correlation ids with a call (dense ids)
    std::vector<uint32_t> corrs;     // the same, sparse ids
    std::vector<uint32_t> shared;    // ids seen twice
    std::vector<RangeWork> work;     // per range row of this trace
    std::vector<KeptOp> pending;     // ops whose call was not in the recent table
    // The ranges of the last piece given to (end, row): consecutive calls and ops mostly share a piece.
    uint32_t given_cover = UINT32_MAX, given_piece = UINT32_MAX;
    std::vector<std::pair<Timestamp, RangeWork*>> given;
};

}  // namespace

void Aggregator::finish_nvtx_and_matching(const ProcessInfo& p) {
    std::map<uint64_t, std::string> tnames;
    for (const auto& t : p.thread_names) {
        auto sp = t.find(' ');
        tnames[std::stoull(t.substr(0, sp))] = t.substr(sp + 1);
    }
    // The rows of nvprof's NVTX block: one per thread, domain and name (their text: two ids of one text share a
    // row), each with the lengths of its groups' ranges.
    std::vector<RangeGroup>& groups = groups_.groups;
    std::map<std::tuple<uint64_t, std::string, std::string>, size_t> slot;
    const size_t first_slot = out_.nvtx_ranges.size();
    std::vector<uint32_t> row_of_group(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
        const RangeGroupKey& k = groups[g].key;
        std::string domain(k.domain ? strings_.get(k.domain) : std::string_view());
        std::string name(strings_.get(k.name));
        auto key = std::make_tuple(k.tid, domain, name);
        auto it = slot.find(key);
        if (it == slot.end()) {
            NvtxRangeSummary s;
            s.pid = p.header.pid;
            s.process = process_key(p.header, p.rank);
            s.tid = k.tid;
            s.thread_name = tnames.count(k.tid) ? tnames[k.tid] : std::string();
            s.domain = domain;
            s.name = name;
            out_.nvtx_ranges.push_back(std::move(s));
            it = slot.emplace(key, out_.nvtx_ranges.size() - 1).first;
        }
        Distribution lengths = groups[g].durations;  // also the nvtx_sum key's, below
        out_.nvtx_ranges[it->second].durations.merge(std::move(lengths));
        row_of_group[g] = static_cast<uint32_t>(it->second - first_slot);
    }
    // Without the detail (reports other than summary) only the NVTX rows are needed.
    if (opt_.nvtx_detail) attribute(row_of_group, out_.nvtx_ranges.size() - first_slot, first_slot, p);
    // The NVTX summary rows (nvtx_sum) come from the same groups, keyed by domain:name and style; keys are made in
    // the order the ranges sorted by (thread, start) would first show them, as they always were.
    std::vector<uint32_t> order(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) order[g] = static_cast<uint32_t>(g);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const RangeGroup &x = groups[a], &y = groups[b];
        return std::tie(x.key.tid, x.first_start, x.first_position) < std::tie(y.key.tid, y.first_start, y.first_position);
    });
    std::unordered_map<RangeIds, uint32_t, RangeIds::Hash> key_of_ids;
    for (uint32_t g : order) {
        const RangeGroupKey& r = groups[g].key;
        uint32_t& memo = key_of_ids[{static_cast<uint64_t>(r.type), r.domain, r.name}];
        if (!memo) {
            std::string domain(r.domain ? strings_.get(r.domain) : std::string_view());
            std::string name = domain + ":" + std::string(strings_.get(r.name));
            uint32_t k = global_key(name + '\x1e' + std::string(nvtx_type_name(r.type)), KeyCategory::Nvtx, "");
            KeyData& kd = out_.keys[k - 1];
            if (kd.nvtx_style.empty()) {
                kd.nvtx_style = std::string(nvtx_type_name(r.type));
                kd.name = name;
            }
            memo = k;
        }
        values_[memo - 1].durations.merge(std::move(groups[g].durations));
    }
    // A fact about the program, not a recording problem: the ranges are in the trace (drawn to its end).
    if (unfinished_ranges_)
        out_.notes.push_back(trace_label(p.path) + ": " + std::to_string(unfinished_ranges_) +
                             (unfinished_ranges_ == 1 ? " NVTX range" : " NVTX ranges") +
                             " never ended (left out of the NVTX statistics)");
}

// nvprof's NVTX block: a range gets the API calls of its thread that start inside it and end by its end, and
// the GPU ops those calls launched (same correlation id). Also counts GPU ops with no launching API call.
// The kept calls and ops are read on several threads, each a run of consecutive batches:
//   1. each call is given to the ranges covering its start (ThreadCover), its correlation id marked, and the
//      call remembered in a small table by correlation; each op finds its call there (real traces write an op
//      just before or after its call);
//   2. if the marks show ids shared by several calls (no real trace has any), pass 1 is done again with those
//      ids known, so that their ops take the slow path of 3 (one pass instead of two: 10-15 ms of the 10^7
//      bench trace's ~0.1 s here);
//   3. ops whose call was not in the table (far away in the file, or shared ids) are matched by a scan of the
//      calls. The result is the same as giving every call and op to its ranges one by one, in any order.
void Aggregator::attribute(const std::vector<uint32_t>& row_of_group, size_t slots, size_t first_slot,
                           const ProcessInfo& p) {
    if (!kept_calls_ && !kept_ops_) return;
    // Covers for the threads that made calls only: a range on another thread has nothing to be given.
    std::vector<ThreadCover> covers;
    std::unordered_map<uint64_t, uint32_t> cover_of;  // tid -> index in covers
    {
        std::vector<std::vector<CoverRange>> spans;
        for (const KeptBatch& kb : kept_)
            for (const CallStream& s : kb.calls)
                if (cover_of.emplace(s.tid, static_cast<uint32_t>(spans.size())).second) spans.emplace_back();
        for (const KeptBatch& kb : kept_)
            for (const RangeStream& s : kb.ranges) {
                auto it = cover_of.find(s.tid);
                if (it == cover_of.end()) continue;
                std::vector<CoverRange>& out = spans[it->second];
                s.for_each([&](Timestamp start, Timestamp end, uint32_t g) {
                    if (end > start) out.push_back({start, end, row_of_group[kb.groups[g]]});  // else covers nothing
                });
            }
        covers.resize(spans.size());
        bool too_deep = false;
        for (size_t c = 0; c < spans.size() && !too_deep; ++c) too_deep = !covers[c].build(spans[c]);
        if (too_deep) {
            covers.clear();
            cover_of.clear();
            out_.warnings.push_back(trace_label(p.path) + ": NVTX ranges overlap too deeply (more than " +
                                    std::to_string(ThreadCover::kMaxMembers) +
                                    " range-piece pairs): API calls and GPU ops are not attributed to ranges");
        }
        // A thread with calls and no ranges: no cover (its calls go nowhere, quickly).
        for (auto it = cover_of.begin(); it != cover_of.end();)
            it = covers[it->second].bounds.empty() ? cover_of.erase(it) : std::next(it);
    }

    const size_t n = kept_.size();
    unsigned workers = sweep_threads_;
    if (kept_calls_ + kept_ops_ < 200000) workers = 1;
    workers = static_cast<unsigned>(std::min<size_t>(workers, n));
    std::vector<SweepWorker> w(workers);
    auto part = [&](unsigned i) { return std::make_pair(n * i / workers, n * (i + 1) / workers); };
    auto run = [&](auto&& job) {
        std::vector<std::thread> pool;
        std::vector<std::exception_ptr> errors(workers);
        for (unsigned i = 1; i < workers; ++i)
            pool.emplace_back([&, i] {
                try {
                    job(i);
                } catch (...) {
                    errors[i] = std::current_exception();
                }
            });
        try {
            job(0);
        } catch (...) {
            errors[0] = std::current_exception();
        }
        for (auto& t : pool) t.join();
        for (auto& e : errors)
            if (e) std::rethrow_exception(e);
    };

    // Correlation ids with an API call: a bitmap when ids are dense (CUPTI's are small sequential integers per
    // process), a sorted list otherwise. Each worker marks the calls it reads; ids seen twice are "shared".
    const bool dense = max_correlation_ <= 4 * (kept_calls_ + kept_ops_) + (1u << 20);
    const size_t words = dense ? (static_cast<size_t>(max_correlation_) >> 6) + 1 : 0;
    auto mark = [&](SweepWorker& me, uint32_t correlation) {
        if (!dense) {
            me.corrs.push_back(correlation);
            return;
        }
        uint64_t& word = me.bits[correlation >> 6];
        uint64_t bit = uint64_t(1) << (correlation & 63);
        if (word & bit) me.shared.push_back(correlation);
        word |= bit;
    };
    std::vector<uint32_t> shared;  // correlation ids of several calls, sorted
    PodBuf<uint64_t> has_bits;
    std::vector<uint32_t> has_list;
    auto has_call = [&](uint32_t c) {
        if (dense) return c <= max_correlation_ && ((has_bits[c >> 6] >> (c & 63)) & 1) != 0;
        return std::binary_search(has_list.begin(), has_list.end(), c);
    };
    auto is_shared = [&](uint32_t c) {
        return !shared.empty() && std::binary_search(shared.begin(), shared.end(), c);
    };

    // Where a call falls: its thread's cover (kNone: no ranges on that thread) and the piece of its start.
    constexpr uint32_t kNone = UINT32_MAX;
    auto cover_of_thread = [&](uint64_t tid) {
        auto it = cover_of.find(tid);
        return it == cover_of.end() ? kNone : it->second;
    };
    auto piece_of = [&](uint32_t cover, const KeptCall& c, uint32_t& hint) {
        return cover == kNone ? kNone : covers[cover].piece(c.start, hint);
    };
    // Calls a value to every range covering the call's piece that the call ends in.
    auto give = [&](SweepWorker& me, uint32_t cover, uint32_t piece, Timestamp call_end, bool gpu, uint32_t key,
                    uint64_t value) {
        if (cover == kNone || piece == kNone) return;
        if (cover != me.given_cover || piece != me.given_piece) {
            const ThreadCover& tc = covers[cover];
            me.given.clear();
            for (uint32_t m = tc.first[piece]; m < tc.first[piece + 1]; ++m) {
                uint32_t r = tc.members[m];
                me.given.emplace_back(tc.ends[r], &me.work[tc.rows[r]]);
            }
            me.given_cover = cover;
            me.given_piece = piece;
        }
        for (const auto& [end, rw] : me.given) {
            if (call_end > end) continue;
            (gpu ? rw->gpu : rw->api)[key].push(value);
        }
    };

    // 1. Calls to their ranges (marking their ids when `marking`); ops through the table, trusting that no id is
    // shared unless `shared` already lists the shared ones.
    auto sweep = [&](unsigned i, bool marking) {
        SweepWorker& me = w[i];
        me.work.clear();
        me.work.resize(slots);
        me.given_cover = me.given_piece = kNone;
        me.pending.clear();
        if (marking && dense) me.bits.assign(words, 0);
        std::vector<RecentCall> recent(kRecent);
        auto calls_of = [&](size_t b) {
            const KeptBatch& kb = kept_[b];
            for (const CallStream& s : kb.calls) {
                uint32_t hint = 0;
                const uint32_t cover = cover_of_thread(s.tid);
                s.for_each([&](const KeptCall& c) {
                    if (marking) mark(me, c.correlation);
                    const uint32_t piece = piece_of(cover, c, hint);
                    const uint32_t key = kb.key(c.key);
                    give(me, cover, piece, c.end, false, key, c.end > c.start ? c.end - c.start : 0);
                    recent[c.correlation & (kRecent - 1)] = {c.correlation, cover, piece, true, c.end};
                });
            }
        };
        auto ops_of = [&](size_t b) {
            const KeptBatch& kb = kept_[b];
            kb.ops.for_each([&](const KeptOp& o) {
                const RecentCall& rc = recent[o.correlation & (kRecent - 1)];
                const uint32_t key = kb.key(o.key);
                if (!rc.filled || rc.correlation != o.correlation || is_shared(o.correlation)) {
                    me.pending.push_back({o.correlation, key, o.duration});
                    return;
                }
                give(me, rc.cover, rc.piece, rc.end, true, key, o.duration);
            });
        };
        // An op's call may come just after it in the file: a batch's ops are read after the next batch's calls.
        auto [lo, hi] = part(i);
        for (size_t b = lo; b < hi; ++b) {
            calls_of(b);
            if (b > lo) ops_of(b - 1);
        }
        if (hi > lo) ops_of(hi - 1);
    };
    run([&](unsigned i) { sweep(i, true); });

    // The marks of all workers: which ids have a call, which several.
    for (auto& me : w) shared.insert(shared.end(), me.shared.begin(), me.shared.end());
    if (dense) {
        has_bits = std::move(w[0].bits);
        for (unsigned i = 1; i < workers; ++i) {
            for (size_t k = 0; k < words; ++k) {
                uint64_t both = has_bits[k] & w[i].bits[k];
                for (; both; both &= both - 1) shared.push_back(static_cast<uint32_t>(k * 64 + __builtin_ctzll(both)));
                has_bits[k] |= w[i].bits[k];
            }
            w[i].bits.release();
        }
    } else {
        for (auto& me : w) {
            has_list.insert(has_list.end(), me.corrs.begin(), me.corrs.end());
            me.corrs = {};
        }
        std::sort(has_list.begin(), has_list.end());
        for (size_t k = 1; k < has_list.size(); ++k)
            if (has_list[k] == has_list[k - 1]) shared.push_back(has_list[k]);
    }
    std::sort(shared.begin(), shared.end());
    shared.erase(std::unique(shared.begin(), shared.end()), shared.end());
    // 2. No real trace shares an id between calls (none of the H100 runs does, with or without the nested driver
    // calls), so one pass usually settles it. When some do, an op of theirs belongs to every such call, not to
    // the one the table held: the pass is done again, now sending those ops to the scan below.
    if (!shared.empty()) run([&](unsigned i) { sweep(i, false); });

    // 3. Ops left over: no call at all (counted), or a call the table no longer held.
    std::vector<KeptOp> late;
    for (auto& me : w) {
        for (const KeptOp& o : me.pending) {
            if (!has_call(o.correlation)) ++out_.unmatched_gpu_ops;
            else if (!cover_of.empty()) late.push_back(o);
        }
        me.pending = {};
    }
    if (!late.empty()) {
        std::stable_sort(late.begin(), late.end(),
                         [](const KeptOp& a, const KeptOp& b) { return a.correlation < b.correlation; });
        for (const KeptBatch& kb : kept_)
            for (const CallStream& s : kb.calls) {
                uint32_t hint = 0;
                const uint32_t cover = cover_of_thread(s.tid);
                s.for_each([&](const KeptCall& c) {
                    auto it = std::lower_bound(late.begin(), late.end(), c.correlation,
                                               [](const KeptOp& o, uint32_t v) { return o.correlation < v; });
                    if (it == late.end() || it->correlation != c.correlation) return;
                    const uint32_t piece = piece_of(cover, c, hint);
                    for (; it != late.end() && it->correlation == c.correlation; ++it)
                        give(w[0], cover, piece, c.end, true, it->key, it->duration);
                });
            }
    }
    // Key ids -> names once per range, not once per call inside it.
    for (auto& me : w)
        for (size_t i = 0; i < me.work.size(); ++i) {
            auto& dst = out_.nvtx_ranges[first_slot + i];
            for (auto& [k, v] : me.work[i].api.map) dst.api[out_.keys[k - 1].name].merge(std::move(v));
            for (auto& [k, v] : me.work[i].gpu.map) dst.gpu[out_.keys[k - 1].name].merge(std::move(v));
        }
    // The kept streams are done with: given back on the workers too (a 10^7-record trace's few hundred buffers
    // took 6 ms to unmap on one thread while the other core idled).
    run([&](unsigned i) {
        auto [lo, hi] = part(i);
        for (size_t b = lo; b < hi; ++b) kept_[b] = KeptBatch();
    });
}

}  // namespace gprof::report::aggregation
