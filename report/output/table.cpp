#include "output/table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "output/text.h"

namespace gprof::report {

OutputFormat parse_format(const std::string& text) {
    if (text == "table" || text == "column") return OutputFormat::Table;
    if (text == "csv") return OutputFormat::Csv;
    if (text == "json") return OutputFormat::Json;
    if (text == "markdown" || text == "md") return OutputFormat::Markdown;
    throw std::invalid_argument("unknown format '" + text + "' (use table, csv, json or markdown)");
}

TimeUnit parse_time_unit(const std::string& text) {
    if (text == "ns") return TimeUnit::Ns;
    if (text == "us") return TimeUnit::Us;
    if (text == "ms") return TimeUnit::Ms;
    if (text == "s") return TimeUnit::S;
    // nsys stats spellings (nsec, usec, msec, nanoseconds, ..., seconds), by unambiguous prefix as nsys matches them.
    static const std::pair<const char*, TimeUnit> kLong[] = {{"nsec", TimeUnit::Ns},        {"usec", TimeUnit::Us},
                                                            {"msec", TimeUnit::Ms},        {"nanoseconds", TimeUnit::Ns},
                                                            {"microseconds", TimeUnit::Us}, {"milliseconds", TimeUnit::Ms},
                                                            {"seconds", TimeUnit::S},      {"sec", TimeUnit::S}};
    if (!text.empty()) {
        int found = -1;
        bool ambiguous = false;
        for (int i = 0; i < static_cast<int>(std::size(kLong)); ++i) {
            std::string_view name = kLong[i].first;
            if (name.substr(0, text.size()) != text) continue;
            if (found >= 0 && kLong[found].second != kLong[i].second) ambiguous = true;
            found = i;
        }
        if (found >= 0 && !ambiguous) return kLong[found].second;
    }
    throw std::invalid_argument("unknown time unit '" + text +
                                "' (use ns, us, ms, s or nsys's nsec, usec, msec, nanoseconds, microseconds, "
                                "milliseconds, seconds)");
}

const char* time_unit_name(TimeUnit unit) {
    switch (unit) {
        case TimeUnit::Ns: return "ns";
        case TimeUnit::Us: return "us";
        case TimeUnit::Ms: return "ms";
        case TimeUnit::S: return "s";
    }
    return "ns";
}

static double unit_divisor(TimeUnit unit) {
    switch (unit) {
        case TimeUnit::Ns: return 1;
        case TimeUnit::Us: return 1e3;
        case TimeUnit::Ms: return 1e6;
        case TimeUnit::S: return 1e9;
    }
    return 1;
}

std::string format_fixed(double value, int decimals) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, decimals);
    return std::string(buf, res.ptr);
}

std::string format_time_auto(double ns) {
    if (ns < 0) ns = 0;
    if (ns < 1000) return std::to_string(static_cast<int64_t>(std::llround(ns))) + "ns";
    const char* unit;
    double v;
    int sig = 5;
    if (ns < 1e6) { v = ns / 1e3; unit = "us"; }
    else if (ns < 1e9) { v = ns / 1e6; unit = "ms"; }
    else { v = ns / 1e9; unit = "s"; sig = 6; }
    int int_digits = v >= 100 ? 3 : v >= 10 ? 2 : 1;
    if (v >= 1000) int_digits = static_cast<int>(std::floor(std::log10(v))) + 1;
    int decimals = std::max(0, sig - int_digits);
    return format_fixed(v, decimals) + unit;
}

