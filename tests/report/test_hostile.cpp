// Hostile traces with a valid checksum (issue #15): one extreme value in an otherwise real H100 trace, framed again
// with a correct CRC, must give a warning and a skipped record, never a crash, a hang or a huge allocation, in the
// reader and in every output. Crafted here with tests/support/hostile_trace.h; the structure-aware fuzzer
// (fuzz_reports.cpp) does the same at random.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>

#include "address_space.h"
#include "every_output.h"
#include "gprof/trace/fields.h"
#include "gprof/trace/names.h"
#include "hostile_trace.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kH100 = fs::path(GPROF_SOURCE_DIR) / "tests/data/h100";

std::vector<uint8_t> slurp(const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& path, const std::vector<uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

fs::path only_trace(const fs::path& dir) {
    auto traces = report::find_traces(dir);
    REQUIRE(traces.size() == 1);
    return traces[0];
}

// The position of a named field in a kind's field list (fields.h), so the tests follow the one list.
struct FieldIndex {
    const char* wanted;
    size_t at = 0, found = SIZE_MAX;
    void hit(const char* name) {
        if (found == SIZE_MAX && std::string_view(name) == wanted) found = at;
        ++at;
    }
    template <class T> void u(const char* n, T&) { hit(n); }
    template <class T> void s(const char* n, T&) { hit(n); }
    void str(const char* n, trace::StringId&) { hit(n); }
    void time(const char* n, trace::Timestamp&) { hit(n); }
    void end(const char* n, trace::Timestamp&, const trace::Timestamp&) { hit(n); }
    void corr(const char* n, uint32_t&) { hit(n); }
    void bytes(const char* n, uint8_t*, uint32_t&, uint32_t) { hit(n); }
    void frames(const char* n, uint64_t*, uint32_t&, uint32_t) { hit(n); }
    void reals(const char* n, double*, uint32_t&, uint32_t) { hit(n); }
};
template <class R> size_t field_index(const char* name) {
    R r{};
    FieldIndex f{name};
    trace::describe(f, r);
    REQUIRE(f.found != SIZE_MAX);
    return f.found;
}

size_t count_kind(trace::TraceReader& reader, trace::RecordKind kind) {
    trace::Record r;
    size_t n = 0;
    while (reader.next(r)) n += r.kind == kind;
    return n;
}

bool any_warning_has(const std::vector<std::string>& warnings, const std::string& text) {
    for (const auto& w : warnings)
        if (w.find(text) != std::string::npos) return true;
    return false;
}

// A run directory holding one crafted trace, and the outputs of it.
struct Crafted {
    TempDir dir;
    fs::path trace;
    explicit Crafted(const std::vector<uint8_t>& bytes) : trace(dir.path() / "app.1.gprof") { spit(trace, bytes); }
};

// A definition of id 2^30 - 1 at the start of the last chunk (far beyond what the file can have defined there) and
// the first kernel naming 2^30: each would size a table of a billion entries.
void add_far_string_ids(RawTrace& raw) {
    RawRecord def;
    def.kind = static_cast<uint8_t>(trace::RecordKind::String);
    def.body = encode_values({(1ull << 30) - 1});
    def.body.push_back('x');
    raw.chunks.back().records.insert(raw.chunks.back().records.begin(), def);
    RawRecord* k = raw.first_of_kind(static_cast<uint8_t>(trace::RecordKind::Kernel));
    REQUIRE(k);
    REQUIRE(set_field(*k, field_index<trace::Kernel>("name"), 1ull << 30));
}

}  // namespace

