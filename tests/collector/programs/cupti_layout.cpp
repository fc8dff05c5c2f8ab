// Prints the size and the offset of every field the collector reads (collector/cupti/translate.cpp) of each activity
// record struct a CUPTI 12.4..13.x writes, as the CUPTI headers it is compiled against declare them. Built once with
// the CUDA 13.0 headers and once with each nvidia-cuda-cupti-cu12 wheel's own headers (scripts/setup fetches them):
// test_cupti12_real.cpp checks that every line of a 12.x build appears unchanged in the 13.0 build, i.e. that the
// 13.0 headers' declarations of the 12.x structs (cupti_activity_deprecated.h), which the collector reads 12.x
// records through, are the structs CUPTI 12 itself writes.
#include <cupti.h>

#include <cstddef>
#include <cstdio>

#define SIZE(S) std::printf("sizeof %s %zu\n", #S, sizeof(S));
#define AT(S, f) std::printf("%s.%s %zu %zu\n", #S, #f, offsetof(S, f), sizeof(static_cast<S*>(nullptr)->f));

int main() {
    std::printf("CUPTI_API_VERSION %u\n", static_cast<unsigned>(CUPTI_API_VERSION));
    SIZE(CUpti_ActivityAPI)
    AT(CUpti_ActivityAPI, cbid) AT(CUpti_ActivityAPI, start) AT(CUpti_ActivityAPI, end)
    AT(CUpti_ActivityAPI, threadId) AT(CUpti_ActivityAPI, correlationId) AT(CUpti_ActivityAPI, returnValue)

#define K(f) AT(CUpti_ActivityKernel9, f)
    SIZE(CUpti_ActivityKernel9)
    K(start) K(end) K(deviceId) K(contextId) K(streamId) K(correlationId) K(gridX) K(gridY) K(gridZ) K(blockX)
    K(blockY) K(blockZ) K(registersPerThread) K(staticSharedMemory) K(dynamicSharedMemory) K(localMemoryPerThread)
    K(name) K(graphId) K(graphNodeId)

#define M5(f) AT(CUpti_ActivityMemcpy5, f)
    SIZE(CUpti_ActivityMemcpy5)
    M5(start) M5(end) M5(bytes) M5(deviceId) M5(contextId) M5(streamId) M5(correlationId) M5(graphId) M5(graphNodeId)
    M5(copyKind) M5(srcKind) M5(dstKind) M5(flags)

#define P4(f) AT(CUpti_ActivityMemcpyPtoP4, f)
    SIZE(CUpti_ActivityMemcpyPtoP4)
    P4(start) P4(end) P4(bytes) P4(srcDeviceId) P4(dstDeviceId) P4(contextId) P4(streamId) P4(correlationId)
    P4(graphId) P4(graphNodeId) P4(copyKind) P4(srcKind) P4(dstKind) P4(flags)

#define MS(f) AT(CUpti_ActivityMemset4, f)
    SIZE(CUpti_ActivityMemset4)
    MS(start) MS(end) MS(bytes) MS(value) MS(deviceId) MS(contextId) MS(streamId) MS(correlationId) MS(graphId)
    MS(graphNodeId) MS(memoryKind)

#define S1(f) AT(CUpti_ActivitySynchronization, f)
    SIZE(CUpti_ActivitySynchronization)
    S1(start) S1(end) S1(contextId) S1(streamId) S1(cudaEventId) S1(correlationId) S1(type)

#define Y3(f) AT(CUpti_ActivityMemory3, f)
    SIZE(CUpti_ActivityMemory3)
    Y3(timestamp) Y3(address) Y3(bytes) Y3(deviceId) Y3(contextId) Y3(streamId) Y3(correlationId)
    Y3(memoryOperationType) Y3(memoryKind) Y3(isAsync) Y3(memoryPoolConfig.memoryPoolType)
    Y3(memoryPoolConfig.address) Y3(memoryPoolConfig.releaseThreshold) Y3(memoryPoolConfig.pool.size)
    Y3(memoryPoolConfig.utilizedSize)

#define MP(f) AT(CUpti_ActivityMemoryPool2, f)
    SIZE(CUpti_ActivityMemoryPool2)
    MP(timestamp) MP(address) MP(deviceId) MP(correlationId) MP(memoryPoolOperationType) MP(memoryPoolType) MP(size)
    MP(utilizedSize) MP(releaseThreshold) MP(minBytesToKeep)

#define O3(f) AT(CUpti_ActivityOverhead3, f)
    SIZE(CUpti_ActivityOverhead3)
    O3(start) O3(end) O3(overheadKind) O3(objectKind) O3(objectId.pt.processId) O3(objectId.pt.threadId)
    O3(objectId.dcs.deviceId)

#define E(f) AT(CUpti_ActivityExternalCorrelation, f)
    SIZE(CUpti_ActivityExternalCorrelation)
    E(externalKind) E(externalId) E(correlationId)

#define G2(f) AT(CUpti_ActivityGraphTrace2, f)
    SIZE(CUpti_ActivityGraphTrace2)
    G2(start) G2(end) G2(deviceId) G2(contextId) G2(streamId) G2(correlationId) G2(graphId)

#define D5(f) AT(CUpti_ActivityDevice5, f)
    SIZE(CUpti_ActivityDevice5)
    D5(id) D5(name) D5(computeCapabilityMajor) D5(computeCapabilityMinor) D5(numMultiprocessors)
    D5(globalMemorySize) D5(uuid)

#if CUPTI_API_VERSION >= 26  // CUDA 12.8 and later: Memcpy6, Synchronization2 (and Memory4 since 12.6)
#define M6(f) AT(CUpti_ActivityMemcpy6, f)
    SIZE(CUpti_ActivityMemcpy6)
    M6(start) M6(end) M6(bytes) M6(deviceId) M6(contextId) M6(streamId) M6(correlationId) M6(graphId) M6(graphNodeId)
    M6(copyKind) M6(srcKind) M6(dstKind) M6(flags)
#define S2(f) AT(CUpti_ActivitySynchronization2, f)
    SIZE(CUpti_ActivitySynchronization2)
    S2(start) S2(end) S2(contextId) S2(streamId) S2(cudaEventId) S2(correlationId) S2(type)
#define Y4(f) AT(CUpti_ActivityMemory4, f)
    SIZE(CUpti_ActivityMemory4)
    Y4(timestamp) Y4(address) Y4(bytes) Y4(deviceId) Y4(contextId) Y4(streamId) Y4(correlationId)
    Y4(memoryOperationType) Y4(memoryKind) Y4(isAsync) Y4(memoryPoolConfig.memoryPoolType)
    Y4(memoryPoolConfig.address) Y4(memoryPoolConfig.releaseThreshold) Y4(memoryPoolConfig.pool.size)
    Y4(memoryPoolConfig.utilizedSize)
#endif
    return 0;
}
