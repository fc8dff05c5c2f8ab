// gprof-run --check [app [args]]: is this machine ready to profile? The CUDA driver and its CUDA version, every CUPTI
// the collector's search finds (cupti_loader/search.h, the same list in the same order: version, path, whether this driver
// runs it or why not, which one a run would use), NVTX injection, and what a run would record. Exit 0 when ready,
// 1 with the reason otherwise. Nothing is run and nothing is written: the app, when given, only names the Python
// environment whose CUPTI the search would consider, as in a run.
#pragma once

#include <ostream>

#include "options.h"

namespace gprof::launcher {

struct CheckResult {
    bool ready = false;
    std::string reason;  // why not, when not ready (one line)
};

// Prints the report on `out` and returns the verdict. `collector_error`: find_collector's reason when the collector
// library was not found (empty when it was).
CheckResult check_machine(const LaunchOptions& options, const std::string& collector, const std::string& collector_error,
                          std::ostream& out);

}  // namespace gprof::launcher
