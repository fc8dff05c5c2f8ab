// The OS-runtime calls (nsys's osrt), interposed when the collector is LD_PRELOADed: each calls the C library's own
// function between an OsrtTimer and its done() (collector/sampling/osrt.h), so a call that blocked for at least the
// threshold is recorded, with its call site past the backtrace threshold. The result and errno are the real ones.
//
// The real functions are found with dlsym(RTLD_NEXT) when the library loads (and on first use, should a library's
// constructor call one earlier). pthread_cond_wait and pthread_cond_timedwait are asked for by their current
// version (GLIBC_2.3.2), as a program linked against them names it. Fortified callers (_FORTIFY_SOURCE: __read_chk,
// __recv_chk, ...) are interposed too; calls glibc makes inside itself (fread's read) are not seen, as in nsys.
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>

#include "sampling/osrt.h"

namespace {

namespace s = gprof::collector::sampling;
using s::OsrtCall;

void* find(const char* name, const char* version = nullptr) {
    void* p = version ? ::dlvsym(RTLD_NEXT, name, version) : nullptr;
    return p ? p : ::dlsym(RTLD_NEXT, name);
}

// One real function: resolved once (a relaxed atomic: resolving twice is harmless).
template <class F> struct Real {
    const char* name;
    const char* version = nullptr;
    std::atomic<void*> fn{nullptr};
    F get() {
        void* p = fn.load(std::memory_order_relaxed);
        if (!p) {
            p = find(name, version);
            fn.store(p, std::memory_order_relaxed);
        }
        return reinterpret_cast<F>(p);
    }
};

// Runs the real call between the timer's start and done(); a function that cannot be found fails with ENOSYS.
template <class F, class... A> auto timed(Real<F>& real, OsrtCall call, A... args) {
    F fn = real.get();
    using R = decltype(fn(args...));
    if (!fn) {
        errno = ENOSYS;
        return static_cast<R>(-1);
    }
    s::OsrtTimer timer;
    R r = fn(args...);
    timer.done(call);
    return r;
}

#define REAL(var, type, name) Real<type> var{name};

REAL(r_read, ssize_t (*)(int, void*, size_t), "read")
REAL(r_read_chk, ssize_t (*)(int, void*, size_t, size_t), "__read_chk")
REAL(r_write, ssize_t (*)(int, const void*, size_t), "write")
REAL(r_pread, ssize_t (*)(int, void*, size_t, off_t), "pread")
REAL(r_pread64, ssize_t (*)(int, void*, size_t, off64_t), "pread64")
REAL(r_pread_chk, ssize_t (*)(int, void*, size_t, off_t, size_t), "__pread_chk")
REAL(r_pread64_chk, ssize_t (*)(int, void*, size_t, off64_t, size_t), "__pread64_chk")
REAL(r_pwrite, ssize_t (*)(int, const void*, size_t, off_t), "pwrite")
REAL(r_pwrite64, ssize_t (*)(int, const void*, size_t, off64_t), "pwrite64")
REAL(r_readv, ssize_t (*)(int, const struct iovec*, int), "readv")
REAL(r_writev, ssize_t (*)(int, const struct iovec*, int), "writev")
REAL(r_recv, ssize_t (*)(int, void*, size_t, int), "recv")
REAL(r_recv_chk, ssize_t (*)(int, void*, size_t, size_t, int), "__recv_chk")
REAL(r_recvfrom, ssize_t (*)(int, void*, size_t, int, struct sockaddr*, socklen_t*), "recvfrom")
REAL(r_recvfrom_chk, ssize_t (*)(int, void*, size_t, size_t, int, struct sockaddr*, socklen_t*), "__recvfrom_chk")
REAL(r_recvmsg, ssize_t (*)(int, struct msghdr*, int), "recvmsg")
REAL(r_send, ssize_t (*)(int, const void*, size_t, int), "send")
REAL(r_sendto, ssize_t (*)(int, const void*, size_t, int, const struct sockaddr*, socklen_t), "sendto")
REAL(r_sendmsg, ssize_t (*)(int, const struct msghdr*, int), "sendmsg")
REAL(r_poll, int (*)(struct pollfd*, nfds_t, int), "poll")
REAL(r_poll_chk, int (*)(struct pollfd*, nfds_t, int, size_t), "__poll_chk")
REAL(r_ppoll, int (*)(struct pollfd*, nfds_t, const struct timespec*, const sigset_t*), "ppoll")
REAL(r_select, int (*)(int, fd_set*, fd_set*, fd_set*, struct timeval*), "select")
REAL(r_pselect, int (*)(int, fd_set*, fd_set*, fd_set*, const struct timespec*, const sigset_t*), "pselect")
REAL(r_epoll_wait, int (*)(int, struct epoll_event*, int, int), "epoll_wait")
REAL(r_epoll_pwait, int (*)(int, struct epoll_event*, int, int, const sigset_t*), "epoll_pwait")
REAL(r_nanosleep, int (*)(const struct timespec*, struct timespec*), "nanosleep")
REAL(r_clock_nanosleep, int (*)(clockid_t, int, const struct timespec*, struct timespec*), "clock_nanosleep")
REAL(r_usleep, int (*)(useconds_t), "usleep")
REAL(r_sleep, unsigned (*)(unsigned), "sleep")
REAL(r_open, int (*)(const char*, int, ...), "open")
REAL(r_open64, int (*)(const char*, int, ...), "open64")
REAL(r_openat, int (*)(int, const char*, int, ...), "openat")
REAL(r_openat64, int (*)(int, const char*, int, ...), "openat64")
REAL(r_fsync, int (*)(int), "fsync")
REAL(r_fdatasync, int (*)(int), "fdatasync")
REAL(r_accept, int (*)(int, struct sockaddr*, socklen_t*), "accept")
REAL(r_accept4, int (*)(int, struct sockaddr*, socklen_t*, int), "accept4")
REAL(r_connect, int (*)(int, const struct sockaddr*, socklen_t), "connect")
REAL(r_mutex_lock, int (*)(pthread_mutex_t*), "pthread_mutex_lock")
REAL(r_mutex_trylock, int (*)(pthread_mutex_t*), "pthread_mutex_trylock")
REAL(r_rwlock_rdlock, int (*)(pthread_rwlock_t*), "pthread_rwlock_rdlock")
REAL(r_rwlock_tryrdlock, int (*)(pthread_rwlock_t*), "pthread_rwlock_tryrdlock")
REAL(r_rwlock_wrlock, int (*)(pthread_rwlock_t*), "pthread_rwlock_wrlock")
REAL(r_rwlock_trywrlock, int (*)(pthread_rwlock_t*), "pthread_rwlock_trywrlock")
REAL(r_join, int (*)(pthread_t, void**), "pthread_join")
REAL(r_sem_wait, int (*)(sem_t*), "sem_wait")
REAL(r_sem_trywait, int (*)(sem_t*), "sem_trywait")
REAL(r_sem_timedwait, int (*)(sem_t*, const struct timespec*), "sem_timedwait")
REAL(r_sem_clockwait, int (*)(sem_t*, clockid_t, const struct timespec*), "sem_clockwait")
REAL(r_waitpid, pid_t (*)(pid_t, int*, int), "waitpid")
REAL(r_wait, pid_t (*)(int*), "wait")
REAL(r_flock, int (*)(int, int), "flock")
Real<int (*)(pthread_cond_t*, pthread_mutex_t*)> r_cond_wait{"pthread_cond_wait", "GLIBC_2.3.2"};
Real<int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*)> r_cond_timedwait{"pthread_cond_timedwait",
                                                                                          "GLIBC_2.3.2"};
