// TraceWriter: encodes records into self-framed chunks and appends them to a file descriptor.
//
// Built to run inside the profiled process: no exceptions, no locks, allocation only when a string is first
// interned or a record is larger than a chunk. It is NOT thread-safe: the collector funnels records to one
// writer thread. The one exception is flush_from_signal_handler(), which may run on any thread at any time.
//
// Every chunk is written with a single write(2) on an O_APPEND descriptor, so a chunk is either wholly in the
// file or (kill during write) a tail that the reader discards with a warning.
//
// A full disk keeps what fits and counts what does not: before a chunk is written, the space for it and for a
// tail reserve (kTailReserveBytes) is allocated beyond the end of the file (fallocate FALLOC_FL_KEEP_SIZE). A chunk
// that does not fit is not written and its records are counted as lost; the reserve stays free, so finish() can
// always write what was lost (a Dropped record of DropSource::WriteError, a Writer Status naming the error) and the
// End record. A write that fails part way is cut off again (ftruncate), so the file stays a sequence of whole
// chunks. Where the filesystem cannot preallocate, finish() makes room for its chunk by giving up the last data
// chunk (counted too). A write that would pass RLIMIT_FSIZE is not made (it would send SIGXFSZ to the program).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gprof/trace/header.h"
#include "gprof/trace/records.h"

namespace gprof::trace {

class StringInterner;

// The descriptor of a TraceWriter, when something else may close or replace it under the writer: inside a profiled
// program, the program itself (collector/process/trace_file.h checks the file's identity and opens it again). Both
// calls are async-signal-safe: the writer's signal-handler flush uses them too.
class DescriptorGuard {
public:
    // The descriptor to use for one write, checked to still be the trace (or opened again): -1 with errno if none.
    virtual int acquire() noexcept = 0;
    virtual void release() noexcept = 0;  // the write is over
    virtual void close() noexcept = 0;    // the writer is done with the file

protected:
    ~DescriptorGuard() = default;
};

class TraceWriter {
public:
    struct Options {
        size_t chunk_bytes = 256 * 1024;  // payload capacity of one chunk
        // Null: the descriptor given to open() is the writer's alone. Else every write, truncation and allocation
        // goes through the guard (which owns the descriptor; the one given to open() is ignored).
        DescriptorGuard* guard = nullptr;
    };

    TraceWriter();
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    // Takes ownership of fd (closed by close() / the destructor). Writes the preamble and the header chunk.
    // Returns false on failure; error() then holds the errno.
    bool open(int fd, const HeaderInfo& header, const Options& options);
    bool open(int fd, const HeaderInfo& header) { return open(fd, header, Options{}); }

    // The id of s, emitting its String record the first time it is seen. Strings longer than 64 KiB are cut.
    StringId intern(const char* s, size_t len);
    StringId intern(const char* s) { return intern(s ? s : "", s ? std::strlen(s) : 0); }

    // Appends one record of any kind of GPROF_TRACE_RECORD_KINDS but End (finish() writes that one).
    template <RecordStruct R>
        requires(RecordKindOf<R>::value != RecordKind::End)
    void add(const R& r) {
        if constexpr (RecordKindOf<R>::value == RecordKind::Dropped) records_dropped_ += r.count;
        add_record(r);
    }

    // Seals the open chunk (if it holds anything) and writes it. False once the descriptor has failed.
    bool flush();
    // Writes the End record, flushes and closes the descriptor. The trace is then complete. ended_by_signal: the
    // signal that is ending the process (End.signal), 0 for an exit or exec. Records lost to write errors are said
    // first (a Dropped record of WriteError, a Writer Status with the error and the count).
    bool finish(Timestamp timestamp, uint32_t ended_by_signal = 0);
    // Flushes and closes without an End record (used by a forked child that abandons its parent's writer).
    void close();

    // Async-signal-safe: writes the records committed to the open chunk with one write(2). Call it from a
    // fatal-signal handler, then let the process die; the writer must not be used afterwards.
    void flush_from_signal_handler() noexcept;

