#include "nvtx/handlers.h"

#include <nvtx3/nvToolsExt.h>

#include <time.h>

#include <cstring>
#include <cwchar>

#include "base/clock.h"
#include "gprof/trace/records.h"
#include "nvtx/capture.h"
#include "nvtx/names.h"
#include "nvtx/session_hooks.h"
#include "nvtx/stream.h"
#include "nvtx/utf8.h"

namespace gprof::collector::nvtx {

std::atomic<bool> g_recording{true};

namespace {

std::atomic<Ending> g_ending{Ending::None};

inline bool recording() { return g_recording.load(std::memory_order_relaxed); }

// An event that came while not recording: counted on its thread's stream when the process is ending (an inactive
// process, or one past its capture time, has nothing to say about it).
__attribute__((noinline, cold)) void not_recorded() {
    if (g_ending.load(std::memory_order_relaxed) == Ending::None) return;
    if (ThreadStream* s = existing_stream())
        s->after_end.store(s->after_end.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // Without the collector, what this thread does from here on would be cut short within microseconds, when the
    // process is gone. It waits a millisecond in each NVTX call instead, so that threads spinning in loops of ranges
    // leave the CPU to the end's last drain (without the wait, the end took many times its work: docs/performance.md
    // "Exit"). No lock is held here, so nothing waits on this thread.
    timespec pause{0, 1000000};
    ::nanosleep(&pause, nullptr);
}

inline uint32_t domain_id(nvtxDomainHandle_t d) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(d));
}
inline uint32_t depth_slot(uint32_t domain) { return domain < kMaxDomains ? domain : 0; }

std::string to_utf8(const wchar_t* w) {
    std::string s;
    if (!w) return s;
    s.resize(utf8_length(w, kMaxNameBytes));
    utf8_encode(w, reinterpret_cast<uint8_t*>(s.data()), s.size());
    return s;
}

// The message of an event: ASCII bytes, wide text (converted) or a registered string id.
struct Message {
    const char* ascii = nullptr;
    const wchar_t* wide = nullptr;
    uint32_t registered = 0;
    size_t length = 0;  // bytes to copy (UTF-8 for wide)

    void measure() {
        if (ascii) length = strnlen(ascii, kMaxNameBytes);
        else if (wide) length = utf8_length(wide, kMaxNameBytes);
    }
    void copy(uint8_t* out) const {
        if (ascii) std::memcpy(out, ascii, length);
        else if (wide) utf8_encode(wide, out, length);
    }
    CaptureMessage for_capture() const {
        CaptureMessage c;
        c.ascii = ascii;
        c.ascii_length = ascii ? length : 0;
        c.wide = wide;
        c.registered = registered;
        return c;
    }
};

Message message_of(const nvtxEventAttributes_t* a) {
    Message m;
    if (!a) return m;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: m.ascii = a->message.ascii; break;
    case NVTX_MESSAGE_TYPE_UNICODE: m.wide = a->message.unicode; break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        m.registered = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(a->message.registered));
        break;
    default: break;
    }
    m.measure();
    return m;
}

void fill_attrs(EventAttrs* out, const nvtxEventAttributes_t* a, const Message& m) {
    *out = EventAttrs{};
    if (a->colorType == NVTX_COLOR_ARGB) out->color = a->color;
    out->category = a->category;
    switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: out->payload = a->payload.ullValue; break;
    case NVTX_PAYLOAD_TYPE_INT64: out->payload = static_cast<uint64_t>(a->payload.llValue); break;
    case NVTX_PAYLOAD_TYPE_DOUBLE: std::memcpy(&out->payload, &a->payload.dValue, 8); break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: out->payload = a->payload.uiValue; break;
    case NVTX_PAYLOAD_TYPE_INT32: out->payload = static_cast<uint64_t>(static_cast<int64_t>(a->payload.iValue)); break;
    case NVTX_PAYLOAD_TYPE_FLOAT: {
        uint32_t bits;
        std::memcpy(&bits, &a->payload.fValue, 4);
        out->payload = bits;
        break;
    }
    default: break;
    }
    out->payload_type = (a->payloadType >= 1 && a->payloadType <= 6) ? static_cast<uint8_t>(a->payloadType) : 0;
    out->registered = m.registered;
}

