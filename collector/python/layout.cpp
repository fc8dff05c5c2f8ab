#include "python/layout.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gprof::collector::python {
namespace {

// x86-64 and aarch64 (LP64), release builds with the GIL (not Py_DEBUG, not free-threaded): the builds the walk
// supports. Each row from the version's headers; the tests compare them with offsetof() of every version found.
constexpr Layout make(unsigned minor) {
    Layout l;
    l.major = 3;
    l.minor = minor;
    switch (minor) {
    case 10:  // Include/cpython/pystate.h: PyFrameObject *frame; Include/cpython/frameobject.h
        l.model = FrameModel::FrameObjects;
        l.tstate_frame = 24;
        l.frame_previous = 24;  // f_back
        l.frame_code = 32;      // f_code
        l.frame_instr = 96;     // int f_lasti (code units; -1 before the first instruction)
        l.code_filename = 104;
        l.code_name = 112;
        l.ascii_header = 48;  // PyASCIIObject still has wstr
        l.compact_header = 72;
        break;
    case 11:  // tstate->cframe->current_frame; _PyInterpreterFrame starts with f_func
        l.tstate_frame = 56;
        l.cframe_frame = 8;
        l.frame_previous = 48;
        l.frame_code = 32;
        l.frame_instr = 56;  // prev_instr: the instruction executing (a CALL while the C function runs)
        l.frame_owner = 69;
        l.tstate_datastack_chunk = 296;
        l.code_filename = 112;
        l.code_name = 120;
        l.code_qualname = 128;
        l.code_bytecode = 184;
        l.ascii_header = 48;
        l.compact_header = 72;
        break;
    case 12:  // tstate->cframe->current_frame; shim frames (owner FRAME_OWNED_BY_CSTACK) at each C entry
        l.tstate_frame = 56;
        l.cframe_frame = 0;
        l.frame_previous = 8;
        l.frame_code = 0;
        l.frame_instr = 56;
        l.frame_owner = 70;
        l.owner_cstack = 3;
        l.tstate_datastack_chunk = 232;
        l.code_filename = 112;
        l.code_name = 120;
        l.code_qualname = 128;
        l.code_bytecode = 192;
        l.ascii_header = 40;  // wstr gone (PEP 623)
        l.compact_header = 56;
        break;
    case 13:  // tstate->current_frame; f_executable (a code object, or None for shim frames); instr_ptr
        l.tstate_frame = 72;
        l.frame_previous = 8;
        l.frame_code = 0;
        l.frame_instr = 56;
        l.frame_owner = 70;
        l.owner_cstack = 3;
        l.tstate_datastack_chunk = 232;
        l.code_filename = 112;
        l.code_name = 120;
        l.code_qualname = 128;
        l.code_bytecode = 200;
        l.ascii_header = 40;
        l.compact_header = 56;
        break;
    default:
        break;
    }
    return l;
}

// constexpr: constant-initialised, so it is there before any constructor runs (the collector's may ask at load).
constexpr Layout kLayouts[] = {make(10), make(11), make(12), make(13)};

void* symbol(const char* name) { return dlsym(RTLD_DEFAULT, name); }

Detection look() noexcept {
    Detection d;
    unsigned major = 0, minor = 0, micro = 0;
    if (!interpreter_version(major, minor, micro)) return d;  // NoPython
    d.state = Detection::State::Unsupported;
    const Layout* layout = layout_for(major, minor);
    auto say = [&](const char* what) {
        std::snprintf(d.why, sizeof d.why, "CPython %u.%u.%u: %s", major, minor, micro, what);
    };
    if (!layout) {
        // Before 3.10: not implemented (3.9's frames are like 3.10's, its line table is co_lnotab; the issue asks
        // 3.10+). After 3.13: the layout changes with each minor version and 3.14's is not in this build (3.14
        // publishes it in _PyRuntime.debug_offsets, which a later version of this reader could follow).
        say(major == 3 && minor < 10 ? "no Python stacks: they are read from CPython 3.10 to 3.13, not older versions"
                                     : "no Python stacks: this build knows the frame layouts of CPython 3.10 to 3.13 "
                                       "only");
        return d;
    }
#if !defined(__x86_64__) && !defined(__aarch64__)
    say("Python stacks are read on x86-64 and aarch64 only");
    return d;
#else
    // A debug interpreter (Py_REF_DEBUG, with Py_TRACE_REFS up to 3.11 a larger object header) and a free-threaded
    // one (3.13t: another object header) lay their objects out differently: refused rather than misread.
    if (symbol("_Py_NegativeRefcount")) {
        say("a debug build (Py_DEBUG) lays objects out differently: no Python stacks");
        return d;
    }
    if (auto get_version = reinterpret_cast<const char* (*)()>(symbol("Py_GetVersion"))) {
        const char* text = get_version();
        if (text && std::strstr(text, "free-threading")) {
            say("a free-threaded build lays objects out differently: no Python stacks");
            return d;
        }
    }
    Interpreter& in = d.interpreter;
    in.layout = *layout;
    in.layout.micro = micro;
    in.this_thread_state = reinterpret_cast<void* (*)()>(symbol("PyGILState_GetThisThreadState"));
    in.initialized = reinterpret_cast<int (*)()>(symbol("Py_IsInitialized"));
    in.addr2line = reinterpret_cast<int (*)(void*, int)>(symbol("PyCode_Addr2Line"));
    in.code_type = symbol("PyCode_Type");
    in.str_type = symbol("PyUnicode_Type");
    if (!in.this_thread_state || !in.initialized || !in.addr2line || !in.code_type || !in.str_type) {
        say("the interpreter does not export PyGILState_GetThisThreadState, Py_IsInitialized, PyCode_Addr2Line, "
            "PyCode_Type and PyUnicode_Type");
        return d;
    }
    d.state = Detection::State::Supported;
    std::snprintf(d.why, sizeof d.why, "CPython %u.%u.%u", major, minor, micro);
    return d;
#endif
}

}  // namespace

const Layout* layout_for(unsigned major, unsigned minor) {
    for (const Layout& l : kLayouts)
        if (l.major == major && l.minor == minor) return &l;
    return nullptr;
}

bool interpreter_version(unsigned& major, unsigned& minor, unsigned& micro) noexcept {
    // Py_Version (3.11+): PY_VERSION_HEX of the running interpreter, 0xMMmmuuRS.
    if (auto* hex = static_cast<const unsigned long*>(symbol("Py_Version"))) {
        major = static_cast<unsigned>((*hex >> 24) & 0xFF);
        minor = static_cast<unsigned>((*hex >> 16) & 0xFF);
        micro = static_cast<unsigned>((*hex >> 8) & 0xFF);
        return true;
    }
    // Before 3.11: Py_GetVersion() -> "3.10.13 (main, ...)" (a static buffer; no GIL needed).
    auto get_version = reinterpret_cast<const char* (*)()>(symbol("Py_GetVersion"));
    if (!get_version || !symbol("PyGILState_GetThisThreadState")) return false;
    const char* text = get_version();
    if (!text || std::sscanf(text, "%u.%u.%u", &major, &minor, &micro) < 2) return false;
    return true;
}

const Detection& detect() noexcept {
    static const Detection detection = look();  // thread-safe, once
    return detection;
}

}  // namespace gprof::collector::python
