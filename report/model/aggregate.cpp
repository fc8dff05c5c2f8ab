#include "model/aggregate.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <mutex>
#include <map>
#include <functional>
#include <exception>
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "gprof/trace/names.h"
#include "gprof/trace/runtime_driver_calls.h"
#include "model/stats.h"

namespace gprof::report {

using namespace gprof::trace;

namespace {

// Why a program a process started could not be traced (Exec records), in a few words.
std::string untraced_reason(trace::ExecImage image) {
    switch (image) {
        case trace::ExecImage::Static: return "a statically linked program that cannot be traced";
        case trace::ExecImage::Foreign: return "a program of another architecture that cannot be traced";
        case trace::ExecImage::Privileged: return "a set-user-ID program the collector cannot enter";
        case trace::ExecImage::NoCollector: return "its environment no longer loads the collector";
        case trace::ExecImage::Traced: break;
    }
    return "traced";
}

// ----- compact storage ----------------------------------------------------------------------------------------
// A 10 M-record summary keeps ~10 M durations and ~5 M call/op entries while it reads. Faulting that memory in
// was a third of the summary's time, and growing std::vectors copied it again: values are kept in 32 bits where
// they fit, and large buffers are anonymous mappings that grow with mremap (no copy). (Transparent huge pages
// were tried: no faster on the 2-core VM, with more variance and a larger RSS.)

constexpr size_t kPage = size_t(2) << 20;      // mapped buffers grow in these steps
constexpr size_t kMapBytes = size_t(4) << 20;  // smaller buffers stay on the heap

// A growable array of trivially copyable values (push_back, index, sort in place).
template <class T> class PodBuf {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    PodBuf() = default;
    PodBuf(const PodBuf&) = delete;
    PodBuf& operator=(const PodBuf&) = delete;
    PodBuf(PodBuf&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_), mapped_(o.mapped_) { o.forget(); }
    PodBuf& operator=(PodBuf&& o) noexcept {
        if (this != &o) {
            release();
            p_ = o.p_, n_ = o.n_, cap_ = o.cap_, mapped_ = o.mapped_;
            o.forget();
        }
        return *this;
    }
    ~PodBuf() { release(); }

    void push_back(const T& v) {
        if (n_ == cap_) grow(n_ + 1);
        p_[n_++] = v;
    }
    void reserve(size_t n) {
        if (n > cap_) grow(n);
    }
    void assign(size_t n, const T& v) {
        n_ = 0;
        reserve(n);
        std::fill(p_, p_ + n, v);
        n_ = n;
    }
    // Room for k more values at end(); added(k) then counts those written there.
    T* room(size_t k) {
        if (n_ + k > cap_) grow(n_ + k);
        return p_ + n_;
    }
    void added(size_t k) { n_ += k; }
    // Gives back the unused capacity of a heap buffer (mapped ones grow in 2 MiB steps: little to gain).
    void shrink() {
        if (mapped_ || cap_ == n_ || !p_) return;
        if (n_ == 0) {
            release();
            return;
        }
        if (void* q = std::realloc(p_, n_ * sizeof(T))) {
            p_ = static_cast<T*>(q);
            cap_ = n_;
        }
    }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    T* begin() { return p_; }
    T* end() { return p_ + n_; }
    const T* begin() const { return p_; }
    const T* end() const { return p_ + n_; }
    T& operator[](size_t i) { return p_[i]; }
    const T& operator[](size_t i) const { return p_[i]; }
    void release() {
        if (p_) {
            if (mapped_) ::munmap(p_, cap_ * sizeof(T));
            else std::free(p_);
        }
        forget();
    }

private:
    void forget() {
        p_ = nullptr;
        n_ = cap_ = 0;
        mapped_ = false;
    }
    void grow(size_t need) {
        size_t cap = std::max(need, cap_ ? cap_ + cap_ / 2 : size_t(16));
        size_t bytes = cap * sizeof(T);
        if (bytes < kMapBytes) {
            void* q = std::realloc(p_, bytes);
            if (!q) throw std::bad_alloc();
            p_ = static_cast<T*>(q);
            cap_ = cap;
            return;
        }
        bytes = (bytes + kPage - 1) & ~(kPage - 1);
        void* q;
        if (mapped_) {
            q = ::mremap(p_, cap_ * sizeof(T), bytes, MREMAP_MAYMOVE);
            if (q == MAP_FAILED) throw std::bad_alloc();
        } else {
            q = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (q == MAP_FAILED) throw std::bad_alloc();
            if (n_) std::memcpy(q, p_, n_ * sizeof(T));
            std::free(p_);
            mapped_ = true;
        }
        p_ = static_cast<T*>(q);
        cap_ = bytes / sizeof(T);
    }

    T* p_ = nullptr;
    size_t n_ = 0, cap_ = 0;
    bool mapped_ = false;
};

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

}  // namespace

std::vector<const KeyData*> Aggregate::of(KeyCategory c) const {
    std::vector<std::pair<uint64_t, const KeyData*>> tmp;
    for (const auto& k : keys)
        if (k.category == c) tmp.emplace_back(k.time_stats.total, &k);
    std::sort(tmp.begin(), tmp.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second->name < b.second->name;
    });
    std::vector<const KeyData*> out;
    for (auto& t : tmp) out.push_back(t.second);
    return out;
}

size_t Aggregate::damaged_traces() const {
    size_t n = unreadable_traces;
    for (const auto& p : processes)
        if (p.read_stats.damaged()) ++n;
    return n;
}

std::string memop_row_name(MemcpyKind kind) { return "[CUDA memcpy " + std::string(memcpy_kind_name(kind)) + "]"; }

std::string graph_row_name(uint32_t graph_id) { return "[CUDA graph " + std::to_string(graph_id) + "]"; }

std::string memop_nsys_name(MemcpyKind kind) {
    switch (kind) {
        case MemcpyKind::HtoD: return "[CUDA memcpy Host-to-Device]";
        case MemcpyKind::DtoH: return "[CUDA memcpy Device-to-Host]";
        case MemcpyKind::DtoD: return "[CUDA memcpy Device-to-Device]";
        case MemcpyKind::HtoH: return "[CUDA memcpy Host-to-Host]";
        case MemcpyKind::PtoP: return "[CUDA memcpy Peer-to-Peer]";
        default: return memop_row_name(kind);
    }
}