TEST_CASE("hostile: a kernel naming string id 0xFFFFFFFF is skipped with a warning, every output still made") {
    cap_address_space(1ull << 30);
    auto raw = RawTrace::parse(slurp(only_trace(kH100 / "ka-static-kernels")));
    REQUIRE(raw);
    trace::TraceReader clean("clean", raw->serialize());
    size_t kernels = count_kind(clean, trace::RecordKind::Kernel);
    REQUIRE(kernels > 0);

    RawRecord* k = raw->first_of_kind(static_cast<uint8_t>(trace::RecordKind::Kernel));
    REQUIRE(k);
    REQUIRE(set_field(*k, field_index<trace::Kernel>("name"), 0xFFFFFFFFull));
    Crafted run(raw->serialize());

    trace::TraceReader reader(run.trace.string());
    CHECK(count_kind(reader, trace::RecordKind::Kernel) == kernels - 1);
    CHECK(reader.stats().out_of_range_records == 1);
    CHECK(any_warning_has(reader.warnings(), "kernel record at offset"));
    CHECK(any_warning_has(reader.warnings(), "names string id 4294967295"));

    auto baseline = report::extract_figures(report::load_run({only_trace(kH100 / "ka-static-kernels")}), {});
    EveryOutput out = run_every_output(run.dir.path(), run.trace, baseline);
    CHECK(out.report_bytes > 0);
    CHECK(out.timeline_perfetto_bytes > 0);
    CHECK(any_warning_has(out.warnings, "names string id 4294967295"));
    CHECK(out.report_status == 2);  // damage is said in the exit status, like a corrupt chunk
}

TEST_CASE("hostile: string ids up to 2^30 size nothing: definitions and uses beyond the file are skipped") {
    cap_address_space(1ull << 30);
    auto raw = RawTrace::parse(slurp(only_trace(kH100 / "ka-static-kernels")));
    REQUIRE(raw);
    add_far_string_ids(*raw);
    Crafted run(raw->serialize());

    trace::TraceReader reader(run.trace.string());
    count_kind(reader, trace::RecordKind::Kernel);
    CHECK(reader.stats().out_of_range_records == 2);
    CHECK(reader.string_count() < 200);  // the 43 real strings, not 2^30 slots
    CHECK(any_warning_has(reader.warnings(), "string record at offset"));
    CHECK(any_warning_has(reader.warnings(), "names string id 1073741824"));
    auto baseline = report::extract_figures(report::load_run({only_trace(kH100 / "ka-static-kernels")}), {});
    run_every_output(run.dir.path(), run.trace, baseline);
}

TEST_CASE("hostile: the chunk decoder (the summary's path) skips, counts and says what TraceReader::next() does") {
    auto raw = RawTrace::parse(slurp(only_trace(kH100 / "ka-static-kernels")));
    REQUIRE(raw);
    // The far string ids, and a record of an unknown kind: each is skipped, and counted and said the same way
    // whichever loop decodes the records.
    add_far_string_ids(*raw);
    RawRecord unknown;
    unknown.kind = 250;
    unknown.body = {1, 2, 3};
    raw->chunks.back().records.push_back(unknown);
    std::vector<uint8_t> bytes = raw->serialize();

    trace::TraceReader by_record("crafted", bytes);
    std::map<trace::StringId, std::string> defined_by_record;
    trace::Record r;
    while (by_record.next(r)) {}
    for (trace::StringId id = 1; id < by_record.string_count(); ++id)
        defined_by_record[id] = std::string(by_record.string(id));

    trace::TraceReader by_chunk("crafted", bytes);
    trace::ChunkTally tally;
    std::map<trace::StringId, std::string> defined_by_chunk;
    trace::ChunkSpan span;
    while (by_chunk.next_chunk_span(span)) {
        trace::ChunkDecoder decoder(span, tally);
        while (decoder.next(r))
            if (r.kind == trace::RecordKind::String) defined_by_chunk[decoder.string_id()] = decoder.string_text();
    }
    by_chunk.finish_chunks(tally);

    const trace::ReadStats& a = by_record.stats();
    const trace::ReadStats& b = by_chunk.stats();
    CHECK(a.out_of_range_records == 2);  // the definition and the kernel
    CHECK(a.unknown_records == 1);
    CHECK(b.records == a.records);
    CHECK(b.out_of_range_records == a.out_of_range_records);
    CHECK(b.malformed_records == a.malformed_records);
    CHECK(b.unknown_records == a.unknown_records);
    CHECK(b.has_end == a.has_end);
    CHECK(by_chunk.warnings() == by_record.warnings());
    CHECK(any_warning_has(by_chunk.warnings(), "string record at offset"));
    CHECK(defined_by_chunk.count((1u << 30) - 1) == 0);  // the out-of-range definition is not handed out
    for (const auto& [id, text] : defined_by_chunk) {
        INFO("string id " << id);
        CHECK(defined_by_record[id] == text);
    }
}

