// Many hosts, many ranks: identity, one clock, merged reports and the straggler view, on synthetic traces written
// with the project's own writer (every rank pid 7, as in containers, on hosts nodeA, nodeB, nodeC).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analyze/rank_inputs.h"
#include "analyze/ranks.h"
#include "end_of_run/end_of_run.h"
#include "model/identity.h"
#include "reports/reports.h"
#include "synthetic_trace.h"
#include "timeline/model.h"
#include "check_perfetto.h"

using namespace gprof::testing;
using namespace gprof::report;
namespace tr = gprof::trace;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr int kSteps = 20;

// One rank of a data-parallel job: each step of 20 ms holds its compute kernel (C ms) and then an NCCL all-reduce
// that ends when the slowest rank's compute has ended plus 1 ms of transfer: the faster ranks wait inside it.
// compute(step) gives this rank's C; slowest(step) the largest C of any rank in that step.
struct RankSpec {
    int64_t rank;
    std::string host;
    int64_t pid = 7;
    std::function<uint64_t(int)> compute;
    std::function<uint64_t(int)> slowest;
    int64_t realtime_shift_ns = 0;  // this host's clock reads this much later than the truth
    // Records that change no figure: this many tiny kernels, each with its launch, between one step's end and the
    // next step's start (the memory test's bulk).
    int filler_kernels_per_step = 0;
};

tr::HeaderInfo rank_header(const RankSpec& r, const std::string& boot) {
    static std::vector<std::string> hosts, boots;  // the header borrows C strings
    hosts.push_back(r.host);
    boots.push_back(boot);
    tr::HeaderInfo h = test_header(r.pid);
    h.hostname = hosts.back().c_str();
    h.boot_id = boots.back().c_str();
    h.clock.realtime_ns += r.realtime_shift_ns;
    return h;
}

fs::path write_rank(const fs::path& dir, const RankSpec& r) {
    fs::create_directories(dir);
    fs::path path = dir / ("train." + std::to_string(r.pid) + ".gprof");
    write_trace(
        path.string(),
        [&](tr::TraceWriter& w) {
            tr::Role role;
            role.rank = r.rank;
            role.local_rank = 0;
            role.world_size = 3;
            std::string vars = "RANK=" + std::to_string(r.rank) + " LOCAL_RANK=0 WORLD_SIZE=3";
            role.variables = w.intern(vars.c_str());
            role.job = w.intern("4711");
            w.add(role);
            Synth s(w);
            for (int i = 0; i < kSteps; ++i) {
                uint64_t t = static_cast<uint64_t>(i) * 20 * kMs;
                uint64_t c = r.compute(i) * kMs, max = r.slowest(i) * kMs;
                s.range("step", t, t + max + 3 * kMs / 2);
                s.kernel("_Z10matmul_fwdPfS_", t + kMs / 2, t + kMs / 2 + c, 7, 1024, 256, t + kMs / 4, t + kMs / 2);
                s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", t + kMs / 2 + c,
                         t + kMs / 2 + max + kMs, 9, 4, 512);
                // After the step (it ends by t + 15.5 ms): 3 us apart, 1 us long, launched 2 us before.
                const uint64_t after = t + 16 * kMs;
                for (int k = 0; k < r.filler_kernels_per_step; ++k) {
                    const uint64_t at = after + static_cast<uint64_t>(k) * 3000;
                    s.kernel("_Z6fillerv", at + 2000, at + 3000, 7, 1, 32, at, at + 1000);
                }
            }
        },
        true, rank_header(r, "boot-" + r.host));
    return path;
}

// rank 1 @ nodeB computes 13 ms a step, the others 10 ms; in step 5 rank 0 computes 14 ms.
std::vector<RankSpec> straggler_job() {
    auto c0 = [](int i) -> uint64_t { return i == 5 ? 14 : 10; };
    auto c1 = [](int) -> uint64_t { return 13; };
    auto c2 = [](int) -> uint64_t { return 10; };
    auto max = [](int i) -> uint64_t { return i == 5 ? 14 : 13; };
    return {{0, "nodeA", 7, c0, max}, {1, "nodeB", 7, c1, max}, {2, "nodeC", 7, c2, max}};
}

std::vector<fs::path> write_job(const fs::path& parent, const std::vector<RankSpec>& ranks) {
    std::vector<fs::path> dirs;
    for (const auto& r : ranks) {
        dirs.push_back(parent / ("run." + r.host + "." + std::to_string(r.rank)));
        write_rank(dirs.back(), r);
    }
    return dirs;
}

std::string run_cli(const std::string& args) {
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

// What gprof-run asks of the end of a run, less the timeline and report.html (not what these tests look at).
EndOfRunOptions end_of_run_in(const fs::path& run_dir) {
    EndOfRunOptions o;
    o.run_dir = run_dir;
    o.summary = SummaryMode::None;
    EndOfRunChoice choice;
    choice.left_out = {"timeline", "html"};
    o.outputs = end_of_run_outputs(run_dir, choice);
    return o;
}

}  // namespace

