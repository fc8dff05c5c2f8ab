#include "stacks/unwind.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <ucontext.h>

#include <atomic>
#include <mutex>

#include "base/descriptors.h"
#include "base/reentry.h"

namespace gprof::collector::stacks {
namespace {

// libunwind's ABI (libunwind.h of libunwind 1.x, x86-64 and aarch64 names): unw_addr_space_t is a pointer and
// unw_local_addr_space a variable holding one; the caching policies are 0 none, 1 global, 2 per thread.
using UnwBacktrace = int (*)(void**, int);
using UnwSetCachingPolicy = int (*)(void*, int);
constexpr int kUnwCacheNone = 0, kUnwCacheGlobal = 1, kUnwCachePerThread = 2;

struct Libunwind {
    UnwBacktrace backtrace = nullptr;
    UnwSetCachingPolicy set_caching_policy = nullptr;
    void* local_addr_space = nullptr;  // the value of unw_local_addr_space
};

const Libunwind& libunwind() {
    static const Libunwind lib = [] {
        Libunwind l;
        void* h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
        if (!h) return l;
        l.backtrace = reinterpret_cast<UnwBacktrace>(dlsym(h, "unw_backtrace"));
#if defined(__x86_64__)
        const char* policy = "_ULx86_64_set_caching_policy";
        const char* space = "_ULx86_64_local_addr_space";
#elif defined(__aarch64__)
        const char* policy = "_ULaarch64_set_caching_policy";
        const char* space = "_ULaarch64_local_addr_space";
#else
        const char* policy = "";
        const char* space = "";
#endif
        l.set_caching_policy = reinterpret_cast<UnwSetCachingPolicy>(dlsym(h, policy));
        if (auto* as = static_cast<void**>(dlsym(h, space))) l.local_addr_space = *as;
        return l;
    }();
    return lib;
}

// Whether select_unwinder set a caching policy (the benchmark does); until then libunwind keeps its default.
bool& policy_changed() {
    static bool changed = false;
    return changed;
}

constexpr auto kUnchosen = static_cast<Unwinder>(0xFF);
std::atomic<Unwinder> g_choice{kUnchosen};
std::once_flag g_default_once;

void choose_default() {
    if (g_choice.load(std::memory_order_acquire) != kUnchosen) return;  // select_unwinder was called first
    // libunwind as the process has it (its policy untouched: see unwind.h); glibc's backtrace() otherwise.
    if (!select_unwinder(Unwinder::LibunwindGlobal)) select_unwinder(Unwinder::Glibc);
}

void ensure_chosen() {
    if (g_choice.load(std::memory_order_acquire) == kUnchosen) std::call_once(g_default_once, choose_default);
}

}  // namespace

bool select_unwinder(Unwinder which) {
    const Libunwind& l = libunwind();
    int policy = kUnwCacheGlobal;
    switch (which) {
        case Unwinder::Glibc: {
            // glibc's backtrace() loads libgcc_s on first use: do that now, not inside the first API call.
            void* probe[2];
            ::backtrace(probe, 2);
            g_choice.store(which, std::memory_order_release);
            return true;
        }
        case Unwinder::LibunwindPerThread: policy = kUnwCachePerThread; break;
        case Unwinder::LibunwindGlobal: policy = kUnwCacheGlobal; break;
        case Unwinder::LibunwindNoCache: policy = kUnwCacheNone; break;
    }
    if (!l.backtrace) return false;
    if (which == Unwinder::LibunwindGlobal && !policy_changed()) {
        // libunwind's default: nothing to set (and nothing the program could notice).
    } else if (!l.set_caching_policy || !l.local_addr_space ||
               l.set_caching_policy(l.local_addr_space, policy) != 0) {
        return false;
    } else {
        policy_changed() = true;
    }
    g_choice.store(which, std::memory_order_release);
    return true;
}

const char* unwinder_name() {
    ensure_chosen();
    switch (g_choice.load(std::memory_order_acquire)) {
        case Unwinder::LibunwindPerThread: return "libunwind (per-thread cache)";
        case Unwinder::LibunwindGlobal: return "libunwind";
        case Unwinder::LibunwindNoCache: return "libunwind (no cache)";
        default: return "glibc backtrace";
    }
}

__attribute__((noinline)) uint32_t unwind_stack(uintptr_t* out, uint32_t max) noexcept {
    // libunwind blocks every signal around its locks through pthread_sigmask, which the collector interposes: our
    // own work, so the sampler neither stops nor restarts this thread's timer for it.
    OwnWork own;
    ensure_chosen();
    void* raw[kMaxUnwindFrames + 1];
    if (max > kMaxUnwindFrames) max = kMaxUnwindFrames;
    int want = static_cast<int>(max) + 1;  // + the frame of unwind_stack itself
    const Libunwind& l = libunwind();
    int n = g_choice.load(std::memory_order_relaxed) == Unwinder::Glibc || !l.backtrace ? ::backtrace(raw, want)
                                                                                       : l.backtrace(raw, want);
    uint32_t count = 0;
    for (int i = 1; i < n; ++i) out[count++] = reinterpret_cast<uintptr_t>(raw[i]);
    return count;
}

}  // namespace gprof::collector::stacks

namespace gprof::collector::stacks {

namespace {

uintptr_t context_pc(const void* ucontext) {
    const auto* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
    return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
    (void)uc;
    return 0;
#endif
}

// Frames between unwind_interrupted and the interrupted code: the sampler's own (a few), the kernel's signal
// trampoline, and room for a handler chained in front of ours.
constexpr uint32_t kHandlerFrameRoom = 16;

}  // namespace

__attribute__((noinline)) uint32_t unwind_interrupted(const void* ucontext, uintptr_t* out, uint32_t max) noexcept {
    if (max == 0 || !ucontext) return 0;
    OwnWork own;  // as in unwind_stack
    uintptr_t pc = context_pc(ucontext);
    if (!pc) return 0;
    if (max > kMaxUnwindFrames) max = kMaxUnwindFrames;
    const Libunwind& l = libunwind();
    if (g_choice.load(std::memory_order_relaxed) == Unwinder::Glibc || !l.backtrace) {
        // glibc's backtrace() is not for signal handlers (libgcc's unwinder takes a lock to find a frame's unwind
        // table: a thread stopped holding it would wait for itself). Without libunwind a sample has its leaf only.
        out[0] = pc;
        return 1;
    }
    void* raw[kMaxUnwindFrames + kHandlerFrameRoom];
    int want = static_cast<int>(max + kHandlerFrameRoom);
    int n = l.backtrace(raw, want);
    int start = -1;
    for (int i = 0; i < n && i < static_cast<int>(kHandlerFrameRoom); ++i)
        if (reinterpret_cast<uintptr_t>(raw[i]) == pc) {
            start = i;
            break;
        }
    uint32_t count = 0;
    if (start < 0) {
        out[count++] = pc;  // the walk never reached the interrupted frame: its instruction at least
        return count;
    }
    for (int i = start; i < n && count < max; ++i) out[count++] = reinterpret_cast<uintptr_t>(raw[i]);
    return count;
}

void warm_up_thread() noexcept {
    ensure_chosen();
    uintptr_t frames[4];
    unwind_stack(frames, 4);
}

void init_unwinder() noexcept {
    static std::atomic<bool> done{false};
    if (done.exchange(true)) return;
    OwnWork own;  // libunwind's own pthread_sigmask calls are not the program's (sampling/sampler.h)
    descriptors::create_high([](void*) { warm_up_thread(); }, nullptr);
}

}  // namespace gprof::collector::stacks
