#include "session/signals.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "session/process_session.h"
#include "pipeline/pipeline.h"
#include "base/reentry.h"

extern "C" int __sigaction(int sig, const struct sigaction* act, struct sigaction* old);

namespace gprof::collector::signals {

namespace {

bool is_termination(int sig) {
    for (int s : kTerminationSignals)
        if (s == sig) return true;
    return false;
}

std::atomic<SampleHandler> g_on_sample{nullptr};

// The signals whose disposition is kept here as the program set it: the termination signals and, while the sampler
// has it, the sampling signal.
bool is_kept(int sig) {
    return is_termination(sig) || (sig == kSamplingSignal && g_on_sample.load(std::memory_order_acquire));
}

// ---- the program's own dispositions of the termination signals (a seqlock per signal) ----

struct ProgramAction {
    std::atomic<uint32_t> seq{0};  // odd while a writer is copying
    std::atomic<bool> writing{false};
    struct sigaction act {};
};

ProgramAction g_program[NSIG];
std::atomic<bool> g_taken[NSIG];  // the kernel holds our handler (or the program's SIG_IGN) for this signal
std::atomic<bool> g_interposed{false};

struct sigaction load_program(int sig) {
    ProgramAction& p = g_program[sig];
    for (;;) {
        uint32_t before = p.seq.load(std::memory_order_acquire);
        if (before & 1) continue;
        struct sigaction copy;
        std::memcpy(&copy, &p.act, sizeof copy);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (p.seq.load(std::memory_order_relaxed) == before) return copy;
    }
}

void store_program(int sig, const struct sigaction& act) {
    // Signals blocked: a handler of this thread can never find the copy half done (it would spin for ever). Our own
    // mask change: the sampler does not stop this thread's timer for it.
    OwnWork own;
    sigset_t all, previous;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &previous);
    ProgramAction& p = g_program[sig];
    while (p.writing.exchange(true, std::memory_order_acquire)) {}  // another thread: a few instructions
    p.seq.fetch_add(1, std::memory_order_acq_rel);
    std::memcpy(&p.act, &act, sizeof act);
    p.seq.fetch_add(1, std::memory_order_release);
    p.writing.store(false, std::memory_order_release);
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

bool is_default(const struct sigaction& a) { return reinterpret_cast<void*>(a.sa_handler) == reinterpret_cast<void*>(SIG_DFL); }
bool is_ignore(const struct sigaction& a) { return reinterpret_cast<void*>(a.sa_handler) == reinterpret_cast<void*>(SIG_IGN); }

void on_termination(int sig, siginfo_t* info, void* context);
void on_sampling_signal(int sig, siginfo_t* info, void* context);

// What the kernel gets for the program's disposition `program` of `sig`.
struct sigaction kernel_action_for(int sig, const struct sigaction& program) {
    // An ignored signal stays ignored in the kernel (so an exec'd program inherits it ignored, as without us): an
    // ignored SIGPROF samples nothing.
    if (is_ignore(program)) return program;
    struct sigaction k {};
    k.sa_sigaction = sig == kSamplingSignal ? on_sampling_signal : on_termination;
    if (is_default(program)) {
        k.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&k.sa_mask);
    } else {
        // The program's flags and mask, as the kernel would apply them to its handler; SA_RESETHAND is emulated
        // (the kernel would drop our handler with it).
        k.sa_flags = (program.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
        k.sa_mask = program.sa_mask;
    }
    return k;
}

// ---- finishing the trace from a handler: the finisher thread ----
//
// The handler and the finisher meet on two futex words, not on descriptors: the collector holds no descriptor a
// program could close, reuse or find in its way (base/descriptors.h), and a futex wake and wait are as
// async-signal-safe as a write and a poll.

std::atomic<uint32_t> g_request{0};  // 1: a handler asked for the end
std::atomic<uint32_t> g_done{0};     // 1: the finisher has ended the trace
std::atomic<bool> g_finisher_started{false};
std::atomic<int> g_ending_signal{0};
std::atomic<bool> g_end_claimed{false};
std::atomic<EndBySignal> g_end{nullptr};

long futex(std::atomic<uint32_t>& word, int op, uint32_t value, const timespec* timeout = nullptr) {
    static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
    return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, value, timeout, nullptr, 0);
}

void finisher_main() {
    t_own_work = true;  // the collector's thread: its calls are not the program's OS-runtime calls
    while (g_request.load(std::memory_order_acquire) == 0) futex(g_request, FUTEX_WAIT, 0);
    int sig = g_ending_signal.load(std::memory_order_acquire);
    if (EndBySignal end = g_end.load(std::memory_order_acquire); end && sig > 0) end(sig);
    g_done.store(1, std::memory_order_release);
    futex(g_done, FUTEX_WAKE, INT_MAX);
}

int64_t now_ms() {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
    return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

// Async-signal-safe: asks the finisher to finish the trace and waits for it, at most kSignalFinishWaitMs.
void finish_trace(int sig) {
    if (!g_finisher_started.load(std::memory_order_acquire) || !session_pipeline()) return;
    if (!g_end_claimed.exchange(true, std::memory_order_acq_rel)) {
        g_ending_signal.store(sig, std::memory_order_release);
        g_request.store(1, std::memory_order_release);
        futex(g_request, FUTEX_WAKE, 1);
    }
    // Another thread's signal may already have asked: wait for the same end.
    int64_t deadline = now_ms() + kSignalFinishWaitMs;
    for (int64_t left = kSignalFinishWaitMs; left > 0; left = deadline - now_ms()) {
        if (g_done.load(std::memory_order_acquire)) return;
        timespec wait{static_cast<time_t>(left / 1000), static_cast<long>(left % 1000) * 1000000};
        futex(g_done, FUTEX_WAIT, 0, &wait);
    }
    if (g_done.load(std::memory_order_acquire)) return;
    // The finisher did not make it (a lock held by the interrupted thread?): keep at least the encoded records.
    if (Pipeline* pipeline = session_pipeline()) pipeline->flush_from_signal_handler();
}

void on_termination(int sig, siginfo_t* info, void* context) {
    int saved_errno = errno;
    struct sigaction program = load_program(sig);
    if (is_ignore(program)) return;  // set while the signal was on its way
    if (!is_default(program)) {
        if (program.sa_flags & SA_RESETHAND) {
            // What the kernel would have done before calling the handler.
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            sigemptyset(&dfl.sa_mask);
            store_program(sig, dfl);
            struct sigaction k = kernel_action_for(sig, dfl);
            __sigaction(sig, &k, nullptr);
        }
        errno = saved_errno;
        if (program.sa_flags & SA_SIGINFO) program.sa_sigaction(sig, info, context);
        else program.sa_handler(sig);
        return;
    }
    // The default action: the signal ends the process. Finish the trace first, then let it.
    finish_trace(sig);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    __sigaction(sig, &dfl, nullptr);
    // Pending while this handler runs (the signal is blocked in it); delivered with the default action on return.
    ::raise(sig);
    errno = saved_errno;
}

void on_sampling_signal(int sig, siginfo_t* info, void* context) {
    if (SampleHandler on_sample = g_on_sample.load(std::memory_order_acquire); on_sample && on_sample(info, context))
        return;
    // The program's own SIGPROF (its setitimer, a kill): what its disposition says.
    on_termination(sig, info, context);
}

// ---- fatal signals ----

struct sigaction g_previous_fatal[NSIG];
std::atomic<bool> g_in_fatal{false};
bool g_fatal_installed = false;

void on_fatal_signal(int sig, siginfo_t* info, void*) {
    // Async-signal-safe only: atomics, one write(2) inside the writer, sigaction, raise.
    int saved_errno = errno;
    if (!g_in_fatal.exchange(true)) {
        if (Pipeline* p = session_pipeline()) p->flush_from_signal_handler();
    }
    // Put back what the app had (its handler or the default) so the signal ends the process exactly as it
    // would have without us.
    __sigaction(sig, &g_previous_fatal[sig], nullptr);
    // A fault raised by the kernel (si_code > 0) repeats when we return; a signal sent by kill/raise/abort
    // does not, so send it again: it stays pending until we return, then takes the restored disposition.
    if (!info || info->si_code <= 0) ::raise(sig);
    errno = saved_errno;
}

void install_fatal() {
    if (g_fatal_installed) return;
    g_fatal_installed = true;
    for (int sig : kFatalSignals) {
        struct sigaction sa {};
        sa.sa_sigaction = on_fatal_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        struct sigaction old {};
        if (__sigaction(sig, &sa, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && is_ignore(old) && sig != SIGABRT) {
            // The app ignores it: keep it that way (a fault it ignores still kills it, as before).
            __sigaction(sig, &old, nullptr);
            continue;
        }
        g_previous_fatal[sig] = old;
    }
}

void take_termination_signals() {
    for (int sig : kTerminationSignals) {
        struct sigaction current {};
        if (__sigaction(sig, nullptr, &current) != 0) continue;
        if (!(current.sa_flags & SA_SIGINFO) || current.sa_sigaction != on_termination) {
            // First time in this image: what the kernel holds is the program's (or inherited) disposition.
            store_program(sig, current);
        }
        // (Already ours in a forked child: the recorded disposition came with the fork.)
        struct sigaction k = kernel_action_for(sig, load_program(sig));
        if (__sigaction(sig, &k, nullptr) == 0) g_taken[sig].store(true, std::memory_order_release);
    }
}

}  // namespace

int real_sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept {
    return __sigaction(sig, act, old);
}

bool in_fatal_signal() noexcept { return g_in_fatal.load(std::memory_order_acquire); }

void set_interposed(bool interposed) noexcept { g_interposed.store(interposed, std::memory_order_release); }

void install(EndBySignal end) noexcept {
    g_end.store(end, std::memory_order_release);
    install_fatal();
    if (!g_finisher_started.load(std::memory_order_acquire)) {
        try {
            BlockTermination blocked;  // the finisher never runs a handler of ours
            std::thread(finisher_main).detach();
            g_finisher_started.store(true, std::memory_order_release);
        } catch (...) {
        }
    }
    if (g_interposed.load(std::memory_order_acquire)) take_termination_signals();
}

void reset_after_fork() noexcept {
    // The finisher thread stayed in the parent: the child's session starts its own.
    g_finisher_started.store(false);
    g_request.store(0);
    g_done.store(0);
    g_end_claimed.store(false);
    g_ending_signal.store(0);
    g_in_fatal.store(false);
}

bool take_sampling_signal(SampleHandler on_sample) noexcept {
    if (!g_interposed.load(std::memory_order_acquire) || !on_sample) return false;
    const int sig = kSamplingSignal;
    struct sigaction current {};
    if (__sigaction(sig, nullptr, &current) != 0) return false;
    if (!(current.sa_flags & SA_SIGINFO) || current.sa_sigaction != on_sampling_signal) {
        // First time in this image: what the kernel holds is the program's (or inherited: SIG_IGN survives exec).
        store_program(sig, current);
    }
    if (is_ignore(load_program(sig))) return false;  // SIGPROF ignored (inherited so): kept ignored, not sampled
    g_on_sample.store(on_sample, std::memory_order_release);
    struct sigaction k = kernel_action_for(sig, load_program(sig));
    if (__sigaction(sig, &k, nullptr) != 0) {
        g_on_sample.store(nullptr, std::memory_order_release);
        return false;
    }
    g_taken[sig].store(true, std::memory_order_release);
    return true;
}

int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept {
    if (sig <= 0 || sig >= NSIG || !is_kept(sig) || !g_taken[sig].load(std::memory_order_acquire))
        return __sigaction(sig, act, old);
    struct sigaction previous = load_program(sig);
    if (act) {
        struct sigaction k = kernel_action_for(sig, *act);
        if (__sigaction(sig, &k, nullptr) != 0) return -1;  // errno from the kernel (EINVAL, EFAULT)
        store_program(sig, *act);
    }
    if (old) *old = previous;
    return 0;
}

Handler program_signal(int sig, Handler handler) noexcept {
    if (sig <= 0 || sig >= NSIG || handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    // glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its own handler).
    struct sigaction act {}, old{};
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (program_sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? reinterpret_cast<Handler>(reinterpret_cast<void*>(old.sa_sigaction))
                                       : old.sa_handler;
}

}  // namespace gprof::collector::signals
