// The frame of every page gprof-report writes as HTML (the run report and the diff): one self-contained document
// with its style sheet and script inline, a Content-Security-Policy that forbids every request (no network, no
// CDN: it opens from a file:// URL, a CI artifact or an e-mail), and the building blocks the pages share: sortable
// tables, number cards, share bars. The script only enhances what the HTML already shows (sorting, tooltips,
// reading a chart under the mouse); it sets data-ready="1" on <html> when it has run, which the browser test reads.
#pragma once

#include <string>
#include <vector>

namespace gprof::report::html {

// The whole document. `title` and `body` are HTML (escaped by the caller).
std::string document(const std::string& title, const std::string& body);

// A table whose columns sort on a click. Cells are HTML; a numeric cell carries the raw value to sort by.
class SortableTable {
public:
    enum class Sort { Text, Number, None };
    SortableTable& column(std::string title, Sort sort = Sort::Number, std::string hint = {});
    SortableTable& row();
    SortableTable& cell(std::string html);                    // sorts by its text
    SortableTable& num(std::string html, double sort_value);  // right-aligned, sorts by the value
    SortableTable& css_class(std::string c) {
        class_ = std::move(c);
        return *this;
    }
    size_t rows() const { return rows_.size(); }
    std::string html() const;

private:
    struct Col {
        std::string title, hint;
        Sort sort;
    };
    struct Cell {
        std::string html, value;
        bool numeric;
    };
    std::vector<Col> cols_;
    std::vector<std::vector<Cell>> rows_;
    std::string class_;
};

// A number card: a big value with a label under it (and a hint on hover). Arguments are HTML.
std::string card(const std::string& value, const std::string& label, const std::string& hint = {},
                 const std::string& css_class = {});

// A horizontal bar filling `pct` (0..100) of its cell, with the text over it.
std::string share_bar(double pct, const std::string& text, const std::string& css_class = "share");

// <section id=...><h2>title</h2>...</section>; `intro` is a short line under the heading (HTML).
std::string section(const std::string& id, const std::string& title, const std::string& intro,
                    const std::string& body);

// An escaped, shortened name with the full name (and `more`, extra hover lines) on hover.
std::string name_cell(const std::string& name, const std::string& more = {}, size_t max_chars = 100);

}  // namespace gprof::report::html
