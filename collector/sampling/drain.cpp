#include "sampling/drain.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/reentry.h"
#include "gprof/trace/records.h"
#include "pipeline/pipeline.h"
#include "python/layout.h"
#include "python/python_stack.h"
#include "sampling/capture.h"
#include "sampling/entries.h"
#include "sampling/osrt.h"
#include "sampling/sampler.h"
#include "sampling/threads.h"
#include "stacks/stack_table.h"

namespace gprof::collector::sampling {

namespace tr = gprof::trace;

namespace {

// A channel's Python location as its producer wrote it, and its PyFrame id once interned.
struct Location {
    python::RawFrame where;
    uint32_t line = 0;
    std::string file, function;
    uint32_t py_frame = 0;
};

struct SlotView {
    int32_t tid = 0;
    std::vector<Location> sample_locations, call_locations;  // by channel id
    uint64_t samples_dropped_seen = 0, calls_dropped_seen = 0;
};

}  // namespace

struct Drain::Impl {
    std::array<SlotView, kMaxThreads> views;
    std::vector<tr::CpuSample> samples;
    std::vector<tr::OsRuntimeCall> calls;
    std::vector<uint16_t> call_kinds;  // OsrtCall of calls[i]
    std::array<tr::StringId, static_cast<size_t>(OsrtCall::Count)> call_names{};  // writer thread, this trace
    bool python_looked = false;
    bool said_table_full = false;
};

Drain::Drain(Pipeline& pipeline) noexcept : pipeline_(pipeline) {
    try {
        impl_ = std::make_unique<Impl>();
    } catch (...) {
    }
}

Drain::~Drain() = default;

void Drain::hook(void* ctx, tr::TraceWriter&, bool final) { static_cast<Drain*>(ctx)->run(final); }

namespace {

uint32_t py_stack_of(Pipeline& pipeline, std::vector<Location>& locations, const uint32_t* ids, uint32_t n, bool cut,
                     uint64_t& lost) {
    if (n == 0) return 0;
    uint32_t frames[kMaxFrames];
    for (uint32_t i = 0; i < n; ++i) {
        if (ids[i] == 0 || ids[i] >= locations.size()) return 0;  // cannot happen: a location precedes its use
        Location& l = locations[ids[i]];
        if (!l.py_frame) l.py_frame = python::intern_python_location(pipeline, l.where, l.line, l.file, l.function);
        if (!l.py_frame) {
            ++lost;
            return 0;
        }
        frames[i] = l.py_frame;
    }
    uint32_t id = python::intern_python_stack(pipeline, frames, n, cut);
    if (!id) ++lost;
    return id;
}

void read_location(std::vector<Location>& locations, const uint8_t* p, uint32_t bytes) {
    PyLocationEntry e;
    if (bytes < sizeof e) return;
    std::memcpy(&e, p, sizeof e);
    if (sizeof e + e.file_bytes + e.name_bytes > bytes || e.id == 0 || e.id > PyLocationCache::kMaxIds) return;
    if (locations.size() <= e.id) locations.resize(e.id + 1);
    Location& l = locations[e.id];
    l.where.code = reinterpret_cast<const void*>(e.code);
    l.where.file = reinterpret_cast<const void*>(e.file);
    l.where.name = reinterpret_cast<const void*>(e.name);
    l.where.byte_offset = e.offset;
    l.line = e.line;
    l.file.assign(reinterpret_cast<const char*>(p + sizeof e), e.file_bytes);
    l.function.assign(reinterpret_cast<const char*>(p + sizeof e + e.file_bytes), e.name_bytes);
    l.py_frame = 0;
}

// The stacks after a head: native frames and channel location ids, bounds-checked against the entry.
bool split_stacks(const uint8_t* p, uint32_t bytes, size_t head_bytes, const StackCounts& c, const uint8_t*& native,
                  const uint8_t*& py) {
    size_t need = head_bytes + size_t{c.n_native} * 8 + size_t{c.n_py} * 4;
    if (need > bytes || c.n_native > kMaxFrames || c.n_py > kMaxFrames) return false;
    native = p + head_bytes;
    py = native + size_t{c.n_native} * 8;
    return true;
}

}  // namespace

void Drain::run(bool final) {
    if (!impl_) return;
    OwnWork own;
    Impl& m = *impl_;
    if (!m.python_looked && (final || ticks_++ % 10 == 0)) {
        // On this thread (detection is not for signal handlers), once CPython is in the process: detect() answers
        // once for the process, and a program that loads its interpreter later (embedding Python) must not be
        // judged before. The sampler's handlers read the interpreter from then on. (dlsym only: no descriptor.)
        m.python_looked = find_python();
    }
    // No /proc here: a descriptor the writer opened, even for a moment, could take the number the program's next
    // open() expects (tests/collector/catalogue: stdout-closed). Threads are found once, at the start
    // (sampler.cpp); later ones through pthread_create or their first OS-runtime call.

    Slot* all = slots();
    for (uint32_t i = 0; i < kMaxThreads; ++i) {
        Slot& s = all[i];
        SlotState state = s.state.load(std::memory_order_acquire);
        if (state != SlotState::Live && state != SlotState::Exited) continue;
        SlotView& v = m.views[i];
        if (v.tid != s.tid) {  // a new thread in this slot: its channel ids are its own
            v = SlotView{};
            v.tid = s.tid;
        }
        // An entry's stacks as the trace's ids: its native frames (without the leaf when `skip_leaf`: a sample's
        // interrupted instruction is a field of its own) and its Python frames, each counted when the table is full.
        auto intern_stacks = [&](const StackCounts& counts, const uint8_t* native, const uint8_t* py,
                                 std::vector<Location>& locations, bool skip_leaf, uint32_t& stack,
                                 uint32_t& py_stack) {
            uint64_t frames[kMaxFrames];
            std::memcpy(frames, native, size_t{counts.n_native} * 8);
            uint32_t skip = skip_leaf ? 1 : 0;
            if (counts.n_native > skip) {
                stack = stacks::table().intern(frames + skip, counts.n_native - skip, pipeline_);
                if (!stack) ++totals_.native_stacks_lost;
            }
            uint32_t ids[kMaxFrames];
            std::memcpy(ids, py, size_t{counts.n_py} * 4);
            py_stack = py_stack_of(pipeline_, locations, ids, counts.n_py, counts.py_cut != 0,
                                   totals_.python_stacks_lost);
        };
        auto drain_channel = [&](Channel& channel, std::vector<Location>& locations, bool calls) {
            channel.ring.drain([&](uint32_t type, const uint8_t* p, uint32_t bytes) {
                const uint8_t *native = nullptr, *py = nullptr;
                switch (type) {
                    case kPyLocation: read_location(locations, p, bytes); break;
                    case kPyReset: locations.clear(); break;
                    case kSample: {
                        SampleEntry e;
                        if (bytes < sizeof e) break;
                        std::memcpy(&e, p, sizeof e);
                        if (!split_stacks(p, bytes, sizeof e, e.stacks, native, py)) break;
                        tr::CpuSample r;
                        r.timestamp = e.time;
                        r.tid = static_cast<uint64_t>(s.tid);
                        r.periods = e.periods;
                        r.period_ns = e.period_ns;
                        // native[0] is the interrupted instruction, the rest return addresses.
                        if (e.stacks.n_native > 0) std::memcpy(&r.ip, native, 8);
                        intern_stacks(e.stacks, native, py, locations, /*skip_leaf=*/true, r.stack, r.py_stack);
                        m.samples.push_back(r);
                        break;
                    }
                    case kOsrtCall: {
                        OsrtEntry e;
                        if (bytes < sizeof e || !calls) break;
                        std::memcpy(&e, p, sizeof e);
                        if (!split_stacks(p, bytes, sizeof e, e.stacks, native, py) ||
                            e.call >= static_cast<uint32_t>(OsrtCall::Count))
                            break;
                        tr::OsRuntimeCall r;
                        r.start = e.start;
                        r.end = e.end;
                        r.tid = static_cast<uint64_t>(s.tid);
                        intern_stacks(e.stacks, native, py, locations, /*skip_leaf=*/false, r.stack, r.py_stack);
                        m.calls.push_back(r);
                        m.call_kinds.push_back(static_cast<uint16_t>(e.call));
                        break;
                    }
                    default: break;
                }
            });
        };
        drain_channel(s.samples, v.sample_locations, false);
        drain_channel(s.osrt, v.call_locations, true);
        uint64_t d = s.samples.ring.dropped();
        totals_.ring_dropped_samples += d - v.samples_dropped_seen;
        v.samples_dropped_seen = d;
        d = s.osrt.ring.dropped();
        totals_.ring_dropped_calls += d - v.calls_dropped_seen;
        v.calls_dropped_seen = d;

        // A thread that ended (its key's destructor said so): its last entries are read, its slot freed.
        if (state == SlotState::Exited) {
            disarm(&s);
            v = SlotView{};
            free_slot(&s);
        }
    }
    if (table_full() && !m.said_table_full) {
        m.said_table_full = true;
        pipeline_.post_status(tr::Component::Collector, tr::StatusLevel::Warning, 0,
                              "CPU sampling: more than " + std::to_string(kMaxThreads) +
                                  " threads at once; threads beyond them are not sampled nor traced");
    }

    totals_.samples += m.samples.size();
    totals_.osrt_calls += m.calls.size();
    if (!m.samples.empty() || !m.calls.empty()) {
        // One message after the interning's Stack/PyFrame/PyStack posts: the records naming them follow them.
        try {
            Impl* impl = &m;
            pipeline_.post([impl, samples = std::move(m.samples), calls = std::move(m.calls),
                            kinds = std::move(m.call_kinds)](tr::TraceWriter& w) {
                for (const tr::CpuSample& r : samples) w.add(r);
                for (size_t i = 0; i < calls.size(); ++i) {
                    tr::StringId& name = impl->call_names[kinds[i]];
                    if (!name) name = w.intern(osrt_call_name(static_cast<OsrtCall>(kinds[i])));
                    tr::OsRuntimeCall r = calls[i];
                    r.name = name;
                    w.add(r);
                }
            });
        } catch (...) {
        }
        m.samples.clear();
        m.calls.clear();
        m.call_kinds.clear();
    }
    if (final) say_end();
}

void Drain::say_end() {
    SamplerCounts c = counts();
    OsrtCounts o = osrt_counts();
    std::string line;
    if (c.threads_armed || c.samples) {
        line = "CPU sampling: " + std::to_string(totals_.samples) + " samples (" + std::to_string(c.periods) +
               " periods of " + std::to_string(period_ns() / 1000) + " us CPU time) of " +
               std::to_string(c.threads_armed) + " threads";
        if (c.threads_blocking) line += "; " + std::to_string(c.threads_blocking) + " threads block SIGPROF: not sampled";
        if (totals_.ring_dropped_samples)
            line += "; " + std::to_string(totals_.ring_dropped_samples) + " samples lost (a thread's ring was full)";
        if (c.not_ours) line += "; " + std::to_string(c.not_ours) + " SIGPROF of the program's own passed on";
        pipeline_.post_status(tr::Component::Collector,
                              totals_.ring_dropped_samples ? tr::StatusLevel::Warning : tr::StatusLevel::Info, 0, line);
    }
    if (c.timer_failures)
        pipeline_.post_status(tr::Component::Collector, tr::StatusLevel::Warning, c.last_timer_error,
                              "CPU sampling: " + std::to_string(c.timer_failures) +
                                  " threads could not get a CPU-time timer (" + std::strerror(c.last_timer_error) +
                                  "): not sampled");
    if (o.recorded || totals_.ring_dropped_calls || o.nested) {
        line = "OS runtime: " + std::to_string(totals_.osrt_calls) + " calls recorded (" +
               std::to_string(o.with_stack) + " with their call site)";
        if (totals_.ring_dropped_calls)
            line += "; " + std::to_string(totals_.ring_dropped_calls) + " calls lost (a thread's ring was full)";
        if (o.nested) line += "; " + std::to_string(o.nested) + " calls made inside another recorded call (a signal handler's) not recorded";
        pipeline_.post_status(tr::Component::Collector,
                              totals_.ring_dropped_calls ? tr::StatusLevel::Warning : tr::StatusLevel::Info, 0, line);
    }
    if (totals_.native_stacks_lost || totals_.python_stacks_lost)
        pipeline_.post_status(tr::Component::Collector, tr::StatusLevel::Warning, 0,
                              "CPU sampling: " + std::to_string(totals_.native_stacks_lost) +
                                  " samples or calls without their native stack and " +
                                  std::to_string(totals_.python_stacks_lost) +
                                  " without their Python stack (the stack tables were full)");
    uint64_t lost = totals_.ring_dropped_samples + totals_.ring_dropped_calls;
    if (lost) pipeline_.post_dropped(tr::DropSource::CollectorQueue, lost);
}

}  // namespace gprof::collector::sampling