REAL(r_cond_clockwait, int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*),
     "pthread_cond_clockwait")

#undef REAL

__attribute__((constructor(101))) void resolve_osrt_functions() {
    r_read.get(); r_write.get(); r_mutex_lock.get(); r_mutex_trylock.get(); r_cond_wait.get(); r_cond_timedwait.get();
    r_poll.get(); r_nanosleep.get(); r_clock_nanosleep.get(); r_open.get(); r_open64.get(); r_openat.get();
}

// open's mode argument: present when the flags create a file.
bool takes_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

// The mode argument of a variadic open whose last named parameter is `last` (read in that function itself: a
// va_list cannot be started elsewhere). A GNU statement expression.
#define GPROF_OPEN_MODE(last, flags)                                        \
    ({                                                                      \
        mode_t mode_ = 0;                                                   \
        if (takes_mode(flags)) {                                            \
            va_list ap_;                                                    \
            va_start(ap_, last);                                            \
            mode_ = static_cast<mode_t>(va_arg(ap_, int));                  \
            va_end(ap_);                                                    \
        }                                                                   \
        mode_;                                                              \
    })

// A lock that is free is taken at the cost of one try (no clock read); only a wait is timed.
template <class Lock, class Try, class Obj> int lock_timed(Real<Lock>& lock, Real<Try>& try_lock, OsrtCall call, Obj* o) {
    Try t = try_lock.get();
    if (t) {
        int r = t(o);
        if (r != EBUSY) return r;
    }
    return timed(lock, call, o);
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT ssize_t read(int fd, void* buf, size_t n) { return timed(r_read, OsrtCall::Read, fd, buf, n); }
EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
    return timed(r_read_chk, OsrtCall::Read, fd, buf, n, buflen);
}
EXPORT ssize_t write(int fd, const void* buf, size_t n) { return timed(r_write, OsrtCall::Write, fd, buf, n); }
EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) { return timed(r_pread, OsrtCall::Pread, fd, buf, n, off); }
EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
    return timed(r_pread64, OsrtCall::Pread, fd, buf, n, off);
}
EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
    return timed(r_pread_chk, OsrtCall::Pread, fd, buf, n, off, buflen);
}
EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off, size_t buflen) {
    return timed(r_pread64_chk, OsrtCall::Pread, fd, buf, n, off, buflen);
}
EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
    return timed(r_pwrite, OsrtCall::Pwrite, fd, buf, n, off);
}
EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
    return timed(r_pwrite64, OsrtCall::Pwrite, fd, buf, n, off);
}
EXPORT ssize_t readv(int fd, const struct iovec* iov, int n) { return timed(r_readv, OsrtCall::Readv, fd, iov, n); }
EXPORT ssize_t writev(int fd, const struct iovec* iov, int n) { return timed(r_writev, OsrtCall::Writev, fd, iov, n); }
EXPORT ssize_t recv(int fd, void* buf, size_t n, int flags) { return timed(r_recv, OsrtCall::Recv, fd, buf, n, flags); }
EXPORT ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags) {
    return timed(r_recv_chk, OsrtCall::Recv, fd, buf, n, buflen, flags);
}
EXPORT ssize_t recvfrom(int fd, void* buf, size_t n, int flags, struct sockaddr* from, socklen_t* len) {
    return timed(r_recvfrom, OsrtCall::Recvfrom, fd, buf, n, flags, from, len);
}
EXPORT ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags, struct sockaddr* from,
                              socklen_t* len) {
    return timed(r_recvfrom_chk, OsrtCall::Recvfrom, fd, buf, n, buflen, flags, from, len);
}
EXPORT ssize_t recvmsg(int fd, struct msghdr* msg, int flags) {
    return timed(r_recvmsg, OsrtCall::Recvmsg, fd, msg, flags);
}
EXPORT ssize_t send(int fd, const void* buf, size_t n, int flags) {
    return timed(r_send, OsrtCall::Send, fd, buf, n, flags);
}
EXPORT ssize_t sendto(int fd, const void* buf, size_t n, int flags, const struct sockaddr* to, socklen_t len) {
    return timed(r_sendto, OsrtCall::Sendto, fd, buf, n, flags, to, len);
}
EXPORT ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
    return timed(r_sendmsg, OsrtCall::Sendmsg, fd, msg, flags);
}
EXPORT int poll(struct pollfd* fds, nfds_t n, int timeout) { return timed(r_poll, OsrtCall::Poll, fds, n, timeout); }
EXPORT int __poll_chk(struct pollfd* fds, nfds_t n, int timeout, size_t fdslen) {
    return timed(r_poll_chk, OsrtCall::Poll, fds, n, timeout, fdslen);
}
EXPORT int ppoll(struct pollfd* fds, nfds_t n, const struct timespec* t, const sigset_t* mask) {
    return timed(r_ppoll, OsrtCall::Ppoll, fds, n, t, mask);
}
EXPORT int select(int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* t) {
    return timed(r_select, OsrtCall::Select, n, r, w, e, t);
}
EXPORT int pselect(int n, fd_set* r, fd_set* w, fd_set* e, const struct timespec* t, const sigset_t* mask) {
    return timed(r_pselect, OsrtCall::Pselect, n, r, w, e, t, mask);
}
EXPORT int epoll_wait(int ep, struct epoll_event* ev, int max, int timeout) {
    return timed(r_epoll_wait, OsrtCall::EpollWait, ep, ev, max, timeout);
}
EXPORT int epoll_pwait(int ep, struct epoll_event* ev, int max, int timeout, const sigset_t* mask) {
    return timed(r_epoll_pwait, OsrtCall::EpollPwait, ep, ev, max, timeout, mask);
}
EXPORT int nanosleep(const struct timespec* req, struct timespec* rem) {
    return timed(r_nanosleep, OsrtCall::Nanosleep, req, rem);
}
EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
    return timed(r_clock_nanosleep, OsrtCall::ClockNanosleep, clock, flags, req, rem);
}
EXPORT int usleep(useconds_t us) { return timed(r_usleep, OsrtCall::Usleep, us); }
EXPORT unsigned sleep(unsigned s) { return timed(r_sleep, OsrtCall::Sleep, s); }
EXPORT int open(const char* path, int flags, ...) {
    return timed(r_open, OsrtCall::Open, path, flags, GPROF_OPEN_MODE(flags, flags));
}
EXPORT int open64(const char* path, int flags, ...) {
    return timed(r_open64, OsrtCall::Open, path, flags, GPROF_OPEN_MODE(flags, flags));
}
EXPORT int openat(int dir, const char* path, int flags, ...) {
    return timed(r_openat, OsrtCall::Openat, dir, path, flags, GPROF_OPEN_MODE(flags, flags));
}
EXPORT int openat64(int dir, const char* path, int flags, ...) {
    return timed(r_openat64, OsrtCall::Openat, dir, path, flags, GPROF_OPEN_MODE(flags, flags));
}
EXPORT int fsync(int fd) { return timed(r_fsync, OsrtCall::Fsync, fd); }
EXPORT int fdatasync(int fd) { return timed(r_fdatasync, OsrtCall::Fdatasync, fd); }
EXPORT int accept(int fd, struct sockaddr* a, socklen_t* len) { return timed(r_accept, OsrtCall::Accept, fd, a, len); }
EXPORT int accept4(int fd, struct sockaddr* a, socklen_t* len, int flags) {
    return timed(r_accept4, OsrtCall::Accept4, fd, a, len, flags);
}
EXPORT int connect(int fd, const struct sockaddr* a, socklen_t len) {
    return timed(r_connect, OsrtCall::Connect, fd, a, len);
}
EXPORT int pthread_mutex_lock(pthread_mutex_t* m) { return lock_timed(r_mutex_lock, r_mutex_trylock, OsrtCall::MutexLock, m); }
EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
    return lock_timed(r_rwlock_rdlock, r_rwlock_tryrdlock, OsrtCall::RwlockRdlock, l);
}
EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
    return lock_timed(r_rwlock_wrlock, r_rwlock_trywrlock, OsrtCall::RwlockWrlock, l);
}
EXPORT int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
    return timed(r_cond_wait, OsrtCall::CondWait, c, m);
}
EXPORT int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
    return timed(r_cond_timedwait, OsrtCall::CondTimedwait, c, m, t);
}
EXPORT int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock, const struct timespec* t) {
    return timed(r_cond_clockwait, OsrtCall::CondClockwait, c, m, clock, t);
}
EXPORT int pthread_join(pthread_t t, void** ret) { return timed(r_join, OsrtCall::Join, t, ret); }
EXPORT int sem_wait(sem_t* sem) {
    // A semaphore that can be taken at once costs one try.
    if (auto t = r_sem_trywait.get()) {
        int saved = errno;
        if (t(sem) == 0) return 0;
        errno = saved;
    }
    return timed(r_sem_wait, OsrtCall::SemWait, sem);
}
EXPORT int sem_timedwait(sem_t* sem, const struct timespec* t) {
    return timed(r_sem_timedwait, OsrtCall::SemTimedwait, sem, t);
}
EXPORT int sem_clockwait(sem_t* sem, clockid_t clock, const struct timespec* t) {
    return timed(r_sem_clockwait, OsrtCall::SemClockwait, sem, clock, t);
}
EXPORT pid_t waitpid(pid_t pid, int* status, int options) {
    return timed(r_waitpid, OsrtCall::Waitpid, pid, status, options);
}
EXPORT pid_t wait(int* status) { return timed(r_wait, OsrtCall::Wait, status); }
EXPORT int flock(int fd, int op) { return timed(r_flock, OsrtCall::Flock, fd, op); }
