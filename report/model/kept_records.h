// What the NVTX block keeps of a trace until the trace ends.
//
// The ranges' own rows need no range kept: their lengths go into a Distribution per group (thread, domain, name,
// style) as the batches are decoded. What is kept of each range (RangeStream) serves only the attribution of API
// calls and GPU ops to ranges, and only for threads that made calls.
//
// A range's record is written when the range closes, after everything inside it: an API call or a GPU op can only
// be given to its ranges once the whole trace is read. What is kept until then is small: per batch, the API calls
// of each thread and the GPU ops as varint streams (deltas of start and correlation, length, key: about 7 bytes a
// call and 5 an op instead of the 24 and 12 of a struct), moved into the Aggregator at fold time without copying.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gprof/trace/records.h"
#include "gprof/trace/varint.h"
#include "model/distribution.h"
#include "model/pod_buffer.h"

namespace gprof::report::aggregation {

using namespace gprof::trace;

// The trace format's own varints (gprof/trace/varint.h): put() to write, take() to read back what put() wrote.
using varint::put;
using varint::take;
using varint::unzigzag;
using varint::zigzag;

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
        uint8_t* q = put(p, zigzag(static_cast<int64_t>(start - last_start)));
        q = put(q, zigzag(static_cast<int64_t>(end - start)));
        q = put(q, zigzag(static_cast<int32_t>(correlation - last_correlation)));
        q = put(q, key);
        bytes.added(static_cast<size_t>(q - p));
        last_start = start;
        last_correlation = correlation;
        ++count;
    }
    template <class F> void for_each(F&& f) const {
        const uint8_t* p = bytes.begin();
        KeptCall c;
        for (uint64_t i = 0; i < count; ++i) {
            c.start += static_cast<uint64_t>(unzigzag(take(p)));
            c.end = c.start + static_cast<uint64_t>(unzigzag(take(p)));
            c.correlation += static_cast<uint32_t>(unzigzag(take(p)));
            c.key = static_cast<uint32_t>(take(p));
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
        uint8_t* q = put(p, zigzag(static_cast<int32_t>(correlation - last_correlation)));
        q = put(q, key);
        q = put(q, duration);
        bytes.added(static_cast<size_t>(q - p));
        last_correlation = correlation;
        ++count;
    }
    template <class F> void for_each(F&& f) const {
        const uint8_t* p = bytes.begin();
        KeptOp o;
        for (uint64_t i = 0; i < count; ++i) {
            o.correlation += static_cast<uint32_t>(unzigzag(take(p)));
            o.key = static_cast<uint32_t>(take(p));
            o.duration = take(p);
            f(o);
        }
    }
};


// What names a finished NVTX range's rows: its thread, domain and name (nvprof's NVTX block, one row per thread)
// and its style (nsys's nvtx_sum, one row per style, domain and name). String ids of the trace being read.
struct RangeGroupKey {
    uint64_t tid = 0;
    StringId domain = 0, name = 0;
    NvtxType type = NvtxType::PushPop;
    bool operator==(const RangeGroupKey&) const = default;
};

// The finished ranges of one group: their lengths, and where the group first appears in (start, file position)
// order on its thread, which orders the nvtx_sum keys as a sort of the ranges by (thread, start) did.
struct RangeGroup {
    RangeGroupKey key;
    Distribution durations;
    Timestamp first_start = UINT64_MAX;
    uint64_t first_position = UINT64_MAX;  // (batch sequence << 32) + range index in the batch: file order

    void add_first(Timestamp start, uint64_t position) {
        if (start < first_start || (start == first_start && position < first_position)) {
            first_start = start;
            first_position = position;
        }
    }
};

// Range groups by key (an open-addressing table of indices into `groups`). A run repeats a handful of names on a
// few threads: a batch of an NVTX-heavy trace (60 000 ranges) has tens of groups, so each range costs one probe
// and one push, and nothing per range outlives the batch but its place in a RangeStream.
class RangeGroups {
public:
    std::vector<RangeGroup> groups;

    uint32_t index(const RangeGroupKey& k) {
        if (2 * (groups.size() + 1) > table_.size()) rehash(std::max<size_t>(64, 2 * table_.size()));
        const size_t mask = table_.size() - 1;
        for (size_t i = hash(k) & mask;; i = (i + 1) & mask) {
            uint32_t g = table_[i];
            if (!g) {
                groups.emplace_back().key = k;
                table_[i] = static_cast<uint32_t>(groups.size());
                return static_cast<uint32_t>(groups.size() - 1);
            }
            if (groups[g - 1].key == k) return g - 1;
        }
    }
    void clear() {
        groups.clear();
        table_.clear();
    }

private:
    static size_t hash(const RangeGroupKey& k) {
        uint64_t h = (k.tid * 0x9e3779b97f4a7c15ull) ^ (uint64_t(k.name) << 32 | k.domain) ^ uint64_t(k.type) << 29;
        h ^= h >> 31;
        h *= 0xbf58476d1ce4e5b9ull;
        return static_cast<size_t>(h ^ (h >> 29));
    }
    void rehash(size_t slots) {
        table_.assign(slots, 0);
        for (size_t g = 0; g < groups.size(); ++g)
            for (size_t i = hash(groups[g].key) & (slots - 1);; i = (i + 1) & (slots - 1))
                if (!table_[i]) {
                    table_[i] = static_cast<uint32_t>(g + 1);
                    break;
                }
    }
    std::vector<uint32_t> table_;  // index + 1, 0 = empty
};

// One thread's finished ranges of one batch, in file order (as they closed), for the attribution of calls to ranges
// at the end of the trace: start (a delta from the previous one), length and group (a local index), about 5 bytes
// a range where the record is ~17 and a struct 24-40.
struct RangeStream {
    uint64_t tid = 0;
    uint64_t count = 0;
    Timestamp last_start = 0;
    PodBuf<uint8_t> bytes;

    void add(Timestamp start, Timestamp end, uint32_t group) {
        uint8_t* p = bytes.room(3 * 10);
        uint8_t* q = put(p, zigzag(static_cast<int64_t>(start - last_start)));
        q = put(q, end - start);
        q = put(q, group);
        bytes.added(static_cast<size_t>(q - p));
        last_start = start;
        ++count;
    }
    // f(start, end, group)
    template <class F> void for_each(F&& f) const {
        const uint8_t* p = bytes.begin();
        Timestamp start = 0;
        for (uint64_t i = 0; i < count; ++i) {
            start += static_cast<uint64_t>(unzigzag(take(p)));
            Timestamp end = start + take(p);
            f(start, end, static_cast<uint32_t>(take(p)));
        }
    }
};

// A batch's calls, ops and ranges, kept until the end of the trace; `keys` turns its local slots into global keys
// (empty: the streams hold global keys already), `groups` its local range groups into the trace's.
struct KeptBatch {
    std::vector<CallStream> calls;
    OpStream ops;
    std::vector<RangeStream> ranges;
    std::vector<uint32_t> keys;
    std::vector<uint32_t> groups;
    uint32_t key(uint32_t k) const { return keys.empty() ? k : keys[k - 1]; }
};

}  // namespace gprof::report::aggregation
