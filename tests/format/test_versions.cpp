// Version and compatibility rules: newer majors and unknown required features are refused with both numbers;
// newer minors (new kinds, appended fields) are read with a warning; older minors read missing fields as zero.
#include <catch2/catch.hpp>

#include <bit>
#include <fstream>
#include <iterator>
#include <limits>

#include "codec.h"
#include "record_samples.h"
#include "trace_fixture.h"

using namespace gprof::trace;
using namespace gprof::testing;

namespace {

std::vector<uint8_t> minimal_trace(const TempDir& dir) {
    auto path = dir.file("min.gprof");
    write_trace(path, [](TraceWriter& w) {
        Kernel k;
        k.start = 100;
        k.end = 200;
        k.name = w.intern("k");
        w.add(k);
    });
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Appends one chunk holding `payload` to `file`.
void append_chunk(std::vector<uint8_t>& file, const std::vector<uint8_t>& payload, uint32_t records) {
    uint8_t head[codec::kChunkHeaderBytes];
    codec::store_u32(head, codec::kChunkMagic);
    codec::store_u32(head + 4, static_cast<uint32_t>(payload.size()));
    codec::store_u32(head + 8, records);
    codec::store_u32(head + 12, codec::crc32c(payload.data(), payload.size()));
    file.insert(file.end(), head, head + sizeof head);
    file.insert(file.end(), payload.begin(), payload.end());
}

std::string error_of(const std::vector<uint8_t>& bytes) {
    try {
        TraceReader r("forged.gprof", bytes);
    } catch (const TraceError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a newer major version is refused naming both versions") {
    TempDir dir;
    auto bytes = minimal_trace(dir);
    codec::store_u16(bytes.data() + 8, kFormatMajor + 1);
    codec::store_u16(bytes.data() + 10, 4);
    auto msg = error_of(bytes);
    CHECK(msg.find(std::to_string(kFormatMajor + 1) + ".4") != std::string::npos);
    CHECK(msg.find(std::to_string(kFormatMajor) + "." + std::to_string(kFormatMinor)) != std::string::npos);
}

TEST_CASE("a newer minor version is read with a warning") {
    TempDir dir;
    auto bytes = minimal_trace(dir);
    codec::store_u16(bytes.data() + 10, kFormatMinor + 3);
    TraceReader r("newer-minor", bytes);
    Record rec;
    REQUIRE(r.next(rec));
    CHECK(rec.kind == RecordKind::Kernel);
    REQUIRE_FALSE(r.warnings().empty());
    CHECK(r.warnings()[0].find("newer") != std::string::npos);
}

TEST_CASE("unknown required feature bits are refused, informational bits are not") {
    TempDir dir;
    auto bytes = minimal_trace(dir);
    auto required = bytes;
    codec::store_u32(required.data() + 12, 0x0004);
    CHECK(error_of(required).find("0x0004") != std::string::npos);
    auto informational = bytes;
    codec::store_u32(informational.data() + 12, kFeatureBacktraces);
    CHECK(error_of(informational).empty());
}

TEST_CASE("files that are not traces get a clear error") {
    TempDir dir;
    CHECK(error_of({}).find("empty") != std::string::npos);
    std::vector<uint8_t> text{'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!', '!', '!', '!', '!', '!'};
    CHECK(error_of(text).find("not a gprof-run trace") != std::string::npos);
    CHECK_THROWS_WITH(TraceReader(dir.file("missing.gprof")), Catch::Contains("cannot open trace"));
    CHECK_THROWS_WITH(TraceReader(dir.path().string()), Catch::Contains("directory"));
    // Only the preamble: the process died before the header chunk was written.
    auto bytes = minimal_trace(dir);
    std::vector<uint8_t> preamble(bytes.begin(), bytes.begin() + 16);
    CHECK(error_of(preamble).find("no readable header") != std::string::npos);
}

TEST_CASE("records of unknown kinds are skipped and counted, appended fields are ignored") {
    TempDir dir;
    auto bytes = minimal_trace(dir);
    codec::store_u16(bytes.data() + 10, kFormatMinor + 1);
    std::vector<uint8_t> payload;
    // Kind 200 with a 3-byte body, twice.
    for (int i = 0; i < 2; ++i) payload.insert(payload.end(), {200, 3, 1, 2, 3});
    // A Capture record with one extra trailing field a newer writer appended.
    payload.insert(payload.end(), {static_cast<uint8_t>(RecordKind::Capture), 4, 2 /*ts delta +1*/, 1, 1, 0x7F});
    append_chunk(bytes, payload, 3);
    TraceReader r("forged", bytes);
    Record rec;
    std::vector<RecordKind> kinds;
    while (r.next(rec)) {
        kinds.push_back(rec.kind);
        if (rec.kind == RecordKind::Capture) {
            CHECK(rec.capture.timestamp == 1);
            CHECK(rec.capture.action == CaptureAction::Stop);
            CHECK(rec.capture.reason == CaptureReason::ProfilerApi);
        }
    }
    CHECK(kinds == std::vector<RecordKind>{RecordKind::Kernel, RecordKind::End, RecordKind::Capture});
    CHECK(r.stats().unknown_records == 2);
    bool named = false;
    for (const auto& w : r.warnings()) named |= w.find("2 records of unknown kind 200") != std::string::npos;
    CHECK(named);
}

TEST_CASE("fields an older writer did not have read as zero") {
    TempDir dir;
    auto bytes = minimal_trace(dir);
    std::vector<uint8_t> payload;
    // A Kernel body holding only start (delta 10) and end (+4): every later field is absent.
    payload.insert(payload.end(), {static_cast<uint8_t>(RecordKind::Kernel), 2, 20, 8});
    append_chunk(bytes, payload, 1);
    TraceReader r("older", bytes);
    Record rec, last;
    while (r.next(rec)) last = rec;
    REQUIRE(last.kind == RecordKind::Kernel);
    CHECK(last.kernel.start == 10);
    CHECK(last.kernel.end == 14);
    CHECK(last.kernel.grid_x == 0);
    CHECK(last.kernel.name == 0);
}

TEST_CASE("CRC-32C matches the RFC 3720 test vector") {
    std::vector<uint8_t> zeros(32, 0);
    CHECK(codec::crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
    const char* digits = "123456789";
    CHECK(codec::crc32c(reinterpret_cast<const uint8_t*>(digits), 9) == 0xE3069283u);
    CHECK(codec::crc32c_portable(reinterpret_cast<const uint8_t*>(digits), 9) == 0xE3069283u);
}

TEST_CASE("CRC-32C: the interleaved streams give the table version's value at every length and alignment") {
    // Streams are 4 KiB each, joined in threes: lengths around 12 KiB multiples, odd tails and starts.
    std::vector<uint8_t> data(3 * 12288 + 4096 + 64);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (auto& b : data) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        b = static_cast<uint8_t>(seed >> 56);
    }
    size_t checked = 0;
    for (size_t start : {0u, 1u, 3u, 7u, 8u, 13u})
        for (size_t n : {0u, 1u, 7u, 8u, 9u, 4095u, 4096u, 12287u, 12288u, 12289u, 12295u, 24576u, 30000u, 36864u,
                         36864u + 4097u})
            if (start + n <= data.size()) {
                INFO(start << " + " << n);
                CHECK(codec::crc32c(data.data() + start, n) == codec::crc32c_portable(data.data() + start, n));
                ++checked;
            }
    CHECK(checked == 6 * 15);
    // A value the join could get wrong only through the shift tables: one bit flipped in the first stream.
    std::vector<uint8_t> one(12288, 0);
    one[5] = 0x10;
    CHECK(codec::crc32c(one.data(), one.size()) == codec::crc32c_portable(one.data(), one.size()));
}

TEST_CASE("Nvtx records: the writer's own encoder writes exactly what the field list's generic encoder writes") {
    // writer.cpp encodes Nvtx by hand (the NVTX hot path); the reader decodes with describe(). Every shape: the
    // zero tail of a plain push/pop, tid == end_tid and not, values across varint lengths, depth/type at 0x7F/0x80.
    std::vector<Nvtx> records;
    uint64_t seed = 0x243F6A8885A308D3ull;
    auto rnd = [&seed] {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        return seed;
    };
    auto pick = [&](int bits) { return bits >= 64 ? rnd() : rnd() & ((uint64_t(1) << bits) - 1); };
    const int widths[] = {0, 1, 7, 8, 14, 21, 32, 64};
    Timestamp t = 1'700'000'000'000'000'000ull;
    for (int i = 0; i < 4000; ++i) {
        Nvtx r;
        t += pick(widths[rnd() % 6]);
        r.start = rnd() % 50 == 0 ? t - 1000 : t;  // now and then earlier than the previous record
        r.end = rnd() % 20 == 0 ? 0 : r.start + pick(widths[rnd() % 8] % 40);
        r.tid = pick(widths[rnd() % 8]);
        r.end_tid = rnd() % 3 ? r.tid : pick(widths[rnd() % 8]);
        r.name = static_cast<StringId>(pick(widths[rnd() % 7] % 33));
        bool plain = rnd() % 2;
        if (!plain) {
            r.domain = static_cast<StringId>(pick(widths[rnd() % 7] % 33));
            r.color = static_cast<uint32_t>(pick(widths[rnd() % 7] % 33));
            r.category = static_cast<uint32_t>(pick(widths[rnd() % 7] % 33));
            r.category_name = static_cast<StringId>(pick(widths[rnd() % 7] % 33));
            r.payload = pick(widths[rnd() % 8]);
        }
        r.depth = static_cast<uint16_t>(rnd() % 4 == 0 ? 0x7F + rnd() % 3 : pick(widths[rnd() % 5] % 17));
        r.type = static_cast<NvtxType>(rnd() % 3);
        r.payload_type = static_cast<NvtxPayload>(rnd() % 7);
        records.push_back(r);
    }
    TempDir dir;
    auto path = dir.file("nvtx.gprof");
    write_trace(path, [&](TraceWriter& w) {
        for (const Nvtx& r : records) w.add(r);
    }, true, test_header(), 1 << 20);  // one data chunk

    std::ifstream in(path, std::ios::binary);
    std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = codec::kPreambleBytes;
    REQUIRE(file.size() > at + codec::kChunkHeaderBytes);
    at += codec::kChunkHeaderBytes + codec::load_u32(reinterpret_cast<const uint8_t*>(file.data()) + at + 4);  // header
    REQUIRE(file.size() > at + codec::kChunkHeaderBytes);
    const auto* chunk = reinterpret_cast<const uint8_t*>(file.data()) + at;
    uint32_t payload = codec::load_u32(chunk + 4);
    CHECK(codec::load_u32(chunk + 8) == records.size());
    std::string got(reinterpret_cast<const char*>(chunk + codec::kChunkHeaderBytes), payload);

    std::string want;
    codec::DeltaState state;
    for (Nvtx r : records) {
        uint8_t body[codec::kMaxRecordBytes];
        codec::Encoder enc(body, state);
        describe(enc, r);
        auto n = static_cast<size_t>(enc.position() - body);
        REQUIRE(n < 0x80);
        want += static_cast<char>(RecordKind::Nvtx);
        want += static_cast<char>(n);
        want.append(reinterpret_cast<const char*>(body), n);
    }
    REQUIRE(got.size() == want.size());
    size_t first_difference = 0;
    while (first_difference < got.size() && got[first_difference] == want[first_difference]) ++first_difference;
    CHECK(first_difference == got.size());
}

// GPU metric samples (1.7): values are doubles, written as their byte-swapped bits in LEB128, so every double comes
// back bit for bit (NaN, infinities, -0, subnormals), zeros take one byte and integral counts at most 6, and a count
// beyond kMaxGpuMetrics or values past the body are a malformed record, skipped and said, never read out of bounds.
TEST_CASE("1.7: GPU metric samples keep every double bit for bit, integral values and zeros stay small") {
    TempDir dir;
    auto path = dir.file("metrics.gprof");
    GpuMetricSample full;
    full.start = 1'000'000;
    full.end = 1'100'000;
    full.device = 3;
    full.value_count = kMaxGpuMetrics;
    const double odd[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(), -0.0, std::numeric_limits<double>::denorm_min(),
                          std::numeric_limits<double>::max(), 99.8, 1.93e12};
    for (uint32_t i = 0; i < kMaxGpuMetrics; ++i) full.values[i] = i < 8 ? odd[i] : i * 1000.0 + 0.5;
    GpuMetricSample idle;  // an idle interval: 8 zeros
    idle.start = 1'100'000;
    idle.end = 1'200'000;
    idle.device = 3;
    idle.value_count = 8;
    GpuMetricSample counts = idle;  // cycles and bytes: integral values
    counts.values[4] = 166'437;
    counts.values[5] = 166'500;
    counts.values[6] = 193'000'000;
    counts.values[7] = 192'999'936;
    size_t idle_bytes = 0, counts_bytes = 0;
    for (const GpuMetricSample* s : {&idle, &counts}) {
        uint8_t body[codec::kMaxRecordBytes];
        codec::DeltaState state;
        codec::Encoder enc(body, state);
        describe(enc, const_cast<GpuMetricSample&>(*s));
        (s == &idle ? idle_bytes : counts_bytes) = static_cast<size_t>(enc.position() - body);
    }
    INFO("body bytes: idle " << idle_bytes << ", with counts " << counts_bytes);
    CHECK(idle_bytes <= 4 + 3 + 1 + 1 + 8);        // start (absolute), end - start, device, count, 8 one-byte zeros
    CHECK(counts_bytes <= idle_bytes + 4 * 5);     // each count (< 2^28) in at most 6 bytes, not 10
    write_trace(path, [&](TraceWriter& w) {
        w.add(full);
        w.add(idle);
        w.add(counts);
    });
    TraceReader reader(path);
    Record r;
    std::vector<GpuMetricSample> got;
    while (reader.next(r))
        if (r.kind == RecordKind::GpuMetricSample) got.push_back(r.gpu_metric_sample);
    REQUIRE(got.size() == 3);
    CHECK(reader.warnings().empty());
    for (size_t k = 0; k < 3; ++k) {
        const GpuMetricSample& want = k == 0 ? full : k == 1 ? idle : counts;
        CHECK(got[k].start == want.start);
        CHECK(got[k].end == want.end);
        CHECK(got[k].device == want.device);
        REQUIRE(got[k].value_count == want.value_count);
        for (uint32_t i = 0; i < want.value_count; ++i)
            CHECK(std::bit_cast<uint64_t>(got[k].values[i]) == std::bit_cast<uint64_t>(want.values[i]));
    }
}

TEST_CASE("1.7: a GPU metric sample claiming more values than a sample holds, or than its body, is skipped and said") {
    TempDir dir;
    auto bytes = minimal_trace(dir);
    auto kind = static_cast<uint8_t>(RecordKind::GpuMetricSample);
    std::vector<uint8_t> payload;
    // start 5, end +1, device 0, 33 values (one more than kMaxGpuMetrics), then 33 zeros.
    payload.insert(payload.end(), {kind, 4 + 33, 5, 2, 0, 33});
    payload.insert(payload.end(), 33, 0);
    // start 5, end +1, device 0, 3 values but only 2 in the body.
    payload.insert(payload.end(), {kind, 6, 5, 2, 0, 3, 0, 0});
    // A well-formed one after them: 2 values, 0 and 1.0 (0x3FF0... byte-swapped: 0xF03F as LEB128 0xBF 0xE0 0x03).
    payload.insert(payload.end(), {kind, 8, 5, 2, 0, 2, 0, 0xBF, 0xE0, 0x03});
    append_chunk(bytes, payload, 3);
    TraceReader r("forged", bytes);
    Record rec;
    std::vector<GpuMetricSample> samples;
    while (r.next(rec))
        if (rec.kind == RecordKind::GpuMetricSample) samples.push_back(rec.gpu_metric_sample);
    REQUIRE(samples.size() == 1);
    CHECK(samples[0].value_count == 2);
    CHECK(samples[0].values[0] == 0.0);
    CHECK(samples[0].values[1] == 1.0);
    std::string all;
    for (const auto& w : r.warnings()) all += w + "\n";
    INFO(all);
    CHECK(all.find("malformed gpu_metric_sample") != std::string::npos);
    CHECK(r.stats().malformed_records == 2);
}
