#include "output/output_file.h"

#include <fcntl.h>
#include <stdio.h>
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

mode_t mode_of(FileMode m) {
    if (m == FileMode::Private) return 0600;
    mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

// What is at `path` now, and whether it may be written: the one set of rules (the header's list).
enum class Target { New, Replace, InPlace };
Target inspect(const fs::path& path, const OutputPolicy& policy, std::string& why) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) why = std::strerror(errno);
        return Target::New;
    }
    if (S_ISLNK(st.st_mode)) {
        struct stat target {};
        bool harmless = ::stat(path.c_str(), &target) == 0 && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode));
        if (!harmless) {
            why = "it is a symbolic link; it is never written through (remove it, or name another file)";
            return Target::New;
        }
        st = target;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return Target::InPlace;  // /dev/null, a pipe: replaces nothing
    if (S_ISDIR(st.st_mode)) why = "it is a directory (name a file)";
    else if (!S_ISREG(st.st_mode)) why = "it is not a regular file";
    else if (!policy.force) why = "it exists (--force replaces it)";
    return Target::Replace;
}

// rename(2) that never replaces: RENAME_NOREPLACE, or link(2) + unlink(2) where the file system lacks it.
int rename_noreplace(const char* from, const char* to) {
    if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (::link(from, to) != 0) return -1;
    ::unlink(from);
    return 0;
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

std::string OutputFile::check(const fs::path& path, const OutputPolicy& policy) {
    std::string why;
    inspect(path, policy, why);
    if (!why.empty()) return "cannot write '" + path.string() + "': " + why;
    fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
        return "cannot write '" + path.string() + "': " + std::strerror(errno) + " (in " + parent.string() + ")";
    return {};
}

OutputFile::OutputFile(const fs::path& path, const OutputPolicy& policy) : path_(path), force_(policy.force) {
    std::string why;
    Target target = inspect(path, policy, why);
    if (!why.empty()) refuse(path, why);
    if (target == Target::InPlace) {
        fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd_ < 0) refuse(path, std::strerror(errno));
        return;
    }
    const mode_t mode = mode_of(policy.mode);
    if (policy.publish == Publish::Live && target == Target::New) {
        fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd_ < 0) refuse(path, std::strerror(errno) + std::string(errno == EEXIST ? " (created meanwhile)" : ""));
        ::fchmod(fd_, mode);
        created_ = true;
        return;
    }
    // A temporary file beside the output, on the same file system, so that rename(2) can move it into place.
    std::string tmpl = (path.parent_path().empty() ? fs::path(".") : path.parent_path()).string() + "/." +
                       path.filename().string() + ".XXXXXX";
    fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd_ < 0) refuse(path, std::strerror(errno));
    temp_ = tmpl;
    ::fchmod(fd_, mode);
    if (policy.publish == Publish::Live) {  // --force over a log file: the new one replaces it now, then fills
        if (::rename(temp_.c_str(), path.c_str()) != 0) {
            int e = errno;
            discard();
            refuse(path, std::strerror(e));
        }
        temp_.clear();
        created_ = true;
    }
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

fs::path OutputFile::staging_path() const { return temp_.empty() ? path_ : temp_; }

void OutputFile::discard() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_.empty()) ::unlink(temp_.c_str());
    else if (created_) ::unlink(path_.c_str());
}

int OutputFile::release() {
    if (stream_) stream_->flush();
    committed_ = true;
    int fd = fd_;
    fd_ = -1;
    return fd;
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
    if (!err && !temp_.empty()) {
        int rc = force_ ? ::rename(temp_.c_str(), path_.c_str()) : rename_noreplace(temp_.c_str(), path_.c_str());
        if (rc != 0) err = errno;
        else temp_.clear();
    }
    if (err) {
        bool removed = created_ || !temp_.empty();
        discard();
        committed_ = true;
        refuse(path_, std::string(std::strerror(err)) + (err == ENOSPC || err == EDQUOT ? " (disk full)" : "") +
                          (err == EEXIST ? " (created meanwhile by someone else; --force replaces it)" : "") +
                          (removed && err != EEXIST ? "; the partial file was removed" : ""));
    }
    committed_ = true;
}

std::string create_parent_directories(const fs::path& path) {
    fs::path parent = path.parent_path();
    if (parent.empty()) return {};
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) return "cannot create directory '" + parent.string() + "': " + ec.message();
    return {};
}

}  // namespace gprof::report
