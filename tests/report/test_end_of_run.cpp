// finish_run(): what gprof-run calls after the app ends. Never throws, always explains.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden_util.h"
#include "end_of_run/end_of_run.h"
#include "report_fixture.h"
#include "reports/reports.h"

using namespace gprof::report;
using namespace gprof::testing;

namespace {

// What gprof-run asks for in a run directory, less report.html (its own tests), and with the timeline at `timeline`.
std::vector<OutputRequest> summary_and_timeline(const std::filesystem::path& dir, const std::filesystem::path& timeline) {
    EndOfRunChoice c;
    c.left_out = {"html"};
    c.paths["timeline"] = timeline;
    return end_of_run_outputs(dir, c);
}

OutputRequest only(const std::string& name, const std::filesystem::path& path) {
    return {name, path, {false, FileMode::Private}};
}

std::string read(const std::filesystem::path& p) {
    std::ifstream s(p);
    return std::string((std::istreambuf_iterator<char>(s)), {});
}

}  // namespace

TEST_CASE("finish_run: summary, summary.txt and timeline", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::Brief, .summary_out = &out,
                      .outputs = summary_and_timeline(dir.path(), dir.path() / "timeline.json")};
    auto r = finish_run(o);
    CHECK(r.ok);
    REQUIRE(r.traces.size() == 1);
    REQUIRE(r.path_of("summary"));
    REQUIRE(r.path_of("timeline"));
    // The analysis section is the analysis code's output, tested there: cut it from the golden.
    std::string text_out = out.str();
    if (auto pos = text_out.find("\nAnalysis"); pos != std::string::npos) text_out.resize(pos + 1);
    check_golden("end_of_run_brief.txt", text_out);
    std::ifstream t(*r.path_of("timeline"));
    CHECK(nlohmann::json::parse(t).contains("traceEvents"));
    bool dropped_warned = false;
    for (const auto& w : r.warnings) dropped_warned |= w.find("dropped") != std::string::npos;
    CHECK(dropped_warned);
}

// Issue 30: summary.txt, `gprof-report RUN` and the summary printed at the end of the run are one text: the same
// sections (NVTX rows, Analysis), the printed one cut to kBriefRows rows per section.
TEST_CASE("finish_run: summary.txt, the printed summary and gprof-report's summary are the same text", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream printed;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::Brief, .summary_out = &printed,
                      .outputs = {only("summary", dir.path() / "summary.txt")}};
    auto r = finish_run(o);
    REQUIRE(r.path_of("summary"));
    std::string file = read(*r.path_of("summary"));
    CHECK(file.find("NVTX ranges:") != std::string::npos);
    CHECK(file.find("\nAnalysis: ") != std::string::npos);
    CHECK(file.find("collector info:") == std::string::npos);
    CHECK(file == printed.str());  // fewer rows than kBriefRows per section: the cut changes nothing

    auto report = [&](size_t rows) {
        ReportOptions ro;
        ro.brief_rows = rows;
        auto traces = find_traces(dir.path());
        ro.summary_analysis = [&](const Aggregate& agg) { return summary_analysis_section(agg, traces, Filter{}); };
        std::ostringstream out, err;
        run_reports(traces, ro, out, err);
        return out.str();
    };
    CHECK(report(0) == file);
    CHECK(report(kBriefRows) == printed.str());
}

TEST_CASE("finish_run: a summary without any row has no empty 'Profiling result:' table", "[end_of_run]") {
    TempDir dir;
    write_trace(dir.file("app.90.gprof"), [](gprof::trace::TraceWriter&) {}, true, test_header(90));
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary_out = &out};
    finish_run(o);
    CHECK(out.str().find("Profiling result:") == std::string::npos);
    CHECK(out.str().find("no CUDA activity was recorded") != std::string::npos);
}

TEST_CASE("finish_run: full summary and none", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::Full, .summary_out = &out};
    auto r = finish_run(o);
    CHECK(r.ok);
    CHECK_FALSE(r.path_of("summary"));
    CHECK(out.str().find("NVTX result:") != std::string::npos);
    std::ostringstream none;
    o.summary = SummaryMode::None;
    o.summary_out = &none;
    finish_run(o);
    CHECK(none.str().empty());
}

