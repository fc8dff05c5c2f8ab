// Writer-thread side of NVTX: reads every thread's event stream, pairs push with pop (per thread and domain)
// and start with end (across threads), resolves names, and writes trace::Nvtx records.
//
// Runs as a Pipeline periodic hook, so events reach the file within one flush period. At the final drain,
// ranges still open are written with end = 0 and counted in a Dropped record (DropSource::NvtxOverflow),
// as are pops without a push and ends without a start.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gprof/trace/records.h"
#include "gprof/trace/writer.h"
#include "nvtx/stream.h"

namespace gprof::collector {
class Pipeline;
}

namespace gprof::collector::nvtx {

class Recorder {
public:
    struct Options {
        // Records whose start lies outside [window_start, window_end) are left out: the capture window's time
        // gate (GPROF_DELAY_SEC / GPROF_DURATION_SEC). 0 = unbounded. The NVTX capture range is not decided
        // here but on the application thread (nvtx/capture.h); every NVTX record is kept, in range or not.
        trace::Timestamp window_start = 0;
        trace::Timestamp window_end = 0;
    };

    explicit Recorder(Options options) : options_(std::move(options)) {}

    // Reads all complete events of all streams and writes their records. final: close out open ranges.
    void drain(trace::TraceWriter& writer, bool final);

    // PeriodicHook adapter: ctx is a Recorder*.
    static void hook(void* ctx, trace::TraceWriter& writer, bool final);

    // Thread ids seen so far (the session writes their names).
    const std::vector<uint64_t>& new_threads() const { return new_threads_; }
    void clear_new_threads() { new_threads_.clear(); }
    // Threads that ended since the last call, with their name as they ended (ThreadStream::exit_name).
    const std::vector<std::pair<uint64_t, std::string>>& ended_threads() const { return ended_threads_; }
    void clear_ended_threads() { ended_threads_.clear(); }

    uint64_t ranges_written() const { return ranges_written_; }

private:
    struct StreamState {
        std::vector<trace::Nvtx> default_stack;  // the default domain's pushes: no map lookup per event
        std::unordered_map<uint32_t, std::vector<trace::Nvtx>> stacks;  // other domains
        uint64_t dropped_reported = 0;
        std::vector<trace::Nvtx>& stack(uint32_t domain) { return domain == 0 ? default_stack : stacks[domain]; }
        template <class Fn> void for_each_stack(Fn&& fn) {
            fn(default_stack);
            for (auto& [d, st] : stacks) fn(st);
        }
    };
    // Names seen lately, by length and first bytes: a loop pushes the same few names millions of times, and
    // this saves hashing each one into the writer's string table (measured: the largest share of the writer's
    // time per NVTX range). Confirmed by comparing the bytes, so a collision only costs a lookup.
    struct NameSlot {
        uint32_t length = 0;
        trace::StringId id = 0;
        uint64_t words[8] = {};  // the name, zero-padded to whole words (names up to 64 bytes are cached)
    };
    static constexpr size_t kNameSlots = 256;
    // `name` lies in an event (nvtx/stream.h): its bytes are padded to a multiple of 8, so 8 bytes can be read.
    trace::StringId name_id(const char* name, size_t length, trace::TraceWriter& writer);
    struct PendingEnd {
        trace::Timestamp timestamp;
        uint64_t tid;
    };

    void on_event(ThreadStream* s, StreamState& st, const uint8_t* event, trace::TraceWriter& writer);
    void write_range(trace::TraceWriter& writer, const trace::Nvtx& range);
    void pop_range(std::vector<trace::Nvtx>* stack, trace::Timestamp end, trace::TraceWriter& writer);
    trace::StringId domain_string(uint32_t domain, trace::TraceWriter& writer);
    trace::StringId registered_string(uint32_t id, trace::TraceWriter& writer);
    trace::StringId category_string(uint32_t domain, uint32_t category, trace::TraceWriter& writer);
    bool in_window(trace::Timestamp t) const;
    void say_not_recorded_at_end(trace::TraceWriter& writer);
    void retire(ThreadStream* s);  // an ended thread's finished stream: unlinked by the caller, freed here

    Options options_;
    std::unordered_map<ThreadStream*, StreamState> states_;
    std::unordered_map<uint64_t, trace::Nvtx> open_starts_;  // start/end ranges by id
    std::unordered_map<uint64_t, PendingEnd> pending_ends_;  // ends read before their start
    std::unordered_map<uint32_t, trace::StringId> domain_ids_;
    std::unordered_map<uint32_t, trace::StringId> registered_ids_;
    std::unordered_map<uint64_t, trace::StringId> category_ids_;
    uint64_t category_version_ = ~0ull;
    uint64_t overflow_ = 0;      // unmatched pops / ends, open ranges at the end
    uint64_t ranges_written_ = 0;
    uint64_t retired_after_end_ = 0;  // after_end of the streams freed so far
    uint64_t retired_threads_after_end_ = 0;
    std::vector<uint64_t> new_threads_;
    std::vector<std::pair<uint64_t, std::string>> ended_threads_;
    std::string scratch_;
    std::vector<NameSlot> name_slots_;
    const trace::TraceWriter* names_writer_ = nullptr;  // the writer the cached ids belong to
};

}  // namespace gprof::collector::nvtx
