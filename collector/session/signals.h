// Signals: a process that dies of one still leaves a readable trace, and the program sees no difference.
//
// Fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): a handler installed at the start writes the records
// already encoded (one write(2)), puts the previous disposition back and lets the signal take its course. Nothing
// else is safe in a crashing process; the trace has no End record.
//
// Termination signals (kTerminationSignals in base/thread_signals.h: SIGTERM from Slurm or Kubernetes, SIGINT from Ctrl-C, SIGHUP, SIGQUIT,
// SIGPIPE, SIGALRM, SIGUSR1/2, SIGXCPU), while the program leaves them at their default action: the handler wakes
// the session's finisher thread, which finishes the trace as at exit (CUPTI's forced flush, the last NVTX drain,
// End with End.signal), and waits for it at most kSignalFinishWait; then it restores the default action and sends
// the signal again, so the process dies of it (status 128+N) exactly as it would have. A signal handler may not
// lock or allocate: the handler only wakes and waits on futex words (async-signal-safe, and no descriptor for the
// program to close); the finisher, an ordinary thread, does the work. Our own threads block these signals, so a
// signal sent to the process always runs the handler on a thread of the program.
//
// The program's own handlers are chained, never replaced: with the collector LD_PRELOADed, sigaction() and signal()
// are interposed (inject/src/signal_interpose.cpp). For a termination signal the program's disposition is kept
// here as the program set it; the kernel gets our handler in its place, which calls the program's handler as the
// kernel would have (same flags, mask, siginfo; SA_RESETHAND emulated) and does nothing else; sigaction() reports
// the program's own disposition back. A program that handles SIGTERM and goes on, or exits from its handler,
// behaves exactly as without us. When the program sets a signal back to SIG_DFL and raises it (Python does so for
// KeyboardInterrupt), the default action is ours again: the trace is finished first. Without interposition (the
// collector dlopen'ed by the driver or NVTX), termination signals are left alone.
#pragma once

#include <signal.h>

#include <cstdint>

#include "base/thread_signals.h"

namespace gprof::collector::signals {

inline constexpr int kSignalFinishWaitMs = 3000;

// Finishes the trace because `sig` is ending the process (runs on the finisher thread, never in a handler).
using EndBySignal = void (*)(int sig);

// Called by inject/ when its sigaction()/signal() are the ones the program's calls bind to.
void set_interposed(bool interposed) noexcept;

// The session is active: fatal handlers, the finisher thread, and (when interposed) the termination signals.
// Idempotent; call again in a forked child's new session.
void install(EndBySignal end) noexcept;

// The sampling signal (SIGPROF), taken like a termination signal: the kernel gets our handler, which first asks
// `on_sample` (the CPU sampler: true when the signal was one of its timers'), and otherwise does what the program's
// own disposition says (its handler, ignore, or the default action, which ends the process: the trace is finished
// first); the program reads back its own disposition. Only when interposed, and not when the program ignores SIGPROF
// (an exec'd program must inherit it ignored): false then, and nothing is sampled.
// Call after install().
using SampleHandler = bool (*)(siginfo_t* info, void* ucontext);
bool take_sampling_signal(SampleHandler on_sample) noexcept;

// In a forked child, before its session starts: the parent's finisher thread does not exist here.
void reset_after_fork() noexcept;

// sigaction(2) and signal(3) as the program sees them (the interposers' bodies).
int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept;
using Handler = void (*)(int);
Handler program_signal(int sig, Handler handler) noexcept;

// A fatal signal's handler has run: the process is dying of it (the _exit interposer stays out of the way).
bool in_fatal_signal() noexcept;

// The real sigaction (glibc's __sigaction), bypassing the interposer.
int real_sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept;

}  // namespace gprof::collector::signals
