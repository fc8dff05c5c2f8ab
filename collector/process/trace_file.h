// This process's trace file, as the trace writer's guarded descriptor (trace::DescriptorGuard).
//
// The descriptor sits high, close-on-exec, in the table of the collector's descriptors (base/descriptors.h), so the
// program's close, close_range, closefrom, dup2 and dup3 leave it alone. What interposition cannot see (a raw system
// call, a collector that was not LD_PRELOADed) is caught before each write: acquire() checks that the descriptor
// still holds the trace (st_dev and st_ino, one fstat per chunk; cost in docs/performance.md) and, when the number is
// gone or holds another file, opens the same trace again by its absolute name, appending, so nothing written before
// is lost and nothing of ours goes into a file of the program's. The window left: a raw close, and the program's
// open of the same number, between that check and the write() right after it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "gprof/trace/writer.h"

namespace gprof::collector {

class TraceFile final : public trace::DescriptorGuard {
public:
    // Takes `fd`, the trace created at `path` (absolute: the program may chdir): placed high and entered in the table.
    void adopt(int fd, std::string path) noexcept;
    int descriptor() const noexcept { return first_fd_; }  // for TraceWriter::open (the guard is asked from then on)
    const std::string& path() const noexcept { return path_; }

    int acquire() noexcept override;
    void release() noexcept override;
    void close() noexcept override;

    // Times the trace was opened again after the program took its descriptor.
    uint32_t reopened() const noexcept { return reopened_.load(std::memory_order_relaxed); }

private:
    int open_again() noexcept;

    int slot_ = -1;      // in the table; -1: the table was full, first_fd_ is used unguarded
    int first_fd_ = -1;
    std::string path_;
    std::atomic<uint32_t> reopened_{0};
};

}  // namespace gprof::collector
