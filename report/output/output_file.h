// THE way gprof-run and gprof-report write a file (issue 32: one policy, where there were three): summary.txt,
// report.html, report.json, report.sqlite, the timeline, gprof-run.info, --log-file, and every -o of gprof-report.
//
//   - never through a symbolic link planted at the name (refused, --force or not); a link to a character device or a
//     FIFO (/dev/stdout, /dev/null) is written through, as it replaces nothing;
//   - never over an existing file unless `force` (then refused with one line naming --force);
//   - a directory, a block device or a socket at the name: refused; a character device or a FIFO: written in place;
//   - the content is written under a temporary name beside the output and moved into place by rename(2) when
//     complete (without `force` with RENAME_NOREPLACE, so a file created meanwhile is not replaced either): nobody
//     ever sees half a result, and a write error (a full disk) leaves nothing behind; Publish::Live instead puts the
//     file at its name at once and writes it in place (the log file, which is read while the run goes on);
//   - mode: FileMode::Private 0600 for what gprof-run writes about a run (its run directory is 0700: a run holds
//     command lines and names), FileMode::Umask 0666 less the umask for gprof-report's outputs, like any tool's.
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

namespace gprof::report {

enum class FileMode { Umask, Private };
enum class Publish { WhenComplete, Live };

struct OutputPolicy {
    bool force = false;  // replace an existing regular file at the name
    FileMode mode = FileMode::Umask;
    Publish publish = Publish::WhenComplete;
};

class OutputFile {
public:
    // Opens (creates) the output. Throws std::runtime_error with a message for the user.
    OutputFile(const std::filesystem::path& path, const OutputPolicy& policy);
    OutputFile(const std::filesystem::path& path, bool force) : OutputFile(path, OutputPolicy{force}) {}
    ~OutputFile();  // without commit(): what was created is removed
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // "" when `path` may be written under `policy`, else why not (the check the constructor makes, for a caller
    // that must refuse before it starts anything: gprof-run checks --timeline before it starts the app).
    static std::string check(const std::filesystem::path& path, const OutputPolicy& policy);

    int fd() const { return fd_; }
    // A buffered stream over fd(); its errors are reported by commit().
    std::ostream& stream();
    // Where the content goes until commit(): the temporary file beside the output, for a writer that must open it
    // by name itself (SQLite); the output's own name when it is written in place (a device, a FIFO, Publish::Live).
    std::filesystem::path staging_path() const;
    // Flushes, closes and moves the file into place. Throws std::runtime_error on any write error (then nothing is
    // left at the name that was not there before). `closed_by_caller`: fd() was handed to something that closed
    // it already (fdopen, gzdopen, SQLite) and `write_failed` says whether that went well.
    void commit(bool closed_by_caller = false, bool write_failed = false);
    // Publish::Live: the descriptor, handed over to the caller (who closes it); the file stays.
    int release();

    const std::filesystem::path& path() const { return path_; }

private:
    void discard();

    std::filesystem::path path_;     // the name asked for
    std::filesystem::path temp_;     // the temporary file being written, else empty (written in place)
    bool force_ = false;
    bool created_ = false;           // we made the file at path_ (Live: remove it on failure)
    bool committed_ = false;
    int fd_ = -1;
    class Buf;
    std::unique_ptr<Buf> buf_;
    std::unique_ptr<std::ostream> stream_;
};

// Creates the missing parent directories of `path` (gprof-run's -o/--log-file/--timeline name places that need not
// exist yet). "" on success, else why not.
std::string create_parent_directories(const std::filesystem::path& path);

}  // namespace gprof::report
