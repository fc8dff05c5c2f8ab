// pthread_create, interposed when the collector is LD_PRELOADed: every thread the program starts gets its CPU-time
// timer (collector/sampling/sampler.h) before its own function runs, and is told the collector when it ends (its
// slot is freed). A thread started while the collector does its own work (the writer, CUPTI's threads) is the
// collector's: neither sampled nor traced.
//
// pthread_sigmask and sigprocmask: the program's mask exactly as it asks. A mask that will block SIGPROF has the
// thread's timer deleted first, and one that unblocks it has the timer armed again after (sampling/sampler.h), so a
// thread that blocks SIGPROF (to sigwait for it, or for every signal) finds none of ours pending.
// sigwait, sigwaitinfo and sigtimedwait: should a SIGPROF of ours still be pending (a thread started by clone(), which
// the writer arms from outside, blocking it at the same moment), the wait takes it and goes on waiting: the program
// never receives it. (A signalfd reading SIGPROF is not covered.)
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <new>

#include "base/reentry.h"
#include "sampling/sampler.h"
#include "sampling/threads.h"

namespace {

namespace c = gprof::collector;

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
CreateFn g_create = nullptr;

__attribute__((constructor(101))) void resolve_pthread_create() {
    if (!g_create) g_create = reinterpret_cast<CreateFn>(::dlsym(RTLD_NEXT, "pthread_create"));
}

struct Start {
    void* (*fn)(void*);
    void* arg;
    bool own;  // made by the collector's own work
};

void* start_thread(void* p) {
    Start start = *static_cast<Start*>(p);
    delete static_cast<Start*>(p);
    c::t_own_work = start.own;
    c::sampling::thread_starts(start.own);
    return start.fn(start.arg);
}

}  // namespace

namespace {

using MaskFn = int (*)(int, const sigset_t*, sigset_t*);
using WaitInfoFn = int (*)(const sigset_t*, siginfo_t*);
using TimedWaitFn = int (*)(const sigset_t*, siginfo_t*, const struct timespec*);
MaskFn g_pthread_sigmask = nullptr, g_sigprocmask = nullptr;
WaitInfoFn g_sigwaitinfo = nullptr;
TimedWaitFn g_sigtimedwait = nullptr;

__attribute__((constructor(101))) void resolve_signal_functions() {
    if (!g_pthread_sigmask) g_pthread_sigmask = reinterpret_cast<MaskFn>(::dlsym(RTLD_NEXT, "pthread_sigmask"));
    if (!g_sigprocmask) g_sigprocmask = reinterpret_cast<MaskFn>(::dlsym(RTLD_NEXT, "sigprocmask"));
    if (!g_sigwaitinfo) g_sigwaitinfo = reinterpret_cast<WaitInfoFn>(::dlsym(RTLD_NEXT, "sigwaitinfo"));
    if (!g_sigtimedwait) g_sigtimedwait = reinterpret_cast<TimedWaitFn>(::dlsym(RTLD_NEXT, "sigtimedwait"));
}

// The real call, with the sampler told around it. `fails_with_errno`: sigprocmask reports errors in errno and returns
// -1, pthread_sigmask returns the error.
int mask_call(MaskFn real, int how, const sigset_t* set, sigset_t* old, bool fails_with_errno) {
    if (!real) return fails_with_errno ? (errno = ENOSYS, -1) : ENOSYS;
    if (!set || c::t_own_work) return real(how, set, old);
    bool has = sigismember(set, SIGPROF) == 1;
    bool blocks = has && (how == SIG_BLOCK || how == SIG_SETMASK);
    bool unblocks = (has && how == SIG_UNBLOCK) || (!has && how == SIG_SETMASK);
    if (blocks) c::sampling::before_blocking_sigprof();
    int rc = real(how, set, old);
    int saved = errno;
    sigset_t now;
    if (rc == 0 && unblocks) {
        c::sampling::after_unblocking_sigprof();
    } else if (rc != 0 && blocks && real(SIG_BLOCK, nullptr, &now) == 0 && sigismember(&now, SIGPROF) != 1) {
        c::sampling::after_unblocking_sigprof();  // the blocking call failed (EINVAL): SIGPROF stays unblocked
    }
    errno = saved;
    return rc;
}

bool is_ours(int sig, const siginfo_t& info) {
    return sig == SIGPROF && info.si_code == SI_TIMER && c::sampling::is_slot(info.si_value.sival_ptr);
}

int64_t monotonic_ns() {
    struct timespec t {};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// sigtimedwait (timeout null: sigwaitinfo) that passes over our SIGPROFs, the timeout kept as the program gave it.
int wait_skipping_ours(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
    siginfo_t local{};
    siginfo_t* out = info ? info : &local;
    if (!set || sigismember(set, SIGPROF) != 1)
        return timeout ? g_sigtimedwait(set, info, timeout) : g_sigwaitinfo(set, info);
    int64_t deadline = 0;
    if (timeout) deadline = monotonic_ns() + static_cast<int64_t>(timeout->tv_sec) * 1'000'000'000 + timeout->tv_nsec;
    for (;;) {
        struct timespec left {};
        if (timeout) {
            int64_t ns = deadline - monotonic_ns();
            if (ns < 0) ns = 0;
            left.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
            left.tv_nsec = static_cast<long>(ns % 1'000'000'000);
        }
        int sig = timeout ? g_sigtimedwait(set, out, &left) : g_sigwaitinfo(set, out);
        if (sig < 0 || !is_ours(sig, *out)) return sig;
    }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
    resolve_signal_functions();
    return mask_call(g_pthread_sigmask, how, set, old, false);
}

extern "C" __attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
    resolve_signal_functions();
    return mask_call(g_sigprocmask, how, set, old, true);
}

extern "C" __attribute__((visibility("default"))) int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
    resolve_signal_functions();
    if (!g_sigwaitinfo || !g_sigtimedwait) return errno = ENOSYS, -1;
    return wait_skipping_ours(set, info, nullptr);
}

extern "C" __attribute__((visibility("default"))) int sigtimedwait(const sigset_t* set, siginfo_t* info,
                                                                  const struct timespec* timeout) {
    resolve_signal_functions();
    if (!g_sigwaitinfo || !g_sigtimedwait) return errno = ENOSYS, -1;
    return wait_skipping_ours(set, info, timeout);
}

extern "C" __attribute__((visibility("default"))) int sigwait(const sigset_t* set, int* sig) {
    // glibc's sigwait: sigtimedwait without a timeout, again after EINTR; the error number returned, not set.
    resolve_signal_functions();
    if (!g_sigwaitinfo || !g_sigtimedwait) return ENOSYS;
    int saved = errno;
    int got;
    do got = wait_skipping_ours(set, nullptr, nullptr);
    while (got < 0 && errno == EINTR);
    int rc = got < 0 ? errno : 0;
    if (got >= 0) *sig = got;
    errno = saved;
    return rc;
}

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                    void* (*fn)(void*), void* arg) {
    resolve_pthread_create();
    if (!g_create) return EAGAIN;
    auto* start = new (std::nothrow) Start{fn, arg, c::t_own_work};
    if (!start) return g_create(thread, attr, fn, arg);  // no memory for the wrapper: the thread runs unsampled
    int rc = g_create(thread, attr, start_thread, start);
    if (rc != 0) delete start;
    return rc;
}
