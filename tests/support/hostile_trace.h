// Hostile traces with a valid checksum: a trace split into its chunks and records, changed record by record, and
// framed again with correct sizes, counts and CRC-32C. The structure-aware fuzzer (tests/report/fuzz_reports.cpp)
// and the hostile-trace tests use it to get past the framing, which a byte-level mutation almost never does.
// A test double: nothing here is installed.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "codec.h"  // formats/src: the framing constants and crc32c, so the framing is the reader's own

namespace gprof::testing {

struct RawRecord {
    uint8_t kind = 0;
    std::vector<uint8_t> body;
};

struct RawChunk {
    std::vector<RawRecord> records;
};

struct RawTrace {
    std::array<uint8_t, trace::codec::kPreambleBytes> preamble{};
    std::vector<RawChunk> chunks;

    // Splits an intact trace; nullopt when the framing is not (a chunk fails its size, magic or checksum, or a
    // record overruns its chunk).
    static std::optional<RawTrace> parse(const uint8_t* data, size_t size) {
        using namespace trace::codec;
        if (size < kPreambleBytes || std::memcmp(data, kFileMagic, sizeof kFileMagic) != 0) return std::nullopt;
        RawTrace t;
        std::memcpy(t.preamble.data(), data, kPreambleBytes);
        size_t off = kPreambleBytes;
        while (off < size) {
            if (size - off < kChunkHeaderBytes || load_u32(data + off) != kChunkMagic) return std::nullopt;
            uint32_t psize = load_u32(data + off + 4);
            if (psize > size - off - kChunkHeaderBytes) return std::nullopt;
            const uint8_t* p = data + off + kChunkHeaderBytes;
            const uint8_t* end = p + psize;
            if (crc32c(p, psize) != load_u32(data + off + 12)) return std::nullopt;
            RawChunk chunk;
            while (p < end) {
                RawRecord r;
                r.kind = *p;
                bool ok = true;
                uint64_t len = 0;
                const uint8_t* body = get_varint(p + 1, end, len, ok);
                if (!ok || len > static_cast<uint64_t>(end - body)) return std::nullopt;
                r.body.assign(body, body + len);
                chunk.records.push_back(std::move(r));
                p = body + len;
            }
            t.chunks.push_back(std::move(chunk));
            off += kChunkHeaderBytes + psize;
        }
        return t;
    }
    static std::optional<RawTrace> parse(const std::vector<uint8_t>& bytes) {
        return parse(bytes.data(), bytes.size());
    }

    // Frames the chunks again: payload size, record count and checksum all correct.
    std::vector<uint8_t> serialize() const {
        using namespace trace::codec;
        std::vector<uint8_t> out(preamble.begin(), preamble.end());
        for (const RawChunk& c : chunks) {
            std::vector<uint8_t> payload;
            for (const RawRecord& r : c.records) {
                payload.push_back(r.kind);
                uint8_t len[10];
                payload.insert(payload.end(), len, put_varint(len, r.body.size()));
                payload.insert(payload.end(), r.body.begin(), r.body.end());
            }
            uint8_t head[kChunkHeaderBytes];
            store_u32(head, kChunkMagic);
            store_u32(head + 4, static_cast<uint32_t>(payload.size()));
            store_u32(head + 8, static_cast<uint32_t>(c.records.size()));
            store_u32(head + 12, crc32c(payload.data(), payload.size()));
            out.insert(out.end(), head, head + kChunkHeaderBytes);
            out.insert(out.end(), payload.begin(), payload.end());
        }
        return out;
    }

