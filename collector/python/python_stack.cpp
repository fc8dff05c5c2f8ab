#include "python/python_stack.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "gprof/trace/records.h"
#include "pipeline/pipeline.h"
#include "python/layout.h"
#include "python/walk.h"

namespace gprof::collector::python {
namespace {

namespace tr = gprof::trace;
constexpr uint32_t kMaxFrames = tr::kMaxBacktraceFrames;

inline uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDull;
}

// A code location as the caches key it: the code object, its file and name objects (so that a code object freed
// and another allocated at the same address is not taken for it), and the instruction offset or the line.
struct Location {
    const void* code;
    const void* file;
    const void* name;
    int32_t where;
    bool operator==(const Location&) const = default;
    uint64_t hash() const {
        uint64_t h = mix(0, reinterpret_cast<uintptr_t>(code));
        h = mix(h, reinterpret_cast<uintptr_t>(file));
        h = mix(h, reinterpret_cast<uintptr_t>(name));
        return mix(h, static_cast<uint32_t>(where));
    }
};

// Open addressing, fixed capacity (power of two), filled to 3/4 at most; id 0 marks a free slot.
struct LocationTable {
    struct Slot {
        Location key;
        uint32_t id;
    };
    static constexpr uint32_t kCapacity = kMaxPyFrames * 2;
    std::unique_ptr<Slot[]> slots;
    uint32_t used = 0;

    bool ready() { return slots || (slots.reset(new (std::nothrow) Slot[kCapacity]()), slots != nullptr); }
    void clear() {
        if (slots) std::memset(static_cast<void*>(slots.get()), 0, sizeof(Slot) * kCapacity);
        used = 0;
    }
    // The id of key, or the free slot where it goes (*slot), or nullptr when full.
    uint32_t find(const Location& key, Slot** free_slot) {
        *free_slot = nullptr;
        for (uint64_t i = key.hash();; ++i) {
            Slot& s = slots[i & (kCapacity - 1)];
            if (s.id == 0) {
                if (used < kMaxPyFrames) *free_slot = &s;
                return 0;
            }
            if (s.key == key) return s.id;
        }
    }
    void put(Slot* slot, const Location& key, uint32_t id) {
        slot->key = key;
        slot->id = id;
        ++used;
    }
};

struct StackTable {
    struct Slot {
        uint64_t hash;
        uint32_t first;  // into ids
        uint32_t count;
        uint32_t id;
    };
    static constexpr uint32_t kCapacity = kMaxPyStacks * 2;
    std::unique_ptr<Slot[]> slots;
    std::unique_ptr<uint32_t[]> ids;
    uint32_t used = 0, ids_used = 0;

    bool ready() {
        if (!slots) slots.reset(new (std::nothrow) Slot[kCapacity]());
        if (!ids) ids.reset(new (std::nothrow) uint32_t[kMaxPyStackFrameIds]);
        return slots && ids;
    }
    void clear() {
        if (slots) std::memset(static_cast<void*>(slots.get()), 0, sizeof(Slot) * kCapacity);
        used = ids_used = 0;
    }
};

// The trace ids belong to: its pipeline. A new trace in a forked child (where the session's pipeline may keep its
// address) is caught by the fork handlers below; any other new trace is a new Pipeline object. (The writer
// thread's tid is no key: it is 0 until the thread has started, so the first calls of a trace would see another.)
struct TraceKey {
    const Pipeline* pipeline = nullptr;
    bool operator==(const TraceKey&) const = default;
};

struct State {
    std::mutex mutex;
    TraceKey owner;  // the trace these ids belong to; another one resets them
    LocationTable by_offset;          // (code, instruction offset) -> PyFrame id: the hot lookup
    LocationTable by_line;            // (code, line) -> PyFrame id: one record per line, not per instruction
    StackTable stacks;
    uint32_t next_frame = 1, next_stack = 1;
    uint32_t cut_marker = 0;          // the PyFrame saying "outer frames cut" (per trace)
    bool said_frames_full = false, said_stacks_full = false, said_unsupported = false;
    std::atomic<uint64_t> captured{0}, no_python{0}, truncated{0}, frames_full{0}, stacks_full{0};
    // Bumped whenever the ids above stop being valid (a new trace, a fork): the threads' memos are then stale.
    std::atomic<uint64_t> generation{1};

