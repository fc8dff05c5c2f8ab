#include "output/text.h"

#include <cstdint>
#include <cstdio>

namespace gprof::report {

namespace {

// Length of the well-formed UTF-8 sequence at s[i], 0 when the byte there does not start one (RFC 3629 table:
// no overlongs, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence(std::string_view s, size_t i) {
    auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = at(i);
    if (c < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    if (at(i + 1) < lo || at(i + 1) > hi) return 0;
    for (size_t k = 2; k < n; ++k)
        if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
    return n;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        size_t n = utf8_sequence(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

void append_valid_utf8(std::string& out, std::string_view s) {
    size_t start = 0, i = 0;
    while (i < s.size()) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        size_t n = utf8_sequence(s, i);
        if (n) {
            i += n;
            continue;
        }
        out.append(s.data() + start, i - start);
        out.append(kReplacementChar);
        start = ++i;
    }
    out.append(s.data() + start, s.size() - start);
}

std::string valid_utf8(std::string_view s) {
    if (is_valid_utf8(s)) return std::string(s);
    std::string out;
    out.reserve(s.size() + 16);
    append_valid_utf8(out, s);
    return out;
}

std::string printable_line(std::string_view s) {
    std::string v = valid_utf8(s);
    std::string out;
    out.reserve(v.size());
    for (char ch : v) {
        unsigned char c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c != 0x7F) {
            out += ch;
            continue;
        }
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default: {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02x", c);
                out += buf;
            }
        }
    }
    return out;
}

std::string printable_text(std::string_view s) {
    std::string v = valid_utf8(s);
    std::string out;
    out.reserve(v.size());
    size_t from = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(v[i]);
        if ((c >= 0x20 && c != 0x7F) || c == '\n' || c == '\t') continue;  // line breaks and tabs are layout
        out.append(v, from, i - from);
        out += printable_line(std::string_view(&v[i], 1));
        from = i + 1;
    }
    out.append(v, from, std::string::npos);
    return out;
}

std::string shorten_name(std::string_view name, size_t width) {
    if (width == 0) return std::string(name);
    // Code point boundaries: every byte that is not a continuation byte starts one.
    auto is_start = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
    size_t points = 0;
    for (char c : name) points += is_start(c);
    if (points <= width) return std::string(name);
    if (width <= 3) {
        size_t i = 0, kept = 0;
        while (i < name.size() && kept < width) {
            ++i;
            while (i < name.size() && !is_start(name[i])) ++i;
            ++kept;
        }
        return std::string(name.substr(0, i));
    }
    size_t keep = width - 3;
    size_t head = keep - keep * 2 / 5, tail = keep - head;  // 3/5 head, 2/5 tail
    // Byte offset after `head` code points, and of the last `tail` code points.
    size_t h = 0;
    for (size_t kept = 0; h < name.size() && kept < head;) {
        ++h;
        while (h < name.size() && !is_start(name[h])) ++h;
        ++kept;
    }
    size_t t = name.size();
    for (size_t kept = 0; t > 0 && kept < tail;) {
        --t;
        while (t > 0 && !is_start(name[t])) --t;
        ++kept;
    }
    return std::string(name.substr(0, h)) + "..." + std::string(name.substr(t));
}

std::string markdown_cell(std::string_view s) {
    std::string line = printable_line(s);
    std::string out;
    out.reserve(line.size() + 8);
    for (char ch : line) {
        switch (ch) {
            case '\\': out += "\\\\"; break;
            case '|': out += "\\|"; break;
            case '*': out += "\\*"; break;
            case '`': out += "\\`"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            default: out += ch;
        }
    }
    return out;
}

}  // namespace gprof::report
