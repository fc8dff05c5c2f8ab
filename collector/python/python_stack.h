// Python call stacks for CUDA calls: the frames (file:line:function) of the thread that made the call, read inside
// the target without a Python package and without the GIL (PyTorch releases it before it launches kernels).
//
// Each distinct code location becomes one PyFrame record and each distinct stack one PyStack record (trace format
// 1.4), posted to the pipeline before the id that names them is returned, so a CallSite posted afterwards by the
// same thread always follows them in the file. The tables behind the ids are bounded; what does not fit is counted
// and said (a Status record the first time, the counts in python_stack_counts()), never silently lost.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "python/walk.h"

namespace gprof::collector {
class Pipeline;
}

namespace gprof::collector::python {

// The calling thread's Python stack, interned: returns a PyStack id, 0 when the thread runs no Python code or
// Python is not available. New PyFrame and PyStack records are posted to `pipeline` before the id is returned.
// Any thread; never throws. In a process without CPython the cost after the first call is one load and a branch.
uint32_t current_python_stack(Pipeline& pipeline) noexcept;

// For CPU samples and OS-runtime calls (sampling/): a location read earlier in a signal handler (its texts and line
// copied there, while the code object was alive), interned on the writer thread into the same tables as call sites'
// (the same PyFrame ids). `where` is the frame as read (code, file and name objects: the identity); returns the PyFrame
// id, 0 when the table is full (counted and said as for call sites).
uint32_t intern_python_location(Pipeline& pipeline, const RawFrame& where, uint32_t line, std::string_view file,
                                std::string_view function) noexcept;
// A stack of PyFrame ids (innermost first; `cut`: deeper than the record holds, the outermost frames left out):
// its PyStack id, 0 when the table is full.
uint32_t intern_python_stack(Pipeline& pipeline, const uint32_t* frame_ids, uint32_t count, bool cut) noexcept;

// Capacities of the tables (per trace).
inline constexpr uint32_t kMaxPyFrames = 1u << 14;       // distinct (code object, line) locations
inline constexpr uint32_t kMaxPyStacks = 1u << 14;       // distinct stacks
inline constexpr uint32_t kMaxPyStackFrameIds = 1u << 18;  // frame ids over all distinct stacks

// Counts of this process (a forked child starts from 0); py_frames and py_stacks: of the current trace.
struct PythonStackCounts {
    uint64_t captured = 0;          // calls that returned a stack id
    uint64_t no_python = 0;         // calls on a thread without Python frames (or no supported Python)
    uint64_t truncated = 0;         // stacks deeper than kMaxBacktraceFrames, cut (their outermost frame says so)
    uint64_t frames_full = 0;       // calls that got 0 because the location table was full
    uint64_t stacks_full = 0;       // calls that got 0 because the stack table was full
    uint32_t py_frames = 0;         // PyFrame records posted (this trace)
    uint32_t py_stacks = 0;         // PyStack records posted (this trace)
};
PythonStackCounts python_stack_counts() noexcept;

// One line for the end of a trace, "" when no CPython was read: "Python stacks (CPython 3.11.7): 1200 calls with
// a Python stack, 3 from threads without Python frames; 310 code locations, 42 distinct stacks; 2 cut at 64 frames;
// 0 left without a stack because the tables were full". Not async-signal-safe (allocates).
std::string python_stack_summary();

// "CPython 3.11.7", the reason a CPython in the process is not read, or "" when there is none.
const char* python_support() noexcept;

}  // namespace gprof::collector::python
