// A CUPTI stand-in for tests on machines without a GPU. It exports the cupti* functions the collector's
// loader resolves, loaded through the same dlopen path (GPROF_CUPTI_LIB), and plays scripted behaviour: the
// subscribe result, buffer requests and completions carrying real CUpti_Activity* structs, dropped counts,
// profiler start/stop callbacks, a flush that hangs. See standin_control.h. Never installed.
//
// What it models of the real CUPTI (each seen on an H100 with CUDA 13.0, 2026-11-22, unless marked otherwise):
//   - A record exists only for work issued while its kind is enabled: enabling a kind later does not bring back
//     what ran before, and disabling it drops what comes after (the API record and the GPU record of one call
//     are each decided when the call is made).
//   - cuptiActivityEnable(RUNTIME/DRIVER) resets the per-call filters of cuptiActivityEnableRuntimeApi/DriverApi.
//   - The CUDA runtime makes driver calls of its own, outside the interval of the runtime call that needs them:
//     cuKernelGetName before every cudaLaunchKernel, cuLibraryLoadData + cuLibraryGetKernel before the first
//     launch of a kernel (lazy loading). Each has its own correlation id.
//   - CUDA graphs: a cudaGraphLaunch runtime record (no nested cuGraphLaunch driver record appeared on the H100)
//     and one record per node (kernel, memcpy, memset) carrying graphId, graphNodeId and the launching call's
//     correlation id (that id: inferred from the GRAPH_TRACE record, which carried cudaGraphLaunch's). While
//     GRAPH_TRACE is enabled, one CUpti_ActivityGraphTrace2 per launch and *no* node records at all.
//   - Memory (CUPTI's enum and header; the kind per API is unconfirmed on hardware): one MEMORY2 record per
//     allocation or release with the memoryKind the program asked for (cudaMalloc DEVICE, cudaMallocHost PINNED,
//     cudaMallocManaged MANAGED), the calling API's correlation id; cudaMallocAsync/cudaFreeAsync carry isAsync
//     and their pool's configuration (LOCAL, size, utilized size); MEMORY_POOL records when the pool is created
//     (its first use) and trimmed (cudaMemPoolTrimTo).
//   - API callbacks (cupti_callbacks.h): cuptiEnableDomain switches every callback id of a domain, a later
//     cuptiEnableCallback one id; at API_EXIT functionReturnValue points at the call's return value. The callback
//     data's correlationId is the one the call's activity records carry.
//   - Buffer attributes (cupti_activity.h): with ZEROED_OUT_ACTIVITY_BUFFER 0 (the default) CUPTI zeroes each buffer
//     it is given, on the thread that asked for it; with 1 it trusts the client to hand over zeroed buffers. The
//     device buffer size and pre-allocation count are kept, not modelled (no device memory here).
//   - One subscriber per process (CUPTI 13.0): a second cuptiSubscribe or cuptiSubscribe_v2 is refused with
//     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, and cuptiSubscribe_v2 writes the holder's name into the caller's
//     oldSubscriberName: "CUPTI for <its subscriberName>" (CUPTI's prefix, documented in cupti_callbacks.h); a
//     holder that subscribed without a name leaves it empty. The scripted refusal (multiple-subscribers) names
//     holder=TEXT, as an outside tool (nsys, a debugger, a sanitizer) would be named.
//
// Personalities (issue 34): one source, three libraries, each a CUPTI release as the real libcupti.so.12 of the
// nvidia-cuda-cupti-cu12 wheels 12.4.127 and 12.9.79 and the CUDA 13.0 toolkit's libcupti.so.13 showed on this
// machine (2026-11-27; tests/collector/test_cupti12_real.cpp checks the same numbers against those libraries):
//   - cuptiGetVersion: 22 (12.4), 28 (12.9 Update 1), 130001 (13.0).
//   - Record sizes, the stride cuptiActivityGetNextRecord steps by: CONCURRENT_KERNEL 208 (Kernel9) in 12.x, 216
//     (Kernel10) in 13; MEMCPY 88 (Memcpy5) in 12.4, 96 (Memcpy6) after; SYNCHRONIZATION 40 (Synchronization) in
//     12.4, 56 after; MEMORY2 120 (Memory3) in 12.4, 128 (Memory4) after; MEMORY_POOL 72 (MemoryPool2) in 12.x, 80
//     (MemoryPool3) in 13; the other kinds the same in all three. A 12.x record is the prefix of the 13.0 struct the
//     stand-in fills (every field the collector reads sits at the same offset: cupti12-notes), so the byte after a
//     Kernel9 or a MemoryPool2 is the next record's, as in a real 12.x buffer.
//   - Exports: cuptiSubscribe_v2 only in 13 (13.0 added it); cuptiActivityEnableRuntimeApi/DriverApi not in 12.4
//     (12.5 added them).
//   - Callback ids: cuptiGetCallbackName names every id below its own count (12.4: 754 driver / 468 runtime, 12.9:
//     784 / 487, 13.0: 807 / 523) and answers CUPTI_ERROR_INVALID_PARAMETER from there on (measured on the three
//     libraries); cuptiEnableCallback refuses the same ids (inferred: it needs a driver to try).
//   - Without a driver, cuptiSubscribe returns CUPTI_ERROR_NOT_INITIALIZED from 12.x and CUPTI_ERROR_UNKNOWN from 13
//     (measured on the three libraries here, no libcuda): the no-driver script. With a driver whose CUDA major is
//     older than the CUPTI's, cuptiSubscribe and cuptiActivityEnable fail with CUPTI_ERROR_NOT_INITIALIZED (CUPTI 13
//     on an r570 driver; HPCToolkit issue #375): the stand-in asks the libcuda in the process (the libcuda stand-in
//     plays GPROF_TEST_CUDA_DRIVER_VERSION).
#include <cupti.h>

#include <dlfcn.h>
#include <pthread.h>
#include <x86intrin.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>

