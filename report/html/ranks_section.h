// report.html's ranks section: a distributed job's ranks compared (analyze/ranks.h's view, drawn).
#pragma once

#include <string>

#include "analyze/ranks.h"

namespace gprof::report::html {

// The section (id "ranks"): the straggler line and notes, a sorted bar chart of every rank's median work per step,
// a step x rank heat map of work over each step's median, and the ranks of the most work with their hosts.
std::string ranks_section(const RankView& view);

}  // namespace gprof::report::html
