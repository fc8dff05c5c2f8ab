#include "html/svg.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace gprof::report::html {

namespace {

// Geometry shared by every chart: the viewBox is 960 wide and scales with the page.
constexpr double kWidth = 960, kLeft = 64, kRight = 16, kTop = 10, kBottom = 24;
constexpr double kPlotWidth = kWidth - kLeft - kRight;

// Coordinates with one decimal: enough at any screen size, and a few bytes per point.
std::string c(double v) {
    if (!std::isfinite(v)) v = 0;
    return trim_number(std::round(v * 10) / 10, 1);
}

double nice_step(double range, int target_ticks) {
    if (range <= 0) return 1;
    double raw = range / target_ticks;
    double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) return m * mag;
    return 10 * mag;
}

Axis axis_to(double max, double divisor, std::string unit) {
    Axis a;
    a.divisor = divisor;
    a.unit = std::move(unit);
    double top = max > 0 ? max : divisor;
    double step = nice_step(top / divisor, 4) * divisor;
    a.max = std::ceil(top / step - 1e-9) * step;
    for (double t = 0; t <= a.max + step / 2; t += step) a.ticks.push_back(t);
    return a;
}

// Ticks at round times inside [x0, x1] (run axis, ns), labelled in one unit.
struct TimeTicks {
    std::vector<double> at;
    double divisor = 1;
    std::string unit;
};
TimeTicks time_ticks(double x0, double x1) {
    TimeTicks t;
    Axis scale = time_axis(x1);  // the unit follows the largest time shown
    t.divisor = scale.divisor;
    t.unit = scale.unit;
    double step = nice_step((x1 - x0) / t.divisor, 8) * t.divisor;
    for (double v = std::ceil(x0 / step) * step; v <= x1 + step * 1e-9; v += step) t.at.push_back(v);
    return t;
}

std::string values_attr(const std::vector<double>& v, const std::string& format) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ',';
        out += format == "pct" ? trim_number(v[i], 4) : trim_number(v[i], 0);
    }
    return out;
}

void y_grid(std::string& s, const Axis& y, double plot_h) {
    for (double t : y.ticks) {
        double py = kTop + plot_h - (y.max > 0 ? t / y.max : 0) * plot_h;
        s += "<line class=\"grid\" x1=\"" + c(kLeft) + "\" x2=\"" + c(kWidth - kRight) + "\" y1=\"" + c(py) +
             "\" y2=\"" + c(py) + "\"/>";
        s += "<text class=\"tick\" x=\"" + c(kLeft - 6) + "\" y=\"" + c(py + 4) + "\" text-anchor=\"end\">" +
             axis_label(y, t) + "</text>";
    }
}

}  // namespace