// Appends one event. Returns false when it could not be recorded (counted as dropped).
inline bool emit(ThreadStream* s, EventType type, uint32_t domain, const nvtxEventAttributes_t* attrs,
                 const Message* msg, const uint64_t* range_id, uint64_t ts) {
    size_t name_len = msg ? msg->length : 0;
    size_t size = sizeof(EventHeader) + (attrs ? sizeof(EventAttrs) : 0) + (range_id ? 8 : 0) + pad8(name_len);
    uint8_t* p = reserve(s, size);
    if (!p) return false;
    auto* h = reinterpret_cast<EventHeader*>(p);
    h->type = type;
    h->flags = static_cast<uint8_t>((attrs ? kHasAttrs : 0) | (msg && msg->registered ? kRegistered : 0) |
                                    (range_id ? kHasRangeId : 0));
    h->name_len = static_cast<uint16_t>(name_len);
    h->domain = domain;
    h->timestamp = ts;
    uint8_t* q = p + sizeof(EventHeader);
    if (attrs) {
        fill_attrs(reinterpret_cast<EventAttrs*>(q), attrs, *msg);
        q += sizeof(EventAttrs);
    }
    if (range_id) {
        std::memcpy(q, range_id, 8);
        q += 8;
    }
    if (name_len) msg->copy(q);
    commit(s, size);
    return true;
}

// ---- push / pop (the hot path) ----

int push_ascii(const char* message) {
    uint64_t ts = clock::now();
    if (!recording()) [[unlikely]] {
        not_recorded();
        return NVTX_NO_PUSH_POP_TRACKING;
    }
    try {
        ThreadStream* s = current_stream();
        if (!s) return NVTX_NO_PUSH_POP_TRACKING;
        size_t n = message ? strnlen(message, kMaxNameBytes) : 0;
        size_t size = sizeof(EventHeader) + pad8(n);
        uint8_t* p = reserve(s, size);
        if (!p) return NVTX_NO_PUSH_POP_TRACKING;
        auto* h = reinterpret_cast<EventHeader*>(p);
        h->type = EventType::Push;
        h->flags = 0;
        h->name_len = static_cast<uint16_t>(n);
        h->domain = 0;
        h->timestamp = ts;
        std::memcpy(p + sizeof(EventHeader), message, n);
        commit(s, size);
        int32_t depth = s->depth[0]++;
        if (capture_armed()) [[unlikely]] {
            CaptureMessage m;
            m.ascii = message;
            m.ascii_length = n;
            capture_on_push(s, 0, m, depth, ts);
        }
        return depth;
    } catch (...) {
        return NVTX_NO_PUSH_POP_TRACKING;
    }
}

// The rest of push/pop and start/end, in two builds: kEvents records the event (GPROF_TRACE has nvtx); without
// it only NVTX's depth and the capture range are kept (an NVTX capture range with NVTX itself not traced).

