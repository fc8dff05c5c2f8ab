// The collector library as shipped: its exported symbols and dependencies, and a real CUDA program run with
// it injected the way the launcher does.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdio>

#include "collector_run.h"

using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

std::string command_output(const std::string& cmd) {
    std::string out;
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) return out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    ::pclose(f);
    return out;
}

}  // namespace

TEST_CASE("exports only the injection entry points and needs nothing of CUDA") {
    std::string lib = collector_library();
    std::string syms = command_output("nm -D --defined-only '" + lib + "' | awk '{print $3}'");
    // The entry points, and what is interposed under LD_PRELOAD: _exit/_Exit (the trace of os._exit workers), the
    // exec family and posix_spawn (the trace ends or is handed over before an exec; untraceable children are
    // named), sigaction/signal (the program's handlers of termination signals and SIGPROF are chained), close,
    // close_range, closefrom, dup, dup2, dup3 (the collector's descriptors stay out of the program's way),
    // cuptiSubscribe and cuptiSubscribe_v2 (another CUPTI client refused because of us is named); for CPU sampling
    // (issue 35) pthread_create (a new thread's timer), pthread_sigmask/sigprocmask and sigwait/sigwaitinfo/
    // sigtimedwait (the program's masks and waits never meet a SIGPROF of ours); and the blocking calls of the
    // OS-runtime trace (collector/sampling/osrt.h), with their _FORTIFY_SOURCE forms.
    CHECK(syms ==
          "InitializeInjection\nInitializeInjectionNvtx2\n_Exit\n__poll_chk\n__pread64_chk\n__pread_chk\n__read_chk\n"
          "__recv_chk\n__recvfrom_chk\n_exit\naccept\naccept4\nclock_nanosleep\nclose\nclose_range\nclosefrom\n"
          "connect\ncuptiSubscribe\ncuptiSubscribe_v2\ndup\ndup2\ndup3\nepoll_pwait\nepoll_wait\nexecl\nexecle\n"
          "execlp\nexecv\nexecve\nexecveat\nexecvp\nexecvpe\nfdatasync\nfexecve\nflock\nfsync\nnanosleep\nopen\n"
          "open64\nopenat\nopenat64\npoll\nposix_spawn\nposix_spawnp\nppoll\npread\npread64\npselect\n"
          "pthread_cond_clockwait\npthread_cond_timedwait\npthread_cond_wait\npthread_create\npthread_join\n"
          "pthread_mutex_lock\npthread_rwlock_rdlock\npthread_rwlock_wrlock\npthread_sigmask\npwrite\npwrite64\n"
          "read\nreadv\nrecv\nrecvfrom\nrecvmsg\nselect\nsem_clockwait\nsem_timedwait\nsem_wait\nsend\nsendmsg\n"
          "sendto\nsigaction\nsignal\nsigprocmask\nsigtimedwait\nsigwait\nsigwaitinfo\nsleep\nusleep\nwait\nwaitpid\n"
          "write\nwritev\n");
    std::string needed = command_output("readelf -d '" + lib + "' | grep NEEDED");
    CHECK(needed.find("libcupti") == std::string::npos);
    CHECK(needed.find("libcuda") == std::string::npos);
    CHECK(needed.find("libstdc++") == std::string::npos);
    // libgcc_s.so.1 is allowed (it is wherever glibc is); static libgcc would raise the glibc floor to 2.35.
    // The highest glibc symbol version it asks for must stay at the documented floor, 2.34.
    std::string versions = command_output("objdump -T '" + lib + "' | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1");
    unsigned major = 0, minor = 0;
    REQUIRE(std::sscanf(versions.c_str(), "GLIBC_%u.%u", &major, &minor) == 2);
    INFO("highest glibc symbol version: " << versions);
    CHECK((major < 2 || (major == 2 && minor <= 34)));
}

TEST_CASE("dlopen without any environment: loads and exposes the entry points") {
    void* h = ::dlopen(collector_library().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    CHECK(h == nullptr);  // not loaded in the test process itself
    // Loading it here would start a session inside the test runner: checked through a child instead.
    TempDir dir;
    RunResult r = run_program({test_program("test_nvtx_app"), "plain"},
                              {{"LD_PRELOAD", collector_library()}, {"GPROF_OUTPUT_DIR", dir.path().string()},
                               {"GPROF_TRACE", "none"}},
                              dir.path().string());
    CHECK(r.exit_code() == 5);
}

TEST_CASE("a CUDA program on a machine without a usable GPU: output and exit status unchanged - the reason is stated") {
    TempDir dir;
    std::vector<std::string> argv{test_program("test_cuda_app")};
    RunResult bare = run_program(argv, {}, dir.path().string());
    RunResult r = run_program(argv, collector_env(dir.path().string()), dir.path().string());
    CHECK(r.status == bare.status);
    CHECK(r.out == bare.out);
    auto traces = traces_in(dir.path().string());
    REQUIRE(traces.size() == 1);
    LoadedTrace t = load_trace(traces[0].string());
    CHECK(t.stats.has_end);
    if (bare.exit_code() == 0) {
        // A GPU after all (the device machine): activity must be there instead.
        CHECK(t.count(tr::RecordKind::Kernel) >= 1);
        return;
    }
    // One clear line on stderr, and the same reason in the trace.
    size_t first = r.err.find("gprof-run: CUDA activity not recorded: ");
    CHECK(first != std::string::npos);
    CHECK(r.err.find("gprof-run: CUDA activity not recorded: ", first + 1) == std::string::npos);
    bool stated = false;
    for (const std::string& m : t.status_messages())
        stated = stated || m.rfind("CUDA activity not recorded: ", 0) == 0;
    CHECK(stated);
    CHECK(t.count(tr::RecordKind::Kernel) == 0);
}
