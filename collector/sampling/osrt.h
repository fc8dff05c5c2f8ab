// OS-runtime calls (nsys's osrt): the C library calls that block (file and socket I/O, polling, sleeping, locks and
// condition waits, opening, syncing, accepting, connecting), each recorded when it lasted at least the threshold
// (GPROF_OSRT_THRESHOLD, 1 µs as nsys), with its call site when it lasted at least the backtrace threshold
// (GPROF_OSRT_BACKTRACE_THRESHOLD, 80 µs as nsys's --osrt-backtrace-threshold).
//
// The interposers (inject/src/osrt_interpose.cpp) call the real function between OsrtTimer's construction and
// done(): below the threshold the whole cost is two clock reads and a few loads; the function's result and errno are
// the real ones (done() saves and restores errno). Calls made by the collector's own work (t_own_work) and calls
// nested in another recording on the same thread (the program's signal handler calling write() while the thread is
// inside read()) are not recorded. pthread_mutex_lock tries the lock first and times only a lock that has to wait.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/clock.h"
#include "base/reentry.h"

namespace gprof::collector::sampling {

// THE list of traced calls: X(enumerator, "name as the program calls it").
#define GPROF_OSRT_CALLS(X)                                                                                        \
    X(Read, "read") X(Write, "write") X(Pread, "pread") X(Pwrite, "pwrite") X(Readv, "readv") X(Writev, "writev")  \
    X(Recv, "recv") X(Recvfrom, "recvfrom") X(Recvmsg, "recvmsg") X(Send, "send") X(Sendto, "sendto")             \
    X(Sendmsg, "sendmsg") X(Poll, "poll") X(Ppoll, "ppoll") X(Select, "select") X(Pselect, "pselect")             \
    X(EpollWait, "epoll_wait") X(EpollPwait, "epoll_pwait") X(Nanosleep, "nanosleep")                             \
    X(ClockNanosleep, "clock_nanosleep") X(Usleep, "usleep") X(Sleep, "sleep") X(Open, "open")                    \
    X(Openat, "openat") X(Fsync, "fsync") X(Fdatasync, "fdatasync") X(Accept, "accept") X(Accept4, "accept4")     \
    X(Connect, "connect") X(MutexLock, "pthread_mutex_lock") X(CondWait, "pthread_cond_wait")                     \
    X(CondTimedwait, "pthread_cond_timedwait") X(CondClockwait, "pthread_cond_clockwait")                         \
    X(RwlockRdlock, "pthread_rwlock_rdlock") X(RwlockWrlock, "pthread_rwlock_wrlock") X(Join, "pthread_join")     \
    X(SemWait, "sem_wait") X(SemTimedwait, "sem_timedwait") X(SemClockwait, "sem_clockwait")                      \
    X(Waitpid, "waitpid") X(Wait, "wait") X(Flock, "flock")

enum class OsrtCall : uint16_t {
#define GPROF_OSRT_ENUM(e, name) e,
    GPROF_OSRT_CALLS(GPROF_OSRT_ENUM)
#undef GPROF_OSRT_ENUM
    Count
};
const char* osrt_call_name(OsrtCall call) noexcept;

struct OsrtOptions {
    bool on = true;
    uint64_t threshold_ns = 1000;
    uint64_t backtrace_threshold_ns = 80000;
};
void start_osrt(const OsrtOptions& options) noexcept;
void stop_osrt() noexcept;

namespace osrt_detail {
extern std::atomic<bool> g_on;
extern std::atomic<uint64_t> g_threshold_ns;
// The slow path: a call that lasted at least the threshold.
void record(OsrtCall call, uint64_t start, uint64_t end) noexcept;
}  // namespace osrt_detail

// Times one interposed call (on the interposer's stack).
class OsrtTimer {
public:
    OsrtTimer() noexcept : on_(osrt_detail::g_on.load(std::memory_order_relaxed) && !t_own_work) {
        if (on_) start_ = clock::now();
    }
    // After the real call: records it when it lasted at least the threshold. errno is left as the call set it.
    void done(OsrtCall call) noexcept {
        if (!on_) return;
        uint64_t end = clock::now();
        if (end - start_ >= osrt_detail::g_threshold_ns.load(std::memory_order_relaxed))
            osrt_detail::record(call, start_, end);
    }

private:
    bool on_;
    uint64_t start_ = 0;
};

struct OsrtCounts {
    uint64_t recorded = 0;    // calls written into the rings
    uint64_t with_stack = 0;  // of those, with their call site
    uint64_t nested = 0;      // not recorded: made while the thread was recording another (a signal handler's call)
    uint64_t no_slot = 0;     // not recorded: the thread table was full
};
OsrtCounts osrt_counts() noexcept;
void reset_osrt_after_fork() noexcept;

}  // namespace gprof::collector::sampling
