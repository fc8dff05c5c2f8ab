// Stable display names for the enumerations of records.h. Reports and tests use these; the JSON schema keys
// documented in docs/report-schema.md come from here, so changing a name is a schema change.
#pragma once

#include <string_view>

#include "gprof/trace/records.h"

namespace gprof::trace {

std::string_view record_kind_name(RecordKind kind);
// "HtoD", "DtoH", "DtoD", "PtoP", ... (nvprof's spelling, used in "[CUDA memcpy HtoD]").
std::string_view memcpy_kind_name(MemcpyKind kind);
// "Pageable", "Pinned", "Device", ...
std::string_view memory_kind_name(MemoryKind kind);
std::string_view sync_type_name(SyncType type);
std::string_view nvtx_type_name(NvtxType type);
std::string_view drop_source_name(DropSource source);
std::string_view capture_reason_name(CaptureReason reason);
std::string_view component_name(Component component);
std::string_view status_level_name(StatusLevel level);

}  // namespace gprof::trace