TEST_CASE("ranks: the straggler is named with its numbers, and the others wait for it in NCCL", "[ranks]") {
    TempDir tmp;
    write_job(tmp.path(), straggler_job());
    Run run = load_run({tmp.path()});  // the parent directory stands for its run directories
    REQUIRE(run.processes.size() == 3);
    auto figures = rank_figures(run, "");
    REQUIRE(figures.size() == 3);
    CHECK(figures[0].label == "rank 0 @ nodeA (pid 7)");
    CHECK(figures[1].label == "rank 1 @ nodeB (pid 7)");
    CHECK(figures[2].label == "rank 2 @ nodeC (pid 7)");
    CHECK(figures[1].job == "4711");
    // Per rank: 20 NCCL kernels and 20 compute kernels; rank 1 computes 20 x 13 ms.
    CHECK(figures[1].nccl_kernels == 20);
    CHECK(figures[1].kernels == 40);
    CHECK(figures[1].compute_ns == int64_t(20 * 13 * kMs));
    REQUIRE(figures[1].steps.size() == kSteps);
    // Step 0 of rank 0: 14.5 ms long, 10 ms compute, NCCL 13 + 1 - 10 = 4 ms, work 10.5 ms.
    CHECK(figures[0].steps[0].duration_ns == int64_t(29 * kMs / 2));
    CHECK(figures[0].steps[0].compute_ns == int64_t(10 * kMs));
    CHECK(figures[0].steps[0].nccl_ns == int64_t(4 * kMs));
    CHECK(figures[0].steps[0].work_ns() == int64_t(21 * kMs / 2));

    RankView v = compare_ranks(figures);
    REQUIRE(v.straggler);
    CHECK(*v.straggler == 1);
    CHECK(v.steps_compared == kSteps);
    CHECK(v.lines[1].slowest_in == 19);
    CHECK(v.lines[0].slowest_in == 1);
    CHECK(v.steps[5].slowest == 0);
    // Median work per step: rank 1 13.5 ms, ranks 0 and 2 10.5 ms (rank 0's one step of 14.5 ms does not move it).
    CHECK(v.over_median_pct == Approx((13.5 / 10.5 - 1) * 100));
    CHECK(v.lines[0].median_work_ns == Approx(10.5 * kMs));
    CHECK(v.lines[0].mean_work_ns == Approx((19 * 10.5 + 14.5) / 20 * kMs));
    CHECK(v.stragglers == std::vector<size_t>{1});
    CHECK(v.outliers.top.front().confidence == Approx(1));
    // NCCL per step: rank 0 (19 x 4 + 1) / 20 = 3.85 ms, rank 2 (19 x 4 + 5) / 20 = 4.05 ms: median 3.95 ms;
    // rank 1 (19 x 1 + 2) / 20 = 1.05 ms.
    CHECK(v.others_wait_in_nccl);
    CHECK(v.line == "rank 1 @ nodeB (pid 7) is a straggler: +29 % work per step on the median rank (13.500ms against "
                    "10.500ms, 20 steps; confidence > 99.9 %); the others wait for it in NCCL (3.9500ms per step, "
                    "against 1.0500ms on rank 1)");
    CHECK(v.steps[0].spread == Approx(13.5 / 10.5));
    CHECK(v.hosts == 3);
    REQUIRE(!v.notes.empty());
    CHECK(v.notes[0].find("3 hosts on one realtime axis") == 0);
    CHECK(v.kernels == 120);
    CHECK(v.nccl_kernels == 60);

    // The same through analyze, whose table and JSON carry the view.
    std::string text = run_cli("analyze " + tmp.path().string());
    CHECK(text.find(v.line) != std::string::npos);
    json j = json::parse(run_cli("analyze --format json " + tmp.path().string()));
    CHECK(j["ranks"]["straggler"]["label"] == "rank 1 @ nodeB (pid 7)");
    CHECK(j["ranks"]["straggler"]["slowest_in"] == 19);
}

TEST_CASE("ranks: balanced ranks have no straggler, and the line says how close the slowest is", "[ranks]") {
    TempDir tmp;
    auto same = [](int) -> uint64_t { return 10; };
    write_job(tmp.path(), {{0, "nodeA", 7, same, same}, {1, "nodeB", 7, same, same}});
    RankView v = compare_ranks(rank_figures(load_run({tmp.path()}), ""));
    CHECK_FALSE(v.straggler);
    CHECK(v.over_median_pct == Approx(0));
    CHECK(v.line == "no straggler: no rank works 5 % more per step than the median rank with 99 % confidence (every "
                    "rank works the same per step)");
}

TEST_CASE("ranks: the merge of per-rank JSON equals the view of the raw traces", "[ranks][merge]") {
    TempDir tmp;
    auto dirs = write_job(tmp.path() / "job", straggler_job());
    // Where each trace lives: its own figures, as `srun gprof-report ranks --format json` writes them.
    std::string files;
    for (size_t i = 0; i < dirs.size(); ++i) {
        fs::path out = tmp.path() / ("rank" + std::to_string(i) + ".json");
        run_cli("ranks --format json -o " + out.string() + " " + dirs[i].string());
        files += " " + out.string();
    }
    std::string merged = run_cli("ranks --format json" + files);
    std::string raw = run_cli("ranks --format json " + (tmp.path() / "job").string());
    CHECK(json::parse(merged) == json::parse(raw));
    CHECK(json::parse(merged)["straggler"]["rank"] == 1);
    // And in the library, through the JSON form of each figure.
    std::vector<RankFigures> from_json;
    for (const auto& d : dirs)
        for (const auto& f : rank_figures(load_run({d}), ""))
            from_json.push_back(rank_figures_from_json(json::parse(rank_figures_to_json(f).dump())));
    CHECK(rank_view_to_json(compare_ranks(from_json)) == rank_view_to_json(compare_ranks(rank_figures(load_run({tmp.path() / "job"}), ""))));
    // Table text of the merge names the straggler as well.
    CHECK(run_cli("ranks" + files).find("rank 1 @ nodeB (pid 7) is a straggler: +29 %") != std::string::npos);
}

