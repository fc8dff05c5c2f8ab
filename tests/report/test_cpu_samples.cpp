// The host-side reports (issue 35) on a crafted trace with known answers: cpu_sample_sum counts sampling periods
// (self: the innermost frame; total: anywhere in the stack, once per sample, recursion included), --by line splits a
// function by line, osrt_sum has nsys's figures per call name and the heaviest call site, and the folded export
// writes one line per stack with the process and thread first. Python frames only, so no symbolisation is involved.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>

#include "export/folded.h"
#include "model/model.h"
#include "report_fixture.h"
#include "reports/reports.h"

using namespace gprof::report;
using namespace gprof::testing;
namespace tr = gprof::trace;
using nlohmann::json;

namespace {

constexpr uint64_t kT0 = 1'000'000'000;

// Thread 7 runs main -> step (train.py) and is sampled: 6 samples in step at line 12 (one of them standing for 4
// periods: the timer fired late), 2 in step at line 13, 1 in a recursive helper (main -> walk -> walk), 1 in main
// itself: 13 periods. It blocks in read twice (3 ms and 1 ms, the first from step) and in poll once (2 ms).
void write_host_trace(const std::string& path) {
    write_trace(
        path,
        [](tr::TraceWriter& w) {
            w.add(tr::Thread{7, w.intern("python3")});
            uint32_t file = w.intern("/srv/train.py");
            w.add(tr::PyFrame{1, file, w.intern("main"), 40});
            w.add(tr::PyFrame{2, file, w.intern("step"), 12});
            w.add(tr::PyFrame{3, file, w.intern("step"), 13});
            w.add(tr::PyFrame{4, file, w.intern("walk"), 20});
            auto stack = [&](uint32_t id, std::initializer_list<uint32_t> frames) {
                tr::PyStack ps;
                ps.id = id;
                ps.frame_count = 0;
                for (uint32_t f : frames) ps.frames[ps.frame_count++] = f;
                w.add(ps);
            };
            stack(1, {2, 1});     // step:12 <- main
            stack(2, {3, 1});     // step:13 <- main
            stack(3, {4, 4, 1});  // walk <- walk <- main
            stack(4, {1});        // main
            uint64_t t = kT0;
            auto sample = [&](uint32_t py_stack, uint32_t periods) {
                tr::CpuSample s;
                s.timestamp = t += 1'000'000;
                s.tid = 7;
                s.py_stack = py_stack;
                s.periods = periods;
                s.period_ns = 1'000'000;
                w.add(s);
            };
            for (int i = 0; i < 5; ++i) sample(1, 1);
            sample(1, 4);
            sample(2, 1);
            sample(2, 1);
            sample(3, 1);
            sample(4, 1);
            auto call = [&](const char* name, uint64_t start_ms, uint64_t ms, uint32_t py_stack) {
                tr::OsRuntimeCall c;
                c.start = kT0 + start_ms * 1'000'000;
                c.end = c.start + ms * 1'000'000;
                c.tid = 7;
                c.name = w.intern(name);
                c.py_stack = py_stack;
                w.add(c);
            };
            call("read", 20, 3, 1);
            call("read", 30, 1, 0);
            call("poll", 40, 2, 4);
        },
        true, test_header(4242));
}

json report_json(const std::string& trace, const std::string& report, SampleKey by = SampleKey::Function) {
    ReportOptions o;
    o.reports = {report};
    o.format = OutputFormat::Json;
    o.sample_key = by;
    std::ostringstream out, err;
    REQUIRE(run_reports({trace}, o, out, err) == 0);
    INFO(err.str());
    return json::parse(out.str())["reports"][report]["rows"];
}

const json& row(const json& rows, const std::string& name, const std::string& location_part = "") {
    for (const auto& r : rows)
        if (r["name"] == name && r["location"].get<std::string>().find(location_part) != std::string::npos) return r;
    FAIL("no row " << name << " " << location_part << " in " << rows.dump());
    static json none;
    return none;
}

}  // namespace

TEST_CASE("cpu_sample_sum: periods, self and total (recursion counted once), by function and by line",
          "[report][sampling]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_host_trace(trace);

    json rows = report_json(trace, "cpu_sample_sum");
    REQUIRE(rows.size() == 3);  // step, walk, main
    const json& step = row(rows, "step");
    CHECK(step["self_samples"] == 11);  // 5 + 4 at line 12, 2 at line 13
    CHECK(step["total_samples"] == 11);
    CHECK(step["self_percent"].get<double>() == Approx(100.0 * 11 / 13));
    const json& walk = row(rows, "walk");
    CHECK(walk["self_samples"] == 1);
    CHECK(walk["total_samples"] == 1);  // walk <- walk: once
    const json& main = row(rows, "main");
    CHECK(main["self_samples"] == 1);
    CHECK(main["total_samples"] == 13);
    CHECK(main["total_percent"].get<double>() == Approx(100.0));
    CHECK(rows[0]["name"] == "step");  // sorted by self

    json lines = report_json(trace, "cpu_sample_sum", SampleKey::Line);
    CHECK(row(lines, "step", "train.py:12")["self_samples"] == 9);
    CHECK(row(lines, "step", "train.py:13")["self_samples"] == 2);
}

TEST_CASE("osrt_sum: nsys's figures per call, the heaviest call site", "[report][sampling]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_host_trace(trace);
    json rows = report_json(trace, "osrt_sum");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["name"] == "read");  // by total time
    CHECK(rows[0]["num_calls"] == 2);
    CHECK(rows[0]["total_time_ns"] == 4'000'000);
    CHECK(rows[0]["max_ns"] == 3'000'000);
    CHECK(rows[0]["min_ns"] == 1'000'000);
    CHECK(rows[0]["time_percent"].get<double>() == Approx(100.0 * 4 / 6));
    CHECK(rows[0]["top_call_site"].get<std::string>().find("train.py:12") != std::string::npos);
    CHECK(rows[1]["name"] == "poll");
    CHECK(rows[1]["top_call_site"].get<std::string>().find("train.py:40") != std::string::npos);
}

TEST_CASE("folded stacks: one line per stack, process and thread first, outermost frame first",
          "[report][sampling]") {
    TempDir dir;
    std::string trace = dir.file("app.4242.gprof");
    write_host_trace(trace);
    Run run = load_run({trace});
    std::ostringstream out;
    write_folded(run, out);
    std::string text = out.str();
    INFO(text);
    std::istringstream in(text);
    std::map<std::string, long> counts;
    for (std::string line; std::getline(in, line);) {
        auto space = line.rfind(' ');
        REQUIRE(space != std::string::npos);
        counts[line.substr(0, space)] += std::stol(line.substr(space + 1));
    }
    long all = 0;
    for (const auto& [stack, n] : counts) all += n;
    CHECK(all == 13);
    bool found = false;
    for (const auto& [stack, n] : counts) {
        if (stack.find("main (/srv/train.py:40);step (/srv/train.py:12)") == std::string::npos) continue;
        found = true;
        CHECK(n == 9);
        CHECK(stack.find("(pid 4242)") < stack.find("(tid 7)"));
        CHECK(stack.find("(tid 7)") < stack.find("main (/srv/train.py:40)"));
    }
    CHECK(found);
}
