// Issue 30, "the first hour": what a new user of gprof-report meets first, each case a finding of that issue. One
// behaviour per concept in every subcommand (--force, -o, errors), no false alarm, the nsys habits.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "html/html.h"
#include "model/aggregate.h"
#include "report_cli.h"
#include "report_fixture.h"
#include "reports/reports.h"
#include "timeline/timeline.h"

using namespace gprof::testing;
using namespace gprof::report;
namespace fs = std::filesystem;
namespace tr = gprof::trace;

namespace {

// A run whose program left two NVTX ranges open at exit, as the collector writes it: the ranges with end 0 and a
// Dropped record of source NvtxOverflow counting them (collector/nvtx/recorder.cpp). Nothing was lost.
void write_open_ranges_run(TempDir& dir, uint32_t features = 0) {
    tr::HeaderInfo h = test_header(4343);
    h.features = features;
    write_trace(dir.file("app.4343.gprof"), [](tr::TraceWriter& w) {
        tr::Nvtx open;
        open.start = kT0 + 1'000;
        open.end = 0;
        open.tid = 100;
        open.end_tid = 100;
        open.name = w.intern("serve");
        w.add(open);
        open.start = kT0 + 2'000;
        open.depth = 1;
        open.name = w.intern("request");
        w.add(open);
        tr::Nvtx closed = open;
        closed.start = kT0 + 3'000;
        closed.end = kT0 + 9'000;
        closed.depth = 0;
        closed.name = w.intern("warm-up");
        w.add(closed);
        tr::Dropped d;
        d.timestamp = kT0 + 10'000;
        d.count = 2;
        d.source = tr::DropSource::NvtxOverflow;
        w.add(d);
    }, true, h);
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("first hour: NVTX ranges open at exit are 'never ended', not dropped records", "[first_hour]") {
    TempDir dir;
    write_open_ranges_run(dir);
    auto r = run_report(dir.path().string(), dir);
    CHECK(r.status == 0);
    CHECK(r.out.find(", 0 dropped") != std::string::npos);
    CHECK(r.out.find("records were dropped") == std::string::npos);
    CHECK(r.err.find("records were dropped") == std::string::npos);
    CHECK(r.out.find("note: app.4343.gprof: 2 NVTX ranges never ended") != std::string::npos);
    CHECK(r.out.find("[dropped_records]") == std::string::npos);
    CHECK(r.out.find("GPROF_BUFFER_MB (or gprof-run's buffer option)") == std::string::npos);

    auto json = run_report("--format json " + dir.path().string(), dir);
    REQUIRE(json.status == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["reports"]["summary"]["header"]["dropped"] == 0);
    CHECK(j["warnings"].empty());
    REQUIRE(j["notes"].size() == 1);

    // report.html: no red box for it (nothing about the recording is wrong).
    std::string page = html::render_run_page(std::vector<fs::path>{dir.path()}, Filter{});
    CHECK(page.find("id=\"warnings\"") == std::string::npos);
}

TEST_CASE("first hour: report.html's red box says each fact once", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);  // 5 records dropped by CUPTI, one range never ended
    std::string page = html::render_run_page(std::vector<fs::path>{dir.path()}, Filter{});
    auto box = page.substr(page.find("id=\"warnings\""));
    box = box.substr(0, box.find("</div>"));
    CHECK(count(box, "5 records were dropped") == 1);
    CHECK(count(box, "dropped") == 1);
}

TEST_CASE("first hour: -t nvtx says CUDA was not traced, not that the program made no CUDA calls", "[first_hour]") {
    TempDir dir;
    write_open_ranges_run(dir, tr::kFeatureCudaNotTraced);
    auto r = run_report(dir.path().string(), dir);
    CHECK(r.out.find("CUDA was not traced") != std::string::npos);
    CHECK(r.out.find("made no CUDA calls") == std::string::npos);
}

TEST_CASE("first hour: --force means one thing in every subcommand, nsys's spellings included", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    const std::string run = dir.path().string();
    struct Sub {
        std::string args, file;
    };
    const Sub subs[] = {{"summary -o", "s.txt"},       {"timeline -o", "t.json"}, {"html -o", "r.html"},
                        {"export -o", "e.sqlite"},      {"analyze -o", "a.txt"},   {"diff " + run + " -o", "d.txt"},
                        {"stats -o", "st.txt"}};
    for (const auto& s : subs) {
        INFO(s.args);
        std::string out = dir.file(s.file);
        { std::ofstream(out) << "precious\n"; }
        auto refused = run_report(s.args + " " + out + " " + run, dir);
        CHECK(refused.status == 2);
        CHECK(refused.err.find("gprof-report: error: ") == 0);
        CHECK(refused.err.find("--force") != std::string::npos);
        CHECK(slurp(out) == "precious\n");
        for (const char* force : {"--force", "--force-overwrite", "--force-overwrite=true", "--force-overwrite true"}) {
            INFO(force);
            { std::ofstream(out) << "precious\n"; }
            auto replaced = run_report(s.args + " " + out + " " + force + " " + run, dir);
            CHECK(replaced.status == 0);
            CHECK(slurp(out) != "precious\n");
        }
        { std::ofstream(out) << "precious\n"; }
        CHECK(run_report(s.args + " " + out + " --force-overwrite false " + run, dir).status == 2);
    }
    // export's old --force-overwrite took the next argument for its value ("inputs is required").
    auto e = run_report("export --force-overwrite " + run + " -o " + dir.file("x.sqlite"), dir);
    CHECK(e.status == 0);
}

TEST_CASE("first hour: errors are one gprof-report line, a typo gets the nearest name", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    const std::string run = dir.path().string();
    auto r = run_report("cuda_gpu_kern_sun " + run, dir);
    CHECK(r.status == 2);
    CHECK(r.err.find("gprof-report: error: unknown report 'cuda_gpu_kern_sun'; did you mean 'cuda_gpu_kern_sum'?") == 0);
    r = run_report("nvtxsun " + run, dir);
    CHECK(r.err.find("did you mean 'nvtxsum'?") != std::string::npos);
    r = run_report("diff " + run, dir);  // CLI11 said "new is required"
    CHECK(r.status == 2);
    CHECK(r.err.find("gprof-report: error: missing NEW") == 0);
    r = run_report("timeline", dir);
    CHECK(r.err.find("gprof-report: error: missing INPUTS") == 0);
    r = run_report("html " + run + " --bogus", dir);
    CHECK(r.err.find("gprof-report: error: ") == 0);
}

TEST_CASE("first hour: the same run given twice is counted once", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    const std::string run = dir.path().string();
    auto once = run_report("cuda_api_sum -f csv " + run, dir);
    auto twice = run_report("cuda_api_sum -f csv " + run + " " + run + "/ " + dir.file("app.4242.gprof"), dir);
    REQUIRE(once.status == 0);
    CHECK(twice.out == once.out);
}

TEST_CASE("first hour: --process with a pid that is not there says so", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    for (const std::string sub : {"", "timeline -o x.json ", "export -o x.sqlite "}) {
        INFO(sub);
        auto r = run_report(sub + "--process 999999 " + dir.path().string(), dir);
        CHECK(r.status == 2);
        CHECK(r.err.find("--process 999999: no such process in the run (its processes: 4242)") != std::string::npos);
    }
    CHECK(run_report("--process 4242 " + dir.path().string(), dir).status == 0);
}

TEST_CASE("first hour: a --time-range of bare numbers that selects nothing hints at the units", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    auto r = run_report("cuda_api_sum --time-range 1:2 " + dir.path().string(), dir);
    CHECK(r.status == 0);
    CHECK(r.err.find("--time-range selected no record: a number without a unit is nanoseconds") != std::string::npos);
    r = run_report("cuda_api_sum --time-range 0s: " + dir.path().string(), dir);
    CHECK(r.err.find("--time-range") == std::string::npos);
}

TEST_CASE("first hour: every time printed says where +0 is", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    auto r = run_report(dir.path().string(), dir);
    CHECK(r.out.find("times count from the program's start (+0); records from +") != std::string::npos);
    CHECK(r.out.find("in use at +") != std::string::npos);
}

TEST_CASE("first hour: nsys stats RUN, and csv of several reports as one file each", "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    const std::string run = dir.path().string();
    auto r = run_report("stats " + run, dir);
    REQUIRE(r.status == 0);
    for (const auto& name : stats_report_names()) CHECK(r.out.find("(" + name + ")") != std::string::npos);
    r = run_report("stats -f csv -o " + dir.file("out") + " " + run, dir);
    REQUIRE(r.status == 0);
    for (const auto& name : stats_report_names()) {
        INFO(name);
        std::string csv = slurp(dir.file("out_" + name + ".csv"));
        CHECK_FALSE(csv.empty());
        CHECK(csv.find("**") == std::string::npos);  // one table, no decoration
    }
    r = run_report("cuda_api_sum nvtx_sum -f csv -o " + dir.file("two.csv") + " " + run, dir);
    REQUIRE(r.status == 0);
    CHECK(fs::exists(dir.file("two_cuda_api_sum.csv")));
    CHECK(fs::exists(dir.file("two_nvtx_sum.csv")));
    r = run_report("cuda_api_sum nvtx_sum -f csv " + run, dir);  // to stdout: one table only
    CHECK(r.status == 2);
    CHECK(r.err.find("-o PREFIX") != std::string::npos);
}

TEST_CASE("first hour: the timeline folds helper processes as the summary does, and warns of no natural overlap",
          "[first_hour]") {
    TempDir dir;
    write_small_run(dir);
    // 40 helpers the program started (a compiler driver's ptxas, shells): quiet, ended normally.
    for (int i = 0; i < 40; ++i) {
        static const char* sh[] = {"sh"};
        static const char* ptxas[] = {"ptxas"};
        tr::HeaderInfo h = test_header(5000 + i);
        h.ppid = 4242;
        h.argv = i % 2 ? sh : ptxas;
        h.argc = 1;
        write_trace(dir.file("helper." + std::to_string(5000 + i) + ".gprof"), [](tr::TraceWriter&) {}, true, h);
    }
    Run run = load_run({dir.path()});
    std::string json;
    TimelineStats st = timeline_to_string(run, json);
    auto j = nlohmann::json::parse(json);
    size_t process_names = 0;
    bool folded = false;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name") {
            std::string name = e["args"]["name"];
            if (name.find("helper processes") != std::string::npos) folded = true;
            else if (name.find("ptxas") != std::string::npos || name.find("sh (") == 0) ++process_names;
        }
    CHECK(folded);
    CHECK(process_names == 0);
    TimelineOptions all;
    all.all_processes = true;
    std::string every;
    timeline_to_string(run, every, all);
    CHECK(every.find("40 helper processes") == std::string::npos);
    (void)st;
}

