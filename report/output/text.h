// Text that survives any name: programs choose NVTX, thread and kernel names and paths freely, so they reach the
// outputs as arbitrary bytes (invalid UTF-8, control characters, quotes, 100 000 characters). Every output goes
// through one of these before it is written: JSON and CSV must stay valid UTF-8, tables one line per row and
// readable, markdown a table.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gprof::report {

// U+FFFD, what every invalid byte becomes.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

bool is_valid_utf8(std::string_view s);
// The text with each byte that is not part of a well-formed UTF-8 sequence (overlong forms, surrogates and code
// points above U+10FFFF included) replaced by U+FFFD; valid text unchanged.
std::string valid_utf8(std::string_view s);
void append_valid_utf8(std::string& out, std::string_view s);

// One line of a console table: valid UTF-8, control characters written as escapes ("\n", "\t", "\x1b"), so a
// name can neither break the line nor drive the terminal.
std::string printable_line(std::string_view s);

// Multi-line text (a rendered report) made safe for a terminal or file: valid UTF-8, control characters other
// than line breaks and tabs escaped like printable_line does.
std::string printable_text(std::string_view s);

// A name cut to `width` characters (code points) for a table: the head and the tail stay, the middle becomes
// "...", because templated kernel names differ at both ends (the kernel and its last template arguments).
// width 0 or a name that fits: unchanged.
std::string shorten_name(std::string_view name, size_t width);

// Default of --name-width: wide enough for every kernel name of the bundled runs' first template level.
inline constexpr size_t kDefaultNameWidth = 100;

// A markdown table cell: printable_line, then `\`, `|`, `<`, `>`, `&`, `*` and backquotes escaped so that a name
// renders as itself.
std::string markdown_cell(std::string_view s);

}  // namespace gprof::report
