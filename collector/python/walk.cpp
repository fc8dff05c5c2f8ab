#include "python/walk.h"

#include <cstring>

namespace gprof::collector::python {
namespace {

inline bool plausible(const void* p) {
    auto a = reinterpret_cast<uintptr_t>(p);
    return a >= 4096 && a < (uintptr_t{1} << 47) && (a & 7) == 0;
}

template <class T>
inline T load(const void* base, ptrdiff_t offset) {
    T v;
    std::memcpy(&v, static_cast<const char*>(base) + offset, sizeof v);
    return v;
}

inline bool is_a(const void* object, const void* type) {
    return plausible(object) && load<const void*>(object, 8) == type;  // ob_type
}

}  // namespace

size_t walk_frames(const Interpreter& in, const void* tstate, RawFrame* out, size_t max, bool& more) noexcept {
    const Layout& l = in.layout;
    more = false;
    if (!plausible(tstate)) return 0;
    const void* frame = load<const void*>(tstate, l.tstate_frame);
    if (l.cframe_frame >= 0) frame = plausible(frame) ? load<const void*>(frame, l.cframe_frame) : nullptr;
    size_t n = 0;
    for (size_t visited = 0; plausible(frame) && visited < kMaxVisited; ++visited) {
        const void* next = load<const void*>(frame, l.frame_previous);
        bool shim = l.frame_owner >= 0 && l.owner_cstack >= 0 &&
                    load<int8_t>(frame, l.frame_owner) == static_cast<int8_t>(l.owner_cstack);
        const void* code = shim ? nullptr : load<const void*>(frame, l.frame_code);
        if (code && is_a(code, in.code_type)) {
            int64_t offset = -1;
            if (l.model == FrameModel::FrameObjects) {
                int32_t lasti = load<int32_t>(frame, l.frame_instr);
                if (lasti >= 0) offset = int64_t{lasti} * 2;
            } else {
                // Py_SIZE(code) is the bytecode's length in code units (2 bytes each).
                int64_t units = load<int64_t>(code, 16);
                auto instr = load<uintptr_t>(frame, l.frame_instr);
                auto start = reinterpret_cast<uintptr_t>(code) + static_cast<uintptr_t>(l.code_bytecode);
                // Before the first instruction (a frame being set up) there is no line yet: left out, as tracebacks do.
                if (instr >= start && static_cast<int64_t>(instr - start) < units * 2)
                    offset = static_cast<int64_t>(instr - start);
            }
            if (offset >= 0 && offset <= INT32_MAX) {
                if (n == max) {
                    more = true;
                    return n;
                }
                RawFrame& f = out[n++];
                f.code = code;
                f.file = load<const void*>(code, l.code_filename);
                f.name = load<const void*>(code, l.code_qualname >= 0 ? l.code_qualname : l.code_name);
                f.byte_offset = static_cast<int32_t>(offset);
            }
        }
        frame = next;
    }
    return n;
}

bool read_str(const Interpreter& in, const void* str, std::string& out, size_t max_bytes) {
    const Layout& l = in.layout;
    out.clear();
    if (!is_a(str, in.str_type)) return false;
    auto state = load<uint32_t>(str, l.str_state);
    bool compact = state & 0x20, ascii = state & 0x40;
    unsigned kind = (state >> 2) & 7;  // 1, 2 or 4 bytes per character
    auto length = load<int64_t>(str, l.str_length);
    if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4)) return false;
    const auto* data = static_cast<const unsigned char*>(str) + (ascii ? l.ascii_header : l.compact_header);
    for (int64_t i = 0; i < length && out.size() + 4 <= max_bytes; ++i) {
        uint32_t c = kind == 1 ? data[i] : kind == 2 ? load<uint16_t>(data, i * 2) : load<uint32_t>(data, i * 4);
        if ((c >= 0xD800 && c < 0xE000) || c >= 0x110000) c = 0xFFFD;  // a lone surrogate is no valid UTF-8
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return true;
}

}  // namespace gprof::collector::python
