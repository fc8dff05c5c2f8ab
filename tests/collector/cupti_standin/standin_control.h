// Control functions of the CUPTI stand-in (libgprof-test-cupti-standin.so). A test program reaches them with
// dlsym on the stand-in's handle; their names all start with gprof_test_standin_.
//
// What the stand-in models of the real CUPTI is listed at the top of standin.cpp.
//
// Scenario flags come from GPROF_TEST_STANDIN_SCRIPT (comma list), read on the first CUPTI call:
//   multiple-subscribers   cuptiSubscribe returns CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
//   holder=TEXT            ... and cuptiSubscribe_v2 names TEXT as the subscriber holding CUPTI
//   no-device              cuptiSubscribe returns CUPTI_ERROR_INVALID_DEVICE
//   no-driver              cuptiSubscribe returns what a machine without a driver gives: CUPTI_ERROR_UNKNOWN from
//                          13, CUPTI_ERROR_NOT_INITIALIZED from 12.x (the personalities: top of standin.cpp)
//   insufficient-privileges cuptiSubscribe returns CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
//   enable-fails           every cuptiActivityEnable returns CUPTI_ERROR_NOT_SUPPORTED
//   kernel-enable-fails    only CONCURRENT_KERNEL fails to enable
//   no-timestamp-callback  cuptiActivityRegisterTimestampCallback returns CUPTI_ERROR_NOT_SUPPORTED
//   old-version            cuptiGetVersion reports 18 (CUDA 11.8's CUPTI: older than any gprof-run supports)
//   flush-hang             cuptiActivityFlushAll with the forced flag sleeps for an hour (watchdog tests)
//   drop=N                 the first completed buffer reports N dropped records
//   workload=N             after a successful cuptiActivityRegisterCallbacks, a stand-in thread plays N
//                          iterations of {cudaLaunchKernel + kernel, cudaMemcpy + memcpy} once the collector
//                          has enabled the kinds (used by end-to-end tests)
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// ---- play the application's CUDA work (records go to the current activity buffer of enabled kinds) ----
// A runtime API call (cbid of cupti_runtime_cbid.h), with enter/exit callbacks when enabled. Returns its
// correlation id.
uint32_t gprof_test_standin_runtime_call(uint32_t cbid);
uint32_t gprof_test_standin_driver_call(uint32_t cbid);
// A runtime call whose body takes `ns` nanoseconds (busy, on the calling thread): a synchronisation that waits.
uint32_t gprof_test_standin_blocking_call(uint32_t cbid, uint64_t ns);
// cudaGetDeviceCount; the first call in the process initialises the runtime first: `driver_calls` driver calls
// (cuDriverGetVersion) made inside libc's pthread_once, as libcudart.so's initialisation is (seen on an H200).
// Returns cudaGetDeviceCount's correlation id.
uint32_t gprof_test_standin_runtime_first_call(uint32_t driver_calls);
// cudaLaunchKernel + its CONCURRENT_KERNEL record, after the runtime's own driver calls (cuKernelGetName; the
// first launch of a name also cuLibraryLoadData + cuLibraryGetKernel). Returns the correlation id.
uint32_t gprof_test_standin_launch_kernel(const char* name, uint32_t stream);
// cuLaunchKernel made by the program itself (Triton, JAX): a driver record + the kernel. Returns its correlation id.
uint32_t gprof_test_standin_driver_launch_kernel(const char* name, uint32_t stream);
// One launch of a CUDA graph of `memsets` memset, `kernels` kernel (named `kernel`) and `memcpys` memcpy nodes, in
// that order, through cudaGraphLaunch (driver_api = 0) or the program's own cuGraphLaunch (1). Node records carry
// graph_id, node ids (graph_id << 32 | 1..n) and the launch's correlation id; while GRAPH_TRACE is enabled there
// is one CUpti_ActivityGraphTrace2 record instead. Returns the launch's correlation id.
uint32_t gprof_test_standin_graph_launch(uint32_t graph_id, const char* kernel, uint32_t kernels, uint32_t memsets,
                                         uint32_t memcpys, uint32_t stream, int driver_api);
