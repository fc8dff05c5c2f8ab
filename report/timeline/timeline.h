// Chrome Trace Event export of a run (object form, Perfetto-loadable), written by hand for speed.
//
// Layout (docs/reports.md): one pid per profiled process with one track per CPU thread (API calls, NVTX ranges,
// marks); one pid per (process, device) with one track per stream ("stream N") for kernels, memcpy, memset and
// sync, sorted below the CPU processes; a device-memory counter per device; flow arrows API call -> GPU op
// (kineto's "ac2g"). `ts` is microseconds relative to baseTimeNanoseconds (CLOCK_REALTIME ns) with three
// decimals, so no nanosecond is lost. Slices that would overlap on a track are moved to overflow tracks and
// counted; GPU ops without an API match are drawn and counted, never dropped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"

namespace gprof::report {

struct AnalysisSlice;  // gprof/report/analysis.h

struct TimelineOptions {
    bool gzip = false;                            // write gzip
    uint64_t too_big_bytes = 1000ull * 1000 * 1000;  // warn above this JSON size (Perfetto UI's practical limit)
    bool analysis_track = true;  // an "analysis" process with the verdict, idle gaps and findings
    // The analysis track's slices when the caller has analysed the run already (analysis_timeline_slices of its
    // result); null = analyse the run here with default options. Must outlive the write.
    const std::vector<AnalysisSlice>* analysis_slices = nullptr;
    // gprof-run's own outputs: create the file O_EXCL|O_NOFOLLOW with mode 0600 (never follow a planted
    // symlink, never replace a file; the launcher removed an old one itself when --force was given).
    bool create_exclusive = false;
};

struct TimelineStats {
    uint64_t events = 0;
    uint64_t json_bytes = 0;         // uncompressed JSON size
    uint64_t file_bytes = 0;         // bytes on disk (== json_bytes unless gzipped)
    uint64_t flows = 0;              // API -> GPU arrows
    uint64_t unmatched_gpu_ops = 0;  // drawn without an arrow: no launching API call in the trace
    uint64_t overflow_slices = 0;    // slices moved to an overflow track because they overlapped on theirs
    uint64_t zero_timestamps = 0;    // records with an unknown (0) timestamp: cannot be placed, counted
    bool gzipped = false;
    bool analysis_track = false;     // the analysis process was written
    std::vector<std::string> warnings;
};

// Writes the timeline of `run` to `path`. Throws std::runtime_error when the file cannot be written.
TimelineStats write_timeline(const Run& run, const std::filesystem::path& path, const TimelineOptions& options = {});

// The same JSON into a string (tests, benchmarks).
TimelineStats timeline_to_string(const Run& run, std::string& out, const TimelineOptions& options = {});

}  // namespace gprof::report
