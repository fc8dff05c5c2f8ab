// Helpers for the collector's end-to-end tests: run a test program with the collector injected, capture its
// stdout, stderr and wait status, and read back the traces it left.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gprof/trace/reader.h"
#include "trace_fixture.h"

namespace gprof::testing {

inline std::string collector_library() { return std::string(GPROF_BINARY_DIR) + "/lib/gprof-run/libgprof-collector.so"; }
inline std::string test_program(const std::string& name) { return std::string(GPROF_TEST_BINARY_DIR) + "/" + name; }

struct RunResult {
    int status = 0;  // as from waitpid
    std::string out, err;
    bool exited() const { return WIFEXITED(status); }
    int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
    int signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// In a forked child: stdout to `out_fd`, stderr to `err_path`, `cwd`, `env` applied ("\x01" removes), then argv.
[[noreturn]] inline void exec_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                   const std::string& cwd, int out_fd, const std::string& err_path) {
    int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out_fd, 1);
    ::dup2(e, 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    for (auto& [k, v] : env) {
        if (v == "\x01") ::unsetenv(k.c_str());
        else ::setenv(k.c_str(), v.c_str(), 1);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
}

// Runs argv in `cwd` with the current environment plus `env` (a value of nullptr-like "\x01" removes).
inline RunResult run_program(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                             const std::string& cwd) {
    std::string out_path = cwd + "/.stdout", err_path = cwd + "/.stderr";
    pid_t pid = ::fork();
    if (pid == 0) exec_child(argv, env, cwd, ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), err_path);
    RunResult r;
    ::waitpid(pid, &r.status, 0);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return r;
}

// Runs argv like run_program, reads its stdout until `ready` appears, then sends it `sig` and waits for it. The
// stdout seen (up to its end) is in `out`. A program that never says `ready` within 60 s is killed (SIGKILL).
inline RunResult run_then_signal(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                 const std::string& cwd, const std::string& ready, int sig) {
    int pipefd[2];
    if (::pipe(pipefd) != 0) return {};
    std::string err_path = cwd + "/.stderr";
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(pipefd[0]);
        exec_child(argv, env, cwd, pipefd[1], err_path);
    }
    ::close(pipefd[1]);
    RunResult r;
    bool sent = false;
    char buf[4096];
    for (;;) {
        pollfd p{pipefd[0], POLLIN, 0};
        if (::poll(&p, 1, 60000) <= 0) break;
        ssize_t n = ::read(pipefd[0], buf, sizeof buf);
        if (n <= 0) break;
        r.out.append(buf, static_cast<size_t>(n));
        if (!sent && r.out.find(ready) != std::string::npos) {
            ::kill(pid, sig);
            sent = true;
        }
    }
    if (!sent) ::kill(pid, SIGKILL);
    ::close(pipefd[0]);
    ::waitpid(pid, &r.status, 0);
    r.err = slurp(err_path);
    std::filesystem::remove(err_path);
    return r;
}

// The collector injected the way the launcher does it (all three routes), traces into `dir`.
inline std::map<std::string, std::string> collector_env(const std::string& dir) {
    std::string lib = collector_library();
    return {{"LD_PRELOAD", lib},
            {"NVTX_INJECTION64_PATH", lib},
            {"CUDA_INJECTION64_PATH", lib},
            {"GPROF_OUTPUT_DIR", dir},
            {"GPROF_RUN_ID", "test-run-id"},
            {"GPROF_FLUSH_MS", "50"}};
}

