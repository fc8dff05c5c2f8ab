// Helpers for the CUPTI callbacks that activities cannot replace: device properties when a context is created
// (through the driver that is already loaded; the collector never links libcuda). Call sites: call_stacks.h.
#pragma once

#include <cstdint>

#include "gprof/trace/records.h"
#include "pipeline/pipeline.h"

namespace gprof::collector::cupti {

// Driver version (cuDriverGetVersion) of the libcuda already in the process; 0 when none is loaded.
uint32_t driver_version();

// Properties of device `ordinal` through the loaded libcuda. False when libcuda is not loaded or a query fails.
bool query_device(uint32_t ordinal, DeviceInfo& out);

}  // namespace gprof::collector::cupti
