// The aggregate's keys as the reports list them, shared by the summary tables and the summary text (reports/ only).
#pragma once

#include <string>
#include <vector>

#include "model/aggregate.h"

namespace gprof::report {

// A key's name as shown: kernels demangled.
std::string display_name(const KeyData& k);
// Memory copies and sets, by total time (ties by name).
std::vector<const KeyData*> memops(const Aggregate& agg);
// GPU activities (kernels, memory ops and graph launches that stand for their work), sorted by time: nvprof's
// section.
std::vector<const KeyData*> gpu_activities(const Aggregate& agg);

}  // namespace gprof::report
