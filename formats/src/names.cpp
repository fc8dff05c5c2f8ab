#include "gprof/trace/names.h"

namespace gprof::trace {

std::string_view record_kind_name(RecordKind kind) {
    switch (kind) {
        case RecordKind::Header: return "header";
        case RecordKind::String: return "string";
#define GPROF_TRACE_KIND_NAME(Kind, number, member, name) \
    case RecordKind::Kind: return name;
        GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_KIND_NAME)
#undef GPROF_TRACE_KIND_NAME
    }
    return "unknown";
}

std::string_view memcpy_kind_name(MemcpyKind kind) {
    switch (kind) {
        case MemcpyKind::HtoD: return "HtoD";
        case MemcpyKind::DtoH: return "DtoH";
        case MemcpyKind::HtoA: return "HtoA";
        case MemcpyKind::AtoH: return "AtoH";
        case MemcpyKind::AtoA: return "AtoA";
        case MemcpyKind::AtoD: return "AtoD";
        case MemcpyKind::DtoA: return "DtoA";
        case MemcpyKind::DtoD: return "DtoD";
        case MemcpyKind::HtoH: return "HtoH";
        case MemcpyKind::PtoP: return "PtoP";
        case MemcpyKind::Unknown: break;
    }
    return "Unknown";
}

std::string_view memory_kind_name(MemoryKind kind) {
    switch (kind) {
        case MemoryKind::Pageable: return "Pageable";
        case MemoryKind::Pinned: return "Pinned";
        case MemoryKind::Device: return "Device";
        case MemoryKind::Array: return "Array";
        case MemoryKind::Managed: return "Managed";
        case MemoryKind::DeviceStatic: return "DeviceStatic";
        case MemoryKind::ManagedStatic: return "ManagedStatic";
        case MemoryKind::Unknown: break;
    }
    return "Unknown";
}

std::string_view sync_type_name(SyncType type) {
    switch (type) {
        case SyncType::EventSynchronize: return "EventSynchronize";
        case SyncType::StreamWaitEvent: return "StreamWaitEvent";
        case SyncType::StreamSynchronize: return "StreamSynchronize";
        case SyncType::ContextSynchronize: return "ContextSynchronize";
        case SyncType::Unknown: break;
    }
    return "Unknown";
}

std::string_view nvtx_type_name(NvtxType type) {
    switch (type) {
        case NvtxType::PushPop: return "PushPop";
        case NvtxType::StartEnd: return "StartEnd";
        case NvtxType::Mark: return "Mark";
    }
    return "Unknown";
}

std::string_view drop_source_name(DropSource source) {
    switch (source) {
        case DropSource::CuptiBuffer: return "cupti_buffer";
        case DropSource::CollectorQueue: return "collector_queue";
        case DropSource::WriteError: return "write_error";
        case DropSource::NvtxOverflow: return "nvtx_overflow";
    }
    return "unknown";
}

std::string_view capture_reason_name(CaptureReason reason) {
    switch (reason) {
        case CaptureReason::SessionStart: return "session_start";
        case CaptureReason::ProfilerApi: return "profiler_api";
        case CaptureReason::NvtxRange: return "nvtx_range";
        case CaptureReason::Delay: return "delay";
        case CaptureReason::Duration: return "duration";
        case CaptureReason::ProcessExit: return "process_exit";
    }
    return "unknown";
}

std::string_view component_name(Component component) {
    switch (component) {
        case Component::Collector: return "collector";
        case Component::Cupti: return "cupti";
        case Component::Nvtx: return "nvtx";
        case Component::Driver: return "driver";
        case Component::Writer: return "writer";
    }
    return "unknown";
}

std::string_view status_level_name(StatusLevel level) {
    switch (level) {
        case StatusLevel::Info: return "info";
        case StatusLevel::Warning: return "warning";
        case StatusLevel::Error: return "error";
    }
    return "unknown";
}

std::string_view api_domain_name(ApiDomain domain) {
    switch (domain) {
        case ApiDomain::Runtime: return "runtime";
        case ApiDomain::Driver: return "driver";
    }
    return "unknown";
}

std::string_view capture_action_name(CaptureAction action) {
    switch (action) {
        case CaptureAction::Start: return "start";
        case CaptureAction::Stop: return "stop";
    }
    return "unknown";
}

std::string_view memory_op_name(MemoryOp op) {
    switch (op) {
        case MemoryOp::Allocation: return "allocation";
        case MemoryOp::Release: return "release";
        case MemoryOp::Unknown: break;
    }
    return "unknown";
}

std::string_view memory_pool_op_name(MemoryPoolOp op) {
    switch (op) {
        case MemoryPoolOp::Created: return "created";
        case MemoryPoolOp::Destroyed: return "destroyed";
        case MemoryPoolOp::Trimmed: return "trimmed";
        case MemoryPoolOp::Unknown: break;
    }
    return "unknown";
}

std::string_view memory_pool_type_name(MemoryPoolType type) {
    switch (type) {
        case MemoryPoolType::None: return "none";
        case MemoryPoolType::Local: return "local";
        case MemoryPoolType::Imported: return "imported";
    }
    return "unknown";
}

std::string_view exec_image_name(ExecImage image) {
    switch (image) {
        case ExecImage::Traced: return "traced";
        case ExecImage::Static: return "static";
        case ExecImage::Foreign: return "foreign";
        case ExecImage::Privileged: return "privileged";
        case ExecImage::NoCollector: return "no_collector";
    }
    return "unknown";
}

std::string_view nvtx_payload_name(NvtxPayload payload) {
    switch (payload) {
        case NvtxPayload::None: return "none";
        case NvtxPayload::U64: return "u64";
        case NvtxPayload::I64: return "i64";
        case NvtxPayload::Double: return "double";
        case NvtxPayload::U32: return "u32";
        case NvtxPayload::I32: return "i32";
        case NvtxPayload::Float: return "float";
    }
    return "unknown";
}

std::string_view trace_clock_name(TraceClock clock) {
    switch (clock) {
        case TraceClock::Realtime: return "realtime";
        case TraceClock::Monotonic: return "monotonic";
    }
    return "unknown";
}

}  // namespace gprof::trace
