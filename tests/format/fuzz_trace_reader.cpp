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

#include <cstring>
#include <random>

#include "gprof/trace/reader.h"
#include "hostile_trace.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
    auto raw = gprof::testing::RawTrace::parse(data, size);
    if (!raw || (seed & 7) == 0) return LLVMFuzzerMutate(data, size, max_size);  // 1 in 8: the framing too
    std::mt19937_64 rng(seed);
    int changes = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < changes; ++i) gprof::testing::mutate_trace(*raw, rng);
    std::vector<uint8_t> out = raw->serialize();
    if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
    std::memcpy(data, out.data(), out.size());
    return out.size();
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