    void reset_for(const TraceKey& p) {
        generation.fetch_add(1, std::memory_order_release);
        owner = p;
        by_offset.clear();
        by_line.clear();
        stacks.clear();
        next_frame = next_stack = 1;
        cut_marker = 0;
        said_frames_full = said_stacks_full = said_unsupported = false;
    }
};

State& state() {
    static State* s = new State;  // leaked: used until the last CUDA call of the process, exit handlers included
    return *s;
}

// A fork while another thread holds the mutex would leave it locked in the child; the child's trace is new.
void before_fork() { state().mutex.lock(); }
void after_fork_parent() { state().mutex.unlock(); }
void after_fork_child() {
    state().mutex.unlock();
    state().owner = {};
    state().generation.fetch_add(1, std::memory_order_release);
    State& s = state();  // the child's trace counts its own calls
    for (auto* c : {&s.captured, &s.no_python, &s.truncated, &s.frames_full, &s.stacks_full})
        c->store(0, std::memory_order_relaxed);
}

// Per thread: the last stack it captured, as read (code, file, name, offset per frame) and its id. A training
// loop launches from the same few lines over and over; a thread whose stack is the one it had last time gets
// the id back with no hashing and no lock (measured: docs/performance.md, "Python stacks per CUDA call").
struct Memo {
    RawFrame raw[kMaxFrames];
    size_t count = 0;
    bool more = false;
    uint32_t id = 0;
    uint64_t generation = 0;
    TraceKey owner;

    bool same(const RawFrame* frames, size_t n, bool cut) const {
        if (n != count || cut != more) return false;
        for (size_t i = 0; i < n; ++i)
            if (frames[i].code != raw[i].code || frames[i].byte_offset != raw[i].byte_offset ||
                frames[i].file != raw[i].file || frames[i].name != raw[i].name)
                return false;
        return true;
    }
};
// A pointer (8 bytes of static TLS, like the NVTX streams): a 2 KiB thread_local Memo in the initial-exec block
// would make dlopen of the collector fail ("cannot allocate memory in static TLS block", seen). Freed when its
// thread ends, through a pthread key.
__attribute__((tls_model("initial-exec"))) thread_local Memo* t_memo = nullptr;
pthread_key_t g_memo_key;

void free_memo(void* memo) {
    delete static_cast<Memo*>(memo);
    t_memo = nullptr;  // a CUDA call from a later key destructor of this thread allocates a new one
}

Memo* thread_memo() {
    if (t_memo) return t_memo;
    static bool have_key = pthread_key_create(&g_memo_key, free_memo) == 0;
    if (!have_key) return nullptr;
    auto* memo = new (std::nothrow) Memo;
    if (!memo || pthread_setspecific(g_memo_key, memo) != 0) {
        delete memo;
        return nullptr;
    }
    return t_memo = memo;
}

uint32_t post_frame(Pipeline& pipeline, uint32_t id, std::string file, std::string function, uint32_t line) {
    pipeline.post([id, file = std::move(file), function = std::move(function), line](tr::TraceWriter& w) {
        tr::PyFrame f;
        f.id = id;
        f.file = w.intern(file.data(), file.size());
        f.function = w.intern(function.data(), function.size());
        f.line = line;
        w.add(f);
    });
    return id;
}

// The PyFrame id of one raw frame (the caller holds the mutex). 0 when the tables are full.
uint32_t frame_id(State& s, const Interpreter& in, Pipeline& pipeline, const RawFrame& raw) {
    Location at{raw.code, raw.file, raw.name, raw.byte_offset};
    LocationTable::Slot* offset_slot;
    if (uint32_t id = s.by_offset.find(at, &offset_slot)) return id;
    int line = in.addr2line(const_cast<void*>(raw.code), raw.byte_offset);
    Location on{raw.code, raw.file, raw.name, line > 0 ? line : 0};
    LocationTable::Slot* line_slot;
    uint32_t id = s.by_line.find(on, &line_slot);
    if (id == 0) {
        if (!line_slot) return 0;
        std::string file, function;
        if (!read_str(in, raw.file, file)) file = "?";
        if (!read_str(in, raw.name, function)) function = "?";
        id = post_frame(pipeline, s.next_frame++, std::move(file), std::move(function), static_cast<uint32_t>(on.where));
        s.by_line.put(line_slot, on, id);
    }
    if (offset_slot) s.by_offset.put(offset_slot, at, id);  // when full, later calls look the line up again
    return id;
}

uint32_t stack_id(State& s, Pipeline& pipeline, const uint32_t* ids, uint32_t count) {
    StackTable& t = s.stacks;
    uint64_t h = count;
    for (uint32_t i = 0; i < count; ++i) h = mix(h, ids[i]);
    for (uint64_t i = h;; ++i) {
        StackTable::Slot& slot = t.slots[i & (StackTable::kCapacity - 1)];
        if (slot.id == 0) {
            if (t.used >= kMaxPyStacks || t.ids_used + count > kMaxPyStackFrameIds) return 0;
            slot = {h, t.ids_used, count, s.next_stack++};
            std::memcpy(&t.ids[t.ids_used], ids, count * sizeof(uint32_t));
            t.ids_used += count;
            ++t.used;
            tr::PyStack record;
            record.id = slot.id;
            record.frame_count = count;
            for (uint32_t k = 0; k < count; ++k) record.frames[k] = ids[k];
            pipeline.post([record](tr::TraceWriter& w) { w.add(record); });
            return slot.id;
        }
        if (slot.hash == h && slot.count == count && std::memcmp(&t.ids[slot.first], ids, count * sizeof(uint32_t)) == 0)
            return slot.id;
    }
}

void say_once(Pipeline& pipeline, bool& said, const char* message) {
    if (said) return;
    said = true;
    pipeline.post_status(tr::Component::Collector, tr::StatusLevel::Warning, 0, message);
}

void ensure_at_fork() {
    static std::once_flag at_fork;
    std::call_once(at_fork, [] { pthread_atfork(before_fork, after_fork_parent, after_fork_child); });
}

// The tables for `pipeline`'s trace, under the held mutex; false when they cannot be allocated.
bool tables_for(State& s, Pipeline& pipeline) {
    const TraceKey key{&pipeline};
    if (s.owner != key) s.reset_for(key);
    return s.by_offset.ready() && s.by_line.ready() && s.stacks.ready();
}

uint32_t cut_marker(State& s, Pipeline& pipeline) {
    if (s.cut_marker == 0)
        s.cut_marker = post_frame(pipeline, s.next_frame++, "", "[outer Python frames cut: stack deeper than 64 frames]", 0);
    return s.cut_marker;
}

constexpr const char* kFramesFull =
    "Python stacks: the table of 16384 code locations is full; calls from new locations get no Python stack "
    "(counted)";
constexpr const char* kStacksFull =
    "Python stacks: the stack table is full (16384 stacks or 262144 frame ids); calls from new stacks get no "
    "Python stack (counted)";

}  // namespace

