// What the host did (issue 35), from CPU samples and OS-runtime calls: the functions and Python lines that took the
// CPU time, and the calls the threads blocked in, over the whole capture window (the CPU/launch-bound verdict names
// them) or within one GPU idle gap ("what the host did" while the GPU waited). model/cpu_samples.h gives the frames.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyze/intervals.h"
#include "model/model.h"

namespace gprof::report {

struct SampledFrame {
    std::string name;      // function ("work_a(long)", "Model.forward")
    std::string location;  // "app.cpp:12", "train.py:42", "f+0x1c (libx.so)"
    uint64_t samples = 0;  // sampling periods with this frame innermost (functions) / as the innermost Python frame
    int64_t cpu_ns = 0;
    double pct = 0;        // of the CPU time sampled in the span
};

struct HostWait {
    std::string name;      // "read", "pthread_cond_wait"
    std::string site;      // where most of its time was spent (the program's frame), "" when no call had a site
    size_t calls = 0;
    int64_t ns = 0;        // time blocked in it (within the span)
};

struct HostProfile {
    uint64_t samples = 0;  // sampling periods in the span
    int64_t cpu_ns = 0;    // the CPU time they stand for
    std::vector<SampledFrame> functions;     // by self time, the top ones
    std::vector<SampledFrame> python_lines;  // by the innermost Python frame, the top ones; empty without Python
    std::vector<HostWait> waits;             // by time blocked, the top ones
    bool empty() const { return samples == 0 && waits.empty(); }
};

class HostActivity {
public:
    explicit HostActivity(const Run& run);
    ~HostActivity();
    // Over [span) of the run axis, for the processes of `host` ("" = every process). `top` rows per list.
    HostProfile profile(const Interval& span, const std::string* host = nullptr, size_t top = 5);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// "work_a(long) (app.cpp:12) 62%, spin (train.py:16) 20%": frames joined for a sentence.
std::string frames_text(const std::vector<SampledFrame>& frames, size_t max = 3);
// "read 1.20 s at loader.py:10, pthread_cond_wait 300 ms": waits for a sentence.
std::string waits_text(const std::vector<HostWait>& waits, size_t max = 3);

}  // namespace gprof::report
