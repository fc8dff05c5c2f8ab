// The collector's descriptors in the program's descriptor table (base/descriptors.h, process/trace_file.h): where they go,
// what the program's close/close_range/closefrom/dup2 get on them, and the trace written on after the program took
// its descriptor by a raw system call. Each case runs in a forked child: they close descriptors and change limits.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

#include "collector_run.h"
#include "base/descriptors.h"
#include "process/trace_file.h"

namespace d = gprof::collector::descriptors;
using gprof::testing::TempDir;

namespace {

// Runs `body` in a forked child; the child's exit code is the number of the first failed check (0: all held).
int in_child(const std::function<int()>& body) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(body());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

bool same_file(int a, int b) {
    struct stat x {}, y {};
    return ::fstat(a, &x) == 0 && ::fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

// A trace at `path` written through the collector's guard (process/trace_file.h), in 4 KiB chunks; null on failure.
gprof::collector::TraceFile* open_guarded(gprof::trace::TraceWriter& w, const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    auto* file = new gprof::collector::TraceFile();  // leaked: the writer closes through it
    file->adopt(fd, path);
    gprof::trace::TraceWriter::Options o;
    o.chunk_bytes = 4096;
    o.guard = file;
    return w.open(file->descriptor(), gprof::testing::test_header(), o) ? file : nullptr;
}

void add_marks(gprof::trace::TraceWriter& w, const char* name, int n) {
    gprof::trace::Nvtx r;
    r.type = gprof::trace::NvtxType::Mark;
    r.name = w.intern(name);
    for (int i = 0; i < n; ++i) w.add(r);
}

int set_soft_limit(rlim_t soft) {
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = soft;
    return ::setrlimit(RLIMIT_NOFILE, &r);
}

}  // namespace

TEST_CASE("descriptors: ours goes to the soft limit's own number, which the program can never be given", "[descriptors]") {
    TempDir dir;
    std::string path = dir.file("f");
    CHECK(in_child([&] {
              rlimit r{};
              ::getrlimit(RLIMIT_NOFILE, &r);
              if (r.rlim_max != RLIM_INFINITY && r.rlim_max <= 100) return 0;  // no room above: the next case
              if (set_soft_limit(100) != 0) return 1;
              int free_numbers = 0;
              for (int n = 0; n < 100; ++n) free_numbers += ::fcntl(n, F_GETFD) < 0;
              int fd = d::open_high(path.c_str(), O_WRONLY | O_CREAT, 0600);
              if (fd != 100) return 2;
              if (!(::fcntl(fd, F_GETFD) & FD_CLOEXEC)) return 3;
              ::getrlimit(RLIMIT_NOFILE, &r);
              if (r.rlim_cur != 100) return 4;  // the program's limit as it was
              // Every number the program can have is still free for it.
              int got = 0;
              while (::open("/dev/null", O_RDONLY) >= 0) ++got;
              if (got != free_numbers || errno != EMFILE) return 5;
              // And with every number taken, the collector still gets one (a forked worker of a program at its limit).
              int second = d::open_high(path.c_str(), O_WRONLY);
              if (second >= 0) return 6;  // 100 is ours already: nothing left, and nothing of the program's taken
              ::close(fd);
              return d::open_high(path.c_str(), O_WRONLY) == 100 ? 0 : 7;
          }) == 0);
}

TEST_CASE("descriptors: with no room above the soft limit, ours goes as high as it can below it", "[descriptors]") {
    TempDir dir;
    std::string path = dir.file("f");
    CHECK(in_child([&] {
              rlimit r{64, 64};
              if (::setrlimit(RLIMIT_NOFILE, &r) != 0) return 1;
              int fd = d::open_high(path.c_str(), O_WRONLY | O_CREAT, 0600);
              return fd == 63 ? 0 : 2;
          }) == 0);
}

TEST_CASE("descriptors: close, close_range and closefrom on ours get what they would without the collector",
          "[descriptors]") {
    TempDir dir;
    std::string path = dir.file("f");
    CHECK(in_child([&] {
              int ours = d::open_high(path.c_str(), O_WRONLY | O_CREAT, 0600);
              int slot = d::adopt(ours);
              if (slot < 0) return 1;
              errno = 0;
              if (d::program_close(ours) != -1 || errno != EBADF) return 2;  // not open without the collector
              if (::fcntl(ours, F_GETFD) < 0) return 3;                         // still ours
              int a = ::open("/dev/null", O_RDONLY), b = ::open("/dev/null", O_RDONLY);
              if (d::program_close_range(3, ~0U, 0) != 0) return 4;
              if (::fcntl(a, F_GETFD) >= 0 || ::fcntl(b, F_GETFD) >= 0) return 5;  // the program's: closed
              if (::fcntl(ours, F_GETFD) < 0) return 6;
              a = ::open("/dev/null", O_RDONLY);
              d::program_closefrom(3);
              if (::fcntl(a, F_GETFD) >= 0 || ::fcntl(ours, F_GETFD) < 0) return 7;
              errno = 0;
              if (d::program_dup(ours) != -1 || errno != EBADF) return 8;
              if (d::program_dup2(ours, 10) != -1 || errno != EBADF) return 9;
              // The program's own numbers are untouched by all this.
              int mine = ::open("/dev/null", O_RDONLY);
              if (d::program_close(mine) != 0) return 10;
              if (d::program_close(mine) != -1 || errno != EBADF) return 11;
              return d::figures().refused >= 5 ? 0 : 12;
          }) == 0);
}

TEST_CASE("descriptors: a dup2 onto ours goes through, and ours steps aside to the same file", "[descriptors]") {
    TempDir dir;
    std::string path = dir.file("f");
    CHECK(in_child([&] {
              int ours = d::open_high(path.c_str(), O_WRONLY | O_CREAT, 0600);
              int keep = ::open(path.c_str(), O_RDONLY);  // to compare identities with later
              int slot = d::adopt(ours);
              int null_fd = ::open("/dev/null", O_RDONLY);
              if (d::program_dup2(null_fd, ours) != ours) return 1;
              struct stat st {}, dn {};
              ::fstat(ours, &st);
              ::stat("/dev/null", &dn);
              if (st.st_rdev != dn.st_rdev) return 2;  // the number is the program's now, with its file
              int moved = d::use(slot);
              d::done(slot);
              if (moved < 0 || moved == ours || !same_file(moved, keep)) return 3;
              if (!(::fcntl(moved, F_GETFD) & FD_CLOEXEC)) return 4;
              if (d::program_close(ours) != 0) return 5;  // the program closes what it made
              return d::figures().moved == 1 ? 0 : 6;
          }) == 0);
}

TEST_CASE("descriptors: a number of ours the program took by a raw close is the program's: its calls go through",
          "[descriptors]") {
    TempDir dir;
    std::string path = dir.file("f");
    CHECK(in_child([&] {
              int ours = d::open_high(path.c_str(), O_WRONLY | O_CREAT, 0600);
              int slot = d::adopt(ours);
              ::syscall(SYS_close, ours);
              int mine = ::open("/dev/null", O_RDONLY);
              if (::dup2(mine, ours) != ours) return 1;  // the program's file at the old number
              if (d::program_close(ours) != 0) return 2;  // its own: closed, no EBADF
              if (d::use(slot) != d::kTaken) return 3;
              d::done(slot);
              return 0;
          }) == 0);
}

TEST_CASE("trace file: a raw close_range under the writer: the trace is opened again and keeps every record",
          "[descriptors][trace-file]") {
    TempDir dir;
    std::string path = dir.file("t.gprof");
    std::string other = dir.file("program-file");
    CHECK(in_child([&] {
              gprof::trace::TraceWriter w;
              auto* file = open_guarded(w, path);
              if (!file) return 1;
              add_marks(w, "before", 1000);
              w.flush();
              // The program closes everything by the system call itself and opens a file of its own, which may well
              // get the trace's old number.
              ::syscall(SYS_close_range, 3, ~0U, 0);
              int mine = -1;
              for (int i = 0; i < 5000; ++i) mine = ::open(other.c_str(), O_WRONLY | O_CREAT, 0600);
              add_marks(w, "after", 1000);
              if (!w.finish(2'000'000'000)) return 2;
              struct stat st {};
              ::fstat(mine, &st);
              if (st.st_size != 0) return 3;  // nothing of the trace in the program's file
              return file->reopened() >= 1 ? 0 : 4;
          }) == 0);
    gprof::testing::LoadedTrace t = gprof::testing::load_trace(path);
    CHECK(t.stats.has_end);
    CHECK(t.warnings.empty());
    size_t before = 0, after = 0;
    for (const auto& n : t.nvtx()) (t.str(n.name) == "before" ? before : after)++;
    CHECK(before == 1000);
    CHECK(after == 1000);
}

TEST_CASE("trace file: removed under the writer: what cannot be written is counted and said", "[descriptors][trace-file]") {
    TempDir dir;
    std::string path = dir.file("t.gprof");
    std::string kept = dir.file("kept.gprof");
    CHECK(in_child([&] {
              gprof::trace::TraceWriter w;
              if (!open_guarded(w, path)) return 1;
              add_marks(w, "x", 100);
              w.flush();
              if (::link(path.c_str(), kept.c_str()) != 0) return 2;  // to read what was written
              ::unlink(path.c_str());
              ::syscall(SYS_close_range, 3, ~0U, 0);
              add_marks(w, "x", 1000);
              w.flush();
              if (!w.descriptor_lost()) return 3;
              w.finish(2'000'000'000);
              return 0;
          }) == 0);
    // Only what reached the file before the program took the descriptor: a trace without an end, not a damaged one.
    gprof::testing::LoadedTrace t = gprof::testing::load_trace(kept);
    CHECK(t.nvtx().size() == 100);
    CHECK_FALSE(t.stats.has_end);
}
