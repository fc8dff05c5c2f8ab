// CPU sampling (issue 35): where each thread of the process spends its CPU time, native and Python frames, without
// the program noticing.
//
// How: every thread gets a timer on its own CPU-time clock (timer_create(CLOCK_THREAD_CPUTIME_ID) with
// SIGEV_THREAD_ID, so the signal goes to that thread and no other). The kernel checks such timers at its tick while
// the thread runs, and since Linux 5.10 (x86-64; 5.11 arm64: POSIX_CPU_TIMERS_TASK_WORK) it fires them from the
// thread's return to user space, so the signal is taken there, never inside a system call: a thread blocked in
// poll, read or nanosleep uses no CPU, its timer does not move, and no call of the program is interrupted (no
// EINTR; tests/collector/test_sampling.cpp runs a program that aborts on EINTR). The handler unwinds the interrupted
// code (stacks/unwind.h), reads the thread's Python frames by layout (python/walk.h), and writes one entry into the
// thread's ring (sampling/threads.h); the writer thread interns and writes them (sampling/drain.h).
//
// The signal is SIGPROF, the one set aside for profilers (setitimer's ITIMER_PROF, gperftools, Go). The program's
// disposition of it is kept as the program set it (session/signals.cpp interposes sigaction, as for the termination
// signals): a SIGPROF that is not one of our timers' goes where the program said (its handler, ignored, or the
// default action), and the program reads back its own disposition. The mask is the program's too: a thread is not
// sampled while it blocks SIGPROF (a signal it blocks would stay pending and could reach its sigwait), its timer
// deleted before the mask blocks it and armed again once it is unblocked (before_blocking_sigprof below).
//
// The period: 1 / GPROF_SAMPLING_FREQUENCY of CPU time (1 ms by default). A CPU-time timer fires at most once per
// kernel tick (CONFIG_HZ: 250 on many kernels), so a thread is sampled at most HZ times a second; a sample then
// stands for every period that passed since the last one (si_overrun + 1: CpuSample.periods), so
// totals stay right whatever the tick.
//
// Where perf_event_paranoid or a container's seccomp forbid perf events, this still runs: it needs no privilege.
#pragma once

#include <signal.h>

#include <cstdint>
#include <string>

namespace gprof::collector {
class Pipeline;
}

namespace gprof::collector::sampling {

struct SamplerOptions {
    bool sample = true;            // GPROF_SAMPLE
    uint32_t frequency_hz = 1000;  // GPROF_SAMPLING_FREQUENCY
};

// Starts sampling in this process (after the session took SIGPROF, session/signals.h): the calling thread's timer
// and those of the threads that exist now (/proc/self/task, read once here), every later thread's as it starts
// (thread_starts) or makes its first OS-runtime call (thread_found). Idempotent per process image; a forked child
// calls it again after reset_after_fork().
void start(const SamplerOptions& options) noexcept;
// Stops every timer (the end of the trace): nothing is sampled after this returns, except a signal already on its way.
void stop() noexcept;
bool running() noexcept;
uint64_t period_ns() noexcept;

// The sampling signal's handler, first step: true when the signal is one of our timers' (then it has been
// handled), false when it is someone else's SIGPROF (the caller then does what the program's disposition says).
bool on_signal(siginfo_t* info, void* ucontext) noexcept;

// The calling thread, as it starts (the pthread_create wrapper): its slot and timer. Not for signal handlers.
// own_thread: the collector's own thread (made while t_own_work was set): never sampled or traced.
void thread_starts(bool own_thread) noexcept;

// The calling thread's signal mask is about to block SIGPROF (the pthread_sigmask/sigprocmask interposers, before
// the real call): its timer is deleted first, so no SIGPROF of ours is ever left pending for its sigwait, and no
// other thread arms one while it blocks. Then, once a mask that unblocks SIGPROF is in place (after the real call),
// after_unblocking_sigprof() arms it again (also a thread that started with SIGPROF blocked). Not for the sampling
// signal's handler; a program's handler may call them (timer_create/timer_delete are system calls, no locks).
void before_blocking_sigprof() noexcept;
void after_unblocking_sigprof() noexcept;

// A thread took its slot outside pthread_create (its first OS-runtime call: a thread made by clone() itself): its
// timer, unless it blocks SIGPROF. Async-signal-safe (system calls only). Not for the collector's own threads.
void thread_found() noexcept;
// The writer thread: the timer of a slot whose thread is gone.
void disarm(struct Slot* slot) noexcept;

// A forked child, before its session starts again: the parent's timers are not inherited.
void reset_after_fork() noexcept;

struct SamplerCounts {
    uint64_t samples = 0;           // samples written into the rings
    uint64_t periods = 0;           // sampling periods they stand for
    uint64_t not_ours = 0;          // SIGPROFs that were the program's own (passed on)
    uint64_t threads_armed = 0;     // threads given a timer
    uint64_t threads_blocking = 0;  // threads not sampled: they block SIGPROF
    uint64_t timer_failures = 0;    // timer_create/timer_settime refused (errno in last_timer_error)
    int last_timer_error = 0;
};
SamplerCounts counts() noexcept;

}  // namespace gprof::collector::sampling
