#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "record_samples.h"
#include "trace_fixture.h"

using namespace gprof::trace;
using namespace gprof::testing;

namespace {

// The expected printout of add_every_kind, written without the codec (kept in sync by hand on purpose).
std::vector<std::string> expected_every_kind() {
    const uint64_t b = 1'700'000'000'123'456'789ull;
    auto t = [b](uint64_t d) { return std::to_string(b + d); };
    std::string frames;
    for (uint32_t i = 0; i < kMaxBacktraceFrames; ++i)
        frames += "," + std::to_string(0x55'5555'0000ull + i * 0x1234 - (i % 3) * 0x100000);
    std::string build_id;
    for (int i = 0; i < 20; ++i) build_id += "," + std::to_string((0xF0 + i) & 0xFF);
    return {
        "3:12345,worker-1",
        "4:1,NVIDIA H100 80GB HBM3,9.0,132,85520809984,GPU-1234",
        "5:" + t(0) + ",13000,13000,130001,/usr/local/cuda/lib64/libcupti.so.13",
        "6:" + t(100) + "," + t(5100) + ",12345,77,211,cudaLaunchKernel,-3,1",
        "7:" + t(90) + "," + t(20090) + ",1,3,7,77,1024,2,1,256,1,1,32,4096,49152,16,_Z6vecAddPKfS0_Pfi,5,1099511627776,1",
        "8:" + t(30000) + "," + t(31000) + ",8589934592,0,1,3,14,70,0,0,10,2,3,1",
        "9:" + t(32000) + "," + t(32500) + ",4096,171,1,3,7,79,2,9,5",
        "10:" + t(40000) + "," + t(90000) + ",3,4294967295,4,80,4",
        "11:" + t(10) + ",0,12345,12346,forward,my.domain,4278255360,3,layers,4614256656552045848,2,1,3",
        "12:" + t(5) + "," + std::to_string(0x7F12'3456'7000ull) + ",1048576,1,3,7,81,2,3,1,1," +
            std::to_string(0x7F12'0000'0000ull) + ",2147483648,3145728,18446744073709551615",
        "13:" + t(1) + "," + t(2) + ",65536,1,99",
        "14:" + t(3) + ",17,3,7,0",
        "15:0,1,1",
        "16:12345,77,64" + frames,
        "17:139637976727552,16777216,4096,/lib/libapp.so,20" + build_id,
        "18:" + t(50000) + "," + t(60000) + ",1,3,7,90,5",
        "19:1125899906842624,91,2",
        "20:" + t(7) + ",999,CUPTI unavailable: no driver,1,1",
        "22:" + t(6) + "," + std::to_string(0x7F12'0000'0000ull) +
            ",1,82,3,1,1073741824,3145728,18446744073709551615,2097152,1",
        "23:" + t(8) + ",4243,/sbin/ldconfig.real,/sbin/ldconfig.real -p,1,1",
        "24:3,1,-1,RANK=3 LOCAL_RANK=1,4711",
        "25:1,3," + std::to_string(0x55'5555'1234ull) + "," + std::to_string(0x55'5555'0100ull) + "," +
            std::to_string(0x7F00'0000'2000ull),
        "26:2,/home/u/train.py,Model.forward,42",
        "27:1,2,2,1",
        "28:12345,77,1,1",
        "29:" + t(11) + ",12346," + std::to_string(0x55'5555'1240ull) + ",1,1,4,1000000",
        "30:" + t(12) + "," + t(1'000'000'012ull) + ",12345,read,1,0",
        "31:1,gh100,GH100,sm__cycles_active.avg.pct_of_peak_sustained_elapsed gr__cycles_elapsed.max "
        "dram__bytes_read.sum,100000",
        "32:" + t(13) + "," + t(100'013) + ",1,3,99.75,166437,-0",
    };
}

// What a writer of format 1.6 or 1.5 wrote for add_every_kind: everything but the kinds 1.7 added.
std::vector<std::string> expected_16() {
    auto v = expected_every_kind();
    v.resize(v.size() - kEveryKindAddedIn17);
    return v;
}

// What a writer of format 1.4 wrote for add_every_kind: everything but the kinds 1.5 added.
std::vector<std::string> expected_14() {
    auto v = expected_16();
    v.resize(v.size() - kEveryKindAddedIn15);
    return v;
}

// What a writer of format 1.3 wrote for add_every_kind: everything but the kinds 1.4 added.
std::vector<std::string> expected_13() {
    auto v = expected_14();
    v.resize(v.size() - kEveryKindAddedIn14);
    return v;
}

// What a writer of format 1.1 or 1.0 wrote for add_every_kind: everything but the kinds 1.2 added.
std::vector<std::string> expected_before_12() {
    auto v = expected_13();
    v.resize(v.size() - kEveryKindAddedIn12);
    return v;
}

// What a writer of format 1.2 wrote: Role without the job 1.3 appended (it reads as string 0, the empty string).
std::vector<std::string> expected_12() {
    auto v = expected_13();
    v.back() = "24:3,1,-1,RANK=3 LOCAL_RANK=1,";
    return v;
}

// The trace the 1.<minor> writer wrote for add_every_kind, kept as an old trace.
std::string golden_trace(int minor) {
    return std::string(GPROF_SOURCE_DIR) + "/tests/format/golden/every_kind-1." + std::to_string(minor) + ".gprof";
}

// Reads every record of `reader`: all but the last are `expected`, in order, the last is the End; returns the End's
// description.
std::string check_records(TraceReader& reader, const std::vector<std::string>& expected) {
    CHECK(reader.warnings().empty());
    auto got = describe_all(reader);
    REQUIRE(got.size() == expected.size() + 1);  // + End
    for (size_t i = 0; i < expected.size(); ++i) CHECK(got[i] == expected[i]);
    CHECK(got.back().rfind("21:", 0) == 0);
    CHECK(reader.stats().has_end);
    return got.back();
}

}  // namespace

TEST_CASE("every record kind survives a round trip field by field") {
    TempDir dir;
    auto path = dir.file("every.gprof");
    write_trace(path, [](TraceWriter& w) { add_every_kind(w); });

    TraceReader reader(path);
    auto got = describe_all(reader);
    auto want = expected_every_kind();
    REQUIRE(got.size() == want.size() + 1);  // + End
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == want[i]);
    CHECK(got.back().rfind("21:", 0) == 0);
    CHECK(reader.stats().has_end);
    CHECK(reader.warnings().empty());
}

TEST_CASE("the header round-trips and never holds the environment") {
    TempDir dir;
    auto path = dir.file("h.gprof");
    ::setenv("GPROF_TEST_SECRET", "hunter2-do-not-store", 1);
    write_trace(path, [](TraceWriter&) {});
    TraceReader reader(path);
    const auto& h = reader.header();
    CHECK(h.version_major == kFormatMajor);
    CHECK(h.version_minor == kFormatMinor);
    CHECK(h.producer == "gprof-run test");
    CHECK(h.pid == 4242);
    CHECK(h.ppid == 1);
    CHECK(h.hostname == "testhost");
    CHECK(h.executable == "/opt/app/bin/app");
    CHECK(h.argv == std::vector<std::string>{"./app", "--steps", "3"});
    CHECK(h.clock.trace_ns == 1'000'000'000u);
    CHECK(h.clock.realtime_ns == 1'700'000'000'000'000'000);
    CHECK(h.clock.monotonic_ns == 5'000'000'000);
    CHECK(h.run_id == "test-run");
    std::string bytes;
    {
        std::FILE* f = std::fopen(path.c_str(), "rb");
        REQUIRE(f);
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
        std::fclose(f);
    }
    CHECK(bytes.find("hunter2") == std::string::npos);
}

TEST_CASE("the End record counts what was written and dropped") {
    TempDir dir;
    auto path = dir.file("end.gprof");
    write_trace(path, [](TraceWriter& w) { add_every_kind(w); });
    TraceReader reader(path);
    Record r, last;
    while (reader.next(r)) last = r;
    REQUIRE(last.kind == RecordKind::End);
    CHECK(last.end.records_written == kEveryKindCount);  // String records are not counted
    CHECK(last.end.records_dropped == 17);
}

TEST_CASE("strings are written once and ids stay stable across chunks") {
    TempDir dir;
    auto path = dir.file("strings.gprof");
    write_trace(path, [](TraceWriter& w) {
        for (int i = 0; i < 20000; ++i) {
            Kernel k;
            k.start = 1000 + i * 10;
            k.end = k.start + 5;
            k.name = w.intern(i % 2 ? "kernel_odd" : "kernel_even");
            k.correlation = i;
            w.add(k);
        }
        CHECK(w.intern("kernel_odd") == 2);  // first seen second
        CHECK(w.intern("") == 0);
    }, true, test_header(), 4096);
    TraceReader reader(path);
    Record r;
    size_t kernels = 0;
    while (reader.next(r)) {
        if (r.kind != RecordKind::Kernel) continue;
        CHECK(reader.string(r.kernel.name) == (kernels % 2 ? "kernel_odd" : "kernel_even"));
        CHECK(r.kernel.correlation == kernels);
        ++kernels;
    }
    CHECK(kernels == 20000);
    CHECK(reader.stats().chunks > 20);  // small chunks: deltas restart per chunk and still decode
    CHECK(reader.string_count() == 3);  // ids 1 and 2, plus the unused slot 0
}

TEST_CASE("long strings are cut at 64 KiB, not rejected") {
    TempDir dir;
    auto path = dir.file("long.gprof");
    std::string huge(100'000, 'x');
    write_trace(path, [&](TraceWriter& w) {
        Kernel k;
        k.name = w.intern(huge.c_str());
        w.add(k);
    });
    TraceReader reader(path);
    Record r;
    REQUIRE(reader.next(r));
    REQUIRE(r.kind == RecordKind::Kernel);
    CHECK(reader.string(r.kernel.name).size() == 64 * 1024);
}

TEST_CASE("a realistic kernel record averages at most 32 bytes") {
    TempDir dir;
    auto path = dir.file("size.gprof");
    const int n = 100'000;
    uint64_t before = 0, after = 0;
    write_trace(path, [&](TraceWriter& w) {
        w.flush();
        before = w.bytes_written();
        const char* names[] = {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE",
                               "ampere_sgemm_128x64_tn", "_Z6reducePfS_i", "void cutlass::Kernel<SM90>"};
        uint64_t t = 1'700'000'000'000'000'000ull;
        for (int i = 0; i < n; ++i) {
            Kernel k;
            k.start = t;
            k.end = t + 2'000 + (i * 37) % 50'000;
            t = k.end + 1'500 + (i * 13) % 4'000;
            k.device = 0;
            k.context = 1;
            k.stream = 7 + i % 4;
            k.correlation = 1000 + i * 3;
            k.grid_x = 108 * (1 + i % 8);
            k.grid_y = k.grid_z = 1;
            k.block_x = 256;
            k.block_y = k.block_z = 1;
            k.registers_per_thread = 40;
            k.static_shared_bytes = i % 2 ? 0 : 16384;
            k.dynamic_shared_bytes = 0;
            k.name = w.intern(names[i % 4]);
            w.add(k);
        }
        w.flush();
        after = w.bytes_written();
    });
    double per_record = double(after - before) / n;
    INFO("bytes per kernel record: " << per_record);
    CHECK(per_record <= 32.0);
}

std::string read_bytes(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST_CASE("format 1.7 encodes exactly as it always did: every kind writes the stored bytes") {
    // golden/every_kind-1.7.gprof was written by the first 1.7 writer (test_header, add_every_kind). A change to
    // a field list, an encoding or the chunking that alters a single byte fails here: that is a format change.
    TempDir dir;
    auto path = dir.file("every.gprof");
    write_trace(path, [](TraceWriter& w) { add_every_kind(w); });
    const std::string golden_path = std::string(GPROF_SOURCE_DIR) + "/tests/format/golden/every_kind-1.7.gprof";
    std::string now = read_bytes(path);
    // Format 1.7 is not released yet: while it is not, GPROF_UPDATE_GOLDEN=1 rewrites the file. Once released,
    // never again (a 1.8 gets a golden file of its own).
    if (const char* u = std::getenv("GPROF_UPDATE_GOLDEN"); u && *u && std::string(u) != "0")
        std::ofstream(golden_path, std::ios::binary) << now;
    std::string golden = read_bytes(golden_path);
    REQUIRE(golden.size() > 800);
    CHECK(now.size() == golden.size());
    size_t first_difference = 0;
    while (first_difference < now.size() && first_difference < golden.size() &&
           now[first_difference] == golden[first_difference])
        ++first_difference;
    CHECK(first_difference == golden.size());
}

TEST_CASE("a 1.6 trace still reads: every record as written (1.6 had no GPU metrics)") {
    // golden/every_kind-1.6.gprof: the 1.6 writer's bytes for add_every_kind.
    TraceReader reader(golden_trace(6));
    CHECK(reader.header().version_minor == 6);
    CHECK(reader.header().pid_ns == test_header().pid_ns);
    auto expected = expected_16();
    check_records(reader, expected);
}

TEST_CASE("a 1.0 trace still reads: every record as written, the fields 1.1 appended as zero") {
    // golden/every_kind-1.0.gprof: the 1.0 writer's bytes for add_every_kind, kept as an old trace.
    TraceReader reader(golden_trace(0));
    CHECK(reader.header().version_major == 1);
    CHECK(reader.header().version_minor == 0);
    auto expected = expected_before_12();
    // What 1.0 wrote of the Memory record: its first nine fields; the 1.1 ones read as zero. 1.0 had no MemoryPool.
    for (auto& line : expected)
        if (line.rfind("12:", 0) == 0) line = line.substr(0, line.find(",2,3,") + 4) + ",0,0,0,0,0,0";
    std::erase_if(expected, [](const std::string& line) { return line.rfind("22:", 0) == 0; });
    std::string end = check_records(reader, expected);
    CHECK(end.substr(end.rfind(',')) == ",0");  // End.signal, added in 1.2, reads as 0
}

TEST_CASE("a 1.1 trace still reads: every record as written, End.signal as zero") {
    // golden/every_kind-1.1.gprof: the 1.1 writer's bytes for add_every_kind (without the kinds 1.2 added).
    TraceReader reader(golden_trace(1));
    CHECK(reader.header().version_minor == 1);
    auto expected = expected_before_12();
    std::string end = check_records(reader, expected);
    CHECK(end.substr(end.rfind(',')) == ",0");  // End.signal, added in 1.2, reads as 0
}

TEST_CASE("a 1.2 trace still reads: Role.job and the header's boot_id, appended in 1.3, read as empty") {
    // golden/every_kind-1.2.gprof: the 1.2 writer's bytes for add_every_kind.
    TraceReader reader(golden_trace(2));
    CHECK(reader.header().version_minor == 2);
    CHECK(reader.header().hostname == "testhost");
    CHECK(reader.header().boot_id.empty());
    auto expected = expected_12();
    check_records(reader, expected);
}

TEST_CASE("a 1.5 trace still reads: every record as written, the header's pid namespace (appended in 1.6) as 0") {
    // golden/every_kind-1.5.gprof: the 1.5 writer's bytes for add_every_kind.
    TraceReader reader(golden_trace(5));
    CHECK(reader.header().version_minor == 5);
    CHECK(reader.header().boot_id == test_header().boot_id);
    CHECK(reader.header().pid_ns == 0);
    auto expected = expected_16();
    check_records(reader, expected);
}

TEST_CASE("a 1.4 trace still reads: every record as written (1.4 had no CPU samples nor OS-runtime calls)") {
    // golden/every_kind-1.4.gprof: the 1.4 writer's bytes for add_every_kind.
    TraceReader reader(golden_trace(4));
    CHECK(reader.header().version_minor == 4);
    CHECK(reader.header().pid_ns == 0);
    auto expected = expected_14();
    check_records(reader, expected);
}

TEST_CASE("a 1.3 trace still reads: every record as written (1.3 had no call-site kinds)") {
    // golden/every_kind-1.3.gprof: the 1.3 writer's bytes for add_every_kind.
    TraceReader reader(golden_trace(3));
    CHECK(reader.header().version_minor == 3);
    CHECK(reader.header().boot_id == test_header().boot_id);
    auto expected = expected_13();
    check_records(reader, expected);
}

TEST_CASE("1.6: the header's pid namespace round-trips") {
    TempDir dir;
    auto path = dir.file("ns.gprof");
    HeaderInfo h = test_header(1);
    h.pid_ns = 4026532179;
    write_trace(path, [](TraceWriter&) {}, true, h);
    TraceReader reader(path);
    CHECK(reader.header().pid == 1);
    CHECK(reader.header().pid_ns == 4026532179);
}

TEST_CASE("1.3: the header's boot id round-trips") {
    TempDir dir;
    auto path = dir.file("boot.gprof");
    HeaderInfo h = test_header(7);
    h.hostname = "node07";
    h.boot_id = "0f5c2a8e-1b7d-4c1e-9a3f-2d6b8e4c7a10";
    write_trace(path, [](TraceWriter&) {}, true, h);
    TraceReader reader(path);
    CHECK(reader.header().hostname == "node07");
    CHECK(reader.header().boot_id == "0f5c2a8e-1b7d-4c1e-9a3f-2d6b8e4c7a10");
    CHECK(reader.header().pid == 7);
}

// The reader takes the tail of an NVTX range (domain .. payload_type) in one step when its 8 fields are one byte
// each, and field by field otherwise (codec.h, describe(Decoder&, Nvtx&)); varints of two bytes have their own step
// too (varint.h). Every mix of small and large tail fields, with the head's shapes (same or other end thread,
// unfinished, one- to three-byte deltas), must read back as written: a field read from the wrong byte fails here.
TEST_CASE("NVTX ranges read back field by field whichever of their fields are one byte") {
    TempDir dir;
    auto path = dir.file("nvtx-shapes.gprof");
    std::vector<Nvtx> written;
    write_trace(path, [&](TraceWriter& w) {
        std::vector<StringId> names;
        for (int i = 0; i < 200; ++i) names.push_back(w.intern(("range-" + std::to_string(i)).c_str()));
        Timestamp t = 1'000'000;
        for (unsigned mask = 0; mask < 256; ++mask)
            for (unsigned head = 0; head < 4; ++head) {
                auto big = [mask](unsigned field) { return (mask >> field & 1) != 0; };
                Nvtx n;
                t += head == 0 ? 5 : head == 1 ? 300 : 70'000;  // start deltas of 1, 2 and 3 bytes
                n.start = t;
                n.end = head == 3 ? 0 : t + 100 + mask;
                n.tid = head == 2 ? 200 + mask : 4242;
                n.end_tid = head == 1 ? 4243 : n.tid;
                n.name = names[mask % 100];
                n.domain = big(0) ? names[150] : mask % 3 ? names[2] : 0;
                n.color = big(1) ? 0xFF00FF00u : mask % 5;
                n.category = big(2) ? 1000 : 7;
                n.category_name = big(3) ? names[199] : mask % 2 ? names[1] : 0;
                n.payload = big(4) ? 0x400921FB54442D18ull : 99;
                n.depth = static_cast<uint16_t>(big(5) ? 300 : mask % 4);
                n.type = big(6) ? NvtxType::StartEnd : NvtxType::PushPop;
                n.payload_type = big(7) ? NvtxPayload::Double : NvtxPayload::None;
                w.add(n);
                written.push_back(n);
            }
    });
    TraceReader reader(path);
    Record r;
    size_t i = 0;
    while (reader.next(r)) {
        if (r.kind != RecordKind::Nvtx) continue;
        REQUIRE(i < written.size());
        const Nvtx &got = r.nvtx, &want = written[i++];
        INFO("range " << i - 1);
        CHECK(got.start == want.start);
        CHECK(got.end == want.end);
        CHECK(got.tid == want.tid);
        CHECK(got.end_tid == want.end_tid);
        CHECK(got.name == want.name);
        CHECK(got.domain == want.domain);
        CHECK(got.color == want.color);
        CHECK(got.category == want.category);
        CHECK(got.category_name == want.category_name);
        CHECK(got.payload == want.payload);
        CHECK(got.depth == want.depth);
        CHECK(got.type == want.type);
        CHECK(got.payload_type == want.payload_type);
    }
    CHECK(i == written.size());
    CHECK(reader.warnings().empty());
}
