#include "analyze/ranks.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "analyze/steps.h"
#include "model/identity.h"
#include "model/saturate.h"

namespace gprof::report {

using nlohmann::json;

bool is_nccl_kernel(std::string_view name) {
    return name.find("ncclDevKernel") != std::string_view::npos || name.find("ncclKernel") != std::string_view::npos;
}

// ----- one rank's figures --------------------------------------------------------------------------------------

namespace {

struct KernelSpan {
    int64_t start = 0, end = 0;  // run axis
    bool nccl = false;
};

// Which entry a process belongs to: its (job, rank), or the process itself when it has no rank. The host is part of
// the key too, so rank 0 of two different jobs merged by mistake stays two entries.
using RankKey = std::tuple<int, std::string, int64_t, std::string, std::string, uint64_t, int64_t>;

RankKey rank_key(const ProcessTrace& p, const std::string& job) {
    int64_t rank = process_rank(p);
    if (rank >= 0) return {0, job, rank, p.header.hostname, p.header.boot_id, 0, 0};
    return {1, "", -1, p.header.hostname, p.header.boot_id, p.header.pid_ns, p.pid()};
}

}  // namespace

std::vector<RankFigures> rank_figures(const Run& run, const std::string& step_pattern) {
    StepSet steps = detect_steps(run, step_pattern);
    std::map<RankKey, std::vector<size_t>> groups;  // key -> process indexes
    for (size_t i = 0; i < run.processes.size(); ++i) {
        const ProcessTrace& p = run.processes[i];
        std::string job = p.role && p.role->job ? std::string(p.str(p.role->job)) : std::string();
        groups[rank_key(p, job)].push_back(i);
    }
    std::vector<std::vector<const Step*>> steps_of(run.processes.size());
    for (const Step& s : steps.steps) steps_of[s.process].push_back(&s);

    std::vector<RankFigures> out;
    for (const auto& [key, members] : groups) {
        RankFigures f;
        const ProcessTrace& first = run.processes[members.front()];
        f.rank = process_rank(first);
        if (first.role) {
            f.local_rank = first.role->local_rank;
            f.world_size = first.role->world_size;
            f.job = std::get<1>(key);
        }
        f.host = first.header.hostname;
        f.boot_id = first.header.boot_id;
        std::vector<KernelSpan> spans;
        int64_t best_kernel_ns = -1;
        bool any_time = false;
        std::vector<const Step*> mine;
        for (size_t i : members) {
            const ProcessTrace& p = run.processes[i];
            f.pids.push_back(p.pid());
            int64_t own_kernel_ns = 0;
            std::vector<int8_t> nccl_name(p.strings.size(), -1);  // by string id: the name test runs once per name
            for (const trace::Kernel& k : p.kernels) {
                if (k.start == 0 || k.end < k.start) continue;  // unknown times (CUPTI's zero timestamps)
                int64_t d = sat_duration(k.start, k.end);
                bool nccl;
                if (k.name < nccl_name.size()) {
                    int8_t& known = nccl_name[k.name];
                    if (known < 0) known = is_nccl_kernel(p.str(k.name)) ? 1 : 0;
                    nccl = known == 1;
                } else {
                    nccl = is_nccl_kernel(p.str(k.name));
                }
                ++f.kernels;
                f.kernel_ns = sat_add(f.kernel_ns, d);
                own_kernel_ns = sat_add(own_kernel_ns, d);
                if (nccl) {
                    ++f.nccl_kernels;
                    f.nccl_ns = sat_add(f.nccl_ns, d);
                } else {
                    f.compute_ns = sat_add(f.compute_ns, d);
                }
                spans.push_back({p.to_run_ns(k.start), p.to_run_ns(k.end), nccl});
            }
            for (const trace::Memcpy& m : p.memcpys) {
                ++f.memcpys;
                if (m.start && m.end > m.start) f.memcpy_ns = sat_add(f.memcpy_ns, sat_duration(m.start, m.end));
            }
            f.api_calls += p.api_calls.size();
            if (p.first_ns) {
                int64_t a = p.to_run_ns(p.first_ns) + run.base_realtime_ns, b = p.to_run_ns(p.last_ns) + run.base_realtime_ns;
                if (!any_time || a < f.first_ns) f.first_ns = a;
                if (!any_time || b > f.last_ns) f.last_ns = b;
                any_time = true;
            }
            if (own_kernel_ns > best_kernel_ns) {
                best_kernel_ns = own_kernel_ns;
                f.pid = p.pid();
            }
            mine.insert(mine.end(), steps_of[i].begin(), steps_of[i].end());
        }
        if (f.rank < 0 && f.kernels == 0 && mine.empty()) continue;  // a helper of no rank: nothing to compare
        trace::TraceHeader h = first.header;
        h.pid = f.pid;
        f.label = process_label(h, f.rank, true);

        std::sort(spans.begin(), spans.end(), [](const KernelSpan& a, const KernelSpan& b) { return a.start < b.start; });
        int64_t longest = 0;
        for (const auto& s : spans) longest = std::max(longest, s.end - s.start);
        std::sort(mine.begin(), mine.end(), [](const Step* a, const Step* b) { return a->start < b->start; });
        f.step_source = mine.empty() ? "none" : steps.source;
        for (const Step* s : mine) {
            RankStep rs;
            rs.start_ns = s->start + run.base_realtime_ns;
            rs.duration_ns = s->duration();
            // Kernels that overlap the step: those starting before its end, from the first that can reach into it.
            auto it = std::lower_bound(spans.begin(), spans.end(), sat_sub(s->start, longest),
                                       [](const KernelSpan& k, int64_t t) { return k.start < t; });
            for (; it != spans.end() && it->start < s->end; ++it) {
                int64_t overlap = std::min(it->end, s->end) - std::max(it->start, s->start);
                if (overlap <= 0) continue;
                int64_t& into = it->nccl ? rs.nccl_ns : rs.compute_ns;
                into = sat_add(into, overlap);
            }
            f.steps.push_back(rs);
        }
        out.push_back(std::move(f));
    }
    std::sort(out.begin(), out.end(), rank_order);
    return out;
}

size_t count_ranks(const std::vector<RankFigures>& figures) {
    return static_cast<size_t>(
        std::count_if(figures.begin(), figures.end(), [](const RankFigures& f) { return f.rank >= 0; }));
}

bool rank_order(const RankFigures& a, const RankFigures& b) {
    bool ra = a.rank >= 0, rb = b.rank >= 0;
    if (ra != rb) return ra;
    return std::tie(a.rank, a.job, a.host, a.boot_id, a.pid) < std::tie(b.rank, b.job, b.host, b.boot_id, b.pid);
}

// ----- JSON of one rank ----------------------------------------------------------------------------------------

json rank_figures_to_json(const RankFigures& f) {
    // Steps by column (schema 2): four arrays of numbers, each step's start after the rank's first_ns: less than half
    // the bytes of one object per step, parsed twice as fast (docs/performance.md, "the merge of rank figures").
    json start = json::array(), duration = json::array(), nccl = json::array(), compute = json::array();
    for (const RankStep& s : f.steps) {
        start.push_back(sat_sub(s.start_ns, f.first_ns));
        duration.push_back(s.duration_ns);
        nccl.push_back(s.nccl_ns);
        compute.push_back(s.compute_ns);
    }
    json steps = {{"start_after_first_ns", std::move(start)},
                  {"duration_ns", std::move(duration)},
                  {"nccl_ns", std::move(nccl)},
                  {"compute_ns", std::move(compute)}};
    return {{"schema_version", kRankFiguresSchemaVersion},
            {"rank", f.rank},
            {"local_rank", f.local_rank},
            {"world_size", f.world_size},
            {"host", f.host},
            {"boot_id", f.boot_id},
            {"job", f.job},
            {"pid", f.pid},
            {"pids", f.pids},
            {"label", f.label},
            {"first_ns", f.first_ns},
            {"last_ns", f.last_ns},
            {"kernels", f.kernels},
            {"nccl_kernels", f.nccl_kernels},
            {"memcpys", f.memcpys},
            {"api_calls", f.api_calls},
            {"kernel_ns", f.kernel_ns},
            {"nccl_ns", f.nccl_ns},
            {"compute_ns", f.compute_ns},
            {"memcpy_ns", f.memcpy_ns},
            {"step_source", f.step_source},
            {"steps", steps}};
}

namespace {

template <class T> T field(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) throw std::invalid_argument(std::string("rank figures without \"") + key + "\"");
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        throw std::invalid_argument(std::string("rank figures: \"") + key + "\" has the wrong type");
    }
}

}  // namespace

