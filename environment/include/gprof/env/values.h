// The values of the contract's variables (gprof/env/variables.h): one parse_... per variable that gprof-run sets
// and the collector reads, used by both. gprof-run checks a command-line value with it before it sets the variable;
// the collector reads the variable with it. So the two sides cannot disagree on what a value means.
//
// Each parse_... returns true and fills `out` for a valid text, and false (leaving `out` as it was) otherwise. The
// words each side prints about a bad value stay its own (gprof-run names its option, the collector its variable),
// except where a k..._expected text below is the one description of the grammar.
//
// Linked into the collector too: nothing here throws on bad input, and nothing is allocated except the strings
// of the parsed values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gprof::env {

// GPROF_TRACE: what to record, a comma list of cuda, nvtx, osrt (spaces around items allowed), or none.
struct TraceSelection {
    bool cuda = true;
    bool nvtx = true;
    bool osrt = true;  // OS-runtime calls (nsys's osrt): blocking libc calls over a threshold
};
bool parse_trace(std::string_view text, TraceSelection& out);
// The value gprof-run sets for a selection: its items in the order cuda, nvtx, osrt ("cuda,nvtx,osrt"), or "none".
std::string trace_text(TraceSelection selection);

// GPROF_SAMPLE (nsys's -s/--sample): process-tree (sample every thread of every traced process) or none.
bool parse_sample(std::string_view text, bool& on);
inline constexpr const char* kSampleExpected = "process-tree or none";

// GPROF_SAMPLING_FREQUENCY (nsys's --sampling-frequency): samples per second of each thread's CPU time.
inline constexpr uint32_t kDefaultSamplingFrequency = 1000;
inline constexpr uint32_t kMinSamplingFrequency = 100;
inline constexpr uint32_t kMaxSamplingFrequency = 8000;
bool parse_sampling_frequency(std::string_view text, uint32_t& hz);
inline constexpr const char* kSamplingFrequencyExpected = "a rate from 100 to 8000 Hz";

// GPROF_OSRT_THRESHOLD / GPROF_OSRT_BACKTRACE_THRESHOLD (nsys's --osrt-threshold, --osrt-backtrace-threshold):
// nanoseconds an OS-runtime call must last to be recorded / to be recorded with its call site.
inline constexpr uint64_t kDefaultOsrtThresholdNs = 1000;
inline constexpr uint64_t kDefaultOsrtBacktraceThresholdNs = 80000;
bool parse_nanoseconds(std::string_view text, uint64_t& ns);

// GPROF_BACKTRACE: "0" off, "1" the default depth, N a depth in frames (more than kMaxBacktraceDepth is taken as
// kMaxBacktraceDepth).
inline constexpr uint32_t kDefaultBacktraceDepth = 16;
inline constexpr uint32_t kMaxBacktraceDepth = 64;
bool parse_backtrace(std::string_view text, uint32_t& depth);
// GPROF_CUDABACKTRACE: gprof/env/cuda_backtrace.h.

// GPROF_CAPTURE_RANGE: none, cudaProfilerApi, nvtx:NAME, nvtx:NAME@DOMAIN or nvtx:NAME@* (any domain). NAME and
// DOMAIN are not empty.
enum class CaptureMode : uint8_t {
    None = 0,             // record from the start
    CudaProfilerApi = 1,  // only between cudaProfilerStart and cudaProfilerStop
    NvtxRange = 2,        // only inside the NVTX range named nvtx_name (in nvtx_domain)
};
struct CaptureRange {
    CaptureMode mode = CaptureMode::None;
    std::string nvtx_name;
    std::string nvtx_domain;       // empty = the default domain
    bool nvtx_any_domain = false;  // "NAME@*"
};
bool parse_capture_range(std::string_view text, CaptureRange& out);

