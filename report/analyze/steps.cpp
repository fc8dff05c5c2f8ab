#include "analyze/steps.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <regex>

namespace gprof::report {

namespace {

std::vector<Step> nvtx_steps(const Run& run, const std::regex& re) {
    std::vector<Step> out;
    for (size_t p = 0; p < run.processes.size(); ++p) {
        const ProcessTrace& proc = run.processes[p];
        std::vector<Step> mine;
        // The regex runs once per distinct name (string id), not once per range: -1 = not matched yet.
        std::vector<int8_t> matches(proc.strings.size(), -1);
        for (const trace::Nvtx& r : proc.nvtx) {
            if (r.type == trace::NvtxType::Mark || r.end == 0 || r.end <= r.start) continue;
            bool match;
            if (r.name < matches.size()) {
                int8_t& m = matches[r.name];
                if (m < 0) m = std::regex_match(std::string(proc.str(r.name)), re) ? 1 : 0;
                match = m == 1;
            } else {
                match = std::regex_match(std::string(proc.str(r.name)), re);
            }
            if (!match) continue;
            mine.push_back({p, r.tid, proc.to_run_ns(r.start), proc.to_run_ns(r.end), std::string(proc.str(r.name))});
        }
        std::sort(mine.begin(), mine.end(), [](const Step& a, const Step& b) {
            return a.start != b.start ? a.start < b.start : a.end > b.end;
        });
        // Keep only the outermost of nested matches ("step" holding "step_inner" would double-count).
        int64_t covered_until = INT64_MIN;
        uint64_t covered_tid = 0;
        for (Step& s : mine) {
            if (s.start < covered_until && s.tid == covered_tid) continue;
            covered_until = s.end;
            covered_tid = s.tid;
            out.push_back(std::move(s));
        }
    }
    return out;
}

std::vector<Step> capture_steps(const Run& run) {
    std::vector<Step> out;
    for (size_t p = 0; p < run.processes.size(); ++p) {
        const ProcessTrace& proc = run.processes[p];
        std::vector<trace::Capture> caps = proc.captures;
        std::sort(caps.begin(), caps.end(), [](auto& a, auto& b) { return a.timestamp < b.timestamp; });
        std::optional<trace::Timestamp> open;
        for (const trace::Capture& c : caps) {
            if (c.reason != trace::CaptureReason::ProfilerApi) continue;
            if (c.action == trace::CaptureAction::Start) {
                open = c.timestamp;
            } else if (open) {
                out.push_back({p, 0, proc.to_run_ns(*open), proc.to_run_ns(c.timestamp),
                               "profiler window " + std::to_string(out.size() + 1)});
                open.reset();
            }
        }
    }
    return out;
}

}  // namespace

StepSet detect_steps(const Run& run, const std::string& pattern) {
    StepSet set;
    set.pattern = pattern.empty() ? kDefaultStepPattern : pattern;
    std::regex re(set.pattern, std::regex::ECMAScript | std::regex::icase);
    set.steps = nvtx_steps(run, re);
    if (!set.steps.empty()) {
        set.source = "nvtx";
        return set;
    }
    set.steps = capture_steps(run);
    set.source = set.steps.empty() ? "none" : "profiler-api";
    return set;
}

}  // namespace gprof::report
