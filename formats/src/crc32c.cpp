// CRC-32C (Castagnoli) of chunk payloads. The SSE4.2 instruction does 8 bytes a cycle or so; a table version
// covers other CPUs. Checked against the RFC 3720 test vector in tests/format.
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

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t n) noexcept {
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

uint32_t crc32c(const uint8_t* data, size_t size) noexcept {
#if defined(__x86_64__)
    if (kHaveSse42) return ~crc32c_sse42(~0u, data, size);
#endif
    return ~crc32c_table(~0u, data, size);
}

}  // namespace gprof::trace::codec
