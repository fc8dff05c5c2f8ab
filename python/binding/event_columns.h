// The records of one kind of a run, column by column: what gprof_run.events() returns. No Python in here (module.cpp
// wraps it), so the columns can be built with the GIL released.
//
// The columns of a kind are its field list (formats/include/gprof/trace/fields.h) in on-disk order, preceded by the
// process ("pid", "host"): a field added there, or a record kind added to GPROF_TRACE_RECORD_KINDS, shows up here
// with no change. Times are ns on the run axis, as every report prints them (report/model: ns since the earliest
// session start); an end time of 0 in the trace (an NVTX range that never ended) is -1. String fields and
// enumerations are categorical: int32 codes into a list of texts (kernel names demangled, as the reports show them).
// Records are selected as gprof-report selects them (report/model's stream_run with a Filter: the CUDA runtime's own
// driver calls left out unless asked for), so sums over these columns equal the reports' figures.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/model.h"

namespace gprof::python {

// Element types a column can have: the record member's own type, int64 for times, int32 codes for categories.
using ColumnData = std::variant<std::vector<int64_t>, std::vector<uint64_t>, std::vector<int32_t>,
                                std::vector<uint32_t>, std::vector<uint16_t>, std::vector<uint8_t>>;

struct Column {
    std::string name;
    ColumnData data;
    bool categorical = false;         // data holds int32 codes into `categories`
    std::vector<std::string> categories;
};

struct EventTable {
    std::string kind;                 // the record kind's display name ("kernel", "api_call", ...)
    size_t rows = 0;
    std::vector<Column> columns;
    std::vector<std::string> warnings;  // unreadable or damaged traces, dropped records: gprof-report's warnings
    size_t traces = 0;                  // trace files read
};

struct EventQuery {
    std::vector<std::filesystem::path> inputs;  // run directories and/or trace files (gprof-report's inputs)
    std::string kind;                           // a record kind name: event_kinds()
    std::optional<std::vector<std::string>> columns;  // only these (in this order); nullopt: every column
    report::Filter filter;
};

// The names events() accepts: every data record kind of the trace format, in the order of the kind list.
std::vector<std::string> event_kinds();

// Column names of a kind, in order (for messages and docs). Throws std::invalid_argument for an unknown kind.
std::vector<std::string> event_columns(std::string_view kind);

// Reads the run. Throws std::invalid_argument for an unknown kind or column, std::runtime_error for an input that
// does not exist or holds no trace; damaged traces are read as far as they are intact and said in `warnings`.
EventTable read_events(const EventQuery& query);

}  // namespace gprof::python
