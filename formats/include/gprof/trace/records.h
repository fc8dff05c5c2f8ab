// The decoded form of every record a gprof-run trace holds.
//
// This header is the contract between the collector (inside the target process) and everything that reads
// traces (outside it). Plain structs only: no allocation, no exceptions, so the in-target writer can use them.
// Enumerations that mirror CUPTI keep CUPTI's numeric values, so translation from an activity record is a copy
// and a reader never needs cupti headers. docs/trace-format.md describes the on-disk encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gprof::trace {

// Format version. A reader accepts any minor of its own major (fields and record kinds are only ever appended,
// and every record carries its length so unknown ones are skipped); a newer major is refused with both numbers.
// 1.1: Memory records gained async and the memory pool fields (pool_*); the MemoryPool kind (22: a cudaMallocAsync
//      pool created, destroyed or trimmed, CUPTI_ACTIVITY_KIND_MEMORY_POOL); feature bit kFeatureNestedDriverCalls.
// 1.2: record kinds Exec (23: a process replaced its image, or started one that cannot be traced) and Role (24: the
//      process's rank in a distributed job); End gained `signal` (the trace was finished because that signal
//      ended the process).
// 1.3: the header gained boot_id (with the host name and pid, the key that tells processes of a multi-host job
//      apart); Role gained `job` (SLURM_JOB_ID).
inline constexpr uint16_t kFormatMajor = 1;
// 1.4: call sites, interned: record kinds Stack (25: a native call stack), PyFrame (26: one Python code location),
//      PyStack (27: a Python call stack) and CallSite (28: the stacks of one API call). Backtrace (16) is no longer
//      written by the collector; readers still read it.
// 1.5: CPU sampling and OS-runtime calls: record kinds CpuSample (29: where one thread was on the CPU, with the CPU
//      time the sample stands for) and OsRuntimeCall (30: a blocking libc call that lasted at least the threshold),
//      both naming Stack and PyStack records as CallSite does.
// 1.6: the header gained pid_ns (the inode of the process's pid namespace): containers on one host number their
//      processes from 1 each, and share the host name and boot id (Kubernetes pods with hostNetwork).
// 1.7: GPU metrics over time (PM sampling): record kinds GpuMetricSet (31: a device's sampled metrics, the columns
//      once) and GpuMetricSample (32: one sampling interval of a device, the values in its set's order); field
//      encoding `reals` (doubles).
inline constexpr uint16_t kFormatMinor = 7;

// Feature bits in the file preamble. The low 16 are "required": a reader that does not know one must refuse
// the file. The high 16 are informational.
enum FeatureBits : uint32_t {
    kFeatureRequiredMask = 0x0000FFFFu,
    kFeatureBacktraces = 1u << 16,  // API calls may carry call sites (CallSite records; Backtrace before 1.4)
    // The driver calls the CUDA runtime makes internally (cuKernelGetName, cuGetProcAddress, ...) were recorded on
    // request (GPROF_CUDA_NESTED_DRIVER_CALLS=1): reports show them. Without the bit a 1.1+ collector switched them
    // off at the source; traces of 1.0 hold them unfiltered.
    kFeatureNestedDriverCalls = 1u << 17,
    // What was not traced on request (GPROF_TRACE without cuda / without nvtx, gprof-run -t): reports then say
    // "not traced" instead of "the program made no CUDA calls". Traces before these bits leave both clear.
    kFeatureCudaNotTraced = 1u << 18,
    kFeatureNvtxNotTraced = 1u << 19,
};

// Interned strings: id 0 is the empty string; ids are assigned by the writer in order of first use and the
// String record defining an id always precedes its first use in the file.
using StringId = uint32_t;

