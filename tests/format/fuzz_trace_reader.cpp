// libFuzzer target: any byte string handed to TraceReader either reads (with warnings) or throws TraceError.
// Anything else — a crash, a sanitizer report, another exception type — is a bug.
//
// Structure-aware (issue #15): an input that frames as a trace is changed record by record and framed again with a
// correct CRC (tests/support/hostile_trace.h), so the mutations reach the record decoder instead of stopping at the
// checksum; any other input gets libFuzzer's byte-level mutation, which keeps the framing fuzzed. The reports run on
// such inputs in tests/report/fuzz_reports.cpp (slower: this target is the one for tens of millions of inputs).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gprof/trace/reader.h"
#include "hostile_trace.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    return gprof::testing::mutate_trace_input(data, size, max_size, seed, LLVMFuzzerMutate, 8);  // 1 in 8: the framing too
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        gprof::trace::TraceReader reader("fuzz", std::vector<uint8_t>(data, data + size));
        gprof::trace::Record r;
        size_t n = 0;
        while (reader.next(r)) {
            if (r.kind == gprof::trace::RecordKind::Kernel) n += reader.string(r.kernel.name).size();
            if (r.kind == gprof::trace::RecordKind::ApiCall) n += reader.string(r.api.name).size();
            if (r.kind == gprof::trace::RecordKind::Nvtx) n += reader.string(r.nvtx.name).size();
        }
        (void)n;
    } catch (const gprof::trace::TraceError&) {
    }
    return 0;
}