TEST_CASE("hostile: a string id just past the last defined one reads as a lost definition, not as damage") {
    auto raw = RawTrace::parse(slurp(only_trace(kH100 / "ka-static-kernels")));
    REQUIRE(raw);
    trace::TraceReader clean("clean", raw->serialize());
    count_kind(clean, trace::RecordKind::Kernel);
    RawRecord* k = raw->first_of_kind(static_cast<uint8_t>(trace::RecordKind::Kernel));
    uint64_t undefined = clean.string_count() + 5;  // small: within what the file could have defined
    REQUIRE(set_field(*k, field_index<trace::Kernel>("name"), undefined));
    trace::TraceReader reader("crafted", raw->serialize());
    trace::Record r;
    bool seen = false;
    while (reader.next(r))
        if (r.kind == trace::RecordKind::Kernel && r.kernel.name == undefined) seen = true;
    CHECK(seen);
    CHECK(reader.stats().out_of_range_records == 0);
    CHECK(reader.string(static_cast<trace::StringId>(undefined)) == "<string #" + std::to_string(undefined) + ">");
}

// The header's argv count: 2^40 with nothing after it, and 3 million empty arguments that are really there.
std::vector<uint8_t> header_body(uint64_t argc, size_t present_args) {
    auto text = [](std::vector<uint64_t>& v, const char* s) {
        v.push_back(std::strlen(s));
        for (const char* c = s; *c; ++c) v.push_back(static_cast<uint8_t>(*c));
    };
    std::vector<uint64_t> v;
    text(v, "gprof-run test");
    v.push_back(trace::codec::zigzag(77));  // pid
    v.push_back(trace::codec::zigzag(1));   // ppid
    text(v, "host");
    text(v, "/bin/app");
    v.push_back(argc);
    for (size_t i = 0; i < present_args; ++i) v.push_back(0);
    for (int i = 0; i < 6; ++i) v.push_back(0);  // clock, versions
    v.push_back(0);                              // run id ""
    return encode_values(v);
}

