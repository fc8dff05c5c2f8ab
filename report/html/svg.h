// The charts of report.html, drawn here as inline SVG: no plotting library, nothing fetched, and a chart that shows
// even where scripts do not run (a mail client's preview). Colours come from the page's CSS classes, so the charts
// follow its light and dark themes. Hover text is an SVG <title> (the page's script shows it as a tooltip); a
// binned series also carries its values as data attributes, which the script reads to say what is under the mouse.
// Every text that may come from a trace must be passed already escaped (html/escape.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gprof::report::html {

// A value axis: round ticks (1, 2, 5 x 10^k) from 0 to at least `max`, labelled in one unit.
struct Axis {
    double max = 1;               // top of the axis, in the value's own unit (ns, bytes, ...)
    std::vector<double> ticks;    // in the value's unit
    double divisor = 1;           // label = value / divisor, then `unit`
    std::string unit;             // "ms", "MiB", "%", ""
};
Axis time_axis(double max_ns);    // ns, us, ms or s
Axis bytes_axis(double max_bytes);  // B, KiB, MiB, GiB, TiB
Axis percent_axis();              // 0..100 %, values given as 0..1
Axis count_axis(double max);
std::string axis_label(const Axis& a, double value);  // "20 ms", "1.5 GiB"

// A number for a label: at most `decimals` decimals, trailing zeros dropped ("1.5", "20").
std::string trim_number(double v, int decimals = 3);

// A mark spanning [start, end) of the x axis (an idle gap), with its hover text (escaped).
struct Span {
    int64_t start = 0, end = 0;
    std::string css_class;
    std::string tip;
};

// A point marked with a dot and a short label (a peak), with hover text. Label and tip escaped.
struct PointMark {
    int64_t x = 0;
    double y = 0;
    std::string label, tip;
};

// One series over equal bins of the x axis (bin i starts at x0 + i * bin).
struct Series {
    std::vector<double> values;
    std::string css_class;   // "busy", "mem", "pool"
    bool area = false;       // filled to the axis (else a line)
    std::string name;        // for the hover text: "busy", "in use", "pools reserved"
};

struct TimeChart {
    std::string aria_label;            // escaped
    int64_t x0 = 0, x1 = 0;            // run axis, ns
    int64_t bin = 0;                   // width of one bin, ns
    std::vector<Series> series;
    Axis y;
    std::string value_format;          // for the script's hover text: "pct" or "bytes"
    std::vector<Span> spans;
    std::vector<PointMark> points;
    int height = 120;
};
std::string time_chart(const TimeChart& c);

// Vertical bars over categories (steps, histogram bins): one value per bar, optionally a darker part drawn inside
// it (the GPU share of a step) and a min-max whisker; horizontal reference lines (median, p90).
struct Bar {
    double value = 0;
    double inner = -1;                 // < 0: none
    double low = -1, high = -1;        // whisker; < 0: none
    std::string tip;                   // escaped
};
struct RefLine {
    double y = 0;
    std::string label;                 // escaped
    std::string css_class;
};
struct BarChart {
    std::string aria_label;
    std::vector<Bar> bars;
    Axis y;
    std::string bar_class = "bar", inner_class = "bar-inner";
    std::vector<RefLine> lines;
    std::string x_first, x_last;       // labels under the first and last bar (escaped)
    std::string x_title;               // escaped
    int height = 180;
};
std::string bar_chart(const BarChart& c);

// An icicle (a flame graph drawn from the top): rows of boxes, box i at row depth[i], [x, x + w) of the width as
// shares 0..1, its CSS class, its label (escaped; drawn when the box is wide enough) and its hover text (escaped).
struct IcicleBox {
    uint32_t depth = 0;
    double x = 0, w = 0;
    std::string css_class, label, tip;
};
std::string icicle(const std::string& aria_label, uint32_t rows, const std::vector<IcicleBox>& boxes);

}  // namespace gprof::report::html