// THE list of record kinds; everything per kind derives from it: the RecordKind enumeration, record_kind_name,
// the reader's Record union and dispatch, TraceWriter::add, the report model's per-kind storage and the test
// dumper. X(Kind, number, member, "name"):
//   Kind      the RecordKind enumerator and the struct below that holds one decoded record;
//   number    its kind byte on disk (never reused; a new kind takes the next number and bumps kFormatMinor);
//   member    its member of the reader's Record union (reader.h);
//   "name"    its stable display name (record_kind_name; part of the report schema).
// To add a kind: append a line here, define its struct below, and give it a field list in fields.h. The compiler
// then refuses every place that does not handle it (see the static_asserts in fields.h and reader.cpp).
// Header (1) and String (2) frame the file rather than carry data; the reader consumes them itself.
#define GPROF_TRACE_RECORD_KINDS(X)                                                                              \
    X(Thread, 3, thread, "thread")                                 /* OS thread name */                          \
    X(Device, 4, device, "device")                                 /* GPU properties */                          \
    X(CudaInfo, 5, cuda_info, "cuda_info")                         /* driver / runtime / CUPTI versions */       \
    X(ApiCall, 6, api, "api_call")                                 /* CUDA runtime or driver API call */         \
    X(Kernel, 7, kernel, "kernel")                                                                               \
    X(Memcpy, 8, memcpy, "memcpy")                                                                               \
    X(Memset, 9, memset, "memset")                                                                               \
    X(Sync, 10, sync, "sync")                                      /* event/stream/context sync, wait event */   \
    X(Nvtx, 11, nvtx, "nvtx")                                      /* push/pop, start/end range or mark */       \
    X(Memory, 12, memory, "memory")                                /* device memory allocation / release */      \
    X(Overhead, 13, overhead, "overhead")                          /* CUPTI / driver overhead intervals */       \
    X(Dropped, 14, dropped, "dropped")                             /* records lost, counted */                   \
    X(Capture, 15, capture, "capture")                             /* capture range start / stop markers */      \
    X(Backtrace, 16, backtrace, "backtrace")                       /* return addresses of an API call */         \
    X(Module, 17, module, "module")                                /* a loaded object, for symbolisation */      \
    X(GraphLaunch, 18, graph_launch, "graph_launch")                                                             \
    X(ExternalCorrelation, 19, external_correlation, "external_correlation")                                     \
    X(Status, 20, status, "status")                                /* a component's state ("CUPTI unavailable") */ \
    X(End, 21, end, "end")                                         /* clean end of trace; absent when it died */ \
    X(MemoryPool, 22, memory_pool, "memory_pool")                  /* a cudaMallocAsync pool's operation */    \
    X(Exec, 23, exec, "exec")                                      /* exec of this process, untraced children */ \
    X(Role, 24, role, "role")                                      /* rank in a distributed job */              \
    X(Stack, 25, stack, "stack")                                   /* a distinct native call stack */           \
    X(PyFrame, 26, py_frame, "py_frame")                           /* a distinct Python file:line:function */   \
    X(PyStack, 27, py_stack, "py_stack")                           /* a distinct Python call stack */           \
    X(CallSite, 28, call_site, "call_site")                        /* the stacks an API call was made from */    \
    X(CpuSample, 29, cpu_sample, "cpu_sample")                     /* a thread's stack, sampled on CPU time */   \
    X(OsRuntimeCall, 30, osrt_call, "osrt_call")                   /* a blocking libc call (nsys's osrt) */    \
    X(GpuMetricSet, 31, gpu_metric_set, "gpu_metric_set")          /* a device's sampled metrics (columns) */  \
    X(GpuMetricSample, 32, gpu_metric_sample, "gpu_metric_sample") /* one sampling interval's values */

enum class RecordKind : uint8_t {
    Header = 1,  // always the first record of a file
    String = 2,  // interned string definition (consumed by the reader, not surfaced)
#define GPROF_TRACE_KIND_ENUMERATOR(Kind, number, member, name) Kind = number,
    GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_KIND_ENUMERATOR)
#undef GPROF_TRACE_KIND_ENUMERATOR
};

// Every data kind of the list, in list order.
inline constexpr RecordKind kDataRecordKinds[] = {
#define GPROF_TRACE_KIND_VALUE(Kind, number, member, name) RecordKind::Kind,
    GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_KIND_VALUE)
#undef GPROF_TRACE_KIND_VALUE
};

// The highest kind number this reader knows.
inline constexpr uint8_t kMaxRecordKind = [] {
    uint8_t max = static_cast<uint8_t>(RecordKind::String);
    for (RecordKind k : kDataRecordKinds) max = static_cast<uint8_t>(k) > max ? static_cast<uint8_t>(k) : max;
    return max;
}();