#include "standin_control.h"

#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

// Which CUPTI release this build of the stand-in plays (tests/collector/cupti.cmake builds one library per value).
#ifndef GPROF_STANDIN_PERSONALITY
#define GPROF_STANDIN_PERSONALITY 130
#endif
#define STANDIN_HAS_SUBSCRIBE_V2 (GPROF_STANDIN_PERSONALITY >= 130)
#define STANDIN_HAS_API_FILTERS (GPROF_STANDIN_PERSONALITY >= 125)

namespace {

struct Personality {
    uint32_t api_version;     // cuptiGetVersion
    uint32_t cuda_major;      // the driver major it needs at least
    uint32_t driver_cbids;    // callback ids it knows, per domain
    uint32_t runtime_cbids;
    CUptiResult no_driver;    // cuptiSubscribe without any CUDA driver
    size_t kernel, memcpy, sync, memory, memory_pool;  // record sizes that differ between releases
};

constexpr Personality kPersonality =
#if GPROF_STANDIN_PERSONALITY == 124
    {22, 12, 754, 468, CUPTI_ERROR_NOT_INITIALIZED, 208, 88, 40, 120, 72};
#elif GPROF_STANDIN_PERSONALITY == 129
    {28, 12, 784, 487, CUPTI_ERROR_NOT_INITIALIZED, 208, 96, 56, 128, 72};
#elif GPROF_STANDIN_PERSONALITY == 130
    {CUPTI_API_VERSION, 13, CUPTI_DRIVER_TRACE_CBID_SIZE, CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_ERROR_UNKNOWN,
     sizeof(CUpti_ActivityKernel10), sizeof(CUpti_ActivityMemcpy6), sizeof(CUpti_ActivitySynchronization2),
     sizeof(CUpti_ActivityMemory4), sizeof(CUpti_ActivityMemoryPool3)};
#else
#error "GPROF_STANDIN_PERSONALITY: 124, 129 or 130"
#endif
// The 12.x sizes are those of the structs the 13.0 headers still declare (cupti_activity_deprecated.h).
static_assert(GPROF_STANDIN_PERSONALITY == 130 || (kPersonality.kernel == sizeof(CUpti_ActivityKernel9) &&
                                                   kPersonality.memory_pool == sizeof(CUpti_ActivityMemoryPool2)));
static_assert(GPROF_STANDIN_PERSONALITY != 124 || (kPersonality.memcpy == sizeof(CUpti_ActivityMemcpy5) &&
                                                   kPersonality.sync == sizeof(CUpti_ActivitySynchronization) &&
                                                   kPersonality.memory == sizeof(CUpti_ActivityMemory3)));

}  // namespace

namespace {

struct Script {
    CUptiResult subscribe = CUPTI_SUCCESS;
    std::string holder;  // the name a scripted refusal gives for the subscriber that holds CUPTI
    bool enable_fails = false;
    bool kernel_enable_fails = false;
    bool no_timestamp_callback = false;
    bool old_version = false;
    bool flush_hang = false;
    uint64_t drop_first = 0;
    uint64_t workload = 0;
};

Script read_script() {
    Script s;
    const char* env = std::getenv("GPROF_TEST_STANDIN_SCRIPT");
    std::string text = env ? env : "";
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        std::string tok = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (tok == "multiple-subscribers") s.subscribe = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        else if (tok == "no-device") s.subscribe = CUPTI_ERROR_INVALID_DEVICE;
        else if (tok == "no-driver") s.subscribe = kPersonality.no_driver;
        else if (tok == "insufficient-privileges") s.subscribe = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
        else if (tok == "enable-fails") s.enable_fails = true;
        else if (tok == "kernel-enable-fails") s.kernel_enable_fails = true;
        else if (tok == "no-timestamp-callback") s.no_timestamp_callback = true;
        else if (tok == "old-version") s.old_version = true;
        else if (tok == "flush-hang") s.flush_hang = true;
        else if (tok.rfind("drop=", 0) == 0) s.drop_first = std::strtoull(tok.c_str() + 5, nullptr, 10);
        else if (tok.rfind("holder=", 0) == 0) s.holder = tok.substr(7);
        else if (tok.rfind("workload=", 0) == 0) s.workload = std::strtoull(tok.c_str() + 9, nullptr, 10);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return s;
}

struct State {
    std::once_flag script_once;
    Script script;
    // Recursive: a client's buffer-completed callback calls back into us (cuptiActivityGetNumDroppedRecords),
    // as it may with the real CUPTI, whose lock is also held around that callback.
    std::recursive_mutex mutex;
    CUpti_CallbackFunc callback = nullptr;
    void* userdata = nullptr;
    bool subscribed = false;
    std::string subscriber_name;  // "CUPTI for <name>" of the holder; empty when it gave none
    uint64_t refused_subscriptions = 0;
    bool cb_enabled[4][1024] = {};  // cuptiEnableDomain sets a whole domain, cuptiEnableCallback one id
    CUpti_BuffersCallbackRequestFunc requested = nullptr;
    CUpti_BuffersCallbackCompleteFunc completed = nullptr;
    CUpti_TimestampCallbackFunc timestamp = nullptr;
    bool kinds[64] = {};
    bool runtime_filtered[1024] = {};
    bool driver_filtered[1024] = {};
    uint8_t* buffer = nullptr;
    size_t size = 0, used = 0;
    uint64_t dropped_pending = 0;
    uint64_t dropped_unreported = 0;  // records lost for want of a buffer
    std::atomic<uint32_t> correlation{0};
    std::set<std::string, std::less<>> loaded_kernels;  // kernels whose module the runtime has loaded (lazy loading)
    std::set<std::string, std::less<>> kernel_names;    // every kernel name a record has pointed at (owned)
    // The device's default memory pool (cudaMallocAsync): reserved and handed-out bytes.
    bool pool_created = false;
    uint64_t pool_size = 0, pool_used = 0;
    std::atomic<uint64_t> requested_count{0}, completed_count{0}, refused{0}, flushes[2] = {}, emitted{0};
    // cuptiActivitySetAttribute: the values set (CUPTI's defaults until then).
    size_t device_buffer_size = 3u << 20, preallocate = 3;
    uint8_t zeroed_attr = 0;
    uint64_t zeroed_by_cupti = 0;   // buffers the stand-in zeroed itself, on the requesting (app) thread
    uint64_t dirty_supplied = 0;    // buffers given as zeroed (attribute 1) that were not
    std::thread workload;
};

// Time spent inside the client's callbacks (TSC ticks, calls), per kind: 0 API callbacks, 1 buffer requested,
// 2 buffer completed. bench/collector_launch reads them: the client's own cost on the calling thread, measured
// where it is spent rather than as a difference of two loops.
std::atomic<uint64_t> g_client_ticks[3] = {}, g_client_calls[3] = {};
template <class Fn>
void timed_client(int which, Fn&& fn) {
    uint64_t t0 = __rdtsc();
    fn();
    g_client_ticks[which].fetch_add(__rdtsc() - t0, std::memory_order_relaxed);
    g_client_calls[which].fetch_add(1, std::memory_order_relaxed);
}

// Process and thread ids without a system call per record (CUPTI keeps them too); both are forgotten in a forked
// child (st()'s atfork handler runs on the forking thread, the only one the child has).
std::atomic<pid_t> g_pid{0};
thread_local pid_t t_tid = 0;
pid_t cached_pid() {
    pid_t p = g_pid.load(std::memory_order_relaxed);
    if (!p) g_pid.store(p = getpid(), std::memory_order_relaxed);
    return p;
}
pid_t cached_tid() { return t_tid ? t_tid : (t_tid = gettid()); }

State& st() {
    static auto* s = new State();
    std::call_once(s->script_once, [] {
        s->script = read_script();
        s->dropped_pending = s->script.drop_first;
        // Modelled: a forked child's CUPTI starts with no buffer of its own (the parent's half-filled one stays
        // the parent's). How the real CUPTI behaves here is to be confirmed on a GPU (docs/cupti.md, Fork).
        pthread_atfork(nullptr, nullptr, [] {
            g_pid.store(0, std::memory_order_relaxed);
            t_tid = 0;
            new (&s->mutex) std::recursive_mutex();
            s->buffer = nullptr;
            s->size = s->used = 0;
        });
    });
    return *s;
}

uint64_t now_ns() {
    State& s = st();
    if (s.timestamp) return s.timestamp();
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);  // CUPTI's default clock on Linux
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}


