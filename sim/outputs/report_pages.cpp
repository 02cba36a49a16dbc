// `schedsim report`: the pages of `run --seeds`, compare, sweep and plan folders.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sim/outputs/report_detail.hpp"

namespace sim::report_detail {

namespace {

constexpr std::size_t k_max_table_rows = 500;

}  // namespace

// ------------------------------------------------------------------ seeds, compare

namespace {

/// The drawn lower end of a confidence band: a metric whose mean is non-negative (every metric
/// of a run: waits, ratios, counts, costs) cannot go below 0, so its band is clipped there
/// (the tooltips and tables keep ci95_low as written).
double band_low(double lo, double mean) { return mean >= 0 ? std::max(0.0, lo) : lo; }

/// A point + error-bar chart per metric, stacked (vconcat, each filtered to its metric), with
/// independent scales. Not a facet: Vega-Lite warns about layered facets with independent scales.
ojson errorbar_facet(const ojson& values, const char* x, const char* lo, const char* hi, const std::string& xtitle,
                     const std::string& ytitle_field, bool zero_rule) {
  ojson layer = ojson::array();
  layer.push_back({{"mark", {{"type", "rule"}}},
                   {"encoding", {{"x", field(lo, "quantitative", xtitle)}, {"x2", {{"field", hi}}}, {"y", field("label", "nominal", ytitle_field)}}}});
  layer.push_back({{"mark", {{"type", "point"}, {"filled", true}}},
                   {"encoding", {{"x", field(x, "quantitative", xtitle)}, {"y", field("label", "nominal", ytitle_field)}}}});
  if (zero_rule) layer.push_back({{"mark", {{"type", "rule"}, {"color", "grey"}, {"strokeDash", {3, 3}}}}, {"encoding", {{"x", {{"datum", 0}}}}}});
  std::vector<std::string> metrics;  // first-seen order
  for (const auto& v : values)
    if (std::find(metrics.begin(), metrics.end(), v["metric"].get<std::string>()) == metrics.end())
      metrics.push_back(v["metric"].get<std::string>());
  if (metrics.empty()) return {{"data", {{"values", values}}}, {"width", 480}, {"layer", layer}};  // nothing to draw
  ojson rows = ojson::array();
  for (const auto& m : metrics)
    rows.push_back({{"title", {{"text", m}, {"anchor", "start"}, {"fontSize", 12}}},
                    {"width", 480},
                    {"transform", ojson::array({{{"filter", {{"field", "metric"}, {"equal", m}}}}})},
                    {"layer", layer}});
  return {{"data", {{"values", values}}}, {"vconcat", rows}, {"resolve", {{"scale", {{"x", "independent"}, {"y", "independent"}}}}}};
}

}  // namespace

void seeds_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "seeds_summary.json";
  const auto rows = metric_object(f, read_json(f), "", {"mean", "std", "ci95_low", "ci95_high", "n"});
  page.title = "schedsim run --seeds: " + dir.filename().string();
  page.subtitle = fmt::format("Folder {}: {} metrics over seeds (mean, sample standard deviation, 95 % confidence interval).",
                              dir.string(), rows.size());
  std::vector<std::vector<std::string>> t;
  ojson vals = ojson::array();
  for (const auto& r : rows) {
    t.push_back({r.metric, metric_text(r.metric, r.v.at("mean")), metric_text(r.metric, r.v.at("std")),
                 metric_text(r.metric, r.v.at("ci95_low")), metric_text(r.metric, r.v.at("ci95_high")), num_text(r.v.at("n"))});
    if (r.v.at("mean"))
      vals.push_back({{"metric", r.metric},
                      {"label", "mean"},
                      {"mean", *r.v.at("mean")},
                      {"lo", band_low(r.v.at("ci95_low").value_or(*r.v.at("mean")), *r.v.at("mean"))},
                      {"hi", r.v.at("ci95_high").value_or(*r.v.at("mean"))}});
  }
  page.blocks.push_back(html_block("Metrics with 95 % confidence intervals", "seeds_summary.json.",
                                   table({"metric", "mean", "std", "ci95_low", "ci95_high", "n"}, t)));
  page.blocks.push_back(chart("Mean and 95 % CI per metric", "seeds_summary.json: the mean (point) and its 95 % confidence interval (bar, clipped at 0).",
                              errorbar_facet(vals, "mean", "lo", "hi", "value", "", false)));
  const fs::path sf = dir / "seeds.csv";
  if (fs::exists(sf)) {
    const Csv s = read_csv(sf);
    const std::size_t cs = s.need("seed");
    ojson pts = ojson::array();
    for (std::size_t r = 0; r < s.rows.size(); ++r)
      for (std::size_t c = 0; c < s.header.size(); ++c)
        if (c != cs)
          if (auto v = s.number(r, c, true)) pts.push_back({{"metric", s.header[c]}, {"seed", s.rows[r][cs]}, {"value", *v}});
    ojson spec = {{"data", {{"values", pts}}},
                  {"facet", {{"row", {{"field", "metric"}, {"type", "nominal"}, {"title", nullptr}, {"header", {{"labelAngle", 0}, {"labelAlign", "left"}}}}}}},
                  {"spec", {{"width", 480}, {"height", 20}, {"mark", {{"type", "tick"}}},
                            {"encoding", {{"x", field("value", "quantitative", "value")}, {"tooltip", {field("seed", "nominal", "seed"), field("value", "quantitative", "value")}}}}}},
                  {"resolve", {{"scale", {{"x", "independent"}}}}}};
    page.blocks.push_back(chart("Per-seed values", "seeds.csv: one tick per seed and metric.", std::move(spec)));
  }
}

