#include "html/page.h"

#include <algorithm>
#include <random>

#include "html/escape.h"
#include "output/text.h"
#include "html/svg.h"

namespace gprof::report::html {

namespace {

// Light and dark themes from one set of variables; charts take their colours from these classes too.
constexpr const char* kStyle = R"css(
:root{--bg:#fff;--fg:#1c2230;--muted:#5d677a;--card:#f5f7fa;--line:#dde2ea;--accent:#2f6fde;--busy:#1f9d6b;
--busy-fill:rgba(31,157,107,.28);--idle:rgba(229,72,77,.16);--idle-line:#e5484d;--mem:#7c5cd6;--mem-fill:rgba(124,92,214,.18);
--pool:#d97706;--bar:#9db8ec;--bar-inner:#2f6fde;--bad:#d92d20;--bad-bg:#fdecea;--warn:#b45309;--warn-bg:#fff5e6;
--good:#15803d;--good-bg:#e9f7ef;--neutral-bg:#eef1f5}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--fg:#e4e8ee;--muted:#9aa4b5;--card:#1d2128;--line:#2e343e;
--accent:#6b9cff;--busy:#3ccf91;--busy-fill:rgba(60,207,145,.25);--idle:rgba(255,99,99,.18);--idle-line:#ff6b6b;
--mem:#a58bff;--mem-fill:rgba(165,139,255,.2);--pool:#f0a030;--bar:#3b5488;--bar-inner:#6b9cff;--bad:#ff6b6b;
--bad-bg:#3a1f1f;--warn:#f0a030;--warn-bg:#33291a;--good:#3ccf91;--good-bg:#16301f;--neutral-bg:#232831}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1180px;margin:0 auto;padding:0 20px 40px}
header.top{padding:18px 0 8px}
h1{font-size:22px;margin:0 0 4px;word-break:break-all}
h2{font-size:17px;margin:28px 0 6px;padding-top:6px;border-top:1px solid var(--line)}
h3{font-size:14px;margin:14px 0 4px}
.meta,.intro,.note{color:var(--muted)}
.intro{margin:0 0 10px}
.note{font-size:12.5px;margin:6px 0}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
nav.toc{position:sticky;top:0;z-index:5;background:var(--bg);border-bottom:1px solid var(--line);padding:6px 0;
display:flex;flex-wrap:wrap;gap:4px 14px;font-size:13px}
nav.toc a{color:var(--accent);text-decoration:none}nav.toc a:hover{text-decoration:underline}
.alert{border:1px solid var(--bad);background:var(--bad-bg);border-left:6px solid var(--bad);border-radius:6px;
padding:10px 14px;margin:12px 0}
.alert h2{border:0;margin:0 0 4px;padding:0;color:var(--bad);font-size:15px}
.alert ul{margin:4px 0 0;padding-left:20px}
.verdict{display:flex;gap:16px;align-items:flex-start;background:var(--card);border-radius:8px;padding:14px 16px;
border-left:6px solid var(--accent);margin:14px 0}
.verdict.gpu_bound,.verdict.balanced{border-left-color:var(--good)}
.verdict.cpu_launch_bound,.verdict.sync_bound,.verdict.io_bound{border-left-color:var(--warn)}
.verdict.no_gpu_work{border-left-color:var(--muted)}
.verdict .title{font-size:20px;font-weight:650}
.verdict .why{margin-top:2px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:10px 0}
.card{background:var(--card);border-radius:8px;padding:9px 12px}
.card .v{font-size:20px;font-weight:650;font-variant-numeric:tabular-nums}
.card .l{color:var(--muted);font-size:12.5px}
.card.bad .v{color:var(--bad)}.card.warn .v{color:var(--warn)}.card.good .v{color:var(--good)}
.findings{margin:8px 0;padding:0;list-style:none}
.findings li{background:var(--card);border-radius:6px;padding:8px 12px;margin:6px 0}
.findings .fix{color:var(--muted)}
.scroll{max-height:30em;overflow:auto;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;text-align:left;vertical-align:top;border-bottom:1px solid var(--line)}
th{position:sticky;top:0;background:var(--card);font-weight:600;white-space:nowrap;font-size:12.5px}
table.sortable th.sort{cursor:pointer;user-select:none}
table.sortable th.sort::after{content:" \2195";color:var(--muted);font-size:11px}
table.sortable th[aria-sort=ascending]::after{content:" \25B2";color:var(--fg)}
table.sortable th[aria-sort=descending]::after{content:" \25BC";color:var(--fg)}
td.n,th.n{text-align:right;white-space:nowrap}
tbody tr:hover{background:var(--neutral-bg)}
.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;word-break:break-all}
[data-tip],[title]{cursor:help}
.bar-cell{position:relative;min-width:90px}
.share{display:block;position:relative;height:18px;border-radius:3px;background:var(--neutral-bg);overflow:hidden}
.share>i{position:absolute;left:0;top:0;bottom:0;background:var(--bar)}
.share>span{position:relative;padding:0 5px;font-size:12px;line-height:18px}
.share.new>i{background:var(--bar-inner)}.share.bad>i{background:var(--bad)}.share.good>i{background:var(--good)}
.chart{width:100%;height:auto;display:block;margin:4px 0 2px}
.chart .grid{stroke:var(--line);stroke-width:1}
.chart .axis{stroke:var(--muted);stroke-width:1}
.chart .xtick{stroke:var(--muted)}
.chart text{fill:var(--muted);font-size:11px;font-family:system-ui,sans-serif}
.chart .series.area{stroke-width:1.2}
.chart .series.busy{fill:var(--busy-fill);stroke:var(--busy)}
.chart.flame rect{stroke:var(--bg);stroke-width:.5}.chart.flame text{fill:#1c2230;font-size:10.5px}
.fl-native rect,i.fl-native{fill:#f3a76b;background:#f3a76b}.fl-python rect,i.fl-python{fill:#8fb8f0;background:#8fb8f0}
.fl-thread rect,i.fl-thread{fill:#c9ced8;background:#c9ced8}.chart.flame g:hover rect{fill-opacity:.7}
.flame-box{max-height:40em}
.chart .series.mem{fill:var(--mem-fill);stroke:var(--mem)}
.chart .series.line{fill:none;stroke-width:1.6}
.chart .series.pool{stroke:var(--pool);stroke-dasharray:5 3}
.chart .gap{fill:var(--idle);stroke:var(--idle-line);stroke-width:.6}
.chart .gap:hover{fill:var(--idle-line);fill-opacity:.35}
.chart .mark circle{fill:var(--mem);stroke:var(--bg);stroke-width:1.5}
.chart .mark text{fill:var(--fg);font-weight:600}
.chart .bar{fill:var(--bar)}.chart .bar-inner{fill:var(--bar-inner)}
.chart .whisker{stroke:var(--fg);stroke-opacity:.45;stroke-width:1}
.chart .hit{fill:transparent}
.chart .bar-group:hover .bar{fill:var(--accent);fill-opacity:.6}
.chart .ref line{stroke:var(--fg);stroke-dasharray:4 3;stroke-width:1}
.chart .ref.p90 line{stroke:var(--warn)}
.chart .ref text{fill:var(--fg);font-size:11px}
.chart.heat rect{fill:var(--bad)}.chart.heat .heat-frame{fill:none;stroke:var(--muted);stroke-opacity:.5}
.chart.heat .heat-row:hover rect{fill:var(--accent)}
.chart .cursor{stroke:var(--fg);stroke-opacity:0;stroke-width:1}
.chart.hover .cursor{stroke-opacity:.5}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:var(--muted);margin:2px 0 8px}
.legend i{display:inline-block;width:12px;height:10px;margin-right:5px;border-radius:2px;vertical-align:-1px}
.legend .busy{background:var(--busy)}.legend .gap{background:var(--idle);border:1px solid var(--idle-line)}
.legend .mem{background:var(--mem)}.legend .pool{background:var(--pool)}
.legend .bar{background:var(--bar)}.legend .bar-inner{background:var(--bar-inner)}
.device{margin:10px 0 16px}
.device h3 .sub{color:var(--muted);font-weight:400}
.two{display:grid;grid-template-columns:3fr 2fr;gap:18px}
@media (max-width:800px){.two{grid-template-columns:1fr}}
.stack{display:flex;height:22px;border-radius:4px;overflow:hidden;margin:6px 0}
.stack>span{display:block;height:100%;min-width:1px}
.status{font-weight:600;white-space:nowrap}
.status.regression,.status.fail{color:var(--bad)}.status.improvement{color:var(--good)}
.status.new,.status.vanished{color:var(--warn)}.status.not_significant,.status.unchanged{color:var(--muted)}
.diffbars{min-width:260px}
.diffbars .share{height:14px;margin:1px 0}
.diffbars .share>span{line-height:14px;font-size:11px}
.threshold{position:absolute;top:-2px;bottom:-2px;width:0;border-left:2px dashed var(--bad)}
#tip{position:fixed;z-index:20;display:none;max-width:560px;padding:6px 9px;border-radius:6px;
background:var(--fg);color:var(--bg);font-size:12.5px;white-space:pre-wrap;word-break:break-all;pointer-events:none;
box-shadow:0 2px 8px rgba(0,0,0,.25)}
footer{margin-top:30px;color:var(--muted);font-size:12.5px;border-top:1px solid var(--line);padding-top:8px}
)css";

// Progressive enhancement only: the page reads the same without it.
constexpr const char* kScript = R"js(
(function () {
  'use strict';
  var tip = document.createElement('div');
  tip.id = 'tip';
  tip.setAttribute('role', 'tooltip');
  document.body.appendChild(tip);
  // Native hover texts (SVG <title>, title="") become the page's own tooltip: no delay, long names wrap.
  Array.prototype.forEach.call(document.querySelectorAll('svg title'), function (t) {
    t.parentNode.setAttribute('data-tip', t.textContent);
    t.parentNode.removeChild(t);
  });
  Array.prototype.forEach.call(document.querySelectorAll('[title]'), function (e) {
    e.setAttribute('data-tip', e.getAttribute('title'));
    e.removeAttribute('title');
  });
  function fmtTime(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toPrecision(4) + ' s';
    if (a >= 1e6) return (ns / 1e6).toPrecision(4) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toPrecision(4) + ' us';
    return Math.round(ns) + ' ns';
  }
  function fmtBytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(2) : String(b)) + ' ' + u[i];
  }
  function show(text, x, y) {
    tip.textContent = text;
    tip.style.display = 'block';
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var left = x + 14, top = y + 16;
    if (left + w > window.innerWidth - 4) left = Math.max(4, x - w - 10);
    if (top + h > window.innerHeight - 4) top = Math.max(4, y - h - 10);
    tip.style.left = left + 'px';
    tip.style.top = top + 'px';
  }
  function hide() { tip.style.display = 'none'; }
  var hovered = null;
  // What a binned time chart holds under the mouse: the bin's time range and each series' value there.
  function chartText(svg, ev) {
    var box = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    var x = (ev.clientX - box.left) * vb.width / box.width;
    var left = +svg.getAttribute('data-left'), plot = +svg.getAttribute('data-plot');
    if (x < left || x > left + plot) return null;
    var x0 = +svg.getAttribute('data-x0'), x1 = +svg.getAttribute('data-x1'), bin = +svg.getAttribute('data-bin');
    var t = x0 + (x - left) / plot * (x1 - x0);
    var i = Math.floor((t - x0) / bin);
    var cursor = svg.querySelector('.cursor');
    cursor.setAttribute('x1', x); cursor.setAttribute('x2', x);
    var lines = [fmtTime(x0 + i * bin) + ' \u2013 ' + fmtTime(Math.min(x1, x0 + (i + 1) * bin))];
    var pct = svg.getAttribute('data-fmt') === 'pct';
    Array.prototype.forEach.call(svg.querySelectorAll('.series'), function (p) {
      if (!p._values) p._values = p.getAttribute('data-values').split(',').map(Number);
      var v = p._values[i];
      if (v === undefined) return;
      lines.push(p.getAttribute('data-name') + ': ' + (pct ? (v * 100).toFixed(1) + '%' : fmtBytes(v)));
    });
    return lines.join('\n');
  }
  document.addEventListener('mousemove', function (ev) {
    var el = ev.target && ev.target.closest ? ev.target : null;
    var svg = el && el.closest('svg.time-chart');
    if (hovered && hovered !== svg) { hovered.classList.remove('hover'); hovered = null; }
    var t = el && el.closest('[data-tip]');
    if (t) { show(t.getAttribute('data-tip'), ev.clientX, ev.clientY); return; }
    if (svg) {
      var text = chartText(svg, ev);
      if (text) { svg.classList.add('hover'); hovered = svg; show(text, ev.clientX, ev.clientY); return; }
    }
    hide();
  });
  document.addEventListener('scroll', hide, true);
  // Sortable tables: a click on a header sorts by it (numbers first high, names A to Z); again reverses.
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      var kind = th.getAttribute('data-sort');
      if (!kind || kind === 'none') return;
      th.classList.add('sort');
      th.tabIndex = 0;
      function sort() {
        var asc = th.getAttribute('aria-sort') ? th.getAttribute('aria-sort') !== 'ascending' : kind !== 'num';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (r, i) {
          var c = r.cells[col];
          var v = kind === 'num' ? parseFloat(c.getAttribute('data-v')) : c.textContent.toLowerCase();
          return { r: r, v: v, i: i };
        });
        rows.sort(function (a, b) {
          var d = a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
          return (asc ? d : -d) || a.i - b.i;
        });
        rows.forEach(function (x) { body.appendChild(x.r); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
    });
  });
  document.documentElement.setAttribute('data-ready', '1');
})();
)js";

