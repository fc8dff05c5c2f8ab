// Where gprof-run's own words go: stderr, or the --log-file. Never stdout: stdout belongs to the app, and a byte
// of ours in it would corrupt whatever the app's output feeds.
#pragma once

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace gprof::launcher {

enum class LogLevel { Trace, Debug, Info, Warn, Error, Off };

// Parses trace|debug|info|warn|error|off (the spdlog names the collector uses too).
bool parse_log_level(std::string_view text, LogLevel& out);

// An ostream over a raw fd, so the log file can be created with open(2) flags that std::ofstream cannot express.
class FdStreamBuf : public std::streambuf {
public:
    explicit FdStreamBuf(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
    ~FdStreamBuf() override { sync(); }
    FdStreamBuf(const FdStreamBuf&) = delete;
    FdStreamBuf& operator=(const FdStreamBuf&) = delete;

protected:
    int_type overflow(int_type ch) override;
    int sync() override;

private:
    bool flush_buffer();
    int fd_;
    char buffer_[4096];
};

class Console {
public:
    Console();
    ~Console();

    void set_level(LogLevel level) { level_ = level; }
    LogLevel level() const { return level_; }

    // From now on everything goes to `fd` (owned, closed at destruction) instead of stderr.
    void redirect_to(int fd, std::string path);
    bool redirected() const { return log_fd_ >= 0; }
    const std::string& log_path() const { return log_path_; }

    // The stream the summary is printed on.
    std::ostream& stream();

    // One line each, prefixed "gprof-run: ". error() also reaches stderr when the log file is in use, so a user
    // who looks only at the terminal still learns why the run failed.
    void error(std::string_view line);
    void warn(std::string_view line);
    void info(std::string_view line);
    void debug(std::string_view line);

private:
    void line(std::string_view text);
    LogLevel level_ = LogLevel::Warn;
    int log_fd_ = -1;
    std::string log_path_;
    std::unique_ptr<FdStreamBuf> log_buf_;
    std::unique_ptr<std::ostream> log_stream_;
};

}  // namespace gprof::launcher