namespace {

// ----- what the NVTX block keeps of a trace -----------------------------------------------------------------------
// A range's record is written when the range closes, after everything inside it: an API call or a GPU op can only
// be given to its ranges once the whole trace is read. What is kept until then is small: per batch, the API calls
// of each thread and the GPU ops as varint streams (deltas of start and correlation, length, key: about 7 bytes a
// call and 5 an op instead of the 24 and 12 of a struct), moved into the Aggregator at fold time without copying.

inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t u) { return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1); }
inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = static_cast<uint8_t>(v) | 0x80;
        v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
    return p;
}
// Only for bytes put_varint wrote.
inline uint64_t take_varint(const uint8_t*& p) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (b < 0x80) return v;
    }
}

struct KeptCall {
    Timestamp start = 0, end = 0;
    uint32_t correlation = 0;
    uint32_t key = 0;  // local slot (batch) or global key, as the stream's owner says
};

// One thread's API calls of one batch, in file order.
struct CallStream {
    uint64_t tid = 0;
    uint64_t count = 0;
    Timestamp last_start = 0;
    uint32_t last_correlation = 0;
    PodBuf<uint8_t> bytes;

    void add(Timestamp start, Timestamp end, uint32_t correlation, uint32_t key) {
        uint8_t* p = bytes.room(4 * 10);
        uint8_t* q = put_varint(p, zigzag(static_cast<int64_t>(start - last_start)));
        q = put_varint(q, zigzag(static_cast<int64_t>(end - start)));
        q = put_varint(q, zigzag(static_cast<int32_t>(correlation - last_correlation)));
        q = put_varint(q, key);
        bytes.added(static_cast<size_t>(q - p));
        last_start = start;
        last_correlation = correlation;
        ++count;
    }
    template <class F> void for_each(F&& f) const {
        const uint8_t* p = bytes.begin();
        KeptCall c;
        for (uint64_t i = 0; i < count; ++i) {
            c.start += static_cast<uint64_t>(unzigzag(take_varint(p)));
            c.end = c.start + static_cast<uint64_t>(unzigzag(take_varint(p)));
            c.correlation += static_cast<uint32_t>(unzigzag(take_varint(p)));
            c.key = static_cast<uint32_t>(take_varint(p));
            f(c);
        }
    }
};

struct KeptOp {
    uint32_t correlation = 0;
    uint32_t key = 0;
    uint64_t duration = 0;
};

// GPU ops (kernels, copies, sets, graph launches that stand for their work) of one batch, in file order.
struct OpStream {
    uint64_t count = 0;
    uint32_t last_correlation = 0;
    PodBuf<uint8_t> bytes;

    void add(uint32_t correlation, uint32_t key, uint64_t duration) {
        uint8_t* p = bytes.room(3 * 10);
        uint8_t* q = put_varint(p, zigzag(static_cast<int32_t>(correlation - last_correlation)));
        q = put_varint(q, key);
        q = put_varint(q, duration);
        bytes.added(static_cast<size_t>(q - p));
        last_correlation = correlation;
        ++count;
    }
    template <class F> void for_each(F&& f) const {
        const uint8_t* p = bytes.begin();
        KeptOp o;
        for (uint64_t i = 0; i < count; ++i) {
            o.correlation += static_cast<uint32_t>(unzigzag(take_varint(p)));
            o.key = static_cast<uint32_t>(take_varint(p));
            o.duration = take_varint(p);
            f(o);
        }
    }
};

// A batch's calls and ops, kept until the end of the trace; `keys` turns its local slots into global keys (empty:
// the streams hold global keys already).
struct KeptBatch {
    std::vector<CallStream> calls;
    OpStream ops;
    std::vector<uint32_t> keys;
    uint32_t key(uint32_t k) const { return keys.empty() ? k : keys[k - 1]; }
};

// What the NVTX block keeps of a range (the records are 80 bytes).
struct RangeLite {
    Timestamp start, end;
    uint64_t tid;
    StringId name, domain;
    NvtxType type;
};

// A range's thread (or style) and string ids: what its row and its nvtx_sum key are remembered by.
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

// One thread's timeline cut at every start and end of its ranges; each piece lists the ranges covering it (start <=
// t < end), so a call finds its ranges with one search. Ranges nest in practice (push/pop), so the lists are as
// long as the nesting is deep; ranges that overlap without nesting can make them long: capped.
struct ThreadCover {
    static constexpr size_t kMaxMembers = size_t(1) << 25;
    std::vector<Timestamp> bounds;  // sorted, distinct
    std::vector<uint32_t> first;    // piece j (from bounds[j] to bounds[j + 1]): members[first[j], first[j + 1])
    std::vector<uint32_t> members;  // indices into the sorted ranges

