#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <memory>
#include <string>

namespace gprof::collector::log {

namespace {

spdlog::level::level_enum parse_level(std::string_view s) {
    if (s == "trace") return spdlog::level::trace;
    if (s == "debug") return spdlog::level::debug;
    if (s == "info") return spdlog::level::info;
    if (s == "warn" || s == "warning") return spdlog::level::warn;
    if (s == "error" || s == "err") return spdlog::level::err;
    if (s == "off" || s == "none") return spdlog::level::off;
    return spdlog::level::warn;
}

std::shared_ptr<spdlog::logger> make_logger() {
    // stderr_sink (unbuffered fwrite to stderr): never stdout, never a file of ours.
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("gprof-collector", std::move(sink));
    l->set_pattern("gprof-run: %v");
    l->set_level(spdlog::level::warn);
    l->flush_on(spdlog::level::trace);
    return l;
}

}  // namespace

spdlog::logger& logger() noexcept {
    // Leaked on purpose: messages may be logged from atexit handlers and from destructors of other objects.
    static spdlog::logger* instance = [] {
        try {
            return new std::shared_ptr<spdlog::logger>(make_logger());
        } catch (...) {
            return new std::shared_ptr<spdlog::logger>();
        }
    }()->get();
    static spdlog::logger silent("gprof-collector-silent");  // only when the real one could not be made
    return instance ? *instance : silent;
}

void init(std::string_view level) noexcept {
    try {
        logger().set_level(parse_level(level));
    } catch (...) {
    }
}

}  // namespace gprof::collector::log
