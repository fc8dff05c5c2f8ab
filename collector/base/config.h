// The collector's configuration: the environment variables of gprof/env/variables.h, parsed once at initialisation
// into a plain struct, each with the contract's parser (gprof/env/values.h). Parsing never throws and never fails: a
// malformed value falls back to its default and leaves a note in `warnings` (logged and written to the trace as
// Status records).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gprof/env/cuda_backtrace.h"
#include "gprof/env/values.h"

namespace gprof::collector {

// The value types are the contract's (gprof/env/values.h): gprof-run checks its options with the same parsers.
using env::ApiSource;
using env::CaptureMode;
using env::CaptureRangeEnd;
using env::GraphTrace;

// The bound of the table of distinct call stacks (collector/cupti/call_stacks.h).
inline constexpr uint32_t kDefaultCallSiteMaxStacks = 65536;

struct Config {
    std::string output_dir;       // GPROF_OUTPUT_DIR; empty = current directory
    std::string run_id;           // GPROF_RUN_ID
    bool trace_cuda = true;       // GPROF_TRACE contains "cuda"
    bool trace_nvtx = true;       // GPROF_TRACE contains "nvtx"
    bool trace_osrt = true;       // GPROF_TRACE contains "osrt"
    uint64_t osrt_threshold_ns = env::kDefaultOsrtThresholdNs;                     // GPROF_OSRT_THRESHOLD
    uint64_t osrt_backtrace_threshold_ns = env::kDefaultOsrtBacktraceThresholdNs;  // GPROF_OSRT_BACKTRACE_THRESHOLD
    bool sample = true;           // GPROF_SAMPLE: process-tree (true) or none
    uint32_t sampling_frequency = env::kDefaultSamplingFrequency;  // GPROF_SAMPLING_FREQUENCY, Hz
    // Call sites (issue 18): frames per native stack, 0 = off. GPROF_BACKTRACE ("1" -> kDefaultBacktraceDepth, else
    // 1..64), or kDefaultBacktraceDepth when only GPROF_CUDABACKTRACE switches them on.
    uint32_t backtrace_depth = 0;
    // Which calls get one and from how long a call (GPROF_CUDABACKTRACE; GPROF_BACKTRACE alone: every call).
    env::CudaBacktraceSpec call_sites = env::CudaBacktraceSpec::every_call();
    uint32_t call_site_max_stacks = kDefaultCallSiteMaxStacks;  // GPROF_CALL_SITE_MAX_STACKS
    CaptureMode capture = CaptureMode::None;  // GPROF_CAPTURE_RANGE
    std::string capture_nvtx_name;
    std::string capture_nvtx_domain;          // empty = default domain
    bool capture_nvtx_any_domain = false;     // "NAME@*"
    CaptureRangeEnd capture_end = CaptureRangeEnd::Stop;  // GPROF_CAPTURE_RANGE_END
    uint32_t capture_end_count = 0;           // "repeat:N": N; 0 = no limit
    GraphTrace graph_trace = GraphTrace::Node;  // GPROF_CUDA_GRAPH_TRACE
    bool nested_driver_calls = false;         // GPROF_CUDA_NESTED_DRIVER_CALLS=1
    ApiSource api_source = ApiSource::Activity;  // GPROF_CUDA_API
    env::GpuMetricsDevices gpu_metrics_devices;  // GPROF_GPU_METRICS_DEVICES; none by default
    uint32_t gpu_metrics_hz = env::kGpuMetricsDefaultHz;  // GPROF_GPU_METRICS_FREQUENCY
    std::string gpu_metrics_set;              // GPROF_GPU_METRICS_SET; empty = each device's default (checked at use)
    uint32_t cupti_device_buffer_mb = 0;      // GPROF_CUPTI_DEVICE_BUFFER_MB; 0 = CUPTI's default
    uint32_t cupti_preallocate = 0;           // GPROF_CUPTI_PREALLOCATE; 0 = CUPTI's default
    bool cupti_zeroed_buffers = false;        // GPROF_CUPTI_ZEROED_BUFFERS=1
    double delay_sec = 0;         // GPROF_DELAY_SEC
    double duration_sec = 0;      // GPROF_DURATION_SEC; 0 = unlimited
    bool no_children = false;     // GPROF_NO_CHILDREN=1
    int64_t root_pid = 0;         // GPROF_ROOT_PID
    std::string log_level = "warn";  // GPROF_LOG_LEVEL
    bool status_in_summary = false;  // GPROF_STATUS_IN_SUMMARY=1: gprof-run's summary restates end-of-run warnings
    uint32_t flush_ms = 100;      // GPROF_FLUSH_MS, clamped to 10..200
    uint32_t buffer_mb = 8;       // GPROF_BUFFER_MB, clamped to 1..256

    std::vector<std::string> warnings;  // one line per value that was malformed and ignored

    // GPROF_NO_CHILDREN=1 and this process is not the root: stay fully inactive.
    bool inactive_for(int64_t pid) const { return no_children && root_pid != 0 && pid != root_pid; }
};

inline constexpr uint32_t kDefaultBacktraceDepth = env::kDefaultBacktraceDepth;

// getenv-like lookup; returns nullptr when unset.
using EnvLookup = const char* (*)(const char* name);

// Parses the environment (std::getenv by default). Allocates; call outside signal handlers.
Config parse_config(EnvLookup lookup = nullptr);

}  // namespace gprof::collector
