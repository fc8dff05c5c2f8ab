// Text from a trace on an HTML page: every name (kernel, NVTX range, thread, program argument, file path) comes from
// the profiled program and may hold anything: markup, quotes, invalid UTF-8, control characters. Everything the
// page shows from a trace goes through escape() — in element text, in attribute values and in SVG alike.
#pragma once

#include <string>
#include <string_view>

namespace gprof::report::html {

// Valid UTF-8 (output/text.h's valid_utf8: each byte of an ill-formed sequence becomes U+FFFD) with & < > " '
// escaped as character references, and C0/DEL control characters other than tab and newline as U+FFFD too. Safe in element content and in quoted attribute values.
std::string escape(std::string_view text);

// A long C++ name made readable in a table cell, like profilers' tables shorten them, step by step until it fits:
// a leading "void " and "(anonymous namespace)::" dropped, the parameter list collapsed to "(…)", namespace
// qualifiers dropped (inside template arguments first, then the name's own), template arguments nested three and
// then two deep collapsed to "<…>" (never the first level, which tells a template's instances apart), and what is
// still longer than max_chars (code points) cut in the middle with "…". Names that are short enough come back unchanged. The full name belongs
// in the cell's hover text. The output is valid UTF-8, not escaped. Unlike output/text.h's shorten_name for console tables
// (a plain middle cut), this one knows C++ names.
std::string shorten_name(std::string_view name, size_t max_chars = 100);

// Number of code points in valid UTF-8.
size_t utf8_length(std::string_view text);

}  // namespace gprof::report::html