namespace {

/// Up to `cap` JSON paths where `a` and `b` differ, each `PATH: A -> B` (values shortened).
void compare_json_diff(const ojson& a, const ojson& b, const std::string& path, std::vector<std::string>& out, std::size_t cap) {
  if (out.size() >= cap || a == b) return;
  auto shorten = [](const ojson& v) {
    std::string t = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return t.size() > 40 ? t.substr(0, 37) + "..." : t;
  };
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : a.items())
      compare_json_diff(v, b.contains(k) ? b[k] : ojson(), path.empty() ? k : path + "." + k, out, cap);
    for (const auto& [k, v] : b.items())
      if (!a.contains(k)) compare_json_diff(ojson(), v, path.empty() ? k : path + "." + k, out, cap);
    return;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      // Arrays of named objects (pools, tasks, ...) by name, as --set writes them.
      const bool named = a[i].is_object() && a[i].contains("name") && a[i]["name"].is_string();
      compare_json_diff(a[i], b[i], path + (named ? "[" + a[i]["name"].get<std::string>() + "]" : fmt::format("[{}]", i)), out, cap);
    }
    return;
  }
  out.push_back(fmt::format("{}: {} -> {}", path, a.is_null() ? "(absent)" : shorten(a), b.is_null() ? "(absent)" : shorten(b)));
}

}  // namespace

