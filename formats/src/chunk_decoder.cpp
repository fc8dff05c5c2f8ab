// ChunkDecoder: one chunk's records, for decoding on several threads (reader.h). The record step is record_step.h's,
// the one TraceReader::next() takes: the same framing checks, generated dispatch, string-id bound and messages.
#include "gprof/trace/reader.h"
#include "record_step.h"

namespace gprof::trace {

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
    record_step::ChunkWalk walk{p_, end_, prev_time_, prev_correlation_, begin_, begin_offset_, end_offset_};
    record_step::Tally<ChunkTally> tally{tally_, tally_.unknown_kind_counts, tally_.warnings};
    record_step::StringDefinition def;
    switch (record_step::next_in_chunk(walk, tally, out, def)) {
        case record_step::Found::Record: return true;
        case record_step::Found::String:  // surfaced: the caller keeps the definitions
            string_id_ = def.id;
            string_text_ = def.text;
            return true;
        case record_step::Found::EndOfChunk: break;
    }
    return false;
}

}  // namespace gprof::trace
