#include "python/walk.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
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

// The data-stack chunks of a 3.11+ thread state, read once per walk: [begin, end) of each chunk's frame area.
struct Chunks {
    static constexpr size_t kMax = 64;  // chunks grow (16 KiB doubling), so 64 hold any real recursion depth
    uintptr_t begin[kMax], end[kMax];
    size_t count = 0;
    bool contains(const void* frame, size_t frame_bytes) const {
        auto a = reinterpret_cast<uintptr_t>(frame);
        for (size_t i = 0; i < count; ++i)
            if (a >= begin[i] && a + frame_bytes <= end[i]) return true;
        return false;
    }
};

constexpr int8_t kOwnedByGenerator = 1;  // FRAME_OWNED_BY_GENERATOR, 3.11-3.13

// Whether [p, p + bytes) is mapped: mincore fails with ENOMEM for a range with an unmapped page. One system call;
// async-signal-safe. Only memory this thread alone could have freed is checked this way (the thread is stopped in
// the caller's handler), so the answer still holds when the bytes are read.
bool mapped(const void* p, size_t bytes) {
    static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    auto a = reinterpret_cast<uintptr_t>(p);
    uintptr_t first = a & ~(page - 1), last = (a + bytes - 1) & ~(page - 1);
    unsigned char vec[2];
    int saved = errno;
    bool ok = ::mincore(reinterpret_cast<void*>(first), last - first + page, vec) == 0;
    errno = saved;
    return ok;
}

size_t walk(const Interpreter& in, const void* tstate, RawFrame* out, size_t max, bool& more,
            const Chunks* chunks) noexcept {
    const Layout& l = in.layout;
    more = false;
    if (!plausible(tstate)) return 0;
    const void* frame = load<const void*>(tstate, l.tstate_frame);
    if (l.cframe_frame >= 0) frame = plausible(frame) ? load<const void*>(frame, l.cframe_frame) : nullptr;
    // The bytes of a frame the walk reads (the owner byte is the last).
    const size_t frame_bytes = static_cast<size_t>(l.frame_owner >= 0 ? l.frame_owner + 1 : l.frame_instr + 8);
    size_t n = 0;
    for (size_t visited = 0; plausible(frame) && visited < kMaxVisited; ++visited) {
        if (chunks && !chunks->contains(frame, frame_bytes)) {
            // Outside every chunk: a generator's frame (in its generator object, alive while it runs), or the
            // innermost frame just popped from a chunk the interpreter has unmapped (the thread may be stopped on
            // its way back from munmap, where a pending signal is delivered). The innermost pointer is checked
            // first; a frame an older frame named is a generator's or the chain is damaged (stop).
            if (visited == 0 && !mapped(frame, frame_bytes)) return n;
            if (load<int8_t>(frame, l.frame_owner) != kOwnedByGenerator) return n;
        }
        const void* next = load<const void*>(frame, l.frame_previous);
        bool shim = l.frame_owner >= 0 && l.owner_cstack >= 0 &&
                    load<int8_t>(frame, l.frame_owner) == static_cast<int8_t>(l.owner_cstack);
        const void* code = shim ? nullptr : load<const void*>(frame, l.frame_code);
        // The innermost frame may be being cleared: its code object released (freed, when nothing else held it: code
        // made by compile()/exec). Checked before its type is read.
        if (chunks && visited == 0 && code &&
            (!plausible(code) || !mapped(code, static_cast<size_t>(l.code_bytecode) + 8))) code = nullptr;
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

}  // namespace

size_t walk_frames(const Interpreter& in, const void* tstate, RawFrame* out, size_t max, bool& more) noexcept {
    return walk(in, tstate, out, max, more, nullptr);
}

size_t walk_frames_interrupted(const Interpreter& in, const void* tstate, RawFrame* out, size_t max,
                               bool& more) noexcept {
    const Layout& l = in.layout;
    more = false;
    if (l.model == FrameModel::FrameObjects) return walk(in, tstate, out, max, more, nullptr);
    if (l.tstate_datastack_chunk < 0 || l.frame_owner < 0 || !plausible(tstate)) return 0;
    Chunks chunks;
    const void* chunk = load<const void*>(tstate, l.tstate_datastack_chunk);
    while (plausible(chunk) && chunks.count < Chunks::kMax) {
        auto size = load<uint64_t>(chunk, 8);
        auto base = reinterpret_cast<uintptr_t>(chunk);
        if (size < 24 || size > (uint64_t{1} << 32)) break;
        chunks.begin[chunks.count] = base + 24;
        chunks.end[chunks.count] = base + size;
        ++chunks.count;
        chunk = load<const void*>(chunk, 0);
    }
    return walk(in, tstate, out, max, more, &chunks);
}

size_t read_str_into(const Interpreter& in, const void* str, char* out, size_t capacity) noexcept {
    const Layout& l = in.layout;
    if (!is_a(str, in.str_type)) return SIZE_MAX;
    auto state = load<uint32_t>(str, l.str_state);
    bool compact = state & 0x20, ascii = state & 0x40;
    unsigned kind = (state >> 2) & 7;  // 1, 2 or 4 bytes per character
    auto length = load<int64_t>(str, l.str_length);
    if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4)) return SIZE_MAX;
    const auto* data = static_cast<const unsigned char*>(str) + (ascii ? l.ascii_header : l.compact_header);
    size_t n = 0;
    for (int64_t i = 0; i < length; ++i) {
        uint32_t c = kind == 1 ? data[i] : kind == 2 ? load<uint16_t>(data, i * 2) : load<uint32_t>(data, i * 4);
        if ((c >= 0xD800 && c < 0xE000) || c >= 0x110000) c = 0xFFFD;  // a lone surrogate is no valid UTF-8
        unsigned char bytes[4];
        size_t k = 0;
        if (c < 0x80) {
            bytes[k++] = static_cast<unsigned char>(c);
        } else if (c < 0x800) {
            bytes[k++] = static_cast<unsigned char>(0xC0 | (c >> 6));
            bytes[k++] = static_cast<unsigned char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            bytes[k++] = static_cast<unsigned char>(0xE0 | (c >> 12));
            bytes[k++] = static_cast<unsigned char>(0x80 | ((c >> 6) & 0x3F));
            bytes[k++] = static_cast<unsigned char>(0x80 | (c & 0x3F));
        } else {
            bytes[k++] = static_cast<unsigned char>(0xF0 | (c >> 18));
            bytes[k++] = static_cast<unsigned char>(0x80 | ((c >> 12) & 0x3F));
            bytes[k++] = static_cast<unsigned char>(0x80 | ((c >> 6) & 0x3F));
            bytes[k++] = static_cast<unsigned char>(0x80 | (c & 0x3F));
        }
        if (n + k > capacity) break;
        for (size_t j = 0; j < k; ++j) out[n++] = static_cast<char>(bytes[j]);
    }
    return n;
}

bool read_str(const Interpreter& in, const void* str, std::string& out, size_t max_bytes) {
    out.clear();
    // The old limit: characters were added while 4 bytes more still fitted.
    out.resize(max_bytes >= 3 ? max_bytes - 3 : 0);
    size_t n = read_str_into(in, str, out.data(), out.size());
    if (n == SIZE_MAX) {
        out.clear();
        return false;
    }
    out.resize(n);
    return true;
}

}  // namespace gprof::collector::python
