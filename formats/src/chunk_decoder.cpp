// ChunkDecoder: one chunk's records, for decoding on several threads (reader.h). The record loop mirrors
// TraceReader::next(): the same framing checks, the same generated dispatch, the same messages.
#include "codec.h"
#include "gprof/trace/names.h"
#include "gprof/trace/reader.h"

namespace gprof::trace {

using namespace codec;

void ChunkTally::add(const ChunkTally& later) {
    records += later.records;
    unknown_records += later.unknown_records;
    for (int k = 0; k < 256; ++k) unknown_kind_counts[k] += later.unknown_kind_counts[k];
    has_end = has_end || later.has_end;
    malformed_records += later.malformed_records;
    out_of_range_records += later.out_of_range_records;
    warnings.insert(warnings.end(), later.warnings.begin(), later.warnings.end());
}

bool ChunkDecoder::next(Record& out) {
    while (p_ < end_) {
        uint8_t kind = *p_;
        uint64_t len = 0;
        bool ok = true;
        const uint8_t* body = get_varint(p_ + 1, end_, len, ok);
        if (!ok || len > static_cast<uint64_t>(end_ - body)) {
            // Only a writer bug gets here: the chunk passed its checksum.
            ++tally_.malformed_records;
            tally_.warnings.push_back("malformed record in the chunk ending at offset " + std::to_string(end_offset_) +
                                      ": the rest of that chunk was skipped");
            p_ = end_;
            return false;
        }
        const uint8_t* body_end = body + len;
        p_ = body_end;
        DeltaState state{prev_time_, prev_correlation_};
        Decoder d(body, body_end, state);
        // The same bound as TraceReader::max_string_id: no id defined or used at file offset `at` exceeds at / 4.
        const uint64_t at = begin_offset_ + static_cast<uint64_t>(body - begin_);
        const uint64_t max_id = at / 4 < TraceReader::kMaxStringId ? at / 4 : TraceReader::kMaxStringId;
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
                if (!k || id == 0 || id > (1u << 30)) continue;  // as TraceReader::next(): ignored
                out.kind = RecordKind::String;
                string_id_ = static_cast<StringId>(id);
                string_text_ = std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(body_end - text));
                return true;
            }
            case RecordKind::Header:  // only the first record of the file; read by the reader's constructor
                continue;
            default:
                ++tally_.unknown_kind_counts[kind];
                ++tally_.unknown_records;
                continue;
        }
        if (!d.ok()) {
            ++tally_.malformed_records;
            tally_.warnings.push_back("malformed " + std::string(record_kind_name(out.kind)) +
                                      " record in the chunk ending at offset " + std::to_string(end_offset_) + ": skipped");
            continue;
        }
        if (uint64_t bad = d.string_id_out_of_range()) {
            // Counted always, told for the first few of a batch (a hostile file may hold millions).
            if (++tally_.out_of_range_records <= 20)
                tally_.warnings.push_back(std::string(record_kind_name(out.kind)) + " record at offset " +
                                      std::to_string(at) + " names string id " + std::to_string(bad) + ", beyond the " +
                                      std::to_string(max_id) + " a file can have defined by there: skipped");
            continue;
        }
        prev_time_ = state.prev_time;
        prev_correlation_ = state.prev_correlation;
        ++tally_.records;
        if (out.kind == RecordKind::End) tally_.has_end = true;
        return true;
    }
    return false;
}

}  // namespace gprof::trace
