#include "sampling/capture.h"

#include <atomic>
#include <cstring>

#include "python/walk.h"
#include "sampling/entries.h"

namespace gprof::collector::sampling {

namespace {

std::atomic<const python::Interpreter*> g_python{nullptr};

// Bytes of a location's texts kept: paths and qualified names longer than this are cut (a location keeps its id).
constexpr size_t kMaxFileBytes = 480;
constexpr size_t kMaxNameBytes = 240;

uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDull;
}

// The channel's id of a frame's location; writes the location into the ring when it is new. 0: no room.
uint32_t location_id(Channel& channel, const python::Interpreter& in, const python::RawFrame& f) {
    PyLocationCache& cache = channel.py;
    if (cache.next_id > PyLocationCache::kMaxIds) {
        // Full: start again, and say so first (the writer forgets the ids). No room for that: no Python frames.
        void* reset = channel.ring.reserve(0, kPyReset);
        if (!reset) return 0;
        channel.ring.commit();
        std::memset(static_cast<void*>(cache.entries), 0, sizeof(PyLocationCache::Entry) * PyLocationCache::kSlots);
        cache.next_id = 1;
    }
    uint64_t h = mix(mix(mix(reinterpret_cast<uintptr_t>(f.code), reinterpret_cast<uintptr_t>(f.file)),
                         reinterpret_cast<uintptr_t>(f.name)),
                     static_cast<uint32_t>(f.byte_offset));
    for (uint64_t i = h;; ++i) {
        PyLocationCache::Entry& e = cache.entries[i & (PyLocationCache::kSlots - 1)];
        if (e.id == 0) {
            // New: its line (PyCode_Addr2Line only reads the code object) and texts, read while the code is alive.
            char file[kMaxFileBytes], name[kMaxNameBytes];
            size_t file_bytes = python::read_str_into(in, f.file, file, sizeof file);
            size_t name_bytes = python::read_str_into(in, f.name, name, sizeof name);
            if (file_bytes == SIZE_MAX) file_bytes = 0;
            if (name_bytes == SIZE_MAX) name_bytes = 0;
            int line = in.addr2line(const_cast<void*>(f.code), f.byte_offset);
            auto* out = static_cast<uint8_t*>(
                channel.ring.reserve(static_cast<uint32_t>(sizeof(PyLocationEntry) + file_bytes + name_bytes), kPyLocation));
            if (!out) return 0;
            PyLocationEntry loc{};
            loc.id = cache.next_id;
            loc.line = line > 0 ? static_cast<uint32_t>(line) : 0;
            loc.code = reinterpret_cast<uintptr_t>(f.code);
            loc.file = reinterpret_cast<uintptr_t>(f.file);
            loc.name = reinterpret_cast<uintptr_t>(f.name);
            loc.offset = f.byte_offset;
            loc.file_bytes = static_cast<uint16_t>(file_bytes);
            loc.name_bytes = static_cast<uint16_t>(name_bytes);
            std::memcpy(out, &loc, sizeof loc);
            std::memcpy(out + sizeof loc, file, file_bytes);
            std::memcpy(out + sizeof loc + file_bytes, name, name_bytes);
            channel.ring.commit();
            e = PyLocationCache::Entry{f.code, f.file, f.name, f.byte_offset, cache.next_id++};
            return e.id;
        }
        if (e.code == f.code && e.offset == f.byte_offset && e.file == f.file && e.name == f.name) return e.id;
    }
}

}  // namespace

void set_python(const python::Interpreter* interpreter) noexcept {
    g_python.store(interpreter, std::memory_order_release);
}

const python::Interpreter* python_interpreter() noexcept { return g_python.load(std::memory_order_acquire); }

bool find_python() noexcept {
    unsigned major = 0, minor = 0, micro = 0;
    if (!python::interpreter_version(major, minor, micro)) return false;
    const python::Detection& d = python::detect();
    if (d.state == python::Detection::State::Supported) set_python(&d.interpreter);
    return true;
}

void take_python(Channel& channel, Stacks& out) noexcept {
    out.n_py = 0;
    out.py_cut = false;
    const python::Interpreter* in = python_interpreter();
    if (!in || !in->initialized()) return;
    const void* tstate = in->this_thread_state();
    if (!tstate) return;
    python::RawFrame raw[kMaxFrames];
    bool more = false;
    size_t n = python::walk_frames_interrupted(*in, tstate, raw, kMaxFrames, more);
    for (size_t i = 0; i < n; ++i) {
        uint32_t id = location_id(channel, *in, raw[i]);
        if (id == 0) {  // the ring is full: the frames so far, the rest counted as cut
            more = true;
            break;
        }
        out.py[out.n_py++] = id;
    }
    out.py_cut = more;
}

bool write_entry(Channel& channel, uint32_t type, const void* head, uint32_t head_bytes, const Stacks& stacks) noexcept {
    uint32_t bytes = head_bytes + stacks.n_native * 8u + stacks.n_py * 4u;
    auto* out = static_cast<uint8_t*>(channel.ring.reserve(bytes, type));
    if (!out) return false;
    std::memcpy(out, head, head_bytes);
    std::memcpy(out + head_bytes, stacks.native, stacks.n_native * 8u);
    std::memcpy(out + head_bytes + stacks.n_native * 8u, stacks.py, stacks.n_py * 4u);
    channel.ring.commit();
    return true;
}

}  // namespace gprof::collector::sampling
