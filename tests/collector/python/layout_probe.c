/* Prints the offsets collector/python/layout.cpp hard-codes, as the interpreter's own headers give them (offsetof
 * with Py_BUILD_CORE): built once per CPython the build finds; test_python_stacks compares. A test double, never
 * installed. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#else
#include <frameobject.h>
#endif
#define P(name, expr) printf("%s %ld\n", name, (long)(expr))
int main(void) {
    P("major", PY_MAJOR_VERSION);
    P("minor", PY_MINOR_VERSION);
#if PY_VERSION_HEX < 0x030B0000
    P("tstate_frame", offsetof(PyThreadState, frame));
    P("cframe_frame", -1);
    P("frame_previous", offsetof(PyFrameObject, f_back));
    P("frame_code", offsetof(PyFrameObject, f_code));
    P("frame_instr", offsetof(PyFrameObject, f_lasti));
    P("frame_owner", -1);
    P("owner_cstack", -1);
    P("tstate_datastack_chunk", -1);
    P("code_qualname", -1);
    P("code_bytecode", -1);
#else
#if PY_VERSION_HEX < 0x030D0000
    P("tstate_frame", offsetof(PyThreadState, cframe));
    P("cframe_frame", offsetof(_PyCFrame, current_frame));
    P("frame_code", offsetof(_PyInterpreterFrame, f_code));
    P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
    P("tstate_frame", offsetof(PyThreadState, current_frame));
    P("cframe_frame", -1);
    P("frame_code", offsetof(_PyInterpreterFrame, f_executable));
    P("frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
    P("frame_previous", offsetof(_PyInterpreterFrame, previous));
    P("tstate_datastack_chunk", offsetof(PyThreadState, datastack_chunk));
    /* what the sampler assumes of _PyStackChunk (walk.cpp): previous at 0, size at 8, the frames from 24 */
    P("chunk_previous", offsetof(_PyStackChunk, previous));
    P("chunk_size", offsetof(_PyStackChunk, size));
    P("chunk_data", offsetof(_PyStackChunk, data));
    P("owner_thread", FRAME_OWNED_BY_THREAD);
    P("owner_generator", FRAME_OWNED_BY_GENERATOR);
    P("frame_owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX >= 0x030C0000
    P("owner_cstack", FRAME_OWNED_BY_CSTACK);
#else
    P("owner_cstack", -1);
#endif
    P("code_qualname", offsetof(PyCodeObject, co_qualname));
    P("code_bytecode", offsetof(PyCodeObject, co_code_adaptive));
#endif
    P("code_filename", offsetof(PyCodeObject, co_filename));
    P("code_name", offsetof(PyCodeObject, co_name));
    P("str_length", offsetof(PyASCIIObject, length));
    P("str_state", offsetof(PyASCIIObject, state));
    P("ascii_header", sizeof(PyASCIIObject));
    P("compact_header", sizeof(PyCompactUnicodeObject));
    P("ob_type", offsetof(PyObject, ob_type));
    P("var_size", offsetof(PyVarObject, ob_size));
    {
        /* the str state bits the walk tests: kind (3 bits from bit 2), compact (bit 5), ascii (bit 6) */
        PyASCIIObject a;
        unsigned bits;
        memset(&a, 0, sizeof a);
        a.state.kind = 7;
        a.state.compact = 1;
        a.state.ascii = 1;
        memcpy(&bits, &a.state, sizeof bits);
        P("str_state_bits", bits);
    }
    return 0;
}
