// Call sites (issue 18): the native stack of a CUDA API call, captured at the call's exit callback (the stack is
// intact there and the call's duration is known), cut to start at the program's call into the CUDA runtime or
// driver API, and interned: each distinct stack is written once as a Stack record, every recorded call as a
// CallSite naming it by id.
//
// Which frames are dropped: the leading run of frames that lie in the collector itself, in the loaded CUPTI (found
// by the address of one of its functions, so a CUPTI loaded from any path counts), in libcupti*, libcuda*,
// libcudart* or NVIDIA's libraries built on them (libcublas*, libcudnn*, libnccl*, ...: by file name), with the C library's frames among and just after them (the runtime's initialisation
// runs inside pthread_once, its clean-up inside exit). Found by address ranges of the loaded objects' executable segments
// (dl_iterate_phdr), never by a fixed frame count; the ranges are read again when a frame falls outside every
// known object and the loader says objects were added or removed since (dlpi_adds/dlpi_subs). A statically linked
// cudart is code of the program image itself: its frames cannot be told apart by address and are kept (the report
// drops them by symbol name).
//
// The table of distinct stacks is bounded (SessionOptions::max_stacks, 65536 by default): a call whose new stack
// finds the table full gets a CallSite with stack 0, and such calls are counted and reported (a Warning Status at
// the first and the total at the end), never dropped silently.
//
// Threads: lookups of known stacks take no lock (an open-addressing table of published ids, frames compared
// exactly); inserting a new stack takes one mutex, under which its Stack record is posted before its id is
// published, so no CallSite naming an id can reach the pipeline before the Stack record. Nothing here runs in a
// signal handler. fork: reset() in the child (fresh ids for its new trace); also on a new pipeline (exec failure).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "gprof/trace/records.h"

namespace gprof::collector {
class Pipeline;
}

namespace gprof::collector::cupti {

class CallSites {
public:
    struct Options {
        uint32_t depth = 16;           // frames kept per stack, 1..kMaxBacktraceFrames
        uint32_t max_stacks = 65536;   // distinct stacks the table holds
        // An address inside the loaded CUPTI (one of its functions): its object's frames are dropped.
        const void* cupti_address = nullptr;
    };

    // Allocates the table (slots: 2 x max_stacks rounded up to a power of two, 4 bytes each, touched lazily) and
    // reads the module ranges. Not thread-safe against capture(); call before callbacks can reach capture().
    void configure(const Options& options);
    bool configured() const { return slots_ != nullptr; }

    // On the application's thread, in an API exit callback: unwinds, cuts, interns. Returns the Stack id (posted to
    // `pipeline` the first time), or 0 when no frame of the program was found or the table could not take a new
    // stack (counted). Never throws.
    uint32_t capture(Pipeline& pipeline) noexcept;

    // Interns `frames` (already cut) as capture() does. Exposed for tests and the benchmark.
    uint32_t intern(const uint64_t* frames, uint32_t count, Pipeline& pipeline) noexcept;

    // Frames of `raw` (innermost first) before the first one in the program: how many capture() would drop. With no
    // frame of the program, the ones up to the last internal frame.
    uint32_t leading_internal_frames(const uintptr_t* raw, uint32_t count) noexcept;

    // A new trace (forked child, exec failure): ids start again at 1, every stack is written again. after_fork: the
    // child has only the forking thread, so no capture() runs concurrently, and the mutexes (perhaps held by a
    // parent thread) are made anew. Otherwise (a failed exec, the process goes on) the insert mutex is taken; a
    // lookup racing the reset on another thread may still return an id of the old trace (the window is the reset
    // itself, during a failed exec).
    void reset(bool after_fork) noexcept;

    struct Counters {
        uint64_t stacks = 0;          // distinct stacks written
        uint64_t table_full = 0;      // calls given stack 0 because the table was full
        uint64_t no_program_frame = 0;// calls whose frames were all the collector's/CUPTI's/driver's/runtime's
        uint64_t post_refused = 0;    // new stacks the pipeline's queue refused (the call got stack 0)
        uint64_t module_rescans = 0;  // times the module ranges were read again
    };
    Counters counters() const;
    uint32_t max_stacks() const { return options_.max_stacks; }

private:
    struct Range {
        // kInternal: the collector's, CUPTI's, the driver's or the runtime's; kSystem: the C/C++ runtime's (libc,
        // libpthread, ld.so, libgcc_s, libstdc++), passed over between internal frames; kProgram: anything else.
        enum Kind : int { kProgram = 0, kInternal = 1, kSystem = 2 };
        uintptr_t lo, hi;  // [lo, hi): one executable segment
        Kind kind;
    };
    struct Ranges {
        std::vector<Range> sorted;
        unsigned long long adds = 0, subs = 0;
    };
    struct Entry;

    // Range::Kind, or -1: in no known object.
    int classify(const Ranges& r, uintptr_t pc) const noexcept;
    void rescan_modules() noexcept;
    bool modules_changed(const Ranges& r) const noexcept;
    Entry* entry(uint32_t id) const noexcept;
    size_t entry_bytes() const noexcept;

    Options options_;
    std::atomic<const Ranges*> ranges_{nullptr};
    std::mutex ranges_mutex_;                       // one rescan at a time (try_lock on the app's threads)
    std::vector<std::unique_ptr<Ranges>> old_ranges_;  // kept: a reader may still hold one (bounded by dlopens)

    std::atomic<uint32_t>* slots_ = nullptr;  // open addressing by hash; 0 empty, else a Stack id
    uint32_t mask_ = 0;
    static constexpr uint32_t kEntriesPerChunk = 1024;
    std::vector<uint8_t*> chunks_;            // entries (id - 1) / kEntriesPerChunk; sized at configure()
    std::mutex insert_mutex_;
    uint32_t next_id_ = 1;                    // under insert_mutex_

    std::atomic<uint64_t> stacks_{0}, table_full_{0}, no_program_frame_{0}, post_refused_{0}, rescans_{0};
    std::atomic<bool> full_said_{false};
};

}  // namespace gprof::collector::cupti
