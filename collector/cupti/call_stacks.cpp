#include "cupti/call_stacks.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "gprof/trace/cuda_modules.h"
#include "stacks/stack_table.h"
#include "stacks/unwind.h"
#include "pipeline/pipeline.h"

namespace gprof::collector::cupti {

namespace {

// Frames unwound beyond the depth kept: room for the collector's, CUPTI's, the driver's and the runtime's own frames
// between the callback and the program's call (9-14 seen on an H100 with CUDA 13.0, issue 18's torch-backtrace run).
constexpr uint32_t kInternalFrameRoom = 40;

// By file name (gprof/trace/cuda_modules.h): CUPTI, the driver, the CUDA runtime and NVIDIA's libraries are
// internal; the C library's are passed over between internal frames.
bool internal_by_name(const char* path) {
    return path && *path && trace::is_cuda_or_nvidia_library(trace::module_base_name(path));
}

bool system_by_name(const char* path) {
    return path && *path && trace::is_system_library(trace::module_base_name(path));
}

}  // namespace

void CallSites::configure(const Options& options) {
    options_ = options;
    if (options_.depth == 0 || options_.depth > trace::kMaxBacktraceFrames) options_.depth = trace::kMaxBacktraceFrames;
    if (options_.max_stacks == 0) options_.max_stacks = 1;
    stacks::table().configure(options_.max_stacks);
    configured_ = true;
    rescan_modules();
}

uint32_t CallSites::max_stacks() const { return stacks::table().max_stacks(); }

void CallSites::rescan_modules() noexcept {
    try {
        auto next = std::make_unique<Ranges>();
        struct Ctx {
            std::vector<Range>* out;
            uintptr_t markers[2];
            unsigned long long adds = 0, subs = 0;
        } ctx{&next->sorted, {reinterpret_cast<uintptr_t>(&internal_by_name),
                              reinterpret_cast<uintptr_t>(options_.cupti_address)}};
        dl_iterate_phdr(
            [](dl_phdr_info* info, size_t, void* data) -> int {
                auto* c = static_cast<Ctx*>(data);
                c->adds = info->dlpi_adds;
                c->subs = info->dlpi_subs;
                bool internal = internal_by_name(info->dlpi_name);
                const bool system = system_by_name(info->dlpi_name);
                size_t first = c->out->size();
                for (int i = 0; i < info->dlpi_phnum; ++i) {
                    const auto& ph = info->dlpi_phdr[i];
                    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
                    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
                    uintptr_t hi = lo + ph.p_memsz;
                    // The collector's own object only when it is one of its own (libgprof-collector.so): a test
                    // program that links the collector statically is the program.
                    if (c->markers[0] >= lo && c->markers[0] < hi && info->dlpi_name && *info->dlpi_name)
                        internal = true;
                    if (c->markers[1] && c->markers[1] >= lo && c->markers[1] < hi) internal = true;
                    c->out->push_back(Range{lo, hi, Range::kProgram});
                }
                for (size_t i = first; i < c->out->size(); ++i)
                    (*c->out)[i].kind = internal ? Range::kInternal : system ? Range::kSystem : Range::kProgram;
                return 0;
            },
            &ctx);
        std::sort(next->sorted.begin(), next->sorted.end(),
                  [](const Range& a, const Range& b) { return a.lo < b.lo; });
        next->adds = ctx.adds;
        next->subs = ctx.subs;
        const Ranges* published = next.get();
        old_ranges_.push_back(std::move(next));
        ranges_.store(published, std::memory_order_release);
        rescans_.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
    }
}

bool CallSites::modules_changed(const Ranges& r) const noexcept {
    struct Ctx {
        unsigned long long adds, subs;
    } now{0, 0};
    // The loader's counters are the same in every entry: read the first and stop.
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* c = static_cast<Ctx*>(data);
            c->adds = info->dlpi_adds;
            c->subs = info->dlpi_subs;
            return 1;
        },
        &now);
    return now.adds != r.adds || now.subs != r.subs;
}

int CallSites::classify(const Ranges& r, uintptr_t pc) const noexcept {
    // The last range starting at or below pc.
    auto it = std::upper_bound(r.sorted.begin(), r.sorted.end(), pc,
                               [](uintptr_t v, const Range& range) { return v < range.lo; });
    if (it == r.sorted.begin()) return -1;
    --it;
    if (pc >= it->hi) return -1;
    return it->kind;
}