    // Ranges [lo, hi) of one thread (sorted by start). False when the lists would pass kMaxMembers.
    bool build(const std::vector<RangeLite>& ranges, size_t lo, size_t hi) {
        // Events (time, i+1 a start / -(i+1) an end) in (time, value) order: ends first at a time. The starts are
        // in that order already (ranges sorted by start), the ends nearly (ranges close in order unless they
        // overlap): sorted apart and merged, not one sort of both (with the reserves: 9-10 -> 7-8 ms for the 1.5 x 10^5
        // ranges of the bench's 10^7-record trace).
        std::vector<std::pair<Timestamp, int64_t>> starts, ends, events;
        starts.reserve(hi - lo);
        ends.reserve(hi - lo);
        for (size_t i = lo; i < hi; ++i) {
            const RangeLite& r = ranges[i];
            if (r.end == 0 || r.end <= r.start) continue;  // unfinished, or covers nothing
            starts.emplace_back(r.start, static_cast<int64_t>(i) + 1);
            ends.emplace_back(r.end, -(static_cast<int64_t>(i) + 1));
        }
        if (starts.empty()) return true;
        if (!std::is_sorted(ends.begin(), ends.end())) std::sort(ends.begin(), ends.end());
        events.resize(starts.size() + ends.size());
        std::merge(ends.begin(), ends.end(), starts.begin(), starts.end(), events.begin());
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

// Values of one key: every duration and (memory ops) every size.
struct KeyValues {
    Distribution durations, bytes;
};

// ----- the decoders' side --------------------------------------------------------------------------------------
// A batch (a few consecutive chunks) is decoded and aggregated on a worker thread with nothing shared: its keys are
// the trace's string ids, resolved to names when the batch is folded into the Aggregate, in file order, by which
// time every string the batch uses is defined (the format defines a string before its first use).

constexpr size_t kChunksPerBatch = 4;  // chunks are sealed at 256 KiB: about 1 MB a batch

// A key of one batch: a category and what names it within the trace.
struct LocalKey {
    KeyCategory category;
    uint32_t id;  // Api, Kernel: string id; Memcpy: copy kind (0-15); Memset: 0
};

// Slot (index + 1, 0 = none) by string id: a table for the usual small ids, a hash map for the rest, so a hostile
// id never sizes a table.
class SlotTable {
public:
    uint32_t& operator[](uint32_t id) {
        if (id >= kDense) return sparse_[id];
        if (id >= dense_.size()) dense_.resize(id + 1, 0);
        return dense_[id];
    }

private:
    static constexpr uint32_t kDense = 1u << 16;
    std::vector<uint32_t> dense_;
    std::unordered_map<uint32_t, uint32_t> sparse_;
};

// Keys of the trace being read whose durations are past the exact limit: a decoding thread then buckets their values
// itself instead of leaving it to the fold (merging would turn its part into a histogram anyway). Read without a
// lock: a stale "no" only leaves the bucketing to the fold, with the same result.
class LargeKeys {
public:
    LargeKeys() : api_(new std::atomic<bool>[kIds]()), kernel_(new std::atomic<bool>[kIds]()) {}
    bool is_large(const LocalKey& k) const {
        const std::atomic<bool>* f = flag(k);
        return f && f->load(std::memory_order_relaxed);
    }
    void mark(const LocalKey& k) {
        if (std::atomic<bool>* f = flag(k)) f->store(true, std::memory_order_relaxed);
    }

private:
    static constexpr uint32_t kIds = 1u << 16;  // string ids beyond are left to the fold
    std::atomic<bool>* flag(const LocalKey& k) const {
        switch (k.category) {
            case KeyCategory::Api: return k.id < kIds ? &api_[k.id] : nullptr;
            case KeyCategory::Kernel: return k.id < kIds ? &kernel_[k.id] : nullptr;
            case KeyCategory::Memcpy: return &memops_[k.id & 15];
            case KeyCategory::Memset: return &memops_[16];
            default: return nullptr;
        }
    }
    std::unique_ptr<std::atomic<bool>[]> api_, kernel_;
    mutable std::atomic<bool> memops_[17] = {};
};

struct BatchPart {
    uint64_t sequence = 0;
    const LargeKeys* large = nullptr;
    std::vector<ChunkSpan> chunks;
    uint64_t end_offset = 0;  // file offset past its last chunk
    ChunkTally tally;
    std::vector<std::pair<StringId, std::string_view>> strings;  // definitions, in file order
    std::vector<LocalKey> keys;                                  // in first-seen order
    std::vector<KeyValues> values;                               // per local key
    SlotTable api_slot, kernel_slot;
    uint32_t memcpy_slot[16] = {};
    uint32_t memset_slot = 0;
    uint64_t records = 0, api_calls = 0, hidden_driver_calls = 0;
    Timestamp first = 0, last = 0;
    std::map<uint32_t, DeviceWork> gpu_work;
    std::vector<CallStream> apis;  // key = local slot
    std::unordered_map<uint64_t, uint32_t> api_thread;
    uint32_t last_thread = UINT32_MAX;
    OpStream gpus;  // key = local slot
    uint32_t max_correlation = 0;  // of the calls and ops kept
    std::vector<uint32_t> graph_node_corrs;
    uint64_t nvtx_events = 0;
    std::vector<RangeLite> ranges;  // NVTX ranges, in file order (a Record is 536 bytes: copying them cost ~5 %)
    std::vector<Record> others;     // the kinds the Aggregator takes itself at fold time (names, memory, ...)
    std::exception_ptr error;

    // Room for the kept calls of the batch's first thread and for the ops, set from the batch's size: growing from
    // nothing copied every stream a few times into fresh pages (copies and page faults: ~4 % of a 10^7 summary).
    // Pages of the room that are never written cost nothing, and the fold gives the rest back (shrink()).
    size_t kept_reserve = 0;

    static uint64_t dur(Timestamp s, Timestamp e) { return e > s ? e - s : 0; }
    uint32_t slot(uint32_t& s, KeyCategory c, uint32_t id) {
        if (!s) {
            keys.push_back({c, id});
            KeyValues& v = values.emplace_back();
            if (large && large->is_large(keys.back())) {
                v.durations.force_sketch();
                v.bytes.force_sketch();
            }
            s = static_cast<uint32_t>(keys.size());
        }
        return s;
    }
    void widen(Timestamp s, Timestamp e) {
        if (!s) return;
        if (!first || s < first) first = s;
        if (e > last) last = e;
        if (s > last) last = s;
    }
    void push_duration(uint32_t k, Timestamp s, Timestamp e) {
        widen(s, e);
        values[k - 1].durations.push(dur(s, e));
    }
    void add_work(uint32_t device, Timestamp s, Timestamp e) {
        DeviceWork& w = gpu_work[device];
        ++w.ops;
        w.busy_ns += dur(s, e);
    }
    void push_gpu(uint32_t correlation, uint32_t key, uint64_t duration) {
        max_correlation = std::max(max_correlation, correlation);
        gpus.add(correlation, key, duration);
    }
    void push_call(uint64_t tid, Timestamp start, Timestamp end, uint32_t correlation, uint32_t key) {
        max_correlation = std::max(max_correlation, correlation);
        if (last_thread >= apis.size() || apis[last_thread].tid != tid) {
            auto it = api_thread.find(tid);
            if (it == api_thread.end()) {
                it = api_thread.emplace(tid, static_cast<uint32_t>(apis.size())).first;
                CallStream& c = apis.emplace_back();
                c.tid = tid;
                c.bytes.reserve(kept_reserve);
                kept_reserve = 0;  // the batch's first thread only: a trace of many threads must not reserve per thread
            }
            last_thread = it->second;
        }
        apis[last_thread].add(start, end, correlation, key);
    }
};

// The interned strings of the trace being read (bounded by what the file defines).
class TraceStrings {
public:
    void define(StringId id, std::string_view text) { map_[id].assign(text); }
    std::string_view get(StringId id) const {
        if (id == 0) return {};
        auto it = map_.find(id);
        if (it != map_.end()) return it->second;
        placeholder_ = "<string #" + std::to_string(id) + ">";
        return placeholder_;
    }
    void clear() { map_.clear(); }

private:
    std::unordered_map<StringId, std::string> map_;
    mutable std::string placeholder_;
};

struct BatchSettings {
    bool nvtx_detail = true;
    bool hide_runtime_driver_calls = true;
};

// Decodes and aggregates one batch. `define_now` (one thread only) takes string definitions as they come, for a
// filter that needs names while decoding (the kernel regex).
void aggregate_batch(BatchPart& b, const BatchSettings& s, RecordFilter* filter, TraceStrings* define_now) {
    Record r;
    if (s.nvtx_detail) {
        // About 7 bytes a kept call and 5 an op, from records of 15-20 bytes: a quarter of the batch each.
        size_t bytes = 0;
        for (const ChunkSpan& span : b.chunks) bytes += static_cast<size_t>(span.end - span.begin);
        b.kept_reserve = bytes / 4;
        b.gpus.bytes.reserve(b.kept_reserve);
    }
    for (const ChunkSpan& span : b.chunks) {
        ChunkDecoder decoder(span, b.tally);
        while (decoder.next(r)) {
            if (r.kind == RecordKind::String) {
                b.strings.emplace_back(decoder.string_id(), decoder.string_text());
                if (define_now) define_now->define(decoder.string_id(), decoder.string_text());
                continue;
            }
            if (s.hide_runtime_driver_calls && r.kind == RecordKind::ApiCall && is_runtime_internal_driver_call(r.api)) {
                ++b.hidden_driver_calls;
                continue;
            }
            if (filter && !filter->keep(r)) continue;
            ++b.records;
            switch (r.kind) {
                case RecordKind::ApiCall: {
                    ++b.api_calls;
                    uint32_t k = b.slot(b.api_slot[r.api.name], KeyCategory::Api, r.api.name);
                    b.push_duration(k, r.api.start, r.api.end);
                    if (s.nvtx_detail) b.push_call(r.api.tid, r.api.start, r.api.end, r.api.correlation, k);
                    break;
                }
                case RecordKind::Kernel: {
                    if (r.kernel.graph_id) b.graph_node_corrs.push_back(r.kernel.correlation);
                    uint32_t k = b.slot(b.kernel_slot[r.kernel.name], KeyCategory::Kernel, r.kernel.name);
                    b.push_duration(k, r.kernel.start, r.kernel.end);
                    b.add_work(r.kernel.device, r.kernel.start, r.kernel.end);
                    if (s.nvtx_detail) b.push_gpu(r.kernel.correlation, k, BatchPart::dur(r.kernel.start, r.kernel.end));
                    break;
                }
                case RecordKind::Memcpy: {
                    if (r.memcpy.graph_id) b.graph_node_corrs.push_back(r.memcpy.correlation);
                    auto idx = static_cast<uint8_t>(r.memcpy.copy_kind);
                    if (idx > 15) idx = 0;
                    uint32_t k = b.slot(b.memcpy_slot[idx], KeyCategory::Memcpy, idx);
                    b.push_duration(k, r.memcpy.start, r.memcpy.end);
                    b.add_work(r.memcpy.device, r.memcpy.start, r.memcpy.end);
                    b.values[k - 1].bytes.push(r.memcpy.bytes);
                    if (s.nvtx_detail) b.push_gpu(r.memcpy.correlation, k, BatchPart::dur(r.memcpy.start, r.memcpy.end));
                    break;
                }
                case RecordKind::Memset: {
                    if (r.memset.graph_id) b.graph_node_corrs.push_back(r.memset.correlation);
                    uint32_t k = b.slot(b.memset_slot, KeyCategory::Memset, 0);
                    b.push_duration(k, r.memset.start, r.memset.end);
                    b.add_work(r.memset.device, r.memset.start, r.memset.end);
                    b.values[k - 1].bytes.push(r.memset.bytes);
                    if (s.nvtx_detail) b.push_gpu(r.memset.correlation, k, BatchPart::dur(r.memset.start, r.memset.end));
                    break;
                }
                case RecordKind::Sync: b.widen(r.sync.start, r.sync.end); break;
                case RecordKind::Nvtx:
                    ++b.nvtx_events;
                    if (r.nvtx.type != NvtxType::Mark)
                        b.ranges.push_back({r.nvtx.start, r.nvtx.end, r.nvtx.tid, r.nvtx.name, r.nvtx.domain, r.nvtx.type});
                    b.widen(r.nvtx.start, r.nvtx.end);
                    break;
                case RecordKind::GraphLaunch:
                case RecordKind::Memory:
                case RecordKind::MemoryPool:
                case RecordKind::Device:
                case RecordKind::Thread:
                case RecordKind::Dropped:
                case RecordKind::Status:
                case RecordKind::End:
                case RecordKind::Role:
                case RecordKind::Exec: b.others.push_back(r); break;
                default: break;
            }
        }
    }
}

class Aggregator {
public:
    Aggregator(Aggregate& out, const AggregateOptions& opt) : out_(out), opt_(opt) {}

    void begin(const StreamContext& ctx) {
        ctx_ = ctx;
        api_key_ = {};
        kernel_key_ = {};
        strings_.clear();
        large_keys_ = std::make_unique<LargeKeys>();
        tally_ = ChunkTally();
        hidden_driver_calls_ = 0;
        std::fill(std::begin(memcpy_key_), std::end(memcpy_key_), 0);
        memset_key_ = 0;
        release_calls();
        ranges_.clear();
        graph_launches_.clear();
        graph_node_corrs_.clear();
        memory_.clear();
        memory_pools_.clear();
        device_work_ = nullptr;
        ProcessInfo p;
        p.path = ctx.reader->path();
        p.header = ctx.reader->header();
        out_.processes.push_back(std::move(p));
        first_ = last_ = 0;
    }

    // Folds a batch in: batches come in file order, so keys, per-thread calls and GPU ops end up in the order a
    // single pass would give them.
    void fold(BatchPart& b) {
        if (b.error) std::rethrow_exception(b.error);
        ProcessInfo& p = out_.processes.back();
        for (const auto& [id, text] : b.strings) strings_.define(id, text);
        std::vector<uint32_t> global(b.keys.size());
        for (size_t i = 0; i < b.keys.size(); ++i) {
            const LocalKey& lk = b.keys[i];
            uint32_t k = 0;
            switch (lk.category) {
                case KeyCategory::Api: k = key_for(api_key_, lk.id, KeyCategory::Api); break;
                case KeyCategory::Kernel: k = key_for(kernel_key_, lk.id, KeyCategory::Kernel); break;
                case KeyCategory::Memcpy: {
                    uint32_t& slot = memcpy_key_[lk.id];
                    auto kind = static_cast<MemcpyKind>(lk.id);
                    if (!slot) slot = memop_key(memop_row_name(kind), memop_nsys_name(kind), KeyCategory::Memcpy);
                    k = slot;
                    break;
                }
                default:
                    if (!memset_key_) memset_key_ = memop_key("[CUDA memset]", "[CUDA memset]", KeyCategory::Memset);
                    k = memset_key_;
                    break;
            }
            global[i] = k;
            values_[k - 1].durations.merge(std::move(b.values[i].durations));
            values_[k - 1].bytes.merge(std::move(b.values[i].bytes));
            if (!values_[k - 1].durations.exact()) large_keys_->mark(lk);
        }
        p.records += b.records;
        p.api_calls += b.api_calls;
        hidden_driver_calls_ += b.hidden_driver_calls;
        widen(b.first, b.last);
        for (const auto& [device, w] : b.gpu_work) {
            DeviceWork& dst = p.gpu_work[device];
            dst.ops += w.ops;
            dst.busy_ns += w.busy_ns;
        }
        if (b.gpus.count || !b.apis.empty()) {
            // Kept as they are (moved, not copied): the NVTX block reads them when the trace ends.
            KeptBatch& k = kept_.emplace_back();
            for (CallStream& c : b.apis) {
                kept_calls_ += c.count;
                c.bytes.shrink();
            }
            kept_ops_ += b.gpus.count;
            b.gpus.bytes.shrink();
            k.calls = std::move(b.apis);
            k.ops = std::move(b.gpus);
            k.keys = std::move(global);
            max_correlation_ = std::max(max_correlation_, b.max_correlation);
        }
        graph_node_corrs_.insert(b.graph_node_corrs.begin(), b.graph_node_corrs.end());
        p.nvtx_events += b.nvtx_events;
        ranges_.insert(ranges_.end(), b.ranges.begin(), b.ranges.end());
        for (const Record& r : b.others) handle_other(p, r);
        tally_.add(b.tally);
    }

    const LargeKeys* large_keys() const { return large_keys_.get(); }
    const TraceStrings& strings() const { return strings_; }
    TraceStrings& strings() { return strings_; }
    ChunkTally& tally() { return tally_; }
    uint64_t hidden_driver_calls() const { return hidden_driver_calls_; }
    void set_sweep_threads(unsigned n) { sweep_threads_ = std::max(1u, n); }

    // The records a batch leaves to the fold (BatchPart::others), in file order.
    void handle_other(ProcessInfo& p, const Record& r) {
        switch (r.kind) {
            case RecordKind::GraphLaunch:
                // GPU work only without its nodes in the trace: decided when the whole trace is read (end()).
                widen(r.graph_launch.start, r.graph_launch.end);
                graph_launches_.push_back(r.graph_launch);
                break;
            case RecordKind::Memory:
                widen(r.memory.timestamp, r.memory.timestamp);
                memory_.push_back(r.memory);
                break;
            case RecordKind::MemoryPool:
                widen(r.memory_pool.timestamp, r.memory_pool.timestamp);
                memory_pools_.push_back(r.memory_pool);
                break;
            case RecordKind::Device: {
                DeviceInfo d;
                d.pid = p.header.pid;
                d.host = host_key(p.header);
                d.device = r.device;
                d.name = std::string(strings_.get(r.device.name));
                d.uuid = r.device.uuid ? std::string(strings_.get(r.device.uuid)) : std::string();
                out_.devices.push_back(std::move(d));
                break;
            }
            case RecordKind::Thread:
                p.thread_names.push_back(std::to_string(r.thread.tid) + " " +
                                         std::string(strings_.get(r.thread.name)));
                break;
            case RecordKind::Dropped: p.dropped += r.dropped.count; break;
            case RecordKind::Status: {
                std::string line = std::string(component_name(r.status.component)) + " " +
                                   std::string(status_level_name(r.status.level)) + ": " +
                                   std::string(strings_.get(r.status.message));
                if (r.status.level != StatusLevel::Info) p.status_lines.insert(p.status_lines.begin(), line);
                else p.status_lines.push_back(line);
                break;
            }
            case RecordKind::End:
                p.complete = true;
                p.ended_by_signal = r.end.signal;
                break;
            case RecordKind::Role:
                p.role = std::string(strings_.get(r.role.variables));
                p.rank = r.role.rank;
                break;
            case RecordKind::Exec: {
                std::string path(strings_.get(r.exec.path));
                if (r.exec.image != ExecImage::Traced) p.untraced_programs.emplace_back(path, untraced_reason(r.exec.image));
                if (r.exec.spawned)
                    p.untraced_children.push_back("pid " + std::to_string(r.exec.pid) + ": " +
                                                  std::string(strings_.get(r.exec.command)) + " (" +
                                                  untraced_reason(r.exec.image) + ")");
                else if (r.exec.image == ExecImage::Traced)
                    p.ended_by_exec = "exec'd into " + path + " (traced on: same pid)";
                else
                    p.ended_by_exec = "exec'd into " + path + ", " + untraced_reason(r.exec.image);
                break;
            }
            default: break;
        }
    }

    void end(const StreamContext& ctx) {
        ProcessInfo& p = out_.processes.back();
        graph_work(p);
        account_memory(p, ctx);
        p.hidden_driver_calls = ctx.hidden_driver_calls;
        out_.hidden_driver_calls += ctx.hidden_driver_calls;
        if (first_) {
            p.first_ns = ctx.to_run_ns(first_);
            p.last_ns = ctx.to_run_ns(last_);
        }
        p.read_stats = ctx.reader->stats();
        std::string label = trace_label(p.path);
        for (const auto& w : ctx.reader->warnings()) out_.warnings.push_back(label + ": " + w);
        if (p.dropped)
            out_.warnings.push_back(label + ": " + std::to_string(p.dropped) +
                                    " records were dropped while recording; totals under-count");
        out_.records += p.records;
        out_.dropped += p.dropped;
        finish_nvtx_and_matching(p);
        release_calls();
        ranges_.clear();
        ranges_.shrink_to_fit();
    }

private:
    static uint64_t dur(Timestamp s, Timestamp e) { return e > s ? e - s : 0; }

    // The process's GPU work on a device. Map nodes stay put: the last device's entry is kept for the next op.
    void add_work(ProcessInfo& p, uint32_t device, Timestamp s, Timestamp e) {
        if (!device_work_ || device_work_id_ != device || device_work_owner_ != &p) {
            device_work_ = &p.gpu_work[device];
            device_work_id_ = device;
            device_work_owner_ = &p;
        }
        ++device_work_->ops;
        device_work_->busy_ns += dur(s, e);
    }

    // Graph launches whose nodes are not in the trace are the GPU work: one row per graph ("[CUDA graph 5]").
    void graph_work(ProcessInfo& p) {
        for (const GraphLaunch& g : graph_launches_) {
            if (g.correlation && graph_node_corrs_.count(g.correlation)) continue;
            uint32_t& slot = graph_key_[g.graph_id];
            if (!slot) {
                std::string name = graph_row_name(g.graph_id);
                slot = global_key(name, KeyCategory::Graph, name);
            }
            push_duration(slot, g.start, g.end);
            add_work(p, g.device, g.start, g.end);
            if (opt_.nvtx_detail) {
                if (kept_.empty() || !kept_.back().keys.empty()) kept_.emplace_back();  // global keys
                kept_.back().ops.add(g.correlation, slot, dur(g.start, g.end));
                ++kept_ops_;
                max_correlation_ = std::max(max_correlation_, g.correlation);
            }
        }
        graph_launches_.clear();
        graph_node_corrs_.clear();
    }

    void account_memory(ProcessInfo& p, const StreamContext& ctx) {
        p.run_offset_ns = ctx.to_run_ns(0);
        if (memory_.empty() && memory_pools_.empty()) return;
        MemoryLedger ledger;
        replay_memory(ledger, memory_, memory_pools_);
        p.memory = ledger.budgets();
        p.device_memory = ledger.device_peaks();
        memory_.clear();
        memory_.shrink_to_fit();
        memory_pools_.clear();
    }

    void release_calls() {
        kept_.clear();
        kept_calls_ = kept_ops_ = 0;
        max_correlation_ = 0;
    }

    void widen(Timestamp s, Timestamp e) {
        if (!s) return;
        if (!first_ || s < first_) first_ = s;
        if (e > last_) last_ = e;
        if (s > last_) last_ = s;
    }

    void push_duration(uint32_t key, Timestamp s, Timestamp e) {
        widen(s, e);
        values_[key - 1].durations.push(dur(s, e));
    }

    // Key index + 1 for a string id of this trace; keys are shared across traces by (category, name).
    uint32_t key_for(SlotTable& cache, StringId id, KeyCategory c) {
        uint32_t& k = cache[id];
        if (!k) k = global_key(std::string(strings_.get(id)), c, "");
        return k;
    }
    uint32_t memop_key(const std::string& name, const std::string& nsys, KeyCategory c) {
        return global_key(name, c, nsys);
    }
    uint32_t global_key(const std::string& name, KeyCategory c, const std::string& memop) {
        std::string k = std::to_string(static_cast<int>(c)) + '\x1f' + name;
        auto it = index_.find(k);
        if (it != index_.end()) return it->second;
        KeyData d;
        d.name = name;
        d.category = c;
        d.memop = memop;
        out_.keys.push_back(std::move(d));
        values_.emplace_back();
        uint32_t id = static_cast<uint32_t>(out_.keys.size());
        index_.emplace(std::move(k), id);
        return id;
    }

    void finish_nvtx_and_matching(const ProcessInfo& p) {
        std::map<std::tuple<uint64_t, std::string, std::string>, size_t> slot;
        std::unordered_map<RangeIds, uint32_t, RangeIds::Hash> row_of_ids;  // -> slot_of value + 1
        std::map<uint64_t, std::string> tnames;
        for (const auto& t : p.thread_names) {
            auto sp = t.find(' ');
            tnames[std::stoull(t.substr(0, sp))] = t.substr(sp + 1);
        }
        auto by_thread_and_start = [](const RangeLite& a, const RangeLite& b) {
            return a.tid != b.tid ? a.tid < b.tid : a.start < b.start;
        };
        // Ranges are in the file as they closed: already in this order for a single thread of unnested ranges.
        if (!std::is_sorted(ranges_.begin(), ranges_.end(), by_thread_and_start))
            std::sort(ranges_.begin(), ranges_.end(), by_thread_and_start);
        const size_t first_slot = out_.nvtx_ranges.size();
        std::vector<uint32_t> slot_of(ranges_.size(), UINT32_MAX);  // range -> its row - first_slot (finished only)
        uint64_t unfinished = 0;
        for (size_t i = 0; i < ranges_.size(); ++i) {
            const RangeLite& r = ranges_[i];
            if (r.end == 0 || r.end < r.start) {
                ++unfinished;
                continue;
            }
            // A run repeats a few names many times: the text decides the row, looked up once per string ids.
            uint32_t& memo = row_of_ids[{r.tid, r.domain, r.name}];
            if (memo) {
                out_.nvtx_ranges[first_slot + memo - 1].durations.push(r.end - r.start);
                slot_of[i] = memo - 1;
                continue;
            }
            std::string domain(r.domain ? strings_.get(r.domain) : std::string_view());
            std::string name(strings_.get(r.name));
            auto key = std::make_tuple(r.tid, domain, name);
            auto it = slot.find(key);
            if (it == slot.end()) {
                NvtxRangeSummary s;
                s.pid = p.header.pid;
                s.tid = r.tid;
                s.thread_name = tnames.count(r.tid) ? tnames[r.tid] : std::string();
                s.domain = domain;
                s.name = name;
                out_.nvtx_ranges.push_back(std::move(s));
                it = slot.emplace(key, out_.nvtx_ranges.size() - 1).first;
            }
            out_.nvtx_ranges[it->second].durations.push(r.end - r.start);
            slot_of[i] = static_cast<uint32_t>(it->second - first_slot);
            memo = slot_of[i] + 1;
        }
        // Without the detail (reports other than summary) only the NVTX rows are needed.
        if (opt_.nvtx_detail) attribute(slot_of, out_.nvtx_ranges.size() - first_slot, first_slot, p);
        // The NVTX summary rows (nvtx_sum) come from the same ranges, keyed by domain:name and style.
        std::unordered_map<RangeIds, uint32_t, RangeIds::Hash> key_of_ids;
        for (const auto& r : ranges_) {
            if (r.end == 0 || r.end < r.start) continue;
            uint32_t& memo = key_of_ids[{static_cast<uint64_t>(r.type), r.domain, r.name}];
            if (memo) {
                values_[memo - 1].durations.push(r.end - r.start);
                continue;
            }
            std::string domain(r.domain ? strings_.get(r.domain) : std::string_view());
            std::string name = domain + ":" + std::string(strings_.get(r.name));
            uint32_t k = global_key(name + '\x1e' + std::string(nvtx_type_name(r.type)), KeyCategory::Nvtx, "");
            KeyData& kd = out_.keys[k - 1];
            if (kd.nvtx_style.empty()) {
                kd.nvtx_style = std::string(nvtx_type_name(r.type));
                kd.name = name;
            }
            values_[k - 1].durations.push(r.end - r.start);
            memo = k;
        }
        if (unfinished)
            out_.warnings.push_back(trace_label(p.path) + ": " + std::to_string(unfinished) +
                                    " NVTX ranges never ended (left out of the NVTX statistics)");
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
    void attribute(const std::vector<uint32_t>& slot_of, size_t slots, size_t first_slot, const ProcessInfo& p) {
        if (kept_.empty()) return;
        std::vector<ThreadCover> covers;
        std::unordered_map<uint64_t, uint32_t> cover_of;  // tid -> index in covers
        bool too_deep = false;
        for (size_t lo = 0; lo < ranges_.size() && !too_deep;) {
            size_t hi = lo;
            while (hi < ranges_.size() && ranges_[hi].tid == ranges_[lo].tid) ++hi;
            ThreadCover c;
            if (!c.build(ranges_, lo, hi)) too_deep = true;
            else if (!c.bounds.empty()) {
                cover_of.emplace(ranges_[lo].tid, static_cast<uint32_t>(covers.size()));
                covers.push_back(std::move(c));
            }
            lo = hi;
        }
        if (too_deep) {
            covers.clear();
            cover_of.clear();
            out_.warnings.push_back(trace_label(p.path) + ": NVTX ranges overlap too deeply (more than " +
                                    std::to_string(ThreadCover::kMaxMembers) +
                                    " range-piece pairs): API calls and GPU ops are not attributed to ranges");
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
                    me.given.emplace_back(ranges_[r].end, &me.work[slot_of[r]]);
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
                else if (!covers.empty()) late.push_back(o);
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

    Aggregate& out_;
    const AggregateOptions& opt_;
    StreamContext ctx_;
    DeviceWork* device_work_ = nullptr;  // add_work's last entry
    uint32_t device_work_id_ = 0;
    const ProcessInfo* device_work_owner_ = nullptr;
    std::unordered_map<std::string, uint32_t> index_;
    SlotTable api_key_, kernel_key_;  // string id -> key, this trace
    TraceStrings strings_;
    std::unique_ptr<LargeKeys> large_keys_;  // this trace's
    ChunkTally tally_;
    uint64_t hidden_driver_calls_ = 0;
    uint32_t memcpy_key_[16] = {};
    uint32_t memset_key_ = 0;
    std::vector<KeptBatch> kept_;                          // this trace's calls and ops, in file order
    uint64_t kept_calls_ = 0, kept_ops_ = 0;
    uint32_t max_correlation_ = 0;
    std::vector<RangeLite> ranges_;                        // this trace's NVTX ranges, in file order
    std::vector<GraphLaunch> graph_launches_;              // this trace's, until end() decides what they are
    std::unordered_set<uint32_t> graph_node_corrs_;        // correlations of graph nodes (graph_id != 0)
    std::unordered_map<uint32_t, uint32_t> graph_key_;     // graph id -> key (across traces: graph ids per process
                                                           // coincide, and one row per id is what nsys shows)
    std::vector<Memory> memory_;
    std::vector<MemoryPool> memory_pools_;
    unsigned sweep_threads_ = 1;  // threads for attribute()
    Timestamp first_ = 0, last_ = 0;

public:
    std::vector<KeyValues> values_;  // per out_.keys index: every duration and size, until the stats are taken
};

}  // namespace

namespace {

unsigned default_threads() {
    if (const char* env = std::getenv("GPROF_REPORT_THREADS")) {
        long n = std::strtol(env, nullptr, 10);
        if (n >= 1 && n <= 64) return static_cast<unsigned>(n);
    }
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

// Reads one trace chunk by chunk: batches of consecutive chunks are decoded and aggregated on `threads` worker
// threads while this thread folds them in file order (at most 4 batches per thread ahead of the fold, so memory
// stays bounded). With one thread, the same batches on this thread alone: the result is the same either way.
void read_trace(TraceReader& reader, Aggregator& agg, const StreamContext& ctx, const AggregateOptions& options,
                unsigned threads, const std::function<void(uint64_t bytes, uint64_t records)>& progress) {
    BatchSettings settings;
    settings.nvtx_detail = options.nvtx_detail;
    settings.hide_runtime_driver_calls =
        !options.filter.nested_driver_calls && !(reader.header().features & kFeatureNestedDriverCalls);
    auto make_filter = [&]() -> std::unique_ptr<RecordFilter> {
        if (options.filter.empty()) return nullptr;
        const TraceStrings& strings = agg.strings();
        return std::make_unique<RecordFilter>(options.filter, [&strings](StringId id) { return strings.get(id); },
                                              ctx.clock_offset_ns, ctx.run_base_realtime_ns);
    };
    auto fill = [&reader](BatchPart& b) {
        ChunkSpan span;
        while (b.chunks.size() < kChunksPerBatch && reader.next_chunk_span(span)) {
            b.chunks.push_back(span);
            b.end_offset = span.end_offset;
        }
        return !b.chunks.empty();
    };
    uint64_t records = 0;
    auto folded = [&](const BatchPart& b) {
        records += b.tally.records;
        if (progress) progress(b.end_offset, records);
    };
    // Names are needed while decoding only by the kernel regex: then one thread, defining strings as they come.
    // A small trace is not worth the threads (unless asked for: the tests).
    if (!options.filter.kernel_regex.empty() || (!options.threads && reader.stats().file_bytes < (size_t(4) << 20)))
        threads = 1;
    agg.set_sweep_threads(threads);
    if (threads <= 1) {
        auto filter = make_filter();
        for (;;) {
            BatchPart b;
            b.large = agg.large_keys();
            if (!fill(b)) break;
            aggregate_batch(b, settings, filter.get(), &agg.strings());
            agg.fold(b);
            folded(b);
        }
        return;
    }

    std::mutex m;
    std::condition_variable cv;
    uint64_t handed_out = 0, next_fold = 0;
    bool exhausted = false, stop = false;
    std::map<uint64_t, std::unique_ptr<BatchPart>> done;
    const uint64_t window = 4 * uint64_t(threads);
    auto worker = [&] {
        std::unique_ptr<RecordFilter> filter;
        try {
            filter = make_filter();
        } catch (...) {
        }
        for (;;) {
            auto b = std::make_unique<BatchPart>();
            b->large = agg.large_keys();
            {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return exhausted || stop || handed_out < next_fold + window; });
                if (exhausted || stop) return;
                try {
                    if (!fill(*b)) {  // the walk over the file is serial: under the lock
                        exhausted = true;
                        cv.notify_all();
                        return;
                    }
                } catch (...) {
                    b->error = std::current_exception();
                    exhausted = true;
                }
                b->sequence = handed_out++;
            }
            if (!b->error) {
                try {
                    aggregate_batch(*b, settings, filter.get(), nullptr);
                } catch (...) {
                    b->error = std::current_exception();
                }
            }
            {
                std::lock_guard lock(m);
                uint64_t seq = b->sequence;
                done.emplace(seq, std::move(b));
            }
            cv.notify_all();
        }
    };
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i) pool.emplace_back(worker);
    std::exception_ptr failure;
    for (;;) {
        std::unique_ptr<BatchPart> b;
        {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return done.count(next_fold) || (exhausted && next_fold == handed_out); });
            auto it = done.find(next_fold);
            if (it == done.end()) break;  // every batch is folded
            b = std::move(it->second);
            done.erase(it);
            ++next_fold;
        }
        cv.notify_all();  // the window moved
        try {
            agg.fold(*b);
            folded(*b);
        } catch (...) {
            failure = std::current_exception();
            std::lock_guard lock(m);
            stop = true;
            break;
        }
    }
    cv.notify_all();
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace

Aggregate aggregate_run(const std::vector<std::filesystem::path>& traces, const AggregateOptions& options) {
    Aggregate out;
    Aggregator agg(out, options);
    const ProgressHook& progress = progress_hook();
    auto unreadable = [&](const std::filesystem::path& path, const std::string& msg) {
        ++out.unreadable_traces;
        out.warnings.push_back(trace_label(path) + ": " + msg);
    };
    // Open every reader first (as stream_run does): the run axis needs every header's clock.
    OpenedRun opened = open_traces(traces, options.filter, unreadable);
    Progress done;
    for (const auto& t : opened.traces) done.bytes_total += t.reader->stats().file_bytes;
    if (progress) progress(done);
    const unsigned threads = options.threads ? options.threads : default_threads();
    for (auto& t : opened.traces) {
        auto& r = t.reader;
        StreamContext ctx;
        ctx.reader = r.get();
        ctx.clock_offset_ns = t.clock_offset_ns;
        ctx.run_base_realtime_ns = opened.run_base_realtime_ns;
        agg.begin(ctx);
        done.trace = r->path();
        std::function<void(uint64_t, uint64_t)> report;
        if (progress)
            report = [&](uint64_t bytes, uint64_t records) {
                Progress now = done;
                now.bytes_done += bytes;
                now.records += records;
                progress(now);
            };
        try {
            read_trace(*r, agg, ctx, options, threads, report);
        } catch (const std::exception& e) {
            // The reader does not throw on damage; running out of memory ends this trace only.
            unreadable(r->path(), e.what());
        }
        r->finish_chunks(agg.tally());
        ctx.hidden_driver_calls = agg.hidden_driver_calls();
        agg.end(ctx);
        done.bytes_done += r->stats().file_bytes;
        done.records += r->stats().records;
        r.reset();  // unmap as soon as we are done with it
    }
    if (progress) {
        done.finished = true;
        progress(done);
    }
    bool any = false;
    for (const auto& p : out.processes) {
        if (p.first_ns == 0 && p.last_ns == 0) continue;
        if (!any || p.first_ns < out.first_ns) out.first_ns = p.first_ns;
        if (!any || p.last_ns > out.last_ns) out.last_ns = p.last_ns;
        any = true;
    }
    std::stable_sort(out.processes.begin(), out.processes.end(),
                     [](const ProcessInfo& a, const ProcessInfo& b) {
                         return process_key(a.header) < process_key(b.header);
                     });
    for (size_t i = 0; i < out.keys.size(); ++i) {
        auto& v = agg.values_[i];
        out.keys[i].time_stats = v.durations.stats();
        v.durations.release();
        out.keys[i].size_stats = v.bytes.stats();
        v.bytes.release();
    }
    return out;
}

std::vector<bool> helper_processes(const std::vector<ProcessInfo>& processes) {
    std::set<ProcessKey> traced;  // a parent is the process of that pid on the same host
    for (const auto& p : processes) traced.insert(process_key(p.header));
    std::vector<bool> helper(processes.size(), false);
    for (size_t i = 0; i < processes.size(); ++i) {
        const ProcessInfo& p = processes[i];
        ProcessKey parent = process_key(p.header);
        parent.pid = p.header.ppid;
        bool started_by_traced = p.header.ppid != p.header.pid && traced.count(parent);
        bool news = !p.complete || p.ended_by_signal || p.dropped || p.read_stats.damaged() ||
                    std::any_of(p.status_lines.begin(), p.status_lines.end(), [](const std::string& s) {
                        return s.find(" info: ") == std::string::npos;
                    });
        helper[i] = p.quiet() && started_by_traced && !news;
    }
    return helper;
}

std::string process_short_name(const ProcessInfo& p) {
    const std::string& path = p.header.argv.empty() || p.header.argv[0].empty() ? p.header.executable : p.header.argv[0];
    size_t slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return name.empty() ? "pid " + std::to_string(p.header.pid) : name;
}

}  // namespace gprof::report