    RawRecord* first_of_kind(uint8_t kind) {
        for (RawChunk& c : chunks)
            for (RawRecord& r : c.records)
                if (r.kind == kind) return &r;
        return nullptr;
    }
};

// A record body read as the LEB128 values it is made of. Every field of every data kind is one LEB128 value
// (fields.h), except the build id bytes of Module and the header's texts: those read as whatever values their
// bytes make, which is as good a thing to mutate. `whole` is false when the last value ran past the body.
struct BodyValues {
    std::vector<uint64_t> values;
    bool whole = true;
};

inline BodyValues body_values(const std::vector<uint8_t>& body) {
    BodyValues out;
    const uint8_t* p = body.data();
    const uint8_t* end = p + body.size();
    while (p < end) {
        bool ok = true;
        uint64_t v = 0;
        p = trace::codec::get_varint(p, end, v, ok);
        if (!ok) {
            out.whole = false;
            break;
        }
        out.values.push_back(v);
    }
    return out;
}

inline std::vector<uint8_t> encode_values(const std::vector<uint64_t>& values) {
    std::vector<uint8_t> out;
    for (uint64_t v : values) {
        uint8_t buf[10];
        out.insert(out.end(), buf, trace::codec::put_varint(buf, v));
    }
    return out;
}

// Values at the edges of every integer width a field is read into, as raw LEB128 (so also as zigzag: the last
// two are INT64_MIN/INT64_MAX after unzigzag, 1 is -1).
inline constexpr std::array<uint64_t, 18> kExtremeValues = {
    0, 1, 2, 0x7F, 0x80, 0xFF, 0xFFFF, 0x10000, 1ull << 30, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000,
    1ull << 40, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFE, 0xFFFFFFFFFFFFFFFF};

// Replaces value `field` of a record's body (appending zeros up to it when the body is shorter). False when the
// body does not read as whole values (a Module's build id, a text): such a body is left alone.
inline bool set_field(RawRecord& r, size_t field, uint64_t value) {
    BodyValues v = body_values(r.body);
    if (!v.whole) return false;
    if (v.values.size() <= field) v.values.resize(field + 1, 0);
    v.values[field] = value;
    r.body = encode_values(v.values);
    return true;
}

// One structure-aware change, chosen by `rng`: a field set to an extreme or random value, a kind changed, a record
// duplicated, dropped, moved or cut short, fields appended, the format minor version changed. Returns false when
// the trace has no record to change.
inline bool mutate_trace(RawTrace& t, std::mt19937_64& rng) {
    std::vector<std::pair<size_t, size_t>> where;
    for (size_t c = 0; c < t.chunks.size(); ++c)
        for (size_t i = 0; i < t.chunks[c].records.size(); ++i) where.emplace_back(c, i);
    if (where.empty()) return false;
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    auto [ci, ri] = where[pick(where.size())];
    RawChunk& chunk = t.chunks[ci];
    RawRecord& r = chunk.records[ri];
    auto value = [&]() -> uint64_t {
        switch (pick(4)) {
            case 0: return kExtremeValues[pick(kExtremeValues.size())];
            case 1: return rng();
            case 2: return rng() % 256;
            default: return rng() >> pick(64);
        }
    };
    switch (pick(10)) {
        case 0: case 1: case 2: case 3: {  // a field: the most useful change, so the most frequent
            BodyValues v = body_values(r.body);
            size_t n = v.values.size() + 2;
            if (!set_field(r, pick(n), value()) && !r.body.empty()) r.body[pick(r.body.size())] = uint8_t(rng());
            break;
        }
        case 4: {  // a field to a small offset of its value (ids just past the last defined one, deltas)
            BodyValues v = body_values(r.body);
            if (v.whole && !v.values.empty()) {
                size_t f = pick(v.values.size());
                set_field(r, f, v.values[f] + (rng() % 16) - 8);
            }
            break;
        }
        case 5: r.kind = static_cast<uint8_t>(pick(4) ? pick(32) : rng()); break;
        case 6: {
            RawRecord copy = r;
            RawChunk& to = t.chunks[pick(t.chunks.size())];
            to.records.insert(to.records.begin() + static_cast<long>(pick(to.records.size() + 1)), std::move(copy));
            break;
        }
        case 7:
            if (ci != 0 || ri != 0) chunk.records.erase(chunk.records.begin() + static_cast<long>(ri));
            break;
        case 8: r.body.resize(pick(r.body.size() + 1)); break;
        default: {
            uint8_t extra[10];
            uint8_t* e = trace::codec::put_varint(extra, value());
            r.body.insert(r.body.end(), extra, e);
            break;
        }
    }
    if (pick(64) == 0) t.preamble[10] = static_cast<uint8_t>(pick(8));  // minor version: older or newer
    return true;
}

// libFuzzer's mutation of one input, as LLVMFuzzerMutate takes it.
using ByteMutator = size_t (*)(uint8_t* data, size_t size, size_t max_size);

// The custom mutator of the structure-aware fuzz targets (LLVMFuzzerCustomMutator): an input that frames as a trace
// gets one to three mutate_trace() changes and is framed again; one that does not (libFuzzer's own mutations and
// cross-overs), a result over max_size, and with `byte_level_one_in` > 0 one input in that many besides, get
// `byte_mutate` (LLVMFuzzerMutate), which keeps the framing itself fuzzed.
inline size_t mutate_trace_input(uint8_t* data, size_t size, size_t max_size, unsigned int seed, ByteMutator byte_mutate,
                                 unsigned int byte_level_one_in = 0) {
    auto raw = RawTrace::parse(data, size);
    if (!raw || (byte_level_one_in != 0 && seed % byte_level_one_in == 0)) return byte_mutate(data, size, max_size);
    std::mt19937_64 rng(seed);
    int changes = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < changes; ++i) mutate_trace(*raw, rng);
    std::vector<uint8_t> out = raw->serialize();
    if (out.size() > max_size) return byte_mutate(data, size, max_size);
    std::memcpy(data, out.data(), out.size());
    return out.size();
}

}  // namespace gprof::testing
