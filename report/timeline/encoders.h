// The encoders of the timeline model (model.h): each writes the whole model to a byte sink, in large blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "timeline/model.h"

namespace gprof::report::timeline {

using ByteSink = std::function<void(const char* data, size_t size)>;

struct EncodeStats {
    uint64_t events = 0;  // Chrome: trace events (metadata and flow events included); Perfetto: trace packets
    uint64_t bytes = 0;   // bytes handed to the sink
};

// Chrome Trace Event JSON, object form (json.cpp).
EncodeStats write_chrome_json(const TimelineModel& model, const ByteSink& sink);

// Perfetto's native protobuf trace (perfetto.cpp).
EncodeStats write_perfetto(const TimelineModel& model, const ByteSink& sink);

}  // namespace gprof::report::timeline