// Kind numbers follow on from String without gaps or repeats (a reader counts anything above kMaxRecordKind as
// "newer than me"; a gap would make it silently misfile a kind).
static_assert([] {
    bool seen[256] = {};
    for (RecordKind k : kDataRecordKinds) {
        auto n = static_cast<uint8_t>(k);
        if (n <= static_cast<uint8_t>(RecordKind::String) || seen[n]) return false;
        seen[n] = true;
    }
    for (unsigned n = static_cast<unsigned>(RecordKind::String) + 1; n <= kMaxRecordKind; ++n)
        if (!seen[n]) return false;
    return true;
}(), "GPROF_TRACE_RECORD_KINDS: kind numbers must run from 3 upwards without gaps or repeats");

// Timestamps are nanoseconds on the trace clock (see ClockReference). 0 means "unknown" (CUPTI documents zero
// timestamps when its device buffers run short); never treat 0 as time zero.
using Timestamp = uint64_t;

enum class TraceClock : uint8_t {
    Realtime = 0,   // CLOCK_REALTIME ns: CUPTI's default on Linux
    Monotonic = 1,  // CLOCK_MONOTONIC ns
};

struct ClockReference {
    TraceClock clock = TraceClock::Realtime;
    Timestamp trace_ns = 0;     // trace clock, read together with ...
    int64_t realtime_ns = 0;    // ... CLOCK_REALTIME and ...
    int64_t monotonic_ns = 0;   // ... CLOCK_MONOTONIC, so traces of several processes / hosts can be merged
};

// ----- process and thread metadata -----------------------------------------------------------------------

struct Thread {
    uint64_t tid = 0;
    StringId name = 0;
};

struct Device {
    uint32_t id = 0;
    StringId name = 0;
    uint32_t cc_major = 0, cc_minor = 0;
    uint32_t sm_count = 0;
    uint64_t global_memory_bytes = 0;
    StringId uuid = 0;  // text form, "GPU-xxxxxxxx-..."; 0 when unknown
};

struct CudaInfo {
    Timestamp timestamp = 0;
    uint32_t driver_version = 0;   // cuDriverGetVersion, e.g. 13000; 0 unknown
    uint32_t runtime_version = 0;  // 0 unknown (the collector does not link cudart)
    uint32_t cupti_api_version = 0;
    StringId cupti_library = 0;    // path of the libcupti that was loaded
};

// ----- CUDA activity ---------------------------------------------------------------------------------------

enum class ApiDomain : uint8_t { Runtime = 0, Driver = 1 };

struct ApiCall {
    Timestamp start = 0, end = 0;
    uint64_t tid = 0;
    uint32_t correlation = 0;
    uint32_t cbid = 0;        // CUPTI callback id within its domain
    StringId name = 0;        // "cudaLaunchKernel", "cuMemcpyHtoD_v2", ...
    int32_t result = 0;       // cudaError_t / CUresult
    ApiDomain domain = ApiDomain::Runtime;
};

struct Kernel {
    Timestamp start = 0, end = 0;
    uint32_t device = 0;
    uint32_t context = 0;
    uint32_t stream = 0;
    uint32_t correlation = 0;
    int32_t grid_x = 0, grid_y = 0, grid_z = 0;
    int32_t block_x = 0, block_y = 0, block_z = 0;
    uint32_t registers_per_thread = 0;
    uint32_t static_shared_bytes = 0;
    uint32_t dynamic_shared_bytes = 0;
    uint32_t local_bytes_per_thread = 0;
    StringId name = 0;        // mangled name as CUPTI reports it
    uint32_t graph_id = 0;    // 0 when not launched from a graph
    uint64_t graph_node_id = 0;
    uint8_t device_launched = 0;  // CUDA dynamic parallelism
};

// Values of CUpti_ActivityMemcpyKind.
enum class MemcpyKind : uint8_t {
    Unknown = 0, HtoD = 1, DtoH = 2, HtoA = 3, AtoH = 4, AtoA = 5, AtoD = 6, DtoA = 7, DtoD = 8, HtoH = 9, PtoP = 10,
};

