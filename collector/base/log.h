// The collector's own messages: stderr only (never the app's stdout), through a private spdlog logger that
// is not registered in spdlog's global registry, so an app that uses spdlog itself is not affected.
// Quiet by default (warn); GPROF_LOG_LEVEL changes it. Every call is noexcept: a failing log line is lost.
#pragma once

#include <spdlog/logger.h>

#include <string_view>
#include <utility>

namespace gprof::collector::log {

// Creates the logger (idempotent). Until then messages at warn and above still reach stderr.
void init(std::string_view level) noexcept;
spdlog::logger& logger() noexcept;

template <class... Args>
void at(spdlog::level::level_enum level, spdlog::format_string_t<Args...> fmt, Args&&... args) noexcept {
    try {
        auto& l = logger();
        if (l.should_log(level)) l.log(level, fmt, std::forward<Args>(args)...);
    } catch (...) {
    }
}
template <class... Args> void debug(spdlog::format_string_t<Args...> f, Args&&... a) noexcept {
    at(spdlog::level::debug, f, std::forward<Args>(a)...);
}
template <class... Args> void info(spdlog::format_string_t<Args...> f, Args&&... a) noexcept {
    at(spdlog::level::info, f, std::forward<Args>(a)...);
}
template <class... Args> void warn(spdlog::format_string_t<Args...> f, Args&&... a) noexcept {
    at(spdlog::level::warn, f, std::forward<Args>(a)...);
}
template <class... Args> void error(spdlog::format_string_t<Args...> f, Args&&... a) noexcept {
    at(spdlog::level::err, f, std::forward<Args>(a)...);
}

}  // namespace gprof::collector::log