// GPROF_CAPTURE_RANGE_END (nsys's --capture-range-end): stop, repeat, repeat:N (1 <= N < 2^32) or none.
enum class CaptureRangeEnd : uint8_t {
    Stop = 0,    // recording ends with the first range; later ranges are ignored
    Repeat = 1,  // every later range records again (at most `count` ranges when that is not 0)
    None = 2,    // the first range opens recording and nothing closes it
};
struct CaptureEnd {
    CaptureRangeEnd end = CaptureRangeEnd::Stop;
    uint32_t count = 0;  // "repeat:N": N; 0 = no limit
};
bool parse_capture_range_end(std::string_view text, CaptureEnd& out);
inline constexpr const char* kCaptureRangeEndExpected = "stop, repeat, repeat:N (N >= 1) or none";

// GPROF_CUDA_GRAPH_TRACE (nsys's --cuda-graph-trace): node or graph.
enum class GraphTrace : uint8_t {
    Node = 0,   // every kernel/memcpy/memset node of every launch, with graph and node ids
    Graph = 1,  // one GraphLaunch record per launch (CUPTI_ACTIVITY_KIND_GRAPH_TRACE), no node records
};
bool parse_graph_trace(std::string_view text, GraphTrace& out);
inline constexpr const char* kGraphTraceExpected = "node or graph";

// GPROF_CUDA_API: where CUDA API call records come from (the overhead alternatives of issue 17).
enum class ApiSource : uint8_t {
    Activity = 0,  // CUPTI's RUNTIME and DRIVER activity kinds (CUPTI stamps and buffers them)
    Callback = 1,  // CUPTI's RUNTIME_API/DRIVER_API callbacks; the collector stamps and buffers them itself
    Off = 2,       // no API records at all (GPU activity only)
};
bool parse_api_source(std::string_view text, ApiSource& out);
inline constexpr const char* kApiSourceExpected = "activity, callback or off";

// GPROF_DELAY_SEC, GPROF_DURATION_SEC: decimal seconds, digits with an optional fraction ("2", "0.5").
bool parse_seconds(std::string_view text, double& out);

// GPROF_CUDA_NESTED_DRIVER_CALLS, GPROF_CUPTI_ZEROED_BUFFERS: "0" or "1".
bool parse_switch(std::string_view text, bool& out);

// GPROF_LOG_LEVEL: trace, debug, info, warn, error or off.
bool is_log_level(std::string_view text);

// GPROF_GPU_METRICS_DEVICES (nsys's --gpu-metrics-devices): none, all, or a comma list of CUDA device numbers
// (the process's ordinals, as cudaSetDevice takes them) 0..63, each at most once.
struct GpuMetricsDevices {
    bool all = false;
    uint64_t listed = 0;  // bit d: device d
    bool any() const { return all || listed != 0; }
    bool has(uint32_t device) const { return all || (device < 64 && (listed >> device) & 1u); }
};
bool parse_gpu_metrics_devices(std::string_view text, GpuMetricsDevices& out);
inline constexpr const char* kGpuMetricsDevicesExpected =
    "none, all or a comma list of CUDA device numbers 0-63 (each once)";
// GPROF_GPU_METRICS_FREQUENCY (nsys's --gpu-metrics-frequency): samples per second, 10..200000, default 10000.
inline constexpr uint32_t kGpuMetricsMinHz = 10;
inline constexpr uint32_t kGpuMetricsMaxHz = 200000;
inline constexpr uint32_t kGpuMetricsDefaultHz = 10000;
bool parse_gpu_metrics_frequency(std::string_view text, uint32_t& hz);
inline constexpr const char* kGpuMetricsFrequencyExpected = "a rate from 10 to 200000 Hz";
// GPROF_GPU_METRICS_SET: a set's name; the names are collector/metrics/metric_sets.h's list, which both sides check
// against (unset: each device's default set for its chip).

// A plain decimal count (GPROF_ROOT_PID, sizes, periods): digits only, at most 19 of them.
bool parse_count(std::string_view text, uint64_t& out);

}  // namespace gprof::env