std::string csv_quote(const std::string& raw) {
    std::string s = valid_utf8(raw);
    bool edge_space = !s.empty() && (s.front() == ' ' || s.back() == ' ');
    if (s.find_first_of(",\"\n\r") == std::string::npos && !edge_space) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

static std::string title_of(const Column& c, TimeUnit unit) {
    std::string t = c.title;
    auto pos = t.find("{unit}");
    if (pos != std::string::npos) t.replace(pos, 6, time_unit_name(unit));
    return t;
}

// Display width of a console cell: code points (cells are valid UTF-8 by then).
static size_t display_width(const std::string& s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

static std::string cell_text(const Cell& cell, const Column& c, TimeUnit unit) {
    if (std::holds_alternative<std::monostate>(cell)) return "";
    if (auto s = std::get_if<std::string>(&cell)) return *s;
    double v = std::holds_alternative<int64_t>(cell) ? static_cast<double>(std::get<int64_t>(cell))
                                                      : std::get<double>(cell);
    switch (c.kind) {
        case ColumnKind::Text:
        case ColumnKind::Count:
            if (auto i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
            return format_fixed(v, 0);
        case ColumnKind::TimeNs:
            if (unit == TimeUnit::Ns) {
                double r = std::round(v * 10) / 10;
                return format_fixed(r, r == std::floor(r) ? 0 : 1);
            }
            return format_fixed(v / unit_divisor(unit), 3);
        case ColumnKind::BytesMB: return format_fixed(v / 1e6, 3);
        case ColumnKind::Percent: return format_fixed(v, 1);
        case ColumnKind::Number: return format_fixed(v, c.precision);
    }
    return "";
}

void render_table(const Table& table, const RenderOptions& options, std::ostream& out) {
    const auto& cols = table.columns;
    std::vector<std::vector<std::string>> text;
    text.reserve(table.rows.size());
    for (const auto& row : table.rows) {
        std::vector<std::string> t;
        for (size_t i = 0; i < cols.size(); ++i) {
            std::string cell = i < row.size() ? cell_text(row[i], cols[i], options.time_unit) : "";
            // Text cells hold names the program chose: full in csv, one shortened printable line in tables.
            if (cols[i].kind == ColumnKind::Text && options.format != OutputFormat::Csv)
                cell = shorten_name(printable_line(cell), options.name_width);
            t.push_back(std::move(cell));
        }
        text.push_back(std::move(t));
    }
    std::vector<std::string> titles;
    for (const auto& c : cols) titles.push_back(title_of(c, options.time_unit));

    if (options.format == OutputFormat::Csv) {
        for (size_t i = 0; i < titles.size(); ++i) out << (i ? "," : "") << csv_quote(titles[i]);
        out << '\n';
        for (const auto& row : text) {
            for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_quote(row[i]);
            out << '\n';
        }
        return;
    }
    if (options.format == OutputFormat::Markdown) {
        auto esc = [](const std::string& s) { return markdown_cell(s); };
        out << "|";
        for (const auto& t : titles) out << ' ' << esc(t) << " |";
        out << "\n|";
        for (const auto& c : cols) out << (c.kind == ColumnKind::Text ? " --- |" : " ---: |");
        out << '\n';
        for (const auto& row : text) {
            out << "|";
            for (const auto& cell : row) out << ' ' << esc(cell) << " |";
            out << '\n';
        }
        for (const auto& n : table.notes) out << "\n" << markdown_cell(n) << '\n';
        return;
    }
    // Console: two spaces between columns, numbers right-aligned, text left-aligned (nsys's column layout).
    std::vector<size_t> width(cols.size());
    for (size_t i = 0; i < cols.size(); ++i) {
        width[i] = display_width(titles[i]);
        for (const auto& row : text) width[i] = std::max(width[i], display_width(row[i]));
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string l;
        for (size_t i = 0; i < cells.size(); ++i) {
            if (i) l += "  ";
            size_t pad = width[i] - display_width(cells[i]);
            bool left = cols[i].kind == ColumnKind::Text;
            if (!left) l.append(pad, ' ');
            l += cells[i];
            if (left && i + 1 < cells.size()) l.append(pad, ' ');
        }
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out << l << '\n';
    };
    line(titles);
    std::vector<std::string> rule;
    for (size_t i = 0; i < cols.size(); ++i) rule.push_back(std::string(width[i], '-'));
    line(rule);
    for (const auto& row : text) line(row);
    for (const auto& n : table.notes) out << n << '\n';
}

nlohmann::json table_to_json(const Table& table) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : table.rows) {
        nlohmann::json o = nlohmann::json::object();
        for (size_t i = 0; i < table.columns.size() && i < row.size(); ++i) {
            const auto& cell = row[i];
            const auto& key = table.columns[i].key;
            if (std::holds_alternative<std::monostate>(cell)) o[key] = nullptr;
            else if (auto s = std::get_if<std::string>(&cell)) o[key] = *s;
            else if (auto n = std::get_if<int64_t>(&cell)) o[key] = *n;
            else o[key] = std::get<double>(cell);
        }
        rows.push_back(std::move(o));
    }
    nlohmann::json cols = nlohmann::json::array();
    for (const auto& c : table.columns) cols.push_back(c.key);
    nlohmann::json j = {{"columns", cols}, {"rows", rows}};
    if (!table.notes.empty()) j["notes"] = table.notes;
    return j;
}

}  // namespace gprof::report
