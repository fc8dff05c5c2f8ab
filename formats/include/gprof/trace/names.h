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
std::string_view api_domain_name(ApiDomain domain);         // "runtime", "driver"
std::string_view capture_action_name(CaptureAction action); // "start", "stop"
std::string_view memory_op_name(MemoryOp op);               // "allocation", "release"
std::string_view memory_pool_op_name(MemoryPoolOp op);      // "created", "destroyed", "trimmed"
std::string_view memory_pool_type_name(MemoryPoolType type);  // "none", "local", "imported"
std::string_view nvtx_payload_name(NvtxPayload payload);    // "none", "u64", "i64", "double", ...
std::string_view trace_clock_name(TraceClock clock);        // "realtime", "monotonic"
// "traced", "static", "foreign", "privileged", "no_collector"
std::string_view exec_image_name(ExecImage image);

}  // namespace gprof::trace
