#include "cupti/translate.h"

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace gprof::collector::cupti {
namespace {

using namespace gprof::trace;

constexpr size_t kKernelNameSlots = 1024;  // power of two

// CUPTI enumerations map onto records.h by value; values newer than records.h knows survive as raw numbers
// (the reader prints them as unknown) rather than being folded into Unknown here.
template <class E>
E narrow_enum(uint32_t v) {
    return static_cast<E>(v <= 0xFF ? v : 0);
}

// The cbid name CUPTI gives runtime calls carries the CUDA version that introduced the entry point
// ("cudaLaunchKernel_v7000"); users know the call as "cudaLaunchKernel". Driver names are real symbol names
// ("cuMemcpyHtoD_v2") and stay as they are.
size_t runtime_name_length(const char* s) {
    size_t n = std::strlen(s);
    size_t i = n;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
    if (i < n && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_') return i - 2;
    return n;
}

// MEMCPY (read as Memcpy5) and MEMCPY2 (MemcpyPtoP4) records share every field but where the devices are.
template <class M, class Ts>
Memcpy memcpy_record(const M* m, Ts&& ts, uint32_t device, uint32_t peer_device) {
    Memcpy r;
    r.start = ts(m->start);
    r.end = ts(m->end);
    r.bytes = m->bytes;
    r.device = device;
    r.peer_device = peer_device;
    r.context = m->contextId;
    r.stream = m->streamId;
    r.correlation = m->correlationId;
    r.graph_id = m->graphId;
    r.graph_node_id = m->graphNodeId;
    r.copy_kind = narrow_enum<MemcpyKind>(m->copyKind);
    r.src_kind = narrow_enum<MemoryKind>(m->srcKind);
    r.dst_kind = narrow_enum<MemoryKind>(m->dstKind);
    r.async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
    return r;
}

}  // namespace

void Translator::reset() {
    runtime_names_.clear();
    driver_names_.clear();
    kernel_names_.clear();
    writer_ = nullptr;
}

trace::StringId Translator::api_name(TraceWriter& w, CUpti_CallbackDomain domain, uint32_t cbid) {
    auto& table = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_names_ : driver_names_;
    if (cbid < table.size() && table[cbid] != 0) return table[cbid];
    if (cbid >= 65536) return 0;
    if (cbid >= table.size()) table.resize(cbid + 64, 0);
    const char* name = nullptr;
    StringId id = 0;
    if (api_ && api_->GetCallbackName && api_->GetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name) {
        id = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? w.intern(name, runtime_name_length(name)) : w.intern(name);
    } else {
        char fallback[48];
        int n = std::snprintf(fallback, sizeof fallback, "%s#%u",
                              domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaApi" : "cuApi", cbid);
        id = w.intern(fallback, static_cast<size_t>(n));
    }
    table[cbid] = id;
    return id;
}

trace::StringId Translator::kernel_name(TraceWriter& w, const char* name) {
    if (!name) return 0;
    if (kernel_names_.empty()) kernel_names_.resize(kKernelNameSlots);
    auto key = reinterpret_cast<uintptr_t>(name);
    NameSlot& slot = kernel_names_[(key >> 3 ^ key >> 13) & (kKernelNameSlots - 1)];
    if (slot.ptr == name && std::strncmp(name, slot.text.data(), slot.length + 1) == 0) return slot.id;
    size_t len = std::strlen(name);
    StringId id = w.intern(name, len);
    slot.ptr = name;
    slot.id = id;
    slot.length = static_cast<uint32_t>(len);
    slot.text.assign(name, name + len + 1);
    return id;
}

namespace {

// ---- the struct each kind is read through -----------------------------------------------------------------
// The oldest struct of each kind a supported CUPTI (12.4 and later) writes; every field read through it must sit at
// the same offset in each newer struct of the kind, up to the 13.0 headers' newest. Checked here, field by field: a
// field added to a translation below must be added to its list, or the build says so only if it is missing from the
// old struct (then it goes through GPROF_CUPTI_HAS_FIELD instead).
#define GPROF_SAME_OFFSET(old_type, new_type, field)                                                    \
    static_assert(offsetof(old_type, field) == offsetof(new_type, field) &&                              \
                      sizeof(static_cast<old_type*>(nullptr)->field) ==                                   \
                          sizeof(static_cast<new_type*>(nullptr)->field),                                 \
                  #field " of " #old_type " and " #new_type " differ: the 12.x and 13.x records disagree")
#define GPROF_SAME_OFFSETS_KERNEL(f) GPROF_SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, f)
GPROF_SAME_OFFSETS_KERNEL(start); GPROF_SAME_OFFSETS_KERNEL(end); GPROF_SAME_OFFSETS_KERNEL(deviceId);
GPROF_SAME_OFFSETS_KERNEL(contextId); GPROF_SAME_OFFSETS_KERNEL(streamId); GPROF_SAME_OFFSETS_KERNEL(correlationId);
GPROF_SAME_OFFSETS_KERNEL(gridX); GPROF_SAME_OFFSETS_KERNEL(gridY); GPROF_SAME_OFFSETS_KERNEL(gridZ);
GPROF_SAME_OFFSETS_KERNEL(blockX); GPROF_SAME_OFFSETS_KERNEL(blockY); GPROF_SAME_OFFSETS_KERNEL(blockZ);
GPROF_SAME_OFFSETS_KERNEL(registersPerThread); GPROF_SAME_OFFSETS_KERNEL(staticSharedMemory);
GPROF_SAME_OFFSETS_KERNEL(dynamicSharedMemory); GPROF_SAME_OFFSETS_KERNEL(localMemoryPerThread);
GPROF_SAME_OFFSETS_KERNEL(name); GPROF_SAME_OFFSETS_KERNEL(graphId); GPROF_SAME_OFFSETS_KERNEL(graphNodeId);
#define GPROF_SAME_OFFSETS_MEMCPY(f) GPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, f)
GPROF_SAME_OFFSETS_MEMCPY(start); GPROF_SAME_OFFSETS_MEMCPY(end); GPROF_SAME_OFFSETS_MEMCPY(bytes);
GPROF_SAME_OFFSETS_MEMCPY(deviceId); GPROF_SAME_OFFSETS_MEMCPY(contextId); GPROF_SAME_OFFSETS_MEMCPY(streamId);
GPROF_SAME_OFFSETS_MEMCPY(correlationId); GPROF_SAME_OFFSETS_MEMCPY(graphId); GPROF_SAME_OFFSETS_MEMCPY(graphNodeId);
GPROF_SAME_OFFSETS_MEMCPY(copyKind); GPROF_SAME_OFFSETS_MEMCPY(srcKind); GPROF_SAME_OFFSETS_MEMCPY(dstKind);
GPROF_SAME_OFFSETS_MEMCPY(flags);
// MEMCPY2: MemcpyPtoP4 since 11.6, in 12.4 through 13.0 alike (one struct, nothing to compare). MEMSET: Memset4.
#define GPROF_SAME_OFFSETS_SYNC(f) \
    GPROF_SAME_OFFSET(CUpti_ActivitySynchronization, CUpti_ActivitySynchronization2, f)
GPROF_SAME_OFFSETS_SYNC(start); GPROF_SAME_OFFSETS_SYNC(end); GPROF_SAME_OFFSETS_SYNC(contextId);
GPROF_SAME_OFFSETS_SYNC(streamId); GPROF_SAME_OFFSETS_SYNC(cudaEventId); GPROF_SAME_OFFSETS_SYNC(correlationId);
GPROF_SAME_OFFSETS_SYNC(type);
#define GPROF_SAME_OFFSETS_MEMORY(f) GPROF_SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, f)
GPROF_SAME_OFFSETS_MEMORY(timestamp); GPROF_SAME_OFFSETS_MEMORY(address); GPROF_SAME_OFFSETS_MEMORY(bytes);
GPROF_SAME_OFFSETS_MEMORY(deviceId); GPROF_SAME_OFFSETS_MEMORY(contextId); GPROF_SAME_OFFSETS_MEMORY(streamId);
GPROF_SAME_OFFSETS_MEMORY(correlationId); GPROF_SAME_OFFSETS_MEMORY(memoryOperationType);
GPROF_SAME_OFFSETS_MEMORY(memoryKind); GPROF_SAME_OFFSETS_MEMORY(isAsync);
GPROF_SAME_OFFSETS_MEMORY(memoryPoolConfig.memoryPoolType); GPROF_SAME_OFFSETS_MEMORY(memoryPoolConfig.address);
GPROF_SAME_OFFSETS_MEMORY(memoryPoolConfig.releaseThreshold); GPROF_SAME_OFFSETS_MEMORY(memoryPoolConfig.pool.size);
GPROF_SAME_OFFSETS_MEMORY(memoryPoolConfig.utilizedSize);
#define GPROF_SAME_OFFSETS_POOL(f) GPROF_SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, f)
GPROF_SAME_OFFSETS_POOL(timestamp); GPROF_SAME_OFFSETS_POOL(address); GPROF_SAME_OFFSETS_POOL(deviceId);
GPROF_SAME_OFFSETS_POOL(correlationId); GPROF_SAME_OFFSETS_POOL(memoryPoolOperationType);
GPROF_SAME_OFFSETS_POOL(memoryPoolType); GPROF_SAME_OFFSETS_POOL(size); GPROF_SAME_OFFSETS_POOL(utilizedSize);
GPROF_SAME_OFFSETS_POOL(releaseThreshold); GPROF_SAME_OFFSETS_POOL(minBytesToKeep);
// OVERHEAD: Overhead3 since 12.4; GRAPH_TRACE: GraphTrace2, DEVICE: Device5 in 12.4 through 13.0 (the real 12.4
// library steps 56 and 184 bytes over them: test_cupti12_real.cpp).
#undef GPROF_SAME_OFFSETS_KERNEL
#undef GPROF_SAME_OFFSETS_MEMCPY
#undef GPROF_SAME_OFFSETS_SYNC
#undef GPROF_SAME_OFFSETS_MEMORY
#undef GPROF_SAME_OFFSETS_POOL
#undef GPROF_SAME_OFFSET

// The struct each kind is read through, and so the least a record of that kind must hold.
template <CUpti_ActivityKind K> struct ReadAs;
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_RUNTIME> { using type = CUpti_ActivityAPI; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL> { using type = CUpti_ActivityKernel9; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_MEMCPY> { using type = CUpti_ActivityMemcpy5; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_MEMCPY2> { using type = CUpti_ActivityMemcpyPtoP4; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_MEMSET> { using type = CUpti_ActivityMemset4; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_SYNCHRONIZATION> { using type = CUpti_ActivitySynchronization; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_MEMORY2> { using type = CUpti_ActivityMemory3; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_MEMORY_POOL> { using type = CUpti_ActivityMemoryPool2; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_OVERHEAD> { using type = CUpti_ActivityOverhead3; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION> { using type = CUpti_ActivityExternalCorrelation; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_GRAPH_TRACE> { using type = CUpti_ActivityGraphTrace2; };
template <> struct ReadAs<CUPTI_ACTIVITY_KIND_DEVICE> { using type = CUpti_ActivityDevice5; };

}  // namespace

void Translator::drop_api_call(CUpti_CallbackDomain domain, uint32_t cbid) {
    if (cbid >= 65536) return;
    auto& table = dropped_[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0];
    if (cbid >= table.size()) table.resize(cbid + 1, false);
    table[cbid] = true;
}

bool Translator::translate_one(TraceWriter& w, const CUpti_Activity* record) {
    // The size the loaded CUPTI gives a record of this kind; below the struct it is read through, it is not read.
    const size_t size = api_->record_sizes.of(record->kind);
    auto readable = [&]<class S>(const S*) {
        if (size >= sizeof(S)) return true;
        ++stats_.unreadable;
        return false;
    };
    switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            auto* a = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_RUNTIME>::type*>(record);
            if (!readable(a)) return true;
            // The translating thread is the collector's writer: its driver calls (device properties) are ours,
            // not the program's.
            if (own_tid_ != 0 && a->threadId == own_tid_) {
                ++stats_.own_calls;
                return true;
            }
            bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
            if (const auto& dropped = dropped_[runtime ? 0 : 1]; a->cbid < dropped.size() && dropped[a->cbid]) {
                ++stats_.filtered;
                return true;
            }
            ApiCall r;
            r.start = ts(a->start);
            r.end = ts(a->end);
            r.tid = a->threadId;
            r.correlation = a->correlationId;
            r.cbid = a->cbid;
            r.name = api_name(w, runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
            r.result = static_cast<int32_t>(a->returnValue);
            r.domain = runtime ? ApiDomain::Runtime : ApiDomain::Driver;
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            auto* k = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL>::type*>(record);
            if (!readable(k)) return true;
            Kernel r;
            r.start = ts(k->start);
            r.end = ts(k->end);
            r.device = k->deviceId;
            r.context = k->contextId;
            r.stream = k->streamId;
            r.correlation = k->correlationId;
            r.grid_x = k->gridX;
            r.grid_y = k->gridY;
            r.grid_z = k->gridZ;
            r.block_x = k->blockX;
            r.block_y = k->blockY;
            r.block_z = k->blockZ;
            r.registers_per_thread = k->registersPerThread;
            r.static_shared_bytes = static_cast<uint32_t>(k->staticSharedMemory);
            r.dynamic_shared_bytes = static_cast<uint32_t>(k->dynamicSharedMemory);
            r.local_bytes_per_thread = k->localMemoryPerThread;
            r.name = kernel_name(w, k->name);
            r.graph_id = k->graphId;
            r.graph_node_id = k->graphNodeId;
            // Kernel10 (13.0) and later only: in a 12.x record that byte is the next record's.
            if (GPROF_CUPTI_HAS_FIELD(size, CUpti_ActivityKernel10, isDeviceLaunched))
                r.device_launched = reinterpret_cast<const CUpti_ActivityKernel10*>(record)->isDeviceLaunched;
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            auto* m = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_MEMCPY>::type*>(record);
            if (!readable(m)) return true;
            w.add(memcpy_record(m, [this](uint64_t t) { return ts(t); }, m->deviceId, m->deviceId));
            return true;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            auto* m = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_MEMCPY2>::type*>(record);
            if (!readable(m)) return true;
            w.add(memcpy_record(m, [this](uint64_t t) { return ts(t); }, m->srcDeviceId, m->dstDeviceId));
            return true;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            auto* m = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_MEMSET>::type*>(record);
            if (!readable(m)) return true;
            Memset r;
            r.start = ts(m->start);
            r.end = ts(m->end);
            r.bytes = m->bytes;
            r.value = m->value;
            r.device = m->deviceId;
            r.context = m->contextId;
            r.stream = m->streamId;
            r.correlation = m->correlationId;
            r.graph_id = m->graphId;
            r.graph_node_id = m->graphNodeId;
            r.memory_kind = narrow_enum<MemoryKind>(m->memoryKind);
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
            auto* s = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_SYNCHRONIZATION>::type*>(record);
            if (!readable(s)) return true;
            Sync r;
            r.start = ts(s->start);
            r.end = ts(s->end);
            r.context = s->contextId;
            r.stream = s->streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (0xFFFFFFFF) kept: not applicable
            r.event = s->cudaEventId;
            r.correlation = s->correlationId;
            r.type = narrow_enum<SyncType>(static_cast<uint32_t>(s->type));
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY2: {
            auto* m = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_MEMORY2>::type*>(record);
            if (!readable(m)) return true;
            Memory r;
            r.timestamp = ts(m->timestamp);
            r.address = m->address;
            r.bytes = m->bytes;
            r.device = m->deviceId;
            r.context = m->contextId;
            r.stream = m->streamId;
            r.correlation = m->correlationId;
            r.op = narrow_enum<MemoryOp>(static_cast<uint32_t>(m->memoryOperationType));
            r.memory_kind = narrow_enum<MemoryKind>(static_cast<uint32_t>(m->memoryKind));
            r.async = m->isAsync ? 1 : 0;
            const auto& pool = m->memoryPoolConfig;
            r.pool_type = narrow_enum<MemoryPoolType>(static_cast<uint32_t>(pool.memoryPoolType));
            if (r.pool_type != MemoryPoolType::None) {
                r.pool_address = pool.address;
                r.pool_release_threshold = pool.releaseThreshold;
                r.pool_used = pool.utilizedSize;
                // The union holds the pool's size for a local pool, the exporting process's id for an imported one.
                if (pool.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) r.pool_size = pool.pool.size;
            }
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
            auto* m = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_MEMORY_POOL>::type*>(record);
            if (!readable(m)) return true;
            MemoryPool r;
            r.timestamp = ts(m->timestamp);
            r.address = m->address;
            r.device = m->deviceId;
            r.correlation = m->correlationId;
            r.op = narrow_enum<MemoryPoolOp>(static_cast<uint32_t>(m->memoryPoolOperationType));
            r.pool_type = narrow_enum<MemoryPoolType>(static_cast<uint32_t>(m->memoryPoolType));
            r.size = m->size;
            r.used = m->utilizedSize;
            r.release_threshold = m->releaseThreshold;
            r.min_bytes_to_keep = m->minBytesToKeep;
            // MemoryPool3 (13.0) and later only: in a 12.x record that byte is the next record's.
            if (GPROF_CUPTI_HAS_FIELD(size, CUpti_ActivityMemoryPool3, isManagedPool))
                r.managed = reinterpret_cast<const CUpti_ActivityMemoryPool3*>(record)->isManagedPool;
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_OVERHEAD: {
            auto* o = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_OVERHEAD>::type*>(record);
            if (!readable(o)) return true;
            Overhead r;
            r.start = ts(o->start);
            r.end = ts(o->end);
            r.overhead_kind = static_cast<uint32_t>(o->overheadKind);
            r.object_kind = static_cast<uint32_t>(o->objectKind);
            switch (o->objectKind) {
                case CUPTI_ACTIVITY_OBJECT_PROCESS: r.object_id = o->objectId.pt.processId; break;
                case CUPTI_ACTIVITY_OBJECT_THREAD: r.object_id = o->objectId.pt.threadId; break;
                case CUPTI_ACTIVITY_OBJECT_DEVICE:
                case CUPTI_ACTIVITY_OBJECT_CONTEXT:
                case CUPTI_ACTIVITY_OBJECT_STREAM: r.object_id = o->objectId.dcs.deviceId; break;
                default: r.object_id = 0; break;
            }
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            auto* e = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION>::type*>(record);
            if (!readable(e)) return true;
            ExternalCorrelation r;
            r.external_id = e->externalId;
            r.correlation = e->correlationId;
            r.external_kind = static_cast<uint32_t>(e->externalKind);
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
            auto* g = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_GRAPH_TRACE>::type*>(record);
            if (!readable(g)) return true;
            GraphLaunch r;
            r.start = ts(g->start);
            r.end = ts(g->end);
            r.device = g->deviceId;
            r.context = g->contextId;
            r.stream = g->streamId;
            r.correlation = g->correlationId;
            r.graph_id = g->graphId;
            w.add(r);
            return true;
        }
        case CUPTI_ACTIVITY_KIND_DEVICE: {
            auto* d = reinterpret_cast<const ReadAs<CUPTI_ACTIVITY_KIND_DEVICE>::type*>(record);
            if (!readable(d)) return true;
            Device r;
            r.id = d->id;
            r.name = w.intern(d->name);
            r.cc_major = d->computeCapabilityMajor;
            r.cc_minor = d->computeCapabilityMinor;
            r.sm_count = d->numMultiprocessors;
            r.global_memory_bytes = d->globalMemorySize;
            static const uint8_t kNoUuid[16] = {};
            if (std::memcmp(d->uuid.bytes, kNoUuid, 16) != 0) {
                char uuid[41];
                format_uuid(reinterpret_cast<const uint8_t*>(d->uuid.bytes), uuid);
                r.uuid = w.intern(uuid);
            }
            w.add(r);
            return true;
        }
        default:
            return false;
    }
}

size_t Translator::translate(TraceWriter& w, const uint8_t* buffer, size_t valid_size) {
    if (&w != writer_) {
        reset();
        writer_ = &w;
    }
    ++stats_.buffers;
    if (!buffer || valid_size == 0 || !api_ || !api_->ActivityGetNextRecord) return 0;
    size_t written = 0;
    CUpti_Activity* record = nullptr;
    auto* data = const_cast<uint8_t*>(buffer);  // CUPTI's signature is not const; it only reads
    for (;;) {
        CUptiResult rc = api_->ActivityGetNextRecord(data, valid_size, &record);
        if (rc != CUPTI_SUCCESS) {
            if (rc != CUPTI_ERROR_MAX_LIMIT_REACHED) ++stats_.malformed;
            break;
        }
        uint64_t own_before = stats_.own_calls;
        if (!translate_one(w, record))
            ++stats_.skipped;
        else if (stats_.own_calls == own_before)
            ++written;
    }
    stats_.records += written;
    return written;
}

void format_uuid(const uint8_t b[16], char out[41]) {
    static const char hex[] = "0123456789abcdef";
    char* p = out;
    std::memcpy(p, "GPU-", 4);
    p += 4;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 0xF];
    }
    *p = '\0';
}

}  // namespace gprof::collector::cupti
