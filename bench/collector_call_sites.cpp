// Call sites (issue 18): what a call site costs on the application's thread, through the CUPTI stand-in
// (tests/collector/cupti_standin, a test double playing CUPTI and the runtime) with the collector's real session.
//
//   1. per launch with a call site, the stack 16 frames deep below the program's call: the app thread's CPU ns per
//      cudaLaunchKernel with call sites on for every call (--backtrace, depth 16) less the same with them off, for
//      each unwinder (libunwind with a per-thread cache, with its default global cache, with none; glibc's
//      backtrace). The stack is a known one after the first launch: this is the steady state of a training loop.
//   2. the parts, called directly: unwind_stack alone (16 program frames + the frames above them), the lookup of a
//      known stack, and the interning of a new distinct stack (table insert + its Stack record queued).
//
//   collector_call_sites [--launches N] [--rounds R]
// Medians of R rounds with the spread (max - min). Arguments it does not know (scripts/bench passes --benchmark_*)
// are ignored.
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cupti/call_stacks.h"
#include "cupti/session.h"
#include "stacks/unwind.h"
#include "pipeline/pipeline.h"
#include "standin_bench.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::collector;
using namespace gprof::collector::cupti;
using namespace gprof::collector::stacks;
using namespace gprof::bench;

namespace {

// `depth` frames of the program between main and the call: each level is a real frame (no tail call, no inlining).
template <class Fn>
__attribute__((noinline)) double at_depth(int depth, Fn&& fn) {
    double r = depth <= 0 ? fn() : at_depth(depth - 1, fn);
    asm volatile("" ::: "memory");
    return r;
}

Ours start_ours(uint32_t depth) {
    SessionOptions so;
    so.backtrace_depth = depth;
    return bench::start_ours(so);
}

// App-thread CPU ns per launch, 16 program frames below the call.
double launches_ns(long n) {
    auto launch = SI(gprof_test_standin_launch_kernel);
    return at_depth(16, [&] {
        uint64_t c0 = thread_cpu_ns();
        for (long i = 0; i < n; ++i) launch("_Z4tinyPf", 7);
        return static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(n);
    });
}

double run_launches(uint32_t depth, long n) {
    Ours o = start_ours(depth);
    launches_ns(n / 10);  // warm-up: the stack is interned, libunwind's cache filled
    double ns = launches_ns(n);
    o.session->flush(true);
    o.pipeline->finish();
    return ns;
}

const char* unwinder_label(Unwinder u) {
    switch (u) {
        case Unwinder::LibunwindPerThread: return "libunwind, per-thread cache";
        case Unwinder::LibunwindGlobal: return "libunwind, global cache (default)";
        case Unwinder::LibunwindNoCache: return "libunwind, no cache";
        case Unwinder::Glibc: return "glibc backtrace()";
    }
    return "?";
}

}  // namespace

