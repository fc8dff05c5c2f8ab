// Encoding shared by TraceWriter and TraceReader. Internal to formats/.
//
// File   = preamble (16 bytes) + chunks.
// Chunk  = chunk header (16 bytes: magic, payload size, record count, CRC-32C of payload) + payload.
// Record = kind (1 byte) + body length (LEB128) + body (fields in the order of describe() below).
// Field encodings: LEB128 for unsigned values, zigzag LEB128 for signed ones; a record's first timestamp is a
// delta from the previous record's first timestamp in the same chunk, its end a delta from its start, its
// correlation id a delta from the previous one in the chunk. Both deltas restart at every chunk, so any
// intact chunk decodes on its own. docs/trace-format.md is the prose version of this file.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gprof/trace/records.h"

namespace gprof::trace::codec {

inline constexpr char kFileMagic[8] = {'G', 'P', 'R', 'O', 'F', 'T', 'R', 'C'};
inline constexpr uint32_t kChunkMagic = 0x4B435047;  // "GPCK" little-endian
inline constexpr size_t kPreambleBytes = 16;
inline constexpr size_t kChunkHeaderBytes = 16;
inline constexpr size_t kMaxChunkPayload = 64u << 20;   // a reader refuses larger sizes as corrupt
inline constexpr size_t kMaxStringBytes = 64u << 10;
// Upper bound of one encoded non-string record (a full Backtrace is the largest).
inline constexpr size_t kMaxRecordBytes = 1 + 2 + 12 * 10 + kMaxBacktraceFrames * 10 + kMaxBuildIdBytes;

uint32_t crc32c(const uint8_t* data, size_t size) noexcept;

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

inline uint64_t zigzag(int64_t v) noexcept { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) noexcept { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

inline uint8_t* put_varint(uint8_t* p, uint64_t v) noexcept {
    while (v >= 0x80) {
        *p++ = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
    return p;
}

// Reads a LEB128 value from [p, end). On overrun or an over-long encoding, sets ok = false and returns end.
inline const uint8_t* get_varint(const uint8_t* p, const uint8_t* end, uint64_t& out, bool& ok) noexcept {
    if (p < end && *p < 0x80) {  // the common one-byte case
        out = *p;
        return p + 1;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= end) break;
        uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7F) << shift;
        if (b < 0x80) {
            out = v;
            return p;
        }
    }
    ok = false;
    out = 0;
    return end;
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

    template <class T> void u(const T& v) { p_ = put_varint(p_, static_cast<uint64_t>(v)); }
    template <class T> void s(const T& v) { p_ = put_varint(p_, zigzag(static_cast<int64_t>(v))); }
    void time(const Timestamp& t) {
        p_ = put_varint(p_, zigzag(static_cast<int64_t>(t - state_.prev_time)));
        state_.prev_time = t;
    }
    void end(const Timestamp& e, const Timestamp& start) {
        p_ = put_varint(p_, zigzag(static_cast<int64_t>(e - start)));
    }
    void corr(const uint32_t& c) {
        p_ = put_varint(p_, zigzag(static_cast<int64_t>(c) - static_cast<int64_t>(state_.prev_correlation)));
        state_.prev_correlation = c;
    }
    void bytes(const uint8_t* data, const uint32_t& size, uint32_t max) {
        uint32_t n = size < max ? size : max;
        p_ = put_varint(p_, n);
        std::memcpy(p_, data, n);
        p_ += n;
    }
    void frames(const uint64_t* f, const uint32_t& count, uint32_t max) {
        uint32_t n = count < max ? count : max;
        p_ = put_varint(p_, n);
        uint64_t prev = 0;
        for (uint32_t i = 0; i < n; ++i) {  // neighbouring frames are close: delta them
            p_ = put_varint(p_, zigzag(static_cast<int64_t>(f[i] - prev)));
            prev = f[i];
        }
    }

private:
    uint8_t* p_;
    DeltaState& state_;
};

// ----- decoder ---------------------------------------------------------------------------------------------

// Reads fields from one record body. Fields past the end of the body (a record from an older minor version)
// read as zero; fields the reader does not know (a newer minor version) are left unread.
class Decoder {
public:
    Decoder(const uint8_t* p, const uint8_t* end, DeltaState& state) : p_(p), end_(end), state_(state) {}
    bool ok() const { return ok_; }

