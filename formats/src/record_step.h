// The record step of a chunk's payload, one copy for TraceReader::next() (file order, one thread) and
// ChunkDecoder::next() (one chunk, any thread): the framing checks, the generated dispatch, the string-id bound,
// what is counted and the messages for what is skipped. Internal to formats/.
//
// Hot path: it runs once per record of every report, so the step itself is forced inline into both callers (as the
// decoder's field readers in codec.h are); only the messages, built for damage alone, are out of line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec.h"
#include "gprof/trace/names.h"
#include "gprof/trace/reader.h"

namespace gprof::trace::record_step {

// Detailed warnings of one kind of damage, then only the totals (TraceReader::finish_file()), so a shredded file
// does not flood stderr. TraceReader::next() counts them per file; each ChunkDecoder's batch per its ChunkTally.
inline constexpr uint64_t kMaxDetailedWarnings = 20;

// The writer numbers strings 1, 2, 3, ... in the order it defines them (a process's forked child starts again at
// 1), and every definition takes at least 4 bytes (kind, length, id, one byte of text; empty strings are id 0).
// So no id defined or used at file offset `at` can exceed at / 4, damaged chunks before it or not (their bytes
// are still counted). Capped at 2^30, which also keeps `id + 1` from wrapping anywhere downstream.
inline uint64_t max_string_id(uint64_t at) {
    return at / 4 < TraceReader::kMaxStringId ? at / 4 : TraceReader::kMaxStringId;
}

// Where a walk through one chunk's records stands: references to the caller's own fields (the step keeps no state
// of its own, and nothing is copied on the way in: this is built once per record).
struct ChunkWalk {
    const uint8_t*& p;               // the next record
    const uint8_t* const& end;       // the end of the chunk's payload
    Timestamp& prev_time;            // delta bases, restarting at every chunk
    uint32_t& prev_correlation;
    const uint8_t* const& origin;    // a byte whose file offset is origin_offset: gives each record's file offset
    const uint64_t& origin_offset;
    const uint64_t& end_offset;      // the file offset just past the chunk, for messages
};

// Where the step counts what it finds: ReadStats or ChunkTally (their counters are named alike), the records of
// each unknown kind, and the warnings. Taken by value and never by address, so it costs nothing on the hot path.
template <class Counts>
struct Tally {
    Counts& counts;
    uint64_t (&unknown_kind_counts)[256];
    std::vector<std::string>& warnings;
};

// A String record that defined an id within the bound: its text is a view of the chunk's bytes.
struct StringDefinition {
    StringId id = 0;
    std::string_view text;
};

enum class Found : uint8_t {
    Record,      // `out` holds a data record
    String,      // a string definition (out.kind == RecordKind::String)
    EndOfChunk,  // nothing more in this chunk (the rest of it skipped when its framing broke)
};

// ----- what is skipped, and said (cold) ----------------------------------------------------------------------

template <class Counts>
[[gnu::cold, gnu::noinline]] void skip_broken_framing(Counts& counts, std::vector<std::string>& warnings,
                                                      uint64_t end_offset) {
    if (++counts.malformed_records <= kMaxDetailedWarnings)
        warnings.push_back("malformed record in the chunk ending at offset " + std::to_string(end_offset) +
                           ": the rest of that chunk was skipped");
}

template <class Counts>
[[gnu::cold, gnu::noinline]] void skip_malformed(Counts& counts, std::vector<std::string>& warnings, RecordKind kind,
                                                 uint64_t end_offset) {
    if (++counts.malformed_records <= kMaxDetailedWarnings)
        warnings.push_back("malformed " + std::string(record_kind_name(kind)) + " record in the chunk ending at offset " +
                             std::to_string(end_offset) + ": skipped");
}

template <class Counts>
[[gnu::cold, gnu::noinline]] void skip_out_of_range(Counts& counts, std::vector<std::string>& warnings, RecordKind kind,
                                                    uint64_t id, uint64_t at) {
    if (++counts.out_of_range_records <= kMaxDetailedWarnings)
        warnings.push_back(std::string(record_kind_name(kind)) + " record at offset " + std::to_string(at) +
                           " names string id " + std::to_string(id) + ", beyond the " +
                           std::to_string(max_string_id(at)) + " a file can have defined by there: skipped");
}

// ----- the step ------------------------------------------------------------------------------------------------

// Decodes records from w.p until one surfaces: a data record into `out`, or a string definition into `def`.
// Headers (read by the reader's constructor), records of unknown kinds, malformed ones and those naming string ids
// beyond the bound are skipped and counted in `t`. A record's delta bases move only when it surfaces.
template <class Counts>
[[gnu::always_inline]] inline Found next_in_chunk(const ChunkWalk& w, Tally<Counts> t, Record& out, StringDefinition& def) {
    using namespace codec;
    while (w.p < w.end) {
        uint8_t kind = *w.p;
        uint64_t len = 0;
        bool ok = true;
        const uint8_t* body = get_varint(w.p + 1, w.end, len, ok);
        if (!ok || len > static_cast<uint64_t>(w.end - body)) {
            // Only a writer bug gets here: the chunk passed its checksum.
            skip_broken_framing(t.counts, t.warnings, w.end_offset);
            w.p = w.end;
            return Found::EndOfChunk;
        }
        const uint8_t* body_end = body + len;
        w.p = body_end;
        DeltaState state{w.prev_time, w.prev_correlation};
        Decoder d(body, body_end, state);
        const uint64_t at = w.origin_offset + static_cast<uint64_t>(body - w.origin);
        const uint64_t max_id = max_string_id(at);
        d.limit_string_ids(max_id);
        switch (static_cast<RecordKind>(kind)) {
#define GPROF_DECODE(Kind, number, member, name) \
    case RecordKind::Kind:                        \
        out.kind = RecordKind::Kind;              \
        out.member = Kind{};                      \
        describe(d, out.member);                  \
        break;
            GPROF_TRACE_RECORD_KINDS(GPROF_DECODE)
#undef GPROF_DECODE
            case RecordKind::String: {
                uint64_t id = 0;
                bool k = true;
                const uint8_t* text = get_varint(body, body_end, id, k);
                if (!k || id == 0) continue;  // no id to define: ignored
                if (id > max_id) {
                    skip_out_of_range(t.counts, t.warnings, RecordKind::String, id, at);
                    continue;
                }
                out.kind = RecordKind::String;
                def.id = static_cast<StringId>(id);
                def.text = std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(body_end - text));
                return Found::String;
            }
            case RecordKind::Header:  // only the first record of the file; read by the reader's constructor
                continue;
            default:
                ++t.unknown_kind_counts[kind];
                ++t.counts.unknown_records;
                continue;
        }
        if (!d.ok()) {
            skip_malformed(t.counts, t.warnings, out.kind, w.end_offset);
            continue;
        }
        if (uint64_t bad = d.string_id_out_of_range()) {
            skip_out_of_range(t.counts, t.warnings, out.kind, bad, at);
            continue;
        }
        w.prev_time = state.prev_time;
        w.prev_correlation = state.prev_correlation;
        ++t.counts.records;
        if (out.kind == RecordKind::End) t.counts.has_end = true;
        return Found::Record;
    }
    return Found::EndOfChunk;
}

}  // namespace gprof::trace::record_step
