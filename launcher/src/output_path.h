// Naming of what one run writes: the %-patterns of nvprof/nsys, and the default run directory name.
#pragma once

#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gprof::launcher {

struct PatternContext {
    long pid = 0;                                         // %p: gprof-run's own pid (one per srun/mpirun rank)
    std::string host;                                     // %h
    std::function<const char*(const char*)> getenv;       // %q{VAR}
};

// The context of this process: getpid(), gethostname(), ::getenv.
PatternContext current_pattern_context();

// Expands %p, %h, %q{VAR} and %%. An unset VAR, an unknown %x, a lone % or an unclosed %q{ is an error (nullopt,
// with the reason in `error`): silently expanding to "" would put every rank of a job into the same directory.
std::optional<std::string> expand_pattern(std::string_view pattern, const PatternContext& ctx, std::string& error);

// "gprof-<app>-YYYYmmdd-HHMMSS" in local time; the app's base name with anything outside [A-Za-z0-9._+-]
// replaced by '_'.
std::string default_run_dir_name(std::string_view app, std::time_t when);

}  // namespace gprof::launcher
