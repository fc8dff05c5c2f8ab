#include "console.h"

#include <unistd.h>

#include <cerrno>
#include <iostream>

namespace gprof::launcher {

bool parse_log_level(std::string_view text, LogLevel& out) {
    struct Name { std::string_view name; LogLevel level; };
    static constexpr Name kNames[] = {{"trace", LogLevel::Trace}, {"debug", LogLevel::Debug},
                                      {"info", LogLevel::Info},   {"warn", LogLevel::Warn},
                                      {"error", LogLevel::Error}, {"off", LogLevel::Off}};
    for (const auto& n : kNames) {
        if (n.name == text) {
            out = n.level;
            return true;
        }
    }
    return false;
}

bool FdStreamBuf::flush_buffer() {
    const char* p = pbase();
    size_t left = static_cast<size_t>(pptr() - pbase());
    while (left > 0) {
        ssize_t n = ::write(fd_, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            setp(buffer_, buffer_ + sizeof buffer_);
            return false;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return true;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type ch) {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
        *pptr() = traits_type::to_char_type(ch);
        pbump(1);
    }
    return traits_type::not_eof(ch);
}

int FdStreamBuf::sync() { return flush_buffer() ? 0 : -1; }

Console::Console() = default;

Console::~Console() {
    if (log_stream_) log_stream_->flush();
    log_stream_.reset();
    log_buf_.reset();
    if (log_fd_ >= 0) ::close(log_fd_);
}

void Console::redirect_to(int fd, std::string path) {
    log_fd_ = fd;
    log_path_ = std::move(path);
    log_buf_ = std::make_unique<FdStreamBuf>(fd);
    log_stream_ = std::make_unique<std::ostream>(log_buf_.get());
}

std::ostream& Console::stream() { return log_stream_ ? *log_stream_ : std::cerr; }

void Console::line(std::string_view text) {
    std::ostream& os = stream();
    os << "gprof-run: " << text << '\n';
    os.flush();
}

void Console::error(std::string_view text) {
    if (level_ > LogLevel::Error) return;
    line(text);
    if (log_stream_) std::cerr << "gprof-run: " << text << std::endl;
}
void Console::warn(std::string_view text) {
    if (level_ <= LogLevel::Warn) line(text);
}
void Console::info(std::string_view text) {
    if (level_ <= LogLevel::Info) line(text);
}
void Console::debug(std::string_view text) {
    if (level_ <= LogLevel::Debug) line(text);
}

}  // namespace gprof::launcher
