// Creating what a run writes without ever following a planted symbolic link or silently replacing anything.
//
// Only the last component of a path is guarded: its parent directories are the user's to choose (a scratch
// directory reached through a link is normal). The run directory gets mode 0700 and files 0600, whatever the umask.
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

// A new file, O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600; missing parents are created. An existing regular file is an
// error unless `force` (then it is replaced); a symbolic link is always refused. Returns the fd (O_CLOEXEC) or -1.
int create_private_file(const std::filesystem::path& path, bool force, std::string& error);

// For a file written later by someone else (the timeline): checks now, before the app starts, that `path` is not a
// symbolic link and does not exist (or, with `force`, is a regular file to replace: `exists` is set), and creates
// missing parents.
bool check_output_file(const std::filesystem::path& path, bool force, bool& exists, std::string& error);

// Writes `content` to <dir>/<name> as a new 0600 file (O_EXCL|O_NOFOLLOW).
bool write_new_file(const std::filesystem::path& dir, const std::string& name, const std::string& content,
                    std::string& error);

}  // namespace gprof::launcher
