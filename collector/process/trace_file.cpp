#include "process/trace_file.h"

#include <fcntl.h>

#include <cerrno>

#include "base/descriptors.h"

namespace gprof::collector {

void TraceFile::adopt(int fd, std::string path) noexcept {
    path_ = std::move(path);
    first_fd_ = descriptors::place_high(fd);
    slot_ = descriptors::adopt(first_fd_);
}

int TraceFile::open_again() noexcept {
    int fd = descriptors::open_high(path_.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW);
    if (fd < 0) return -1;
    if (!descriptors::same_file(slot_, fd)) {  // another file under the name now: not ours to append to
        descriptors::close_own(fd);
        errno = ESTALE;
        return -1;
    }
    return fd;
}

int TraceFile::acquire() noexcept {
    if (slot_ < 0) return first_fd_;
    int fd = descriptors::use(slot_);
    if (fd >= 0 && descriptors::same_file(slot_, fd)) return fd;
    // Gone or taken: closed behind our back (a raw system call), or dup2()ed over with no number to step aside to.
    // The number is the program's now; the trace is opened again by name, appending.
    int fresh = open_again();
    if (fresh < 0) return -1;  // errno: why (the writer counts what it cannot write, and says so)
    if (!descriptors::replace(slot_, fd, fresh)) {
        // Opened again meanwhile by a signal handler's flush: use that one.
        descriptors::close_own(fresh);
        fd = descriptors::use(slot_);
        descriptors::done(slot_);  // one use stays counted: the caller's release() ends it
        return fd >= 0 ? fd : -1;
    }
    reopened_.fetch_add(1, std::memory_order_relaxed);
    return fresh;
}

void TraceFile::release() noexcept {
    if (slot_ >= 0) descriptors::done(slot_);
}

void TraceFile::close() noexcept {
    if (slot_ >= 0) descriptors::release(slot_);
    else if (first_fd_ >= 0) descriptors::close_own(first_fd_);
    slot_ = -1;
    first_fd_ = -1;
}

}  // namespace gprof::collector
