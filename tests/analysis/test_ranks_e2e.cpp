// Two ranks of a pretend job run at the same time with the collector injected, each on a "host" of its own: separate
// UTS, PID and mount namespaces (unshare -u -p -m --fork --mount-proc), so both are pid 1 on hosts nodeA and
// nodeB, as ranks in containers are. Where namespaces are not allowed, the hosts come from the collector's test
// override (GPROF_TEST_HOST) instead, and the test says so. Rank 1 is slower; the reports must keep the ranks
// apart, label them, place both on one clock and name rank 1 the straggler.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "collector_run.h"

using namespace gprof::testing;
namespace tr = gprof::trace;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string unshare_path() {
    for (const char* p : {"/usr/bin/unshare", "/bin/unshare"})
        if (::access(p, X_OK) == 0) return p;
    return {};
}

// Whether this machine lets us make UTS, PID and mount namespaces (root, or unprivileged user namespaces off).
std::string namespaces_unavailable() {
    std::string u = unshare_path();
    if (u.empty()) return "no unshare(1) on this machine";
    TempDir d;
    RunResult r = run_program({u, "-u", "-p", "-m", "--fork", "--mount-proc", "/bin/sh", "-c", "hostname gprof-probe"},
                              {}, d.path().string());
    if (r.exit_code() != 0) return "unshare -u -p -m --fork --mount-proc failed here: " + r.err;
    return {};
}

std::string cli(const std::string& args) {
    std::string cmd = std::string(GPROF_REPORT_EXE) + " " + args + " 2>&1";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int rc = ::pclose(p);
    INFO(cmd << "\n" << out);
    REQUIRE(WEXITSTATUS(rc) == 0);
    return out;
}

}  // namespace

