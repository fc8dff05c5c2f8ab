#include "base/thread_signals.h"

#include <pthread.h>

namespace gprof::collector::signals {

BlockTermination::BlockTermination() noexcept {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kTerminationSignals) sigaddset(&set, s);
    ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

BlockTermination::~BlockTermination() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace gprof::collector::signals
