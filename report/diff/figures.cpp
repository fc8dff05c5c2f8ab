// Per-run figures for `diff`: every duration of every key of one run.
#include <algorithm>
#include <regex>

#include "analyze/analysis.h"
#include "model/names.h"
#include "diff/diff.h"
#include "gprof/trace/names.h"

namespace gprof::report {

namespace {

bool timed(trace::Timestamp s, trace::Timestamp e) { return s != 0 && e >= s; }

std::string launch_config(const trace::Kernel& k) {
    return " [grid " + std::to_string(k.grid_x) + "x" + std::to_string(k.grid_y) + "x" + std::to_string(k.grid_z) +
           " block " + std::to_string(k.block_x) + "x" + std::to_string(k.block_y) + "x" + std::to_string(k.block_z) +
           "]";
}

}  // namespace

RunFigures extract_figures(const Run& run, const FigureOptions& options) {
    RunFigures f;
    auto& in = f.instances;
    StepSet steps = detect_steps(run, options.step_pattern);
    // Step ranges ("step 17") would each become a key of one instance; run:step_time covers them as one key.
    std::regex step_re(steps.pattern, std::regex::ECMAScript | std::regex::icase);
    for (const ProcessTrace& proc : run.processes) {
        for (const trace::Kernel& k : proc.kernels) {
            if (!timed(k.start, k.end)) continue;
            std::string key = "kernel:" + demangle(proc.str(k.name));
            if (options.by_launch_config) key += launch_config(k);
            in[key].push_back(static_cast<int64_t>(k.end - k.start));
        }
        for (const trace::Memcpy& m : proc.memcpys)
            if (timed(m.start, m.end))
                in["memcpy:" + std::string(trace::memcpy_kind_name(m.copy_kind))].push_back(
                    static_cast<int64_t>(m.end - m.start));
        for (const trace::Memset& m : proc.memsets)
            if (timed(m.start, m.end)) in["memset"].push_back(static_cast<int64_t>(m.end - m.start));
        for (const trace::ApiCall& a : proc.api_calls)
            if (timed(a.start, a.end))
                in["api:" + std::string(proc.str(a.name))].push_back(static_cast<int64_t>(a.end - a.start));
        for (const trace::Nvtx& r : proc.nvtx) {
            if (r.type == trace::NvtxType::Mark || !timed(r.start, r.end) || r.end == r.start) continue;
            if (steps.source == "nvtx" && std::regex_match(std::string(proc.str(r.name)), step_re)) continue;
            std::string key = "nvtx:";
            if (r.domain != 0) key += std::string(proc.str(r.domain)) + ":";
            key += proc.str(r.name);
            in[key].push_back(static_cast<int64_t>(r.end - r.start));
        }
    }
    // Whole-run figures: one value per run (step time: one per step).
    int64_t busy = 0;
    for (const auto& [dev, set] : gpu_busy_by_device(run)) busy += total_length(set);
    if (busy > 0) in["run:gpu_busy"].push_back(busy);
    Interval w = capture_window(run);
    if (w.length() > 0) in["run:wall_time"].push_back(w.length());
    for (const Step& s : steps.steps) in["run:step_time"].push_back(s.duration());
    f.warnings = run.all_warnings();
    return f;
}

}  // namespace gprof::report
