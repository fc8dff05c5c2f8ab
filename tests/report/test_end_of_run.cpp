// finish_run(): what gprof-run calls after the app ends. Never throws, always explains.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden_util.h"
#include "end_of_run/end_of_run.h"
#include "report_fixture.h"

using namespace gprof::report;
using namespace gprof::testing;

TEST_CASE("finish_run: summary, summary.txt and timeline", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::Brief,
                       .timeline_path = dir.path() / "timeline.json", .summary_out = &out};
    auto r = finish_run(o);
    CHECK(r.ok);
    REQUIRE(r.traces.size() == 1);
    REQUIRE(r.summary_file);
    REQUIRE(r.timeline);
    // The analysis section is the analysis code's output, tested there: cut it from the golden.
    std::string text_out = out.str();
    if (auto pos = text_out.find("\nAnalysis"); pos != std::string::npos) text_out.resize(pos + 1);
    check_golden("end_of_run_brief.txt", text_out);
    std::ifstream s(*r.summary_file);
    std::string text((std::istreambuf_iterator<char>(s)), {});
    CHECK(text.find("NVTX result:") != std::string::npos);  // the file always has the full summary
    std::ifstream t(*r.timeline);
    CHECK(nlohmann::json::parse(t).contains("traceEvents"));
    bool dropped_warned = false;
    for (const auto& w : r.warnings) dropped_warned |= w.find("dropped") != std::string::npos;
    CHECK(dropped_warned);
}

TEST_CASE("finish_run: full summary and none", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::Full, .summary_out = &out,
                       .write_summary_file = false};
    auto r = finish_run(o);
    CHECK(r.ok);
    CHECK_FALSE(r.summary_file);
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
    o.timeline_path = dir.path() / "no-such-dir" / "t.json";
    auto bad = finish_run(o);
    CHECK_FALSE(bad.ok);
    CHECK_FALSE(bad.timeline);
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
    std::filesystem::remove(dir.path() / "summary.txt");  // the first call's (never overwritten)
    std::ostringstream quiet;
    EndOfRunOptions q{.run_dir = dir.path(), .summary = SummaryMode::None, .summary_out = &quiet,
                      .write_summary_file = true};
    auto rq = finish_run(q);
    for (const auto& w : rq.warnings) CHECK(w.find("CUPTI unavailable") == std::string::npos);
    REQUIRE(rq.summary_file);
    std::ifstream in(*rq.summary_file);
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
    EndOfRunOptions o{.run_dir = dir.path(), .timeline_path = dir.path() / "timeline.json", .summary_out = &out};
    auto r = finish_run(o);
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.summary_file);
    CHECK_FALSE(r.timeline);
    std::ifstream v(victim);
    std::string content((std::istreambuf_iterator<char>(v)), {});
    CHECK(content == "precious\n");

    TempDir clean;
    write_small_run(clean);
    o.run_dir = clean.path();
    o.timeline_path = clean.path() / "timeline.json";
    auto ok = finish_run(o);
    REQUIRE(ok.summary_file);
    REQUIRE(ok.timeline);
    auto mode = [](const std::filesystem::path& p) {
        return std::filesystem::status(p).permissions() & std::filesystem::perms::all;
    };
    CHECK(mode(*ok.summary_file) == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    CHECK(mode(*ok.timeline) == (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
}

TEST_CASE("finish_run: a .pftrace timeline is Perfetto's protobuf, a run over the JSON limit gets one instead", "[end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    EndOfRunOptions o{.run_dir = dir.path(), .summary = SummaryMode::None, .timeline_path = dir.path() / "t.pftrace",
                       .summary_out = &out, .write_summary_file = false};
    auto r = finish_run(o);
    CHECK(r.ok);
    REQUIRE(r.timeline);
    CHECK(*r.timeline == dir.path() / "t.pftrace");
    std::ifstream t(*r.timeline, std::ios::binary);
    CHECK(t.get() == 0x0A);  // Trace.packet: a protobuf, not JSON's '{'

    o.timeline_path = dir.path() / "big.json";
    o.json_event_limit = 3;
    auto r2 = finish_run(o);
    CHECK(r2.ok);
    REQUIRE(r2.timeline);
    CHECK(*r2.timeline == dir.path() / "big.pftrace");
    CHECK_FALSE(std::filesystem::exists(dir.path() / "big.json"));
    bool said = false;
    for (const auto& w : r2.warnings) said |= w.find("big.pftrace instead of") != std::string::npos;
    CHECK(said);
}