uint32_t CallSites::leading_internal_frames(const uintptr_t* raw, uint32_t count) noexcept {
    const Ranges* r = ranges_.load(std::memory_order_acquire);
    if (!r) return 0;
    bool rescanned = false;
    // Range::kind, or -1: in no object. A return address points after its call: pc - 1 lies in the calling
    // function, even for a call that ends its object's code.
    auto kind = [&](uintptr_t pc) {
        int c = classify(*r, pc - 1);
        if (c < 0 && !rescanned && modules_changed(*r)) {
            // An object loaded since the last scan (a library dlopen'ed after the session began): read the ranges
            // again, at most once per capture. Another thread rescanning already: use what there is.
            rescanned = true;
            if (ranges_mutex_.try_lock()) {
                if (ranges_.load(std::memory_order_acquire) == r) rescan_modules();
                ranges_mutex_.unlock();
            }
            r = ranges_.load(std::memory_order_acquire);
            c = classify(*r, pc - 1);
        }
        return c;
    };
    // The callback is called by CUPTI: every frame inside the first internal one is the collector's, wherever the
    // collector's code lives (its own .so, or a test program that links it). Then the run of CUPTI's, the driver's
    // and the runtime's frames, with the C library's among them (the runtime's initialisation inside pthread_once:
    // libc's frame between libcudart's, seen on an H200); the first frame of the program after it is the program's
    // call, and the C library's frames just before it go too (exit, calling the runtime's clean-up). A stack with no
    // frame of the program keeps the C library's frames after the last internal one (a thread's start_thread).
    uint32_t i = 0;
    while (i < count && kind(raw[i]) != Range::kInternal) ++i;
    if (i == count) i = 0;  // no CUPTI frame at all (called outside a callback): only the internal objects go
    uint32_t after_internal = i;
    for (; i < count; ++i) {
        int k = kind(raw[i]);
        if (k == Range::kInternal) after_internal = i + 1;
        else if (k != Range::kSystem) return i;
    }
    return after_internal;
}

uint32_t CallSites::capture(Pipeline& pipeline) noexcept {
    if (!configured_) return 0;
    uintptr_t raw[stacks::kMaxUnwindFrames];
    uint32_t n = stacks::unwind_stack(raw, options_.depth + kInternalFrameRoom);
    uint32_t skip = leading_internal_frames(raw, n);
    if (skip >= n) {
        no_program_frame_.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    uint64_t frames[trace::kMaxBacktraceFrames];
    uint32_t count = std::min(n - skip, options_.depth);
    for (uint32_t i = 0; i < count; ++i) frames[i] = raw[skip + i];
    return intern(frames, count, pipeline);
}

uint32_t CallSites::intern(const uint64_t* frames, uint32_t count, Pipeline& pipeline) noexcept {
    if (!configured_ || count == 0) return 0;
    if (count > options_.depth) count = options_.depth;
    stacks::InternResult result;
    uint32_t id = stacks::table().intern(frames, count, pipeline, &result);
    switch (result) {
        case stacks::InternResult::Added: stacks_.fetch_add(1, std::memory_order_relaxed); break;
        case stacks::InternResult::TableFull:
            table_full_.fetch_add(1, std::memory_order_relaxed);
            if (!full_said_.exchange(true))
                pipeline.post_status(trace::Component::Cupti, trace::StatusLevel::Warning, 0,
                                     "call-site table full at " + std::to_string(max_stacks()) +
                                         " distinct stacks: calls from further new stacks are recorded without "
                                         "their stack (stack 0), counted in a Status at the end");
            break;
        case stacks::InternResult::Refused: post_refused_.fetch_add(1, std::memory_order_relaxed); break;
        default: break;
    }
    return id;
}

void CallSites::reset(bool after_fork) noexcept {
    if (after_fork) new (&ranges_mutex_) std::mutex();
    stacks_.store(0);
    table_full_.store(0);
    no_program_frame_.store(0);
    post_refused_.store(0);
    full_said_.store(false);
}

CallSites::Counters CallSites::counters() const {
    Counters c;
    c.stacks = stacks_.load(std::memory_order_relaxed);
    c.table_full = table_full_.load(std::memory_order_relaxed);
    c.no_program_frame = no_program_frame_.load(std::memory_order_relaxed);
    c.post_refused = post_refused_.load(std::memory_order_relaxed);
    c.module_rescans = rescans_.load(std::memory_order_relaxed);
    return c;
}

}  // namespace gprof::collector::cupti
