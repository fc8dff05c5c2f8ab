// The run as the analysis rules see it: threads, API calls and GPU work by host, device and stream.
#include "analyze/run_parts.h"

namespace gprof::report::analysis_run {

Context build_context(const Run& run) {
    Context c{run, capture_window(run), gpu_busy_by_device(run), {}, {}, {}, {}, {}};
    for (const auto& [key, busy] : c.busy) c.gaps[key] = gaps_within(busy, c.window);
    c.names.reserve(run.processes.size());
    for (const ProcessTrace& proc : run.processes) c.names.emplace_back(proc);
    for (size_t p = 0; p < run.processes.size(); ++p) {
        const ProcessTrace& proc = run.processes[p];
        const NameFlags& names = c.names[p];
        std::set<uint32_t> devices;
        auto note_device = [&devices, last = std::optional<uint32_t>{}](uint32_t dev) mutable {
            if (last != dev) devices.insert(dev);
            last = dev;
        };
        for (const auto& k : proc.kernels) note_device(k.device);
        for (const auto& m : proc.memcpys) note_device(m.device);
        for (const auto& m : proc.memsets) note_device(m.device);
        for (size_t i = 0; i < proc.graph_launches.size(); ++i)
            if (proc.graph_launch_is_gpu_work(i)) note_device(proc.graph_launches[i].device);
        for (uint32_t dev : devices) c.device_processes[{proc.header.hostname, dev}].insert(p);
        HostThread* h = nullptr;
        uint64_t h_tid = 0;
        auto thread = [&](uint64_t tid) -> HostThread& {
            if (!h || tid != h_tid) {
                h = &c.threads[{p, tid}];
                h_tid = tid;
            }
            return *h;
        };
        // Each thread's room first, from a count with the same tests as below: a run's calls and ranges grown by
        // doubling were copied and held twice (an NVTX-heavy run: 9.6 M ranges, 24 bytes each; issue 33). Only
        // threads that will hold something are counted, so the set of threads is the one the loops below make.
        {
            std::map<uint64_t, std::pair<size_t, size_t>> room;  // tid -> (calls, ranges)
            std::pair<size_t, size_t>* last = nullptr;
            uint64_t last_tid = 0;
            auto of = [&](uint64_t tid) -> std::pair<size_t, size_t>& {
                if (!last || tid != last_tid) {
                    last = &room[tid];
                    last_tid = tid;
                }
                return *last;
            };
            for (const trace::ApiCall& a : proc.api_calls)
                if (timed(a.start, a.end)) ++of(a.tid).first;
            last = nullptr;
            for (const trace::Nvtx& r : proc.nvtx)
                if (r.type != trace::NvtxType::Mark && timed(r.start, r.end) && r.end != r.start) ++of(r.tid).second;
            for (const auto& [tid, n] : room) {
                HostThread& ht = c.threads[{p, tid}];
                ht.apis.reserve(n.first);
                ht.ranges.reserve(n.second);
            }
        }
        for (const trace::ApiCall& a : proc.api_calls) {
            if (!timed(a.start, a.end)) continue;
            HostThread& ht = thread(a.tid);
            ht.apis.push_back({{proc.to_run_ns(a.start), proc.to_run_ns(a.end)}, &a});
            if (names(a.name) & kLaunchName) ++ht.launches;
        }
        for (const trace::Nvtx& r : proc.nvtx) {
            if (r.type == trace::NvtxType::Mark || !timed(r.start, r.end) || r.end == r.start) continue;
            thread(r.tid).ranges.push_back({{proc.to_run_ns(r.start), proc.to_run_ns(r.end)}, &r});
        }
        const HostThread* best = nullptr;
        ThreadKey best_key{p, 0};
        for (auto it = c.threads.lower_bound({p, 0}); it != c.threads.end() && it->first.process == p; ++it) {
            const HostThread& ht = it->second;
            if (!best || ht.launches > best->launches ||
                (ht.launches == best->launches && ht.apis.size() > best->apis.size())) {
                best = &ht;
                best_key = it->first;
            }
        }
        if (best && best->launches > 0) c.launch_threads.push_back(best_key);
    }
    for (auto& [key, h] : c.threads) {
        auto by_start = [](const auto& a, const auto& b) { return a.first.start < b.first.start; };
        // Already strictly increasing (the usual case: one thread's calls in record order) has one sorted order,
        // so skipping the sort then gives the order std::sort would; ties keep going through std::sort.
        auto not_increasing = [](const auto& a, const auto& b) { return a.first.start >= b.first.start; };
        if (std::adjacent_find(h.apis.begin(), h.apis.end(), not_increasing) != h.apis.end())
            std::sort(h.apis.begin(), h.apis.end(), by_start);
        if (std::adjacent_find(h.ranges.begin(), h.ranges.end(), not_increasing) != h.ranges.end())
            std::sort(h.ranges.begin(), h.ranges.end(), by_start);
        std::vector<Interval> all, sync;
        all.reserve(h.apis.size());
        const NameFlags& names = c.names[key.process];
        h.api_end_max.reserve(h.apis.size());
        int64_t end_max = INT64_MIN;
        for (auto& [i, a] : h.apis) {
            all.push_back(i);
            if (names(a->name) & kSyncName) sync.push_back(i);
            end_max = std::max(end_max, i.end);
            h.api_end_max.push_back(end_max);
        }
        end_max = INT64_MIN;
        h.range_end_max.reserve(h.ranges.size());
        for (auto& [i, r] : h.ranges) {
            end_max = std::max(end_max, i.end);
            h.range_end_max.push_back(end_max);
        }
        h.api_union = interval_union(std::move(all));
        h.sync_union = interval_union(std::move(sync));
    }
    return c;
}

}  // namespace gprof::report::analysis_run