// Values of CUpti_ActivityMemoryKind.
enum class MemoryKind : uint8_t {
    Unknown = 0, Pageable = 1, Pinned = 2, Device = 3, Array = 4, Managed = 5, DeviceStatic = 6, ManagedStatic = 7,
};

struct Memcpy {
    Timestamp start = 0, end = 0;
    uint64_t bytes = 0;
    uint32_t device = 0;
    uint32_t peer_device = 0;   // destination device for PtoP (MEMCPY2), else == device
    uint32_t context = 0;
    uint32_t stream = 0;
    uint32_t correlation = 0;
    uint32_t graph_id = 0;
    uint64_t graph_node_id = 0;
    MemcpyKind copy_kind = MemcpyKind::Unknown;
    MemoryKind src_kind = MemoryKind::Unknown;
    MemoryKind dst_kind = MemoryKind::Unknown;
    uint8_t async = 0;          // issued by an async API
};

struct Memset {
    Timestamp start = 0, end = 0;
    uint64_t bytes = 0;
    uint32_t value = 0;
    uint32_t device = 0;
    uint32_t context = 0;
    uint32_t stream = 0;
    uint32_t correlation = 0;
    uint32_t graph_id = 0;
    uint64_t graph_node_id = 0;
    MemoryKind memory_kind = MemoryKind::Unknown;
};

// Values of CUpti_ActivitySynchronizationType.
enum class SyncType : uint8_t {
    Unknown = 0, EventSynchronize = 1, StreamWaitEvent = 2, StreamSynchronize = 3, ContextSynchronize = 4,
};

struct Sync {
    Timestamp start = 0, end = 0;
    uint32_t context = 0;
    uint32_t stream = 0;       // 0xFFFFFFFF when not applicable (context sync)
    uint32_t event = 0;
    uint32_t correlation = 0;
    SyncType type = SyncType::Unknown;
};

// Values of CUpti_ActivityMemoryOperationType (CUPTI_ACTIVITY_KIND_MEMORY2).
enum class MemoryOp : uint8_t { Unknown = 0, Allocation = 1, Release = 2 };

// Values of CUpti_ActivityMemoryPoolType.
enum class MemoryPoolType : uint8_t { None = 0, Local = 1, Imported = 2 };

// One allocation or release (CUPTI_ACTIVITY_KIND_MEMORY2). Account by memory_kind: device, pinned host and managed
// memory are different budgets, and a cudaMallocAsync allocation (pool_type != None) is carved out of its pool's
// reservation (pool_size).
struct Memory {
    Timestamp timestamp = 0;
    uint64_t address = 0;
    uint64_t bytes = 0;
    uint32_t device = 0;
    uint32_t context = 0;
    uint32_t stream = 0;
    uint32_t correlation = 0;
    MemoryOp op = MemoryOp::Unknown;
    MemoryKind memory_kind = MemoryKind::Unknown;  // as the program asked for it: Device, Pinned, Managed, ...
    // ---- 1.1 ----
    uint8_t async = 0;                        // made by a stream-ordered call (cudaMallocAsync / cudaFreeAsync)
    MemoryPoolType pool_type = MemoryPoolType::None;  // the pool it came from; None: not from a pool
    uint64_t pool_address = 0;                // the pool's base address (names the pool)
    uint64_t pool_size = 0;                   // bytes the pool holds from the device after this operation
    uint64_t pool_used = 0;                   // bytes of the pool handed out to the program
    uint64_t pool_release_threshold = 0;      // cudaMemPoolAttrReleaseThreshold of a local pool
};

// Values of CUpti_ActivityMemoryPoolOperationType.
enum class MemoryPoolOp : uint8_t { Unknown = 0, Created = 1, Destroyed = 2, Trimmed = 3 };

