#include "base/descriptors.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gprof::collector::descriptors {

namespace {

struct Slot {
    std::atomic<int> fd{-1};  // -1: free; kTaken; else the number of ours
    std::atomic<int> users{0};
    std::atomic<bool> claimed{false};
    dev_t dev = 0;  // written before fd is published, read after
    ino_t ino = 0;
};

Slot g_slots[kSlots];
std::atomic<int64_t> g_owner{0};  // the pid whose table this is: a vfork child shares the memory, not the table
std::atomic<uint64_t> g_refused{0}, g_moved{0}, g_taken{0};

using CloseFn = int (*)(int);
using ClosefromFn = void (*)(int);
CloseFn g_close = nullptr;
ClosefromFn g_closefrom = nullptr;

int64_t self() { return static_cast<int64_t>(::syscall(SYS_getpid)); }

int real_close(int fd) {
    if (g_close) return g_close(fd);  // glibc's: a cancellation point, as the program expects
    return static_cast<int>(::syscall(SYS_close, fd));
}

// The soft limit, and whether it can be raised by one for a moment (the hard limit leaves room, and the number it
// frees is not past kHighestPlace).
struct Limit {
    rlimit now{};
    bool ok = false;
    bool room_above = false;
    int top() const {  // numbers below this are the program's (or as high as we go)
        if (!ok || now.rlim_cur == RLIM_INFINITY || now.rlim_cur > static_cast<rlim_t>(kHighestPlace)) return kHighestPlace;
        return static_cast<int>(now.rlim_cur);
    }
};

Limit read_limit() {
    Limit l;
    l.ok = ::getrlimit(RLIMIT_NOFILE, &l.now) == 0;
    l.room_above = l.ok && l.now.rlim_cur != RLIM_INFINITY && l.now.rlim_cur <= static_cast<rlim_t>(kHighestPlace) &&
                   (l.now.rlim_max == RLIM_INFINITY || l.now.rlim_cur < l.now.rlim_max);
    return l;
}

// Raises the soft limit by one while alive (when it can), so that the number equal to the old soft limit, which the
// program can never be given, is free for us.
class RoomAbove {
public:
    explicit RoomAbove(const Limit& l) : limit_(l) {
        if (!l.room_above) return;
        rlimit raised{l.now.rlim_cur + 1, l.now.rlim_max};
        raised_ = ::setrlimit(RLIMIT_NOFILE, &raised) == 0;
    }
    ~RoomAbove() {
        if (raised_) ::setrlimit(RLIMIT_NOFILE, &limit_.now);  // back as the program had it
    }
    bool raised() const { return raised_; }

private:
    const Limit& limit_;
    bool raised_ = false;
};

// A copy of `fd` out of the program's way, or -1. `fd` stays open.
int high_copy(int fd, const Limit& l, bool raised) {
    if (raised) {
        int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(l.now.rlim_cur));
        if (moved >= 0) return moved;
    }
    int below = l.top() - 1;
    if (below <= fd) return -1;  // already as high as it can go
    return ::fcntl(fd, F_DUPFD_CLOEXEC, below);  // the highest number if free, else the lowest free above it
}

int moved_high(int fd, const Limit& l, bool raised) {
    int moved = high_copy(fd, l, raised);
    if (moved < 0) {
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        return fd;
    }
    close_own(fd);
    return moved;
}

// The slot of `fd` when it is a descriptor of ours in this process, else -1. A number whose file is not ours any
// more is let go here: the program has it.
int find(int fd) {
    if (fd < 0) return -1;
    int slot = -1;
    for (int i = 0; i < kSlots; ++i) {
        if (g_slots[i].fd.load(std::memory_order_acquire) == fd) {
            slot = i;
            break;
        }
    }
    if (slot < 0 || g_owner.load(std::memory_order_acquire) != self()) return -1;
    Slot& s = g_slots[slot];
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_dev == s.dev && st.st_ino == s.ino) return slot;
    int expected = fd;
    if (s.fd.compare_exchange_strong(expected, kTaken)) g_taken.fetch_add(1, std::memory_order_relaxed);
    return -1;
}

