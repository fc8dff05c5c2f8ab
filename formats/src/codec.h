// Encoding shared by TraceWriter and TraceReader. Internal to formats/.
//
// File   = preamble (16 bytes) + chunks.
// Chunk  = chunk header (16 bytes: magic, payload size, record count, CRC-32C of payload) + payload.
// Record = kind (1 byte) + body length (LEB128) + body (fields in the order of their list in fields.h).
// Field encodings: LEB128 for unsigned values, zigzag LEB128 for signed ones; a record's first timestamp is a
// delta from the previous record's first timestamp in the same chunk, its end a delta from its start, its
// correlation id a delta from the previous one in the chunk. Both deltas restart at every chunk, so any
// intact chunk decodes on its own. docs/trace-format.md is the prose version of this file.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <string>
#include <string_view>

#include "gprof/trace/fields.h"
#include "gprof/trace/header.h"
#include "gprof/trace/records.h"
#include "gprof/trace/varint.h"

namespace gprof::trace::codec {

inline constexpr char kFileMagic[8] = {'G', 'P', 'R', 'O', 'F', 'T', 'R', 'C'};
inline constexpr uint32_t kChunkMagic = 0x4B435047;  // "GPCK" little-endian
inline constexpr size_t kPreambleBytes = 16;
inline constexpr size_t kChunkHeaderBytes = 16;
inline constexpr size_t kMaxChunkPayload = 64u << 20;   // a reader refuses larger sizes as corrupt
inline constexpr size_t kMaxStringBytes = 64u << 10;
// The reader keeps at most this many of a header's argv texts (Linux caps a command line at a few MiB, so a real
// one stays under it; the rest of a larger count is walked over and counted).
inline constexpr uint64_t kMaxHeaderArgs = 1u << 16;
// Room the writer reserves for one non-string record. Its value decides where chunks are sealed, so it stays as
// version 1.0 wrote it; the checks below prove it bounds every kind's largest encoding.
inline constexpr size_t kMaxRecordBytes = 1 + 2 + 12 * 10 + kMaxBacktraceFrames * 10 + kMaxBuildIdBytes;
static_assert(1 + 2 + kMaxDataBodyBytes <= kMaxRecordBytes,
              "a record kind's largest encoding outgrew kMaxRecordBytes (kind byte + 2-byte length + body)");
static_assert(kMaxDataBodyBytes < (1u << 14), "the writer gives record bodies at most a two-byte length");

uint32_t crc32c(const uint8_t* data, size_t size) noexcept;
uint32_t crc32c_portable(const uint8_t* data, size_t size) noexcept;  // the table version (CPUs without SSE4.2; tests)

inline void store_u32(uint8_t* p, uint32_t v) noexcept { std::memcpy(p, &v, 4); }
inline uint32_t load_u32(const uint8_t* p) noexcept {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline void store_u16(uint8_t* p, uint16_t v) noexcept { std::memcpy(p, &v, 2); }
inline uint16_t load_u16(const uint8_t* p) noexcept {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

// The field encoding (gprof/trace/varint.h, public: the report's compact streams use it too).
using varint::unzigzag;
using varint::zigzag;
inline uint8_t* put_varint(uint8_t* p, uint64_t v) noexcept { return varint::put(p, v); }

// A `reals` value as the unsigned value it is written as: its IEEE-754 bits byte-swapped, so the bytes that are zero
// in integral values and zeros (the low mantissa bytes) are the high ones LEB128 leaves out.
inline uint64_t real_bits(double v) noexcept { return __builtin_bswap64(std::bit_cast<uint64_t>(v)); }
inline double real_of_bits(uint64_t x) noexcept { return std::bit_cast<double>(__builtin_bswap64(x)); }
[[gnu::always_inline]] inline const uint8_t* get_varint(const uint8_t* p, const uint8_t* end, uint64_t& out,
                                                       bool& ok) noexcept {
    return varint::get(p, end, out, ok);
}

// Delta state that restarts at every chunk.
struct DeltaState {
    Timestamp prev_time = 0;
    uint32_t prev_correlation = 0;
};

// ----- encoder ---------------------------------------------------------------------------------------------

// Writes fields with no bounds checks: the caller has reserved kMaxRecordBytes.
class Encoder {
public:
    Encoder(uint8_t* p, DeltaState& state) : p_(p), state_(state) {}
    uint8_t* position() const { return p_; }

    template <class T> void u(const char*, const T& v) { p_ = put_varint(p_, static_cast<uint64_t>(v)); }
    template <class T> void s(const char*, const T& v) { p_ = put_varint(p_, zigzag(static_cast<int64_t>(v))); }
    void str(const char* name, const StringId& id) { u(name, id); }
    void time(const char*, const Timestamp& t) {
        p_ = put_varint(p_, zigzag(static_cast<int64_t>(t - state_.prev_time)));
        state_.prev_time = t;
    }
    void end(const char*, const Timestamp& e, const Timestamp& start) {
        p_ = put_varint(p_, zigzag(static_cast<int64_t>(e - start)));
    }
    void corr(const char*, const uint32_t& c) {
        p_ = put_varint(p_, zigzag(static_cast<int64_t>(c) - static_cast<int64_t>(state_.prev_correlation)));
        state_.prev_correlation = c;
    }
    void bytes(const char*, const uint8_t* data, const uint32_t& size, uint32_t max) {
        uint32_t n = size < max ? size : max;
        p_ = put_varint(p_, n);
        std::memcpy(p_, data, n);
        p_ += n;
    }
    void frames(const char*, const uint64_t* f, const uint32_t& count, uint32_t max) {
        uint32_t n = count < max ? count : max;
        p_ = put_varint(p_, n);
        uint64_t prev = 0;
        for (uint32_t i = 0; i < n; ++i) {  // neighbouring frames are close: delta them
            p_ = put_varint(p_, zigzag(static_cast<int64_t>(f[i] - prev)));
            prev = f[i];
        }
    }
    void reals(const char*, const double* values, const uint32_t& count, uint32_t max) {
        uint32_t n = count < max ? count : max;
        p_ = put_varint(p_, n);
        for (uint32_t i = 0; i < n; ++i) p_ = put_varint(p_, real_bits(values[i]));
    }
    // Header texts: borrowed C strings (nullptr reads as "").
    void text(const char*, const char* const& t) {
        size_t n = t ? std::strlen(t) : 0;
        p_ = put_varint(p_, n);
        if (n) std::memcpy(p_, t, n);
        p_ += n;
    }
    void texts(const char* name, const HeaderInfo& h) {
        p_ = put_varint(p_, h.argc);
        for (uint32_t i = 0; i < h.argc; ++i) text(name, h.argv ? h.argv[i] : nullptr);
    }

private:
    uint8_t* p_;
    DeltaState& state_;
};

// ----- decoder ---------------------------------------------------------------------------------------------

#define GPROF_DECODE_INLINE [[gnu::always_inline]] inline

// Reads fields from one record body. Fields past the end of the body (a record from an older minor version)
// read as zero; fields the reader does not know (a newer minor version) are left unread.
class Decoder {
public:
    Decoder(const uint8_t* p, const uint8_t* end, DeltaState& state) : p_(p), end_(end), state_(state) {}
    bool ok() const { return ok_; }

    // String ids above `max` make the record unusable (string_id_out_of_range() names the first); the reader
    // sets the largest id the file can have defined by then, so no id from a file sizes a table beyond it.
    void limit_string_ids(uint64_t max) { max_string_id_ = max; }
    uint64_t string_id_out_of_range() const { return bad_string_id_; }

    // The field readers are forced inline (GPROF_DECODE_INLINE): describe() calls one per field of every record, and
    // as calls they were a tenth of a summary's CPU (docs/performance.md, "the decoder inlined").
    template <class T> GPROF_DECODE_INLINE void u(const char*, T& v) { v = static_cast<T>(next()); }
    template <class T> GPROF_DECODE_INLINE void s(const char*, T& v) { v = static_cast<T>(unzigzag(next())); }
    GPROF_DECODE_INLINE void str(const char*, StringId& id) {
        uint64_t x = next();  // checked before it is narrowed: 2^32 + 5 must not pass as 5
        if (x > max_string_id_ && bad_string_id_ == 0) bad_string_id_ = x;
        id = x > max_string_id_ ? 0 : static_cast<StringId>(x);
    }
    GPROF_DECODE_INLINE void time(const char*, Timestamp& t) {
        t = state_.prev_time + static_cast<uint64_t>(unzigzag(next()));
        state_.prev_time = t;
    }
    GPROF_DECODE_INLINE void end(const char*, Timestamp& e, const Timestamp& start) {
        bool present = p_ < end_;
        uint64_t x = next();
        e = present ? start + static_cast<uint64_t>(unzigzag(x)) : 0;
    }
    GPROF_DECODE_INLINE void corr(const char*, uint32_t& c) {
        // Modulo 2^32 as the writer's delta was: in unsigned arithmetic, so a hostile delta is not an overflow.
        c = static_cast<uint32_t>(state_.prev_correlation + static_cast<uint64_t>(unzigzag(next())));
        state_.prev_correlation = c;
    }
    void bytes(const char*, uint8_t* data, uint32_t& size, uint32_t max) {
        uint64_t n = next();
        if (n > max || n > static_cast<uint64_t>(end_ - p_)) {
            ok_ = false;
            size = 0;
            return;
        }
        std::memcpy(data, p_, n);
        p_ += n;
        size = static_cast<uint32_t>(n);
    }
    void frames(const char*, uint64_t* f, uint32_t& count, uint32_t max) {
        uint64_t n = next();
        if (n > max) {
            ok_ = false;
            count = 0;
            return;
        }
        uint64_t prev = 0;
        for (uint64_t i = 0; i < n && ok_; ++i) {
            uint64_t x = 0;
            p_ = get_varint(p_, end_, x, ok_);
            prev += static_cast<uint64_t>(unzigzag(x));
            f[i] = prev;
        }
        count = ok_ ? static_cast<uint32_t>(n) : 0;
    }
    void reals(const char*, double* values, uint32_t& count, uint32_t max) {
        uint64_t n = next();
        if (n > max) {
            ok_ = false;
            count = 0;
            return;
        }
        for (uint64_t i = 0; i < n && ok_; ++i) {
            uint64_t x = 0;
            p_ = get_varint(p_, end_, x, ok_);
            values[i] = real_of_bits(x);
        }
        count = ok_ ? static_cast<uint32_t>(n) : 0;
    }
    // Header texts, into a std::string or (no allocation) a view of the body.
    template <class S> void text(const char*, S& s) {
        std::string_view t = take_text();
        s = S(t.data(), t.size());
    }
    // Keeps the first kMaxHeaderArgs arguments and walks over the rest (a count of 2^40, or millions of empty
    // texts in a 64 MiB header, must not become millions of strings); the last kept one says how many were not.
    void texts(const char* name, TraceHeader& h) {
        uint64_t n = count_texts();
        uint64_t keep = n < kMaxHeaderArgs ? n : kMaxHeaderArgs;
        h.argv.reserve(static_cast<size_t>(keep) + (n > keep));
        for (uint64_t i = 0; i < keep && ok_; ++i) text(name, h.argv.emplace_back());
        for (uint64_t i = keep; i < n && ok_; ++i) take_text();
        if (ok_ && n > keep) h.argv.push_back("[" + std::to_string(n - keep) + " more arguments not kept]");
    }
    template <class H> void texts(const char*, H& h) {  // a view: the texts are walked over and counted
        h.argc = count_texts();
        for (uint64_t i = 0; i < h.argc && ok_; ++i) take_text();
    }

    // When the next 8 bytes of the body are 8 one-byte values (no continuation bit), reads them into `out` and moves
    // past them; else reads nothing. For a record's tail of small fields (describe(Decoder&, Nvtx&) below).
    GPROF_DECODE_INLINE bool eight_small_values(uint8_t (&out)[8]) {
        uint64_t w;
        if (end_ - p_ < 8) return false;
        std::memcpy(&w, p_, 8);
        if (w & 0x8080808080808080ull) return false;
        std::memcpy(out, p_, 8);
        p_ += 8;
        return true;
    }
    // A string id read otherwise than by str(): checked against the bound as str() does.
    GPROF_DECODE_INLINE StringId string_id(uint64_t x) {
        if (x > max_string_id_ && bad_string_id_ == 0) bad_string_id_ = x;
        return x > max_string_id_ ? 0 : static_cast<StringId>(x);
    }

private:
    // The next LEB128 value; 0 past the end of the body. Inlined: it runs once per field of every record (as a
    // call it was a tenth of a summary's CPU: docs/performance.md, "the decoder inlined").
    GPROF_DECODE_INLINE uint64_t next() {
        uint64_t x = 0;
        if (p_ < end_) p_ = get_varint(p_, end_, x, ok_);
        return x;
    }
    std::string_view take_text() {
        uint64_t n = next();
        if (n > static_cast<uint64_t>(end_ - p_)) {
            ok_ = false;
            return {};
        }
        std::string_view t(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        return t;
    }
    // A text count: every text takes at least its length byte, so a count larger than the bytes left is damage.
    uint64_t count_texts() {
        uint64_t n = next();
        if (n > static_cast<uint64_t>(end_ - p_)) {
            ok_ = false;
            return 0;
        }
        return n;
    }

    const uint8_t* p_;
    const uint8_t* end_;
    DeltaState& state_;
    bool ok_ = true;
    uint64_t max_string_id_ = UINT64_MAX;
    uint64_t bad_string_id_ = 0;
};

}  // namespace gprof::trace::codec

namespace gprof::trace {

// The Nvtx body as the field list's describe() reads it (found by overload before the template), with the tail the
// writer's encode_nvtx() writes for most ranges (domain, color, category, category_name, payload, depth, type,
// payload_type as 8 one-byte values, mostly zeros) read in one step: the generic walk of the 13 fields was the
// largest cost per range of an NVTX-heavy summary (callgrind: 190 instructions a record). Any other body, short or
// long, goes field by field as before; format_tests compares the two on every shape, whole and cut short.
static_assert(fields_check::max_body_bytes<Nvtx>() == 13 * 10,
              "the Nvtx field list changed: describe(Decoder&, Nvtx&) here and encode_nvtx() in writer.cpp follow it");
GPROF_DECODE_INLINE void describe(codec::Decoder& v, Nvtx& r) {
    v.time("start", r.start);
    v.end("end", r.end, r.start);
    v.u("tid", r.tid);
    v.u("end_tid", r.end_tid);
    v.str("name", r.name);
    uint8_t tail[8];
    if (v.eight_small_values(tail)) {
        r.domain = v.string_id(tail[0]);
        r.color = tail[1];
        r.category = tail[2];
        r.category_name = v.string_id(tail[3]);
        r.payload = tail[4];
        r.depth = tail[5];
        r.type = static_cast<NvtxType>(tail[6]);
        r.payload_type = static_cast<NvtxPayload>(tail[7]);
        return;
    }
    v.str("domain", r.domain);
    v.u("color", r.color);
    v.u("category", r.category);
    v.str("category_name", r.category_name);
    v.u("payload", r.payload);
    v.u("depth", r.depth);
    v.u("type", r.type);
    v.u("payload_type", r.payload_type);
}

}  // namespace gprof::trace

namespace gprof::trace::codec {

// ----- the preamble and the header -------------------------------------------------------------------------

// The 16 bytes that open a file: signature, format version, feature bits.
struct Preamble {
    uint16_t major = kFormatMajor;
    uint16_t minor = kFormatMinor;
    uint32_t features = 0;
};

inline void store_preamble(uint8_t* out, const Preamble& p) noexcept {
    std::memcpy(out, kFileMagic, sizeof kFileMagic);
    store_u16(out + 8, p.major);
    store_u16(out + 10, p.minor);
    store_u32(out + 12, p.features);
}

// False when [in, in + size) does not start with a preamble (too short, or no GPROFTRC signature).
inline bool load_preamble(const uint8_t* in, size_t size, Preamble& p) noexcept {
    if (size < kPreambleBytes || std::memcmp(in, kFileMagic, sizeof kFileMagic) != 0) return false;
    p.major = load_u16(in + 8);
    p.minor = load_u16(in + 10);
    p.features = load_u32(in + 12);
    return true;
}

// The Header record decoded without allocating: texts are views of the record body (writer-side checks).
struct HeaderView {
    std::string_view producer, hostname, executable, run_id, boot_id;
    int64_t pid = 0, ppid = 0;
    uint64_t argc = 0;
    ClockReference clock;
    uint32_t cuda_driver_version = 0;
    uint32_t cupti_api_version = 0;
    uint64_t pid_ns = 0;
};

}  // namespace gprof::trace::codec