template <bool kEvents>
int pop_domain(uint32_t domain) {
    uint64_t ts = clock::now();
    if (!recording()) [[unlikely]] {
        not_recorded();
        return NVTX_NO_PUSH_POP_TRACKING;
    }
    ThreadStream* s = current_stream();
    if (!s) return NVTX_NO_PUSH_POP_TRACKING;
    int32_t& depth = s->depth[depth_slot(domain)];
    // A pop without a push is still written: the writer counts it (DropSource::NvtxOverflow). A pop that cannot
    // be written still moves NVTX's depth (and the capture range), so both stay right.
    if constexpr (kEvents) {
        if (domain == 0 && ts <= kShortPopMaxTimestamp) [[likely]] {
            if (uint8_t* p = reserve(s, 8)) {
                const uint64_t word = short_pop(ts);
                std::memcpy(p, &word, 8);
                commit(s, 8);
            }
        } else if (uint8_t* p = reserve(s, sizeof(EventHeader))) {
            auto* h = reinterpret_cast<EventHeader*>(p);
            h->type = EventType::Pop;
            h->flags = 0;
            h->name_len = 0;
            h->domain = domain;
            h->timestamp = ts;
            commit(s, sizeof(EventHeader));
        }
    }
    if (depth <= 0) return NVTX_NO_PUSH_POP_TRACKING;
    --depth;
    if (capture_held_by(s)) [[unlikely]] capture_on_pop(s, domain, depth, ts);
    return depth;
}

template <bool kEvents>
int push_with(uint32_t domain, const nvtxEventAttributes_t* attrs, Message msg) {
    uint64_t ts = clock::now();
    if (!recording()) [[unlikely]] {
        not_recorded();
        return NVTX_NO_PUSH_POP_TRACKING;
    }
    try {
        ThreadStream* s = current_stream();
        if (!s) return NVTX_NO_PUSH_POP_TRACKING;
        if constexpr (kEvents) {
            if (!emit(s, EventType::Push, domain, attrs, &msg, nullptr, ts)) return NVTX_NO_PUSH_POP_TRACKING;
        }
        int32_t depth = s->depth[depth_slot(domain)]++;
        if (capture_armed()) [[unlikely]] capture_on_push(s, domain, msg.for_capture(), depth, ts);
        return depth;
    } catch (...) {
        return NVTX_NO_PUSH_POP_TRACKING;
    }
}

template <bool kEvents> int pop() { return pop_domain<kEvents>(0); }
template <bool kEvents> int push_ascii_any(const char* message) {
    if constexpr (kEvents) {
        return push_ascii(message);
    } else {
        Message m;
        m.ascii = message;
        m.measure();
        return push_with<false>(0, nullptr, m);
    }
}
template <bool kEvents> int push_wide(const wchar_t* message) {
    Message m;
    m.wide = message;
    m.measure();
    return push_with<kEvents>(0, nullptr, m);
}
template <bool kEvents> int push_ex(const nvtxEventAttributes_t* a) { return push_with<kEvents>(0, a, message_of(a)); }
template <bool kEvents> int domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    return push_with<kEvents>(domain_id(d), a, message_of(a));
}
template <bool kEvents> int domain_pop(nvtxDomainHandle_t d) { return pop_domain<kEvents>(domain_id(d)); }

// ---- start / end (may end on another thread) ----

template <bool kEvents>
nvtxRangeId_t start_with(uint32_t domain, const nvtxEventAttributes_t* attrs, Message msg) {
    uint64_t ts = clock::now();
    if (!recording()) [[unlikely]] {
        not_recorded();
        return 0;
    }
    try {
        ThreadStream* s = current_stream();
        if (!s) return 0;
        uint64_t id = s->next_range++;  // unique per process: the stream index sits in the high bits
        if constexpr (kEvents) {
            if (!emit(s, EventType::Start, domain, attrs, &msg, &id, ts)) return 0;
        }
        if (capture_armed()) [[unlikely]] capture_on_start(domain, msg.for_capture(), id, ts);
        return id;
    } catch (...) {
        return 0;
    }
}

template <bool kEvents> nvtxRangeId_t start_ascii(const char* message) {
    Message m;
    m.ascii = message;
    m.measure();
    return start_with<kEvents>(0, nullptr, m);
}
template <bool kEvents> nvtxRangeId_t start_wide(const wchar_t* message) {
    Message m;
    m.wide = message;
    m.measure();
    return start_with<kEvents>(0, nullptr, m);
}
template <bool kEvents> nvtxRangeId_t start_ex(const nvtxEventAttributes_t* a) {
    return start_with<kEvents>(0, a, message_of(a));
}
template <bool kEvents> nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    return start_with<kEvents>(domain_id(d), a, message_of(a));
}

