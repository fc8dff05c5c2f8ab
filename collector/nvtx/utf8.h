// Wide NVTX messages (nvtx*W, NVTX_MESSAGE_TYPE_UNICODE) become UTF-8: measured first, then encoded in place.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gprof::collector::nvtx {

// Bytes of the UTF-8 form of `w`, cut at a whole character within `limit`.
inline size_t utf8_length(const wchar_t* w, size_t limit) noexcept {
    size_t n = 0;
    for (; *w; ++w) {
        auto c = static_cast<uint32_t>(*w);
        size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (n + k > limit) break;
        n += k;
    }
    return n;
}

// Writes at most `len` bytes (the value utf8_length gave) of the UTF-8 form of `w` to `out`.
inline void utf8_encode(const wchar_t* w, uint8_t* out, size_t len) noexcept {
    size_t n = 0;
    for (; *w && n < len; ++w) {
        auto c = static_cast<uint32_t>(*w);
        if (c > 0x10FFFF) c = 0xFFFD;
        if (c < 0x80) {
            out[n++] = static_cast<uint8_t>(c);
        } else if (c < 0x800) {
            if (n + 2 > len) break;
            out[n++] = static_cast<uint8_t>(0xC0 | (c >> 6));
            out[n++] = static_cast<uint8_t>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            if (n + 3 > len) break;
            out[n++] = static_cast<uint8_t>(0xE0 | (c >> 12));
            out[n++] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
            out[n++] = static_cast<uint8_t>(0x80 | (c & 0x3F));
        } else {
            if (n + 4 > len) break;
            out[n++] = static_cast<uint8_t>(0xF0 | (c >> 18));
            out[n++] = static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3F));
            out[n++] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
            out[n++] = static_cast<uint8_t>(0x80 | (c & 0x3F));
        }
    }
}

}  // namespace gprof::collector::nvtx