TEST_CASE("figures: the end of a ranked run writes rank-figures.json, and the job's reports merge it",
          "[ranks][merge][figures]") {
    TempDir tmp;
    auto dirs = write_job(tmp.path() / "job", straggler_job());
    const std::string raw = run_cli("ranks --format json " + (tmp.path() / "job").string());
    // What gprof-run does after each rank's program has ended.
    for (const auto& d : dirs) {
        EndOfRunOptions o = end_of_run_in(d);
        EndOfRunResult r = finish_run(o);
        INFO(r.warnings.size());
        CHECK(r.ok);
        REQUIRE(fs::exists(d / kRankFiguresFile));
        // One of the outputs of the end of a run: its closing line says where it went.
        CHECK(r.path_of("figures") == d / kRankFiguresFile);
        const auto lines = where_lines(o, r);
        CHECK(std::count(lines.begin(), lines.end(),
                         "rank figures:  " + (d / kRankFiguresFile).string() + " (gprof-report ranks merges a job's)") == 1);
        CHECK((fs::status(d / kRankFiguresFile).permissions() & fs::perms::others_read) == fs::perms::none);
    }
    // One rank each, steps by column.
    json one = json::parse(std::ifstream(dirs[1] / kRankFiguresFile));
    CHECK(one["schema_version"] == kRankFiguresSchemaVersion);
    REQUIRE(one["ranks"].size() == 1);
    CHECK(one["ranks"][0]["label"] == "rank 1 @ nodeB (pid 7)");
    CHECK(one["ranks"][0]["steps"]["duration_ns"].size() == kSteps);
    // With the traces gone the figures still make the same view: the merge reads only them.
    for (const auto& d : dirs)
        for (const auto& t : find_traces(d)) fs::remove(t);
    CHECK(json::parse(run_cli("ranks --format json " + (tmp.path() / "job").string())) == json::parse(raw));
    JobFigures job = job_figures({tmp.path() / "job"}, "", {});
    CHECK(job.from_figures == 3);
    CHECK(job.from_traces == 0);
    // Schema 1 figures (one object per step, before issue 31) still merge, to the same view.
    json old = json::parse(raw);
    for (auto& r : old["ranks"]) {
        json steps = json::array();
        const json& c = r["steps"];
        for (size_t i = 0; i < c["duration_ns"].size(); ++i)
            steps.push_back({{"start_ns", r["first_ns"].get<int64_t>() + c["start_after_first_ns"][i].get<int64_t>()},
                             {"duration_ns", c["duration_ns"][i]},
                             {"nccl_ns", c["nccl_ns"][i]},
                             {"compute_ns", c["compute_ns"][i]}});
        r["steps"] = steps;
        r["schema_version"] = 1;
    }
    std::ofstream(tmp.file("schema1.json")) << old.dump();
    CHECK(json::parse(run_cli("ranks --format json " + tmp.file("schema1.json"))) == json::parse(raw));
}

TEST_CASE("figures: a run without ranks writes no rank-figures.json", "[ranks][figures]") {
    TempDir tmp;
    write_trace(tmp.file("app.7.gprof"), [](tr::TraceWriter& w) {
        Synth s(w);
        s.range("step", 0, 10 * kMs);
        s.kernel("k", kMs, 2 * kMs, 1, 1, 1, kMs / 2, kMs);
    });
    EndOfRunResult r = finish_run(end_of_run_in(tmp.path()));
    CHECK(r.ok);
    CHECK(r.path_of("summary"));
    CHECK_FALSE(r.path_of("figures"));
    CHECK_FALSE(fs::exists(tmp.path() / kRankFiguresFile));
}