CUcontext fake_context(uint32_t device) { return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(0x1000 + device)); }

size_t record_size(CUpti_ActivityKind kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return kPersonality.kernel;
        case CUPTI_ACTIVITY_KIND_MEMCPY: return kPersonality.memcpy;
        case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
        case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return kPersonality.sync;
        case CUPTI_ACTIVITY_KIND_MEMORY2: return kPersonality.memory;
        case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
        case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return kPersonality.memory_pool;
        case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
        default: return 0;
    }
}

// Under the lock. Hands the current buffer to the client (as CUPTI's worker does).
void complete_locked() {
    State& s = st();
    if (!s.buffer) return;
    uint8_t* b = s.buffer;
    size_t size = s.size, used = s.used;
    s.buffer = nullptr;
    s.size = s.used = 0;
    s.completed_count++;
    if (s.completed) timed_client(2, [&] { s.completed(nullptr, 0, b, size, used); });
}

// Under the lock. Appends one record, asking the client for buffers as needed.
void emit_locked(const void* record, CUpti_ActivityKind kind) {
    State& s = st();
    if (kind >= 64 || !s.kinds[kind] || !s.requested) return;
    size_t n = record_size(kind);
    if (s.buffer && s.used + n > s.size) complete_locked();
    if (!s.buffer) {
        uint8_t* b = nullptr;
        size_t size = 0, max_records = 0;
        s.requested_count++;
        timed_client(1, [&] { s.requested(&b, &size, &max_records); });
        if (!b || size < n) {
            s.refused++;
            s.dropped_unreported++;  // CUPTI >= 27 counts what it could not store
            return;
        }
        if (reinterpret_cast<uintptr_t>(b) % 8 != 0) std::abort();  // CUPTI requires 8-byte alignment
        if (s.zeroed_attr == 0) {
            // CUPTI zeroes every buffer it is given before filling it, on the thread that asked for it (header).
            std::memset(b, 0, size);
            s.zeroed_by_cupti++;
        } else {
            // The client promised zeroed buffers: CUPTI relies on it (records may keep stale bytes otherwise).
            for (size_t i = 0; i < size; i += 8) {
                uint64_t w;
                std::memcpy(&w, b + i, 8);
                if (w != 0) {
                    s.dirty_supplied++;
                    break;
                }
            }
        }
        s.buffer = b;
        s.size = size;
        s.used = 0;
    }
    std::memcpy(s.buffer + s.used, record, n);
    s.used += n;
    s.emitted++;
}

bool callback_enabled(CUpti_CallbackDomain d, uint32_t cbid) {
    State& s = st();
    if (!s.subscribed || !s.callback) return false;
    return d < 4 && cbid < 1024 && s.cb_enabled[d][cbid];
}

