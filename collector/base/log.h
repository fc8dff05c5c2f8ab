// The collector's own messages: stderr only (never the app's stdout), through a private spdlog logger that
// is not registered in spdlog's global registry, so an app that uses spdlog itself is not affected.
// Quiet by default (warn); GPROF_LOG_LEVEL changes it. Every call is noexcept: a failing log line is lost.
// A line is written (one write(2), not through the program's FILE* stderr) only while descriptor 2 is still the file
// it was when the session started (init): a program that closed its stderr or put a file of its own there never
// finds a line of ours in that file.
#pragma once

#include <spdlog/logger.h>

#include <string_view>
#include <utility>

namespace gprof::collector::log {

// Sets the level and remembers descriptor 2's file (at each session start). Until then messages at warn and above
// still reach stderr, if descriptor 2 is the file it was at the first message.
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