std::string nonce() {
    std::random_device rd;
    std::string s;
    const char* hex = "0123456789abcdef";
    for (int i = 0; i < 4; ++i) {
        uint32_t v = rd();
        for (int k = 0; k < 8; ++k, v >>= 4) s += hex[v & 15];
    }
    return s;
}

}  // namespace

std::string document(const std::string& title, const std::string& body) {
    // The script runs only with this page's nonce: a <script> smuggled in through a trace name (which escape() stops
    // anyway) would not run. Nothing may be fetched: default-src 'none'.
    std::string n = nonce();
    std::string out;
    out.reserve(body.size() + 16384);
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:; script-src 'nonce-" + n + "'; base-uri 'none'; form-action 'none'\">\n"
           "<meta name=\"generator\" content=\"gprof-report\">\n<title>" + title + "</title>\n<style>" + kStyle +
           "</style>\n</head>\n<body>\n<main>\n";
    out += body;
    out += "</main>\n<script nonce=\"" + n + "\">" + kScript + "</script>\n</body>\n</html>\n";
    return out;
}

SortableTable& SortableTable::column(std::string title, Sort sort, std::string hint) {
    cols_.push_back({std::move(title), std::move(hint), sort});
    return *this;
}

SortableTable& SortableTable::row() {
    rows_.emplace_back();
    return *this;
}