TEST_CASE("e2e: two ranks on two hosts at once, one slower: labels, one clock, the straggler named",
          "[ranks][e2e]") {
    const std::string why_not = namespaces_unavailable();
    const bool namespaces = why_not.empty();
    if (!namespaces)
        WARN("hosts simulated with GPROF_TEST_HOST, not namespaces (" << why_not << ")");
    TempDir tmp;
    const std::string app = test_program("test_nvtx_app");
    struct Rank {
        int rank;
        std::string host;
        int step_ms;
        fs::path dir;
        pid_t child = 0;
    };
    std::vector<Rank> ranks{{0, "nodeA", 20, tmp.path() / "run.nodeA.0"}, {1, "nodeB", 60, tmp.path() / "run.nodeB.1"}};
    const int steps = 8;
    for (auto& r : ranks) {
        fs::create_directories(r.dir);
        // The collector comes in only inside the "host": unshare and the shell are the test's machinery, as the
        // container runtime is in a real job.
        std::map<std::string, std::string> env{
            {"RANK", std::to_string(r.rank)}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_JOB_ID", "777"}};
        std::string inject;
        for (const auto& [k, val] : collector_env(r.dir.string())) inject += " " + k + "='" + val + "'";
        std::vector<std::string> argv;
        const std::string run =
            "exec env" + inject + " \"$0\" steps " + std::to_string(steps) + " " + std::to_string(r.step_ms);
        if (namespaces) {
            argv = {unshare_path(), "-u", "-p", "-m", "--fork", "--mount-proc", "/bin/sh", "-c",
                    "hostname " + r.host + " && " + run, app};
        } else {
            env["GPROF_TEST_HOST"] = r.host;
            argv = {"/bin/sh", "-c", run, app};
        }
        std::string out = (r.dir / ".out").string(), err = (r.dir / ".err").string();
        r.child = ::fork();
        REQUIRE(r.child >= 0);
        if (r.child == 0) exec_child(argv, env, r.dir.string(), ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), err);
    }
    for (auto& r : ranks) {
        int status = 0;
        REQUIRE(::waitpid(r.child, &status, 0) == r.child);
        INFO(slurp((r.dir / ".err").string()));
        REQUIRE(WIFEXITED(status));
        REQUIRE(WEXITSTATUS(status) == 0);
        if (namespaces) CHECK(slurp((r.dir / ".out").string()) == "steps done (pid 1)\n");
        fs::remove(r.dir / ".out");
        fs::remove(r.dir / ".err");
    }

    // What each trace recorded of its host and rank.
    std::vector<LoadedTrace> traces;
    for (auto& r : ranks) {
        auto files = traces_in(r.dir.string());
        REQUIRE(files.size() == 1);
        traces.push_back(load_trace(files[0].string()));
        const LoadedTrace& t = traces.back();
        CHECK(t.header.hostname == r.host);
        if (namespaces) {
            // The namespaces share the kernel: the boot id is the machine's own.
            std::string boot = slurp("/proc/sys/kernel/random/boot_id");
            CHECK(t.header.boot_id == boot.substr(0, boot.find('\n')));
        } else {
            CHECK(t.header.boot_id == "test:" + r.host);
        }
        if (namespaces) CHECK(t.header.pid == 1);
        size_t roles = 0;
        for (const auto& rec : t.records)
            if (rec.kind == tr::RecordKind::Role) {
                ++roles;
                CHECK(rec.role.rank == r.rank);
                CHECK(t.str(rec.role.job) == "777");
                CHECK(t.str(rec.role.variables) == "RANK=" + std::to_string(r.rank) +
                                                        " LOCAL_RANK=0 WORLD_SIZE=2 SLURM_JOB_ID=777");
            }
        CHECK(roles == 1);
    }
    const std::string label0 = "rank 0 @ nodeA (pid " + std::to_string(traces[0].header.pid) + ")";
    const std::string label1 = "rank 1 @ nodeB (pid " + std::to_string(traces[1].header.pid) + ")";

    json v = json::parse(cli("ranks --format json " + tmp.path().string()));
    REQUIRE(v["ranks"].size() == 2);
    CHECK(v["ranks"][0]["label"] == label0);
    CHECK(v["ranks"][1]["label"] == label1);
    CHECK(v["hosts"] == 2);
    CHECK(v["steps_compared"] == steps);
    REQUIRE(v["straggler"].is_object());
    CHECK(v["straggler"]["rank"] == 1);
    // Rank 1 sleeps 60 ms a step, rank 0 20 ms: held to rank 0, +200 % (a loaded machine stretches a step or two of
    // either rank, which the medians do not see).
    CHECK(v["line"].get<std::string>().rfind(label1 + " is a straggler: +", 0) == 0);
    CHECK(v["line"].get<std::string>().find(" work per step on rank 0 (") != std::string::npos);
    CHECK(v["straggler"]["over_median_pct"].get<double>() > 100);
    CHECK(v["straggler"]["confidence"].get<double>() >= 0.99);

    // One clock: each step's start on the merged axis is the process's own realtime anchor plus its trace clock.
    for (size_t r = 0; r < 2; ++r) {
        std::vector<int64_t> own;
        for (const auto& rec : traces[r].records)
            if (rec.kind == tr::RecordKind::Nvtx && traces[r].str(rec.nvtx.name) == "step")
                own.push_back(traces[r].header.clock.realtime_ns +
                              int64_t(rec.nvtx.start - traces[r].header.clock.trace_ns));
        REQUIRE(own.size() == size_t(steps));
        const json& f = v["ranks"][r];
        for (size_t i = 0; i < own.size(); ++i)
            CHECK(f["first_ns"].get<int64_t>() + f["steps"]["start_after_first_ns"][i].get<int64_t>() == own[i]);
    }
    // The two ranks ran at the same time: their first steps began within two seconds of each other.
    CHECK(std::llabs(v["steps"][0]["start_skew_ns"].get<int64_t>()) < 2'000'000'000LL);

    std::string summary = cli("summary " + tmp.path().string());
    CHECK(summary.find(label0 + ": ") != std::string::npos);
    CHECK(summary.find(label1 + ": ") != std::string::npos);

    fs::path tl = tmp.path() / "timeline.json";
    cli("timeline -o " + tl.string() + " " + tmp.path().string());
    std::ifstream in(tl);
    json t = json::parse(in);
    std::set<int64_t> pids;
    std::set<std::string> names;
    for (const auto& e : t["traceEvents"])
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
            names.insert(e["args"]["name"].get<std::string>());
            pids.insert(e["pid"].get<int64_t>());
        }
    CHECK(names.count(label0) == 1);
    CHECK(names.count(label1) == 1);
    CHECK(pids.size() == names.size());
}

