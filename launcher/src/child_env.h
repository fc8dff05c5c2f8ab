// The environment the app starts with: the user's own, plus the injection variables and the collector's
// configuration (gprof/env/variables.h is the contract).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "options.h"

namespace gprof::launcher {

struct EnvChange {
    std::string name;
    std::optional<std::string> value;  // nullopt: removed from the app's environment
};

// `lib` first, then whatever the user already preloads, kept as it was. `lib` is not added twice.
std::string prepend_preload(const std::string& lib, const char* existing);

// Every change for one run. The variables that a gprof-run option controls are always set or removed, so a value
// left in the user's shell (or by an outer gprof-run) never silently changes a run; the tuning variables without an
// option (GPROF_CUPTI_LIB, GPROF_FLUSH_MS, GPROF_BUFFER_MB) pass through untouched. GPROF_ROOT_PID is not here: it
// is the app's pid, known only after fork (see supervise.h).
std::vector<EnvChange> collector_environment(const LaunchOptions& options, const std::filesystem::path& collector,
                                             const std::filesystem::path& run_dir, const std::string& run_id,
                                             const char* existing_preload);

// `base` ("NAME=VALUE" entries) with `changes` applied; order kept, changed entries replaced in place.
std::vector<std::string> apply_changes(char* const* base, const std::vector<EnvChange>& changes);

// 32 hex digits from the kernel's random source: identifies one gprof-run invocation in every trace it produced.
std::string new_run_id();

}  // namespace gprof::launcher