SortableTable& SortableTable::cell(std::string h) {
    rows_.back().push_back({std::move(h), {}, false});
    return *this;
}

SortableTable& SortableTable::num(std::string h, double sort_value) {
    rows_.back().push_back({std::move(h), trim_number(sort_value, 3), true});
    return *this;
}

std::string SortableTable::html() const {
    std::string s = "<div class=\"scroll\"><table class=\"sortable" + (class_.empty() ? "" : " " + class_) +
                    "\"><thead><tr>";
    for (size_t i = 0; i < cols_.size(); ++i) {
        const Col& c = cols_[i];
        bool numeric = !rows_.empty() && i < rows_.front().size() && rows_.front()[i].numeric;
        s += "<th";
        if (numeric) s += " class=\"n\"";
        s += std::string(" data-sort=\"") +
             (c.sort == Sort::Number ? "num" : c.sort == Sort::Text ? "text" : "none") + "\"";
        if (!c.hint.empty()) s += " title=\"" + c.hint + "\"";
        s += ">" + c.title + "</th>";
    }
    s += "</tr></thead><tbody>";
    for (const auto& r : rows_) {
        s += "<tr>";
        for (const Cell& c : r) {
            if (c.numeric) s += "<td class=\"n\" data-v=\"" + c.value + "\">" + c.html + "</td>";
            else s += "<td>" + c.html + "</td>";
        }
        s += "</tr>";
    }
    s += "</tbody></table></div>";
    return s;
}

