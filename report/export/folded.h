// The CPU samples of a run as folded stacks (Brendan Gregg's format): one line per distinct stack, its frames from
// the root to the leaf joined by ';', a space and its samples. flamegraph.pl, speedscope, inferno and Firefox's
// profiler read it. Each stack starts with two frames of its own: the process ("train.py (pid 948)") and the thread
// ("python3 (tid 948)"), so one file holds every process and thread of the run; the frames are those of
// model/cpu_samples.h (Python frames in place of the interpreter's, "function (file.py:LINE)").
// `gprof-report export --format folded RUN -o stacks.folded`.
#pragma once

#include <cstdint>
#include <ostream>

#include "model/model.h"

namespace gprof::report {

struct FoldedStats {
    uint64_t lines = 0;    // distinct stacks written
    uint64_t samples = 0;  // sampling periods (the counts' sum)
};

// Writes the lines sorted (as flamegraph.pl sorts them), counts in sampling periods.
FoldedStats write_folded(const Run& run, std::ostream& out);

}  // namespace gprof::report