// cudaMemcpy + its MEMCPY record (copy_kind a CUpti_ActivityMemcpyKind).
uint32_t gprof_test_standin_memcpy(uint64_t bytes, uint32_t copy_kind);
uint32_t gprof_test_standin_memset(uint64_t bytes, uint32_t value);
// An allocation (release = 0) or release through runtime call `runtime_cbid` (cudaMalloc, cudaMallocHost, ...)
// + its MEMORY2 record of `memory_kind` (a CUpti_ActivityMemoryKind). from_pool: cudaMallocAsync/cudaFreeAsync
// from the device's default pool (isAsync, pool configuration; the pool's MEMORY_POOL "created" record comes with
// its first use). Returns the call's correlation id.
uint32_t gprof_test_standin_memory(uint32_t runtime_cbid, int release, uint32_t memory_kind, uint64_t address,
                                   uint64_t bytes, int from_pool);
// cudaMemPoolTrimTo on the default pool + its MEMORY_POOL "trimmed" record. Returns the correlation id.
uint32_t gprof_test_standin_pool_trim(uint64_t min_bytes_to_keep);
// cudaProfilerStart / cudaProfilerStop: runtime callbacks around the driver's cuProfilerStart/Stop.
void gprof_test_standin_profiler_start();
void gprof_test_standin_profiler_stop();
// cudaDeviceReset (exit callback only; the collector flushes there).
void gprof_test_standin_device_reset();
// The resource callback for a new context on device `device`.
void gprof_test_standin_context_created(uint32_t device);
// Records CUPTI "lost": reported by cuptiActivityGetNumDroppedRecords for the next completed buffer.
void gprof_test_standin_add_dropped(uint64_t count);
// CUPTI's worker completing the current buffer (on the calling thread).
void gprof_test_standin_complete_buffer();

// ---- inspect what the collector did ----
int gprof_test_standin_subscribed();
// PM sampling (pm_sampling.cpp): the value `metric` has in the samples taken from now on.
void gprof_test_standin_pm_set(const char* metric, double value);
uint64_t gprof_test_standin_refused_subscriptions();  // cuptiSubscribe(_v2) calls refused
int gprof_test_standin_kind_enabled(uint32_t kind);
int gprof_test_standin_timestamp_callback_registered();
int gprof_test_standin_runtime_api_filtered(uint32_t cbid);  // disabled by cuptiActivityEnableRuntimeApi
int gprof_test_standin_driver_api_filtered(uint32_t cbid);   // disabled by cuptiActivityEnableDriverApi
uint64_t gprof_test_standin_buffers_requested();
uint64_t gprof_test_standin_buffers_completed();
uint64_t gprof_test_standin_buffers_refused();  // buffer requests answered with no buffer
uint64_t gprof_test_standin_flushes(int forced);
uint64_t gprof_test_standin_records_emitted();
// The value cuptiActivitySetAttribute set (DEVICE_BUFFER_SIZE, DEVICE_BUFFER_PRE_ALLOCATE_VALUE,
// ZEROED_OUT_ACTIVITY_BUFFER), CUPTI's default before.
uint64_t gprof_test_standin_attribute(uint32_t attr);
uint64_t gprof_test_standin_buffers_zeroed_by_cupti();   // zeroed by the stand-in on the requesting thread
uint64_t gprof_test_standin_dirty_buffers_supplied();    // promised zeroed (attribute 1) but were not
int gprof_test_standin_callback_enabled(uint32_t domain, uint32_t cbid);
// TSC ticks spent inside the client's callbacks and their number since the process started: which = 0 API
// callbacks, 1 buffer requested, 2 buffer completed (never reset: read before and after).
uint64_t gprof_test_standin_client_ticks(int which);
uint64_t gprof_test_standin_client_calls(int which);
// Clears recorded state and re-reads GPROF_TEST_STANDIN_SCRIPT (tests in one process).
void gprof_test_standin_reset();

// ---- PM sampling (pm_sampling.cpp; 13.0 and 12.9 only) ----
// The value `metric` (a GH100 metric name) has in the samples taken from now on (0 until set). Scripts read at each
// cuptiPmSamplingEnable: pm-insufficient-privileges, pm-hardware-busy, pm-mig.
void gprof_test_standin_pm_set(const char* metric, double value);
}
