// The environment variables through which gprof-run configures the collector inside the target.
// With values.h (one parser per value) and cuda_backtrace.h, this is the whole contract between the launcher
// (outside) and the injected library (inside); both depend on it, it on neither. docs/environment.md documents each
// variable for users.
#pragma once

namespace gprof::env {

// Set by the launcher so the CUDA driver, the NVTX loader and the dynamic loader bring the collector in.
inline constexpr const char* kCudaInjection = "CUDA_INJECTION64_PATH";
inline constexpr const char* kNvtxInjection = "NVTX_INJECTION64_PATH";
inline constexpr const char* kLdPreload = "LD_PRELOAD";

// Run directory: every profiled process writes <DIR>/<exe-basename>.<pid>.gprof there (O_EXCL; ".N" suffix
// appended if taken). Unset: the current directory.
inline constexpr const char* kOutputDir = "GPROF_OUTPUT_DIR";
// Identifier shared by every process of one gprof-run invocation; written into each trace header.
inline constexpr const char* kRunId = "GPROF_RUN_ID";
// What to record: comma list of "cuda", "nvtx", "osrt" (default "cuda,nvtx,osrt"); "none" records process metadata
// only (and CPU samples, which GPROF_SAMPLE switches).
inline constexpr const char* kTrace = "GPROF_TRACE";
// CPU sampling (nsys's -s/--sample): "process-tree" (default: every thread of every traced process) or "none".
inline constexpr const char* kSample = "GPROF_SAMPLE";
// Samples per second of each thread's CPU time, 100-8000 (default 1000; nsys's --sampling-frequency).
inline constexpr const char* kSamplingFrequency = "GPROF_SAMPLING_FREQUENCY";
// OS-runtime calls (GPROF_TRACE's osrt): nanoseconds a call must last to be recorded (default 1000, nsys's
// --osrt-threshold), and to be recorded with its call site (default 80000, nsys's --osrt-backtrace-threshold).
inline constexpr const char* kOsrtThreshold = "GPROF_OSRT_THRESHOLD";
inline constexpr const char* kOsrtBacktraceThreshold = "GPROF_OSRT_BACKTRACE_THRESHOLD";
// Backtraces of CUDA API calls: unset/"0" off, "1" on (default depth), or a depth in frames (max 64).
inline constexpr const char* kBacktrace = "GPROF_BACKTRACE";
// Which CUDA API calls get a call site, nsys's --cudabacktrace form (gprof/env/cuda_backtrace.h): a comma list of
// all|kernel|memory|sync|other[:THRESHOLD_NS], or none. Set: call sites on for those calls (depth from
// GPROF_BACKTRACE when set, else 16 frames). Unset: GPROF_BACKTRACE alone means every call, no threshold.
inline constexpr const char* kCudaBacktrace = "GPROF_CUDABACKTRACE";
// The bound of the collector's table of distinct call stacks (default 65536; tests lower it): past it a call's
// CallSite names stack 0 and the loss is counted and reported.
inline constexpr const char* kCallSiteMaxStacks = "GPROF_CALL_SITE_MAX_STACKS";
// "none" (default), "cudaProfilerApi", or "nvtx:NAME" / "nvtx:NAME@DOMAIN" / "nvtx:NAME@*" (any domain).
inline constexpr const char* kCaptureRange = "GPROF_CAPTURE_RANGE";
// What ends a capture range: "stop" (default: recording ends with the first range), "repeat" / "repeat:N" (each
// later range records again, at most N ranges in all), "none" (the first range opens recording for good).
inline constexpr const char* kCaptureRangeEnd = "GPROF_CAPTURE_RANGE_END";
// CUDA graphs: "node" (default: every kernel, memcpy and memset of every graph launch, with graph and node ids)
// or "graph" (one GPU record per graph launch; cheaper, nodes not seen).
inline constexpr const char* kCudaGraphTrace = "GPROF_CUDA_GRAPH_TRACE";
// "1": also record the driver calls the CUDA runtime makes internally (cuKernelGetName, cuGetProcAddress, ...),
// which are switched off at the source by default.
inline constexpr const char* kCudaNestedDriverCalls = "GPROF_CUDA_NESTED_DRIVER_CALLS";
// Where CUDA API calls are recorded from (issue 17, the overhead alternatives): "activity" (default: CUPTI's RUNTIME
// and DRIVER activity records), "callback" (CUPTI's API callbacks, timed by the collector on the calling thread) or
// "off" (no API records; GPU work only, for measuring what API tracing costs).
inline constexpr const char* kCudaApi = "GPROF_CUDA_API";
// CUPTI's activity buffer attributes (cuptiActivitySetAttribute), unset = CUPTI's default: device buffer size in
// MiB (DEVICE_BUFFER_SIZE), device buffers pre-allocated per context (DEVICE_BUFFER_PRE_ALLOCATE_VALUE), and "1":
// the collector hands CUPTI zeroed host buffers (ZEROED_OUT_ACTIVITY_BUFFER), so CUPTI does not zero them on the
// application's thread.
inline constexpr const char* kCuptiDeviceBufferMb = "GPROF_CUPTI_DEVICE_BUFFER_MB";
inline constexpr const char* kCuptiPreallocate = "GPROF_CUPTI_PREALLOCATE";
inline constexpr const char* kCuptiZeroedBuffers = "GPROF_CUPTI_ZEROED_BUFFERS";
// GPU metrics (issue 37, nsys's --gpu-metrics-*): which devices to sample (values.h: none, all or N[,N]; unset =
// none), how often (Hz, default 10000) and which metric set (unset: each device's default for its chip).
inline constexpr const char* kGpuMetricsDevices = "GPROF_GPU_METRICS_DEVICES";
inline constexpr const char* kGpuMetricsFrequency = "GPROF_GPU_METRICS_FREQUENCY";
inline constexpr const char* kGpuMetricsSet = "GPROF_GPU_METRICS_SET";
// Seconds (decimal) after process start before recording begins / after which recording stops.
inline constexpr const char* kDelay = "GPROF_DELAY_SEC";
inline constexpr const char* kDuration = "GPROF_DURATION_SEC";
// "1": only the process whose pid equals GPROF_ROOT_PID records; its children stay untraced.
inline constexpr const char* kNoChildren = "GPROF_NO_CHILDREN";
inline constexpr const char* kRootPid = "GPROF_ROOT_PID";
// spdlog level for the collector's own messages on stderr: trace|debug|info|warn|error|off (default warn).
inline constexpr const char* kLogLevel = "GPROF_LOG_LEVEL";
// "1" (set by gprof-run): the launcher prints the trace's warning Status records in its summary, so the collector
// does not also write to stderr the warnings it only restates at the end (why CUDA was not recorded). Unset, as when
// the collector is injected by hand, that stderr line is the only place the reason shows.
inline constexpr const char* kStatusInSummary = "GPROF_STATUS_IN_SUMMARY";
// Explicit libcupti to load instead of the usual search (read by the CUPTI loader itself).
inline constexpr const char* kCuptiLib = "GPROF_CUPTI_LIB";
// Site-packages directories of the Python environments the program uses, ':'-separated, most specific first: the
// CUPTI search looks there for the libcupti that pip installed (PyTorch's nvidia CUPTI wheels) before CUDA_HOME and
// /usr/local/cuda (docs/cupti.md). Set by gprof-run (launcher/src/python_env.h) unless already set.
inline constexpr const char* kPythonSitePackages = "GPROF_PYTHON_SITE_PACKAGES";
// Period of the background flush in milliseconds (default 100, clamped to 10..200).
inline constexpr const char* kFlushMs = "GPROF_FLUSH_MS";
// Size of each CUPTI activity buffer in MiB (default 8).
inline constexpr const char* kBufferMb = "GPROF_BUFFER_MB";
// For tests only: the host identity the trace header records, "NAME" or "NAME/BOOT_ID", instead of gethostname()
// and the kernel's boot id. Lets one machine stand for several hosts where UTS namespaces (unshare -u) are not
// available. Never set it in a real run: reports tell processes of different hosts apart by this identity.
inline constexpr const char* kTestHost = "GPROF_TEST_HOST";

}  // namespace gprof::env