    template <class T> void u(T& v) {
        uint64_t x = 0;
        if (p_ < end_) p_ = get_varint(p_, end_, x, ok_);
        v = static_cast<T>(x);
    }
    template <class T> void s(T& v) {
        uint64_t x = 0;
        if (p_ < end_) p_ = get_varint(p_, end_, x, ok_);
        v = static_cast<T>(unzigzag(x));
    }
    void time(Timestamp& t) {
        uint64_t x = 0;
        if (p_ < end_) p_ = get_varint(p_, end_, x, ok_);
        t = state_.prev_time + static_cast<uint64_t>(unzigzag(x));
        state_.prev_time = t;
    }
    void end(Timestamp& e, const Timestamp& start) {
        uint64_t x = 0;
        bool present = p_ < end_;
        if (present) p_ = get_varint(p_, end_, x, ok_);
        e = present ? start + static_cast<uint64_t>(unzigzag(x)) : 0;
    }
    void corr(uint32_t& c) {
        uint64_t x = 0;
        if (p_ < end_) p_ = get_varint(p_, end_, x, ok_);
        c = static_cast<uint32_t>(static_cast<int64_t>(state_.prev_correlation) + unzigzag(x));
        state_.prev_correlation = c;
    }
    void bytes(uint8_t* data, uint32_t& size, uint32_t max) {
        uint64_t n = 0;
        if (p_ < end_) p_ = get_varint(p_, end_, n, ok_);
        if (n > max || n > static_cast<uint64_t>(end_ - p_)) {
            ok_ = false;
            size = 0;
            return;
        }
        std::memcpy(data, p_, n);
        p_ += n;
        size = static_cast<uint32_t>(n);
    }
    void frames(uint64_t* f, uint32_t& count, uint32_t max) {
        uint64_t n = 0;
        if (p_ < end_) p_ = get_varint(p_, end_, n, ok_);
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

private:
    const uint8_t* p_;
    const uint8_t* end_;
    DeltaState& state_;
    bool ok_ = true;
};

// ----- the field lists: one per record kind, shared by encoder and decoder ---------------------------------
// Append new fields at the end only (and bump kFormatMinor); never reorder or remove.

template <class V, class R> void describe(V&, R&);

template <class V> void describe(V& v, Thread& r) { v.u(r.tid); v.u(r.name); }
template <class V> void describe(V& v, Device& r) {
    v.u(r.id); v.u(r.name); v.u(r.cc_major); v.u(r.cc_minor); v.u(r.sm_count); v.u(r.global_memory_bytes);
    v.u(r.uuid);
}
template <class V> void describe(V& v, CudaInfo& r) {
    v.time(r.timestamp); v.u(r.driver_version); v.u(r.runtime_version); v.u(r.cupti_api_version);
    v.u(r.cupti_library);
}
template <class V> void describe(V& v, ApiCall& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.tid); v.corr(r.correlation); v.u(r.cbid); v.u(r.name);
    v.s(r.result); v.u(r.domain);
}
template <class V> void describe(V& v, Kernel& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.device); v.u(r.context); v.u(r.stream); v.corr(r.correlation);
    v.s(r.grid_x); v.s(r.grid_y); v.s(r.grid_z); v.s(r.block_x); v.s(r.block_y); v.s(r.block_z);
    v.u(r.registers_per_thread); v.u(r.static_shared_bytes); v.u(r.dynamic_shared_bytes);
    v.u(r.local_bytes_per_thread); v.u(r.name); v.u(r.graph_id); v.u(r.graph_node_id); v.u(r.device_launched);
}
template <class V> void describe(V& v, Memcpy& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.bytes); v.u(r.device); v.u(r.peer_device); v.u(r.context);
    v.u(r.stream); v.corr(r.correlation); v.u(r.graph_id); v.u(r.graph_node_id); v.u(r.copy_kind);
    v.u(r.src_kind); v.u(r.dst_kind); v.u(r.async);
}
template <class V> void describe(V& v, Memset& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.bytes); v.u(r.value); v.u(r.device); v.u(r.context);
    v.u(r.stream); v.corr(r.correlation); v.u(r.graph_id); v.u(r.graph_node_id); v.u(r.memory_kind);
}
template <class V> void describe(V& v, Sync& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.context); v.u(r.stream); v.u(r.event); v.corr(r.correlation);
    v.u(r.type);
}
template <class V> void describe(V& v, Nvtx& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.tid); v.u(r.end_tid); v.u(r.name); v.u(r.domain);
    v.u(r.color); v.u(r.category); v.u(r.category_name); v.u(r.payload); v.u(r.depth); v.u(r.type);
    v.u(r.payload_type);
}
template <class V> void describe(V& v, Memory& r) {
    v.time(r.timestamp); v.u(r.address); v.u(r.bytes); v.u(r.device); v.u(r.context); v.u(r.stream);
    v.corr(r.correlation); v.u(r.op); v.u(r.memory_kind);
}
template <class V> void describe(V& v, Overhead& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.overhead_kind); v.u(r.object_kind); v.u(r.object_id);
}
template <class V> void describe(V& v, Dropped& r) {
    v.time(r.timestamp); v.u(r.count); v.u(r.context); v.u(r.stream); v.u(r.source);
}
template <class V> void describe(V& v, Capture& r) { v.time(r.timestamp); v.u(r.action); v.u(r.reason); }
template <class V> void describe(V& v, Backtrace& r) {
    v.u(r.tid); v.corr(r.correlation); v.frames(r.frames, r.frame_count, kMaxBacktraceFrames);
}
template <class V> void describe(V& v, Module& r) {
    v.u(r.base); v.u(r.size); v.u(r.file_offset); v.u(r.path); v.bytes(r.build_id, r.build_id_size, kMaxBuildIdBytes);
}
template <class V> void describe(V& v, GraphLaunch& r) {
    v.time(r.start); v.end(r.end, r.start); v.u(r.device); v.u(r.context); v.u(r.stream); v.corr(r.correlation);
    v.u(r.graph_id);
}
template <class V> void describe(V& v, ExternalCorrelation& r) {
    v.u(r.external_id); v.corr(r.correlation); v.u(r.external_kind);
}
template <class V> void describe(V& v, Status& r) {
    v.time(r.timestamp); v.s(r.code); v.u(r.message); v.u(r.component); v.u(r.level);
}
template <class V> void describe(V& v, End& r) { v.time(r.timestamp); v.u(r.records_written); v.u(r.records_dropped); }

}  // namespace gprof::trace::codec
