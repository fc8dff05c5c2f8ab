// TraceReader: streams the records of one trace file. Runs outside the target only (it may throw).
//
// A damaged file never crashes it: a cut tail, a corrupt chunk or records of unknown kinds each produce a
// warning naming what was lost, and reading goes on with what is intact. Only a file that is not a gprof-run
// trace at all, or one of a newer major format version, is refused (TraceError, with a message to print).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gprof/trace/header.h"
#include "gprof/trace/records.h"

namespace gprof::trace {

class TraceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One decoded record. Only the member named by `kind` is valid. Backtrace frames live inside the record.
struct Record {
    RecordKind kind;
    union {
#define GPROF_TRACE_RECORD_MEMBER(Kind, number, member, name) Kind member;
        GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_RECORD_MEMBER)
#undef GPROF_TRACE_RECORD_MEMBER
    };
    Record() : kind(RecordKind::End), end() {}
};

// Calls f with the valid member of r (as `const Kernel&`, `const Memcpy&`, ...). An overload set that misses a
// kind does not compile, so a visitor handles every kind or says (with a generic overload) what it ignores.
template <class F> decltype(auto) visit(const Record& r, F&& f) {
    switch (r.kind) {
#define GPROF_TRACE_VISIT(Kind, number, member, name) \
    case RecordKind::Kind: return f(r.member);
        GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_VISIT)
#undef GPROF_TRACE_VISIT
        default: break;
    }
    return f(r.end);  // unreachable: the reader surfaces data kinds only
}

struct ReadStats {
    uint64_t file_bytes = 0;
    uint64_t chunks = 0;            // intact chunks read
    uint64_t records = 0;           // records surfaced (String records excluded)
    uint64_t corrupt_chunks = 0;    // failed their checksum or framing, skipped
    uint64_t corrupt_bytes = 0;     // bytes skipped with them
    uint64_t truncated_bytes = 0;   // bytes of an incomplete final chunk
    uint64_t unknown_records = 0;   // kinds newer than this reader, skipped
    uint64_t malformed_records = 0; // inside an intact chunk, but not decodable: skipped
    uint64_t out_of_range_records = 0;  // named a string id no file could have defined there: skipped
    bool has_end = false;           // the End record was found: the writer finished cleanly

    // Something in the file was lost to damage (what gprof-report's exit status 2 says); records of unknown kinds
    // (a newer writer) and a missing End are not damage.
    bool damaged() const {
        return truncated_bytes || corrupt_bytes || corrupt_chunks || malformed_records || out_of_range_records;
    }
};

// ----- chunk by chunk: decoding on several threads ---------------------------------------------------------
// Every intact chunk decodes on its own (delta bases restart in each chunk; strings are defined before their first
// use in file order), so one thread can walk a file with TraceReader::next_chunk_span() while others decode the
// chunks with ChunkDecoder. finish_chunks() takes what the decoders counted, summed in file order, so stats() and
// warnings() end as next() leaves them (decoders' own warnings, only ever for writer bugs, come after the walk's).
// Use either next() or the chunk interface on a reader, not both.
struct ChunkSpan {
    const uint8_t* begin = nullptr;  // the chunk's records (the first chunk's start after the header)
    const uint8_t* end = nullptr;
    uint64_t end_offset = 0;         // file offset just past the chunk, for messages
    uint64_t begin_offset = 0;       // file offset of `begin`: bounds the string ids a record there may name
};

// What decoding found besides the records; add() appends a later part of the file.
struct ChunkTally {
    uint64_t records = 0;  // surfaced records (String records excluded)
    uint64_t unknown_records = 0;
    uint64_t unknown_kind_counts[256] = {};
    bool has_end = false;
    uint64_t malformed_records = 0;     // as TraceReader's ReadStats: skipped, and the trace counts as damaged
    uint64_t out_of_range_records = 0;
    std::vector<std::string> warnings;
    void add(const ChunkTally& later);
};

// Decodes one chunk. next() yields what TraceReader::next() would, and also the string definitions: out.kind ==
// RecordKind::String, with string_id() and string_text() (pointing into the reader's mapping: valid while the
// reader lives) describing it. Thread-safe across decoders of different chunks.
class ChunkDecoder {
public:
    ChunkDecoder(const ChunkSpan& span, ChunkTally& tally)
        : p_(span.begin), begin_(span.begin), end_(span.end), begin_offset_(span.begin_offset),
          end_offset_(span.end_offset), tally_(tally) {}
    bool next(Record& out);
    StringId string_id() const { return string_id_; }
    std::string_view string_text() const { return string_text_; }

private:
    const uint8_t* p_;
    const uint8_t* begin_;
    const uint8_t* end_;
    uint64_t begin_offset_;
    uint64_t end_offset_;
    ChunkTally& tally_;
    Timestamp prev_time_ = 0;
    uint32_t prev_correlation_ = 0;
    StringId string_id_ = 0;
    std::string_view string_text_;
};

class TraceReader {
public:
    // Opens and validates the preamble and header. Throws TraceError with a message fit for the user.
    explicit TraceReader(const std::string& path);
    // Reads a trace held in memory; `name` stands for the path in messages.
    TraceReader(const std::string& name, std::vector<uint8_t> bytes);
    ~TraceReader();
    TraceReader(const TraceReader&) = delete;
    TraceReader& operator=(const TraceReader&) = delete;

    const std::string& path() const { return path_; }
    const TraceHeader& header() const { return header_; }

    // Next record in file order; false at the end of the file (warnings() is then complete).
    bool next(Record& out);

    // Chunk by chunk (see ChunkSpan): the next intact chunk in file order, damage skipped and warned about as by
    // next(); false at the end of the file. Then finish_chunks() with the decoders' tallies summed in file order.
    bool next_chunk_span(ChunkSpan& out);
    void finish_chunks(const ChunkTally& tally);

    // The text of an interned string; "<string #N>" for an id whose definition was lost. The view lives as long
    // as the reader.
    std::string_view string(StringId id) const;
    // One more than the largest string id defined so far. A record next() returns may name a larger id (its
    // definition was lost), but never one above kMaxStringId or a quarter of the file's size (a record naming one
    // is skipped with a warning), so a table indexed by string ids is bounded by the file's size.
    size_t string_count() const { return strings_.size(); }
    static constexpr uint64_t kMaxStringId = uint64_t{1} << 30;

    const ReadStats& stats() const { return stats_; }
    // Bytes of the file walked so far (for progress: stats().file_bytes is the whole).
    uint64_t bytes_read() const { return offset_; }
    // Human-readable notes on anything lost or skipped, in the order found.
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    void parse_start();
    bool next_chunk();
    bool resync(size_t from);
    void finish_file();
    void warn(std::string message);
    void release_behind(size_t upto);

    std::string path_;
    TraceHeader header_;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    bool mapped_ = false;
    size_t released_ = 0;          // mapped bytes before this were handed back (MADV_DONTNEED)
    std::vector<uint8_t> owned_;   // when the file could not be mapped
    size_t offset_ = 0;            // next chunk starts here
    const uint8_t* cursor_ = nullptr;  // inside the current chunk's payload
    const uint8_t* chunk_end_ = nullptr;
    uint64_t chunk_index_ = 0;
    Timestamp prev_time_ = 0;
    uint32_t prev_correlation_ = 0;
    bool done_ = false;
    std::vector<std::string_view> strings_;  // index = string id; views of the file's bytes
    mutable std::string placeholder_;
    ReadStats stats_;
    std::vector<std::string> warnings_;
    uint64_t unknown_kind_counts_[256] = {};
};

}  // namespace gprof::trace
