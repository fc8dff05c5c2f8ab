// The CPython interpreter of this process, if any: found once, lazily, through the symbols the process exports,
// with the memory layout of the few interpreter structures the frame walk reads (per minor version).
//
// Why layouts and not the C API: PyTorch (and any extension following its pattern) releases the GIL before it
// calls into CUDA, and the C API that walks frames (PyThreadState_GetFrame, PyFrame_GetBack) needs the GIL. The
// calling thread's own frames cannot change while it is blocked in that C call, so reading them by layout, the way
// py-spy and austin read another process, gives the exact stack without the GIL and without Python code.
// The offsets were taken from each version's own headers (Include/internal/pycore_frame.h, cpython/code.h,
// cpython/unicodeobject.h); tests/collector/python/ checks them against the headers of every interpreter the
// build finds (offsetof with Py_BUILD_CORE), so a table that is wrong for an installed version fails a test.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gprof::collector::python {

enum class FrameModel : uint8_t {
    FrameObjects,       // 3.10: tstate->frame is a PyFrameObject*, chained by f_back, f_lasti in code units
    InterpreterFrames,  // 3.11-3.13: _PyInterpreterFrame chain, instruction pointer into co_code_adaptive
};

struct Layout {
    unsigned major = 0, minor = 0, micro = 0;
    FrameModel model = FrameModel::InterpreterFrames;
    // thread state -> innermost frame: *(tstate + tstate_frame), then, when cframe_frame >= 0, *(that + cframe_frame)
    // (3.11 and 3.12 reach it through tstate->cframe->current_frame).
    ptrdiff_t tstate_frame = 0;
    ptrdiff_t cframe_frame = -1;
    ptrdiff_t frame_previous = 0;  // f_back (3.10) / previous
    ptrdiff_t frame_code = 0;      // f_code / f_executable (3.13: a code object or None)
    ptrdiff_t frame_instr = 0;     // f_lasti (int, 3.10) / prev_instr (3.11, 3.12) / instr_ptr (3.13)
    ptrdiff_t frame_owner = -1;    // owner (char), 3.11+; -1: none
    int owner_cstack = -1;         // FRAME_OWNED_BY_CSTACK (3.12+: the C entry's shim frame), -1: none
    // 3.11+: tstate->datastack_chunk, the newest of the chunks (_PyStackChunk: previous at 0, size at 8, frames from
    // 24) that hold the thread's own frames. The sampler follows a thread-owned frame only inside one of them.
    ptrdiff_t tstate_datastack_chunk = -1;
    ptrdiff_t code_filename = 0;
    ptrdiff_t code_name = 0;
    ptrdiff_t code_qualname = -1;  // 3.11+
    ptrdiff_t code_bytecode = -1;  // co_code_adaptive, 3.11+
    // str objects (compact only: code objects' strings are always compact)
    ptrdiff_t str_length = 16;
    ptrdiff_t str_state = 32;
    size_t ascii_header = 0;    // sizeof(PyASCIIObject): where a compact ASCII string's bytes start
    size_t compact_header = 0;  // sizeof(PyCompactUnicodeObject): where a compact non-ASCII string's data starts
};

// The interpreter's exported entry points the walk uses (resolved with dlsym(RTLD_DEFAULT)).
struct Interpreter {
    Layout layout;
    void* (*this_thread_state)() = nullptr;         // PyGILState_GetThisThreadState: no GIL needed
    // Py_IsInitialized: false from the start of Py_FinalizeEx on, before the thread states (and the frames of
    // daemon threads still in C calls) are freed, so a CUDA call made at or after interpreter exit reads nothing.
    int (*initialized)() = nullptr;
    int (*addr2line)(void* code, int byte_offset) = nullptr;  // PyCode_Addr2Line: reads the immutable code object
    const void* code_type = nullptr;                // &PyCode_Type
    const void* str_type = nullptr;                 // &PyUnicode_Type
};

// What detect() found.
struct Detection {
    enum class State : uint8_t { NoPython, Supported, Unsupported } state = State::NoPython;
    Interpreter interpreter;
    char why[160] = {};  // "CPython 3.11.7", or why a CPython in the process is not supported
};

// The layout of CPython major.minor, or nullptr when the walk has none for it (before 3.10, after 3.13).
const Layout* layout_for(unsigned major, unsigned minor);

// Looks at the process once (the first call; thread-safe) and returns the same answer afterwards.
const Detection& detect() noexcept;

// The version the process's CPython says it is, from Py_Version (3.11+) or Py_GetVersion()'s text; false when there
// is no CPython in the process. Exposed for tests.
bool interpreter_version(unsigned& major, unsigned& minor, unsigned& micro) noexcept;

}  // namespace gprof::collector::python
