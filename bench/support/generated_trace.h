// What the benches that generate their trace share: its size, and the thread and device it opens with. Bench only,
// never installed.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "gprof/trace/writer.h"

namespace gprof::bench {

// How many records a generated trace holds: GPROF_BENCH_RECORDS, or the bench's own default.
inline uint64_t bench_record_count(uint64_t default_count) {
    const char* n = std::getenv("GPROF_BENCH_RECORDS");
    return n ? std::strtoull(n, nullptr, 10) : default_count;
}

// The main thread (tid 1) and one device, "Bench GPU" with 132 SMs and `memory_bytes` of global memory (0: not
// said), as a generated bench trace opens.
inline void add_bench_gpu(trace::TraceWriter& w, uint64_t memory_bytes = 0) {
    w.add(trace::Thread{1, w.intern("main")});
    trace::Device d;
    d.name = w.intern("Bench GPU");
    d.sm_count = 132;
    d.global_memory_bytes = memory_bytes;
    w.add(d);
}

}  // namespace gprof::bench
