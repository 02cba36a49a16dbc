// `schedsim report`: the page model's blocks (tables, charts, notes) and the HTML page rendered from them.
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "sim/io/version.hpp"
#include "sim/outputs/report_detail.hpp"

namespace sim::report_detail {

namespace {

std::string html_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

}  // namespace

std::string num_text(std::optional<double> x) {
  if (!x) return "";
  const double v = *x, a = std::fabs(v);
  if (v == 0) return "0";
  if (a < 1e-4 || a >= 1e15) return fmt::format("{:.3e}", v);
  const int e = int(std::floor(std::log10(a)));
  std::string s;
  if (e > 3) {
    const double unit = std::pow(10.0, e - 3);
    s = fmt::format("{:.0f}", std::round(v / unit) * unit);
  } else {
    s = fmt::format("{:.{}f}", v, 3 - e);
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
  }
  if (s == "-0") s = "0";
  return s;
}

std::string duration_text(std::optional<double> seconds) {
  if (!seconds) return "";
  const double s = *seconds, a = std::fabs(s);
  if (a < 60) return num_text(s) + " s";
  if (a < 3600) return num_text(s / 60) + " min";
  if (a < 86400) return num_text(s / 3600) + " h";
  return num_text(s / 86400) + " d";
}

std::string metric_text(std::string_view metric, std::optional<double> x) {
  const bool seconds = metric.size() > 2 && metric.substr(metric.size() - 2) == "_s";
  return seconds ? duration_text(x) : num_text(x);
}

std::string cell_text(const std::string& s, bool seconds) {
  const auto x = parse_double(s);
  if (!x) return s;
  return seconds ? duration_text(x) : num_text(x);
}

namespace {

/// A number, or a number and a time unit (duration_text): right-aligned.
bool report_numeric_cell(std::string_view c) {
  if (parse_double(c)) return true;
  for (std::string_view unit : {" s", " min", " h", " d"})
    if (c.size() > unit.size() && c.substr(c.size() - unit.size()) == unit && parse_double(c.substr(0, c.size() - unit.size())))
      return true;
  return false;
}

}  // namespace

/// An HTML table; `numeric[i]` right-aligns column i.
std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::string t = "<table><thead><tr>";
  for (const auto& h : head) t += "<th>" + html_escape(h) + "</th>";
  t += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    t += "<tr>";
    for (const auto& c : r) t += (report_numeric_cell(c) ? "<td class=\"num\">" : "<td>") + html_escape(c) + "</td>";
    t += "</tr>\n";
  }
  return t + "</tbody></table>";
}

Block chart(std::string title, std::string text, ojson spec) {
  Block b;
  b.title = std::move(title);
  b.text = std::move(text);
  b.chart = true;
  b.spec = std::move(spec);
  return b;
}
Block html_block(std::string title, std::string text, std::string html) {
  Block b;
  b.title = std::move(title);
  b.text = std::move(text);
  b.html = std::move(html);
  return b;
}
Block note(std::string title, std::string text) { return html_block(std::move(title), std::move(text), ""); }

ojson field(const char* name, const char* type, const std::string& title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

namespace {

/// JSON text safe inside a <script> element: every `<` as \u003c (so `</script>` and `<!--`
/// cannot appear), U+2028/U+2029 escaped too.
std::string script_json(const ojson& j) {
  const std::string d = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string o;
  o.reserve(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] == '<') o += "\\u003c";
    else if (d.compare(i, 3, "\xE2\x80\xA8") == 0) { o += "\\u2028"; i += 2; }
    else if (d.compare(i, 3, "\xE2\x80\xA9") == 0) { o += "\\u2029"; i += 2; }
    else o += d[i];
  }
  return o;
}

/// A runtime's text made safe to inline in a <script> element (`</script` cannot end it early).
std::string inline_script(const std::string& js) {
  std::string o;
  o.reserve(js.size());
  for (std::size_t i = 0; i < js.size(); ++i) {
    if (js[i] == '<' && i + 1 < js.size() && js[i + 1] == '/' && i + 8 <= js.size()) {
      std::string w = js.substr(i + 2, 6);
      std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      if (w == "script") {
        o += "<\\/";
        ++i;
        continue;
      }
    }
    o += js[i];
  }
  return o;
}

const char* k_style = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
p.sub { color: #555; margin-top: 0; }
p.desc { color: #555; font-size: 0.92em; }
table { border-collapse: collapse; font-size: 0.9em; display: block; max-width: 100%; overflow-x: auto; }
td { overflow-wrap: anywhere; }
.chart { max-width: 100%; overflow-x: auto; }
.chart .vega-embed, .chart svg { max-width: 100%; }
.chart svg { height: auto; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f4f4; }
.chart.failed { color: #b00; }
footer { margin-top: 3em; color: #888; font-size: 0.85em; }
@media print { body { margin: 0; max-width: none; } section { break-inside: avoid; } h2 { break-after: avoid; } .chart, table { overflow: visible; } }
)";

}  // namespace

std::string render(const Page& page, const ReportRuntimes& rt) {
  ojson charts = ojson::array();
  std::string body;
  int n = 0;
  for (const Block& b : page.blocks) {
    body += "<section>\n<h2>" + html_escape(b.title) + "</h2>\n";
    if (!b.text.empty()) body += "<p class=\"desc\">" + html_escape(b.text) + "</p>\n";
    if (b.chart) {
      const std::string id = fmt::format("chart-{}", n++);
      body += "<div class=\"chart\" id=\"" + id + "\"></div>\n";
      charts.push_back({{"id", id}, {"spec", b.spec}});
    } else {
      body += b.html + "\n";
    }
    body += "</section>\n";
  }
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"generator\" content=\"schedsim " + html_escape(version()) + "\">\n";
  h += "<title>" + html_escape(page.title) + "</title>\n<style>" + k_style + "</style>\n";
  h += "<script>\n" + inline_script(rt.vega) + "\n</script>\n";
  h += "<script>\n" + inline_script(rt.vega_lite) + "\n</script>\n";
  h += "<script>\n" + inline_script(rt.vega_embed) + "\n</script>\n";
  h += "</head>\n<body>\n<h1>" + html_escape(page.title) + "</h1>\n<p class=\"sub\">" + html_escape(page.subtitle) + "</p>\n";
  h += body;
  h += "<footer>Made by schedsim " + html_escape(version()) +
       " report; charts drawn by Vega-Lite in this page (no network needed). docs/report.md explains every chart.</footer>\n";
  h += "<script type=\"application/json\" id=\"schedsim-report-data\">" + script_json({{"charts", charts}}) + "</script>\n";
  h += R"(<script>
(function () {
  var data = JSON.parse(document.getElementById("schedsim-report-data").textContent);
  data.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    vegaEmbed(el, c.spec, { mode: "vega-lite", renderer: "svg", actions: false }).catch(function (e) {
      el.className += " failed";
      el.textContent = "This chart could not be drawn: " + e;
    });
  });
})();
</script>
</body>
</html>
)";
  return h;
}

}  // namespace sim::report_detail