// An operation on a cudaMallocAsync memory pool (CUPTI_ACTIVITY_KIND_MEMORY_POOL, format 1.1). Not an allocation:
// the pool's reservation from the device changes (size), while the program's allocations out of it are Memory
// records naming the pool by pool_address.
struct MemoryPool {
    Timestamp timestamp = 0;
    uint64_t address = 0;            // the pool's base address (Memory::pool_address of its allocations)
    uint32_t device = 0;
    uint32_t correlation = 0;        // the API call that caused it (cudaMallocAsync, cudaMemPoolTrimTo, ...)
    MemoryPoolOp op = MemoryPoolOp::Unknown;
    MemoryPoolType pool_type = MemoryPoolType::None;
    uint64_t size = 0;               // bytes the pool holds from the device after the operation
    uint64_t used = 0;               // bytes of it handed out to the program
    uint64_t release_threshold = 0;  // cudaMemPoolAttrReleaseThreshold
    uint64_t min_bytes_to_keep = 0;  // Trimmed: cudaMemPoolTrimTo's minBytesToKeep
    uint8_t managed = 0;             // a managed-memory pool (CUPTI's isManagedPool)
};

struct GraphLaunch {
    Timestamp start = 0, end = 0;
    uint32_t device = 0;
    uint32_t context = 0;
    uint32_t stream = 0;
    uint32_t correlation = 0;
    uint32_t graph_id = 0;
};

struct ExternalCorrelation {
    uint64_t external_id = 0;
    uint32_t correlation = 0;
    uint32_t external_kind = 0;  // CUpti_ExternalCorrelationKind
};

struct Overhead {
    Timestamp start = 0, end = 0;
    uint32_t overhead_kind = 0;  // CUpti_ActivityOverheadKind, raw
    uint32_t object_kind = 0;    // CUpti_ActivityObjectKind, raw
    uint64_t object_id = 0;      // thread id or device id, per object_kind
};

// ----- NVTX ------------------------------------------------------------------------------------------------

enum class NvtxType : uint8_t { PushPop = 0, StartEnd = 1, Mark = 2 };

enum class NvtxPayload : uint8_t { None = 0, U64 = 1, I64 = 2, Double = 3, U32 = 4, I32 = 5, Float = 6 };

struct Nvtx {
    Timestamp start = 0, end = 0;  // end == start for a mark; end == 0 for a range that never ended
    uint64_t tid = 0;              // thread that opened the range
    uint64_t end_tid = 0;          // thread that closed it (start/end ranges may end elsewhere)
    StringId name = 0;
    StringId domain = 0;           // 0 = the default domain
    uint32_t color = 0;            // ARGB; 0 = none given
    uint32_t category = 0;
    StringId category_name = 0;    // from nvtxNameCategory, 0 if unnamed
    uint64_t payload = 0;          // raw bits, interpreted by payload_type
    uint16_t depth = 0;            // push/pop nesting depth at push (0 = outermost)
    NvtxType type = NvtxType::PushPop;
    NvtxPayload payload_type = NvtxPayload::None;
};

// ----- completeness and session state -------------------------------------------------------------------

enum class DropSource : uint8_t {
    CuptiBuffer = 0,    // cuptiActivityGetNumDroppedRecords
    CollectorQueue = 1, // our own queues were full
    WriteError = 2,     // records that could not be written (full disk, I/O error)
    NvtxOverflow = 3,   // NVTX ranges still open at exit, or pops without a push
};

struct Dropped {
    Timestamp timestamp = 0;
    uint64_t count = 0;
    uint32_t context = 0;
    uint32_t stream = 0;
    DropSource source = DropSource::CuptiBuffer;
};

enum class CaptureAction : uint8_t { Start = 0, Stop = 1 };
enum class CaptureReason : uint8_t {
    SessionStart = 0, ProfilerApi = 1, NvtxRange = 2, Delay = 3, Duration = 4, ProcessExit = 5,
};

struct Capture {
    Timestamp timestamp = 0;
    CaptureAction action = CaptureAction::Start;
    CaptureReason reason = CaptureReason::SessionStart;
};

inline constexpr uint32_t kMaxBacktraceFrames = 64;

struct Backtrace {
    uint64_t tid = 0;
    uint32_t correlation = 0;    // the ApiCall this stack belongs to
    uint32_t frame_count = 0;
    uint64_t frames[kMaxBacktraceFrames] = {};  // return addresses, innermost first
};

inline constexpr uint32_t kMaxBuildIdBytes = 32;

struct Module {
    uint64_t base = 0;           // load address (l_addr + lowest PT_LOAD vaddr)
    uint64_t size = 0;
    uint64_t file_offset = 0;
    StringId path = 0;
    uint32_t build_id_size = 0;
    uint8_t build_id[kMaxBuildIdBytes] = {};
};

