// Which signals are the program's to handle, and how our own threads stay out of their way. The bottom of the
// collector, so that the pipeline's writer thread and the session's helper threads share one list.
// session/signals.h says what happens when one of them arrives.
#pragma once

#include <signal.h>

namespace gprof::collector::signals {

// Termination signals: SIGTERM from Slurm or Kubernetes, SIGINT from Ctrl-C, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM,
// SIGUSR1/2, SIGXCPU. Fatal signals: what a crashing process dies of.
inline constexpr int kTerminationSignals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU};
inline constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// The CPU sampler's signal (collector/sampling/sampler.h): sent by a thread's CPU-time timer to that thread only.
inline constexpr int kSamplingSignal = SIGPROF;

// Blocks the termination signals and the sampling signal in the calling thread for its scope, so that a thread
// created inside it (ours) inherits the mask (it is then neither handed the program's signals nor sampled); the
// previous mask is back afterwards.
class BlockTermination {
public:
    BlockTermination() noexcept;
    ~BlockTermination();
    BlockTermination(const BlockTermination&) = delete;
    BlockTermination& operator=(const BlockTermination&) = delete;

private:
    sigset_t previous_;
};

}  // namespace gprof::collector::signals
