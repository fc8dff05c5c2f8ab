// Progress of long reads on a terminal: "reading run.gprof: 42% of 175 MB, 61 MB/s (3.4 M records/s), 2 s left".
// gprof-report installs it (set_progress_hook) only when stderr is a terminal: pipes, CI logs and JSON on the
// terminal never see it. Nothing is drawn for reads shorter than half a second, updates come at most 5 times a
// second, and the line is erased when the read is done, so what remains on the terminal is the report.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "model/model.h"

namespace gprof::report {

// The text of one progress line, with `elapsed_s` seconds since the read began. Rates and the time left come from
// bytes (the traces' sizes are known up front; records per byte vary by kind).
std::string progress_line(const Progress& p, double elapsed_s);

class TerminalProgress {
public:
    explicit TerminalProgress(std::ostream& out) : out_(out) {}
    void operator()(const Progress& p);

private:
    using Clock = std::chrono::steady_clock;
    std::ostream& out_;
    bool running_ = false;   // a read is under way (started_ valid)
    bool drawn_ = false;     // a line is on the terminal
    Clock::time_point started_, last_draw_;
};

}  // namespace gprof::report
