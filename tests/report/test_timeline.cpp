// The Chrome trace parsed back: required fields, nesting per track, flow pairs, sort order, counters.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <cstdlib>
#include <fstream>

#include "golden_util.h"
#include "timeline/timeline.h"
#include "report_fixture.h"
#include "check_perfetto.h"

using namespace gprof::report;
using namespace gprof::testing;
using nlohmann::json;

namespace {

struct Parsed {
    std::string text;
    json doc;
    TimelineStats stats;
};

// Without the analysis track: its content belongs to the analysis code and has its own tests.
Parsed timeline_of(const std::vector<std::filesystem::path>& inputs, bool analysis = false) {
    Run run = load_run(inputs);
    Parsed p;
    TimelineOptions o;
    o.analysis_track = analysis;
    p.stats = timeline_to_string(run, p.text, o);
    p.doc = json::parse(p.text);
    return p;
}

// ts/dur in ns, exactly (three decimals of us).
int64_t ns(const json& v) { return static_cast<int64_t>(std::llround(v.get<double>() * 1000.0)); }

}  // namespace

TEST_CASE("timeline golden", "[timeline][golden]") {
    TempDir dir;
    write_small_run(dir);
    check_golden("timeline.json", timeline_of({dir.path()}).text);
}

TEST_CASE("timeline: object form, base time, required fields, three decimals", "[timeline]") {
    TempDir dir;
    write_small_run(dir);
    auto p = timeline_of({dir.path()});
    const json& d = p.doc;
    REQUIRE(d.is_object());
    REQUIRE(d.contains("traceEvents"));
    CHECK(d["baseTimeNanoseconds"] == 1'700'000'000'000'000'000LL);
    CHECK(d["schemaVersion"] == 1);
    for (const auto& e : d["traceEvents"]) {
        REQUIRE(e.contains("ph"));
        REQUIRE(e.contains("pid"));
        std::string ph = e["ph"];
        if (ph == "M") {
            CHECK(e["args"].is_object());
            continue;
        }
        REQUIRE(e.contains("ts"));
        REQUIRE(e.contains("name"));
        if (ph == "X") {
            REQUIRE(e.contains("dur"));
            REQUIRE(e.contains("tid"));
            CHECK(e["dur"].get<double>() >= 0);
        }
    }
    // Every ts and dur carries exactly three decimals (no ns lost, no float noise).
    std::regex bad("\"(ts|dur)\":-?[0-9]+(,|\\}|\\.[0-9]{0,2}[,}]|\\.[0-9]{4,})");
    CHECK_FALSE(std::regex_search(p.text, bad));
}

