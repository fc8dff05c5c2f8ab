#include "base/thread_signals.h"

#include <pthread.h>

#include "base/reentry.h"

namespace gprof::collector::signals {

BlockTermination::BlockTermination() noexcept {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kTerminationSignals) sigaddset(&set, s);
    sigaddset(&set, kSamplingSignal);
    OwnWork own;  // our own mask change: the sampler leaves this thread's timer running (a SIGPROF of ours that
                  // comes meanwhile waits, and is handled once the mask is back)
    ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

BlockTermination::~BlockTermination() {
    OwnWork own;
    ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace gprof::collector::signals