enum class Component : uint8_t { Collector = 0, Cupti = 1, Nvtx = 2, Driver = 3, Writer = 4 };
enum class StatusLevel : uint8_t { Info = 0, Warning = 1, Error = 2 };

// Why something is (not) in the trace. Reports print these so a user knows why a section is empty.
struct Status {
    Timestamp timestamp = 0;
    int32_t code = 0;            // component-specific (a CUptiResult for Cupti)
    StringId message = 0;
    Component component = Component::Collector;
    StatusLevel level = StatusLevel::Info;
};

struct End {
    Timestamp timestamp = 0;
    uint64_t records_written = 0;  // all records of the file except Header, String and End
    uint64_t records_dropped = 0;  // sum of Dropped.count
    // ---- 1.2 ----
    // The process was ended by this signal (SIGTERM, SIGINT, SIGHUP, ...: one whose default action ends it, sent
    // while the process had no handler of its own); the collector finished the trace before the signal took
    // effect, so it is complete up to that moment. 0: the process exited (or exec'ed, see Exec).
    uint32_t signal = 0;
};

// ----- process tree ----------------------------------------------------------------------------------------

// How a program the process started is traced.
enum class ExecImage : uint8_t {
    Traced = 0,       // dynamically linked: the collector loads into it; its trace (same pid) continues the process
    Static = 1,       // statically linked (no program interpreter): nothing can be loaded into it
    Foreign = 2,      // another architecture or ELF class (a 32-bit program): the collector cannot load into it
    Privileged = 3,   // set-user-ID, set-group-ID or file capabilities: the loader ignores LD_PRELOAD
    NoCollector = 4,  // its environment no longer names the collector in LD_PRELOAD
};

// A program the process started.
//   spawned = 0: the process replaced its own image (exec*). The End record follows: the trace is complete and
//                ends here. With image Traced the process goes on in a trace of its own, of the same pid, which
//                starts after this one ends; otherwise the process is not traced from here on.
//   spawned = 1: a child process (posix_spawn, or vfork + exec) runs a program that cannot be traced (image is
//                never Traced): this record is all that the run holds of that child.
struct Exec {
    Timestamp timestamp = 0;
    uint64_t pid = 0;            // the process that runs the program
    StringId path = 0;           // the program file as resolved (for a #! script: the script)
    StringId command = 0;        // its argv joined by spaces (cut at 4 KiB)
    ExecImage image = ExecImage::Traced;
    uint8_t spawned = 0;
};

// The process's place in a distributed job, from the environment its launcher set: torchrun / torch.distributed
// (RANK, LOCAL_RANK, WORLD_SIZE), Slurm (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS), Open MPI
// (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_SIZE), PMI / PMIx (PMI_RANK, PMIX_RANK,
// PMI_SIZE). Written once, at the start of the trace, when any of them is set. -1: not known.
struct Role {
    int64_t rank = -1;
    int64_t local_rank = -1;
    int64_t world_size = -1;
    StringId variables = 0;  // the variables found, as "NAME=value" separated by spaces
    // ---- 1.3 ----
    StringId job = 0;        // the job's id (SLURM_JOB_ID), 0 when the launcher set none
};

// Call sites (1.4). Stacks are interned: each distinct stack is written once, before the first CallSite that
// names it, and API calls refer to it by id. Ids are per process trace, start at 1 and only grow; 0 means "none".

// A native call stack: return addresses, innermost first, starting at the program's (or its libraries') call into
// the CUDA runtime or driver API: the collector's, CUPTI's and the driver's own frames are already left out.
struct Stack {
    uint32_t id = 0;
    uint32_t frame_count = 0;
    uint64_t frames[kMaxBacktraceFrames] = {};
};

// One Python code location (a code object at one line), interned like a stack.
struct PyFrame {
    uint32_t id = 0;
    StringId file = 0;        // co_filename
    StringId function = 0;    // co_qualname (3.11+), else co_name
    uint32_t line = 0;        // the line being executed; 0 when unknown
};

