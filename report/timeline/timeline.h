// Timeline export of a run: Chrome Trace Event JSON (chrome://tracing, Perfetto) or Perfetto's native protobuf.
// Both are encodings of one model (timeline/model.h); docs/reports.md describes the layout.
//
// Slices that would overlap on a row are moved to overflow rows and counted; GPU ops without an API match are
// drawn and counted, never dropped; records with an unknown timestamp are counted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "output/output_file.h"

namespace CLI {
class App;
}

namespace gprof::report {

struct AnalysisSlice;  // analyze/analysis.h

enum class TimelineFormat { ChromeJson, Perfetto };

// By file name: ".pftrace" or ".perfetto-trace" is Perfetto's protobuf, anything else Chrome JSON.
TimelineFormat timeline_format_for(const std::filesystem::path& path);
const char* timeline_format_name(TimelineFormat format);  // "json", "perfetto"

// Above this many slices, instants and counter samples the JSON would pass ~1 GB (about 400 bytes an event on
// real runs), where Perfetto UI stops loading JSON; gprof-run then writes the protobuf instead (docs/reports.md).
inline constexpr uint64_t kJsonTimelineEventLimit = 2'500'000;

struct TimelineOptions {
    TimelineFormat format = TimelineFormat::ChromeJson;
    bool gzip = false;                               // JSON only: write gzip
    uint64_t too_big_bytes = 1000ull * 1000 * 1000;  // warn above this JSON size (Perfetto UI's practical limit);
                                                     // the protobuf warns above half of it (UI heap ~2 GB, 2-4x)
    bool analysis_track = true;  // an "analysis" process with the verdict, idle gaps and findings
    bool all_processes = false;  // draw each helper process (else folded into one, as in the summary)
    bool cpu_samples = true;     // CPU samples as instants on their threads (--no-samples: without)
    // The analysis track's slices when the caller has analysed the run already (analysis_timeline_slices of its
    // result); null = analyse the run here with default options. Must outlive the write.
    const std::vector<AnalysisSlice>* analysis_slices = nullptr;
    // How the file is written (report/output/output_file.h, the one policy): --force, and gprof-run's 0600.
    OutputPolicy output;
    // JSON asked for, but the run has more events than this: write the protobuf instead, next to the asked
    // path with its suffix replaced by ".pftrace", and say so (gprof-run's end-of-run step). nullopt = never.
    std::optional<uint64_t> json_event_limit;
};

struct TimelineStats {
    TimelineFormat format = TimelineFormat::ChromeJson;  // what was written
    std::filesystem::path path;      // where (write_timeline), which differs from the asked path on a switch
    uint64_t events = 0;             // Chrome: trace events; Perfetto: trace packets
    uint64_t slices = 0;             // slices in the model (the same in both formats)
    uint64_t encoded_bytes = 0;      // uncompressed size of the encoding
    uint64_t file_bytes = 0;         // bytes on disk (== encoded_bytes unless gzipped)
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

// `gprof-report timeline`: registered by the CLI from the outputs list (end_of_run/outputs.h).
void register_timeline_command(CLI::App& app, int* exit_code);

// The same bytes into a string (tests, benchmarks); no gzip.
TimelineStats timeline_to_string(const Run& run, std::string& out, const TimelineOptions& options = {});

}  // namespace gprof::report
