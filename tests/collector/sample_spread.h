// How far chance alone moves a sampled CPU share, for the known-answer sampling tests (issue 35). Each signal charges
// the periods it stands for to the frame it lands in; on a loaded machine a thread is often off its core at the tick,
// so fewer signals carry more periods each (4 s of CPU: about 1000 signals of 4 periods on a quiet 250 Hz kernel,
// 370-450 of 1 to 12+ periods at load 9 on 2 cores). The standard error of the periods-weighted share comes from the
// signals themselves: the run's timeline holds one instant per signal with the CPU time it stands for.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "collector_run.h"

namespace gprof::testing {

struct SampleSpread {
    size_t signals = 0;         // signals whose innermost frame is on either side
    double stderr_points = 0;   // standard error of side A's share, in percentage points
    // The known-answer check's bound: the 5 points where the samples can show it (3.4 standard errors with
    // 1000 signals of equal weight), else 4 standard errors (chance alone exceeds it 1 run in 16000).
    double tolerance() const { return std::max(5.0, 4 * stderr_points); }
};

// side(leaf) -> 1 (side A), 2 (side B) or 0 (neither), for the first line of an instant's stack ("work_a(long) at
// file.cpp:12", "spin at file.py:23"); share_a: the sampled share of side A, 0-100.
inline SampleSpread sample_spread(const std::string& run_dir, const std::function<int(const std::string&)>& side,
                                  double share_a) {
    TempDir cwd;
    std::string out = cwd.file("timeline.json");
    RunResult r = run_program({std::string(GPROF_BINARY_DIR) + "/bin/gprof-report", "timeline", "-o", out, run_dir}, {},
                              cwd.path().string());
    SampleSpread s;
    if (r.exit_code() != 0) return s;
    std::ifstream in(out);
    auto events = nlohmann::json::parse(in);
    const auto& list = events.is_object() ? events["traceEvents"] : events;
    double w_sum = 0, w_sq = 0;
    for (const auto& e : list) {
        if (e.value("cat", "") != "cpu_sample") continue;
        std::string leaf = e["args"].value("stack", "");
        if (side(leaf.substr(0, leaf.find('\n'))) == 0) continue;
        double w = e["args"]["cpu time (ns)"].get<double>();
        w_sum += w;
        w_sq += w * w;
        ++s.signals;
    }
    double p = share_a / 100;
    if (w_sum > 0) s.stderr_points = 100 * std::sqrt(p * (1 - p) * w_sq) / w_sum;
    return s;
}

}  // namespace gprof::testing
