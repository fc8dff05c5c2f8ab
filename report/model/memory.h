// Memory accounting of one process: allocations and releases (Memory records) kept apart by what they take from,
// in use over time, peaks and when they happened, and what was still allocated when the trace ended; plus the
// reservations of cudaMallocAsync pools (MemoryPool records and the pool fields of Memory records).
//
// One ledger serves the summary (aggregate.cpp, streaming), the `memory` report (reports/) and the timeline's
// counter tracks (timeline/model.cpp), so the three never disagree. docs/reports.md describes the figures.
//
// Budgets: CUPTI's memory kind says what the program asked for ("as requested by the user"), never the device id
// alone: cudaMallocHost is pinned *host* memory although its record names a device (issue #12: it used to show up
// as device memory). A cudaMallocAsync allocation (pool_type != None) is device memory carved out of a pool; it
// is kept apart from cudaMalloc's so both figures are visible, and "device memory in use" is their sum.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gprof/trace/records.h"

namespace gprof::report {

enum class MemoryBudget : uint8_t {
    Device,      // cudaMalloc & co. (MemoryKind Device / Array), not from a pool
    Pool,        // device memory from a cudaMallocAsync pool (pool_type != None)
    Static,      // a module's __device__ / __managed__ variables (DeviceStatic / ManagedStatic), made when the
                 // module loads and never released while it is loaded: not leaks (PyTorch: ~700 of them)
    PinnedHost,  // cudaMallocHost / cudaHostAlloc (MemoryKind Pinned)
    Managed,     // cudaMallocManaged (MemoryKind Managed)
    Other,       // pageable or unknown kinds
    Count
};
inline constexpr size_t kMemoryBudgets = static_cast<size_t>(MemoryBudget::Count);

MemoryBudget memory_budget(const trace::Memory& m);
// Display name: "device", "device (async pool)", "device static", "pinned host", "managed", "other".
std::string_view memory_budget_name(MemoryBudget b);
// Stable key (JSON, CSV): "device", "pool", "static", "pinned_host", "managed", "other".
std::string_view memory_budget_key(MemoryBudget b);
// Counts as device memory of its device (Device, Pool, Static): what "peak device memory" adds up.
inline bool is_device_budget(MemoryBudget b) {
    return b == MemoryBudget::Device || b == MemoryBudget::Pool || b == MemoryBudget::Static;
}
// Allocations of this budget still alive at the end are worth listing (all but module statics).
inline bool lists_live_allocations(MemoryBudget b) { return b != MemoryBudget::Static; }

// One (device, budget) of a process. Times on the trace clock.
struct BudgetUsage {
    uint32_t device = 0;
    MemoryBudget budget = MemoryBudget::Device;
    uint64_t allocations = 0, allocated_bytes = 0;
    uint64_t releases = 0, released_bytes = 0;  // releases of allocations made in the trace
    uint64_t largest_allocation = 0;
    uint64_t peak_bytes = 0;                     // most in use at once (allocated in the trace, not yet released)
    trace::Timestamp peak_at = 0;                // when it was first reached; 0 = never above 0
    uint64_t live_bytes = 0, live_count = 0;     // still allocated when the trace ended
    uint64_t unmatched_releases = 0;             // releases of memory allocated before recording began
};

// Device memory of one device: Device + Pool + Static budgets in use together, and the pools' reservation.
struct DeviceMemoryPeak {
    uint32_t device = 0;
    uint64_t peak_bytes = 0;
    trace::Timestamp peak_at = 0;
    uint64_t pool_reserved_peak = 0;  // bytes cudaMallocAsync pools held from the device at most (0: no pool)
    trace::Timestamp pool_reserved_peak_at = 0;
};

// A change of one counter, in time order (timeline counter tracks).
struct MemorySample {
    trace::Timestamp timestamp = 0;
    uint32_t device = 0;
    MemoryBudget budget = MemoryBudget::Device;
    bool pool_reserved = false;  // the sample is the pools' reservation on `device`, not a budget in use
    uint64_t bytes = 0;
};

class MemoryLedger {
public:
    // Feed records in time order (replay_memory() sorts and merges both kinds).
    void add(const trace::Memory& m);
    void add(const trace::MemoryPool& p);

    // Every change of a budget in use or of a device's pool reservation, as it happens (optional).
    std::function<void(const MemorySample&)> on_sample;

    // By (device, budget); only those that saw an operation.
    std::vector<BudgetUsage> budgets() const;
    std::vector<DeviceMemoryPeak> device_peaks() const;  // devices with device or pool memory, by id
    // The allocations never released, in allocation order (module statics left out: lists_live_allocations).
    std::vector<trace::Memory> live() const;
    uint64_t pool_operations() const { return pool_operations_; }

private:
    struct Live {
        trace::Memory record;
        uint64_t order;
    };
    BudgetUsage& usage(uint32_t device, MemoryBudget b);
    void device_total(uint32_t device, int64_t delta, trace::Timestamp ts);
    void pool_size(uint32_t device, uint64_t pool, uint64_t size, trace::Timestamp ts);

    std::map<std::pair<uint32_t, MemoryBudget>, BudgetUsage> usage_;
    std::map<uint32_t, DeviceMemoryPeak> devices_;
    std::map<uint32_t, uint64_t> device_in_use_;
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> pool_sizes_;  // (device, pool address) -> reserved
    std::map<uint32_t, uint64_t> pool_reserved_;                     // device -> sum of its pools
    std::unordered_map<uint64_t, std::vector<Live>> live_;           // address -> allocation(s) alive there
    uint64_t order_ = 0;
    uint64_t pool_operations_ = 0;
};

// Feeds both vectors to the ledger in time order (records with an unknown, 0, timestamp are skipped and counted).
// Returns the number skipped.
uint64_t replay_memory(MemoryLedger& ledger, const std::vector<trace::Memory>& memory,
                       const std::vector<trace::MemoryPool>& pools);

}  // namespace gprof::report
