// LEB128 varints and zig-zag signed values: the field encoding of the trace format (docs/trace-format.md), public
// so that code outside formats/ that keeps compact copies of records (the report's NVTX block) uses the same
// functions rather than its own. No allocation, no exceptions: usable in the target too.
#pragma once

#include <cstdint>

namespace gprof::trace::varint {

inline uint64_t zigzag(int64_t v) noexcept { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) noexcept { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// Writes v at p (at most 10 bytes); returns the byte after it.
inline uint8_t* put(uint8_t* p, uint64_t v) noexcept {
    while (v >= 0x80) {
        *p++ = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
    return p;
}

// The LEB128 loop after the first byte; kBounded: check `end` before every byte (fewer than 10 bytes left).
template <bool kBounded>
[[gnu::always_inline]] inline const uint8_t* get_bytes(const uint8_t* p, const uint8_t* end, uint64_t& out,
                                                       bool& ok) noexcept {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (kBounded && p >= end) break;
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

// Reads a value from [p, end) that may be damaged (a file). On overrun or an over-long encoding, sets ok = false
// and returns end. Inlined, and without a bound check per byte when the longest encoding fits: it runs once per
// field of every record (docs/performance.md, "decoding").
[[gnu::always_inline]] inline const uint8_t* get(const uint8_t* p, const uint8_t* end, uint64_t& out,
                                                bool& ok) noexcept {
    if (p < end && *p < 0x80) {  // the common one-byte case
        out = *p;
        return p + 1;
    }
    if (end - p >= 10) {
        if (p[1] < 0x80) {  // two bytes: deltas of nanosecond times, thread ids (callgrind: -25 instructions each)
            out = (p[0] & 0x7Fu) | uint64_t{p[1]} << 7;
            return p + 2;
        }
        return get_bytes<false>(p, end, out, ok);
    }
    return get_bytes<true>(p, end, out, ok);
}

// Reads a value put() wrote into memory of our own (never a file): no bounds, no checks; advances p.
inline uint64_t take(const uint8_t*& p) noexcept {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (b < 0x80) return v;
    }
}

}  // namespace gprof::trace::varint
