// Small helpers shared by `analyze` and `diff`: what CUDA API names mean for a bottleneck (sync, launch,
// allocation, implicit synchronisation, data loading). Kernel display names: demangle() in model/names.h.
#pragma once

#include <string>
#include <string_view>

namespace gprof::report {

// The host waits for the device: cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize and the
// driver equivalents, plus synchronous (non-Async) memcpy calls.
bool is_sync_api(std::string_view api);
// A synchronous memcpy API (cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD_v2, ...): blocks until the copy is done.
bool is_sync_memcpy_api(std::string_view api);
// A kernel or graph launch (runtime or driver).
bool is_launch_api(std::string_view api);
// Device or pinned-host allocation / release.
bool is_alloc_api(std::string_view api);
// Calls documented to synchronise the device implicitly (cudaFree, cudaMallocHost, non-async cudaMemset, ...).
bool is_implicit_sync_api(std::string_view api);
// NVTX range names that mean host-side data loading (dataloader, data_load, load_batch, prefetch...).
bool is_data_loading_range(std::string_view name);

}  // namespace gprof::report