// An API call: enter callback, the body, exit callback, then its activity record.
uint32_t api_call(CUpti_CallbackDomain domain, uint32_t cbid, const char* name, void (*body)(uint32_t)) {
    State& s = st();
    uint32_t corr = ++s.correlation;
    uint64_t start = now_ns();
    CUpti_CallbackData cb{};
    cb.functionName = name;
    cb.correlationId = corr;
    cb.context = fake_context(0);
    cb.contextUid = 1;
    if (callback_enabled(domain, cbid)) {
        cb.callbackSite = CUPTI_API_ENTER;
        timed_client(0, [&] { s.callback(s.userdata, domain, cbid, &cb); });
    }
    if (body) body(corr);
    int32_t result = 0;  // cudaSuccess / CUDA_SUCCESS: the stand-in's calls all succeed
    if (callback_enabled(domain, cbid)) {
        cb.callbackSite = CUPTI_API_EXIT;
        cb.functionReturnValue = &result;  // valid at exit only, as in CUPTI
        timed_client(0, [&] { s.callback(s.userdata, domain, cbid, &cb); });
    }
    CUpti_ActivityAPI a{};
    a.kind = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = cbid;
    a.start = start;
    a.end = now_ns();
    a.processId = static_cast<uint32_t>(cached_pid());
    a.threadId = static_cast<uint32_t>(cached_tid());
    a.correlationId = corr;
    bool filtered = cbid < 1024 && (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? s.runtime_filtered[cbid]
                                                                          : s.driver_filtered[cbid]);
    if (!filtered) {
        std::lock_guard<std::recursive_mutex> lock(s.mutex);
        emit_locked(&a, a.kind);
    }
    return corr;
}


// Real CUPTI's kernel records point at names CUPTI owns (they live as long as the module), never at the caller's
// memory: the stand-in keeps its own copy of every name, once, so a caller's temporary string (a Python str's
// buffer, a std::string reused for the next launch) cannot reach the collector's writer as garbage.
const char* owned_kernel_name(const char* name) {
    if (!name) return nullptr;
    State& s = st();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    auto it = s.kernel_names.find(std::string_view(name));
    if (it == s.kernel_names.end()) it = s.kernel_names.emplace(name).first;
    return it->c_str();
}

CUpti_ActivityKernel10 kernel_record(const char* name, uint32_t stream, uint32_t corr, uint64_t start) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = k.start + 1000;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = stream;
    k.gridX = 128;
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 32;
    k.correlationId = corr;
    k.name = owned_kernel_name(name);
    return k;
}

CUpti_ActivityMemcpy6 memcpy_record(uint64_t bytes, uint32_t copy_kind, uint32_t stream, uint32_t corr,
                                    uint64_t start) {
    CUpti_ActivityMemcpy6 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = static_cast<uint8_t>(copy_kind);
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = bytes;
    m.start = start;
    m.end = m.start + 500;
    m.contextId = 1;
    m.streamId = stream;
    m.correlationId = corr;
    return m;
}

CUpti_ActivityMemset4 memset_record(uint64_t bytes, uint32_t value, uint32_t stream, uint32_t corr, uint64_t start) {
    CUpti_ActivityMemset4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = value;
    m.bytes = bytes;
    m.start = start;
    m.end = m.start + 300;
    m.contextId = 1;
    m.streamId = stream;
    m.correlationId = corr;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    return m;
}

// What the CUDA runtime does through the driver before a cudaLaunchKernel (its own calls, own correlation ids,
// before the runtime call's interval): load the kernel's module the first time, then look its name up.
void runtime_launch_prologue(const char* name) {
    State& s = st();
    bool first;
    {
        std::lock_guard<std::recursive_mutex> lock(s.mutex);
        // Looked up without building a string: the stand-in's own cost per launch should stay small next to ours
        // (bench/collector_launch subtracts it).
        first = s.loaded_kernels.find(std::string_view(name)) == s.loaded_kernels.end();
        if (first) s.loaded_kernels.insert(name);
    }
    if (first) {
        api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData, "cuLibraryLoadData", nullptr);
        api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel, "cuLibraryGetKernel", nullptr);
    }
    api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, "cuKernelGetName", nullptr);
}

void workload_thread(uint64_t iterations) {
    State& s = st();
    // Wait until the collector has enabled kernels (it may be in a capture range that never opens: give up).
    for (int i = 0; i < 2000 && !s.kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (uint64_t i = 0; i < iterations; ++i) {
        gprof_test_standin_launch_kernel("_Z6workerPfi", 7);
        gprof_test_standin_memcpy(4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    }
}

}  // namespace

// ---- CUPTI API -------------------------------------------------------------------------------------------

STANDIN_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
    if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
    *version = st().script.old_version ? 18 : kPersonality.api_version;  // old-version: CUDA 11.8's CUPTI
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
    switch (result) {
        case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
        case CUPTI_ERROR_INVALID_DEVICE: *str = "CUPTI_ERROR_INVALID_DEVICE"; break;
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
        case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
        case CUPTI_ERROR_UNKNOWN: *str = "CUPTI_ERROR_UNKNOWN"; break;
        case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
        case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
        // The PM-sampling and host-API results (pm_sampling.cpp).
        case CUPTI_ERROR_INVALID_CHIP_NAME: *str = "CUPTI_ERROR_INVALID_CHIP_NAME"; break;
        case CUPTI_ERROR_INVALID_METRIC_NAME: *str = "CUPTI_ERROR_INVALID_METRIC_NAME"; break;
        case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
        case CUPTI_ERROR_HARDWARE_BUSY: *str = "CUPTI_ERROR_HARDWARE_BUSY"; break;
        case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED: *str = "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED"; break;
        case CUPTI_ERROR_OUT_OF_MEMORY: *str = "CUPTI_ERROR_OUT_OF_MEMORY"; break;
        default: *str = "CUPTI_ERROR_(stand-in)"; break;
    }
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetErrorMessage(CUptiResult result, const char** str) {
    return cuptiGetResultString(result, str);
}

namespace {

// CUPTI_ERROR_NOT_INITIALIZED when the CUDA driver in the process is of an older major than this CUPTI (CUPTI 13 on
// an r570 driver); CUPTI_SUCCESS with a fitting driver or none at all (the scripted no-driver plays that case).
// Asked once, when a driver is first there: CUPTI's own query is not a call of the program (no API record).
CUptiResult driver_check() {
    static std::atomic<int> verdict{-1};  // -1 not asked yet, else the CUptiResult
    if (int v = verdict.load(std::memory_order_acquire); v >= 0) return static_cast<CUptiResult>(v);
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return CUPTI_SUCCESS;  // no driver yet: asked again later
    auto get = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDriverGetVersion"));
    int v = 0;
    bool old = get && get(&v) == 0 && v > 0 && static_cast<uint32_t>(v) / 1000 < kPersonality.cuda_major;
    dlclose(h);
    CUptiResult rc = old ? CUPTI_ERROR_NOT_INITIALIZED : CUPTI_SUCCESS;
    verdict.store(static_cast<int>(rc), std::memory_order_release);
    return rc;
}

CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata,
                      const char* name, std::string& holder) {
    if (CUptiResult rc = driver_check(); rc != CUPTI_SUCCESS) return rc;
    State& s = st();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    if (s.script.subscribe != CUPTI_SUCCESS) {
        if (s.script.subscribe == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) holder = s.script.holder;
        s.refused_subscriptions++;
        return s.script.subscribe;
    }
    if (s.subscribed) {
        holder = s.subscriber_name;
        s.refused_subscriptions++;
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    s.subscribed = true;
    s.callback = callback;
    s.userdata = userdata;
    s.subscriber_name = name && *name ? std::string("CUPTI for ") + name : std::string();
    *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&s);
    return CUPTI_SUCCESS;
}

}  // namespace

