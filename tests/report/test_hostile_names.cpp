// Names the program chose, through every output: invalid UTF-8, control characters, quotes, backslashes, markdown
// and CSV metacharacters, 100 000 characters. Every JSON output must parse (nlohmann rejects invalid UTF-8), CSV
// must be valid UTF-8 and parse back to the full names, markdown rows must keep their columns, console tables
// their width, and no range may be lost. Checked through the built gprof-report, as a user runs it.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report_cli.h"
#include "report_fixture.h"

using namespace gprof::testing;
using nlohmann::json;

namespace {

// Valid UTF-8, checked independently of the code under test: nlohmann's strict dump throws on invalid bytes.
bool valid_utf8(const std::string& s) {
    try {
        (void)json(s).dump();
        return true;
    } catch (const json::type_error&) {
        return false;
    }
}

// RFC 4180 records: quoted fields may hold commas, quotes ("" inside) and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false, was_quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"' && field.empty() && !was_quoted) {
            quoted = was_quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field);
            field.clear();
            was_quoted = false;
        } else if (c == '\n') {
            rows.back().push_back(field);
            field.clear();
            was_quoted = false;
            rows.emplace_back();
        } else {
            field += c;
        }
    }
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

// Cells of a markdown table row: split on '|' not preceded by a backslash.
size_t markdown_columns(const std::string& line) {
    size_t bars = 0;
    for (size_t i = 0; i < line.size(); ++i)
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++bars;
    return bars ? bars - 1 : 0;
}

const std::string kLong(100000, 'x');
const std::string kLongName = "long_" + kLong;
// What a trace keeps of it: the format holds strings up to 64 KiB (the collector cuts NVTX messages at 16 KiB).
const std::string kStoredLong = kLongName.substr(0, 64u << 10);
// Each a range name; also used for threads and kernels below.
const std::vector<std::string> kHostile = {
    "bad\xff" "byte",                     // a byte that is never UTF-8
    "overlong\xc0\xaf" "slash",          // an overlong '/'
    "surrogate\xed\xa0\x80" "half",      // a UTF-16 surrogate encoded
    "cut\xe2\x82",                        // a sequence cut at the end
    "ctl\x01\x1b[31mred\nline\ttab\r",   // control characters, an ANSI escape, line breaks
    "quote\"back\\slash",                // JSON metacharacters
    "a,b|c<d>e&f*g`h",                   // CSV and markdown metacharacters
    " padded ",                          // spaces that CSV readers trim
    "ünïcödé ✓ 名前",                    // valid multi-byte text, kept as it is
    kLongName,                           // 100 000 characters
};
const std::string kThreadName = "wörker\xff\"0\\";
const std::string kKernel = "_Z6kernelPfi";  // demangles to kernel(float*, int)

void write_hostile_run(const TempDir& dir, int64_t pid = 4343) {
    auto header = test_header(pid);
    std::string exe = "/opt/app\xff/bin/app \"x\"";
    header.executable = exe.c_str();
    write_trace(
        dir.file("app." + std::to_string(pid) + ".gprof"),
        [&](gprof::trace::TraceWriter& w) {
            using namespace gprof::trace;
            w.add(Thread{100, w.intern(kThreadName.c_str(), kThreadName.size())});
            Device d;
            d.id = 0;
            d.name = w.intern("GPU \xff<0>");
            d.cc_major = 9;
            d.sm_count = 132;
            w.add(d);
            uint32_t corr = 1;
            for (size_t i = 0; i < kHostile.size(); ++i) {
                uint64_t base = kT0 + 1000 + i * 100'000;
                Nvtx n;
                n.tid = n.end_tid = 100;
                n.start = base;
                n.end = base + 50'000;
                n.name = w.intern(kHostile[i].c_str(), kHostile[i].size());
                w.add(n);
                ApiCall a;
                a.tid = 100;
                a.start = base + 1000;
                a.end = base + 5000;
                a.correlation = corr;
                a.name = w.intern("cudaLaunchKernel");
                a.cbid = 211;
                w.add(a);
                Kernel k;
                k.start = base + 6000;
                k.end = base + 20000;
                k.stream = 7;
                k.correlation = corr++;
                k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
                // Kernel names: the hostile ones as they come (not mangled: shown as they are), and a mangled one.
                k.name = i % 2 ? w.intern(kHostile[i].c_str(), kHostile[i].size()) : w.intern(kKernel.c_str());
                w.add(k);
            }
        },
        true, header);
}

}  // namespace

