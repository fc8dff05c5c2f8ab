#include "output/progress.h"

#include <cmath>

#include "output/table.h"

namespace gprof::report {

namespace {

std::string megabytes(uint64_t bytes) {
    double mb = static_cast<double>(bytes) / 1e6;
    return format_fixed(mb, mb < 10 ? 1 : 0) + " MB";
}

std::string duration_left(double s) {
    if (s < 60) return std::to_string(static_cast<long>(std::ceil(s))) + " s";
    long m = static_cast<long>(s / 60);
    if (m < 60) return std::to_string(m) + " min " + std::to_string(static_cast<long>(s) % 60) + " s";
    return std::to_string(m / 60) + " h " + std::to_string(m % 60) + " min";
}

}  // namespace

std::string progress_line(const Progress& p, double elapsed_s) {
    std::string line = "reading " + p.trace.filename().string() + ": ";
    double fraction = p.bytes_total ? static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total) : 0;
    line += std::to_string(static_cast<int>(std::min(fraction, 1.0) * 100)) + "% of " + megabytes(p.bytes_total);
    if (elapsed_s > 0 && p.bytes_done > 0) {
        double rate = static_cast<double>(p.bytes_done) / elapsed_s;  // bytes/s
        line += ", " + format_fixed(rate / 1e6, 0) + " MB/s (" +
                format_fixed(static_cast<double>(p.records) / elapsed_s / 1e6, 1) + " M records/s)";
        if (p.bytes_total > p.bytes_done) line += ", " + duration_left(static_cast<double>(p.bytes_total - p.bytes_done) / rate) + " left";
    }
    return line;
}

void TerminalProgress::operator()(const Progress& p) {
    auto now = Clock::now();
    if (!running_) {
        running_ = true;
        started_ = now;
    }
    if (p.finished) {
        if (drawn_) out_ << "\r\033[K" << std::flush;  // erase the line: the report follows
        running_ = drawn_ = false;
        return;
    }
    double elapsed = std::chrono::duration<double>(now - started_).count();
    if (elapsed < 0.5) return;
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
    out_ << "\r\033[K" << "gprof-report: " << progress_line(p, elapsed) << std::flush;
    drawn_ = true;
    last_draw_ = now;
}

}  // namespace gprof::report