STANDIN_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                          void* userdata) {
    std::string holder;
    return subscribe(subscriber, callback, userdata, nullptr, holder);
}

#if STANDIN_HAS_SUBSCRIBE_V2
STANDIN_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                             void* userdata, CUpti_SubscriberParams* params) {
    if (params && params->structSize < CUpti_SubscriberParams_STRUCT_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
    std::string holder;
    CUptiResult rc = subscribe(subscriber, callback, userdata, params ? params->subscriberName : nullptr, holder);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && params && params->oldSubscriberName &&
        params->oldSubscriberSize > 0)
        std::snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", holder.c_str());
    return rc;
}
#endif

STANDIN_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) {
    State& s = st();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    s.subscribed = false;
    s.subscriber_name.clear();
    s.callback = nullptr;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                               CUpti_CallbackId cbid) {
    State& s = st();
    if (domain >= 4 || cbid >= 1024) return CUPTI_ERROR_INVALID_PARAMETER;
    // Ids past this CUPTI's own count are not its ids (a 12.4 CUPTI knows 754 driver ids, the 13.0 headers 807).
    if ((domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid >= kPersonality.driver_cbids) ||
        (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid >= kPersonality.runtime_cbids))
        return CUPTI_ERROR_INVALID_PARAMETER;
    s.cb_enabled[domain][cbid] = enable != 0;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain) {
    State& s = st();
    if (domain >= 4) return CUPTI_ERROR_INVALID_PARAMETER;
    // Every callback id of the domain; a later cuptiEnableCallback(0, ..., cbid) switches one off again.
    for (bool& b : s.cb_enabled[domain]) b = enable != 0;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
    State& s = st();
    if (CUptiResult rc = driver_check(); rc != CUPTI_SUCCESS) return rc;
    if (s.script.enable_fails) return CUPTI_ERROR_NOT_SUPPORTED;
    if (s.script.kernel_enable_fails && kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) return CUPTI_ERROR_NOT_SUPPORTED;
    if (kind == CUPTI_ACTIVITY_KIND_KERNEL) std::abort();  // the collector must never serialise kernels
    if (kind >= 64) return CUPTI_ERROR_INVALID_KIND;
    s.kinds[kind] = true;
    // Enabling RUNTIME/DRIVER resets per-API filters, as the real cuptiActivityEnable does.
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) std::memset(s.runtime_filtered, 0, sizeof s.runtime_filtered);
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) std::memset(s.driver_filtered, 0, sizeof s.driver_filtered);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
    if (kind >= 64) return CUPTI_ERROR_INVALID_KIND;
    st().kinds[kind] = false;
    return CUPTI_SUCCESS;
}

#if STANDIN_HAS_API_FILTERS
STANDIN_EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
    if (cbid >= 1024) return CUPTI_ERROR_INVALID_PARAMETER;
    st().runtime_filtered[cbid] = !enable;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
    if (cbid >= 1024) return CUPTI_ERROR_INVALID_PARAMETER;
    st().driver_filtered[cbid] = !enable;
    return CUPTI_SUCCESS;
}
#endif