TEST_CASE("hostile names: every JSON output parses and keeps every range", "[hostile]") {
    TempDir dir;
    write_hostile_run(dir);
    const std::string run = dir.path().string();

    auto r = run_report("summary nvtx_sum cuda_gpu_kern_sum cuda_api_trace cuda_gpu_trace --format json " + run, dir);
    REQUIRE(r.status == 0);
    json j = json::parse(r.out);  // throws on invalid UTF-8
    std::set<std::string> ranges;
    for (const auto& row : j["reports"]["nvtx_sum"]["rows"]) ranges.insert(row["range"].get<std::string>());
    // Ranges are "domain:name", the default domain empty (nvprof's ":name").
    CHECK(ranges.size() == kHostile.size());  // no range lost, none merged with another
    CHECK(ranges.count(":quote\"back\\slash"));
    CHECK(ranges.count(":bad\xEF\xBF\xBD" "byte"));  // U+FFFD for the invalid byte
    CHECK(ranges.count(":ünïcödé ✓ 名前"));
    CHECK(ranges.count(":" + kStoredLong));  // JSON keeps the full name
    CHECK(j["reports"]["summary"]["header"]["processes"][0]["executable"] == "/opt/app\xEF\xBF\xBD/bin/app \"x\"");
    bool thread_seen = false;
    for (const auto& row : j["reports"]["cuda_api_trace"]["rows"])
        if (row["thread_name"] == "wörker\xEF\xBF\xBD\"0\\") thread_seen = true;
    CHECK(thread_seen);

    // The timeline: valid JSON, the thread named exactly as set (no " (tid)"), every range there.
    auto t = run_report("timeline -o " + dir.file("t.json") + " " + run, dir);
    REQUIRE(t.status == 0);
    json tl = json::parse(slurp(dir.file("t.json")));
    std::set<std::string> slices, thread_names;
    for (const auto& e : tl["traceEvents"]) {
        if (e["ph"] == "X" && e["cat"] == "user_annotation") slices.insert(e["name"].get<std::string>());
        if (e["ph"] == "M" && e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
    }
    CHECK(slices.size() == kHostile.size());
    CHECK(slices.count(kStoredLong));
    CHECK(thread_names.count("wörker\xEF\xBF\xBD\"0\\"));

    // gzip and Perfetto protobuf: written, non-empty (their strings are checked by the Perfetto test's decoder).
    CHECK(run_report("timeline --format perfetto -o " + dir.file("t.pftrace") + " " + run, dir).status == 0);

    auto a = run_report("analyze --format json " + run, dir);
    REQUIRE(a.status == 0);
    CHECK_NOTHROW(json::parse(a.out));

    auto d = run_report("diff --format json " + run + " " + run, dir);
    REQUIRE(d.status == 0);
    json dj = json::parse(d.out);
    size_t nvtx_keys = 0;
    for (const auto& k : dj["keys"])
        if (k["kind"] == "nvtx") ++nvtx_keys;
    CHECK(nvtx_keys == kHostile.size());
}

TEST_CASE("hostile names: CSV is valid UTF-8 and parses back to the full names", "[hostile]") {
    TempDir dir;
    write_hostile_run(dir);
    auto r = run_report("nvtx_sum --format csv " + dir.path().string(), dir);
    REQUIRE(r.status == 0);
    CHECK(valid_utf8(r.out));
    auto rows = parse_csv(r.out);
    REQUIRE(rows.size() == kHostile.size() + 1);  // a header and one row per range: no line break split a row
    size_t range_col = rows[0].size() - 1;
    REQUIRE(rows[0][range_col] == "Range");
    std::set<std::string> names;
    for (size_t i = 1; i < rows.size(); ++i) {
        REQUIRE(rows[i].size() == rows[0].size());
        names.insert(rows[i][range_col]);
    }
    CHECK(names.count(":" + kStoredLong));
    CHECK(names.count(": padded "));
    CHECK(names.count(":a,b|c<d>e&f*g`h"));
    CHECK(names.count(":ctl\x01\x1b[31mred\nline\ttab\r"));
}

TEST_CASE("hostile names: markdown keeps its columns, tables their width", "[hostile]") {
    TempDir dir;
    write_hostile_run(dir);
    const std::string run = dir.path().string();
    auto md = run_report("nvtx_sum cuda_gpu_kern_sum --format markdown " + run, dir);
    REQUIRE(md.status == 0);
    CHECK(valid_utf8(md.out));
    std::istringstream lines(md.out);
    std::string line;
    size_t table_rows = 0;
    while (std::getline(lines, line)) {
        if (line.empty() || line[0] != '|') continue;
        ++table_rows;
        CHECK(line.find('<') == std::string::npos);  // no raw HTML
        CHECK(line.find('\x1b') == std::string::npos);
    }
    CHECK(table_rows >= kHostile.size() + 2);
    // Every row of each table has as many cells as its header.
    std::istringstream again(md.out);
    size_t expected = 0;
    while (std::getline(again, line)) {
        if (line.empty() || line[0] != '|') {
            expected = 0;
            continue;
        }
        if (!expected) expected = markdown_columns(line);
        else CHECK(markdown_columns(line) == expected);
    }

    // Console: the default width shortens the 100 000-character name; --name-width 0 keeps it whole.
    auto table = run_report("nvtx_sum " + run, dir);
    REQUIRE(table.status == 0);
    CHECK(valid_utf8(table.out));
    CHECK(table.out.find('\x1b') == std::string::npos);  // escapes cannot drive the terminal
    size_t longest = 0, lines_total = 0;
    std::istringstream tl(table.out);
    while (std::getline(tl, line)) longest = std::max(longest, line.size()), ++lines_total;
    CHECK(longest < 400);
    CHECK(lines_total == kHostile.size() + 4);  // title, blank, header, rule, one line per range
    auto full = run_report("nvtx_sum --name-width 0 " + run, dir);
    CHECK(full.out.find(":" + kStoredLong + "\n") != std::string::npos);  // the last column
    auto narrow = run_report("nvtx_sum --name-width 20 " + run, dir);
    CHECK(narrow.out.find(":long_xxxxx...xxxxxx") != std::string::npos);  // head and tail kept

    for (const char* format : {"table", "markdown"}) {  // analyze quotes names in its findings
        auto a = run_report(std::string("analyze --format ") + format + " " + run, dir);
        INFO(format);
        REQUIRE(a.status == 0);
        CHECK(valid_utf8(a.out));
        CHECK(a.out.find('\x1b') == std::string::npos);
    }

    auto summary = run_report(run, dir);
    REQUIRE(summary.status == 0);
    CHECK(valid_utf8(summary.out));
    CHECK(summary.out.find('\x1b') == std::string::npos);
    std::istringstream sl(summary.out);
    longest = 0;
    while (std::getline(sl, line)) longest = std::max(longest, line.size());
    CHECK(longest < 400);
}

TEST_CASE("timeline ids: every pid and tid fits 32 bits and is distinct per track", "[hostile][timeline]") {
    TempDir dir;
    write_trace(
        dir.file("app.4444.gprof"),
        [](gprof::trace::TraceWriter& w) {
            using namespace gprof::trace;
            w.add(Thread{100, w.intern("main")});
            // 40 kernels all overlapping on a stream with a large id: 39 overflow lanes.
            for (uint32_t i = 0; i < 40; ++i) {
                for (uint32_t stream : {0xFFFFFF00u, 5u}) {
                    Kernel k;
                    k.start = kT0 + 1000 + i;
                    k.end = kT0 + 100'000;
                    k.stream = stream;
                    k.correlation = 1000 + i * 2 + (stream == 5);
                    k.name = w.intern("_Z1kv");
                    w.add(k);
                }
                // And overlapping start/end ranges on one thread: overflow lanes of a CPU thread.
                Nvtx n;
                n.type = NvtxType::StartEnd;
                n.tid = n.end_tid = 100;
                n.start = kT0 + 2000 + i;
                n.end = kT0 + 200'000 + i;
                n.name = w.intern("r");
                w.add(n);
            }
        },
        true, test_header(4444));
    auto t = run_report("timeline -o " + dir.file("t.json") + " " + dir.path().string(), dir);
    REQUIRE(t.status == 0);
    json tl = json::parse(slurp(dir.file("t.json")));
    std::set<std::pair<int64_t, int64_t>> tracks;
    size_t thread_meta = 0;
    for (const auto& e : tl["traceEvents"]) {
        if (e.contains("pid")) {
            CHECK(e["pid"].get<int64_t>() >= 0);
            CHECK(e["pid"].get<int64_t>() <= 0xFFFFFFFFLL);
        }
        if (e.contains("tid")) {
            CHECK(e["tid"].get<int64_t>() >= 0);
            CHECK(e["tid"].get<int64_t>() <= 0xFFFFFFFFLL);
        }
        if (e["ph"] == "M" && e["name"] == "thread_name") {
            ++thread_meta;
            tracks.insert({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
        }
    }
    CHECK(thread_meta >= 80 + 40);  // 2 streams x 40 lanes, the thread's lanes
    CHECK(tracks.size() == thread_meta);  // distinct per track
}