inline std::vector<std::filesystem::path> traces_in(const std::string& dir) {
    std::vector<std::filesystem::path> out;
    for (auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".gprof") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// One trace read back in full, with names resolved.
struct LoadedTrace {
    trace::TraceHeader header;
    std::vector<trace::Record> records;
    trace::ReadStats stats;
    std::vector<std::string> warnings;
    std::map<trace::StringId, std::string> strings;

    std::string str(trace::StringId id) const {
        auto it = strings.find(id);
        return it == strings.end() ? std::string() : it->second;
    }
    std::vector<trace::Nvtx> nvtx() const {
        std::vector<trace::Nvtx> v;
        for (auto& r : records)
            if (r.kind == trace::RecordKind::Nvtx) v.push_back(r.nvtx);
        return v;
    }
    std::vector<trace::Nvtx> nvtx_named(const std::string& name) const {
        std::vector<trace::Nvtx> v;
        for (auto& n : nvtx())
            if (str(n.name) == name) v.push_back(n);
        return v;
    }
    size_t count(trace::RecordKind kind) const {
        size_t n = 0;
        for (auto& r : records) n += r.kind == kind;
        return n;
    }
    uint64_t dropped(trace::DropSource source) const {
        uint64_t n = 0;
        for (auto& r : records)
            if (r.kind == trace::RecordKind::Dropped && r.dropped.source == source) n += r.dropped.count;
        return n;
    }
    std::vector<trace::Exec> execs() const {
        std::vector<trace::Exec> v;
        for (auto& r : records)
            if (r.kind == trace::RecordKind::Exec) v.push_back(r.exec);
        return v;
    }
    std::optional<trace::End> end() const {
        for (auto& r : records)
            if (r.kind == trace::RecordKind::End) return r.end;
        return std::nullopt;
    }
    std::vector<trace::Status> statuses() const {
        std::vector<trace::Status> v;
        for (auto& r : records)
            if (r.kind == trace::RecordKind::Status) v.push_back(r.status);
        return v;
    }
    // Status lines of at least `level` whose text contains `text`.
    size_t count_status(const std::string& text, trace::StatusLevel level = trace::StatusLevel::Info) const {
        size_t n = 0;
        for (auto& st : statuses())
            n += st.level >= level && str(st.message).find(text) != std::string::npos;
        return n;
    }
    std::string exe_name() const {
        size_t slash = header.executable.rfind('/');
        return slash == std::string::npos ? header.executable : header.executable.substr(slash + 1);
    }
    std::vector<std::string> status_messages() const {
        std::vector<std::string> v;
        for (auto& r : records)
            if (r.kind == trace::RecordKind::Status) v.push_back(str(r.status.message));
        return v;
    }
};

inline LoadedTrace load_trace(const std::string& path) {
    trace::TraceReader reader(path);
    LoadedTrace t;
    t.header = reader.header();
    trace::Record r;
    auto keep = [&](trace::StringId id) {
        if (id && !t.strings.count(id)) t.strings[id] = std::string(reader.string(id));
    };
    while (reader.next(r)) {
        t.records.push_back(r);
        switch (r.kind) {
        case trace::RecordKind::Nvtx:
            keep(r.nvtx.name);
            keep(r.nvtx.domain);
            keep(r.nvtx.category_name);
            break;
        case trace::RecordKind::Thread: keep(r.thread.name); break;
        case trace::RecordKind::Status: keep(r.status.message); break;
        case trace::RecordKind::Module: keep(r.module.path); break;
        case trace::RecordKind::Exec:
            keep(r.exec.path);
            keep(r.exec.command);
            break;
        case trace::RecordKind::Role:
            keep(r.role.variables);
            keep(r.role.job);
            break;
        case trace::RecordKind::ApiCall: keep(r.api.name); break;
        case trace::RecordKind::Kernel: keep(r.kernel.name); break;
        case trace::RecordKind::CudaInfo: keep(r.cuda_info.cupti_library); break;
        case trace::RecordKind::GpuMetricSet:
            keep(r.gpu_metric_set.name);
            keep(r.gpu_metric_set.chip);
            keep(r.gpu_metric_set.metrics);
            break;
        case trace::RecordKind::Device:
            keep(r.device.name);
            keep(r.device.uuid);
            break;
        default: break;
        }
    }
    t.stats = reader.stats();
    t.warnings = reader.warnings();
    return t;
}

}  // namespace gprof::testing
