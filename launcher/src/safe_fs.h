// Creating the run directory without ever following a planted symbolic link or silently replacing anything.
//
// Only the last component of a path is guarded: its parent directories are the user's to choose (a scratch
// directory reached through a link is normal). The run directory gets mode 0700, whatever the umask.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gprof::launcher {

// Written into every run directory gprof-run creates. --force deletes only directories that carry it (or are
// empty), so a mistyped `-o ~ --force` cannot wipe a home directory.
inline constexpr const char* kRunMarker = "gprof-run.info";

// Creates `dir` (and missing parents). With `unique_suffix` (the default name), an existing `dir` is skipped for
// dir-1, dir-2, ...: ranks started in the same second each get their own. Otherwise an existing `dir` is an error,
// or with `force` is deleted first if it is a gprof-run directory. A symbolic link at `dir` is always refused.
// Returns the directory created, absolute.
std::optional<std::filesystem::path> create_run_dir(const std::filesystem::path& dir, bool force, bool unique_suffix,
                                                    std::string& error);

// Files (gprof-run.info, --log-file, the outputs) are written the one way every output is: report/output/output_file.h.

}  // namespace gprof::launcher
