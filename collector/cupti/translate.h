// Turns completed CUPTI activity buffers into trace records (writer thread only).
//
// One build reads CUPTI 12.4 to 12.9 and 13.x. CUPTI fills only its newest struct of each kind, so a record's layout
// follows the loaded library: the translator reads each record by the size the library itself steps over
// (CuptiApi::record_sizes), through the oldest struct of its kind a supported release writes (Kernel9, Memcpy5,
// Synchronization, Memory3, MemoryPool2, ...), whose every field read sits at the same offset in the newer ones
// (static_asserts in translate.cpp, checked against the 13.0 headers; the real 12.4 and 12.9 libraries agree:
// tests/collector/test_cupti12_real.cpp). A field only newer structs have (Kernel10's isDeviceLaunched, MemoryPool3's
// isManagedPool) is read only when the record holds it, else it stays 0 and fields_unknown() (loader.h) says so -- never read
// from the next record. A newer 13.x struct (Kernel11 in 13.1, Kernel12 in 13.3) only appends fields, ignored.
//
// Timestamps are copied untouched, except that a 0 (CUPTI's "unknown", when its device buffers run short)
// always stays 0, and an optional offset moves CUPTI's own clock onto the trace clock when CUPTI would not
// take our timestamp callback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cupti_loader/loader.h"
#include "gprof/trace/writer.h"

namespace gprof::collector::cupti {

struct TranslateStats {
    uint64_t buffers = 0;
    uint64_t records = 0;         // trace records written
    uint64_t skipped = 0;         // CUPTI records of kinds we do not translate
    uint64_t malformed = 0;       // the walk stopped early on a bad record (rest of that buffer lost)
    uint64_t own_calls = 0;       // API records of the collector's own thread, left out
    uint64_t filtered = 0;        // API records of calls the collector filters where CUPTI could not (drop_api_call)
    uint64_t unreadable = 0;      // records of a kind whose size the loaded CUPTI did not say, or too small: skipped
};

// Caches names (interned ids) per writer: API names per callback id, kernel names per CUPTI name pointer.
class Translator {
public:
    explicit Translator(const CuptiApi* api = nullptr) : api_(api) {}

    void set_api(const CuptiApi* api) { api_ = api; }
    // The API calls of this callback id are left out of the trace: the filters of cuptiActivityEnableDriverApi/
    // RuntimeApi, applied here when the loaded CUPTI lacks them (12.4). Before translation starts.
    void drop_api_call(CUpti_CallbackDomain domain, uint32_t cbid);

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
    std::vector<bool> dropped_[2];  // by cbid: [0] runtime, [1] driver (drop_api_call)
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
