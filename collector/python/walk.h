// The calling thread's Python frames, read by layout (see layout.h for why) without the GIL and without calling
// into the interpreter, except PyCode_Addr2Line for a location not seen before.
//
// Safety: only the calling thread's own chain is read, while that thread is inside a C call, so the chain is the
// one the interpreter left consistent before calling out (frames cannot be popped or freed under us). Every
// pointer is checked before it is followed (non-null, aligned, a user-space address), every code object and string
// by its type pointer, instruction offsets against the code's size, and the walk stops after kMaxVisited frames
// (a cycle can not hold it). Layouts are exact per minor version and checked against the headers in the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "python/layout.h"

namespace gprof::collector::python {

// One frame as read: the code object and the byte offset of the instruction executing in it.
struct RawFrame {
    const void* code = nullptr;
    const void* file = nullptr;  // co_filename (a str), part of the code's identity in the caches
    const void* name = nullptr;  // co_qualname (3.11+) or co_name
    int32_t byte_offset = 0;
};

inline constexpr size_t kMaxVisited = 4096;

// The thread state's Python frames, innermost first, at most `max` of them; `more` is set when there are more
// frames beyond those returned. Returns the count (0: no Python frame).
size_t walk_frames(const Interpreter& in, const void* tstate, RawFrame* out, size_t max, bool& more) noexcept;

// The same walk for a signal handler on the thread itself, which may have stopped it at any instruction (CPU
// sampling): the chain may be half updated there. A frame the thread owns is followed only when it lies inside one of
// the thread's data-stack chunks (3.11+: tstate->datastack_chunk and its predecessors), so a frame popped from a chunk
// that is being freed is never read; a generator's frame lives in its generator object, alive while it runs. 3.10's
// frames are heap objects the interpreter links before it makes them current and unlinks before freeing them.
// Async-signal-safe: reads only, no call into the interpreter.
size_t walk_frames_interrupted(const Interpreter& in, const void* tstate, RawFrame* out, size_t max,
                               bool& more) noexcept;

// The text of a str object (UTF-8), at most max_bytes; false when `str` is not a compact str.
bool read_str(const Interpreter& in, const void* str, std::string& out, size_t max_bytes = 4096);

// The same into out[0..capacity) without allocating (async-signal-safe): the bytes written (a character that does not
// fit whole is left out), or SIZE_MAX when `str` is not a compact str.
size_t read_str_into(const Interpreter& in, const void* str, char* out, size_t capacity) noexcept;

}  // namespace gprof::collector::python
