#include "base/log.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <memory>
#include <mutex>
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

// The program's stderr as it was when the collector started: descriptor 2's file. A program that closes its stderr
// and opens a file of its own (which gets number 2), or puts its log file there (a daemon), must never find a line
// of ours in that file: our lines go to descriptor 2 only while it is still that file.
struct Stderr {
    std::atomic<bool> known{false};
    std::atomic<bool> open{false};  // descriptor 2 was open at the start
    dev_t dev = 0;
    ino_t ino = 0;
} g_stderr;

void remember_stderr() {
    struct stat st {};
    bool open = ::fstat(2, &st) == 0;
    g_stderr.dev = st.st_dev;
    g_stderr.ino = st.st_ino;
    g_stderr.open.store(open, std::memory_order_relaxed);
    g_stderr.known.store(true, std::memory_order_release);
}

bool stderr_unchanged() {
    if (!g_stderr.known.load(std::memory_order_acquire)) remember_stderr();
    if (!g_stderr.open.load(std::memory_order_relaxed)) return false;
    struct stat st {};
    return ::fstat(2, &st) == 0 && st.st_dev == g_stderr.dev && st.st_ino == g_stderr.ino;
}

// Each line with one write(2) system call to descriptor 2, never through the program's FILE* stderr (its buffer, its
// lock, or a stream the program has fclose()d).
class ProgramStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t line;
        formatter_->format(msg, line);
        if (!stderr_unchanged()) return;  // the line is in the trace's Status records where it matters
        const char* p = line.data();
        size_t left = line.size();
        while (left > 0) {
            // The system call itself: a write() the program (or another preloaded library) interposes is its own.
            ssize_t n = ::syscall(SYS_write, 2, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;
            p += n;
            left -= static_cast<size_t>(n);
        }
    }
    void flush_() override {}
};

std::shared_ptr<spdlog::logger> make_logger() {
    auto l = std::make_shared<spdlog::logger>("gprof-collector", std::make_shared<ProgramStderrSink>());
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
    remember_stderr();
    try {
        logger().set_level(parse_level(level));
    } catch (...) {
    }
}

}  // namespace gprof::collector::log
