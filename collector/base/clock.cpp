#include "base/clock.h"

#include <time.h>

#include <cstdio>
#include <cstring>

namespace gprof::collector::clock {

std::atomic<const Params*> g_params{nullptr};

namespace {

std::atomic<int> g_state{0};  // 0 = not initialised, 1 = initialising, 2 = done

// The last calibration point (writer thread only, after init).
uint64_t g_cal_tsc = 0;
uint64_t g_cal_ns = 0;
uint64_t g_first_tsc = 0;
uint64_t g_first_ns = 0;
int g_recalibrations = 0;

bool invariant_tsc() {
#if defined(__x86_64__)
    // /proc/cpuinfo flags: constant_tsc (fixed rate) and nonstop_tsc (keeps ticking in deep C-states).
    FILE* f = std::fopen("/proc/cpuinfo", "re");
    if (!f) return false;
    char line[4096];
    bool constant = false, nonstop = false;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, "flags", 5) != 0) continue;
        constant = std::strstr(line, " constant_tsc") != nullptr;
        nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
        break;
    }
    std::fclose(f);
    return constant && nonstop;
#else
    return false;
#endif
}

#if defined(__x86_64__)
// A (tsc, monotonic ns) pair read as close together as possible: the tightest of a few tries.
void sample(uint64_t& tsc, uint64_t& ns) {
    tsc = ns = 0;
    uint64_t best = ~0ull;
    for (int i = 0; i < 5; ++i) {
        uint64_t a = __rdtsc();
        uint64_t m = monotonic_ns();
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            tsc = a + (b - a) / 2;
            ns = m;
        }
    }
}

uint64_t mult_for(uint64_t dtsc, uint64_t dns) {
    if (dtsc == 0) return 0;
    return static_cast<uint64_t>((static_cast<unsigned __int128>(dns) << kShift) / dtsc);
}
#endif

}  // namespace

uint64_t monotonic_ns() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int64_t realtime_ns() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000ll + ts.tv_nsec;
}

void init() noexcept {
    int expected = 0;
    if (!g_state.compare_exchange_strong(expected, 1)) {
        while (g_state.load(std::memory_order_acquire) != 2) {
        }
        return;
    }
#if defined(__x86_64__)
    const char* force = std::getenv("GPROF_CLOCK");  // "monotonic": diagnostics only, undocumented
    if (!(force && std::strcmp(force, "monotonic") == 0) && invariant_tsc()) {
        uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0;
        sample(t0, n0);
        timespec pause{0, 1'000'000};  // 1 ms: good to ~1e-4 until the first recalibration
        while (::nanosleep(&pause, &pause) != 0) {
        }
        sample(t1, n1);
        uint64_t mult = mult_for(t1 - t0, n1 - n0);
        if (t1 > t0 && mult != 0) {
            auto* p = new (std::nothrow) Params{t1, n1, mult};
            if (p) {
                g_first_tsc = t0;
                g_first_ns = n0;
                g_cal_tsc = t1;
                g_cal_ns = n1;
                g_params.store(p, std::memory_order_release);
            }
        }
    }
#endif
    g_state.store(2, std::memory_order_release);
}

bool uses_tsc() noexcept { return g_params.load(std::memory_order_acquire) != nullptr; }

bool recalibrate() noexcept {
#if defined(__x86_64__)
    const Params* old = g_params.load(std::memory_order_acquire);
    if (!old) return false;
    uint64_t tsc = 0, ns = 0;
    sample(tsc, ns);
    // Refine at growing intervals (about 0.2 s, 2 s, 20 s, 200 s after start): each step cuts the scale error
    // by ~10x; beyond that the sampling jitter is below what matters.
    static const uint64_t kSteps[] = {200'000'000ull, 2'000'000'000ull, 20'000'000'000ull, 200'000'000'000ull};
    if (g_recalibrations >= static_cast<int>(sizeof kSteps / sizeof kSteps[0])) return false;
    if (ns - g_first_ns < kSteps[g_recalibrations]) return false;
    ++g_recalibrations;
    uint64_t mult = mult_for(tsc - g_first_tsc, ns - g_first_ns);
    if (mult == 0) return false;
    // Continue from where the current parameters are now, so the clock stays continuous; the remaining
    // offset against CLOCK_MONOTONIC (microseconds at most) is kept, not stepped away.
    uint64_t now_tsc = __rdtsc();
    uint64_t delta = now_tsc > old->base_tsc ? now_tsc - old->base_tsc : 0;
    uint64_t now_ns = old->base_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(delta) * old->mult) >> kShift);
    auto* p = new (std::nothrow) Params{now_tsc, now_ns, mult};
    if (!p) return false;
    g_params.store(p, std::memory_order_release);  // the old set is leaked: readers may still hold it
    g_cal_tsc = tsc;
    g_cal_ns = ns;
    return true;
#else
    return false;
#endif
}

trace::ClockReference reference() noexcept {
    trace::ClockReference r;
    r.clock = trace::TraceClock::Monotonic;
    // Bracket the two system clocks with trace-clock reads and take the middle.
    uint64_t a = now();
    r.realtime_ns = realtime_ns();
    r.monotonic_ns = static_cast<int64_t>(monotonic_ns());
    uint64_t b = now();
    r.trace_ns = a + (b - a) / 2;
    return r;
}

}  // namespace gprof::collector::clock

extern "C" uint64_t gprof_collector_cupti_timestamp(void) { return gprof::collector::clock::now(); }