TEST_CASE("timeline: nothing overlaps on one track, overflow and unmatched are counted", "[timeline]") {
    TempDir dir;
    write_small_run(dir);
    auto p = timeline_of({dir.path()});
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> tracks;
    std::set<int64_t> gpu_pids;
    for (const auto& e : p.doc["traceEvents"]) {
        if (e["ph"] != "X") continue;
        int64_t s = ns(e["ts"]);
        tracks[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back({s, s + ns(e["dur"])});
        std::string cat = e["cat"];
        if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") gpu_pids.insert(e["pid"].get<int64_t>());
    }
    for (auto& [key, slices] : tracks) {
        std::sort(slices.begin(), slices.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
        bool gpu = gpu_pids.count(key.first) > 0;
        std::vector<int64_t> open;
        for (const auto& [s, e] : slices) {
            while (!open.empty() && open.back() <= s) open.pop_back();
            if (gpu) {
                INFO("GPU track " << key.first << "/" << key.second << " slice at " << s);
                CHECK(open.empty());  // GPU ops on one stream never overlap, not even nested
            } else if (!open.empty()) {
                INFO("CPU track " << key.first << "/" << key.second << " slice at " << s);
                CHECK(e <= open.back());  // nests inside its parent
            }
            open.push_back(e);
        }
    }
    CHECK(p.stats.overflow_slices == 2);    // the orphan kernel and the crossing "decode" range
    CHECK(p.stats.unmatched_gpu_ops == 1);  // the orphan kernel: drawn, counted
    bool orphan_drawn = false;
    for (const auto& e : p.doc["traceEvents"])
        if (e["ph"] == "X" && e["name"] == "other_kernel()" && e["args"]["correlation"] == 999) orphan_drawn = true;
    CHECK(orphan_drawn);
}

TEST_CASE("timeline: flow pairs bind (kineto ac2g)", "[timeline]") {
    TempDir dir;
    write_small_run(dir);
    auto p = timeline_of({dir.path()});
    const auto& ev = p.doc["traceEvents"];
    std::map<uint64_t, json> s_events, f_events;
    for (size_t i = 0; i < ev.size(); ++i) {
        const auto& e = ev[i];
        if (e["ph"] != "s" && e["ph"] != "f") continue;
        CHECK(e["cat"] == "ac2g");
        CHECK(e["name"] == "ac2g");
        // The slice a flow binds to was written before it, on the same pid/tid, enclosing its ts.
        bool bound = false;
        for (size_t j = i; j-- > 0;) {
            const auto& x = ev[j];
            if (x["ph"] != "X" || x["pid"] != e["pid"] || x["tid"] != e["tid"]) continue;
            int64_t s = ns(x["ts"]), t = ns(e["ts"]);
            if (e["ph"] == "s" ? s == t : (s <= t && t <= s + ns(x["dur"]))) {
                bound = true;
                CHECK(x["args"]["correlation"] == e["id"]);
                break;
            }
        }
        CHECK(bound);
        if (e["ph"] == "s") s_events[e["id"]] = e;
        else {
            CHECK(e["bp"] == "e");
            f_events[e["id"]] = e;
        }
    }
    CHECK(f_events.size() == 10);  // 3 steps x (kernel, memcpy, memset) + the device-1 kernel
    for (const auto& [id, f] : f_events) {
        REQUIRE(s_events.count(id));
        CHECK(ns(s_events[id]["ts"]) <= ns(f["ts"]));
    }
    CHECK(p.stats.flows == 10);
}

TEST_CASE("timeline: names, sort order, counters, args", "[timeline]") {
    TempDir dir;
    write_small_run(dir);
    auto p = timeline_of({dir.path()});
    std::map<int64_t, int64_t> sort;
    std::map<int64_t, std::string> pname;
    std::set<std::string> thread_names;
    std::vector<int64_t> counter;
    for (const auto& e : p.doc["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_sort_index") sort[e["pid"]] = e["args"]["sort_index"];
        if (e["ph"] == "M" && e["name"] == "process_name") pname[e["pid"]] = e["args"]["name"];
        if (e["ph"] == "M" && e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
        if (e["ph"] == "C") counter.push_back(e["args"]["bytes"]);
        if (e["ph"] == "X" && e["cat"] == "kernel" && e["args"]["correlation"] == 10) {
            CHECK(e["args"]["grid"] == json::array({256, 1, 1}));
            CHECK(e["args"]["block"] == json::array({128, 1, 1}));
            CHECK(e["args"]["registers per thread"] == 32);
            CHECK(e["args"]["static shared memory"] == 1024);
            CHECK(e["args"]["dynamic shared memory"] == 2048);
            CHECK(e["args"]["stream"] == 7);
            CHECK(e["args"]["device"] == 0);
        }
        if (e["ph"] == "X" && e["cat"] == "gpu_memcpy" && e["args"]["correlation"] == 11) {
            CHECK(e["name"] == "Memcpy HtoD (Pageable -> Device)");
            CHECK(e["args"]["bytes"] == 1000000);
            CHECK(e["args"]["memory bandwidth (GB/s)"].get<double>() == Approx(100.0));
        }
    }
    REQUIRE(pname.count(4242));
    CHECK(pname[4242] == "app (pid 4242)");
    for (const auto& [pid, idx] : sort)
        if (pid != 4242) CHECK(idx > sort[4242]);  // GPUs below the CPU process
    CHECK(thread_names.count("main"));
    CHECK(thread_names.count("stream 7"));
    CHECK(thread_names.count("stream 7 (overlap 1)"));
    CHECK(counter == std::vector<int64_t>{1000000, 3000000, 2000000});
}

TEST_CASE("timeline: gzip file", "[timeline]") {
    TempDir dir;
    write_small_run(dir);
    Run run = load_run({dir.path()});
    TimelineOptions o;
    o.gzip = true;
    auto st = write_timeline(run, dir.file("t.json.gz"), o);
    CHECK(st.gzipped);
    std::ifstream in(dir.file("t.json.gz"), std::ios::binary);
    unsigned char magic[2] = {};
    in.read(reinterpret_cast<char*>(magic), 2);
    CHECK(magic[0] == 0x1f);
    CHECK(magic[1] == 0x8b);
    CHECK(st.file_bytes < st.encoded_bytes);
    TimelineOptions tiny;
    tiny.too_big_bytes = 100;
    auto st2 = write_timeline(run, dir.file("t.json"), tiny);
    bool warned = false;
    for (const auto& w : st2.warnings) warned |= w.find("Perfetto") != std::string::npos;
    CHECK(warned);
}

TEST_CASE("timeline: the analysis track, when built in, is valid and sorted last", "[timeline]") {
    TempDir dir;
    write_small_run(dir);
    auto p = timeline_of({dir.path()}, true);
    if (!p.stats.analysis_track) return;  // analysis code not in this build
    int64_t analysis_pid = -1, max_other = INT64_MIN, analysis_sort = 0;
    for (const auto& e : p.doc["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "analysis") analysis_pid = e["pid"];
    }
    REQUIRE(analysis_pid != -1);
    for (const auto& e : p.doc["traceEvents"]) {
        if (e["ph"] != "M" || e["name"] != "process_sort_index") continue;
        if (e["pid"] == analysis_pid) analysis_sort = e["args"]["sort_index"];
        else max_other = std::max<int64_t>(max_other, e["args"]["sort_index"]);
        if (e["ph"] == "X" && e["pid"] == analysis_pid) CHECK(e["cat"] == "analysis");
    }
    CHECK(analysis_sort > max_other);
}

// ----- Perfetto protobuf -----------------------------------------------------------------------------------------

TEST_CASE("timeline: format by file name", "[timeline][perfetto]") {
    CHECK(timeline_format_for("x.pftrace") == TimelineFormat::Perfetto);
    CHECK(timeline_format_for("dir/run.perfetto-trace") == TimelineFormat::Perfetto);
    CHECK(timeline_format_for("timeline.json") == TimelineFormat::ChromeJson);
    CHECK(timeline_format_for("timeline.json.gz") == TimelineFormat::ChromeJson);
    CHECK(timeline_format_for("pftrace") == TimelineFormat::ChromeJson);
}

// protoc decodes it with the schema subset, the rules Perfetto relies on hold, and every slice, instant, counter
// sample and flow of the JSON timeline is in it (tests/report/check_perfetto.py); the analysis track included.
TEST_CASE("timeline: the Perfetto protobuf of the small run holds the JSON's slices", "[timeline][perfetto]") {
    TempDir dir;
    write_small_run(dir);
    PerfettoCheck check = check_perfetto(dir.path().string(), dir.file("check.txt"));
    INFO(check.output);
    CHECK(check.exit_code == 0);
    CHECK(check.output.find(" slices,") != std::string::npos);
}

TEST_CASE("timeline: Perfetto bytes start with the clock snapshot packet, stats match the model", "[timeline][perfetto]") {
    TempDir dir;
    write_small_run(dir);
    Run run = load_run({dir.path()});
    std::string json_text, pb;
    TimelineOptions o;
    o.analysis_track = false;
    auto js = timeline_to_string(run, json_text, o);
    o.format = TimelineFormat::Perfetto;
    auto ps = timeline_to_string(run, pb, o);
    REQUIRE(pb.size() > 8);
    CHECK(static_cast<unsigned char>(pb[0]) == 0x0A);  // Trace.packet, length-delimited
    CHECK(ps.format == TimelineFormat::Perfetto);
    CHECK(ps.slices == js.slices);
    CHECK(ps.flows == js.flows);
    CHECK(ps.flows == 10);
    CHECK(ps.overflow_slices == js.overflow_slices);
    CHECK(ps.unmatched_gpu_ops == 1);
    CHECK(pb.size() < json_text.size());
}

TEST_CASE("timeline: a JSON timeline over the event limit is written as the protobuf, and said", "[timeline][perfetto]") {
    TempDir dir;
    write_small_run(dir);
    Run run = load_run({dir.path()});
    TimelineOptions o;
    o.json_event_limit = 5;
    auto st = write_timeline(run, dir.file("timeline.json"), o);
    CHECK(st.format == TimelineFormat::Perfetto);
    CHECK(st.path == std::filesystem::path(dir.file("timeline.pftrace")));
    CHECK(std::filesystem::exists(dir.file("timeline.pftrace")));
    CHECK_FALSE(std::filesystem::exists(dir.file("timeline.json")));
    bool said = false;
    for (const auto& w : st.warnings) said |= w.find("instead of") != std::string::npos;
    CHECK(said);
    o.json_event_limit = 1'000'000;
    auto st2 = write_timeline(run, dir.file("t2.json"), o);
    CHECK(st2.format == TimelineFormat::ChromeJson);
    CHECK(std::filesystem::exists(dir.file("t2.json")));
}
