// What the benches driving the collector through the CUPTI stand-in (tests/collector/cupti_standin, a test double
// playing CUPTI and the runtime) share: the stand-in opened and its control functions looked up, our pipeline and
// session started on it, the calling thread's CPU clock, and the median and spread of rounds. Bench only, never
// installed.
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/clock.h"
#include "cupti/session.h"
#include "pipeline/pipeline.h"
#include "standin_control.h"
#include "trace_fixture.h"

namespace gprof::bench {

// Set by open_standin(): the program's name (for its messages) and the stand-in's handle.
inline const char* g_program = "bench";
inline void* g_standin = nullptr;

// Opens the stand-in built at GPROF_TEST_CUPTI_STANDIN; the program exits with dlopen's error when it cannot.
inline void open_standin(const char* program) {
    g_program = program;
    g_standin = dlopen(GPROF_TEST_CUPTI_STANDIN, RTLD_NOW | RTLD_LOCAL);
    if (!g_standin) {
        std::fprintf(stderr, "%s: %s\n", program, dlerror());
        std::exit(1);
    }
}

// A function of the stand-in by name; the program exits when the stand-in lacks it.
template <class F>
F standin_symbol(const char* name) {
    auto f = reinterpret_cast<F>(dlsym(g_standin, name));
    if (!f) {
        std::fprintf(stderr, "%s: the stand-in lacks %s\n", g_program, name);
        std::exit(1);
    }
    return f;
}
// The stand-in's function of that name, typed as its declaration (standin_control.h, cupti.h).
#define SI(name) ::gprof::bench::standin_symbol<decltype(&name)>(#name)

inline uint64_t thread_cpu_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}
inline double spread(std::vector<double> v) {  // max - min
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.back() - v.front();
}

// Our collector on the stand-in: the pipeline writes to /dev/null.
struct Ours {
    collector::Pipeline* pipeline = new collector::Pipeline();  // leaked with the session, as in the collector
    collector::cupti::Session* session = new collector::cupti::Session();
};

// Resets the stand-in and starts ours with `so` (the stand-in's path and the collector's timestamp filled in here);
// `hook`, when given, runs on the writer thread at every flush from the start. The program exits when the session
// does not start.
inline Ours start_ours(collector::cupti::SessionOptions so, collector::PeriodicHook hook = nullptr) {
    SI(gprof_test_standin_reset)();
    Ours o;
    int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    collector::Pipeline::Options po;
    po.flush_ms = 100;
    o.pipeline->start(fd, gprof::testing::test_header(), po);
    if (hook) o.pipeline->add_periodic_hook(hook, nullptr);
    so.load.explicit_path = GPROF_TEST_CUPTI_STANDIN;
    so.timestamp = &gprof_collector_cupti_timestamp;
    collector::cupti::StartResult r = o.session->start(*o.pipeline, so);
    if (!r.ok) {
        std::fprintf(stderr, "%s: session did not start: %s\n", g_program, r.reason.c_str());
        std::exit(1);
    }
    return o;
}

}  // namespace gprof::bench