// A valid program's timeline: a stream synchronisation spans the host's wait while a copy runs on that stream, and
// CUPTI's overhead records overlap one another. Extra lanes, not a warning (issue 30).
TEST_CASE("first hour: the timeline does not warn of overlaps that are in the nature of the records", "[first_hour]") {
    TempDir dir;
    write_trace(dir.file("app.4444.gprof"), [](tr::TraceWriter& w) {
        tr::Memcpy m;
        m.start = kT0 + 20'000;
        m.end = kT0 + 60'000;
        m.stream = 7;
        m.bytes = 1 << 20;
        w.add(m);
        tr::Kernel k;
        k.start = kT0 + 70'000;
        k.end = kT0 + 90'000;
        k.stream = 7;
        k.name = w.intern("k");
        w.add(k);
        tr::Sync sync;
        sync.start = kT0 + 10'000;
        sync.end = kT0 + 95'000;
        sync.stream = 7;
        w.add(sync);
        for (int i = 0; i < 2; ++i) {
            tr::Overhead o;
            o.start = kT0 + 5'000 + i * 1'000;
            o.end = kT0 + 50'000;
            w.add(o);
        }
    }, true, test_header(4444));
    Run run = load_run({dir.path()});
    std::string json;
    TimelineStats st = timeline_to_string(run, json);
    CHECK(st.overflow_slices == 0);
    for (const auto& w : st.warnings) CHECK(w.find("overlapped") == std::string::npos);
    CHECK(json.find("(overlap 1)") != std::string::npos);  // still drawn apart, on a lane of their own
}
