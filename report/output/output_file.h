// The files gprof-report writes where the user said (-o, --write-json, ...), the way gprof-run writes its own:
// never through a symbolic link planted at the name, never over an existing file unless --force, never a
// half-written result left behind.
//
//   - a name that does not exist: created O_CREAT|O_EXCL|O_NOFOLLOW (mode 0666 less the umask, like any tool);
//   - an existing regular file: refused without `force`; with it, the output goes to a temporary file beside it
//     that replaces it by rename(2) once complete (a link planted in between is replaced, never followed);
//   - a symbolic link to a regular file (or to nothing): refused, --force or not; one to a character device or a
//     FIFO (/dev/stdout, /dev/null) is written through, as it replaces nothing;
//   - a directory, a block device or a socket: refused;
//   - a character device or a FIFO: written to in place (`-o /dev/null`).
// A write error (a full disk) removes what was created and says so; nothing empty is left that looks like a result.
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

namespace gprof::report {

class OutputFile {
public:
    // Opens (creates) the output. Throws std::runtime_error with a message for the user.
    OutputFile(const std::filesystem::path& path, bool force);
    ~OutputFile();  // without commit(): what was created is removed
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    int fd() const { return fd_; }
    // A buffered stream over fd(); its errors are reported by commit().
    std::ostream& stream();
    // Flushes and closes; moves a --force replacement into place. Throws std::runtime_error on any write error
    // (then nothing is left at the name that was not there before). `closed_by_caller`: fd() was handed to
    // something that closed it already (fdopen, gzdopen) and `write_failed` says whether that went well.
    void commit(bool closed_by_caller = false, bool write_failed = false);

    const std::filesystem::path& path() const { return path_; }

private:
    void discard();

    std::filesystem::path path_;     // the name asked for
    std::filesystem::path temp_;     // the --force replacement being written, else empty
    bool created_ = false;           // we made the file at path_ (remove it on failure)
    bool committed_ = false;
    int fd_ = -1;
    class Buf;
    std::unique_ptr<Buf> buf_;
    std::unique_ptr<std::ostream> stream_;
};

}  // namespace gprof::report