TEST_CASE("figures: a job of more than 32 run directories holding only their figures: analyze and html from them",
          "[ranks][figures][html]") {
    TempDir tmp;
    // The figures of rank 1 (13 ms of compute a step) and rank 2 (10 ms), from their traces; then a job of 40 run
    // directories on 5 hosts, each holding one rank's rank-figures.json and no trace: rank 17 computes like rank 1,
    // every other like rank 2.
    write_job(tmp.path() / "three", straggler_job());
    json three = json::parse(run_cli("ranks --format json " + (tmp.path() / "three").string()));
    REQUIRE(three["ranks"].size() == 3);
    const fs::path job = tmp.path() / "job";
    for (int i = 0; i < 40; ++i) {
        json f = three["ranks"][i == 17 ? 1 : 2];
        const std::string host = "node" + std::to_string(i / 8);
        f["rank"] = i;
        f["host"] = host;
        f["boot_id"] = "boot-" + host;
        f["label"] = "rank " + std::to_string(i) + " @ " + host + " (pid 7)";
        fs::path d = job / ("run." + host + "." + std::to_string(i));
        fs::create_directories(d);
        std::ofstream(d / kRankFiguresFile) << json{{"schema_version", kRankFiguresSchemaVersion},
                                                    {"ranks", json::array({f})}}.dump();
    }
    REQUIRE(large_job({job}, ""));
    // Other steps than the figures' need the traces, which these run directories do not hold: the whole load then
    // says what is missing.
    CHECK_FALSE(large_job({job}, "train_step"));

    std::string text = run_cli("analyze " + job.string());
    CHECK(text.find("Analysis: a job of 40 ranks, from the rank figures of 40 run directories") != std::string::npos);
    CHECK(text.find("rank 17 @ node2 (pid 7) is a straggler") != std::string::npos);
    json j = json::parse(run_cli("analyze --format json " + job.string()));
    CHECK(j["ranks"]["totals"]["ranks"] == 40);
    CHECK(j["ranks"]["hosts"] == 5);
    REQUIRE(j["ranks"]["stragglers"].size() == 1);
    CHECK(j["ranks"]["stragglers"][0]["rank"] == 17);

    // report.html of the job: its header and the Ranks section, from the figures alone.
    run_cli("html -o " + tmp.file("job.html") + " " + job.string());
    std::ifstream in(tmp.file("job.html"));
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(page.find("<h1>job 4711: 40 ranks</h1>") != std::string::npos);
    CHECK(page.find("from the rank figures of 40 run directories") != std::string::npos);
    CHECK(page.find("<section id=\"ranks\"") != std::string::npos);
    CHECK(page.find("rank 17 @ node2 (pid 7) is a straggler") != std::string::npos);
    CHECK(page.find("40 ranks on 5 hosts") != std::string::npos);
}

