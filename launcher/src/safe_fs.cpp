#include "safe_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gprof::launcher {
namespace fs = std::filesystem;
namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

bool make_parents(const fs::path& path, std::string& error) {
    fs::path parent = path.parent_path();
    if (parent.empty()) return true;
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
        error = "cannot create directory " + quoted(parent) + ": " + ec.message();
        return false;
    }
    return true;
}

// Empty, or made by gprof-run.
bool is_replaceable_run_dir(const fs::path& dir) {
    std::error_code ec;
    if (fs::is_empty(dir, ec) && !ec) return true;
    struct stat st {};
    return ::lstat((dir / kRunMarker).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::optional<fs::path> create_run_dir(const fs::path& requested, bool force, bool unique_suffix,
                                       std::string& error) {
    std::error_code ec;
    fs::path dir = fs::absolute(requested, ec).lexically_normal();
    if (ec) {
        error = "cannot resolve " + quoted(requested) + ": " + ec.message();
        return std::nullopt;
    }
    if (dir.has_filename() == false) dir = dir.parent_path();  // "run/" names the directory "run"
    if (!make_parents(dir, error)) return std::nullopt;

    bool replaced = false;
    for (int attempt = 0; attempt < 1000; ++attempt) {
        fs::path path = dir;
        if (unique_suffix && attempt > 0) path += "-" + std::to_string(attempt);
        if (::mkdir(path.c_str(), 0700) == 0) {
            // Re-open what we just made without following links, and pin its mode against the umask.
            int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            struct stat st {};
            if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
                ::fchmod(fd, 0700) != 0) {
                error = "the run directory " + quoted(path) + " changed under gprof-run while it was being created";
                if (fd >= 0) ::close(fd);
                return std::nullopt;
            }
            ::close(fd);
            return path;
        }
        if (errno != EEXIST) {
            error = "cannot create the run directory " + quoted(path) + ": " + std::strerror(errno);
            return std::nullopt;
        }
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
            error = quoted(path) + " is a symbolic link; gprof-run never writes through one (remove it, or choose "
                                   "another -o)";
            return std::nullopt;
        }
        if (unique_suffix) continue;
        if (!force) {
            error = quoted(path) + " already exists; choose another -o, or add --force to replace it";
            return std::nullopt;
        }
        if (replaced) {
            error = quoted(path) + " was created again by someone else while gprof-run replaced it";
            return std::nullopt;
        }
        if (!S_ISDIR(st.st_mode)) {
            error = quoted(path) + " exists and is not a directory; --force replaces only run directories";
            return std::nullopt;
        }
        if (!is_replaceable_run_dir(path)) {
            error = quoted(path) + " is not a gprof-run run directory (it has no " + kRunMarker +
                    "); not deleting it, even with --force";
            return std::nullopt;
        }
        // remove_all removes links inside the directory, never what they point to.
        fs::remove_all(path, ec);
        if (ec) {
            error = "cannot remove " + quoted(path) + " to replace it: " + ec.message();
            return std::nullopt;
        }
        replaced = true;
        --attempt;  // same name again
    }
    error = "no free name left for the run directory " + quoted(dir) + "-N";
    return std::nullopt;
}

}  // namespace gprof::launcher
