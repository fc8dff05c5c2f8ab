// Steps (training iterations) of a run: from NVTX ranges whose name matches a pattern, or else from
// cudaProfilerStart/Stop capture windows. Used by `analyze` (step view) and `diff` (per-step time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace gprof::report {

// Matches "step", "step 3", "step_3", "iteration#7", "ProfileStep#2", "ProfilerStep#2", "train_step", "iter 4"
// (case-insensitive, whole name).
inline constexpr const char* kDefaultStepPattern =
    R"((profiler?step|step|iteration|iter|train_?step|training_?step)([ _#:.\-]*[0-9]+)?)";

struct Step {
    size_t process = 0;          // index into Run::processes
    uint64_t tid = 0;            // thread that opened the range (0 for capture windows)
    int64_t start = 0, end = 0;  // run axis, ns
    std::string name;
    int64_t duration() const { return sat_sub(end, start); }
};

struct StepSet {
    std::string source;   // "nvtx", "profiler-api" or "none"
    std::string pattern;  // the NVTX pattern used
    std::vector<Step> steps;  // per process in time order, processes in Run order
};

// `pattern` is an ECMAScript regex matched against the whole range name, case-insensitively; a plain name is a
// regex matching itself. Empty = kDefaultStepPattern. Nested matching ranges count once (the outermost).
// Throws std::regex_error for an invalid pattern.
StepSet detect_steps(const Run& run, const std::string& pattern);

}  // namespace gprof::report
