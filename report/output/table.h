// A report table and its four renderings: table (aligned console text), csv, markdown, json.
//
// Cells hold raw values (ns, bytes, counts); only the text renderings scale them, so JSON always carries raw
// numbers keyed by stable column keys (docs/report-schema.md) and no rendering applies locale formatting.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/text.h"

namespace gprof::report {

enum class OutputFormat { Table, Csv, Json, Markdown };
enum class TimeUnit { Ns, Us, Ms, S };

OutputFormat parse_format(const std::string& text);  // throws std::invalid_argument
TimeUnit parse_time_unit(const std::string& text);    // throws std::invalid_argument
const char* time_unit_name(TimeUnit unit);            // "ns", "us", ...

enum class ColumnKind {
    Text,     // string
    Count,    // integer
    TimeNs,   // ns in the cell; text renderings divide by the report's time unit; title has "{unit}"
    BytesMB,  // bytes in the cell; text renderings show decimal MB (nsys), JSON raw bytes
    Percent,  // 0..100, two decimals in text
    Number,   // a double, printed with `precision` decimals in text
};

struct Column {
    std::string key;    // JSON key, snake_case, stable
    std::string title;  // console/csv title; "{unit}" is replaced by the time unit
    ColumnKind kind = ColumnKind::Text;
    int precision = 3;  // Number: decimals in text
};

using Cell = std::variant<std::monostate, std::string, int64_t, double>;

struct Table {
    std::string name;  // report name, e.g. "cuda_api_sum"
    std::vector<Column> columns;
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> notes;  // printed under a console table; JSON "notes"
};

struct RenderOptions {
    OutputFormat format = OutputFormat::Table;
    TimeUnit time_unit = TimeUnit::Ns;
    // table and markdown: text cells longer than this many characters are shortened in the middle
    // (output/text.h); 0 = full names. csv and json always carry the full names.
    size_t name_width = kDefaultNameWidth;
};

// Text renderings (table, csv, markdown). JSON goes through table_to_json.
void render_table(const Table& table, const RenderOptions& options, std::ostream& out);
nlohmann::json table_to_json(const Table& table);

// Shared number formatting (never locale-dependent).
std::string format_fixed(double value, int decimals);
// nvprof's auto-scaled time: unit chosen so the value is >= 1, about 5-6 significant digits, ns whole.
std::string format_time_auto(double ns);
// A CSV field: valid UTF-8 (U+FFFD for invalid bytes), quoted when it holds a comma, quote, line break or
// leading/trailing space.
std::string csv_quote(const std::string& s);

}  // namespace gprof::report