// The program is about to dup2 onto the number of `slot`: our descriptor steps aside (or, with nowhere to go, is
// given up), after any read or write in progress on it. Returns the number it had.
int step_aside(int slot) {
    Slot& s = g_slots[slot];
    int old = s.fd.load(std::memory_order_acquire);
    Limit l = read_limit();
    int moved = high_copy(old, l, false);
    if (moved < 0) moved = ::fcntl(old, F_DUPFD_CLOEXEC, old + 1);  // any number above it
    s.fd.store(moved >= 0 ? moved : kTaken, std::memory_order_seq_cst);
    (moved >= 0 ? g_moved : g_taken).fetch_add(1, std::memory_order_relaxed);
    while (s.users.load(std::memory_order_seq_cst) != 0) ::sched_yield();  // a chunk being written on `old`
    return old;
}

template <class Call> int onto_ours(int fd, int onto, Call call) {
    if (find(fd) >= 0) {
        g_refused.fetch_add(1, std::memory_order_relaxed);
        errno = EBADF;  // without the collector this number is not open
        return -1;
    }
    int slot = fd == onto ? -1 : find(onto);
    if (slot < 0) return call();
    int old = step_aside(slot);
    int rc = call();
    if (rc < 0) {
        int err = errno;
        close_own(old);  // not replaced: this copy of ours would stay open at a number the program thinks free
        errno = err;
    }
    return rc;
}

}  // namespace

int close_own(int fd) noexcept { return static_cast<int>(::syscall(SYS_close, fd)); }

int place_high(int fd) noexcept {
    if (fd < 0) return fd;
    Limit l = read_limit();
    RoomAbove room(l);
    return moved_high(fd, l, room.raised());
}

int open_high(const char* path, int flags, mode_t mode) noexcept {
    Limit l = read_limit();
    RoomAbove room(l);  // the open itself succeeds when every number below the limit is taken
    int fd = ::open(path, flags | O_CLOEXEC, mode);
    if (fd < 0) return fd;
    return moved_high(fd, l, room.raised());
}

void create_high(void (*make)(void*), void* ctx) noexcept {
    Limit l = read_limit();
    // Where the made descriptors go: just above the soft limit when the hard limit leaves room for three more (the
    // trace's number is the soft limit itself), else the highest free numbers below the place (top()).
    bool above = l.room_above && (l.now.rlim_max == RLIM_INFINITY || l.now.rlim_cur + 3 <= l.now.rlim_max);
    rlimit raised{l.now.rlim_cur + 3, l.now.rlim_max};
    above = above && ::setrlimit(RLIMIT_NOFILE, &raised) == 0;
    int fill_below = above ? static_cast<int>(l.now.rlim_cur) : l.top() - 3;
    int held[kHighestPlace];
    int n = 0;
    int base = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (base >= 0 && base < fill_below) {
        held[n++] = base;
        // Each dup takes the lowest free number: the holes below fill_below, in order.
        while (n < kHighestPlace) {
            int fd = ::fcntl(base, F_DUPFD_CLOEXEC, 0);
            if (fd < 0) break;  // EMFILE: every number the limit allows is taken
            if (fd >= fill_below) {
                close_own(fd);
                break;
            }
            held[n++] = fd;
        }
    } else if (base >= 0) {
        close_own(base);
    }
    make(ctx);
    for (int i = 0; i < n; ++i) close_own(held[i]);
    if (above) ::setrlimit(RLIMIT_NOFILE, &l.now);  // back as the program had it
}

int adopt(int fd) noexcept {
    if (fd < 0) return -1;
    struct stat st {};
    if (::fstat(fd, &st) != 0) return -1;
    for (int i = 0; i < kSlots; ++i) {
        Slot& s = g_slots[i];
        bool expected = false;
        if (!s.claimed.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) continue;
        s.dev = st.st_dev;
        s.ino = st.st_ino;
        s.users.store(0, std::memory_order_relaxed);
        g_owner.store(self(), std::memory_order_release);
        s.fd.store(fd, std::memory_order_release);
        return i;
    }
    return -1;
}

int use(int slot) noexcept {
    Slot& s = g_slots[slot];
    s.users.fetch_add(1, std::memory_order_seq_cst);
    return s.fd.load(std::memory_order_seq_cst);  // after the count: a step_aside sees us, or we see its move
}

void done(int slot) noexcept { g_slots[slot].users.fetch_sub(1, std::memory_order_seq_cst); }