STANDIN_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                          CUpti_BuffersCallbackCompleteFunc completed) {
    State& s = st();
    if (!requested || !completed) return CUPTI_ERROR_INVALID_PARAMETER;
    {
        std::lock_guard<std::recursive_mutex> lock(s.mutex);
        s.requested = requested;
        s.completed = completed;
    }
    if (s.script.workload && !s.workload.joinable()) {
        s.workload = std::thread(workload_thread, s.script.workload);
        s.workload.detach();
    }
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) {
    State& s = st();
    if (s.script.no_timestamp_callback) return CUPTI_ERROR_NOT_SUPPORTED;
    for (bool k : s.kinds)
        if (k) return CUPTI_ERROR_INVALID_OPERATION;  // must come before any kind is enabled
    s.timestamp = fn;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
    if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
    size_t offset = 0;
    if (*record) {
        auto* cur = reinterpret_cast<uint8_t*>(*record);
        size_t n = record_size((*record)->kind);
        if (n == 0) return CUPTI_ERROR_INVALID_KIND;
        offset = static_cast<size_t>(cur - buffer) + n;
    }
    if (offset + sizeof(CUpti_Activity) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
    size_t n = record_size(next->kind);
    if (n == 0) return CUPTI_ERROR_INVALID_KIND;
    if (offset + n > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = next;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
    State& s = st();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    *dropped = s.dropped_pending + s.dropped_unreported;
    s.dropped_pending = 0;
    s.dropped_unreported = 0;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
    State& s = st();
    bool forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
    s.flushes[forced ? 1 : 0]++;
    if (forced && s.script.flush_hang) std::this_thread::sleep_for(std::chrono::hours(1));
    if (!s.requested) return CUPTI_ERROR_INVALID_OPERATION;
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    if (s.buffer && s.used > 0) complete_locked();
    else if (s.dropped_pending > 0 || s.dropped_unreported > 0) {
        // Nothing to deliver but a loss to report: an empty completion carries it.
        s.completed_count++;
        if (s.completed) s.completed(nullptr, 0, nullptr, 0, 0);
    }
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
    *timestamp = now_ns();
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
    static const struct { CUpti_CallbackDomain d; uint32_t cbid; const char* name; } names[] = {
        {CUPTI_CB_DOMAIN_RUNTIME_API, 0, "INVALID"},  // id 0 of each domain, as CUPTI names it
        {CUPTI_CB_DOMAIN_DRIVER_API, 0, "INVALID"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, "cudaMemset_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, "cudaProfilerStart_v4000"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, "cudaProfilerStop_v4000"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, "cudaDeviceReset_v3020"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, "cuProfilerStart"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, "cuProfilerStop"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, "cuKernelGetName"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData, "cuLibraryLoadData"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel, "cuLibraryGetKernel"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch_v10000"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuInit, "cuInit"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion, "cuDriverGetVersion"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceGet, "cuDeviceGet"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetName, "cuDeviceGetName"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute, "cuDeviceGetAttribute"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetUuid_v2, "cuDeviceGetUuid_v2"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, "cuCtxGetCurrent"},
        // Calls the tests make through gprof_test_standin_runtime_call/blocking_call/memory (CUPTI names every id).
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020, "cudaGetDeviceCount_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, "cudaEventRecord_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, "cudaEventQuery_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, "cudaMallocHost_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, "cudaFreeHost_v3020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, "cudaMallocManaged_v6000"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, "cudaMallocAsync_v11020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, "cudaFreeAsync_v11020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020, "cudaMemPoolTrimTo_v11020"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync_v3020"},
    };
    if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
    for (const auto& n : names)
        if (n.d == domain && n.cbid == cbid) {
            *name = n.name;
            return CUPTI_SUCCESS;
        }
    // CUPTI names every id below its own count; ids the table above leaves out get a name of the stand-in's.
    uint32_t count = domain == CUPTI_CB_DOMAIN_DRIVER_API    ? kPersonality.driver_cbids
                     : domain == CUPTI_CB_DOMAIN_RUNTIME_API ? kPersonality.runtime_cbids
                                                             : 0;
    if (cbid >= count) return CUPTI_ERROR_INVALID_PARAMETER;
    using Names = char[2][1024][24];
    static const auto* generated = [] {  // every name written once, before any pointer is handed out
        auto* g = new Names[1];
        for (uint32_t i = 0; i < 1024; ++i) {
            std::snprintf((*g)[0][i], sizeof (*g)[0][i], "cuStandin%u", i);
            std::snprintf((*g)[1][i], sizeof (*g)[1][i], "cudaStandin%u_v1000", i);
        }
        return g;
    }();
    *name = (*generated)[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 0 : 1][cbid];
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }

STANDIN_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) {
    State& s = st();
    if (!size || !value) return CUPTI_ERROR_INVALID_PARAMETER;
    switch (attr) {
        case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE:
        case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE: {
            if (*size != sizeof(size_t)) return CUPTI_ERROR_INVALID_PARAMETER;
            size_t v;
            std::memcpy(&v, value, sizeof v);
            (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE ? s.device_buffer_size : s.preallocate) = v;
            return CUPTI_SUCCESS;
        }
        case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
            if (*size != sizeof(uint8_t)) return CUPTI_ERROR_INVALID_PARAMETER;
            s.zeroed_attr = *static_cast<uint8_t*>(value);
            return CUPTI_SUCCESS;
        default:
            return CUPTI_SUCCESS;  // accepted, not modelled
    }
}

STANDIN_EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t* id) {
    *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(context) - 0x1000 + 1);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t* id) {
    *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(context) - 0x1000);
    return CUPTI_SUCCESS;
}

// ---- control ---------------------------------------------------------------------------------------------

STANDIN_EXPORT uint32_t gprof_test_standin_runtime_call(uint32_t cbid) {
    return api_call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, "cudaStandinCall", nullptr);
}

namespace {
thread_local uint64_t t_blocking_ns = 0;  // how long the body of gprof_test_standin_blocking_call takes
void block_for(uint32_t) {
    uint64_t until = now_ns() + t_blocking_ns;
    while (now_ns() < until) {
    }
}
}  // namespace

STANDIN_EXPORT uint32_t gprof_test_standin_blocking_call(uint32_t cbid, uint64_t ns) {
    t_blocking_ns = ns;
    return api_call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, "cudaStandinCall", block_for);
}

STANDIN_EXPORT uint32_t gprof_test_standin_driver_call(uint32_t cbid) {
    return api_call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, "cuStandinCall", nullptr);
}

// The runtime's lazy initialisation (seen on an H200 with CUDA 13.0, 2026-11-27: the driver calls libcudart.so makes
// while it initialises have libc's frame, pthread_once, between libcudart's own): the first call makes `driver_calls`
// driver calls inside pthread_once, then every call is a runtime call (cudaGetDeviceCount) of its own.
namespace {
pthread_once_t g_runtime_once = PTHREAD_ONCE_INIT;
uint32_t g_runtime_init_calls = 0;
void initialise_runtime() {
    for (uint32_t i = 0; i < g_runtime_init_calls; ++i)
        api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion, "cuDriverGetVersion", nullptr);
}
}  // namespace