void compare_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "compare.json";
  const auto rows = metric_object(f, read_json(f), "", {"a", "b", "diff", "ci95_low", "ci95_high"});
  page.title = "schedsim compare: " + dir.filename().string();
  // A and B by their scenario names (a.resolved.json, b.resolved.json) and where they differ.
  std::string a_name = "A", b_name = "B";
  const fs::path af = dir / "a.resolved.json", bf = dir / "b.resolved.json";
  if (fs::exists(af) && fs::exists(bf)) {
    const ojson ja = read_json(af), jb = read_json(bf);
    auto name_of = [](const ojson& j) {
      return j.is_object() && j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : std::string();
    };
    a_name = name_of(ja).empty() ? "A" : "A (" + name_of(ja) + ")";
    b_name = name_of(jb).empty() ? "B" : "B (" + name_of(jb) + ")";
    std::vector<std::string> diffs;
    compare_json_diff(ja, jb, "", diffs, 8);
    std::vector<std::vector<std::string>> t;
    for (const auto& d : diffs) t.push_back({d});
    page.blocks.push_back(html_block("A and B",
                                     fmt::format("A = {}, B = {} (a.resolved.json, b.resolved.json). {}", a_name, b_name,
                                                 diffs.empty() ? "The two resolved scenarios are identical."
                                                               : "Where the resolved scenarios differ (first 8):"),
                                     diffs.empty() ? std::string() : table({"path: A -> B"}, t)));
  }
  page.subtitle = fmt::format("Folder {}: {} vs {}: B - A per metric (paired over seeds) with the 95 % confidence interval of the difference.",
                              dir.string(), a_name, b_name);
  std::vector<std::vector<std::string>> t;
  ojson vals = ojson::array();
  for (const auto& r : rows) {
    t.push_back({r.metric, metric_text(r.metric, r.v.at("a")), metric_text(r.metric, r.v.at("b")), metric_text(r.metric, r.v.at("diff")),
                 metric_text(r.metric, r.v.at("ci95_low")), metric_text(r.metric, r.v.at("ci95_high"))});
    if (r.v.at("diff"))
      vals.push_back({{"metric", r.metric},
                      {"label", "B - A"},
                      {"diff", *r.v.at("diff")},
                      {"lo", r.v.at("ci95_low").value_or(*r.v.at("diff"))},
                      {"hi", r.v.at("ci95_high").value_or(*r.v.at("diff"))}});
  }
  page.blocks.push_back(html_block("Metrics of A and B", "compare.json.", table({"metric", a_name == "A" ? "a" : "a = " + a_name, b_name == "B" ? "b" : "b = " + b_name, "diff (b - a)", "ci95_low", "ci95_high"}, t)));
  page.blocks.push_back(chart("Difference B - A with 95 % CI",
                              "compare.json: the mean paired difference (point), its 95 % CI (bar) and zero (dashed): a bar "
                              "that does not cross zero is a difference the seeds support.",
                              errorbar_facet(vals, "diff", "lo", "hi", "B - A", "", true)));
  const fs::path gf = dir / "compare_groups.csv";
  if (fs::exists(gf)) {
    const Csv g = read_csv(gf);
    const std::size_t c_by = g.need("group_by"), c_group = g.need("group"), c_metric = g.need("metric"), c_a = g.need("a"),
                      c_b = g.need("b"), c_diff = g.need("diff"), c_lo = g.need("ci95_low"), c_hi = g.need("ci95_high");
    ojson gv = ojson::array();
    std::vector<std::vector<std::string>> gt;
    for (std::size_t r = 0; r < g.rows.size(); ++r) {
      const auto d = g.number(r, c_diff, true);
      g.number(r, c_a, true);
      g.number(r, c_b, true);
      const auto lo = g.number(r, c_lo, true), hi = g.number(r, c_hi, true);
      const std::string label = g.rows[r][c_by] + ": " + g.rows[r][c_group];
      if (d) gv.push_back({{"metric", g.rows[r][c_metric]}, {"label", label}, {"diff", *d}, {"lo", lo.value_or(*d)}, {"hi", hi.value_or(*d)}});
      if (gt.size() < k_max_table_rows) {
        std::vector<std::string> row = g.rows[r];
        const std::string& m = g.rows[r][c_metric];
        const bool seconds = m.size() > 2 && m.compare(m.size() - 2, 2, "_s") == 0;
        for (std::size_t c : {c_a, c_b, c_diff, c_lo, c_hi}) row[c] = cell_text(row[c], seconds);
        gt.push_back(std::move(row));
      }
    }
    page.blocks.push_back(chart("Per-group differences B - A",
                                "compare_groups.csv: per group (user, tenant, pool, GPU model, capacity class), the difference of each group metric with its 95 % CI.",
                                errorbar_facet(gv, "diff", "lo", "hi", "B - A", "group", true)));
    page.blocks.push_back(html_block("Per-group differences", fmt::format("compare_groups.csv (first {} rows).", gt.size()), table(g.header, gt)));
  }
}

// ------------------------------------------------------------------ sweep, plan

