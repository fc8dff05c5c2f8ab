#include "output/output_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <streambuf>
#include <vector>

namespace gprof::report {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const fs::path& path, const std::string& why) {
    throw std::runtime_error("cannot write '" + path.string() + "': " + why);
}

bool write_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

}  // namespace

// A plain buffered streambuf over a descriptor; remembers the first write error.
class OutputFile::Buf : public std::streambuf {
public:
    explicit Buf(int fd) : fd_(fd), buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
    int error() const { return error_; }

protected:
    int overflow(int c) override {
        if (sync() != 0) return traits_type::eof();
        if (c != traits_type::eof()) {
            *pptr() = static_cast<char>(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override {
        size_t n = static_cast<size_t>(pptr() - pbase());
        if (n && !error_ && !write_all(fd_, pbase(), n)) error_ = errno;
        setp(buf_.data(), buf_.data() + buf_.size());
        return error_ ? -1 : 0;
    }

private:
    int fd_;
    std::vector<char> buf_;
    int error_ = 0;
};

OutputFile::OutputFile(const fs::path& path, bool force) : path_(path) {
    struct stat st {};
    bool exists = ::lstat(path.c_str(), &st) == 0;
    if (!exists && errno != ENOENT) refuse(path, std::strerror(errno));
    if (exists && S_ISLNK(st.st_mode)) {
        struct stat target {};
        bool harmless = ::stat(path.c_str(), &target) == 0 && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode));
        if (!harmless)
            refuse(path, "it is a symbolic link; gprof-report does not write through a link at its output name "
                         "(remove it, or name another file)");
        st = target;
    }
    if (exists && S_ISDIR(st.st_mode)) refuse(path, "it is a directory (-o names a file)");
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {  // /dev/null, /dev/stdout, a pipe: replaces nothing
        fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd_ < 0) refuse(path, std::strerror(errno));
        return;
    }
    if (exists && !S_ISREG(st.st_mode)) refuse(path, "it is not a regular file");
    if (exists && !force) refuse(path, "it exists (--force replaces it)");
    if (!exists) {
        fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd_ < 0) refuse(path, std::strerror(errno) + std::string(errno == EEXIST ? " (created meanwhile)" : ""));
        created_ = true;
        return;
    }
    // --force over a regular file: a complete replacement moved into place at commit().
    std::string tmpl = (path.parent_path().empty() ? fs::path(".") : path.parent_path()).string() + "/." +
                       path.filename().string() + ".XXXXXX";
    fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd_ < 0) refuse(path, std::strerror(errno));
    temp_ = tmpl;
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
    if (!committed_) discard();
}

std::ostream& OutputFile::stream() {
    if (!stream_) {
        buf_ = std::make_unique<Buf>(fd_);
        stream_ = std::make_unique<std::ostream>(buf_.get());
    }
    return *stream_;
}

void OutputFile::discard() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_.empty()) ::unlink(temp_.c_str());
    else if (created_) ::unlink(path_.c_str());
}

void OutputFile::commit(bool closed_by_caller, bool write_failed) {
    int err = 0;
    if (stream_) {
        stream_->flush();
        if (buf_->error()) err = buf_->error();
        else if (!*stream_) err = EIO;
    }
    if (write_failed && !err) err = errno ? errno : EIO;
    if (closed_by_caller) fd_ = -1;
    if (fd_ >= 0) {
        if (::close(fd_) != 0 && !err) err = errno;
        fd_ = -1;
    }
    if (!err && !temp_.empty() && ::rename(temp_.c_str(), path_.c_str()) != 0) err = errno;
    if (err) {
        bool removed = created_ || !temp_.empty();
        discard();
        committed_ = true;
        refuse(path_, std::string(std::strerror(err)) + (err == ENOSPC || err == EDQUOT ? " (disk full)" : "") +
                          (removed ? "; the partial file was removed" : ""));
    }
    committed_ = true;
}

}  // namespace gprof::report