// Four ranks in pid namespaces of their own on one host, as Kubernetes pods with hostNetwork are: one host name, one
// boot id, and every rank pid 1. The pid namespace in the trace header (format 1.6) keeps them apart in every output.
TEST_CASE("e2e: four ranks in pid namespaces of one host, all pid 1, stay apart in every output",
          "[ranks][e2e][identity]") {
    const std::string why_not = namespaces_unavailable();
    if (!why_not.empty()) {
        WARN("skipped: no pid namespaces here (" << why_not << ")");
        return;
    }
    TempDir tmp;
    const std::string app = test_program("test_nvtx_app");
    const int steps = 4;
    std::vector<std::pair<fs::path, pid_t>> ranks;
    for (int rank = 0; rank < 4; ++rank) {
        fs::path dir = tmp.path() / ("run." + std::to_string(rank));
        fs::create_directories(dir);
        std::map<std::string, std::string> env{{"RANK", std::to_string(rank)}, {"WORLD_SIZE", "4"}};
        std::string inject;
        for (const auto& [k, val] : collector_env(dir.string())) inject += " " + k + "='" + val + "'";
        // A slower rank 2: 40 ms a step against 10 ms.
        const std::string run = "exec env" + inject + " \"$0\" steps " + std::to_string(steps) + (rank == 2 ? " 40" : " 10");
        std::vector<std::string> argv{unshare_path(), "-p", "-m", "--fork", "--mount-proc", "/bin/sh", "-c", run, app};
        std::string err = (dir / ".err").string();
        pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0)
            exec_child(argv, env, dir.string(), ::open((dir / ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), err);
        ranks.push_back({dir, child});
    }
    std::set<uint64_t> namespaces;
    for (auto& [dir, child] : ranks) {
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        INFO(slurp((dir / ".err").string()));
        REQUIRE(WIFEXITED(status));
        REQUIRE(WEXITSTATUS(status) == 0);
        fs::remove(dir / ".out");
        fs::remove(dir / ".err");
        auto files = traces_in(dir.string());
        REQUIRE(files.size() == 1);
        LoadedTrace t = load_trace(files[0].string());
        CHECK(t.header.pid == 1);
        CHECK(t.header.pid_ns != 0);
        namespaces.insert(t.header.pid_ns);
    }
    CHECK(namespaces.size() == 4);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    auto label = [&](int rank) { return "rank " + std::to_string(rank) + " @ " + std::string(host) + " (pid 1)"; };

    json v = json::parse(cli("ranks --format json " + tmp.path().string()));
    REQUIRE(v["ranks"].size() == 4);
    for (int r = 0; r < 4; ++r) CHECK(v["ranks"][r]["label"] == label(r));
    CHECK(v["hosts"] == 1);
    CHECK(v["steps_compared"] == steps);

    // The summary: one line per rank, and the full one's NVTX block one thread per rank, each under its rank.
    std::string summary = cli("summary --full " + tmp.path().string());
    for (int r = 0; r < 4; ++r) {
        CHECK(summary.find("  " + label(r) + ": ") != std::string::npos);
        CHECK(summary.find("(id = 1, " + label(r) + ")") != std::string::npos);
    }
    json sj = json::parse(cli("summary --format json " + tmp.path().string()))["reports"]["summary"]["header"];
    std::set<uint64_t> json_ns;
    for (const auto& p : sj["processes"]) json_ns.insert(p["pid_ns"].get<uint64_t>());
    CHECK(json_ns == namespaces);

    // The timeline: four process groups with four pids, each with its own steps.
    fs::path tl = tmp.path() / "timeline.json";
    cli("timeline -o " + tl.string() + " " + tmp.path().string());
    std::ifstream in(tl);
    json t = json::parse(in);
    std::map<std::string, int64_t> pid_of;
    std::map<int64_t, size_t> steps_of;
    for (const auto& e : t["traceEvents"]) {
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name")
            pid_of[e["args"]["name"].get<std::string>()] = e["pid"].get<int64_t>();
        if (e.value("ph", "") == "X" && e.value("name", "") == "step") ++steps_of[e["pid"].get<int64_t>()];
    }
    std::set<int64_t> pids;
    for (int r = 0; r < 4; ++r) {
        REQUIRE(pid_of.count(label(r)));
        pids.insert(pid_of[label(r)]);
        CHECK(steps_of[pid_of[label(r)]] == size_t(steps));
    }
    CHECK(pids.size() == 4);
}
