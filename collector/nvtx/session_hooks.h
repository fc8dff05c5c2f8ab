// What the NVTX layer asks of the process session above it, without depending on it: the session installs these
// once per process image, before it can attach the handlers (a forked child inherits them). Unset, each is a no-op
// (tests that drive the streams without a session).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace gprof::collector::nvtx {

struct SessionHooks {
    void (*on_new_stream)() noexcept = nullptr;  // a thread's first NVTX call: a forked child starts its trace here
    void (*nudge_writer)() noexcept = nullptr;   // NVTX blocks pile up: ask the writer thread for an early drain
    void (*post_thread_name)(uint64_t tid, std::string_view name) noexcept = nullptr;  // nvtxNameOsThread
};

namespace detail {
extern std::atomic<void (*)() noexcept> g_on_new_stream;
extern std::atomic<void (*)() noexcept> g_nudge_writer;
extern std::atomic<void (*)(uint64_t, std::string_view) noexcept> g_post_thread_name;
}  // namespace detail

inline void set_session_hooks(const SessionHooks& hooks) noexcept {
    detail::g_on_new_stream.store(hooks.on_new_stream, std::memory_order_release);
    detail::g_nudge_writer.store(hooks.nudge_writer, std::memory_order_release);
    detail::g_post_thread_name.store(hooks.post_thread_name, std::memory_order_release);
}

inline void on_new_stream() noexcept {
    if (auto f = detail::g_on_new_stream.load(std::memory_order_acquire)) f();
}
inline void nudge_writer() noexcept {
    if (auto f = detail::g_nudge_writer.load(std::memory_order_relaxed)) f();
}
inline void post_thread_name(uint64_t tid, std::string_view name) noexcept {
    if (auto f = detail::g_post_thread_name.load(std::memory_order_acquire)) f(tid, name);
}

}  // namespace gprof::collector::nvtx
