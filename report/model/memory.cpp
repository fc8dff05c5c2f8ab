#include "model/memory.h"

#include <algorithm>

namespace gprof::report {

using namespace gprof::trace;

MemoryBudget memory_budget(const Memory& m) {
    if (m.pool_type != MemoryPoolType::None) return MemoryBudget::Pool;
    switch (m.memory_kind) {
        case MemoryKind::Device:
        case MemoryKind::Array: return MemoryBudget::Device;
        case MemoryKind::DeviceStatic:
        case MemoryKind::ManagedStatic: return MemoryBudget::Static;
        case MemoryKind::Pinned: return MemoryBudget::PinnedHost;
        case MemoryKind::Managed: return MemoryBudget::Managed;
        case MemoryKind::Pageable:
        case MemoryKind::Unknown: break;
    }
    return MemoryBudget::Other;
}

std::string_view memory_budget_name(MemoryBudget b) {
    switch (b) {
        case MemoryBudget::Device: return "device";
        case MemoryBudget::Pool: return "device (async pool)";
        case MemoryBudget::Static: return "device static";
        case MemoryBudget::PinnedHost: return "pinned host";
        case MemoryBudget::Managed: return "managed";
        case MemoryBudget::Other: return "other";
        case MemoryBudget::Count: break;
    }
    return "other";
}

std::string_view memory_budget_key(MemoryBudget b) {
    switch (b) {
        case MemoryBudget::Device: return "device";
        case MemoryBudget::Pool: return "pool";
        case MemoryBudget::Static: return "static";
        case MemoryBudget::PinnedHost: return "pinned_host";
        case MemoryBudget::Managed: return "managed";
        case MemoryBudget::Other: return "other";
        case MemoryBudget::Count: break;
    }
    return "other";
}

BudgetUsage& MemoryLedger::usage(uint32_t device, MemoryBudget b) {
    auto [it, fresh] = usage_.try_emplace({device, b});
    if (fresh) {
        it->second.device = device;
        it->second.budget = b;
    }
    return it->second;
}

void MemoryLedger::device_total(uint32_t device, int64_t delta, Timestamp ts) {
    uint64_t& now = device_in_use_[device];
    now = static_cast<uint64_t>(std::max<int64_t>(0, static_cast<int64_t>(now) + delta));
    DeviceMemoryPeak& d = devices_[device];
    d.device = device;
    if (now > d.peak_bytes) {
        d.peak_bytes = now;
        d.peak_at = ts;
    }
}

void MemoryLedger::pool_size(uint32_t device, uint64_t pool, uint64_t size, Timestamp ts) {
    uint64_t& old = pool_sizes_[{device, pool}];
    if (old == size) return;
    uint64_t& total = pool_reserved_[device];
    total = total - old + size;
    old = size;
    DeviceMemoryPeak& d = devices_[device];
    d.device = device;
    if (total > d.pool_reserved_peak) {
        d.pool_reserved_peak = total;
        d.pool_reserved_peak_at = ts;
    }
    if (on_sample) on_sample({ts, device, MemoryBudget::Pool, true, total});
}

void MemoryLedger::add(const Memory& m) {
    const MemoryBudget b = memory_budget(m);
    if (m.op == MemoryOp::Allocation) {
        BudgetUsage& u = usage(m.device, b);
        ++u.allocations;
        u.allocated_bytes += m.bytes;
        u.largest_allocation = std::max(u.largest_allocation, m.bytes);
        u.live_bytes += m.bytes;
        ++u.live_count;
        if (u.live_bytes > u.peak_bytes) {
            u.peak_bytes = u.live_bytes;
            u.peak_at = m.timestamp;
        }
        live_[m.address].push_back({m, order_++});
        if (is_device_budget(b)) device_total(m.device, static_cast<int64_t>(m.bytes), m.timestamp);
        if (on_sample) on_sample({m.timestamp, m.device, b, false, u.live_bytes});
    } else if (m.op == MemoryOp::Release) {
        auto it = live_.find(m.address);
        if (it == live_.end()) {
            ++usage(m.device, b).unmatched_releases;
        } else {
            // Account the release where the allocation was made: its budget, its device, its size. One address
            // alive twice means a release record was lost: the release takes the one of its size, else the oldest.
            std::vector<Live>& at = it->second;
            auto same = std::find_if(at.begin(), at.end(), [&](const Live& l) { return l.record.bytes == m.bytes; });
            if (same == at.end()) same = at.begin();
            const Memory a = same->record;
            at.erase(same);
            if (at.empty()) live_.erase(it);
            const MemoryBudget ab = memory_budget(a);
            BudgetUsage& u = usage(a.device, ab);
            ++u.releases;
            u.released_bytes += a.bytes;
            u.live_bytes -= std::min(u.live_bytes, a.bytes);
            u.live_count -= std::min<uint64_t>(u.live_count, 1);
            if (is_device_budget(ab)) device_total(a.device, -static_cast<int64_t>(a.bytes), m.timestamp);
            if (on_sample) on_sample({m.timestamp, a.device, ab, false, u.live_bytes});
        }
    } else {
        return;
    }
    if (m.pool_type == MemoryPoolType::Local && m.pool_address) pool_size(m.device, m.pool_address, m.pool_size, m.timestamp);
}

void MemoryLedger::add(const MemoryPool& p) {
    ++pool_operations_;
    uint64_t size = p.op == MemoryPoolOp::Destroyed ? 0 : p.size;
    if (p.pool_type != MemoryPoolType::Imported) pool_size(p.device, p.address, size, p.timestamp);
}

std::vector<BudgetUsage> MemoryLedger::budgets() const {
    std::vector<BudgetUsage> out;
    out.reserve(usage_.size());
    for (const auto& [key, u] : usage_) out.push_back(u);
    return out;
}

std::vector<DeviceMemoryPeak> MemoryLedger::device_peaks() const {
    std::vector<DeviceMemoryPeak> out;
    for (const auto& [id, d] : devices_) out.push_back(d);
    return out;
}

std::vector<Memory> MemoryLedger::live() const {
    std::vector<const Live*> all;
    all.reserve(live_.size());
    for (const auto& [address, at] : live_)
        for (const Live& l : at)
            if (lists_live_allocations(memory_budget(l.record))) all.push_back(&l);
    std::sort(all.begin(), all.end(), [](const Live* a, const Live* b) { return a->order < b->order; });
    std::vector<Memory> out;
    out.reserve(all.size());
    for (const Live* l : all) out.push_back(l->record);
    return out;
}

uint64_t replay_memory(MemoryLedger& ledger, const std::vector<Memory>& memory, const std::vector<MemoryPool>& pools) {
    uint64_t skipped = 0;
    std::vector<const Memory*> mem;
    mem.reserve(memory.size());
    for (const Memory& m : memory) {
        if (m.timestamp) mem.push_back(&m);
        else ++skipped;
    }
    std::vector<const MemoryPool*> pl;
    for (const MemoryPool& p : pools) {
        if (p.timestamp) pl.push_back(&p);
        else ++skipped;
    }
    // Stable: records of one timestamp keep their order in the trace (an allocation before its release).
    auto by_time = [](const auto* a, const auto* b) { return a->timestamp < b->timestamp; };
    std::stable_sort(mem.begin(), mem.end(), by_time);
    std::stable_sort(pl.begin(), pl.end(), by_time);
    size_t i = 0, j = 0;
    while (i < mem.size() || j < pl.size()) {
        // A pool's creation comes before the allocation carved out of it at the same time.
        if (j < pl.size() && (i == mem.size() || pl[j]->timestamp <= mem[i]->timestamp)) ledger.add(*pl[j++]);
        else ledger.add(*mem[i++]);
    }
    return skipped;
}

}  // namespace gprof::report