template <bool kEvents>
void end_domain(uint32_t domain, nvtxRangeId_t id) {
    uint64_t ts = clock::now();
    if (id == 0) return;
    if (!recording()) [[unlikely]] return not_recorded();
    uint64_t rid = id;
    if constexpr (kEvents) {
        if (ThreadStream* s = current_stream()) emit(s, EventType::End, domain, nullptr, nullptr, &rid, ts);
    }
    if (capture_held_by_range(rid)) [[unlikely]] capture_on_end(rid, ts);
}
template <bool kEvents> void end(nvtxRangeId_t id) { end_domain<kEvents>(0, id); }
template <bool kEvents> void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
    end_domain<kEvents>(domain_id(d), id);
}

// ---- marks ----

void mark_with(uint32_t domain, const nvtxEventAttributes_t* attrs, Message msg) {
    uint64_t ts = clock::now();
    if (!recording()) [[unlikely]] return not_recorded();
    try {
        ThreadStream* s = current_stream();
        if (s) emit(s, EventType::Mark, domain, attrs, &msg, nullptr, ts);
    } catch (...) {
    }
}
void mark_ascii(const char* message) {
    Message m;
    m.ascii = message;
    m.measure();
    mark_with(0, nullptr, m);
}
void mark_wide(const wchar_t* message) {
    Message m;
    m.wide = message;
    m.measure();
    mark_with(0, nullptr, m);
}
void mark_ex(const nvtxEventAttributes_t* a) { mark_with(0, a, message_of(a)); }
void domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { mark_with(domain_id(d), a, message_of(a)); }

// ---- naming (rare: locks and allocation are fine) ----

void name_category_in(uint32_t domain, uint32_t category, std::string_view name) {
    try {
        names().name_category(domain, category, name);
    } catch (...) {
    }
}
void name_category_ascii(uint32_t category, const char* name) { name_category_in(0, category, name ? name : ""); }
void name_category_wide(uint32_t category, const wchar_t* name) {
    try {
        name_category_in(0, category, to_utf8(name));
    } catch (...) {
    }
}
void domain_name_category_ascii(nvtxDomainHandle_t d, uint32_t category, const char* name) {
    name_category_in(domain_id(d), category, name ? name : "");
}
void domain_name_category_wide(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
    try {
        name_category_in(domain_id(d), category, to_utf8(name));
    } catch (...) {
    }
}

void name_thread_ascii(uint32_t tid, const char* name) {
    if (!recording() || !name) return;
    post_thread_name(tid, name);
}
void name_thread_wide(uint32_t tid, const wchar_t* name) {
    if (!recording() || !name) return;
    try {
        post_thread_name(tid, to_utf8(name));
    } catch (...) {
    }
}

nvtxStringHandle_t register_string_in(nvtxDomainHandle_t d, std::string_view text) {
    try {
        uint32_t id = names().register_string(domain_id(d), text);
        capture_on_registered(id, domain_id(d), text);
        return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(id));
    } catch (...) {
        return nullptr;
    }
}
nvtxStringHandle_t register_string_ascii(nvtxDomainHandle_t d, const char* s) {
    return register_string_in(d, s ? s : "");
}
nvtxStringHandle_t register_string_wide(nvtxDomainHandle_t d, const wchar_t* s) {
    try {
        return register_string_in(d, to_utf8(s));
    } catch (...) {
        return nullptr;
    }
}

