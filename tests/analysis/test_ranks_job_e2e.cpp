// A recorded job of many ranks (issue 31): every rank a real process under gprof-run (the launcher, the collector, the
// real NVTX loader), each a step program with random spikes on every rank and one rank slower on every step, the hosts
// from the collector's test override (GPROF_TEST_HOST). The job's reports must name the slow rank and its host: from
// the figures gprof-run wrote at the end of each run, and from the raw traces alone.
//
// Every rank runs at once and waits at a barrier before its first step and after its last, so that the CPU the ranks'
// starts and ends cost (the launcher, the collector, the end-of-run reports) never falls inside another rank's steps:
// the steps are sleeps, and what they measure is the machine's wake-up latency on top. Steps of 50 ms: of 20 ms, three
// such jobs at once on two cores (load 190) moved a spiky rank's median 13-17 % up, and it was named too. The rule
// before issue 31 (the rank slowest in the most steps, ties by total work) names rank 13 here, a rank with 4 spikes.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "collector_run.h"

using namespace gprof::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ReportResult {
    int exit_code = -1;
    std::string out;
};

ReportResult report(const std::string& args) {
    std::string cmd = std::string(GPROF_REPORT_EXE) + " " + args + " 2>&1";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    ReportResult r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int rc = ::pclose(p);
    r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return r;
}

std::string report_ok(const std::string& args) {
    ReportResult r = report(args);
    INFO("gprof-report " << args << "\n" << r.out);
    REQUIRE(r.exit_code == 0);
    return r.out;
}

// Reads `count` bytes from `fd`, the ranks' "ready" bytes; false when they do not all come within `seconds`.
bool await_ranks(int fd, size_t count, int seconds) {
    size_t seen = 0;
    char buf[256];
    while (seen < count) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, seconds * 1000) <= 0) return false;
        ssize_t n = ::read(fd, buf, std::min(sizeof buf, count - seen));
        if (n <= 0) return false;
        seen += size_t(n);
    }
    return true;
}

struct JobShape {
    int ranks = 128;
    int ranks_per_host = 8;
    int steps = 24;
    int step_ms = 50;
    int slow_rank = 77;
    // +14 % on every step; every rank, this one too, has spikes of +50 to +150 % in one step of twenty.
    int slow_step_ms = 57;
};

std::string host_of(const JobShape& s, int rank) {
    char name[32];
    std::snprintf(name, sizeof name, "node%02d", rank / s.ranks_per_host);
    return name;
}

// Runs the job under gprof-run into `job` (one run directory per rank, as `srun gprof-run -o run.%h.%q{RANK}` makes).
void record_job(const JobShape& s, const fs::path& job) {
    const std::string gprof_run = GPROF_RUN_EXE;
    const std::string app = test_program("test_nvtx_app");
    int ready[2], go[2], leave[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(go) == 0);
    REQUIRE(::pipe(leave) == 0);
    std::vector<pid_t> children;
    for (int r = 0; r < s.ranks; ++r) {
        const std::string host = host_of(s, r);
        const fs::path dir = job / ("run." + host + "." + std::to_string(r));
        const std::map<std::string, std::string> env{{"RANK", std::to_string(r)},
                                                     {"LOCAL_RANK", std::to_string(r % s.ranks_per_host)},
                                                     {"WORLD_SIZE", std::to_string(s.ranks)},
                                                     {"SLURM_JOB_ID", "4711"},
                                                     {"GPROF_TEST_HOST", host}};
        const std::vector<std::string> argv{gprof_run,
                                            "-o",
                                            dir.string(),
                                            app,
                                            "job-rank",
                                            std::to_string(s.steps),
                                            std::to_string(r == s.slow_rank ? s.slow_step_ms : s.step_ms),
                                            std::to_string(1000 + r),
                                            std::to_string(ready[1]),
                                            std::to_string(go[0]),
                                            std::to_string(leave[0])};
        const std::string out = (job / ("rank" + std::to_string(r) + ".out")).string();
        const std::string err = (job / ("rank" + std::to_string(r) + ".err")).string();
        pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            ::close(ready[0]);
            ::close(go[1]);
            ::close(leave[1]);
            exec_child(argv, env, job.string(), ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), err);
        }
        children.push_back(child);
    }
    ::close(ready[1]);
    ::close(go[0]);
    ::close(leave[0]);
    // All ranks started: their steps begin together; all ranks stepped: they may end.
    const bool started = await_ranks(ready[0], size_t(s.ranks), 240);
    ::close(go[1]);
    const bool stepped = started && await_ranks(ready[0], size_t(s.ranks), 120);
    ::close(leave[1]);
    ::close(ready[0]);
    if (!started || !stepped)
        for (pid_t c : children) ::kill(c, SIGKILL);
    for (int r = 0; r < s.ranks; ++r) {
        int status = 0;
        REQUIRE(::waitpid(children[size_t(r)], &status, 0) == children[size_t(r)]);
        const fs::path out = job / ("rank" + std::to_string(r) + ".out");
        const fs::path err = job / ("rank" + std::to_string(r) + ".err");
        INFO("rank " << r << ": " << slurp(err.string()));
        REQUIRE(WIFEXITED(status));
        REQUIRE(WEXITSTATUS(status) == 0);
        CHECK(slurp(out.string()) == "job rank done\n");
        fs::remove(out);
        fs::remove(err);
    }
    REQUIRE(started);
    REQUIRE(stepped);
}

}  // namespace