uint32_t intern_python_location(Pipeline& pipeline, const RawFrame& where, uint32_t line, std::string_view file,
                                std::string_view function) noexcept {
    try {
        ensure_at_fork();
        State& s = state();
        std::lock_guard lock(s.mutex);
        if (!tables_for(s, pipeline)) return 0;
        Location on{where.code, where.file, where.name, static_cast<int32_t>(line)};
        LocationTable::Slot* line_slot;
        uint32_t id = s.by_line.find(on, &line_slot);
        if (id) return id;
        if (!line_slot) {
            s.frames_full.fetch_add(1, std::memory_order_relaxed);
            say_once(pipeline, s.said_frames_full, kFramesFull);
            return 0;
        }
        id = post_frame(pipeline, s.next_frame++, std::string(file.empty() ? "?" : file),
                        std::string(function.empty() ? "?" : function), line);
        s.by_line.put(line_slot, on, id);
        return id;
    } catch (...) {
        return 0;
    }
}

uint32_t intern_python_stack(Pipeline& pipeline, const uint32_t* frame_ids, uint32_t count, bool cut) noexcept {
    if (count == 0) return 0;
    try {
        ensure_at_fork();
        State& s = state();
        std::lock_guard lock(s.mutex);
        if (!tables_for(s, pipeline)) return 0;
        uint32_t ids[kMaxFrames];
        uint32_t n = count < kMaxFrames ? count : kMaxFrames;
        if (cut && n == kMaxFrames) n = kMaxFrames - 1;
        std::copy(frame_ids, frame_ids + n, ids);
        if (cut) ids[n++] = cut_marker(s, pipeline);
        uint32_t id = stack_id(s, pipeline, ids, n);
        if (id == 0) {
            s.stacks_full.fetch_add(1, std::memory_order_relaxed);
            say_once(pipeline, s.said_stacks_full, kStacksFull);
        }
        return id;
    } catch (...) {
        return 0;
    }
}