std::string card(const std::string& value, const std::string& label, const std::string& hint,
                 const std::string& css_class) {
    std::string s = "<div class=\"card" + (css_class.empty() ? "" : " " + css_class) + "\"";
    if (!hint.empty()) s += " title=\"" + hint + "\"";
    return s + "><div class=\"v\">" + value + "</div><div class=\"l\">" + label + "</div></div>";
}

std::string share_bar(double pct, const std::string& text, const std::string& css_class) {
    double w = std::clamp(pct, 0.0, 100.0);
    return "<span class=\"" + css_class + "\"><i style=\"width:" + trim_number(w, 2) + "%\"></i><span>" + text +
           "</span></span>";
}

std::string section(const std::string& id, const std::string& title, const std::string& intro,
                    const std::string& body) {
    std::string s = "<section id=\"" + id + "\"><h2>" + title + "</h2>";
    if (!intro.empty()) s += "<p class=\"intro\">" + intro + "</p>";
    return s + body + "</section>\n";
}

std::string name_cell(const std::string& name, const std::string& more, size_t max_chars) {
    std::string shown = shorten_name(name, max_chars);
    std::string full = report::valid_utf8(name);
    if (shown == full && more.empty()) return "<span class=\"name\">" + escape(full) + "</span>";
    std::string tip = full + (more.empty() ? "" : "\n" + more);
    return "<span class=\"name\" title=\"" + escape(tip) + "\">" + escape(shown) + "</span>";
}

}  // namespace gprof::report::html