TEST_CASE("finish_run: empty, missing and unwritable run directories never throw", "[end_of_run]") {
    TempDir dir;
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary_out = &out};
    auto r = finish_run(o);
    CHECK(r.traces.empty());
    CHECK_FALSE(r.warnings.empty());
    CHECK(out.str().find("no trace") != std::string::npos);

    o.run_dir = dir.path() / "does-not-exist";
    CHECK_NOTHROW(finish_run(o));

    write_small_run(dir);
    o.run_dir = dir.path();
    o.outputs = {only("timeline", dir.path() / "no-such-dir" / "t.json")};
    auto bad = finish_run(o);
    CHECK_FALSE(bad.ok);
    CHECK_FALSE(bad.path_of("timeline"));
}

TEST_CASE("finish_run: a trace from a process that died still reports", "[end_of_run]") {
    TempDir dir;
    write_trace(dir.file("app.77.gprof"), fill_small_run, /*finish=*/false, test_header(77));
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary_out = &out};
    auto r = finish_run(o);
    CHECK(r.ok);
    CHECK(out.str().find("did not finish normally") != std::string::npos);
    CHECK(out.str().find("GPU activities:") != std::string::npos);
}

TEST_CASE("finish_run: collector status warnings explain missing CUDA activity", "[end_of_run]") {
    TempDir dir;
    write_trace(dir.file("app.88.gprof"), [](gprof::trace::TraceWriter& w) {
        gprof::trace::Status st;
        st.timestamp = kT0 + 5;
        st.message = w.intern("CUPTI unavailable: libcupti.so not found");
        st.component = gprof::trace::Component::Cupti;
        st.level = gprof::trace::StatusLevel::Error;
        w.add(st);
    }, true, test_header(88));
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary_out = &out};
    auto r = finish_run(o);
    // Said once: in the summary's process block (and summary.txt); the collector said it on stderr when it
    // happened, so gprof-run's end-of-run lines do not repeat it.
    for (const auto& w : r.warnings) CHECK(w.find("CUPTI unavailable") == std::string::npos);
    const std::string text = out.str();
    size_t first = text.find("CUPTI unavailable");
    CHECK(first != std::string::npos);
    CHECK(text.find("CUPTI unavailable", first + 1) == std::string::npos);
    CHECK(text.find("no CUDA activity was recorded") != std::string::npos);
    // Without a summary on the console (--summary none) nothing repeats it either; summary.txt still has it.
    std::ostringstream quiet;
    EndOfRunOptions q{.run_dir = dir.path(), .summary = SummaryMode::None, .summary_out = &quiet,
                      .outputs = {only("summary", dir.path() / "summary.txt")}};
    auto rq = finish_run(q);
    for (const auto& w : rq.warnings) CHECK(w.find("CUPTI unavailable") == std::string::npos);
    REQUIRE(rq.path_of("summary"));
    std::ifstream in(*rq.path_of("summary"));
    std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(file.find("CUPTI unavailable") != std::string::npos);
}

