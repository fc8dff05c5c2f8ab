// The collector's configuration: the environment variables of gprof/inject/environment.h, parsed once at
// initialisation into a plain struct. Parsing never throws and never fails: a malformed value falls back to
// its default and leaves a note in `warnings` (logged and written to the trace as Status records).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gprof/inject/cuda_backtrace.h"

namespace gprof::collector {

enum class CaptureMode : uint8_t {
    None = 0,             // record from the start
    CudaProfilerApi = 1,  // only between cudaProfilerStart and cudaProfilerStop
    NvtxRange = 2,        // only inside the NVTX range named capture_nvtx_name (in capture_nvtx_domain)
};

// What ends a capture range (GPROF_CAPTURE_RANGE_END; nsys's --capture-range-end).
enum class CaptureRangeEnd : uint8_t {
    Stop = 0,    // recording ends with the first range; later ranges are ignored
    Repeat = 1,  // every later range records again (at most capture_end_count ranges when that is not 0)
    None = 2,    // the first range opens recording and nothing closes it
};

// How CUDA graph launches are recorded (GPROF_CUDA_GRAPH_TRACE; nsys's --cuda-graph-trace).
enum class GraphTrace : uint8_t {
    Node = 0,   // every kernel/memcpy/memset node of every launch, with graph and node ids
    Graph = 1,  // one GraphLaunch record per launch (CUPTI_ACTIVITY_KIND_GRAPH_TRACE), no node records
};

// Where CUDA API call records come from (GPROF_CUDA_API): the overhead alternatives of issue 17.
enum class ApiSource : uint8_t {
    Activity = 0,  // CUPTI's RUNTIME and DRIVER activity kinds (CUPTI stamps and buffers them)
    Callback = 1,  // CUPTI's RUNTIME_API/DRIVER_API callbacks; the collector stamps and buffers them itself
    Off = 2,       // no API records at all (GPU activity only)
};

// The bound of the table of distinct call stacks (collector/cupti/call_sites.h).
inline constexpr uint32_t kDefaultCallSiteMaxStacks = 65536;

struct Config {
    std::string output_dir;       // GPROF_OUTPUT_DIR; empty = current directory
    std::string run_id;           // GPROF_RUN_ID
    bool trace_cuda = true;       // GPROF_TRACE contains "cuda"
    bool trace_nvtx = true;       // GPROF_TRACE contains "nvtx"
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
    uint32_t cupti_device_buffer_mb = 0;      // GPROF_CUPTI_DEVICE_BUFFER_MB; 0 = CUPTI's default
    uint32_t cupti_preallocate = 0;           // GPROF_CUPTI_PREALLOCATE; 0 = CUPTI's default
    bool cupti_zeroed_buffers = false;        // GPROF_CUPTI_ZEROED_BUFFERS=1
    double delay_sec = 0;         // GPROF_DELAY_SEC
    double duration_sec = 0;      // GPROF_DURATION_SEC; 0 = unlimited
    bool no_children = false;     // GPROF_NO_CHILDREN=1
    int64_t root_pid = 0;         // GPROF_ROOT_PID
    std::string log_level = "warn";  // GPROF_LOG_LEVEL
    uint32_t flush_ms = 100;      // GPROF_FLUSH_MS, clamped to 10..200
    uint32_t buffer_mb = 8;       // GPROF_BUFFER_MB, clamped to 1..256

    std::vector<std::string> warnings;  // one line per value that was malformed and ignored

    // GPROF_NO_CHILDREN=1 and this process is not the root: stay fully inactive.
    bool inactive_for(int64_t pid) const { return no_children && root_pid != 0 && pid != root_pid; }
};

inline constexpr uint32_t kDefaultBacktraceDepth = 16;

// getenv-like lookup; returns nullptr when unset.
using EnvLookup = const char* (*)(const char* name);

// Parses the environment (std::getenv by default). Allocates; call outside signal handlers.
Config parse_config(EnvLookup lookup = nullptr);

}  // namespace gprof::collector
