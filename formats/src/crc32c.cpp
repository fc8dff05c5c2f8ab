// CRC-32C (Castagnoli) of chunk payloads. The SSE4.2 instruction takes 3 cycles and can start one a cycle, so a
// payload is read as three interleaved streams joined by a shift (below); a table version covers other CPUs.
// Checked against the RFC 3720 test vector, and the two versions against each other, in tests/format.
#include <array>
#include <cstdint>
#include <cstring>

#include "codec.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace gprof::trace::codec {
namespace {

constexpr std::array<uint32_t, 256> make_table() {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        t[i] = c;
    }
    return t;
}
constexpr auto kTable = make_table();

uint32_t crc32c_table(uint32_t crc, const uint8_t* p, size_t n) noexcept {
    for (size_t i = 0; i < n; ++i) crc = kTable[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

// The CRC register is linear in its start value: running it over B from start s gives zeros(s) ^ run(0, B), where
// zeros(s) runs s over |B| zero bytes. So streams over consecutive blocks of kStream bytes, each started at 0 but
// the first, join as zeros(zeros(c0) ^ c1) ^ c2. zeros() for kStream bytes is a table per byte of the register,
// computed here at compile time from the 32 one-bit registers.
constexpr size_t kStream = 4096;
constexpr std::array<std::array<uint32_t, 256>, 4> make_zeros_table() {
    std::array<uint32_t, 32> bit{};
    for (int b = 0; b < 32; ++b) {
        uint32_t c = uint32_t(1) << b;
        for (size_t i = 0; i < kStream; ++i) c = kTable[c & 0xFF] ^ (c >> 8);
        bit[b] = c;
    }
    std::array<std::array<uint32_t, 256>, 4> t{};
    for (int k = 0; k < 4; ++k)
        for (uint32_t v = 0; v < 256; ++v) {
            uint32_t c = 0;
            for (int b = 0; b < 8; ++b)
                if (v & (1u << b)) c ^= bit[8 * k + b];
            t[k][v] = c;
        }
    return t;
}
constexpr auto kZeros = make_zeros_table();
inline uint32_t zeros(uint32_t c) noexcept {
    return kZeros[0][c & 0xFF] ^ kZeros[1][(c >> 8) & 0xFF] ^ kZeros[2][(c >> 16) & 0xFF] ^ kZeros[3][c >> 24];
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n) noexcept {
    // Three streams, since one alone waits on each result (the reader checks every chunk; the collector's writer
    // seals every chunk with it): docs/performance.md has the gain.
    while (n >= 3 * kStream) {
        uint64_t c0 = crc, c1 = 0, c2 = 0;
        for (size_t i = 0; i < kStream; i += 8) {
            uint64_t v0, v1, v2;
            std::memcpy(&v0, p + i, 8);
            std::memcpy(&v1, p + kStream + i, 8);
            std::memcpy(&v2, p + 2 * kStream + i, 8);
            c0 = _mm_crc32_u64(c0, v0);
            c1 = _mm_crc32_u64(c1, v1);
            c2 = _mm_crc32_u64(c2, v2);
        }
        crc = zeros(zeros(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1)) ^ static_cast<uint32_t>(c2);
        p += 3 * kStream;
        n -= 3 * kStream;
    }
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = static_cast<uint32_t>(c);
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}
// Resolved once; __builtin_cpu_supports is async-signal-safe after initialisation.
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t crc32c_portable(const uint8_t* data, size_t size) noexcept { return ~crc32c_table(~0u, data, size); }

uint32_t crc32c(const uint8_t* data, size_t size) noexcept {
#if defined(__x86_64__)
    if (kHaveSse42) return ~crc32c_sse42(~0u, data, size);
#endif
    return ~crc32c_table(~0u, data, size);
}

}  // namespace gprof::trace::codec