nvtxDomainHandle_t domain_create_in(std::string_view name) {
    try {
        uint32_t id = names().domain(name);
        capture_on_domain(id, name);
        return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(id));
    } catch (...) {
        return nullptr;
    }
}
nvtxDomainHandle_t domain_create_ascii(const char* name) { return domain_create_in(name ? name : ""); }
nvtxDomainHandle_t domain_create_wide(const wchar_t* name) {
    try {
        return domain_create_in(to_utf8(name));
    } catch (...) {
        return nullptr;
    }
}
void domain_destroy(nvtxDomainHandle_t) {}  // ids stay valid: records already queued still name them
void initialize(const void*) {}

// ---- installation ----

template <class F> void set(NvtxFunctionTable table, unsigned size, unsigned id, F fn) {
    if (table && id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

template <bool kEvents> void install(NvtxFunctionTable core, unsigned core_size, NvtxFunctionTable core2,
                                     unsigned core2_size) {
    set(core, core_size, NVTX_CBID_CORE_RangeStartEx, start_ex<kEvents>);
    set(core, core_size, NVTX_CBID_CORE_RangeStartA, start_ascii<kEvents>);
    set(core, core_size, NVTX_CBID_CORE_RangeStartW, start_wide<kEvents>);
    set(core, core_size, NVTX_CBID_CORE_RangeEnd, end<kEvents>);
    set(core, core_size, NVTX_CBID_CORE_RangePushEx, push_ex<kEvents>);
    set(core, core_size, NVTX_CBID_CORE_RangePushA, push_ascii_any<kEvents>);
    set(core, core_size, NVTX_CBID_CORE_RangePushW, push_wide<kEvents>);
    set(core, core_size, NVTX_CBID_CORE_RangePop, pop<kEvents>);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, domain_start_ex<kEvents>);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, domain_end<kEvents>);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, domain_push_ex<kEvents>);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, domain_pop<kEvents>);
    // Domains and registered strings: a capture range may name them.
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, register_string_ascii);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, register_string_wide);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, domain_create_ascii);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, domain_create_wide);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, domain_destroy);
    set(core2, core2_size, NVTX_CBID_CORE2_Initialize, initialize);
    if constexpr (kEvents) {
        set(core, core_size, NVTX_CBID_CORE_MarkEx, mark_ex);
        set(core, core_size, NVTX_CBID_CORE_MarkA, mark_ascii);
        set(core, core_size, NVTX_CBID_CORE_MarkW, mark_wide);
        set(core, core_size, NVTX_CBID_CORE_NameCategoryA, name_category_ascii);
        set(core, core_size, NVTX_CBID_CORE_NameCategoryW, name_category_wide);
        set(core, core_size, NVTX_CBID_CORE_NameOsThreadA, name_thread_ascii);
        set(core, core_size, NVTX_CBID_CORE_NameOsThreadW, name_thread_wide);
        set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, domain_mark_ex);
        set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, domain_name_category_ascii);
        set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW, domain_name_category_wide);
    }
}

}  // namespace

bool attach(GetExportTable get_export_table, bool events) noexcept {
    if (!get_export_table) return false;
    auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) || !callbacks->GetModuleFunctionTable)
        return false;

    NvtxFunctionTable core = nullptr, core2 = nullptr;
    unsigned core_size = 0, core2_size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || !core) return false;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) || !core2) {
        core2 = nullptr;
        core2_size = 0;
    }
    if (events) install<true>(core, core_size, core2, core2_size);
    else install<false>(core, core_size, core2, core2_size);

    if (auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
        version && version->struct_size >= sizeof(NvtxExportTableVersionInfo) && version->SetInjectionNvtxVersion) {
        version->SetInjectionNvtxVersion(NVTX_VERSION);
    }
    return true;
}

void stop_recording(Ending why) noexcept {
    g_ending.store(why, std::memory_order_relaxed);
    g_recording.store(false, std::memory_order_release);
}

void clear_ending() noexcept { g_ending.store(Ending::None, std::memory_order_relaxed); }

Ending ending() noexcept { return g_ending.load(std::memory_order_relaxed); }

}  // namespace gprof::collector::nvtx
