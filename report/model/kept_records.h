// What the NVTX block keeps of a trace until the trace ends.
//
// A range's record is written when the range closes, after everything inside it: an API call or a GPU op can only
// be given to its ranges once the whole trace is read. What is kept until then is small: per batch, the API calls
// of each thread and the GPU ops as varint streams (deltas of start and correlation, length, key: about 7 bytes a
// call and 5 an op instead of the 24 and 12 of a struct), moved into the Aggregator at fold time without copying.
#pragma once

#include <cstdint>
#include <vector>

#include "gprof/trace/records.h"
#include "gprof/trace/varint.h"
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

}  // namespace gprof::report::aggregation
