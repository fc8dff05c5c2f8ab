// Buffers laid out as CUPTI lays them out, built from the record structs of cupti_activity.h, and the translation of
// every activity kind the session enables, field by field: walked with a REAL libcupti's cuptiActivityGetNextRecord
// (it works with no GPU), written with TraceWriter, decoded with TraceReader. Shared by test_translate.cpp (CUDA 13)
// and test_cupti12_real.cpp (the CUPTI 12.4 and 12.9 of the nvidia-cuda-cupti-cu12 wheels), each with the structs
// its library writes (a Layout: Layout13, Layout12_9, Layout12_4).
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "cupti_loader/loader.h"
#include "cupti/translate.h"
#include "trace_fixture.h"

namespace gprof::testing {

using namespace gprof::collector::cupti;

// The structs a CUPTI release writes where they differ between 12.4, 12.9 and 13.0 (measured strides of the real
// libraries: top of tests/collector/cupti_standin/standin.cpp); the other kinds are the same in all three.
struct Layout13 {
    using Kernel = CUpti_ActivityKernel10;
    using Memcpy = CUpti_ActivityMemcpy6;
    using Sync = CUpti_ActivitySynchronization2;
    using Memory = CUpti_ActivityMemory4;
    using MemoryPool = CUpti_ActivityMemoryPool3;
};
struct Layout12_9 : Layout13 {
    using Kernel = CUpti_ActivityKernel9;
    using MemoryPool = CUpti_ActivityMemoryPool2;
};
struct Layout12_4 : Layout12_9 {
    using Memcpy = CUpti_ActivityMemcpy5;
    using Sync = CUpti_ActivitySynchronization;
    using Memory = CUpti_ActivityMemory3;
};

// A buffer laid out as CUPTI lays it out: records back to back, each its full struct size, 8-byte aligned.
class ActivityBuffer {
public:
    template <class T>
    T& add(CUpti_ActivityKind kind) {
        static_assert(sizeof(T) % 8 == 0);
        size_t at = bytes_.size();
        offsets_.push_back(at);
        bytes_.resize(at + sizeof(T));
        T value{};
        std::memcpy(bytes_.data() + at, &value, sizeof(T));
        auto* p = reinterpret_cast<T*>(bytes_.data() + at);
        std::memcpy(static_cast<void*>(p), &kind, sizeof(kind));
        return *p;
    }
    uint8_t* data() { return bytes_.data(); }
    size_t size() const { return bytes_.size(); }
    const std::vector<size_t>& offsets() const { return offsets_; }

private:
    std::vector<uint8_t> bytes_;  // a reference from add() is valid until the next add()
    std::vector<size_t> offsets_;
};

// The finished buffer, copied into 8-byte aligned storage as CUPTI requires.
struct Built {
    uint8_t* data = nullptr;
    size_t size = 0;
    std::vector<uint64_t> aligned;
};

inline Built freeze(ActivityBuffer& b) {
    Built out;
    out.aligned.resize((b.size() + 7) / 8);
    std::memcpy(out.aligned.data(), b.data(), b.size());
    out.data = reinterpret_cast<uint8_t*>(out.aligned.data());
    out.size = b.size();
    return out;
}

inline std::vector<trace::Record> translate_and_read(const CuptiApi* api, uint8_t* data, size_t size, TranslateStats* stats,
                                              std::vector<std::string>* names = nullptr, int64_t offset = 0) {
    TempDir dir;
    std::string path = dir.file("t.gprof");
    Translator t(api);
    t.set_timestamp_offset(offset);
    gprof::testing::write_trace(path, [&](trace::TraceWriter& w) { t.translate(w, data, size); });
    if (stats) *stats = t.stats();
    trace::TraceReader reader(path);
    auto all = gprof::testing::read_all_records(reader);
    std::vector<trace::Record> out;
    for (auto& r : all) {
        if (r.kind == trace::RecordKind::End) continue;
        out.push_back(r);
        if (names) {
            trace::StringId id = 0;
            switch (r.kind) {
                case trace::RecordKind::ApiCall: id = r.api.name; break;
                case trace::RecordKind::Kernel: id = r.kernel.name; break;
                case trace::RecordKind::Device: id = r.device.name; break;
                default: break;
            }
            names->push_back(std::string(reader.string(id)));
        }
    }
    return out;
}


// One record of every kind the session enables, each field set to its own value, translated and read back.
template <class L>
void every_kind_field_by_field(const CuptiApi* api) {
    REQUIRE(api);
    static const char* kKernel = "_Z6kernelPfi";
    static char kKernelCopy[] = "_Z6kernelPfi";  // same text, another pointer
    ActivityBuffer b;
    {
        auto& a = b.template add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
        a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
        a.start = 1000;
        a.end = 2000;
        a.processId = 1;
        a.threadId = 77;
        a.correlationId = 5;
        a.returnValue = 0;
    }
    {
        auto& a = b.template add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
        a.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
        a.start = 1100;
        a.end = 1900;
        a.threadId = 77;
        a.correlationId = 6;
        a.returnValue = 1;  // CUDA_ERROR_INVALID_VALUE
    }
    {
        auto& k = b.template add<typename L::Kernel>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        k.start = 3000;
        k.end = 4000;
        k.deviceId = 1;
        k.contextId = 2;
        k.streamId = 13;
        k.correlationId = 5;
        k.gridX = 10; k.gridY = 20; k.gridZ = 30;
        k.blockX = 128; k.blockY = 2; k.blockZ = 1;
        k.registersPerThread = 40;
        k.staticSharedMemory = 1024;
        k.dynamicSharedMemory = 2048;
        k.localMemoryPerThread = 16;
        k.name = kKernel;
        k.graphId = 9;
        k.graphNodeId = 1234567890123ull;
        if constexpr (requires { k.isDeviceLaunched; }) k.isDeviceLaunched = 1;
    }
    {
        auto& k = b.template add<typename L::Kernel>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        k.start = 0;  // unknown: CUPTI ran short of device buffer
        k.end = 0;
        k.correlationId = 7;
        k.name = kKernelCopy;
    }
    {
        auto& m = b.template add<typename L::Memcpy>(CUPTI_ACTIVITY_KIND_MEMCPY);
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
        m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
        m.bytes = 1u << 20;
        m.start = 5000;
        m.end = 6000;
        m.deviceId = 1;
        m.contextId = 2;
        m.streamId = 14;
        m.correlationId = 8;
        m.graphId = 9;
        m.graphNodeId = 77;
    }
    {
        auto& m = b.template add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
        m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.bytes = 4096;
        m.start = 7000;
        m.end = 7500;
        m.deviceId = 0;
        m.srcDeviceId = 0;
        m.dstDeviceId = 1;
        m.contextId = 3;
        m.streamId = 15;
        m.correlationId = 9;
    }
    {
        auto& m = b.template add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
        m.value = 0xAB;
        m.bytes = 512;
        m.start = 8000;
        m.end = 8100;
        m.deviceId = 1;
        m.contextId = 2;
        m.streamId = 16;
        m.correlationId = 10;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
        m.graphId = 11;
        m.graphNodeId = 12;
    }
    {
        auto& s = b.template add<typename L::Sync>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
        s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
        s.start = 9000;
        s.end = 9100;
        s.correlationId = 11;
        s.contextId = 2;
        s.streamId = 16;
        s.cudaEventId = 3;
    }
    {
        auto& s = b.template add<typename L::Sync>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
        s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
        s.start = 9200;
        s.end = 9300;
        s.correlationId = 12;
        s.contextId = 2;
        s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
        s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    }
    {
        auto& m = b.template add<typename L::Memory>(CUPTI_ACTIVITY_KIND_MEMORY2);
        m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.correlationId = 13;
        m.address = 0x7f0000001000ull;
        m.bytes = 1ull << 30;
        m.timestamp = 0;  // unknown stays unknown
        m.deviceId = 1;
        m.contextId = 2;
        m.streamId = 17;
        m.isAsync = 1;  // cudaMallocAsync: carved out of a local pool
        m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
        m.memoryPoolConfig.address = 0x7e0000000000ull;
        m.memoryPoolConfig.releaseThreshold = 64ull << 20;
        m.memoryPoolConfig.pool.size = 2ull << 30;
        m.memoryPoolConfig.utilizedSize = 1ull << 30;
    }
    {
        auto& m = b.template add<typename L::Memory>(CUPTI_ACTIVITY_KIND_MEMORY2);
        m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
        m.address = 0x7f0000001000ull;
        m.bytes = 1ull << 30;
        m.timestamp = 9900;
    }
    {
        auto& o = b.template add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
        o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
        o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        o.objectId.pt.processId = 1;
        o.objectId.pt.threadId = 55;
        o.start = 10000;
        o.end = 10500;
    }
    {
        auto& e = b.template add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        e.externalId = 0xdeadbeefcafeull;
        e.correlationId = 5;
    }
    {
        auto& g = b.template add<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
        g.correlationId = 14;
        g.start = 11000;
        g.end = 12000;
        g.deviceId = 1;
        g.graphId = 9;
        g.contextId = 2;
        g.streamId = 18;
    }
    {
        auto& p = b.template add<typename L::MemoryPool>(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
        p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
        p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
        p.correlationId = 15;
        p.deviceId = 1;
        p.minBytesToKeep = 1ull << 20;
        p.address = 0x7e0000000000ull;
        p.size = 256ull << 20;
        p.releaseThreshold = 64ull << 20;
        p.timestamp = 12500;
        p.utilizedSize = 0;
        if constexpr (requires { p.isManagedPool; }) p.isManagedPool = 1;
    }
    {
        auto& n = b.template add<CUpti_ActivityName>(CUPTI_ACTIVITY_KIND_NAME);  // not translated: skipped, counted
        n.name = "ignored";
    }
    Built f = freeze(b);

    TranslateStats stats;
    std::vector<std::string> names;
    auto recs = translate_and_read(api, f.data, f.size, &stats, &names);
    CHECK(stats.skipped == 1);
    CHECK(stats.malformed == 0);
    REQUIRE(recs.size() == 15);

    const auto& rt = recs[0].api;
    REQUIRE(recs[0].kind == trace::RecordKind::ApiCall);
    CHECK(names[0] == "cudaLaunchKernel");  // CUPTI's "_v7000" suffix dropped
    CHECK(rt.domain == trace::ApiDomain::Runtime);
    CHECK(rt.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    CHECK(rt.start == 1000);
    CHECK(rt.end == 2000);
    CHECK(rt.tid == 77);
    CHECK(rt.correlation == 5);
    CHECK(rt.result == 0);

    const auto& dr = recs[1].api;
    REQUIRE(recs[1].kind == trace::RecordKind::ApiCall);
    CHECK(names[1] == "cuMemcpyHtoD_v2");  // driver names are symbol names, kept whole
    CHECK(dr.domain == trace::ApiDomain::Driver);
    CHECK(dr.result == 1);
    CHECK(dr.correlation == 6);

    REQUIRE(recs[2].kind == trace::RecordKind::Kernel);
    const auto& k = recs[2].kernel;
    CHECK(names[2] == "_Z6kernelPfi");
    CHECK(k.start == 3000);
    CHECK(k.end == 4000);
    CHECK(k.device == 1);
    CHECK(k.context == 2);
    CHECK(k.stream == 13);
    CHECK(k.correlation == 5);
    CHECK(k.grid_x == 10);
    CHECK(k.grid_y == 20);
    CHECK(k.grid_z == 30);
    CHECK(k.block_x == 128);
    CHECK(k.block_y == 2);
    CHECK(k.block_z == 1);
    CHECK(k.registers_per_thread == 40);
    CHECK(k.static_shared_bytes == 1024);
    CHECK(k.dynamic_shared_bytes == 2048);
    CHECK(k.local_bytes_per_thread == 16);
    CHECK(k.graph_id == 9);
    CHECK(k.graph_node_id == 1234567890123ull);
    // Kernel10 says so; Kernel9 (12.x) cannot, and the byte after it (the next record's kind) is never read.
    CHECK(k.device_launched == (requires(typename L::Kernel x) { x.isDeviceLaunched; } ? 1 : 0));

    REQUIRE(recs[3].kind == trace::RecordKind::Kernel);
    CHECK(recs[3].kernel.start == 0);  // 0 = unknown, kept
    CHECK(recs[3].kernel.end == 0);
    CHECK(recs[3].kernel.name == k.name);  // same text through another pointer: same string id
    CHECK(recs[3].kernel.graph_id == 0);

    REQUIRE(recs[4].kind == trace::RecordKind::Memcpy);
    const auto& m = recs[4].memcpy;
    CHECK(m.copy_kind == trace::MemcpyKind::HtoD);
    CHECK(m.src_kind == trace::MemoryKind::Pinned);
    CHECK(m.dst_kind == trace::MemoryKind::Device);
    CHECK(m.async == 1);
    CHECK(m.bytes == (1u << 20));
    CHECK(m.start == 5000);
    CHECK(m.end == 6000);
    CHECK(m.device == 1);
    CHECK(m.peer_device == 1);
    CHECK(m.context == 2);
    CHECK(m.stream == 14);
    CHECK(m.correlation == 8);
    CHECK(m.graph_id == 9);
    CHECK(m.graph_node_id == 77);

    REQUIRE(recs[5].kind == trace::RecordKind::Memcpy);
    const auto& p = recs[5].memcpy;
    CHECK(p.copy_kind == trace::MemcpyKind::PtoP);
    CHECK(p.device == 0);
    CHECK(p.peer_device == 1);
    CHECK(p.bytes == 4096);
    CHECK(p.async == 0);
    CHECK(p.src_kind == trace::MemoryKind::Device);
    CHECK(p.dst_kind == trace::MemoryKind::Device);
    CHECK(p.stream == 15);
    CHECK(p.correlation == 9);

    REQUIRE(recs[6].kind == trace::RecordKind::Memset);
    const auto& s = recs[6].memset;
    CHECK(s.value == 0xAB);
    CHECK(s.bytes == 512);
    CHECK(s.start == 8000);
    CHECK(s.end == 8100);
    CHECK(s.device == 1);
    CHECK(s.stream == 16);
    CHECK(s.correlation == 10);
    CHECK(s.memory_kind == trace::MemoryKind::Managed);
    CHECK(s.graph_id == 11);
    CHECK(s.graph_node_id == 12);

    REQUIRE(recs[7].kind == trace::RecordKind::Sync);
    CHECK(recs[7].sync.type == trace::SyncType::StreamWaitEvent);
    CHECK(recs[7].sync.event == 3);
    CHECK(recs[7].sync.stream == 16);
    CHECK(recs[7].sync.correlation == 11);
    CHECK(recs[7].sync.start == 9000);
    REQUIRE(recs[8].kind == trace::RecordKind::Sync);
    CHECK(recs[8].sync.type == trace::SyncType::ContextSynchronize);
    CHECK(recs[8].sync.stream == 0xFFFFFFFFu);

    REQUIRE(recs[9].kind == trace::RecordKind::Memory);
    const auto& mem = recs[9].memory;
    CHECK(mem.op == trace::MemoryOp::Allocation);
    CHECK(mem.memory_kind == trace::MemoryKind::Device);
    CHECK(mem.timestamp == 0);
    CHECK(mem.address == 0x7f0000001000ull);
    CHECK(mem.bytes == (1ull << 30));
    CHECK(mem.device == 1);
    CHECK(mem.stream == 17);
    CHECK(mem.correlation == 13);
    CHECK(mem.async == 1);
    CHECK(mem.pool_type == trace::MemoryPoolType::Local);
    CHECK(mem.pool_address == 0x7e0000000000ull);
    CHECK(mem.pool_size == (2ull << 30));
    CHECK(mem.pool_used == (1ull << 30));
    CHECK(mem.pool_release_threshold == (64ull << 20));
    REQUIRE(recs[10].kind == trace::RecordKind::Memory);
    CHECK(recs[10].memory.op == trace::MemoryOp::Release);
    CHECK(recs[10].memory.memory_kind == trace::MemoryKind::Pinned);
    CHECK(recs[10].memory.timestamp == 9900);
    CHECK(recs[10].memory.async == 0);
    CHECK(recs[10].memory.pool_type == trace::MemoryPoolType::None);
    CHECK(recs[10].memory.pool_size == 0);

    REQUIRE(recs[11].kind == trace::RecordKind::Overhead);
    CHECK(recs[11].overhead.overhead_kind == CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH);
    CHECK(recs[11].overhead.object_kind == CUPTI_ACTIVITY_OBJECT_THREAD);
    CHECK(recs[11].overhead.object_id == 55);
    CHECK(recs[11].overhead.start == 10000);
    CHECK(recs[11].overhead.end == 10500);

    REQUIRE(recs[12].kind == trace::RecordKind::ExternalCorrelation);
    CHECK(recs[12].external_correlation.external_id == 0xdeadbeefcafeull);
    CHECK(recs[12].external_correlation.correlation == 5);
    CHECK(recs[12].external_correlation.external_kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);

    REQUIRE(recs[13].kind == trace::RecordKind::GraphLaunch);
    CHECK(recs[13].graph_launch.graph_id == 9);
    CHECK(recs[13].graph_launch.correlation == 14);
    CHECK(recs[13].graph_launch.start == 11000);
    CHECK(recs[13].graph_launch.end == 12000);
    CHECK(recs[13].graph_launch.device == 1);
    CHECK(recs[13].graph_launch.context == 2);
    CHECK(recs[13].graph_launch.stream == 18);

    REQUIRE(recs[14].kind == trace::RecordKind::MemoryPool);  // MEMORY_POOL: a pool operation, not an allocation
    const auto& trim = recs[14].memory_pool;
    CHECK(trim.op == trace::MemoryPoolOp::Trimmed);
    CHECK(trim.timestamp == 12500);
    CHECK(trim.correlation == 15);
    CHECK(trim.device == 1);
    CHECK(trim.pool_type == trace::MemoryPoolType::Local);
    CHECK(trim.address == 0x7e0000000000ull);
    CHECK(trim.size == (256ull << 20));
    CHECK(trim.used == 0);
    CHECK(trim.min_bytes_to_keep == (1ull << 20));
    CHECK(trim.release_threshold == (64ull << 20));
    CHECK(trim.managed == (requires(typename L::MemoryPool x) { x.isManagedPool; } ? 1 : 0));
}

// The offsets cuptiActivityGetNextRecord walks a buffer of one record of every kind at, against where each was put.
template <class L>
void strides_are_struct_sizes(const CuptiApi* api) {
    REQUIRE(api);
    ActivityBuffer b;
    b.template add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    b.template add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER);
    b.template add<typename L::Kernel>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    b.template add<typename L::Memcpy>(CUPTI_ACTIVITY_KIND_MEMCPY);
    b.template add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    b.template add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    b.template add<typename L::Sync>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    b.template add<typename L::Memory>(CUPTI_ACTIVITY_KIND_MEMORY2);
    b.template add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    b.template add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    b.template add<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    b.template add<typename L::MemoryPool>(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
    b.template add<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
    Built f = freeze(b);
    CUpti_Activity* r = nullptr;
    std::vector<size_t> seen;
    while (api->ActivityGetNextRecord(f.data, f.size, &r) == CUPTI_SUCCESS)
        seen.push_back(static_cast<size_t>(reinterpret_cast<uint8_t*>(r) - f.data));
    CHECK(seen == b.offsets());
    // The loader asked the library the same (CuptiApi::record_sizes): what the translator reads records by.
    const RecordSizes& sizes = api->record_sizes;
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_RUNTIME) == sizeof(CUpti_ActivityAPI));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == sizeof(typename L::Kernel));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_KERNEL) == sizeof(typename L::Kernel));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_MEMCPY) == sizeof(typename L::Memcpy));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_MEMCPY2) == sizeof(CUpti_ActivityMemcpyPtoP4));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_MEMSET) == sizeof(CUpti_ActivityMemset4));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) == sizeof(typename L::Sync));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_MEMORY2) == sizeof(typename L::Memory));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_OVERHEAD) == sizeof(CUpti_ActivityOverhead3));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == sizeof(CUpti_ActivityExternalCorrelation));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) == sizeof(CUpti_ActivityGraphTrace2));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_MEMORY_POOL) == sizeof(typename L::MemoryPool));
    CHECK(sizes.of(CUPTI_ACTIVITY_KIND_DEVICE) == sizeof(CUpti_ActivityDevice5));
}

}  // namespace gprof::testing
