// Taking a thread's stacks into one of its channels, from a signal handler or an interposed call: the native frames
// (stacks/unwind.h) and the Python frames (python/walk.h, by layout), the Python locations named by the channel's own
// ids (new ones written into the ring first). Async-signal-safe: no lock, no allocation, reads and one ring.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gprof/trace/records.h"
#include "python/layout.h"
#include "sampling/threads.h"

namespace gprof::collector::sampling {

inline constexpr uint32_t kMaxFrames = trace::kMaxBacktraceFrames;

struct Stacks {
    uint64_t native[kMaxFrames];
    uint32_t n_native = 0;
    uint32_t py[kMaxFrames];
    uint32_t n_py = 0;
    bool py_cut = false;
};

// The CPython the process runs, once the writer thread has found a supported one (python/layout.h's detect()); null
// before and without. The handler reads it; detection itself is not async-signal-safe.
void set_python(const python::Interpreter* interpreter) noexcept;
const python::Interpreter* python_interpreter() noexcept;
// Looks for CPython (not in a signal handler): once it is in the process, python::detect() decides for good and a
// supported interpreter is set. True once decided (found or not supported); false while there is no CPython yet (a
// program may load its interpreter later), so the caller asks again later.
bool find_python() noexcept;

// The calling thread's Python frames into out.py, their locations named by `channel`'s ids (new locations written
// into its ring). Nothing when Python is not known or the thread has no frames.
void take_python(Channel& channel, Stacks& out) noexcept;

// Writes the stacks after a head of `head_bytes` already filled at `head` (the caller reserved nothing yet): one ring
// entry of `type`. False when the ring is full (counted by the ring).
bool write_entry(Channel& channel, uint32_t type, const void* head, uint32_t head_bytes, const Stacks& stacks) noexcept;

}  // namespace gprof::collector::sampling
