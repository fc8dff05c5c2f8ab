// Turns completed CUPTI activity buffers into trace records (writer thread only).
//
// Record layouts are those of the CUDA 13.0 headers (CUPTI_API_VERSION 130001): CUpti_ActivityAPI,
// CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemset4,
// CUpti_ActivitySynchronization2, CUpti_ActivityMemory4, CUpti_ActivityMemoryPool3, CUpti_ActivityOverhead3,
// CUpti_ActivityExternalCorrelation, CUpti_ActivityGraphTrace2 and CUpti_ActivityDevice5. A newer CUDA 13
// libcupti may deliver newer versions of these (Kernel11 in 13.1, Kernel12 in 13.3); those only append fields,
// and cuptiActivityGetNextRecord steps over the whole record, so reading the 13.0 prefix is exact.
//
// Timestamps are copied untouched, except that a 0 (CUPTI's "unknown", when its device buffers run short)
// always stays 0, and an optional offset moves CUPTI's own clock onto the trace clock when CUPTI would not
// take our timestamp callback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cupti/loader.h"
#include "gprof/trace/writer.h"

namespace gprof::collector::cupti {

struct TranslateStats {
    uint64_t buffers = 0;
    uint64_t records = 0;         // trace records written
    uint64_t skipped = 0;         // CUPTI records of kinds we do not translate
    uint64_t malformed = 0;       // the walk stopped early on a bad record (rest of that buffer lost)
    uint64_t own_calls = 0;       // API records of the collector's own thread, left out
};

// Caches names (interned ids) per writer: API names per callback id, kernel names per CUPTI name pointer.
class Translator {
public:
    explicit Translator(const CuptiApi* api = nullptr) : api_(api) {}

    void set_api(const CuptiApi* api) { api_ = api; }
    // Added to every non-zero CUPTI timestamp (trace clock minus CUPTI clock; 0 when CUPTI uses ours).
    void set_timestamp_offset(int64_t offset_ns) { offset_ = offset_ns; }
    // The collector's own thread (the writer, which makes the device queries): its API records are left out.
    void set_own_thread(uint32_t tid) { own_tid_ = tid; }
    // Forgets every cached string id (a new writer, e.g. in a forked child). Also done automatically when a
    // different writer object is seen.
    void reset();

    // Walks buffer[0, valid_size) with cuptiActivityGetNextRecord and writes one record per activity, except the
    // API calls of the collector's own thread (set_own_thread). Returns the number of trace records written.
    size_t translate(trace::TraceWriter& writer, const uint8_t* buffer, size_t valid_size);

    const TranslateStats& stats() const { return stats_; }

    // The name of an API call (cached per callback id): also for calls recorded from callbacks (api_calls.h).
    trace::StringId api_name(trace::TraceWriter& w, CUpti_CallbackDomain domain, uint32_t cbid);

private:
    trace::StringId kernel_name(trace::TraceWriter& w, const char* name);
    trace::Timestamp ts(uint64_t t) const { return t == 0 ? 0 : t + static_cast<uint64_t>(offset_); }
    bool translate_one(trace::TraceWriter& w, const CUpti_Activity* record);

    const CuptiApi* api_;
    int64_t offset_ = 0;
    uint32_t own_tid_ = 0;  // the collector's writer thread: its API calls are the collector's, not the program's
    const trace::TraceWriter* writer_ = nullptr;
    std::vector<trace::StringId> runtime_names_;  // by cbid; 0 = not looked up yet
    std::vector<trace::StringId> driver_names_;
    // Kernel names: CUPTI shares one name pointer across all records of a kernel. A small direct-mapped
    // cache on that pointer, confirmed by comparing the text, saves hashing long mangled names per record.
    struct NameSlot {
        const char* ptr = nullptr;
        trace::StringId id = 0;
        uint32_t length = 0;
        std::vector<char> text;  // our copy: the check does not trust a pointer CUPTI may have reused
    };
    std::vector<NameSlot> kernel_names_;
    TranslateStats stats_;
};

// Text form of a CUDA device UUID: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's spelling).
void format_uuid(const uint8_t bytes[16], char out[41]);

}  // namespace gprof::collector::cupti
