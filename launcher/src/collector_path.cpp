#include "collector_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gprof::launcher {
namespace fs = std::filesystem;

fs::path collector_path_for(const fs::path& exe) {
    return (exe.parent_path() / GPROF_COLLECTOR_RELPATH).lexically_normal();
}

std::optional<fs::path> find_collector(std::string& error) {
    std::error_code ec;
    // /proc/self/exe is the resolved file even when gprof-run was started through a symbolic link or PATH.
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        error = "cannot locate gprof-run's own executable (/proc/self/exe): " + ec.message();
        return std::nullopt;
    }
    fs::path lib = collector_path_for(exe);
    struct stat st {};
    if (::stat(lib.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(lib.c_str(), R_OK) != 0) {
        error = "the collector library is missing: expected " + lib.string() + " next to " + exe.string() +
                " (" + std::strerror(errno ? errno : ENOENT) +
                "); install or copy gprof-run together with its lib/gprof-run/ directory";
        return std::nullopt;
    }
    // The dynamic loader splits LD_PRELOAD at spaces and colons: such a path cannot be preloaded.
    if (lib.string().find_first_of(" :") != std::string::npos) {
        error = "gprof-run is installed under a path containing a space or ':' (" + lib.string() +
                "), which LD_PRELOAD cannot carry; move it elsewhere";
        return std::nullopt;
    }
    return lib;
}

}  // namespace gprof::launcher