namespace {

// A job of `ranks` run directories on hosts of eight ranks, one rank each, written by write_rank: rank 17 computes
// 13 ms a step, every other 10 ms.
fs::path write_large_job(const fs::path& job, int ranks, int filler_kernels_per_step = 0) {
    auto slow = [](int) -> uint64_t { return 13; };
    auto normal = [](int) -> uint64_t { return 10; };
    for (int i = 0; i < ranks; ++i) {
        RankSpec r{i, "node" + std::to_string(i / 8), 7, i == 17 ? std::function<uint64_t(int)>(slow) : normal, slow};
        r.filler_kernels_per_step = filler_kernels_per_step;
        write_rank(job / ("run." + r.host + "." + std::to_string(i)), r);
    }
    return job;
}

std::string slurp_file(const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("large job: more than 32 run directories of traces, with and without figures: analyze and html reduce one "
          "run directory at a time and name the straggler and its host",
          "[ranks][figures][html][job]") {
    TempDir tmp;
    const fs::path job = write_large_job(tmp.path() / "job", 40);
    // What the view must be: every trace of the job loaded at once, as analyze of a small job does.
    const json whole = rank_view_to_json(compare_ranks(rank_figures(load_run({job}), "")));
    REQUIRE(whole["stragglers"].size() == 1);
    REQUIRE(whole["stragglers"][0]["rank"] == 17);
    const std::string slow = "rank 17 @ node2 (pid 7) is a straggler: +";

    auto check_job = [&](const std::string& sources, const std::string& page_sources, const std::string& args) {
        INFO(sources);
        const std::string text = run_cli("analyze " + args + job.string());
        CHECK(text.rfind("Analysis: a job of 40 ranks, from " + sources +
                             ": the ranks compared; the bottleneck verdict, findings and kernel tables are per rank, "
                             "not pooled over the job (gprof-report analyze RUN_DIR of one rank)\n",
                         0) == 0);
        CHECK(text.find(slow) != std::string::npos);
        CHECK(text.find("40 ranks on 5 hosts") != std::string::npos);
        CHECK(text.find("GPU busy") == std::string::npos);  // no pooled analysis
        const json j = json::parse(run_cli("analyze --format json " + args + job.string()));
        CHECK(j["ranks"] == whole);
        CHECK(j["job"].get<std::string>().find("from " + sources + ":") != std::string::npos);
        CHECK(j["warnings"] == json::array());
        CHECK(json::parse(run_cli("ranks --format json " + args + job.string())) == whole);

        run_cli("html --force -o " + tmp.file("job.html") + " " + args + job.string());
        const std::string page = slurp_file(tmp.file("job.html"));
        CHECK(page.find("<h1>job 4711: 40 ranks</h1>") != std::string::npos);
        CHECK(page.find(page_sources) != std::string::npos);
        CHECK(page.find("<section id=\"ranks\"") != std::string::npos);
        CHECK(page.find(slow) != std::string::npos);
        CHECK(page.find("40 ranks on 5 hosts") != std::string::npos);
        CHECK(page.find("id=\"warnings\"") == std::string::npos);
    };
    SECTION("traces only") {
        check_job("the traces of 40 run directories, read one at a time",
                  "from the traces of 40 run directories, read one at a time", "");
    }
    SECTION("figures in half the run directories, traces in the other half") {
        int n = 0;
        for (const auto& e : fs::directory_iterator(job))
            if (n++ % 2 == 0)
                run_cli("ranks --format json -o " + (e.path() / kRankFiguresFile).string() + " " + e.path().string());
        check_job("the rank figures of 20 run directories and the traces of 20, read one run directory at a time",
                  "from the rank figures of 20 run directories and the traces of 20 run directories", "");
        // A --step-range reads every run directory's traces: the figures hold the default steps.
        check_job("the traces of 40 run directories, read one at a time",
                  "from the traces of 40 run directories, read one at a time", "--step-range step ");
    }
    SECTION("a damaged trace is said, in the text, the JSON and the page") {
        const fs::path damaged = find_traces(job / "run.node0.3").front();
        fs::resize_file(damaged, fs::file_size(damaged) - 40);
        const std::string text = run_cli("analyze " + job.string());
        CHECK(text.find(slow) != std::string::npos);
        const size_t warning = text.find("\nwarning: ");
        REQUIRE(warning != std::string::npos);
        CHECK(text.find(damaged.filename().string(), warning) != std::string::npos);
        const json j = json::parse(run_cli("analyze --format json " + job.string()));
        REQUIRE(j["warnings"].size() >= 1);
        run_cli("html --force -o " + tmp.file("job.html") + " " + job.string());
        CHECK(slurp_file(tmp.file("job.html")).find("about the traces read") != std::string::npos);
    }
}

TEST_CASE("large job: 32 run directories or fewer are analysed whole, as before", "[ranks][job]") {
    TempDir tmp;
    const fs::path job = write_large_job(tmp.path() / "job", 32);
    CHECK_FALSE(large_job({job}, ""));
    const std::string text = run_cli("analyze " + job.string());
    CHECK(text.rfind("Verdict: ", 0) == 0);  // the whole analysis, the ranks view after it
    CHECK(text.find("a job of") == std::string::npos);
    CHECK(text.find("rank 17 @ node2 (pid 7) is a straggler: +") != std::string::npos);
    CHECK(large_job({job, write_large_job(tmp.path() / "more", 1)}, ""));  // 33
}

namespace {

// The peak resident memory of `gprof-report args...` (its own, from wait4), in bytes; its output is discarded.
long peak_rss_bytes(const std::vector<std::string>& args) {
    std::vector<std::string> argv_s{GPROF_REPORT_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    struct rusage usage {};
    REQUIRE(::wait4(pid, &status, 0, &usage) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return usage.ru_maxrss * 1024L;
}

}  // namespace

TEST_CASE("large job: analyze and html of 40 run directories of traces hold one run directory's records at a time",
          "[ranks][job][memory]") {
    TempDir tmp;
    // 40 ranks of 50 000 records each (1 200 filler kernels and their launches a step, 20 steps): 2 M records, which
    // the model holds in 75-150 bytes each (docs/performance.md): 150-300 MB for the whole job, 4-8 MB a run directory.
    const fs::path job = write_large_job(tmp.path() / "job", 40, 1200);
    const std::string one = (job / "run.node0.0").string();
    // The baseline: one run directory loaded (ranks of it), and the same process with next to nothing to read.
    const long one_dir = peak_rss_bytes({"ranks", one});
    const fs::path tiny = write_large_job(tmp.path() / "tiny", 1) / "run.node0.0";
    const long nothing = peak_rss_bytes({"ranks", tiny.string()});
    const long per_dir = one_dir - nothing;
    INFO("one run directory: " << one_dir << " B peak, " << per_dir << " B above the process's own");
    REQUIRE(per_dir > (2L << 20));  // the bound below means something only if a run directory weighs
    // Every run directory at once would be 40 x per_dir over the process's own; one at a time is one, plus what the
    // allocator keeps between them and the figures (a few kB a rank). The bound, 4 x per_dir, is a tenth of the whole.
    const long bound = nothing + 4 * per_dir;
    for (const std::vector<std::string>& cmd :
         {std::vector<std::string>{"analyze", job.string()}, {"analyze", "--format", "json", job.string()},
          {"html", "-o", tmp.file("job.html"), "--force", job.string()}, {"ranks", job.string()}}) {
        const long peak = peak_rss_bytes(cmd);
        INFO(cmd.front() << ": " << peak << " B peak, bound " << bound);
        CHECK(peak < bound);
    }
}

TEST_CASE("ranks: the view's JSON is written one rank at a time, the same bytes as the whole document",
          "[ranks][json]") {
    TempDir tmp;
    auto bytes = [](const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); };
    auto streamed = [](const RankView& v, int depth) {
        std::ostringstream s;
        write_rank_view_json(v, s, depth);
        return s.str();
    };
    std::vector<RankView> views;
    write_job(tmp.path() / "three", straggler_job());
    views.push_back(compare_ranks(rank_figures(load_run({tmp.path() / "three"}), "")));
    const fs::path job = write_large_job(tmp.path() / "job", 40);
    views.push_back(compare_ranks(rank_figures(load_run({job}), "")));
    // Names a trace may hold: not UTF-8, quotes, control characters (replaced and escaped the same way).
    std::vector<RankFigures> odd = views.front().ranks;
    odd[1].host = "n\xC3\xB6" "de\xFF\"\n";
    odd[1].label = "rank 1 @ " + odd[1].host;
    views.push_back(compare_ranks(odd));
    views.push_back(compare_ranks({odd[0]}));  // one rank: no straggler, no spread
    for (const RankView& v : views) {
        const json whole = rank_view_to_json(v);
        CHECK(streamed(v, 0) == bytes(whole));
        CHECK("{\n  \"a\": " + streamed(v, 1) + "\n}" == bytes(json{{"a", whole}}));
        CHECK("{\n  \"a\": {\n    \"b\": " + streamed(v, 2) + "\n  }\n}" == bytes(json{{"a", {{"b", whole}}}}));
    }
    // The commands: what they write is what nlohmann writes of the document they write, key for key.
    for (const std::string& cmd : {"ranks --format json " + job.string(), "analyze --format json " + job.string()}) {
        const std::string out = run_cli(cmd);
        INFO(cmd);
        CHECK(out == bytes(json::parse(out)) + "\n");
    }
}

TEST_CASE("ranks: damaged rank figures are refused with exit 2 and the file named", "[ranks][merge]") {
    TempDir tmp;
    std::ofstream(tmp.file("bad.json")) << R"({"ranks": [{"schema_version": 1, "rank": "one"}]})";
    std::ofstream(tmp.file("other.json")) << R"({"something": 1})";
    for (const char* name : {"bad.json", "other.json"}) {
        std::string cmd = std::string(GPROF_REPORT_EXE) + " ranks " + tmp.file(name) + " 2>&1";
        std::FILE* p = ::popen(cmd.c_str(), "r");
        REQUIRE(p);
        std::string out;
        char buf[1024];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        CHECK(WEXITSTATUS(::pclose(p)) == 2);
        CHECK(out.find(name) != std::string::npos);
    }
}

TEST_CASE("identity: ranks with the same pid on different hosts stay apart in every report", "[ranks][identity]") {
    TempDir tmp;
    write_job(tmp.path(), straggler_job());
    Run run = load_run({tmp.path()});
    REQUIRE(run.processes.size() == 3);
    CHECK(host_count(run) == 3);
    CHECK(process_key(run.processes[0].header) == ProcessKey{"nodeA", "boot-nodeA", 4026531836, 7});
    CHECK(process_key(run.processes[1].header) == ProcessKey{"nodeB", "boot-nodeB", 4026531836, 7});

    // Summary: one line per rank, labelled; JSON keys for CI.
    std::string summary = run_cli("summary " + tmp.path().string());
    for (const char* label : {"rank 0 @ nodeA (pid 7): ", "rank 1 @ nodeB (pid 7): ", "rank 2 @ nodeC (pid 7): "})
        CHECK(summary.find(label) != std::string::npos);
    CHECK(summary.find("3 processes, 3 devices") != std::string::npos);
    json sj = json::parse(run_cli("summary --format json " + tmp.path().string()))["reports"]["summary"]["header"];
    REQUIRE(sj["processes"].size() == 3);
    CHECK(sj["processes"][1]["label"] == "rank 1 @ nodeB (pid 7)");
    CHECK(sj["processes"][1]["rank"] == 1);
    CHECK(sj["processes"][1]["hostname"] == "nodeB");
    CHECK(sj["processes"][1]["boot_id"] == "boot-nodeB");

    // Timeline: one process group per rank, labelled, with pids that do not collide.
    fs::path tl = tmp.path() / "tl.json";
    run_cli("timeline -o " + tl.string() + " " + tmp.path().string());
    std::ifstream in(tl);
    json t = json::parse(in);
    std::map<std::string, int64_t> process_pids;
    for (const auto& e : t["traceEvents"])
        if (e.value("ph", "") == "M" && e.value("name", "") == "process_name")
            process_pids[e["args"]["name"].get<std::string>()] = e["pid"].get<int64_t>();
    REQUIRE(process_pids.count("rank 0 @ nodeA (pid 7)"));
    REQUIRE(process_pids.count("rank 1 @ nodeB (pid 7)"));
    REQUIRE(process_pids.count("rank 2 @ nodeC (pid 7)"));
    std::set<int64_t> distinct;
    for (const auto& [name, pid] : process_pids) distinct.insert(pid);
    CHECK(distinct.size() == process_pids.size());
    CHECK(process_pids["rank 1 @ nodeB (pid 7)"] == timeline::kHostPidBase + 1 * timeline::kHostPidStride + 7);

    // The Perfetto protobuf names the process tracks the same way (the label is the process name's bytes).
    fs::path pf = tmp.path() / "tl.pftrace";
    run_cli("timeline -o " + pf.string() + " " + tmp.path().string());
    std::ifstream pin(pf, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(pin)), std::istreambuf_iterator<char>());
    for (const char* label : {"rank 0 @ nodeA (pid 7)", "rank 1 @ nodeB (pid 7)", "rank 2 @ nodeC (pid 7)"})
        CHECK(bytes.find(label) != std::string::npos);
}

TEST_CASE("clock: on one host the merged axis is each process's own, and --clock-offset moves one host",
          "[ranks][clock]") {
    TempDir tmp;
    // Two processes of one host that started 3.25 s apart: different anchors, one clock.
    auto c = [](int) -> uint64_t { return 10; };
    RankSpec a{0, "nodeA", 7, c, c}, b{1, "nodeA", 8, c, c};
    b.realtime_shift_ns = 3'250'000'000;
    write_rank(tmp.path() / "a", a);
    write_rank(tmp.path() / "b", b);
    Run merged = load_run({tmp.path() / "a", tmp.path() / "b"});
    REQUIRE(merged.processes.size() == 2);
    for (const fs::path& dir : {tmp.path() / "a", tmp.path() / "b"}) {
        Run alone = load_run({dir});
        const ProcessTrace& p = alone.processes[0];
        const ProcessTrace* m = nullptr;
        for (const auto& q : merged.processes)
            if (q.pid() == p.pid()) m = &q;
        REQUIRE(m);
        REQUIRE(p.nvtx.size() == m->nvtx.size());
        for (size_t i = 0; i < p.nvtx.size(); ++i) {
            // The process's own axis: its realtime anchor plus the time since it on its trace clock.
            int64_t own = p.header.clock.realtime_ns + int64_t(p.nvtx[i].start - p.header.clock.trace_ns);
            CHECK(m->to_run_ns(m->nvtx[i].start) + merged.base_realtime_ns == own);
        }
    }
    // b started 3.25 s after a: so does its first step on the merged axis.
    auto fig = rank_figures(merged, "");
    REQUIRE(fig.size() == 2);
    CHECK(fig[1].steps[0].start_ns - fig[0].steps[0].start_ns == 3'250'000'000);

    // --clock-offset nodeB=-2.5ms: every time of nodeB's traces moves by exactly that; nodeA's stay.
    TempDir two;
    auto dirs = write_job(two.path(), straggler_job());
    Filter f;
    parse_clock_offset("nodeB=-2.5ms", f);
    CHECK(f.clock_offsets.at("nodeB") == -2'500'000);
    LoadOptions lo;
    lo.filter = f;
    auto plain = rank_figures(load_run({two.path()}), "");
    auto moved = rank_figures(load_run({two.path()}, lo), "");
    CHECK(moved[1].steps[3].start_ns - plain[1].steps[3].start_ns == -2'500'000);
    CHECK(moved[0].steps[3].start_ns == plain[0].steps[3].start_ns);
    CHECK(moved[1].first_ns - plain[1].first_ns == -2'500'000);
    // The same correction applies to merged figures files.
    fs::path fb = two.path() / "b.json";
    run_cli("ranks --format json -o " + fb.string() + " " + dirs[1].string());
    json jb = json::parse(run_cli("ranks --format json --clock-offset nodeB=-2500us " + fb.string()));
    CHECK(jb["ranks"][0]["first_ns"].get<int64_t>() + jb["ranks"][0]["steps"]["start_after_first_ns"][3].get<int64_t>() ==
          moved[1].steps[3].start_ns);

    Filter bad;
    CHECK_THROWS_WITH(parse_clock_offset("nodeB", bad), Catch::Contains("expected HOST=NS"));
    CHECK_THROWS_WITH(parse_clock_offset("nodeB=soon", bad), Catch::Contains("signed number"));
    CHECK_THROWS_WITH(parse_clock_offset("nodeB=5h", bad), Catch::Contains("signed number"));
}

// Two containers on one host (one host name, one boot id), each app pid 2: the pid namespace keeps them apart; in
// traces before 1.6 (no pid namespace) their ranks do.
TEST_CASE("identity: processes that share host, boot id and pid stay apart by pid namespace, or by rank",
          "[ranks][identity]") {
    auto write_pod = [](const fs::path& dir, uint64_t pid_ns, int64_t rank) {
        fs::create_directories(dir);
        static std::vector<std::string> keep;
        tr::HeaderInfo h = test_header(2);
        keep.push_back("node07");
        h.hostname = keep.back().c_str();
        h.boot_id = "boot-node07";
        h.pid_ns = pid_ns;
        write_trace((dir / "train.2.gprof").string(), [&](tr::TraceWriter& w) {
            if (rank >= 0) {
                tr::Role role;
                role.rank = rank;
                role.world_size = 2;
                role.variables = w.intern(("RANK=" + std::to_string(rank)).c_str());
                w.add(role);
            }
            Synth s(w);
            for (int i = 0; i < 3; ++i) s.range("step", i * 10 * kMs, (i * 10 + 8) * kMs, 0, 2);
            s.kernel("k", kMs, 2 * kMs, 7, 1, 1, kMs / 2, kMs);
        }, true, h);
    };
    {  // 1.6: no ranks, two pid namespaces
        TempDir tmp;
        write_pod(tmp.path() / "a", 4026532001, -1);
        write_pod(tmp.path() / "b", 4026532002, -1);
        Run run = load_run({tmp.path()});
        REQUIRE(run.processes.size() == 2);
        std::vector<ProcessKey> keys;
        for (const auto& p : run.processes) keys.push_back(process_key(p.header, process_rank(p)));
        CHECK(pid_spaces(keys).count == 2);
        std::string summary = run_cli("summary --full " + tmp.path().string());  // with nvprof's NVTX block
        CHECK(summary.find("  app @ node07 (pid 2): ") != std::string::npos);
        size_t threads = 0;
        for (size_t at = 0; (at = summary.find("  Thread ", at)) != std::string::npos; ++at) ++threads;
        CHECK(threads == 2);  // one NVTX block per process, not one for pid 2
        fs::path tl = tmp.path() / "tl.json";
        run_cli("timeline -o " + tl.string() + " " + tmp.path().string());
        json t = json::parse(std::ifstream(tl));
        std::set<int64_t> pids;
        for (const auto& e : t["traceEvents"])
            if (e.value("ph", "") == "M" && e.value("name", "") == "process_name" &&
                e["args"]["name"].get<std::string>() == "app @ node07 (pid 2)")
                pids.insert(e["pid"].get<int64_t>());
        CHECK(pids.size() == 2);  // two process groups of the same label, apart
    }
    {  // before 1.6 (pid namespace 0): the ranks split the pid space
        TempDir tmp;
        write_pod(tmp.path() / "a", 0, 0);
        write_pod(tmp.path() / "b", 0, 1);
        Run run = load_run({tmp.path()});
        std::vector<ProcessKey> keys;
        for (const auto& p : run.processes) keys.push_back(process_key(p.header, process_rank(p)));
        PidSpaces spaces = pid_spaces(keys);
        CHECK(spaces.count == 2);
        CHECK(spaces.of[0] != spaces.of[1]);
        auto figures = rank_figures(run, "");
        REQUIRE(figures.size() == 2);
        CHECK(figures[1].label == "rank 1 @ node07 (pid 2)");
    }
    {  // one pid namespace, distinct pids: one space, real pids, no labels (as always)
        std::vector<ProcessKey> keys{{"h", "b", 1, 10, -1}, {"h", "b", 1, 11, -1}};
        CHECK(pid_spaces(keys).count == 1);
    }
}

TEST_CASE("summary: above 32 ranks the ranks with nothing to say fold into one line, one with news keeps its own",
          "[ranks][summary]") {
    TempDir tmp;
    auto c = [](int) -> uint64_t { return 10; };
    std::vector<RankSpec> job;
    for (int64_t r = 0; r < 40; ++r) job.push_back({r, "node" + std::to_string(r / 8), 7, c, c});
    write_job(tmp.path(), job);
    // Rank 17's trace is cut short: it keeps its line.
    fs::path cut = tmp.path() / "run.node2.17" / "train.7.gprof";
    fs::resize_file(cut, fs::file_size(cut) - 10);
    std::string summary = run_cli("summary --ignore-damage " + tmp.path().string());
    CHECK(summary.find("  39 ranks (0-16, 18-39) on 5 hosts, ") != std::string::npos);
    CHECK(summary.find("  rank 17 @ node2 (pid 7): ") != std::string::npos);
    CHECK(summary.find("  rank 18 @ node2 (pid 7): ") == std::string::npos);
    // --all-processes lists every one.
    std::string all = run_cli("summary --ignore-damage --all-processes " + tmp.path().string());
    CHECK(all.find("  rank 18 @ node2 (pid 7): ") != std::string::npos);
    CHECK(all.find(" ranks (0-") == std::string::npos);
    CHECK(rank_ranges({0, 1, 2, 4, 6, 7}) == "0-2, 4, 6-7");
    CHECK(rank_ranges({1, 3, 5, 7, 9, 11, 13, 15}, 3) == "1, 3, 5, ...");
}

TEST_CASE("identity: traces of format 1.2 (no boot id) and runs without ranks keep their single-host names",
          "[ranks][identity]") {
    // The real H100 torch-train run: one host, no rank: no labels, no ranks section.
    Run run = load_run({fs::path(GPROF_SOURCE_DIR) / "examples/torch-train"});
    REQUIRE(!run.processes.empty());
    CHECK(host_count(run) == 1);
    for (const auto& p : run.processes) CHECK(process_label(p.header, process_rank(p), false).empty());
    CHECK(rank_figures(run, "").size() <= 1);
}

// The Perfetto protobuf of a run of three hosts whose ranks share pid 7: protoc decodes it, the rules Perfetto relies
// on hold (one uuid per thread, tracks described once, ...) and it holds every slice of the JSON timeline
// (tests/report/check_perfetto.py), so no rank's events fold into another's.
TEST_CASE("identity: the Perfetto timeline of ranks that share a pid keeps them apart", "[ranks][identity][perfetto]") {
    TempDir tmp;
    write_job(tmp.path() / "job", straggler_job());
    PerfettoCheck check = check_perfetto((tmp.path() / "job").string(), tmp.file("check.txt"));
    INFO(check.output);
    CHECK(check.exit_code == 0);
    CHECK(check.output.find(" slices,") != std::string::npos);
}

TEST_CASE("inputs: a directory holding the run directories, up to three levels down, stands for them", "[ranks]") {
    TempDir tmp;
    write_job(tmp.path() / "jobs" / "4711", straggler_job());  // jobs/4711/run.nodeA.0/train.7.gprof, ...
    auto traces = expand_inputs({tmp.path()});
    REQUIRE(traces.size() == 3);
    CHECK(traces[0].parent_path().filename() == "run.nodeA.0");
    CHECK(traces[2].parent_path().filename() == "run.nodeC.2");
    // Deeper than that is not looked into: an empty directory tree is still an error, with its name.
    TempDir deep;
    write_job(deep.path() / "a" / "b" / "c", straggler_job());
    CHECK_THROWS_WITH(expand_inputs({deep.path()}), Catch::Contains("holds no *.gprof traces"));
}