TEST_CASE("finish_run creates its files 0600 and never through a planted symlink", "[end_of_run]") {
    TempDir dir, elsewhere;
    write_small_run(dir);
    std::string victim = elsewhere.file("victim.txt");
    { std::ofstream(victim) << "precious\n"; }
    std::filesystem::create_symlink(victim, dir.path() / "summary.txt");
    std::filesystem::create_symlink(victim, dir.path() / "timeline.json");
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary_out = &out,
                      .outputs = summary_and_timeline(dir.path(), dir.path() / "timeline.json")};
    auto r = finish_run(o);
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.path_of("summary"));
    CHECK_FALSE(r.path_of("timeline"));
    std::ifstream v(victim);
    std::string content((std::istreambuf_iterator<char>(v)), {});
    CHECK(content == "precious\n");

    TempDir clean;
    write_small_run(clean);
    o.run_dir = clean.path();
    o.outputs = summary_and_timeline(clean.path(), clean.path() / "timeline.json");
    auto ok = finish_run(o);
    REQUIRE(ok.path_of("summary"));
    REQUIRE(ok.path_of("timeline"));
    auto mode = [](const std::filesystem::path& p) {
        return std::filesystem::status(p).permissions() & std::filesystem::perms::all;
    };
    CHECK(mode(*ok.path_of("summary")) == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    CHECK(mode(*ok.path_of("timeline")) == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
}

TEST_CASE("finish_run: a .pftrace timeline is Perfetto's protobuf, a run over the JSON limit gets one instead", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::None, .summary_out = &out,
                      .outputs = {only("timeline", dir.path() / "t.pftrace")}};
    auto r = finish_run(o);
    CHECK(r.ok);
    REQUIRE(r.path_of("timeline"));
    CHECK(*r.path_of("timeline") == dir.path() / "t.pftrace");
    std::ifstream t(*r.path_of("timeline"), std::ios::binary);
    CHECK(t.get() == 0x0A);  // Trace.packet: a protobuf, not JSON's '{'

    o.outputs = {only("timeline", dir.path() / "big.json")};
    o.json_event_limit = 3;
    auto r2 = finish_run(o);
    CHECK(r2.ok);
    REQUIRE(r2.path_of("timeline"));
    CHECK(*r2.path_of("timeline") == dir.path() / "big.pftrace");
    CHECK_FALSE(std::filesystem::exists(dir.path() / "big.json"));
    bool said = false;
    for (const auto& w : r2.warnings) said |= w.find("big.pftrace instead of") != std::string::npos;
    CHECK(said);
}

// Issue 33: over a size, the timeline nobody asked for by name is not made at the end of a run (it was most of a
// 9.6 M-range run's end); one line says how to make it. Asked for by name (--timeline PATH) it is made.
TEST_CASE("finish_run: over the record limit the default timeline is not made, and one line says how", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::None, .summary_out = &out,
                      .outputs = end_of_run_outputs(dir.path(), EndOfRunChoice{.left_out = {"html"}})};
    auto timeline_request = [&o]() -> const OutputRequest& {
        auto it = std::find_if(o.outputs.begin(), o.outputs.end(), [](const OutputRequest& r) { return r.name == "timeline"; });
        REQUIRE(it != o.outputs.end());
        return *it;
    };
    CHECK(timeline_request().path == dir.path() / "timeline.json");
    CHECK_FALSE(timeline_request().named);

    auto under = finish_run(o);  // the small run is far under the default limit
    CHECK(under.ok);
    CHECK(under.path_of("timeline"));
    CHECK(under.not_made.empty());
    std::filesystem::remove(dir.path() / "timeline.json");
    std::filesystem::remove(dir.path() / "summary.txt");  // files in the run directory are new: never replaced

    o.timeline_record_limit = 3;
    auto over = finish_run(o);
    CHECK(over.ok);
    CHECK(over.path_of("summary"));
    CHECK_FALSE(over.path_of("timeline"));
    CHECK_FALSE(std::filesystem::exists(dir.path() / "timeline.json"));
    REQUIRE(over.not_made.size() == 1);
    const std::string& line = over.not_made[0];
    CHECK(line.rfind("timeline:", 0) == 0);
    CHECK(line.find("(over 3)") != std::string::npos);
    CHECK(line.find("gprof-report timeline -o " + (dir.path() / "timeline.pftrace").string() + " " +
                    dir.path().string()) != std::string::npos);
    auto lines = where_lines(o, over);
    CHECK(std::count(lines.begin(), lines.end(), line) == 1);

    // --timeline PATH: asked for by name, made whatever the size.
    std::filesystem::remove(dir.path() / "summary.txt");
    o.outputs = summary_and_timeline(dir.path(), dir.path() / "asked.json");
    CHECK(timeline_request().named);
    auto asked = finish_run(o);
    CHECK(asked.ok);
    CHECK(asked.path_of("timeline") == dir.path() / "asked.json");
    CHECK(asked.not_made.empty());
}