namespace {

/// One chart of a metric against a parameter: CI band, mean line and points; series by colour.
ojson metric_vs_param(const ojson& values, bool x_numeric, const std::string& xtitle, const std::string& ytitle, bool series,
                      const std::string& series_title, const ojson& extra_layers = ojson::array()) {
  const char* xt = x_numeric ? "quantitative" : "ordinal";
  ojson enc_x = field("x", xt, xtitle);
  ojson color = series ? field("series", "nominal", series_title) : ojson();
  auto with_color = [&](ojson enc) {
    if (series) enc["color"] = color;
    return enc;
  };
  ojson layer = ojson::array();
  layer.push_back({{"mark", {{"type", "area"}, {"opacity", 0.2}}},
                   {"encoding", with_color({{"x", enc_x}, {"y", field("band_lo", "quantitative", ytitle)}, {"y2", {{"field", "hi"}}}})}});
  layer.push_back({{"mark", {{"type", "line"}, {"point", true}}},
                   {"encoding", with_color({{"x", enc_x},
                                            {"y", field("mean", "quantitative", ytitle)},
                                            {"tooltip", {field("x", xt, xtitle), field("mean", "quantitative", "mean"),
                                                         field("lo", "quantitative", "ci95_low"), field("hi", "quantitative", "ci95_high")}}})}});
  for (const auto& l : extra_layers) layer.push_back(l);
  return {{"width", 560}, {"height", 240}, {"data", {{"values", values}}}, {"layer", layer}};
}

}  // namespace

void sweep_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "sweep_summary.csv";
  const Csv s = read_csv(f);
  const std::size_t c_point = s.need("point"), c_metric = s.need("metric"), c_mean = s.need("mean"), c_lo = s.need("ci95_low"),
                    c_hi = s.need("ci95_high");
  s.need("n");
  if (c_point != 0 || c_metric < 2)
    fail(f, fmt::format("header {}: expected point,<PATH columns>,metric,n,mean,std,ci95_low,ci95_high with at least one PATH column",
                        esc(s.join_header())));
  std::vector<std::string> params(s.header.begin() + 1, s.header.begin() + std::ptrdiff_t(c_metric));
  bool x_numeric = true;
  for (std::size_t r = 0; r < s.rows.size(); ++r)
    if (!parse_double(s.rows[r][1])) x_numeric = false;
  std::vector<std::string> metrics;
  std::map<std::string, ojson> values;
  for (std::size_t r = 0; r < s.rows.size(); ++r) {
    const std::string& m = s.rows[r][c_metric];
    if (!values.count(m)) {
      metrics.push_back(m);
      values[m] = ojson::array();
    }
    std::string series;
    for (std::size_t p = 1; p < params.size(); ++p) series += (series.empty() ? "" : ", ") + params[p] + "=" + s.rows[r][1 + p];
    const auto mean = s.number(r, c_mean, true);
    if (!mean) continue;
    ojson x = x_numeric ? ojson(*parse_double(s.rows[r][1])) : ojson(s.rows[r][1]);
    const double lo = s.number(r, c_lo, true).value_or(*mean);
    values[m].push_back({{"x", x}, {"series", series}, {"mean", *mean}, {"lo", lo}, {"band_lo", band_low(lo, *mean)},
                         {"hi", s.number(r, c_hi, true).value_or(*mean)}});
  }
  page.title = "schedsim sweep: " + dir.filename().string();
  std::string ps;
  for (const auto& p : params) ps += (ps.empty() ? "" : ", ") + p;
  page.subtitle = fmt::format("Folder {}: {} metrics over {} (mean over seeds with the 95 % confidence band).", dir.string(),
                              metrics.size(), ps);
  if (metrics.empty()) page.blocks.push_back(note("No rows", "sweep_summary.csv has a header but no rows."));
  for (const auto& m : metrics)
    page.blocks.push_back(chart(m, fmt::format("sweep_summary.csv: {} against {}{}.", m, params[0],
                                               params.size() > 1 ? ", one colour per value of the other parameters" : ""),
                                metric_vs_param(values[m], x_numeric, params[0], m, params.size() > 1, "other parameters")));
}

