// One way in for records. Every reader of traces in the report library (stream_run, and load_run on it, which
// fills the full model; aggregate_run's decoders, which fold the summaries) lets a decoded record in through a
// RecordGate and hands what passes to a sink with trace::visit: one handler per kind of GPROF_TRACE_RECORD_KINDS
// (gprof/trace/records.h). A sink that misses a kind does not compile, so a new record kind is met by every sink
// (the model's StoreRecord, the aggregate's BatchSink and FoldSink), each saying what it does with it.
#pragma once

#include <cstdint>

#include "gprof/trace/header.h"
#include "gprof/trace/reader.h"
#include "gprof/trace/runtime_driver_calls.h"
#include "model/model.h"

namespace gprof::report {

// What every reader lets in: not the driver calls the CUDA runtime makes itself (unless asked for, or the trace kept
// them on request: counted in hidden_driver_calls), and only what the Filter selects (`filter` null: everything).
class RecordGate {
public:
    RecordGate(bool hide_runtime_driver_calls, RecordFilter* filter)
        : hide_runtime_driver_calls_(hide_runtime_driver_calls), filter_(filter) {}
    // Whether a trace with this header read with this selection leaves the runtime's own driver calls out.
    static bool hides_runtime_driver_calls(const Filter& selection, const trace::TraceHeader& header) {
        return !selection.nested_driver_calls && !(header.features & trace::kFeatureNestedDriverCalls);
    }

    bool admit(const trace::Record& r) {
        if (hide_runtime_driver_calls_ && r.kind == trace::RecordKind::ApiCall &&
            trace::is_runtime_internal_driver_call(r.api)) {
            ++hidden_driver_calls_;
            return false;
        }
        return !filter_ || filter_->keep(r);
    }
    uint64_t hidden_driver_calls() const { return hidden_driver_calls_; }

private:
    bool hide_runtime_driver_calls_;
    RecordFilter* filter_;
    uint64_t hidden_driver_calls_ = 0;
};

// Hands `r` to the sink's handler for its kind.
template <class Sink> decltype(auto) deliver(const trace::Record& r, Sink&& sink) {
    return trace::visit(r, sink);
}

}  // namespace gprof::report