TEST_CASE("hostile: a header argc of 2^40 is refused at once, and millions of real empty arguments are cut") {
    cap_address_space(1ull << 30);
    auto raw = RawTrace::parse(slurp(only_trace(kH100 / "ka-static-kernels")));
    REQUIRE(raw);
    REQUIRE(raw->chunks[0].records[0].kind == static_cast<uint8_t>(trace::RecordKind::Header));

    auto started = std::chrono::steady_clock::now();
    raw->chunks[0].records[0].body = header_body(1ull << 40, 0);
    try {
        trace::TraceReader reader("argc", raw->serialize());
        FAIL("a header claiming 2^40 arguments in a few bytes was accepted");
    } catch (const trace::TraceError& e) {
        CHECK(std::string(e.what()).find("trace header is damaged") != std::string::npos);
    }

    raw->chunks[0].records[0].body = header_body(3'000'000, 3'000'000);
    trace::TraceReader reader("many", raw->serialize());
    const auto& argv = reader.header().argv;
    REQUIRE(argv.size() == trace::codec::kMaxHeaderArgs + 1);
    CHECK(argv.back() == "[" + std::to_string(3'000'000 - trace::codec::kMaxHeaderArgs) + " more arguments not kept]");
    CHECK(count_kind(reader, trace::RecordKind::Kernel) > 0);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

// The issue's sweep: every field of the first record of each kind set to edge values, on real H100 traces, through
// every output under a 1 GiB address-space cap; each kind taken from the first source trace that holds it (the
// header and String definitions too). Run once with both sets of sources, two traces per kind and all 18 values of
// kExtremeValues: 10 926 crafted traces, 270 s (docs/validation.md); the suite runs 8 values, split in two cases.
namespace {

constexpr uint64_t kSweepValues[] = {0, 1, 0xFFFF, 1ull << 30, 0xFFFFFFFF, 0x100000000, 0x7FFFFFFFFFFFFFFF,
                                     0xFFFFFFFFFFFFFFFF};

std::map<uint8_t, size_t> sweep(const std::vector<std::string>& fixtures, const std::map<uint8_t, size_t>& skip) {
    cap_address_space(1ull << 30);
    TempDir dir;
    const fs::path trace = dir.path() / "app.1.gprof";
    std::map<uint8_t, size_t> runs_by_kind;
    for (const std::string& fixture : fixtures) {
        const fs::path source = only_trace(kH100 / fixture);
        auto original = RawTrace::parse(slurp(source));
        REQUIRE(original);
        auto baseline = report::extract_figures(report::load_run({source}), {});
        for (size_t c = 0; c < original->chunks.size(); ++c) {
            for (size_t i = 0; i < original->chunks[c].records.size(); ++i) {
                uint8_t kind = original->chunks[c].records[i].kind;
                if (runs_by_kind.count(kind) || skip.count(kind)) continue;
                size_t& runs = runs_by_kind[kind];
                size_t fields = body_values(original->chunks[c].records[i].body).values.size();
                for (size_t f = 0; f <= fields; ++f) {
                    for (uint64_t v : kSweepValues) {
                        RawTrace t = *original;
                        if (!set_field(t.chunks[c].records[i], f, v)) break;
                        spit(trace, t.serialize());
                        INFO(source.filename().string() << ": kind " << int(kind) << " field " << f << " = " << v);
                        run_every_output(dir.path(), trace, baseline);
                        ++runs;
                    }
                }
            }
        }
    }
    return runs_by_kind;
}

const std::vector<std::string> kSweepFirst = {"ka-static-kernels", "ka-static-memset"};
const std::vector<std::string> kSweepSecond = {"d-graph", "ka-shared-nvtx", "ka-kernels-backtrace"};

}  // namespace

TEST_CASE("hostile: every field of the first record of each kind at edge values, through every output (1 of 2)") {
    auto runs = sweep(kSweepFirst, {});
    for (auto kind : {trace::RecordKind::Header, trace::RecordKind::String, trace::RecordKind::Thread,
                      trace::RecordKind::Device, trace::RecordKind::ApiCall, trace::RecordKind::Kernel,
                      trace::RecordKind::Memset, trace::RecordKind::Memory, trace::RecordKind::End}) {
        INFO("kind " << int(kind));
        CHECK(runs[static_cast<uint8_t>(kind)] >= 8);
    }
}

TEST_CASE("hostile: every field of the first record of each kind at edge values, through every output (2 of 2)") {
    // The kinds the first case swept are left out here.
    std::map<uint8_t, size_t> first;
    for (const std::string& fixture : kSweepFirst) {
        auto raw = RawTrace::parse(slurp(only_trace(kH100 / fixture)));
        REQUIRE(raw);
        for (const auto& c : raw->chunks)
            for (const auto& r : c.records) first[r.kind] = 1;
    }
    auto runs = sweep(kSweepSecond, first);
    for (auto kind : {trace::RecordKind::Nvtx, trace::RecordKind::Backtrace, trace::RecordKind::GraphLaunch}) {
        INFO("kind " << int(kind));
        CHECK(runs[static_cast<uint8_t>(kind)] >= 8);
    }
}