namespace {

struct Slo {
  std::string metric, op;
  double value = 0;
  std::string text;
};

/// plan.json `slos` entries: "METRIC<=VALUE" strings or {"metric", "op", "value"|"threshold"} objects.
std::vector<Slo> parse_slos(const fs::path& f, const ojson& plan) {
  std::vector<Slo> out;
  if (!plan.contains("slos")) return out;
  const ojson& slos = plan["slos"];
  if (!slos.is_array()) fail_json(f, "slos", &slos, "must be an array");
  for (std::size_t i = 0; i < slos.size(); ++i) {
    const ojson& s = slos[i];
    const std::string path = fmt::format("slos[{}]", i);
    Slo slo;
    if (s.is_string()) {
      const std::string t = s.get<std::string>();
      std::size_t k = t.find_first_of("<>");
      if (k == std::string::npos || k == 0) fail_json(f, path, &s, "must be METRIC<=VALUE (or <, >=, >)");
      slo.metric = t.substr(0, k);
      slo.op = t.substr(k, k + 1 < t.size() && t[k + 1] == '=' ? 2 : 1);
      auto v = parse_double(t.substr(k + slo.op.size()));
      if (!v) fail_json(f, path, &s, "must be METRIC<=VALUE (or <, >=, >) with a number");
      slo.value = *v;
    } else if (s.is_object()) {
      const ojson& m = member(f, s, path, "metric");
      if (!m.is_string()) fail_json(f, path + ".metric", &m, "must be a string");
      slo.metric = m.get<std::string>();
      const char* vk = s.contains("value") ? "value" : "threshold";
      slo.value = *jnum(f, member(f, s, path, vk), path + "." + vk);
      const char* ok = s.contains("op") ? "op" : "operator";
      if (s.contains(ok) && s[ok].is_string()) slo.op = s[ok].get<std::string>();
    } else {
      fail_json(f, path, &s, "must be a string METRIC<=VALUE or an object");
    }
    slo.text = slo.metric + " " + slo.op + " " + fmt::format("{}", slo.value);
    out.push_back(std::move(slo));
  }
  return out;
}

}  // namespace

