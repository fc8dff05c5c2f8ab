// Records built in one expression, for the traces tests and benches write: the fields every such trace sets are the
// arguments, the rest keep the record's defaults (a caller sets more on the result where it needs them). A test
// helper: nothing here is installed.
#pragma once

#include <cstdint>

#include "gprof/trace/records.h"

namespace gprof::testing {

// A host API call on thread `tid` over [start, end], correlated with the GPU work it launched.
inline trace::ApiCall api_call(uint64_t tid, trace::Timestamp start, trace::Timestamp end, uint32_t correlation,
                               trace::StringId name) {
    return {.start = start, .end = end, .tid = tid, .correlation = correlation, .name = name};
}

// A kernel over [start, end] (stream, grid and block left at their defaults).
inline trace::Kernel kernel_op(trace::Timestamp start, trace::Timestamp end, uint32_t correlation, trace::StringId name) {
    return {.start = start, .end = end, .correlation = correlation, .name = name};
}

// A copy of `bytes` over [start, end].
inline trace::Memcpy memcpy_op(trace::Timestamp start, trace::Timestamp end, uint64_t bytes, uint32_t correlation,
                               trace::MemcpyKind kind) {
    return {.start = start, .end = end, .bytes = bytes, .correlation = correlation, .copy_kind = kind};
}

// An NVTX range opened on thread `tid` (end_tid left 0 unless the caller sets it).
inline trace::Nvtx nvtx_range(uint64_t tid, trace::Timestamp start, trace::Timestamp end, trace::StringId name) {
    return {.start = start, .end = end, .tid = tid, .name = name};
}

}  // namespace gprof::testing
