// libFuzzer target: any byte string handed to TraceReader either reads (with warnings) or throws TraceError.
// Anything else — a crash, a sanitizer report, another exception type — is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gprof/trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        gprof::trace::TraceReader reader("fuzz", std::vector<uint8_t>(data, data + size));
        gprof::trace::Record r;
        size_t n = 0;
        while (reader.next(r)) {
            if (r.kind == gprof::trace::RecordKind::Kernel) n += reader.string(r.kernel.name).size();
        }
        (void)n;
    } catch (const gprof::trace::TraceError&) {
    }
    return 0;
}
