#include "runner.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "collector_run.h"

namespace gprof::catalogue {

namespace fs = std::filesystem;
using gprof::testing::LoadedTrace;

namespace {

const std::string kApp = GPROF_TEST_BINARY_DIR "/test_catalogue_app";

// This build's gprof-run, or another one (GPROF_CATALOGUE_GPROF_RUN=.../bin/gprof-run): to see which cases an older
// collector fails, copy its bin/gprof-run and lib/gprof-run/libgprof-collector.so into a folder and point here.
std::string gprof_run_binary() {
    const char* other = std::getenv("GPROF_CATALOGUE_GPROF_RUN");
    return other && *other ? other : GPROF_BINARY_DIR "/bin/gprof-run";
}

struct Outcome {
    int status = -1;  // as a shell reports it: the exit code, or 128 + the signal
    std::string out, err;
    double seconds = 0;
};

std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

// Runs `script` with bash in `cwd`, stdin from /dev/null, stdout and stderr into files. A run past 60 s is killed.
Outcome run_shell(const std::string& script, const fs::path& cwd) {
    fs::path out = cwd / ".stdout", err = cwd / ".stderr";
    auto start = std::chrono::steady_clock::now();
    pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        int in = ::open("/dev/null", O_RDONLY);
        int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(250);
        ::dup2(in, 0);
        ::dup2(o, 1);
        ::dup2(e, 2);
        ::close_range(3, ~0U, 0);
        ::setenv("GPROF_FLUSH_MS", "50", 1);
        ::execl("/bin/bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
        ::_exit(251);
    }
    Outcome r;
    int status = 0;
    for (;;) {
        pid_t got = ::waitpid(pid, &status, WNOHANG);
        if (got == pid) break;
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
            ::kill(-pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            FAIL("killed after 60 s: " << script);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = gprof::testing::slurp(out.string());
    r.err = gprof::testing::slurp(err.string());
    fs::remove(out);
    fs::remove(err);
    return r;
}

std::string command(const std::vector<std::string>& argv) {
    std::string s;
    for (const auto& a : argv) s += (s.empty() ? "" : " ") + quoted(a);
    return s;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) v.push_back(line);
    return v;
}

void wait_for(const fs::path& marker) {
    for (int i = 0; i < 2000 && !fs::exists(marker); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(fs::exists(marker));
}

}  // namespace

void run_case(const Case& c) {
    REQUIRE(fs::exists(kApp));
    const std::string gprof_run_path = gprof_run_binary();
    REQUIRE(fs::exists(gprof_run_path));
    gprof::testing::TempDir tmp;
    fs::path bare_dir = tmp.path() / "bare", prof_dir = tmp.path() / "profiled", run = tmp.path() / "run";
    fs::create_directories(bare_dir);
    fs::create_directories(prof_dir);
    bool has_out = false;
    auto app_argv = [&](const fs::path& dir) {
        std::vector<std::string> argv{kApp};
        for (const auto& a : c.args) {
            has_out |= a.find("{out}") != std::string::npos;
            argv.push_back(replace_all(a, "{out}", (dir / "out.txt").string()));
        }
        return argv;
    };
    std::vector<std::string> bare_argv = app_argv(bare_dir), prof_argv = app_argv(prof_dir);
    std::vector<std::string> gprof_run{gprof_run_path, "-o", run.string(), "--log-file", (tmp.path() / "gprof-run.log").string(),
                                       "--summary", "none", "--no-timeline", "--no-html"};
    prof_argv.insert(prof_argv.begin(), gprof_run.begin(), gprof_run.end());

    Outcome bare = run_shell(replace_all(c.shell, "{cmd}", command(bare_argv)), bare_dir);
    if (c.waits_for_daemon) wait_for(bare_dir / "out.txt.done");
    Outcome prof = run_shell(replace_all(c.shell, "{cmd}", command(prof_argv)), prof_dir);
    if (c.waits_for_daemon) wait_for(prof_dir / "out.txt.done");
    INFO("case " << c.name << ": " << c.what);
    INFO("gprof-run's log:\n" << gprof::testing::slurp((tmp.path() / "gprof-run.log").string()));
    INFO("profiled stderr:\n" << prof.err);

    // ---- the program did not notice ----
    CHECK(prof.status == bare.status);
    CHECK(prof.out == bare.out);
    std::vector<std::string> program_lines, our_lines;
    for (auto& line : lines_of(prof.err)) (line.rfind("gprof-run: ", 0) == 0 ? our_lines : program_lines).push_back(line);
    CHECK(program_lines == lines_of(bare.err));
    for (const auto& want : c.stderr_lines) {
        bool said = false;
        for (const auto& line : our_lines) said |= line.find(want) != std::string::npos;
        {
            INFO("gprof-run should say: " << want);
            CHECK(said);
        }
    }
    for (const auto& line : our_lines) {
        bool expected = false;
        for (const auto& want : c.stderr_lines) expected |= line.find(want) != std::string::npos;
        {
            INFO("an unexpected line on the program's stderr: " << line);
            CHECK(expected);
        }
    }
    if (has_out) {
        std::string bare_file = gprof::testing::slurp((bare_dir / "out.txt").string());
        std::string prof_file = gprof::testing::slurp((prof_dir / "out.txt").string());
        CHECK(!bare_file.empty());
        CHECK(prof_file.size() == bare_file.size());
        CHECK(prof_file == bare_file);  // byte for byte: nothing of the trace in it, nothing of it missing
    }

    // ---- what was recorded ----
    REQUIRE(fs::is_directory(run));
    auto traces = gprof::testing::traces_in(run.string());
    CHECK(static_cast<int>(traces.size()) == c.traces);
    std::map<std::string, long> counted;
    std::vector<std::string> statuses;
    for (const auto& path : traces) {
        LoadedTrace t = gprof::testing::load_trace(path.string());
        INFO("trace " << path.filename().string());
        if (c.ending == Ending::Complete) {
            CHECK(t.stats.has_end);
            CHECK(t.warnings.empty());
        }
        for (const auto& n : t.nvtx()) ++counted[t.str(n.name)];
        if (auto end = t.end()) {
            double lifetime = double(end->timestamp - t.header.clock.trace_ns) / 1e9;
            INFO("profiled program's lifetime " << lifetime << " s, bare " << bare.seconds << " s");
            CHECK(lifetime <= bare.seconds + c.extra_seconds);
        }
        for (const auto& m : t.status_messages()) statuses.push_back(m);
    }
    for (const auto& [name, count] : c.ranges) {
        INFO("NVTX ranges named " << name);
        if (count < 0) CHECK(counted[name] > 0);
        else CHECK(counted[name] == count);
    }
    for (const auto& want : c.trace_statuses) {
        bool found = false;
        for (const auto& s : statuses) found |= s.find(want) != std::string::npos;
        {
            INFO("a Status record should say: " << want);
            CHECK(found);
        }
    }
}

}  // namespace gprof::catalogue
