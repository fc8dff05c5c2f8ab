// Helpers for the CUPTI callbacks that activities cannot replace: device properties when a context is created
// (through the driver that is already loaded; the collector never links libcuda) and API-entry backtraces.
#pragma once

#include <cstdint>

#include "gprof/trace/records.h"
#include "pipeline/pipeline.h"

namespace gprof::collector::cupti {

// Driver version (cuDriverGetVersion) of the libcuda already in the process; 0 when none is loaded.
uint32_t driver_version();

// Properties of device `ordinal` through the loaded libcuda. False when libcuda is not loaded or a query fails.
bool query_device(uint32_t ordinal, DeviceInfo& out);

// Return addresses of the calling thread, innermost first, skipping `skip` frames of our own. Uses libunwind's
// unw_backtrace (dlopen'ed: no link dependency), falling back to glibc's backtrace(). Returns the frame count.
uint32_t capture_backtrace(uint64_t* frames, uint32_t max_frames, uint32_t skip);

// Which unwinder capture_backtrace uses: "libunwind", "glibc" or "none".
const char* backtrace_unwinder();

}  // namespace gprof::collector::cupti