    // True when the open file `fd` is a trace of process `pid` holding nothing but its preamble and header
    // chunk: its writer never flushed a record (a forked child that exec'ed before its first flush).
    static bool holds_only_header(int fd, int64_t pid);

    // Room kept allocated beyond the file's end for finish()'s last chunk.
    static constexpr size_t kTailReserveBytes = 64 * 1024;

    bool is_open() const { return fd_ >= 0; }
    bool failed() const { return error_ != 0; }
    int error() const { return error_; }  // the first write error (ENOSPC, EDQUOT, EFBIG, EIO, ...), 0 when none
    bool descriptor_lost() const { return descriptor_lost_; }  // ... was the guard's: it had no descriptor to give
    uint64_t records_written() const { return records_written_; }  // excludes Header/String/End
    uint64_t records_lost() const { return records_lost_; }        // to write errors
    uint64_t bytes_lost() const { return bytes_lost_; }            // encoded bytes of the chunks those were in
    uint64_t records_dropped_noted() const { return records_dropped_; }
    uint64_t bytes_written() const { return bytes_written_; }

private:
    struct FileUse;  // the descriptor for one operation (the guard's, or fd_)
    template <RecordStruct R> void add_record(const R& r);  // defined for every kind in writer.cpp
    void begin_chunk();
    // Seals the open chunk (header and CRC) and writes it; `final`: finish()'s chunk, which may use the tail
    // reserve. False (records counted as lost by the caller) when it did not fit or the write failed.
    bool write_open_chunk(bool final);
    bool write_chunk(const uint8_t* data, size_t size, bool final);
    bool make_room(int fd, size_t bytes);  // allocates [size, size + bytes + tail reserve) beyond the end of the file
    bool reserve(size_t bytes);
    void add_end_records(Timestamp timestamp, uint32_t ended_by_signal);
    void define_string(StringId id, const char* s, size_t len);  // a String record into the open chunk
    void define_lost_strings();

    int fd_ = -1;  // >= 0 while open (with a guard: the guard's descriptor at open, which may change since)
    int error_ = 0;
    bool descriptor_lost_ = false;  // error_ is the guard's: the program took the descriptor
    Options options_;
    uint8_t* buffer_ = nullptr;   // chunk header + payload
    size_t capacity_ = 0;         // payload capacity
    size_t used_ = 0;             // payload bytes
    uint32_t count_ = 0;          // records in the open chunk
    uint32_t chunk_strings_ = 0;  // ... of which String records (not counted as lost with the chunk)
    std::vector<StringId> chunk_string_ids_;  // the strings the open chunk defines
    std::vector<StringId> last_chunk_string_ids_;  // ... and the last data chunk written
    std::vector<StringId> undefined_;         // strings whose defining chunk was lost: defined again before use
    // (count << 32 | payload bytes) of complete records in the open chunk; kSealed while write_chunk runs.
    std::atomic<uint64_t> committed_{0};
    Timestamp prev_time_ = 0;     // delta base, reset per chunk so every chunk decodes on its own
    uint32_t prev_correlation_ = 0;
    uint64_t records_written_ = 0;
    uint64_t records_lost_ = 0;
    uint64_t records_lost_reported_ = 0;  // already written to the trace as a WriteError Dropped record
    uint64_t bytes_lost_ = 0;
    uint64_t records_dropped_ = 0;
    uint64_t bytes_written_ = 0;        // == the file's size: nothing else writes to it
    uint64_t allocated_to_ = 0;         // the file's blocks are allocated up to here (fallocate KEEP_SIZE)
    bool can_preallocate_ = true;       // false once the filesystem says it cannot (EOPNOTSUPP)
    uint64_t last_chunk_offset_ = 0;    // where the last data chunk begins, and its records: given up by finish()
    uint32_t last_chunk_records_ = 0;   // when only that makes room for the End (no preallocation)
    StringInterner* strings_ = nullptr;
};

}  // namespace gprof::trace
