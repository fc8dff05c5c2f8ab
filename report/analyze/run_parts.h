// The parts of the analysis (run.cpp), shared by its files: context.cpp (the run as the rules see it),
// verdict.cpp (utilisation, the verdict and its evidence, idle gaps), findings.cpp (one function per rule) and run.cpp
// (the step view and the public entry points). Rules and thresholds: docs/analysis.md. Not for use outside analyze/.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include "analyze/analysis.h"
#include "analyze/util.h"
#include "model/resolved_call_sites.h"
#include "model/stats.h"
#include "output/table.h"
#include "gprof/trace/names.h"

namespace gprof::report::analysis_run {

// Thresholds of the verdict and the rules (docs/analysis.md).
constexpr double kGpuBoundPct = 90.0;
constexpr double kLaunchBoundPct = 80.0;
constexpr double kIoBoundPct = 5.0;
constexpr double kSyncBoundPct = 25.0;
constexpr uint64_t kSmallCopyBytes = 64 * 1024;
constexpr size_t kSmallCopyCount = 50;
constexpr double kMinShareOfWindow = 0.01;
constexpr size_t kMinOccurrences = 10;
constexpr double kTinyGridTimeShare = 0.10;
constexpr double kSingleStreamShare = 0.90;
// The GPU metrics' rules (gpu_metric_findings.cpp), on each device's figures while kernels ran.
constexpr uint64_t kMinMetricSamples = 10;   // kernel time inside the samples: at least this many intervals' worth
constexpr double kSmIdlePct = 50.0;          // sm_idle_while_busy: SM active below this on a GPU-bound device
constexpr double kMemoryBoundDramPct = 60.0; // memory_bound: DRAM throughput at least this share of peak
constexpr double kTensorUnusedPct = 1.0;     // tensor_cores_unused: tensor pipe active below this ...
constexpr double kMatmulKernelShare = 0.30;  // ... while matmul kernels take at least this share of kernel time

inline bool timed(trace::Timestamp s, trace::Timestamp e) { return s != 0 && e >= s; }

inline std::string pct(double v) { return format_fixed(v, 1) + "%"; }
inline std::string t(double ns) { return format_time_auto(ns); }

struct ThreadKey {
    size_t process;
    uint64_t tid;
    auto operator<=>(const ThreadKey&) const = default;
};

// What a name means for the rules, computed once per distinct string of a process (the regexes and prefix tests
// are far too slow to run per record on big traces).
enum NameFlag : uint8_t {
    kLaunchName = 1,
    kSyncName = 2,
    kSyncMemcpyName = 4,
    kAllocName = 8,
    kImplicitSyncName = 16,
    kHtoDName = 32,
    kDataLoadingName = 64,
    kFlagsKnown = 128,
};

class NameFlags {
public:
    explicit NameFlags(const ProcessTrace& proc) : proc_(&proc), flags_(proc.strings.size(), 0) {}
    uint8_t operator()(trace::StringId id) const {
        if (id < flags_.size()) {
            uint8_t& f = flags_[id];
            if (!(f & kFlagsKnown)) f = compute(proc_->str(id));
            return f;
        }
        return compute(proc_->str(id));  // not in the string table: a placeholder name, not cached
    }

private:
    static uint8_t compute(std::string_view name) {
        uint8_t f = kFlagsKnown;
        if (is_launch_api(name)) f |= kLaunchName;
        if (is_sync_api(name)) f |= kSyncName;
        if (is_sync_memcpy_api(name)) f |= kSyncMemcpyName;
        if (is_alloc_api(name)) f |= kAllocName;
        if (is_implicit_sync_api(name)) f |= kImplicitSyncName;
        if (name.find("HtoD") != std::string_view::npos) f |= kHtoDName;
        if (is_data_loading_range(name)) f |= kDataLoadingName;
        return f;
    }
    const ProcessTrace* proc_;
    mutable std::vector<uint8_t> flags_;
};

// Host activity of one CPU thread on the run axis.
struct HostThread {
    std::vector<std::pair<Interval, const trace::ApiCall*>> apis;  // sorted by start
    std::vector<std::pair<Interval, const trace::Nvtx*>> ranges;   // sorted by start
    std::vector<int64_t> api_end_max, range_end_max;  // running maximum of `end` over apis / ranges (by index)
    std::vector<Interval> api_union, sync_union;
    size_t launches = 0;
};

// Index of the first entry that may overlap [t, ...): entries before it all end at or before t. `end_max` is the
// running maximum of the entries' ends, so it is sorted and a binary search finds it.
inline size_t first_ending_after(const std::vector<int64_t>& end_max, int64_t t) {
    return static_cast<size_t>(std::upper_bound(end_max.begin(), end_max.end(), t) - end_max.begin());
}

struct Context {
    const Run& run;
    Interval window;
    std::map<DeviceKey, std::vector<Interval>> busy;
    std::map<DeviceKey, std::vector<Interval>> gaps;  // holes of `busy` inside the window
    std::map<ThreadKey, HostThread> threads;
    std::vector<ThreadKey> launch_threads;  // one per process that launched GPU work
    std::map<DeviceKey, std::set<size_t>> device_processes;
    std::vector<NameFlags> names;  // per process
};

Context build_context(const Run& run);
std::vector<DeviceUtilisation> utilisation(const Context& c);
Interval reference_span(const Context& c, const StepSet& steps);
VerdictEvidence evidence(const Context& c, const std::vector<DeviceUtilisation>& devs, const StepSet& steps);
std::string busy_text(const VerdictEvidence& e, const std::string& bound);
void decide(AnalysisResult& a);
std::vector<IdleGap> idle_gaps(const Context& c, size_t max_gaps);
std::vector<Finding> findings(const Context& c, const StepSet& steps, const std::vector<DeviceUtilisation>& devs);
std::vector<Interval> steady_state(const Context& c, const StepSet& steps);
void gpu_metric_findings(const Context& c, const std::vector<DeviceUtilisation>& devs, std::vector<Finding>& out);

}  // namespace gprof::report::analysis_run