STANDIN_EXPORT uint32_t gprof_test_standin_runtime_first_call(uint32_t driver_calls) {
    g_runtime_init_calls = driver_calls;
    pthread_once(&g_runtime_once, initialise_runtime);
    return api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
                    "cudaGetDeviceCount", nullptr);
}

STANDIN_EXPORT uint32_t gprof_test_standin_launch_kernel(const char* name, uint32_t stream) {
    State& s = st();
    runtime_launch_prologue(name);
    uint32_t corr = api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                             "cudaLaunchKernel", nullptr);
    CUpti_ActivityKernel10 k = kernel_record(name, stream, corr, now_ns());
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    emit_locked(&k, k.kind);
    return corr;
}

STANDIN_EXPORT uint32_t gprof_test_standin_driver_launch_kernel(const char* name, uint32_t stream) {
    State& s = st();
    uint32_t corr = api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", nullptr);
    CUpti_ActivityKernel10 k = kernel_record(name, stream, corr, now_ns());
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    emit_locked(&k, k.kind);
    return corr;
}

STANDIN_EXPORT uint32_t gprof_test_standin_graph_launch(uint32_t graph_id, const char* kernel, uint32_t kernels,
                                                        uint32_t memsets, uint32_t memcpys, uint32_t stream,
                                                        int driver_api) {
    State& s = st();
    uint32_t corr = driver_api ? api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
                                          "cuGraphLaunch", nullptr)
                               : api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
                                          "cudaGraphLaunch", nullptr);
    uint64_t t = now_ns();
    uint64_t begin = t;
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    if (s.kinds[CUPTI_ACTIVITY_KIND_GRAPH_TRACE]) {
        // One record for the whole launch, instead of (not in addition to) the node records.
        CUpti_ActivityGraphTrace2 g{};
        g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
        g.correlationId = corr;
        g.start = begin;
        g.end = begin + 1000ull * (kernels + memsets + memcpys);
        g.deviceId = g.endDeviceId = 0;
        g.contextId = g.endContextId = 1;
        g.graphId = graph_id;
        g.streamId = stream;
        emit_locked(&g, g.kind);
        return corr;
    }
    uint64_t node = 0;
    auto node_id = [&] { return (static_cast<uint64_t>(graph_id) << 32) | ++node; };
    for (uint32_t i = 0; i < memsets; ++i, t += 1000) {
        CUpti_ActivityMemset4 m = memset_record(256, 0, stream, corr, t);
        m.graphId = graph_id;
        m.graphNodeId = node_id();
        emit_locked(&m, m.kind);
    }
    for (uint32_t i = 0; i < kernels; ++i, t += 1000) {
        CUpti_ActivityKernel10 k = kernel_record(kernel, stream, corr, t);
        k.graphId = graph_id;
        k.graphNodeId = node_id();
        emit_locked(&k, k.kind);
    }
    for (uint32_t i = 0; i < memcpys; ++i, t += 1000) {
        CUpti_ActivityMemcpy6 m = memcpy_record(4096, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, stream, corr, t);
        m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.graphId = graph_id;
        m.graphNodeId = node_id();
        emit_locked(&m, m.kind);
    }
    return corr;
}

STANDIN_EXPORT uint32_t gprof_test_standin_memcpy(uint64_t bytes, uint32_t copy_kind) {
    State& s = st();
    uint32_t corr =
        api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", nullptr);
    CUpti_ActivityMemcpy6 m = memcpy_record(bytes, copy_kind, 7, corr, now_ns());
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    emit_locked(&m, m.kind);
    return corr;
}

STANDIN_EXPORT uint32_t gprof_test_standin_memset(uint64_t bytes, uint32_t value) {
    State& s = st();
    uint32_t corr =
        api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, "cudaMemset", nullptr);
    CUpti_ActivityMemset4 m = memset_record(bytes, value, 7, corr, now_ns());
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    emit_locked(&m, m.kind);
    return corr;
}

namespace {

constexpr uint64_t kPoolAddress = 0x7e0000000000ull;
constexpr uint64_t kPoolGranule = 32ull << 20;  // the pool grows in steps; trims give whole steps back

// Under the lock.
void emit_pool_record(CUpti_ActivityMemoryPoolOperationType op, uint32_t corr, uint64_t min_keep) {
    State& s = st();
    CUpti_ActivityMemoryPool3 p{};
    p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    p.memoryPoolOperationType = op;
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    p.correlationId = corr;
    p.deviceId = 0;
    p.minBytesToKeep = min_keep;
    p.address = kPoolAddress;
    p.size = s.pool_size;
    p.releaseThreshold = 0;
    p.timestamp = now_ns();
    p.utilizedSize = s.pool_used;
    emit_locked(&p, p.kind);
}

}  // namespace

STANDIN_EXPORT uint32_t gprof_test_standin_memory(uint32_t runtime_cbid, int release, uint32_t memory_kind,
                                                  uint64_t address, uint64_t bytes, int from_pool) {
    State& s = st();
    uint32_t corr = api_call(CUPTI_CB_DOMAIN_RUNTIME_API, runtime_cbid, "cudaStandinMemoryCall", nullptr);
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    CUpti_ActivityMemory4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType =
        release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = static_cast<CUpti_ActivityMemoryKind>(memory_kind);
    m.correlationId = corr;
    m.address = address;
    m.bytes = bytes;
    m.timestamp = now_ns();
    m.processId = static_cast<uint32_t>(getpid());
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = from_pool ? 7 : CUPTI_INVALID_STREAM_ID;
    if (from_pool) {
        if (!s.pool_created) {
            s.pool_created = true;
            emit_pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, corr, 0);
        }
        if (release) {
            s.pool_used -= bytes < s.pool_used ? bytes : s.pool_used;
        } else {
            s.pool_used += bytes;
            while (s.pool_size < s.pool_used) s.pool_size += kPoolGranule;
        }
        m.isAsync = 1;
        m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
        m.memoryPoolConfig.address = kPoolAddress;
        m.memoryPoolConfig.pool.size = s.pool_size;
        m.memoryPoolConfig.utilizedSize = s.pool_used;
    }
    emit_locked(&m, m.kind);
    return corr;
}

