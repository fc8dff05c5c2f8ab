#include "child_env.h"

#include <sys/random.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "gprof/env/variables.h"

namespace gprof::launcher {

std::string prepend_preload(const std::string& lib, const char* existing) {
    std::string rest = existing ? existing : "";
    // Already preloaded (a nested gprof-run, or the user did it): keep the list as it is.
    size_t start = 0;
    while (start <= rest.size()) {
        size_t end = rest.find_first_of(" :", start);
        if (end == std::string::npos) end = rest.size();
        if (rest.compare(start, end - start, lib) == 0 && end - start == lib.size()) return rest;
        start = end + 1;
    }
    if (rest.find_first_not_of(" :") == std::string::npos) return lib;
    return lib + ":" + rest;
}

std::vector<EnvChange> collector_environment(const LaunchOptions& o, const std::filesystem::path& collector,
                                             const std::filesystem::path& run_dir, const std::string& run_id,
                                             const char* existing_preload) {
    namespace e = gprof::env;
    const std::string lib = collector.string();
    std::vector<EnvChange> c;
    c.push_back({e::kCudaInjection, lib});
    c.push_back({e::kNvtxInjection, lib});
    c.push_back({e::kLdPreload, prepend_preload(lib, existing_preload)});
    c.push_back({e::kOutputDir, run_dir.string()});
    c.push_back({e::kRunId, run_id});
    c.push_back({e::kTrace, o.trace});
    c.push_back({e::kBacktrace, o.backtrace});
    c.push_back({e::kCudaBacktrace, o.cudabacktrace});
    c.push_back({e::kSample, o.sample});
    c.push_back({e::kSamplingFrequency, o.sampling_frequency});
    c.push_back({e::kOsrtThreshold, o.osrt_threshold});
    c.push_back({e::kOsrtBacktraceThreshold, o.osrt_backtrace_threshold});
    c.push_back({e::kCaptureRange, o.capture_range});
    c.push_back({e::kCaptureRangeEnd, o.capture_range_end});
    c.push_back({e::kCudaGraphTrace, o.cuda_graph_trace});
    c.push_back({e::kCudaNestedDriverCalls,
                 o.cuda_nested_driver_calls ? std::optional<std::string>("1") : std::nullopt});
    c.push_back({e::kCudaApi, o.cuda_api});
    c.push_back({e::kGpuMetricsDevices, o.gpu_metrics_devices});
    c.push_back({e::kGpuMetricsFrequency, o.gpu_metrics_frequency});
    c.push_back({e::kGpuMetricsSet, o.gpu_metrics_set});
    c.push_back({e::kDelay, o.delay_sec});
    c.push_back({e::kDuration, o.duration_sec});
    c.push_back({e::kNoChildren, o.no_children ? std::optional<std::string>("1") : std::nullopt});
    c.push_back({e::kRootPid, std::nullopt});
    c.push_back({e::kLogLevel, o.log_level});
    // The summary states why CUDA was not recorded; with --summary none the collector's own line is all there is.
    c.push_back({e::kStatusInSummary,
                 o.summary != SummaryChoice::None ? std::optional<std::string>("1") : std::nullopt});
    return c;
}

std::vector<std::string> apply_changes(char* const* base, const std::vector<EnvChange>& changes) {
    std::vector<std::string> out;
    std::vector<bool> done(changes.size(), false);
    for (char* const* p = base; p && *p; ++p) {
        std::string_view entry(*p);
        std::string_view name = entry.substr(0, entry.find('='));
        bool handled = false;
        for (size_t i = 0; i < changes.size(); ++i) {
            if (changes[i].name != name) continue;
            handled = true;
            if (!done[i] && changes[i].value) out.push_back(changes[i].name + "=" + *changes[i].value);
            done[i] = true;  // later duplicates of the same name are dropped
        }
        if (!handled) out.emplace_back(entry);
    }
    for (size_t i = 0; i < changes.size(); ++i) {
        if (!done[i] && changes[i].value) out.push_back(changes[i].name + "=" + *changes[i].value);
    }
    return out;
}

std::string new_run_id() {
    unsigned char bytes[16] = {};
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    if (got < sizeof bytes) {  // no getrandom (old kernel, seccomp): time and pid are still unique enough
        auto t = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
        auto pid = static_cast<uint64_t>(::getpid());
        std::memcpy(bytes, &t, 8);
        std::memcpy(bytes + 8, &pid, 8);
    }
    static const char* hex = "0123456789abcdef";
    std::string id;
    for (unsigned char b : bytes) {
        id += hex[b >> 4];
        id += hex[b & 15];
    }
    return id;
}

}  // namespace gprof::launcher
