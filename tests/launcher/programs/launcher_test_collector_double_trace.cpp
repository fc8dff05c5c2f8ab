// The trace half of the stand-in collector: a complete, empty trace per process (header + End), written with the
// project's own writer, so gprof-run's end of run has real traces to summarise and a timeline to write.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gprof/trace/writer.h"

namespace {
int64_t now_ns(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

extern "C" void launcher_test_double_write_trace(const char* dir) {
    char exe[PATH_MAX] = {};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    const char* base = std::strrchr(exe, '/');
    base = base ? base + 1 : exe;
    char path[PATH_MAX + 64];
    std::snprintf(path, sizeof path, "%s/%s.%ld.gprof", dir, base, static_cast<long>(getpid()));
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    static const char* argv[] = {exe};
    const char* run_id = std::getenv("GPROF_RUN_ID");
    gprof::trace::HeaderInfo h;
    h.producer = "launcher test double";
    h.pid = getpid();
    h.ppid = getppid();
    h.hostname = "launcher-test";
    h.executable = exe;
    h.argv = argv;
    h.argc = 1;
    h.clock.trace_ns = static_cast<gprof::trace::Timestamp>(now_ns(CLOCK_REALTIME));
    h.clock.realtime_ns = now_ns(CLOCK_REALTIME);
    h.clock.monotonic_ns = now_ns(CLOCK_MONOTONIC);
    h.run_id = run_id ? run_id : "";
    gprof::trace::TraceWriter w;
    if (!w.open(fd, h)) return;
    w.finish(h.clock.trace_ns + 1000);
}