bool replace(int slot, int expected, int fd) noexcept {
    return g_slots[slot].fd.compare_exchange_strong(expected, fd, std::memory_order_seq_cst);
}

bool same_file(int slot, int fd) noexcept {
    struct stat st {};
    return fd >= 0 && ::fstat(fd, &st) == 0 && st.st_dev == g_slots[slot].dev && st.st_ino == g_slots[slot].ino;
}

void release(int slot) noexcept {
    if (slot < 0 || slot >= kSlots) return;
    Slot& s = g_slots[slot];
    int fd = s.fd.exchange(-1, std::memory_order_acq_rel);
    if (fd >= 0) close_own(fd);
    s.claimed.store(false, std::memory_order_release);
}

void reset_after_fork() noexcept {
    for (Slot& s : g_slots) {
        int fd = s.fd.exchange(-1, std::memory_order_relaxed);
        if (fd >= 0) close_own(fd);
        s.users.store(0, std::memory_order_relaxed);
        s.claimed.store(false, std::memory_order_relaxed);
    }
    g_owner.store(0, std::memory_order_release);
}

void resolve_real_functions() noexcept {
    if (!g_close) g_close = reinterpret_cast<CloseFn>(::dlsym(RTLD_NEXT, "close"));
    if (!g_closefrom) g_closefrom = reinterpret_cast<ClosefromFn>(::dlsym(RTLD_NEXT, "closefrom"));
}

Figures figures() noexcept {
    return Figures{g_refused.load(std::memory_order_relaxed), g_moved.load(std::memory_order_relaxed),
                   g_taken.load(std::memory_order_relaxed)};
}

// ---- the program's calls ----

int program_close(int fd) noexcept {
    if (find(fd) >= 0) {
        g_refused.fetch_add(1, std::memory_order_relaxed);
        errno = EBADF;  // without the collector this number is not open
        return -1;
    }
    return real_close(fd);
}

int program_close_range(unsigned first, unsigned last, int flags) noexcept {
    // Ours inside the range, in order (the table is small: an insertion sort).
    unsigned ours[kSlots];
    int n = 0;
    if (first <= last) {
        for (Slot& s : g_slots) {
            int fd = s.fd.load(std::memory_order_acquire);
            if (fd < 0 || static_cast<unsigned>(fd) < first || static_cast<unsigned>(fd) > last || find(fd) < 0) continue;
            int i = n++;
            for (; i > 0 && ours[i - 1] > static_cast<unsigned>(fd); --i) ours[i] = ours[i - 1];
            ours[i] = static_cast<unsigned>(fd);
        }
    }
    if (n == 0) return static_cast<int>(::syscall(SYS_close_range, first, last, flags));
    g_refused.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    unsigned from = first;
    for (int i = 0; i < n; ++i) {
        if (ours[i] > from && ::syscall(SYS_close_range, from, ours[i] - 1, flags) != 0) return -1;
        from = ours[i] + 1;
    }
    if (ours[n - 1] < last && ::syscall(SYS_close_range, from, last, flags) != 0) return -1;
    return 0;
}

void program_closefrom(int lowest) noexcept {
    int saved = errno;
    if (lowest >= 0 && program_close_range(static_cast<unsigned>(lowest), ~0U, 0) == 0) {
        errno = saved;
        return;
    }
    // No close_range in this kernel (before 5.9): glibc's own way. It closes ours too; the writer's check before its
    // next write notices and opens the trace again.
    if (g_closefrom) g_closefrom(lowest);
    errno = saved;
}

int program_dup(int fd) noexcept {
    if (find(fd) >= 0) {
        g_refused.fetch_add(1, std::memory_order_relaxed);
        errno = EBADF;
        return -1;
    }
    return static_cast<int>(::syscall(SYS_dup, fd));
}

int program_dup2(int fd, int onto) noexcept {
    return onto_ours(fd, onto, [&] { return static_cast<int>(::syscall(SYS_dup2, fd, onto)); });
}

int program_dup3(int fd, int onto, int flags) noexcept {
    return onto_ours(fd, onto, [&] { return static_cast<int>(::syscall(SYS_dup3, fd, onto, flags)); });
}

}  // namespace gprof::collector::descriptors
