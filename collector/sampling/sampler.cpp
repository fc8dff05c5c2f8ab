#include "sampling/sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/reentry.h"
#include "sampling/capture.h"
#include "sampling/entries.h"
#include "sampling/threads.h"
#include "stacks/unwind.h"

namespace gprof::collector::sampling {

namespace {

std::atomic<bool> g_running{false};
std::atomic<uint64_t> g_period_ns{1'000'000};
std::atomic<uint64_t> g_samples{0}, g_periods{0}, g_not_ours{0}, g_armed{0}, g_blocking{0}, g_timer_failures{0};
std::atomic<int> g_last_timer_error{0};

// The CPU-time clock of another thread of this process (glibc's pthread_getcpuclockid for a tid): MAKE_THREAD_CPUCLOCK
// (tid, CPUCLOCK_SCHED) of the kernel's posix-timers.h.
clockid_t thread_cpu_clock(int32_t tid) { return static_cast<clockid_t>((~static_cast<unsigned>(tid)) << 3) | 6; }

bool blocks_sigprof() {
    sigset_t current;
    if (::pthread_sigmask(SIG_BLOCK, nullptr, &current) != 0) return false;
    return sigismember(&current, SIGPROF) == 1;
}

// Arms the slot's timer: `self` from the slot's own thread, otherwise from the writer. One arming at a time per slot
// (the `arming` claim), and never for a thread that blocks SIGPROF: a thread about to block it sets `blocks` and then
// waits for an arming in progress (before_blocking_sigprof), so either the arming sees `blocks` and stops, or the
// thread sees the timer and deletes it before its mask changes. Both sides use sequentially consistent operations.
bool arm(Slot& slot, bool self) noexcept {
    int32_t me = current_tid();
    int32_t free = 0;
    if (!slot.arming.compare_exchange_strong(free, me, std::memory_order_seq_cst)) return false;  // someone else is
    struct Release {
        Slot& s;
        ~Release() { s.arming.store(0, std::memory_order_seq_cst); }
    } release{slot};
    if (slot.blocks.load(std::memory_order_seq_cst)) return false;
    if (slot.armed.load(std::memory_order_acquire)) return true;
    int saved = errno;
    struct sigevent ev {};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev.sigev_value.sival_ptr = &slot;
    ev._sigev_un._tid = slot.tid;
    timer_t timer{};
    bool ok = ::timer_create(self ? CLOCK_THREAD_CPUTIME_ID : thread_cpu_clock(slot.tid), &ev, &timer) == 0;
    if (ok) {
        uint64_t period = g_period_ns.load(std::memory_order_relaxed);
        struct itimerspec spec {};
        spec.it_interval.tv_sec = static_cast<time_t>(period / 1'000'000'000);
        spec.it_interval.tv_nsec = static_cast<long>(period % 1'000'000'000);
        spec.it_value = spec.it_interval;
        if (::timer_settime(timer, 0, &spec, nullptr) != 0) {
            ::timer_delete(timer);
            ok = false;
        }
    }
    if (!ok) {
        g_timer_failures.fetch_add(1, std::memory_order_relaxed);
        g_last_timer_error.store(errno, std::memory_order_relaxed);
    } else {
        slot.timer = timer;
        slot.armed.store(true, std::memory_order_release);
        if (!slot.ever_armed) {
            slot.ever_armed = true;
            g_armed.fetch_add(1, std::memory_order_relaxed);
        }
    }
    errno = saved;
    return ok;
}

void arm_calling_thread() noexcept {
    if (!g_running.load(std::memory_order_acquire)) return;
    Slot* s = current_slot();
    if (blocks_sigprof()) {
        // Not sampled while it blocks SIGPROF (a signal it blocks would stay pending and could reach its sigwait);
        // its slot says so, so the writer does not arm it either. Unblocking it arms it (after_unblocking_sigprof).
        if (s) s->blocks.store(true, std::memory_order_seq_cst);
        g_blocking.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    {
        // The unwinder's per-thread state, made here rather than in the first handler. Our own work: libunwind
        // blocks every signal around its locks, through pthread_sigmask, which must not stop and start the timer.
        OwnWork own;
        stacks::warm_up_thread();
    }
    if (s) arm(*s, true);
}

// The tids of /proc/self/task.
std::vector<int32_t> task_tids() {
    std::vector<int32_t> out;
    if (DIR* d = ::opendir("/proc/self/task")) {
        while (dirent* e = ::readdir(d)) {
            char* end = nullptr;
            long tid = std::strtol(e->d_name, &end, 10);
            if (end != e->d_name && *end == '\0' && tid > 0) out.push_back(static_cast<int32_t>(tid));
        }
        ::closedir(d);
    }
    return out;
}

// Whether the thread blocks SIGPROF (its SigBlk line in /proc/self/task/TID/status); true when it cannot be read.
bool thread_blocks_sigprof(int32_t tid) {
    std::string path = "/proc/self/task/" + std::to_string(tid) + "/status";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return true;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return true;
    buf[n] = '\0';
    const char* line = std::strstr(buf, "SigBlk:");
    if (!line) return true;
    unsigned long long mask = std::strtoull(line + 7, nullptr, 16);
    return (mask >> (SIGPROF - 1)) & 1;
}

// The threads that exist when sampling starts (made before the collector, or by clone() itself): a slot and a timer
// each, from outside, unless it blocks SIGPROF (the collector's own threads do). Once, on the thread that starts the
// session (at the program's start, or in a forked child before fork() returns): the /proc files it opens for a
// moment are never opened again while the program runs (a descriptor of ours could take the number its open()
// expects). The slot is taken before the mask is read: a thread that blocks SIGPROF from then on finds its slot and
// keeps the timer off (before_blocking_sigprof).
void adopt_running_threads() {
    int32_t me = current_tid();
    for (int32_t tid : task_tids()) {
        if (tid == me || has_slot(tid)) continue;
        Slot* s = claim_for(tid);
        if (!s) continue;
        if (thread_blocks_sigprof(tid)) {
            // (Not counted as a thread left unsampled: the collector's own threads, the writer among them, are here.)
            s->blocks.store(true, std::memory_order_seq_cst);
        } else {
            arm(*s, false);
        }
    }
}

}  // namespace

void start(const SamplerOptions& options) noexcept {
    if (!options.sample || options.frequency_hz == 0) return;
    g_period_ns.store(1'000'000'000ull / options.frequency_hz, std::memory_order_relaxed);
    find_python();  // python3 itself holds the interpreter from the start: its frames from the first sample
    g_running.store(true, std::memory_order_release);
    arm_calling_thread();
    try {
        OwnWork own;  // its /proc reads are the collector's
        adopt_running_threads();
    } catch (...) {  // no memory for a path or a list: those threads go unsampled
    }
}

void thread_found() noexcept {
    if (!g_running.load(std::memory_order_acquire)) return;
    Slot* s = existing_slot();
    if (!s) return;
    if (blocks_sigprof()) {
        s->blocks.store(true, std::memory_order_seq_cst);
        g_blocking.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    arm(*s, true);  // no warm-up of the unwinder: this may run in the program's signal handler
}

void stop() noexcept {
    if (!g_running.exchange(false, std::memory_order_acq_rel)) return;
    for (uint32_t i = 0; i < kMaxThreads; ++i) disarm(&slots()[i]);
}

bool running() noexcept { return g_running.load(std::memory_order_acquire); }
uint64_t period_ns() noexcept { return g_period_ns.load(std::memory_order_relaxed); }

bool on_signal(siginfo_t* info, void* ucontext) noexcept {
    if (!info || info->si_code != SI_TIMER || !is_slot(info->si_value.sival_ptr)) {
        g_not_ours.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    auto* slot = static_cast<Slot*>(info->si_value.sival_ptr);
    // A signal of a timer deleted meanwhile (the slot freed, or now another thread's) is ours and is dropped.
    if (!g_running.load(std::memory_order_relaxed) || slot->state.load(std::memory_order_acquire) != SlotState::Live ||
        slot->tid != current_tid())
        return true;
    int saved = errno;
    OwnWork own;  // the unwinder's locks, taken inside the handler, are not the program's calls
    adopt(slot);
    Channel& channel = slot->samples;
    if (channel.busy.exchange(1, std::memory_order_acquire) == 0) {
        Stacks stacks;
        uintptr_t native[kMaxFrames];
        stacks.n_native = stacks::unwind_interrupted(ucontext, native, kMaxFrames);
        for (uint32_t i = 0; i < stacks.n_native; ++i) stacks.native[i] = native[i];
        take_python(channel, stacks);
        SampleEntry head{};
        head.time = clock::now();
        uint64_t periods = 1 + static_cast<uint64_t>(info->si_overrun > 0 ? info->si_overrun : 0);
        head.periods = static_cast<uint32_t>(periods);
        head.period_ns = static_cast<uint32_t>(g_period_ns.load(std::memory_order_relaxed));
        head.stacks.n_native = static_cast<uint16_t>(stacks.n_native);
        head.stacks.n_py = static_cast<uint16_t>(stacks.n_py);
        head.stacks.py_cut = stacks.py_cut ? 1 : 0;
        if (write_entry(channel, kSample, &head, sizeof head, stacks)) {
            g_samples.fetch_add(1, std::memory_order_relaxed);
            g_periods.fetch_add(periods, std::memory_order_relaxed);
        }
        channel.busy.store(0, std::memory_order_release);
    }
    errno = saved;
    return true;
}

void thread_starts(bool own_thread) noexcept {
    if (own_thread) return;
    watch_thread_exit();
    arm_calling_thread();
}

void before_blocking_sigprof() noexcept {
    Slot* slot = existing_slot();
    if (!slot) return;
    int saved = errno;
    slot->blocks.store(true, std::memory_order_seq_cst);
    // An arming in progress on another thread (the writer's): wait for it, then delete what it made. One on this
    // thread (the program's signal handler interrupted our own arming) cannot be waited for: it sees `blocks` only
    // if it has not checked yet; otherwise its timer stays until the thread unblocks SIGPROF again.
    int32_t me = current_tid();
    for (int32_t holder; (holder = slot->arming.load(std::memory_order_seq_cst)) != 0 && holder != me;) sched_yield();
    disarm(slot);
    errno = saved;
}

void after_unblocking_sigprof() noexcept {
    if (!g_running.load(std::memory_order_acquire)) {
        if (Slot* slot = existing_slot()) slot->blocks.store(false, std::memory_order_seq_cst);
        return;
    }
    int saved = errno;
    bool claimed = false;
    Slot* slot = current_slot(&claimed);  // a thread that started with SIGPROF blocked has none yet
    if (slot) {
        slot->blocks.store(false, std::memory_order_seq_cst);
        if (!slot->armed.load(std::memory_order_acquire)) arm(*slot, true);
    }
    errno = saved;
}

void disarm(Slot* slot) noexcept {
    if (!slot || !slot->armed.exchange(false, std::memory_order_acq_rel)) return;
    int saved = errno;
    ::timer_delete(slot->timer);
    errno = saved;
}

void reset_after_fork() noexcept {
    g_running.store(false, std::memory_order_release);
    for (auto* c : {&g_samples, &g_periods, &g_not_ours, &g_armed, &g_blocking, &g_timer_failures})
        c->store(0, std::memory_order_relaxed);
}

SamplerCounts counts() noexcept {
    SamplerCounts c;
    c.samples = g_samples.load(std::memory_order_relaxed);
    c.periods = g_periods.load(std::memory_order_relaxed);
    c.not_ours = g_not_ours.load(std::memory_order_relaxed);
    c.threads_armed = g_armed.load(std::memory_order_relaxed);
    c.threads_blocking = g_blocking.load(std::memory_order_relaxed);
    c.timer_failures = g_timer_failures.load(std::memory_order_relaxed);
    c.last_timer_error = g_last_timer_error.load(std::memory_order_relaxed);
    return c;
}

}  // namespace gprof::collector::sampling