void plan_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "plan.json";
  const ojson plan = read_json(f);
  if (!plan.is_object()) fail_json(f, "(top level)", &plan, "must be an object (plan.json of schedsim plan)");
  if (plan.contains("minimize")) return plan_front_page(dir, plan, page);
  const ojson& path = member(f, plan, "", "path");
  if (!path.is_string()) fail_json(f, "path", &path, "must be a string");
  const ojson& answer = member(f, plan, "", "answer");
  const ojson& met = member(f, plan, "", "met");
  if (!met.is_boolean()) fail_json(f, "met", &met, "must be true or false");
  const ojson& points = member(f, plan, "", "points");
  if (!points.is_array()) fail_json(f, "points", &points, "must be an array");
  const auto slos = parse_slos(f, plan);
  bool x_numeric = true;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].is_object()) fail_json(f, fmt::format("points[{}]", i), &points[i], "must be an object");
    if (!member(f, points[i], fmt::format("points[{}]", i), "value").is_number()) x_numeric = false;
  }
  std::vector<std::string> metrics;
  std::map<std::string, ojson> values;
  std::vector<std::vector<std::string>> t;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string pp = fmt::format("points[{}]", i);
    const ojson& p = points[i];
    const ojson& v = p["value"];
    const ojson& pmet = member(f, p, pp, "met");
    if (!pmet.is_boolean()) fail_json(f, pp + ".met", &pmet, "must be true or false");
    const auto rows = metric_object(f, member(f, p, pp, "metrics"), pp + ".metrics", {"mean", "std", "ci95_low", "ci95_high", "n"});
    std::vector<std::string> cells{v.is_string() ? v.get<std::string>() : v.dump(), pmet.get<bool>() ? "yes" : "no"};
    for (const auto& r : rows) {
      if (!values.count(r.metric)) {
        metrics.push_back(r.metric);
        values[r.metric] = ojson::array();
      }
      if (!r.v.at("mean")) continue;
      const double mean = *r.v.at("mean");
      values[r.metric].push_back({{"x", v},
                                  {"series", pmet.get<bool>() ? "meets the SLOs" : "misses the SLOs"},
                                  {"mean", mean},
                                  {"lo", r.v.at("ci95_low").value_or(mean)},
                                  {"band_lo", band_low(r.v.at("ci95_low").value_or(mean), mean)},
                                  {"hi", r.v.at("ci95_high").value_or(mean)}});
      for (const auto& s : slos)
        if (s.metric == r.metric)
          cells.push_back(fmt::format("{} [{}, {}]", metric_text(r.metric, mean), metric_text(r.metric, r.v.at("ci95_low")),
                                      metric_text(r.metric, r.v.at("ci95_high"))));
    }
    t.push_back(std::move(cells));
  }
  const std::string ans = answer.is_null() ? "none (not met at the highest value)" : (answer.is_string() ? answer.get<std::string>() : answer.dump());
  std::string slo_text;
  for (const auto& s : slos) slo_text += (slo_text.empty() ? "" : "; ") + s.text;
  page.title = "schedsim plan: " + path.get<std::string>();
  page.subtitle = fmt::format("Folder {}: the smallest {} meeting {}: {}{}.", dir.string(), path.get<std::string>(),
                              slo_text.empty() ? "the SLOs" : slo_text, ans,
                              plan.contains("monotone") && plan["monotone"].is_boolean() && !plan["monotone"].get<bool>()
                                  ? " (warning: the evaluated points are not monotone; see docs/report.md)"
                                  : "");
  std::vector<std::string> head{"value", "meets the SLOs"};
  for (const auto& s : slos) head.push_back(s.metric + " mean [95 % CI]");
  // Metrics with an SLO first, the others after, each in first-seen order.
  std::stable_sort(metrics.begin(), metrics.end(), [&](const std::string& a, const std::string& b) {
    auto has = [&](const std::string& m) { return std::any_of(slos.begin(), slos.end(), [&](const Slo& s) { return s.metric == m; }); };
    return has(a) && !has(b);
  });
  for (const auto& m : metrics) {
    ojson extra = ojson::array();
    for (const auto& s : slos)
      if (s.metric == m)
        extra.push_back({{"data", {{"values", {{{"y", s.value}, {"label", "SLO " + s.text}}}}}},
                         {"layer",
                          {{{"mark", {{"type", "rule"}, {"color", "firebrick"}, {"strokeDash", {6, 4}}}},
                            {"encoding", {{"y", field("y", "quantitative", m)}}}},
                           {{"mark", {{"type", "text"}, {"align", "left"}, {"dy", -6}, {"color", "firebrick"}}},
                            {"encoding", {{"y", field("y", "quantitative", m)}, {"text", {{"field", "label"}}}, {"x", {{"value", 4}}}}}}}}});
    if (!answer.is_null())
      extra.push_back({{"data", {{"values", {{{"x", answer}, {"label", "answer " + ans}}}}}},
                       {"layer",
                        {{{"mark", {{"type", "rule"}, {"color", "seagreen"}, {"size", 2}}},
                          {"encoding", {{"x", field("x", x_numeric ? "quantitative" : "ordinal", path.get<std::string>())}}}},
                         {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"baseline", "top"}, {"color", "seagreen"}}},
                          {"encoding", {{"x", field("x", x_numeric ? "quantitative" : "ordinal", path.get<std::string>())},
                                        {"text", {{"field", "label"}}}, {"y", {{"value", 4}}}}}}}}});
    page.blocks.push_back(chart(m,
                                fmt::format("plan.json: {} against {} (mean over seeds, 95 % band; points coloured by whether "
                                            "the value meets every SLO){}.",
                                            m, path.get<std::string>(),
                                            std::any_of(slos.begin(), slos.end(), [&](const Slo& s) { return s.metric == m; })
                                                ? "; dashed red line: the SLO threshold; green line: the answer"
                                                : "; green line: the answer"),
                                metric_vs_param(values[m], x_numeric, path.get<std::string>(), m, true, "point", extra)));
  }
  page.blocks.push_back(html_block("Evaluated points", "plan.json points.", table(head, t)));
}

}  // namespace sim::report_detail
