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

// What the NVTX block needs of an API call (per thread) and of a GPU op (duration: UINT32_MAX = see long_gpu_).
struct ApiLite {
    Timestamp start, end;
    uint32_t correlation;
    uint32_t key;
};
struct ThreadApis {
    uint64_t tid = 0;
    PodBuf<ApiLite> calls;
};
struct GpuLite {
    uint32_t correlation;
    uint32_t key;
    uint32_t duration;
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
    std::vector<ThreadApis> apis;  // key = local slot
    std::unordered_map<uint64_t, uint32_t> api_thread;
    uint32_t last_thread = UINT32_MAX;
    PodBuf<GpuLite> gpus;  // key = local slot
    std::unordered_map<uint32_t, uint64_t> long_gpu;
    std::vector<uint32_t> graph_node_corrs;
    std::vector<Record> others;  // the kinds the Aggregator takes itself at fold time (names, ranges, memory, ...)
    std::exception_ptr error;

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
        if (duration >= UINT32_MAX) {
            long_gpu[static_cast<uint32_t>(gpus.size())] = duration;
            duration = UINT32_MAX;
        }
        gpus.push_back({correlation, key, static_cast<uint32_t>(duration)});
    }
    PodBuf<ApiLite>& thread_calls(uint64_t tid) {
        if (last_thread < apis.size() && apis[last_thread].tid == tid) return apis[last_thread].calls;
        auto it = api_thread.find(tid);
        if (it == api_thread.end()) {
            it = api_thread.emplace(tid, static_cast<uint32_t>(apis.size())).first;
            apis.emplace_back().tid = tid;
        }
        last_thread = it->second;
        return apis[last_thread].calls;
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
                    if (s.nvtx_detail) b.thread_calls(r.api.tid).push_back({r.api.start, r.api.end, r.api.correlation, k});
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
        if (opt_.nvtx_detail) {
            // Reserving is address space only until touched.
            gpus_.reserve(static_cast<size_t>(ctx.reader->stats().file_bytes / 24));
        }
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
        for (const ThreadApis& t : b.apis) {
            PodBuf<ApiLite>& dst = thread_calls(t.tid);
            dst.reserve(dst.size() + t.calls.size());
            for (const ApiLite& a : t.calls) dst.push_back({a.start, a.end, a.correlation, global[a.key - 1]});
        }
        const uint32_t base = static_cast<uint32_t>(gpus_.size());
        gpus_.reserve(gpus_.size() + b.gpus.size());
        for (const GpuLite& g : b.gpus) gpus_.push_back({g.correlation, global[g.key - 1], g.duration});
        for (const auto& [i, d] : b.long_gpu) long_gpu_[base + i] = d;
        graph_node_corrs_.insert(b.graph_node_corrs.begin(), b.graph_node_corrs.end());
        for (const Record& r : b.others) handle_other(p, r);
        tally_.add(b.tally);
    }

    const LargeKeys* large_keys() const { return large_keys_.get(); }
    const TraceStrings& strings() const { return strings_; }
    TraceStrings& strings() { return strings_; }
    ChunkTally& tally() { return tally_; }
    uint64_t hidden_driver_calls() const { return hidden_driver_calls_; }

    // The records a batch leaves to the fold (BatchPart::others), in file order.
    void handle_other(ProcessInfo& p, const Record& r) {
        switch (r.kind) {
            case RecordKind::Nvtx:
                ++p.nvtx_events;
                if (r.nvtx.type != NvtxType::Mark) ranges_.push_back(r.nvtx);
                widen(r.nvtx.start, r.nvtx.end);
                break;
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
            if (opt_.nvtx_detail) push_gpu(g.correlation, slot, dur(g.start, g.end));
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

    PodBuf<ApiLite>& thread_calls(uint64_t tid) {
        if (last_thread_ < apis_.size() && apis_[last_thread_].tid == tid) return apis_[last_thread_].calls;
        auto it = api_thread_.find(tid);
        if (it == api_thread_.end()) {
            it = api_thread_.emplace(tid, static_cast<uint32_t>(apis_.size())).first;
            apis_.emplace_back().tid = tid;
        }
        last_thread_ = it->second;
        return apis_[last_thread_].calls;
    }
    void push_gpu(uint32_t correlation, uint32_t key, uint64_t duration) {
        if (duration >= UINT32_MAX) {
            long_gpu_[static_cast<uint32_t>(gpus_.size())] = duration;
            duration = UINT32_MAX;
        }
        gpus_.push_back({correlation, key, static_cast<uint32_t>(duration)});
    }
    uint64_t gpu_duration(uint32_t i) const {
        return gpus_[i].duration != UINT32_MAX ? gpus_[i].duration : long_gpu_.at(i);
    }
    void release_calls() {
        apis_.clear();
        api_thread_.clear();
        last_thread_ = UINT32_MAX;
        gpus_.release();
        long_gpu_.clear();
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

    // After a trace: count GPU ops with no launching API call, and attribute work to NVTX ranges (nvprof's
    // NVTX block: API calls on the range's thread inside its interval, and the GPU ops they launched).
    void finish_nvtx_and_matching(const ProcessInfo& p) {
        // Without the detail (reports other than summary) only the NVTX rows are needed.
        const bool detail = opt_.nvtx_detail;
        // Correlation -> GPU ops, and "has an API call": dense tables, because CUPTI correlation ids are small
        // sequential integers per process (a binary search per op was a quarter of the summary's time). A trace
        // with sparse ids falls back to sorted vectors.
        uint32_t max_corr = 0;
        size_t api_count = 0;
        for (const auto& t : apis_) {
            api_count += t.calls.size();
            for (const auto& a : t.calls) max_corr = std::max(max_corr, a.correlation);
        }
        for (const auto& g : gpus_) max_corr = std::max(max_corr, g.correlation);
        const bool dense = max_corr <= 4 * (api_count + gpus_.size()) + (1u << 20);
        PodBuf<uint32_t> first_op, next_op;           // dense: head of a per-correlation list, and its links
        std::vector<std::pair<uint32_t, uint32_t>> gpu_by_corr;  // sparse: (correlation, index into gpus_)
        if (!detail) {
        } else if (dense) {
            std::vector<bool> has_api(static_cast<size_t>(max_corr) + 1, false);
            for (const auto& t : apis_)
                for (const auto& a : t.calls) has_api[a.correlation] = true;
            for (const auto& g : gpus_)
                if (!has_api[g.correlation]) ++out_.unmatched_gpu_ops;
        } else {
            std::vector<uint32_t> corrs;
            corrs.reserve(api_count);
            for (const auto& t : apis_)
                for (const auto& a : t.calls) corrs.push_back(a.correlation);
            std::sort(corrs.begin(), corrs.end());
            for (const auto& g : gpus_)
                if (!std::binary_search(corrs.begin(), corrs.end(), g.correlation)) ++out_.unmatched_gpu_ops;
        }
        if (ranges_.empty()) return;
        if (!detail) {
        } else if (dense) {
            first_op.assign(static_cast<size_t>(max_corr) + 1, UINT32_MAX);
            next_op.assign(gpus_.size(), UINT32_MAX);
            for (uint32_t i = static_cast<uint32_t>(gpus_.size()); i-- > 0;) {
                next_op[i] = first_op[gpus_[i].correlation];
                first_op[gpus_[i].correlation] = i;
            }
        } else {
            gpu_by_corr.reserve(gpus_.size());
            for (uint32_t i = 0; i < gpus_.size(); ++i) gpu_by_corr.emplace_back(gpus_[i].correlation, i);
            std::sort(gpu_by_corr.begin(), gpu_by_corr.end());
        }
        // One thread's calls usually arrive in order already: check in O(n) before paying for a sort.
        auto by_start = [](const ApiLite& a, const ApiLite& b) { return a.start < b.start; };
        for (auto& t : apis_)
            if (!std::is_sorted(t.calls.begin(), t.calls.end(), by_start))
                std::sort(t.calls.begin(), t.calls.end(), by_start);
        std::map<std::tuple<uint64_t, std::string, std::string>, size_t> slot;
        std::map<uint64_t, std::string> tnames;
        for (const auto& t : p.thread_names) {
            auto sp = t.find(' ');
            tnames[std::stoull(t.substr(0, sp))] = t.substr(sp + 1);
        }
        std::sort(ranges_.begin(), ranges_.end(), [](const Nvtx& a, const Nvtx& b) {
            return a.tid != b.tid ? a.tid < b.tid : a.start < b.start;
        });
        uint64_t unfinished = 0;
        for (const auto& r : ranges_) {
            if (r.end == 0 || r.end < r.start) {
                ++unfinished;
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
            NvtxRangeSummary& s = out_.nvtx_ranges[it->second];
            s.durations.push(r.end - r.start);
            if (work_.size() < out_.nvtx_ranges.size()) work_.resize(out_.nvtx_ranges.size());
            auto& work = work_[it->second];
            if (!detail) continue;
            auto th = api_thread_.find(r.tid);
            if (th == api_thread_.end()) continue;
            const PodBuf<ApiLite>& calls = apis_[th->second].calls;
            auto lo = std::lower_bound(calls.begin(), calls.end(), r.start,
                                       [](const ApiLite& a, Timestamp t) { return a.start < t; });
            for (auto a = lo; a != calls.end() && a->start < r.end; ++a) {
                if (a->end > r.end) continue;
                work.api[a->key].push(dur(a->start, a->end));
                if (dense) {
                    for (uint32_t g = first_op[a->correlation]; g != UINT32_MAX; g = next_op[g])
                        work.gpu[gpus_[g].key].push(gpu_duration(g));
                } else {
                    auto g = std::lower_bound(gpu_by_corr.begin(), gpu_by_corr.end(), std::make_pair(a->correlation, 0u));
                    for (; g != gpu_by_corr.end() && g->first == a->correlation; ++g)
                        work.gpu[gpus_[g->second].key].push(gpu_duration(g->second));
                }
            }
        }
        // Key ids -> names once per range, not once per call inside it.
        for (size_t i = 0; i < work_.size(); ++i) {
            auto& dst = out_.nvtx_ranges[i];
            for (auto& [k, v] : work_[i].api.map) dst.api[out_.keys[k - 1].name].merge(std::move(v));
            for (auto& [k, v] : work_[i].gpu.map) dst.gpu[out_.keys[k - 1].name].merge(std::move(v));
        }
        work_.clear();
        // The NVTX summary rows (nvtx_sum) come from the same ranges, keyed by domain:name and style.
        for (const auto& r : ranges_) {
            if (r.end == 0 || r.end < r.start) continue;
            std::string domain(r.domain ? strings_.get(r.domain) : std::string_view());
            std::string name = domain + ":" + std::string(strings_.get(r.name));
            uint32_t k = global_key(name + '\x1e' + std::string(nvtx_type_name(r.type)), KeyCategory::Nvtx, "");
            KeyData& kd = out_.keys[k - 1];
            if (kd.nvtx_style.empty()) {
                kd.nvtx_style = std::string(nvtx_type_name(r.type));
                kd.name = name;
            }
            values_[k - 1].durations.push(r.end - r.start);
        }
        if (unfinished)
            out_.warnings.push_back(trace_label(p.path) + ": " + std::to_string(unfinished) +
                                    " NVTX ranges never ended (left out of the NVTX statistics)");
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
    std::vector<ThreadApis> apis_;                         // per thread, in arrival order until sorted
    std::unordered_map<uint64_t, uint32_t> api_thread_;    // tid -> index in apis_
    uint32_t last_thread_ = UINT32_MAX;
    PodBuf<GpuLite> gpus_;
    std::unordered_map<uint32_t, uint64_t> long_gpu_;      // index in gpus_ -> a duration of 2^32-1 ns or more
    std::vector<Nvtx> ranges_;
    std::vector<GraphLaunch> graph_launches_;              // this trace's, until end() decides what they are
    std::unordered_set<uint32_t> graph_node_corrs_;        // correlations of graph nodes (graph_id != 0)
    std::unordered_map<uint32_t, uint32_t> graph_key_;     // graph id -> key (across traces: graph ids per process
                                                           // coincide, and one row per id is what nsys shows)
    std::vector<Memory> memory_;
    std::vector<MemoryPool> memory_pools_;
    struct RangeWork {
        KeyedValues api, gpu;  // key id -> durations inside the range
    };
    std::vector<RangeWork> work_;  // per out_.nvtx_ranges index, for the trace being read
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