RankFigures rank_figures_from_json(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("rank figures must be a JSON object");
    int version = field<int>(j, "schema_version");
    if (version < 1 || version > kRankFiguresSchemaVersion)
        throw std::invalid_argument("rank figures of schema " + std::to_string(version) + ", this gprof-report reads 1 to " +
                                    std::to_string(kRankFiguresSchemaVersion));
    RankFigures f;
    f.rank = field<int64_t>(j, "rank");
    f.local_rank = field<int64_t>(j, "local_rank");
    f.world_size = field<int64_t>(j, "world_size");
    f.host = field<std::string>(j, "host");
    f.boot_id = field<std::string>(j, "boot_id");
    f.job = field<std::string>(j, "job");
    f.pid = field<int64_t>(j, "pid");
    f.pids = field<std::vector<int64_t>>(j, "pids");
    f.label = field<std::string>(j, "label");
    f.first_ns = field<int64_t>(j, "first_ns");
    f.last_ns = field<int64_t>(j, "last_ns");
    f.kernels = field<uint64_t>(j, "kernels");
    f.nccl_kernels = field<uint64_t>(j, "nccl_kernels");
    f.memcpys = field<uint64_t>(j, "memcpys");
    f.api_calls = field<uint64_t>(j, "api_calls");
    f.kernel_ns = field<int64_t>(j, "kernel_ns");
    f.nccl_ns = field<int64_t>(j, "nccl_ns");
    f.compute_ns = field<int64_t>(j, "compute_ns");
    f.memcpy_ns = field<int64_t>(j, "memcpy_ns");
    f.step_source = field<std::string>(j, "step_source");
    auto it = j.find("steps");
    if (it == j.end()) throw std::invalid_argument("rank figures without \"steps\"");
    const json& steps = *it;
    if (version == 1) {  // one object per step, start_ns absolute
        if (!steps.is_array()) throw std::invalid_argument("rank figures: \"steps\" must be an array");
        for (const json& s : steps) {
            RankStep rs;
            rs.start_ns = field<int64_t>(s, "start_ns");
            rs.duration_ns = field<int64_t>(s, "duration_ns");
            rs.nccl_ns = field<int64_t>(s, "nccl_ns");
            rs.compute_ns = field<int64_t>(s, "compute_ns");
            f.steps.push_back(rs);
        }
        return f;
    }
    if (!steps.is_object()) throw std::invalid_argument("rank figures: \"steps\" must be an object of four arrays");
    auto start = field<std::vector<int64_t>>(steps, "start_after_first_ns");
    auto duration = field<std::vector<int64_t>>(steps, "duration_ns");
    auto nccl = field<std::vector<int64_t>>(steps, "nccl_ns");
    auto compute = field<std::vector<int64_t>>(steps, "compute_ns");
    if (duration.size() != start.size() || nccl.size() != start.size() || compute.size() != start.size())
        throw std::invalid_argument("rank figures: the four step arrays differ in length");
    f.steps.resize(start.size());
    for (size_t i = 0; i < start.size(); ++i)
        f.steps[i] = {sat_add(f.first_ns, start[i]), duration[i], nccl[i], compute[i]};
    return f;
}

}  // namespace gprof::report