std::string trim_number(double v, int decimals) {
    if (!std::isfinite(v)) return "0";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
    std::string s(buf, r.ptr);
    if (s.find('.') != std::string::npos) {
        while (!s.empty() && s.back() == '0') s.pop_back();
        if (!s.empty() && s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s;
}

Axis time_axis(double max_ns) {
    if (max_ns >= 1e9) return axis_to(max_ns, 1e9, "s");
    if (max_ns >= 1e6) return axis_to(max_ns, 1e6, "ms");
    if (max_ns >= 1e3) return axis_to(max_ns, 1e3, "us");
    return axis_to(max_ns, 1, "ns");
}

Axis bytes_axis(double max_bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double d = 1;
    size_t u = 0;
    while (max_bytes >= 1024 * d && u + 1 < std::size(units)) d *= 1024, ++u;
    return axis_to(max_bytes, d, units[u]);
}

Axis percent_axis() {
    Axis a;
    a.max = 1;
    a.ticks = {0, 0.25, 0.5, 0.75, 1};
    a.divisor = 0.01;
    a.unit = "%";
    return a;
}

Axis count_axis(double max) {
    Axis a = axis_to(std::max(max, 1.0), 1, "");
    if (a.ticks.size() > 1 && a.ticks[1] < 1) a = axis_to(std::max(max, 4.0), 1, "");  // whole counts only
    return a;
}

std::string axis_label(const Axis& a, double value) {
    std::string n = trim_number(value / a.divisor, 2);
    if (a.unit.empty()) return n;
    return a.unit == "%" ? n + "%" : n + " " + a.unit;
}

std::string time_chart(const TimeChart& ch) {
    double plot_h = ch.height - kTop - kBottom;
    double span = static_cast<double>(std::max<int64_t>(ch.x1 - ch.x0, 1));
    auto px = [&](double x) { return kLeft + (x - static_cast<double>(ch.x0)) / span * kPlotWidth; };
    auto py = [&](double v) { return kTop + plot_h - std::clamp(ch.y.max > 0 ? v / ch.y.max : 0, 0.0, 1.0) * plot_h; };
    std::string s = "<svg class=\"chart time-chart\" viewBox=\"0 0 " + c(kWidth) + " " + std::to_string(ch.height) +
                    "\" role=\"img\" aria-label=\"" + ch.aria_label + "\" data-x0=\"" + std::to_string(ch.x0) +
                    "\" data-x1=\"" + std::to_string(ch.x1) + "\" data-bin=\"" + std::to_string(ch.bin) +
                    "\" data-left=\"" + c(kLeft) + "\" data-plot=\"" + c(kPlotWidth) + "\" data-fmt=\"" +
                    ch.value_format + "\">";
    y_grid(s, ch.y, plot_h);
    TimeTicks tt = time_ticks(static_cast<double>(ch.x0), static_cast<double>(ch.x1));
    for (double t : tt.at) {
        double x = px(t);
        s += "<line class=\"xtick\" x1=\"" + c(x) + "\" x2=\"" + c(x) + "\" y1=\"" + c(kTop + plot_h) + "\" y2=\"" +
             c(kTop + plot_h + 4) + "\"/><text class=\"tick\" x=\"" + c(x) + "\" y=\"" + c(kTop + plot_h + 16) +
             "\" text-anchor=\"middle\">" + trim_number(t / tt.divisor, 3) + " " + tt.unit + "</text>";
    }
    // Spans first, so the series draws over them.
    for (const Span& sp : ch.spans) {
        double a = px(static_cast<double>(std::max(sp.start, ch.x0))), b = px(static_cast<double>(std::min(sp.end, ch.x1)));
        s += "<rect class=\"" + sp.css_class + "\" x=\"" + c(a) + "\" y=\"" + c(kTop) + "\" width=\"" +
             c(std::max(b - a, 1.5)) + "\" height=\"" + c(plot_h) + "\"><title>" + sp.tip + "</title></rect>";
    }
    for (size_t si = 0; si < ch.series.size(); ++si) {
        const Series& ser = ch.series[si];
        if (ser.values.empty()) continue;
        std::string d;
        double base = py(0);
        for (size_t i = 0; i < ser.values.size(); ++i) {
            double xa = px(static_cast<double>(ch.x0) + static_cast<double>(i) * static_cast<double>(ch.bin));
            double xb = px(std::min(static_cast<double>(ch.x1),
                                    static_cast<double>(ch.x0) + static_cast<double>(i + 1) * static_cast<double>(ch.bin)));
            double y = py(ser.values[i]);
            if (i == 0) d += ser.area ? "M" + c(xa) + " " + c(base) + "L" + c(xa) + " " + c(y) : "M" + c(xa) + " " + c(y);
            else d += "L" + c(xa) + " " + c(y);
            d += "L" + c(xb) + " " + c(y);
            if (i + 1 == ser.values.size() && ser.area) d += "L" + c(xb) + " " + c(base) + "Z";
        }
        s += "<path class=\"series " + ser.css_class + (ser.area ? " area" : " line") + "\" d=\"" + d +
             "\" data-name=\"" + ser.name + "\" data-values=\"" + values_attr(ser.values, ch.value_format) + "\"/>";
    }
    for (const PointMark& p : ch.points) {
        double x = px(static_cast<double>(p.x)), y = py(p.y);
        bool left = x > kLeft + kPlotWidth * 0.75;
        s += "<g class=\"mark\"><circle cx=\"" + c(x) + "\" cy=\"" + c(y) + "\" r=\"4\"/><text x=\"" +
             c(left ? x - 8 : x + 8) + "\" y=\"" + c(std::max(y - 6, kTop + 10)) + "\" text-anchor=\"" +
             (left ? "end" : "start") + "\">" + p.label + "</text><title>" + p.tip + "</title></g>";
    }
    s += "<line class=\"axis\" x1=\"" + c(kLeft) + "\" x2=\"" + c(kWidth - kRight) + "\" y1=\"" + c(kTop + plot_h) +
         "\" y2=\"" + c(kTop + plot_h) + "\"/>";
    s += "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"" + c(kTop) + "\" y2=\"" + c(kTop + plot_h) + "\"/></svg>";
    return s;
}

std::string bar_chart(const BarChart& ch) {
    double plot_h = ch.height - kTop - kBottom;
    size_t n = std::max<size_t>(ch.bars.size(), 1);
    double slot = kPlotWidth / static_cast<double>(n);
    double gap = slot > 4 ? std::min(slot * 0.2, 6.0) : 0;
    auto py = [&](double v) { return kTop + plot_h - std::clamp(ch.y.max > 0 ? v / ch.y.max : 0, 0.0, 1.0) * plot_h; };
    std::string s = "<svg class=\"chart bar-chart\" viewBox=\"0 0 " + c(kWidth) + " " + std::to_string(ch.height) +
                    "\" role=\"img\" aria-label=\"" + ch.aria_label + "\">";
    y_grid(s, ch.y, plot_h);
    for (size_t i = 0; i < ch.bars.size(); ++i) {
        const Bar& b = ch.bars[i];
        double x = kLeft + static_cast<double>(i) * slot + gap / 2, w = std::max(slot - gap, 0.6);
        s += "<g class=\"bar-group\"><rect class=\"" + ch.bar_class + "\" x=\"" + c(x) + "\" y=\"" + c(py(b.value)) +
             "\" width=\"" + c(w) + "\" height=\"" + c(py(0) - py(b.value)) + "\"/>";
        if (b.inner >= 0)
            s += "<rect class=\"" + ch.inner_class + "\" x=\"" + c(x) + "\" y=\"" + c(py(b.inner)) + "\" width=\"" +
                 c(w) + "\" height=\"" + c(py(0) - py(b.inner)) + "\"/>";
        if (b.low >= 0 && b.high > b.low)
            s += "<line class=\"whisker\" x1=\"" + c(x + w / 2) + "\" x2=\"" + c(x + w / 2) + "\" y1=\"" + c(py(b.low)) +
                 "\" y2=\"" + c(py(b.high)) + "\"/>";
        // A full-height transparent target, so a thin bar is easy to hover.
        s += "<rect class=\"hit\" x=\"" + c(kLeft + static_cast<double>(i) * slot) + "\" y=\"" + c(kTop) +
             "\" width=\"" + c(slot) + "\" height=\"" + c(plot_h) + "\"/>";
        s += "<title>" + b.tip + "</title></g>";
    }
    for (const RefLine& l : ch.lines) {
        double y = py(l.y);
        s += "<g class=\"ref " + l.css_class + "\"><line x1=\"" + c(kLeft) + "\" x2=\"" + c(kWidth - kRight) +
             "\" y1=\"" + c(y) + "\" y2=\"" + c(y) + "\"/><text x=\"" + c(kWidth - kRight - 4) + "\" y=\"" + c(y - 4) +
             "\" text-anchor=\"end\">" + l.label + "</text></g>";
    }
    s += "<line class=\"axis\" x1=\"" + c(kLeft) + "\" x2=\"" + c(kWidth - kRight) + "\" y1=\"" + c(kTop + plot_h) +
         "\" y2=\"" + c(kTop + plot_h) + "\"/>";
    double ly = kTop + plot_h + 16;
    if (!ch.x_first.empty())
        s += "<text class=\"tick\" x=\"" + c(kLeft) + "\" y=\"" + c(ly) + "\">" + ch.x_first + "</text>";
    if (!ch.x_title.empty())
        s += "<text class=\"tick\" x=\"" + c(kLeft + kPlotWidth / 2) + "\" y=\"" + c(ly) +
             "\" text-anchor=\"middle\">" + ch.x_title + "</text>";
    if (!ch.x_last.empty())
        s += "<text class=\"tick\" x=\"" + c(kWidth - kRight) + "\" y=\"" + c(ly) + "\" text-anchor=\"end\">" +
             ch.x_last + "</text>";
    s += "</svg>";
    return s;
}

std::string icicle(const std::string& aria_label, uint32_t rows, const std::vector<IcicleBox>& boxes) {
    constexpr double kRow = 17, kCharPx = 6.6;
    double height = kRow * std::max<uint32_t>(rows, 1) + 2;
    std::string s = "<svg class=\"chart flame\" viewBox=\"0 0 " + c(kWidth) + " " + c(height) +
                    "\" role=\"img\" aria-label=\"" + aria_label + "\">";
    for (const IcicleBox& b : boxes) {
        double x = b.x * kWidth, w = std::max(b.w * kWidth, 0.5), y = 1 + kRow * b.depth;
        s += "<g class=\"" + b.css_class + "\"><title>" + b.tip + "</title><rect x=\"" + c(x) + "\" y=\"" + c(y) +
             "\" width=\"" + c(w) + "\" height=\"" + c(kRow - 1) + "\"/>";
        // The label when at least a few characters fit, cut to the box (escaped text: cut before an entity only).
        size_t fit = w > 24 ? static_cast<size_t>((w - 6) / kCharPx) : 0;
        if (fit >= 3 && !b.label.empty()) {
            std::string text = b.label;
            if (text.size() > fit) {
                size_t cut = fit - 1;
                size_t amp = text.rfind('&', cut);
                if (amp != std::string::npos && text.find(';', amp) >= cut) cut = amp;
                text = text.substr(0, cut) + "\xE2\x80\xA6";
            }
            s += "<text x=\"" + c(x + 3) + "\" y=\"" + c(y + kRow - 5) + "\">" + text + "</text>";
        }
        s += "</g>";
    }
    return s + "</svg>";
}

}  // namespace gprof::report::html
