// The NVTX capture range (GPROF_CAPTURE_RANGE=nvtx:NAME[@DOMAIN]): decided on the application thread, inside the
// NVTX handlers, so that the capture window opens before the first CUDA call of the range and closes at its end.
//
// (Deciding it later, on the writer thread while it pairs events, switched CUPTI one flush period late: on an H100
// the 100 us ranges of a test program were long over by then and nothing inside them was recorded.)
//
// Cost on the hot path: while no capture range is armed, one relaxed load per push/start and one thread-local
// compare per pop (and per end, one relaxed load). While armed, a push or start in the capture domain compares
// the message length, then the bytes, with the target name; a registered string compares its handle against
// the handles registered with the target text (decided once, at nvtxDomainRegisterString). Only a matching
// range takes the capture window's mutex, and CUPTI is switched there; nothing here ever flushes CUPTI
// (CUPTI forbids it outside runtime/driver callbacks; the writer's periodic flush collects the range).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nvtx/stream.h"

namespace gprof::collector::nvtx {

struct CaptureTarget {
    std::string name;
    std::string domain;       // empty: the default domain
    bool any_domain = false;  // "NAME@*"
};

// Arms the trigger for this process's session (its config names a capture range). Domains and registered strings
// created earlier are matched now; later ones as they are created.
void arm_capture(const CaptureTarget& target) noexcept;
// In a forked child: the parent's holder is gone (the child's session arms again).
void reset_capture_after_fork() noexcept;

namespace detail {
extern std::atomic<bool> g_armed;                // a range may still open: names are compared
extern std::atomic<uint64_t> g_held_range_id;    // the start/end range holding the window, 0 = none
}  // namespace detail

inline bool capture_armed() noexcept { return detail::g_armed.load(std::memory_order_relaxed); }

// The message of a push or start, as the handler has it: ASCII bytes (measured), wide text, or a registered
// string id (0 when not registered).
struct CaptureMessage {
    const char* ascii = nullptr;
    size_t ascii_length = 0;
    const wchar_t* wide = nullptr;
    uint32_t registered = 0;
};

// Push on `s` in `domain` whose depth before the push was `depth`: opens the window when the name matches.
void capture_on_push(ThreadStream* s, uint32_t domain, const CaptureMessage& m, int32_t depth, uint64_t ts) noexcept;
// Pop on a thread that holds the window through a push (s->capture_depth >= 0): closes it at the matching depth.
void capture_on_pop(ThreadStream* s, uint32_t domain, int32_t depth_after, uint64_t ts) noexcept;
inline bool capture_held_by(const ThreadStream* s) noexcept { return s->capture_depth >= 0; }
// Start of range `id`: opens the window when the name matches; its end (any thread) closes it.
void capture_on_start(uint32_t domain, const CaptureMessage& m, uint64_t id, uint64_t ts) noexcept;
inline bool capture_held_by_range(uint64_t id) noexcept {
    return id != 0 && detail::g_held_range_id.load(std::memory_order_relaxed) == id;
}
void capture_on_end(uint64_t id, uint64_t ts) noexcept;

// From the naming handlers (rare calls): a domain or registered string that may be the target.
void capture_on_domain(uint32_t id, std::string_view name) noexcept;
void capture_on_registered(uint32_t id, uint32_t domain, std::string_view text) noexcept;

}  // namespace gprof::collector::nvtx