// A Python call stack: PyFrame ids, innermost first.
struct PyStack {
    uint32_t id = 0;
    uint32_t frame_count = 0;
    uint64_t frames[kMaxBacktraceFrames] = {};  // PyFrame ids (a uint64_t array so the frames encoding serves)
};

// The stacks one API call was made from, written at the call's exit.
struct CallSite {
    uint64_t tid = 0;
    uint32_t correlation = 0;  // the ApiCall's correlation id
    uint32_t stack = 0;        // Stack id; 0: no native stack
    uint32_t py_stack = 0;     // PyStack id; 0: not a Python thread, or no Python frame
};

// CPU sampling (1.5). Each thread of the process is sampled on its own CPU time (a timer per thread, one sampling
// period of its CPU time apart): a sample says where the thread was when `periods` more periods of its CPU time had
// passed (more than 1 when the kernel could not fire the timer at every period: it checks at its tick). ip is the
// instruction the thread was executing (not a return address: symbolise it as it is); stack holds the return
// addresses above it, innermost first, and py_stack its Python frames (both interned as for call sites; 0: none).
struct CpuSample {
    Timestamp timestamp = 0;
    uint64_t tid = 0;
    uint64_t ip = 0;
    uint32_t stack = 0;
    uint32_t py_stack = 0;
    uint32_t periods = 1;     // sampling periods this sample stands for (its weight)
    uint32_t period_ns = 0;   // the sampling period: 1e9 / the sampling frequency
};

// One call into the C library that blocked for at least the collector's threshold (nsys's OS runtime trace:
// read, poll, nanosleep, pthread_mutex_lock, ...). stack/py_stack: its call site, for a call that lasted at least
// the backtrace threshold (0 otherwise).
struct OsRuntimeCall {
    Timestamp start = 0, end = 0;
    uint64_t tid = 0;
    StringId name = 0;  // the function as the program called it: "read", "pthread_cond_wait", ...
    uint32_t stack = 0;
    uint32_t py_stack = 0;
};

// GPU metrics over time (1.7): PM sampling of a device's performance counters (docs/gpu-metrics.md). The metrics a
// device is sampled for are written once, as a GpuMetricSet, before its first sample; each GpuMetricSample then
// holds the values of one sampling interval, in the set's order. A trace holds at most one set per device; a later
// set of the same device replaces it for the samples after it.
inline constexpr uint32_t kMaxGpuMetrics = 32;  // values a sample can hold (a set of more columns is refused)

struct GpuMetricSet {
    uint32_t device = 0;       // the CUDA device number in the process (Kernel::device)
    StringId name = 0;         // the set ("gh100")
    StringId chip = 0;         // the chip as CUPTI names it ("GH100")
    StringId metrics = 0;      // the metric names, separated by single spaces, in the order of the values
    uint64_t interval_ns = 0;  // the sampling interval asked for
};

// One sampling interval [start, end) of a device. The values are what the profiler host API evaluates the
// interval's counters to: a share of peak in percent (".pct_of_peak..."), or a count over the interval (".sum").
struct GpuMetricSample {
    Timestamp start = 0, end = 0;
    uint32_t device = 0;
    uint32_t value_count = 0;
    double values[kMaxGpuMetrics] = {};
};

// ----- per-kind traits derived from the list -------------------------------------------------------------

// The kind of a record struct: RecordKindOf<Kernel>::value == RecordKind::Kernel.
template <class R> struct RecordKindOf;
#define GPROF_TRACE_KIND_OF(Kind, number, member, name) \
    template <> struct RecordKindOf<Kind> { static constexpr RecordKind value = RecordKind::Kind; };
GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_KIND_OF)
#undef GPROF_TRACE_KIND_OF

// A struct of this header that holds one record of a data kind.
template <class R> concept RecordStruct = requires { RecordKindOf<R>::value; };

// Records are plain data: the collector passes them between its threads by value, and the reader's Record union
// holds them side by side.
#define GPROF_TRACE_PLAIN(Kind, number, member, name)                                \
    static_assert(std::is_trivially_copyable_v<Kind> && std::is_standard_layout_v<Kind>, \
                  #Kind " must stay plain data (no pointers to owned memory, no virtuals)");
GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_PLAIN)
#undef GPROF_TRACE_PLAIN

}  // namespace gprof::trace