STANDIN_EXPORT uint32_t gprof_test_standin_pool_trim(uint64_t min_bytes_to_keep) {
    State& s = st();
    uint32_t corr = api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020,
                             "cudaMemPoolTrimTo", nullptr);
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    uint64_t keep = s.pool_used > min_bytes_to_keep ? s.pool_used : min_bytes_to_keep;
    uint64_t size = 0;
    while (size < keep) size += kPoolGranule;
    if (size < s.pool_size) s.pool_size = size;
    emit_pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, corr, min_bytes_to_keep);
    return corr;
}

STANDIN_EXPORT void gprof_test_standin_profiler_start() {
    api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, "cudaProfilerStart",
             [](uint32_t) {
                 api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, "cuProfilerStart",
                          nullptr);
             });
}

STANDIN_EXPORT void gprof_test_standin_profiler_stop() {
    api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, "cudaProfilerStop",
             [](uint32_t) {
                 api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, "cuProfilerStop",
                          nullptr);
             });
}

STANDIN_EXPORT void gprof_test_standin_device_reset() {
    api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, "cudaDeviceReset", nullptr);
}

STANDIN_EXPORT void gprof_test_standin_context_created(uint32_t device) {
    State& s = st();
    if (!callback_enabled(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED)) return;
    CUpti_ResourceData r{};
    r.context = fake_context(device);
    s.callback(s.userdata, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &r);
}

STANDIN_EXPORT void gprof_test_standin_add_dropped(uint64_t count) {
    State& s = st();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    s.dropped_pending += count;
}

STANDIN_EXPORT void gprof_test_standin_complete_buffer() {
    State& s = st();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    complete_locked();
}

STANDIN_EXPORT int gprof_test_standin_subscribed() { return st().subscribed ? 1 : 0; }
STANDIN_EXPORT uint64_t gprof_test_standin_refused_subscriptions() { return st().refused_subscriptions; }
STANDIN_EXPORT int gprof_test_standin_kind_enabled(uint32_t kind) { return kind < 64 && st().kinds[kind] ? 1 : 0; }
STANDIN_EXPORT int gprof_test_standin_timestamp_callback_registered() { return st().timestamp ? 1 : 0; }
STANDIN_EXPORT int gprof_test_standin_runtime_api_filtered(uint32_t cbid) {
    return cbid < 1024 && st().runtime_filtered[cbid] ? 1 : 0;
}
STANDIN_EXPORT int gprof_test_standin_driver_api_filtered(uint32_t cbid) {
    return cbid < 1024 && st().driver_filtered[cbid] ? 1 : 0;
}
STANDIN_EXPORT uint64_t gprof_test_standin_buffers_requested() { return st().requested_count; }
STANDIN_EXPORT uint64_t gprof_test_standin_buffers_completed() { return st().completed_count; }
STANDIN_EXPORT uint64_t gprof_test_standin_buffers_refused() { return st().refused; }
STANDIN_EXPORT uint64_t gprof_test_standin_flushes(int forced) { return st().flushes[forced ? 1 : 0]; }
STANDIN_EXPORT uint64_t gprof_test_standin_records_emitted() { return st().emitted; }
STANDIN_EXPORT uint64_t gprof_test_standin_client_ticks(int which) {
    return which >= 0 && which < 3 ? g_client_ticks[which].load() : 0;
}
STANDIN_EXPORT uint64_t gprof_test_standin_client_calls(int which) {
    return which >= 0 && which < 3 ? g_client_calls[which].load() : 0;
}
STANDIN_EXPORT uint64_t gprof_test_standin_attribute(uint32_t attr) {
    State& s = st();
    switch (attr) {
        case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE: return s.device_buffer_size;
        case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE: return s.preallocate;
        case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER: return s.zeroed_attr;
        default: return 0;
    }
}
STANDIN_EXPORT uint64_t gprof_test_standin_buffers_zeroed_by_cupti() { return st().zeroed_by_cupti; }
STANDIN_EXPORT uint64_t gprof_test_standin_dirty_buffers_supplied() { return st().dirty_supplied; }
STANDIN_EXPORT int gprof_test_standin_callback_enabled(uint32_t domain, uint32_t cbid) {
    return domain < 4 && cbid < 1024 && st().cb_enabled[domain][cbid] ? 1 : 0;
}

STANDIN_EXPORT void gprof_test_standin_reset() {
    State& s = st();
    std::lock_guard<std::recursive_mutex> lock(s.mutex);
    s.script = read_script();
    s.dropped_pending = s.script.drop_first;
    s.dropped_unreported = 0;
    s.subscribed = false;
    s.subscriber_name.clear();
    s.refused_subscriptions = 0;
    s.callback = nullptr;
    s.requested = nullptr;
    s.completed = nullptr;
    s.timestamp = nullptr;
    std::memset(s.cb_enabled, 0, sizeof s.cb_enabled);
    std::memset(s.kinds, 0, sizeof s.kinds);
    std::memset(s.runtime_filtered, 0, sizeof s.runtime_filtered);
    std::memset(s.driver_filtered, 0, sizeof s.driver_filtered);
    s.buffer = nullptr;  // a buffer still held belongs to the old client: leaked in tests
    s.size = s.used = 0;
    s.requested_count = s.completed_count = s.refused = s.emitted = 0;
    s.loaded_kernels.clear();
    s.pool_created = false;
    s.pool_size = s.pool_used = 0;
    s.flushes[0] = s.flushes[1] = 0;
    s.device_buffer_size = 3u << 20;
    s.preallocate = 3;
    s.zeroed_attr = 0;
    s.zeroed_by_cupti = s.dirty_supplied = 0;
}
