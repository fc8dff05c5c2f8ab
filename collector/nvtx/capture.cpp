#include "nvtx/capture.h"

#include <cstring>
#include <string>

#include "capture/capture_window.h"
#include "nvtx/names.h"
#include "nvtx/utf8.h"

namespace gprof::collector::nvtx {

namespace tr = gprof::trace;

namespace detail {
std::atomic<bool> g_armed{false};
std::atomic<uint64_t> g_held_range_id{0};
}  // namespace detail

namespace {

constexpr uint32_t kNoDomain = ~0u;  // the target's named domain has not been created (yet)
constexpr size_t kMaxTargetHandles = 64;

// Written by arm_capture before g_armed is set (release), read by handlers after they see it (acquire). A plain
// pointer, not an object: the collector starts from its library constructor, possibly before this file's
// static constructors have run.
const CaptureTarget* g_target = nullptr;
std::atomic<uint32_t> g_target_domain{kNoDomain};
// Registered string handles whose text is the target name. An app may register the same text many times; past
// the table's size the text is looked up per push (slow, correct).
std::atomic<uint32_t> g_handles[kMaxTargetHandles];
std::atomic<uint32_t> g_handle_count{0};
std::atomic<bool> g_handles_overflow{false};

bool domain_matches(uint32_t domain) {
    return g_target->any_domain || domain == g_target_domain.load(std::memory_order_relaxed);
}

bool registered_matches(uint32_t id) {
    uint32_t n = g_handle_count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n && i < kMaxTargetHandles; ++i)
        if (g_handles[i].load(std::memory_order_relaxed) == id) return true;
    if (!g_handles_overflow.load(std::memory_order_relaxed)) return false;
    std::string text;
    return names().string_text(id, text) && text == g_target->name;
}

bool wide_matches(const wchar_t* w) {
    const std::string& t = g_target->name;
    if (utf8_length(w, kMaxNameBytes) != t.size()) return false;
    uint8_t small[256];
    std::string large;
    uint8_t* out = small;
    if (t.size() > sizeof small) {
        large.resize(t.size());
        out = reinterpret_cast<uint8_t*>(large.data());
    }
    utf8_encode(w, out, t.size());
    return std::memcmp(out, t.data(), t.size()) == 0;
}

bool name_matches(const CaptureMessage& m) {
    if (m.registered) return registered_matches(m.registered);
    if (m.ascii)
        return m.ascii_length == g_target->name.size() &&
               std::memcmp(m.ascii, g_target->name.data(), m.ascii_length) == 0;
    if (m.wide) return wide_matches(m.wide);
    return false;
}

bool matches(uint32_t domain, const CaptureMessage& m) {
    if (!detail::g_armed.load(std::memory_order_acquire)) return false;
    return domain_matches(domain) && name_matches(m);
}

// Once GPROF_CAPTURE_RANGE_END is used up, names are no longer compared (a held range still closes).
void disarm_when_done() {
    if (!capture_window().accepts_ranges()) detail::g_armed.store(false, std::memory_order_relaxed);
}

}  // namespace

void arm_capture(const CaptureTarget& target) noexcept {
    try {
        detail::g_armed.store(false, std::memory_order_relaxed);
        g_target = new CaptureTarget(target);  // a previous one (a forked child re-arming) is leaked: tiny
        uint32_t domain = 0;
        if (!target.domain.empty()) {
            // Domains are looked up, never created, here: the app creates its own.
            domain = kNoDomain;
            std::string name;
            for (uint32_t id = 1; names().domain_name(id, name); ++id)
                if (name == target.domain) {
                    domain = id;
                    break;
                }
        }
        g_target_domain.store(domain, std::memory_order_relaxed);
        g_handle_count.store(0, std::memory_order_relaxed);
        g_handles_overflow.store(false, std::memory_order_relaxed);
        std::string text;
        for (uint32_t id = 1; names().string_text(id, text); ++id)
            if (text == target.name) capture_on_registered(id, 0, text);
        detail::g_held_range_id.store(0, std::memory_order_relaxed);
        detail::g_armed.store(true, std::memory_order_release);
    } catch (...) {
        detail::g_armed.store(false, std::memory_order_relaxed);
    }
}

void reset_capture_after_fork() noexcept {
    detail::g_armed.store(false, std::memory_order_relaxed);
    detail::g_held_range_id.store(0, std::memory_order_relaxed);
}

void capture_on_push(ThreadStream* s, uint32_t domain, const CaptureMessage& m, int32_t depth, uint64_t ts) noexcept {
    if (s->capture_depth >= 0 || !matches(domain, m)) return;  // a nested push of the same name: the outer holds
    if (capture_window().open_range(tr::CaptureReason::NvtxRange, ts)) {
        s->capture_depth = depth;
        s->capture_domain = domain;
    }
    disarm_when_done();
}

void capture_on_pop(ThreadStream* s, uint32_t domain, int32_t depth_after, uint64_t ts) noexcept {
    if (domain != s->capture_domain || depth_after != s->capture_depth) return;
    s->capture_depth = -1;
    capture_window().close_range(tr::CaptureReason::NvtxRange, ts);
    disarm_when_done();
}

void capture_on_start(uint32_t domain, const CaptureMessage& m, uint64_t id, uint64_t ts) noexcept {
    if (!matches(domain, m)) return;
    if (capture_window().open_range(tr::CaptureReason::NvtxRange, ts))
        detail::g_held_range_id.store(id, std::memory_order_relaxed);
    disarm_when_done();
}

void capture_on_end(uint64_t id, uint64_t ts) noexcept {
    uint64_t held = id;
    if (!detail::g_held_range_id.compare_exchange_strong(held, 0, std::memory_order_relaxed)) return;
    capture_window().close_range(tr::CaptureReason::NvtxRange, ts);
    disarm_when_done();
}

void capture_on_domain(uint32_t id, std::string_view name) noexcept {
    if (g_target && !g_target->domain.empty() && name == g_target->domain)
        g_target_domain.store(id, std::memory_order_relaxed);
}

void capture_on_registered(uint32_t id, uint32_t, std::string_view text) noexcept {
    if (!g_target || text != g_target->name) return;
    uint32_t slot = g_handle_count.load(std::memory_order_relaxed);
    while (slot < kMaxTargetHandles) {
        // Claim the slot first, then fill it: a reader may see the count before the id (it then misses this
        // handle for one call at most, while the registering call has not even returned it yet).
        if (g_handle_count.compare_exchange_weak(slot, slot + 1, std::memory_order_acq_rel)) {
            g_handles[slot].store(id, std::memory_order_release);
            return;
        }
    }
    g_handles_overflow.store(true, std::memory_order_relaxed);
}

}  // namespace gprof::collector::nvtx
