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
// The stacks themselves are interned in the process's one table (stacks/stack_table.h, shared with CPU samples):
// bounded (SessionOptions::max_stacks, 65536 by default); a call whose new stack finds the table full gets a
// CallSite with stack 0, and such calls are counted and reported (a Warning Status at the first and the total at
// the end), never dropped silently. Nothing here runs in a signal handler. fork: reset() in the child; the table
// starts afresh for every new trace by itself.
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

    // Sizes the process's stack table (its first configuration wins) and reads the module ranges. Not thread-safe
    // against capture(); call before callbacks can reach capture().
    void configure(const Options& options);
    bool configured() const { return configured_; }

    // On the application's thread, in an API exit callback: unwinds, cuts, interns. Returns the Stack id (posted to
    // `pipeline` the first time), or 0 when no frame of the program was found or the table could not take a new
    // stack (counted). Never throws.
    uint32_t capture(Pipeline& pipeline) noexcept;

    // Interns `frames` (already cut) as capture() does. Exposed for tests and the benchmark.
    uint32_t intern(const uint64_t* frames, uint32_t count, Pipeline& pipeline) noexcept;

    // Frames of `raw` (innermost first) before the first one in the program: how many capture() would drop. With no
    // frame of the program, the ones up to the last internal frame.
    uint32_t leading_internal_frames(const uintptr_t* raw, uint32_t count) noexcept;

    // A new trace (forked child, exec failure): the counters start again (the stack table resets itself for a new
    // trace). after_fork: the child has only the forking thread, so the mutex (perhaps held by a parent thread) is
    // made anew.
    void reset(bool after_fork) noexcept;

    struct Counters {
        uint64_t stacks = 0;          // distinct stacks this side added to the table
        uint64_t table_full = 0;      // calls given stack 0 because the table was full
        uint64_t no_program_frame = 0;// calls whose frames were all the collector's/CUPTI's/driver's/runtime's
        uint64_t post_refused = 0;    // new stacks the pipeline's queue refused (the call got stack 0)
        uint64_t module_rescans = 0;  // times the module ranges were read again
    };
    Counters counters() const;
    uint32_t max_stacks() const;

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

    // Range::Kind, or -1: in no known object.
    int classify(const Ranges& r, uintptr_t pc) const noexcept;
    void rescan_modules() noexcept;
    bool modules_changed(const Ranges& r) const noexcept;

    Options options_;
    std::atomic<const Ranges*> ranges_{nullptr};
    std::mutex ranges_mutex_;                       // one rescan at a time (try_lock on the app's threads)
    std::vector<std::unique_ptr<Ranges>> old_ranges_;  // kept: a reader may still hold one (bounded by dlopens)

    bool configured_ = false;

    std::atomic<uint64_t> stacks_{0}, table_full_{0}, no_program_frame_{0}, post_refused_{0}, rescans_{0};
    std::atomic<bool> full_said_{false};
};

}  // namespace gprof::collector::cupti
