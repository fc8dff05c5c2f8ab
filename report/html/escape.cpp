#include "html/escape.h"

#include "output/text.h"

#include <cctype>
#include <cstdint>
#include <vector>

namespace gprof::report::html {

namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // U+2026

bool is_bad_control(uint8_t c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F; }

// Code point boundaries of valid UTF-8: the byte offset of each code point, plus the end.
std::vector<size_t> boundaries(std::string_view s) {
    std::vector<size_t> at;
    for (size_t i = 0; i < s.size(); ++i)
        if ((static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) at.push_back(i);
    at.push_back(s.size());
    return at;
}

void replace_all(std::string& s, std::string_view what, std::string_view with) {
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + with.size()))
        s.replace(at, what.size(), with);
}

// After "operator" the operator's own characters ("<<", "()", "->") are part of the name, not brackets.
size_t operator_symbol_end(const std::string& s, size_t after) {
    size_t i = after;
    if (s.compare(i, 2, "()") == 0) return i + 2;
    while (i < s.size() && std::string_view("<>=!+-*/%^&|~,[]").find(s[i]) != std::string_view::npos) ++i;
    return i;
}

// Template argument lists nested `depth` or deeper collapsed to "<…>". Empty when the brackets do not balance
// (an operator this scan does not know): the caller then keeps the name as it was.
std::string collapse_templates(const std::string& s, int depth) {
    std::string out;
    int level = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 8, "operator") == 0) {
            size_t end = operator_symbol_end(s, i + 8);
            if (level < depth) out.append(s, i, end - i);
            i = end - 1;
            continue;
        }
        char c = s[i];
        if (c == '<') {
            ++level;
            if (level < depth) out += c;
            else if (level == depth) out += "<" + std::string(kEllipsis) + ">";
            continue;
        }
        if (c == '>') {
            if (level == 0) return {};
            if (level < depth) out += c;
            --level;
            continue;
        }
        if (level < depth) out += c;
    }
    return level == 0 ? out : std::string();
}

// Namespace qualifiers dropped at template nesting `min_level` and deeper: 1 drops them inside template arguments
// ("<at::native::Foo<4>>" -> "<Foo<4>>"), 0 also the name's own ("at::native::kernel" -> "kernel"). The names stay
// recognisable at a fraction of the length.
std::string unqualify(const std::string& s, int min_level) {
    std::string out;
    int level = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 8, "operator") == 0) {
            size_t end = operator_symbol_end(s, i + 8);
            out.append(s, i, end - i);
            i = end - 1;
            continue;
        }
        char c = s[i];
        if (c == '<') ++level;
        else if (c == '>' && level > 0) --level;
        if (level >= min_level && c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
            while (!out.empty() && (std::isalnum(static_cast<unsigned char>(out.back())) || out.back() == '_'))
                out.pop_back();
            ++i;
            continue;
        }
        out += c;
    }
    return out;
}

// The trailing parameter list "(...)" (with any " const" after it) collapsed to "(…)".
std::string collapse_parameters(const std::string& s) {
    size_t close = s.rfind(')');
    if (close == std::string::npos) return s;
    int level = 0;
    for (size_t i = close + 1; i-- > 0;) {
        if (s[i] == ')') ++level;
        else if (s[i] == '(' && --level == 0) {
            if (close == i + 1) return s;  // "()" already
            return s.substr(0, i + 1) + std::string(kEllipsis) + s.substr(close);
        }
    }
    return s;
}

}  // namespace

std::string escape(std::string_view text) {
    // Valid UTF-8 first (output/text.h, the one place that decides what is valid), then markup and controls.
    std::string valid = report::valid_utf8(text), out;
    out.reserve(valid.size() + valid.size() / 8);
    for (char ch : valid) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default:
                if (is_bad_control(static_cast<uint8_t>(ch))) out += report::kReplacementChar;
                else out += ch;
        }
    }
    return out;
}

size_t utf8_length(std::string_view text) {
    size_t n = 0;
    for (char c : text)
        if ((static_cast<uint8_t>(c) & 0xC0) != 0x80) ++n;
    return n;
}

std::string shorten_name(std::string_view name, size_t max_chars) {
    std::string s = report::valid_utf8(name);
    if (max_chars < 8) max_chars = 8;
    if (utf8_length(s) <= max_chars) return s;
    // Step by step, stopping as soon as it fits: each step hides more of what tells kernels apart.
    if (s.rfind("void ", 0) == 0) s.erase(0, 5);
    replace_all(s, "(anonymous namespace)::", "");
    if (utf8_length(s) <= max_chars) return s;
    s = collapse_parameters(s);
    if (utf8_length(s) <= max_chars) return s;
    s = unqualify(s, 1);
    if (utf8_length(s) <= max_chars) return s;
    s = unqualify(s, 0);
    // Not below depth 2: "kernel<…>" alone would make every instance of a template look the same.
    for (int depth = 3; depth >= 2 && utf8_length(s) > max_chars; --depth) {
        std::string t = collapse_templates(s, depth);
        if (t.empty()) break;
        s = std::move(t);
    }
    if (utf8_length(s) <= max_chars) return s;
    // Cut in the middle: the start names the kernel, the end often its distinguishing template argument.
    std::vector<size_t> at = boundaries(s);
    size_t keep = max_chars - 1, head = keep * 2 / 3, tail = keep - head;
    size_t cps = at.size() - 1;
    return s.substr(0, at[head]) + std::string(kEllipsis) + s.substr(at[cps - tail]);
}

}  // namespace gprof::report::html