TEST_CASE(
    "e2e: a job of 128 ranks under gprof-run on 16 hosts, random spikes "
    "on every rank, one rank slower: "
    "ranks, analyze and html name it and its host, from the figures and "
    "from the traces",
    "[ranks][e2e][job]") {
    const JobShape s;
    TempDir tmp;
    const fs::path job = tmp.path() / "job4711";
    fs::create_directories(job);
    record_job(s, job);
    size_t with_figures = 0;
    for (const auto& e : fs::directory_iterator(job)) with_figures += fs::exists(e.path() / "rank-figures.json");
    REQUIRE(with_figures == size_t(s.ranks));

    const std::string slow_host = host_of(s, s.slow_rank);
    const std::string slow = "rank " + std::to_string(s.slow_rank) + " @ " + slow_host + " (pid ";

    // The ranks view, from the figures gprof-run wrote at the end of each run.
    const json v = json::parse(report_ok("ranks --format json " + job.string()));
    INFO(v["line"].get<std::string>());
    REQUIRE(v["ranks"].size() == size_t(s.ranks));
    CHECK(v["hosts"] == s.ranks / s.ranks_per_host);
    CHECK(v["steps_compared"] == s.steps);
    REQUIRE(v["stragglers"].size() == 1);
    CHECK(v["stragglers"][0]["rank"] == s.slow_rank);
    CHECK(v["stragglers"][0]["host"] == slow_host);
    CHECK(v["line"].get<std::string>().rfind(slow, 0) == 0);
    CHECK(v["line"].get<std::string>().find(" is a straggler: +") != std::string::npos);
    // What makes the per-step maximum useless here: in most steps some other rank's spike is the slowest.
    int slow_is_max = 0;
    for (const auto& step : v["steps"]) slow_is_max += step["slowest_rank"] == s.slow_rank;
    CHECK(slow_is_max <= s.steps / 3);

    const std::string text = report_ok("ranks " + job.string());
    CHECK(text.find(slow) != std::string::npos);
    CHECK(text.find(") is a straggler: +") != std::string::npos);

    const std::string analysis = report_ok("analyze " + job.string());
    CHECK(analysis.find("Analysis: a job of 128 ranks, from the rank figures of "
                        "128 run directories") != std::string::npos);
    CHECK(analysis.find(slow) != std::string::npos);
    CHECK(analysis.find(") is a straggler: +") != std::string::npos);

    const fs::path html = tmp.path() / "job.html";
    report_ok("html -o " + html.string() + " " + job.string());
    const std::string page = slurp(html.string());
    CHECK(page.find("<h1>job 4711: 128 ranks</h1>") != std::string::npos);
    CHECK(page.find("<section id=\"ranks\"") != std::string::npos);
    CHECK(page.find(slow) != std::string::npos);
    CHECK(page.find(") is a straggler: +") != std::string::npos);

    // The raw-trace fallback: without the figures, the same view from the traces, one run directory at a time.
    for (const auto& e : fs::directory_iterator(job)) fs::remove(e.path() / "rank-figures.json");
    const json raw = json::parse(report_ok("ranks --format json " + job.string()));
    CHECK(raw == v);
    // analyze and html of the job from the traces too, one run directory at a time (more than 32 of them).
    const std::string analysis_of_traces = report_ok("analyze " + job.string());
    CHECK(analysis_of_traces.find("Analysis: a job of 128 ranks, from the traces of 128 run directories, read one "
                                  "at a time") != std::string::npos);
    CHECK(analysis_of_traces.find(slow) != std::string::npos);
    CHECK(analysis_of_traces.find(") is a straggler: +") != std::string::npos);
    report_ok("html --force -o " + html.string() + " " + job.string());
    const std::string page_of_traces = slurp(html.string());
    CHECK(page_of_traces.find("from the traces of 128 run directories") != std::string::npos);
    CHECK(page_of_traces.find(slow) != std::string::npos);
    CHECK(page_of_traces.find(") is a straggler: +") != std::string::npos);
}