int main(int argc, char** argv) {
    long n = 100000;
    int rounds = 5;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--launches" && i + 1 < argc) n = std::max(1000L, std::atol(argv[++i]));
        else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    }
    bench::open_standin("collector_call_sites");
    clock::init();
    ::setenv("GPROF_LOG_LEVEL", "error", 1);
    std::printf("collector_call_sites: %ld launches per round, %d rounds (median, spread max-min), CPU ns of the "
                "app thread; the call 16 program frames deep\n\n", n, rounds);

    // 1. Per launch, call sites on (every call, depth 16) against off, per unwinder.
    std::printf("per cudaLaunchKernel (stand-in), call sites off / on, and the difference: the cost of a call site of a "
                "known stack\n");
    std::printf("  %-40s %14s %14s %14s\n", "unwinder", "off", "on (depth 16)", "call site");
    for (Unwinder u : {Unwinder::LibunwindGlobal, Unwinder::LibunwindPerThread, Unwinder::LibunwindNoCache,
                       Unwinder::Glibc}) {
        if (!select_unwinder(u)) {
            std::printf("  %-40s not available here\n", unwinder_label(u));
            continue;
        }
        std::vector<double> off, on, diff;
        for (int r = 0; r < rounds; ++r) {
            bool on_first = r % 2 == 1;  // alternate which goes first
            double a = 0, b = 0;
            if (on_first) {
                b = run_launches(16, n);
                a = run_launches(0, n);
            } else {
                a = run_launches(0, n);
                b = run_launches(16, n);
            }
            off.push_back(a);
            on.push_back(b);
            diff.push_back(b - a);
        }
        std::printf("  %-40s %8.0f ±%4.0f %8.0f ±%4.0f %8.0f ±%4.0f\n", unwinder_label(u), median(off), spread(off),
                    median(on), spread(on), median(diff), spread(diff));
    }

    // 2. The parts, directly.
    std::printf("\nthe parts, called directly (ns per call)\n");
    for (Unwinder u : {Unwinder::LibunwindPerThread, Unwinder::LibunwindGlobal, Unwinder::LibunwindNoCache,
                       Unwinder::Glibc}) {
        if (!select_unwinder(u)) continue;
        std::vector<double> v;
        for (int r = 0; r < rounds; ++r)
            v.push_back(at_depth(16, [&] {
                uintptr_t raw[kMaxUnwindFrames];
                uint32_t frames = 0;
                uint64_t c0 = thread_cpu_ns();
                for (long i = 0; i < n; ++i) frames += unwind_stack(raw, 16 + 24);
                asm volatile("" ::"r"(frames));
                return static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(n);
            }));
        std::printf("  unwind_stack, %-34s %8.0f ±%4.0f  (40 frames asked; 16 program frames + main + libc here)\n",
                    unwinder_label(u), median(v), spread(v));
    }
    select_unwinder(Unwinder::LibunwindGlobal);
    {
        Pipeline pipeline;
        pipeline.start(::open("/dev/null", O_WRONLY | O_CLOEXEC), gprof::testing::test_header(), Pipeline::Options{});
        std::vector<double> known, fresh;
        const uint32_t distinct = 50000;
        for (int r = 0; r < rounds; ++r) {
            CallSites table;
            CallSites::Options co;
            co.depth = 16;
            co.max_stacks = 65536;
            table.configure(co);
            uint64_t frames[16];
            for (uint32_t k = 0; k < 16; ++k) frames[k] = 0x555555550000ull + k * 0x40;
            // New stacks: each differs from the others in its innermost frame.
            uint64_t c0 = thread_cpu_ns();
            for (uint32_t i = 0; i < distinct; ++i) {
                frames[0] = 0x7f0000000000ull + i * 16;
                table.intern(frames, 16, pipeline);
            }
            fresh.push_back(static_cast<double>(thread_cpu_ns() - c0) / distinct);
            // Known stacks: the same ones again, in another order.
            c0 = thread_cpu_ns();
            uint32_t sum = 0;
            for (long i = 0; i < n; ++i) {
                frames[0] = 0x7f0000000000ull + ((static_cast<uint32_t>(i) * 7919u) % distinct) * 16;
                sum += table.intern(frames, 16, pipeline);
            }
            asm volatile("" ::"r"(sum));
            known.push_back(static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(n));
            pipeline.flush(std::chrono::seconds(30));
        }
        // One stack, hot in the cache (a loop launching from one line), and the CallSite's trip into the writer's queue.
        std::vector<double> hot, post;
        for (int r = 0; r < rounds; ++r) {
            CallSites table;
            CallSites::Options co;
            co.depth = 16;
            table.configure(co);
            uint64_t frames[16];
            for (uint32_t k = 0; k < 16; ++k) frames[k] = 0x555555550000ull + k * 0x40;
            table.intern(frames, 16, pipeline);
            uint64_t c0 = thread_cpu_ns();
            uint32_t sum = 0;
            for (long i = 0; i < n; ++i) sum += table.intern(frames, 16, pipeline);
            asm volatile("" ::"r"(sum));
            hot.push_back(static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(n));
            trace::CallSite site;
            site.tid = 1;
            site.stack = 1;
            c0 = thread_cpu_ns();
            long posted = 0;
            for (long i = 0; i < n; ++i) {
                site.correlation = static_cast<uint32_t>(i);
                pipeline.post_call_site(site);
                if (++posted % 50000 == 0) pipeline.flush(std::chrono::seconds(30));  // stay below the queue's cap
            }
            post.push_back(static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(n));
            pipeline.flush(std::chrono::seconds(30));
        }
        pipeline.finish();
        std::printf("  intern one known stack, hot (16 frames)                    %8.1f ±%4.1f\n", median(hot),
                    spread(hot));
        std::printf("  post one CallSite to the writer's queue                    %8.1f ±%4.1f  (incl. the writer's share "
                    "of the flushes)\n", median(post), spread(post));
        std::printf("  intern a known stack (16 frames, table of 50 000)          %8.1f ±%4.1f\n", median(known),
                    spread(known));
        std::printf("  intern a new distinct stack (insert + Stack record queued) %8.1f ±%4.1f\n", median(fresh),
                    spread(fresh));
    }
    return 0;
}