uint32_t current_python_stack(Pipeline& pipeline) noexcept {
    const Detection& d = detect();
    const TraceKey key{&pipeline};
    if (d.state != Detection::State::Supported) [[likely]] {
        if (d.state == Detection::State::Unsupported) {
            // Said once per trace; afterwards one load and a compare (no lock on every CUDA call of such a process).
            static std::atomic<const Pipeline*> said_to{nullptr};
            if (said_to.load(std::memory_order_relaxed) != &pipeline) {
                State& s = state();
                std::lock_guard lock(s.mutex);
                if (s.owner != key) s.reset_for(key);
                say_once(pipeline, s.said_unsupported, d.why);
                said_to.store(&pipeline, std::memory_order_relaxed);
            }
        }
        return 0;
    }
    const Interpreter& in = d.interpreter;
    const void* tstate = in.initialized() ? in.this_thread_state() : nullptr;
    State& s = state();
    if (!tstate) {
        s.no_python.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    RawFrame raw[kMaxFrames];
    bool more = false;
    size_t n = walk_frames(in, tstate, raw, kMaxFrames, more);
    if (n == 0) {
        s.no_python.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    if (more) n = kMaxFrames - 1;  // the 64th frame says that outer ones were cut
    Memo* memo = thread_memo();  // null only when out of memory: then every call takes the tables' path
    uint64_t generation = s.generation.load(std::memory_order_acquire);
    if (memo && memo->id && memo->generation == generation && memo->owner == key && memo->same(raw, n, more)) {
        s.captured.fetch_add(1, std::memory_order_relaxed);
        if (more) s.truncated.fetch_add(1, std::memory_order_relaxed);
        return memo->id;
    }
    try {
        ensure_at_fork();
        std::lock_guard lock(s.mutex);
        if (!tables_for(s, pipeline)) return 0;
        uint32_t ids[kMaxFrames];
        for (size_t i = 0; i < n; ++i) {
            ids[i] = frame_id(s, in, pipeline, raw[i]);
            if (ids[i] == 0) {
                s.frames_full.fetch_add(1, std::memory_order_relaxed);
                say_once(pipeline, s.said_frames_full, kFramesFull);
                return 0;
            }
        }
        uint32_t count = static_cast<uint32_t>(n);
        if (more) {
            ids[count++] = cut_marker(s, pipeline);
            s.truncated.fetch_add(1, std::memory_order_relaxed);
        }
        uint32_t id = stack_id(s, pipeline, ids, count);
        if (id == 0) {
            s.stacks_full.fetch_add(1, std::memory_order_relaxed);
            say_once(pipeline, s.said_stacks_full, kStacksFull);
            return 0;
        }
        s.captured.fetch_add(1, std::memory_order_relaxed);
        if (memo) {
            memo->id = id;
            memo->generation = s.generation.load(std::memory_order_relaxed);  // under the mutex: this trace's
            memo->owner = key;
            memo->count = n;
            memo->more = more;
            std::copy(raw, raw + n, memo->raw);
        }
        return id;
    } catch (...) {
        return 0;  // std::string allocation failed: no stack rather than an exception into CUPTI
    }
}

PythonStackCounts python_stack_counts() noexcept {
    State& s = state();
    PythonStackCounts c;
    c.captured = s.captured.load(std::memory_order_relaxed);
    c.no_python = s.no_python.load(std::memory_order_relaxed);
    c.truncated = s.truncated.load(std::memory_order_relaxed);
    c.frames_full = s.frames_full.load(std::memory_order_relaxed);
    c.stacks_full = s.stacks_full.load(std::memory_order_relaxed);
    std::lock_guard lock(s.mutex);
    c.py_frames = s.next_frame - 1;
    c.py_stacks = s.next_stack - 1;
    return c;
}

std::string python_stack_summary() {
    if (detect().state != Detection::State::Supported) return {};
    PythonStackCounts c = python_stack_counts();
    return "Python stacks (" + std::string(python_support()) + "): " + std::to_string(c.captured) +
           " calls with a Python stack, " + std::to_string(c.no_python) + " from threads without Python frames; " +
           std::to_string(c.py_frames) + " code locations, " + std::to_string(c.py_stacks) + " distinct stacks; " +
           std::to_string(c.truncated) + " cut at 64 frames; " + std::to_string(c.frames_full + c.stacks_full) +
           " left without a stack because the tables were full";
}

const char* python_support() noexcept { return detect().why; }

}  // namespace gprof::collector::python
