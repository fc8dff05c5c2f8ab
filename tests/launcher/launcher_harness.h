// Running gprof-run (and the test app) as a user would: real processes, stdio through files or pipes.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "trace_fixture.h"

namespace launcher_test {

namespace fs = std::filesystem;

// The relocated prefix: gprof-run with the stand-in collector (see CMakeLists.txt).
inline const std::string kGprofRun = GPROF_TEST_BINARY_DIR "/launcher_prefix/bin/gprof-run";
inline const std::string kDoubleCollector = GPROF_TEST_BINARY_DIR "/launcher_prefix/lib/gprof-run/libgprof-collector.so";
inline const std::string kGprofRunNoLib = GPROF_TEST_BINARY_DIR "/launcher_prefix_nolib/bin/gprof-run";
// The build tree's own gprof-run and collector.
inline const std::string kBuildGprofRun = GPROF_BINARY_DIR "/bin/gprof-run";
inline const std::string kBuildCollector = GPROF_BINARY_DIR "/lib/gprof-run/libgprof-collector.so";
// Test programs.
inline const std::string kApp = GPROF_TEST_BINARY_DIR "/launcher_test_app";
inline const std::string kNvtxApp = GPROF_TEST_BINARY_DIR "/launcher_test_nvtx_app";
inline const std::string kPreload = GPROF_TEST_BINARY_DIR "/liblauncher_test_preload.so";

struct Result {
    int status = 0;     // raw waitpid status
    int exit_code = -1; // -1 unless it exited normally
    std::string out, err;
};

struct Spec {
    std::vector<std::string> argv;
    std::string stdin_data;
    std::string cwd;
    std::map<std::string, std::optional<std::string>> env;  // nullopt: unset
    bool umask_zero = false;
};

inline std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

inline void write_file(const fs::path& p, const std::string& data) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << data;
}

// In the child: environment, cwd, no core files (the signal tests would leave them), then exec.
[[noreturn]] inline void exec_child(const Spec& spec) {
    for (const auto& [name, value] : spec.env) {
        if (value) ::setenv(name.c_str(), value->c_str(), 1);
        else ::unsetenv(name.c_str());
    }
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) ::_exit(250);
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (spec.umask_zero) ::umask(0);
    std::vector<char*> argv;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(251);
}

// Runs to completion with stdin from a file and stdout/stderr captured in files (no pipe can fill up).
inline Result run(const Spec& spec) {
    gprof::testing::TempDir io;
    write_file(io.path() / "in", spec.stdin_data);
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int in = ::open((io.path() / "in").c_str(), O_RDONLY);
        int out = ::open((io.path() / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = ::open((io.path() / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0) ::_exit(252);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        exec_child(spec);
    }
    Result r;
    while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(r.status)) r.exit_code = WEXITSTATUS(r.status);
    r.out = read_file(io.path() / "out");
    r.err = read_file(io.path() / "err");
    return r;
}

// gprof-run from the relocated prefix with `args`, in `cwd`.
inline Result gprof_run(const std::vector<std::string>& args, const std::string& cwd, Spec spec = {}) {
    spec.argv = {kGprofRun};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = cwd;
    return run(spec);
}

// A process with pipes on stdin and stdout, for tests that talk to it while it runs.
class Piped {
public:
    explicit Piped(const Spec& spec) {
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            exec_child(spec);
        }
        ::close(in[0]);
        ::close(out[1]);
        stdin_ = in[1];
        stdout_ = out[0];
    }
    ~Piped() {
        close_stdin();
        if (stdout_ >= 0) ::close(stdout_);
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    pid_t pid() const { return pid_; }
    void close_stdin() {
        if (stdin_ >= 0) ::close(stdin_);
        stdin_ = -1;
    }
    // Reads stdout until `text` has been seen (true) or EOF (false). `guard_ms` only turns a hang into a failure.
    bool read_until(const std::string& text, int guard_ms = 120000) {
        while (seen_.find(text) == std::string::npos) {
            if (!read_some(guard_ms)) return false;
        }
        return true;
    }
    // Reads stdout to EOF; false if the guard expired first.
    bool read_to_eof(int guard_ms = 120000) {
        while (!eof_) {
            if (!read_some(guard_ms) && !eof_) return false;
        }
        return true;
    }
    const std::string& output() const { return seen_; }
    int wait() {
        int st = 0;
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {}
        reaped_ = true;
        return st;
    }

private:
    bool read_some(int guard_ms) {
        if (eof_) return false;
        pollfd p{stdout_, POLLIN, 0};
        int n = ::poll(&p, 1, guard_ms);
        if (n <= 0) return false;
        char buf[4096];
        ssize_t got = ::read(stdout_, buf, sizeof buf);
        if (got <= 0) {
            eof_ = true;
            return false;
        }
        seen_.append(buf, static_cast<size_t>(got));
        return true;
    }
    pid_t pid_ = -1;
    int stdin_ = -1, stdout_ = -1;
    bool reaped_ = false, eof_ = false;
    std::string seen_;
};

// Names in `dir`, sorted.
inline std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

// Names in `dir` starting with `prefix` and ending with `suffix`.
inline std::vector<std::string> entries_like(const fs::path& dir, const std::string& prefix,
                                             const std::string& suffix) {
    std::vector<std::string> out;
    for (const auto& name : entries(dir)) {
        if (name.size() >= prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(name);
    }
    return out;
}

// "NAME=value" lines of the app's `info` output or a double marker file.
inline std::map<std::string, std::string> parse_lines(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        size_t eq = line.find('=');
        if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
        else if (line.size() > 6 && line.compare(line.size() - 6, 6, " unset") == 0)
            out[line.substr(0, line.size() - 6)] = "(unset)";
    }
    return out;
}

inline int mode_of(const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return -1;
    return static_cast<int>(st.st_mode & 07777);
}

}  // namespace launcher_test
