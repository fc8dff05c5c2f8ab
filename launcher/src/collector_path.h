// Finding the injected library: always relative to gprof-run's own executable (bin/ -> ../lib/gprof-run/), so one
// binary works from the build tree, an install prefix and a relocated copy, with nothing configured.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gprof::launcher {

// Where the collector must be for an executable at `exe`.
std::filesystem::path collector_path_for(const std::filesystem::path& exe);

// The collector of this gprof-run (via /proc/self/exe), checked to be a readable regular file and usable in
// LD_PRELOAD (no space or ':' in its path). nullopt with the reason otherwise.
std::optional<std::filesystem::path> find_collector(std::string& error);

}  // namespace gprof::launcher
