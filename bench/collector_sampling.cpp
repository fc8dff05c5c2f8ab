// One CPU sample (issue 35), the way the sampler takes it: a SIGPROF that says SI_TIMER and names the thread's slot
// (sent to the thread itself with rt_tgsigqueueinfo, as its CPU-time timer would), the handler's native unwind of
// the interrupted code at a given depth, and the entry written into the thread's ring. Against the same signal to
// a handler that does nothing: the difference is the sampler's own cost per sample, the rest the kernel's delivery.
// Whole processes: bench/sampling_process (native) and scripts/sampling-overhead (Python); figures in
// docs/performance.md ("CPU sampling").
#include <benchmark/benchmark.h>

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "sampling/sampler.h"
#include "sampling/threads.h"
#include "stacks/unwind.h"

namespace s = gprof::collector::sampling;

namespace {

volatile uint64_t g_delivered = 0;

void sampler_handler(int, siginfo_t* info, void* context) {
    if (!s::on_signal(info, context)) std::abort();
}

void empty_handler(int, siginfo_t*, void*) { g_delivered = g_delivered + 1; }

void install(void (*handler)(int, siginfo_t*, void*)) {
    struct sigaction sa {};
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, nullptr);
}

// The signal a thread's CPU-time timer sends it: SI_TIMER, the slot as its value.
void send_sample(s::Slot* slot) {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    info.si_signo = SIGPROF;
    info.si_code = SI_TIMER;
    info.si_value.sival_ptr = slot;
    syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGPROF, &info);
}

// `depth` real frames between the benchmark loop and the signal.
__attribute__((noinline)) void at_depth(int depth, s::Slot* slot) {
    if (depth > 0) {
        at_depth(depth - 1, slot);
        benchmark::DoNotOptimize(depth);
        return;
    }
    send_sample(slot);
}

s::Slot* prepared_slot() {
    static s::Slot* slot = [] {
        s::SamplerOptions o;
        o.frequency_hz = 100;
        s::start(o);  // arms this thread's timer too: taken out below, the benchmark sends the signals itself
        s::Slot* sl = s::current_slot();
        s::disarm(sl);
        gprof::collector::stacks::warm_up_thread();
        return sl;
    }();
    return slot;
}

void BM_sample_signal(benchmark::State& state) {
    install(sampler_handler);
    s::Slot* slot = prepared_slot();
    int depth = static_cast<int>(state.range(0));
    for (auto _ : state) {
        at_depth(depth, slot);
        slot->samples.ring.drain([](uint32_t, const uint8_t*, uint32_t) {});
    }
    state.counters["ring_dropped"] = static_cast<double>(slot->samples.ring.dropped());
}
BENCHMARK(BM_sample_signal)->Arg(2)->Arg(16)->Arg(60);

void BM_empty_signal(benchmark::State& state) {
    s::Slot* slot = prepared_slot();
    install(empty_handler);
    int depth = static_cast<int>(state.range(0));
    for (auto _ : state) at_depth(depth, slot);
}
BENCHMARK(BM_empty_signal)->Arg(2)->Arg(16)->Arg(60);

}  // namespace

BENCHMARK_MAIN();
