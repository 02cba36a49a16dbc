// `schedsim report`: the page of a `plan --minimize` folder: the Pareto front of the minimized
// metric against each SLO metric (plan.json), the SLO line and the answer marked.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/outputs/report_detail.hpp"

namespace sim::report_detail {

namespace {

/// One point of a minimize plan.json: its values as text, whether it met the SLOs, its means.
struct FrontPoint {
  std::string label;
  std::vector<std::string> cells;  // the values, one per path
  bool met = false;
  std::map<std::string, double> mean;
};

/// One objective: a metric's mean, lower or higher is better.
struct FrontObjective {
  std::string metric;
  bool lower = true;
  std::optional<double> slo;  // the threshold of its first SLO
  std::string slo_text;
};

bool front_dominates(const FrontPoint& q, const FrontPoint& p, const std::vector<FrontObjective>& obj) {
  bool better = false;
  for (const auto& o : obj) {
    const auto qi = q.mean.find(o.metric), pi = p.mean.find(o.metric);
    if (qi == q.mean.end() || pi == p.mean.end()) return false;
    if (o.lower ? qi->second > pi->second : qi->second < pi->second) return false;
    better = better || qi->second != pi->second;
  }
  return better;
}

std::string front_value_text(const ojson& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

void plan_front_page(const fs::path& dir, const ojson& plan, Page& page) {
  const fs::path f = dir / "plan.json";
  const ojson& jm = member(f, plan, "", "minimize");
  if (!jm.is_string()) fail_json(f, "minimize", &jm, "must be a string");
  const std::string metric = jm.get<std::string>();
  const ojson& paths = member(f, plan, "", "paths");
  if (!paths.is_array() || paths.empty()) fail_json(f, "paths", &paths, "must be a non-empty array of strings");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!paths[i].is_string()) fail_json(f, fmt::format("paths[{}]", i), &paths[i], "must be a string");
    names.push_back(paths[i].get<std::string>());
  }
  const ojson& answer = member(f, plan, "", "answer");
  if (!answer.is_null() && !answer.is_object()) fail_json(f, "answer", &answer, "must be null or an object PATH: VALUE");
  std::vector<FrontObjective> obj{{metric, true, std::nullopt, ""}};
  const ojson& slos = member(f, plan, "", "slos");
  if (!slos.is_array()) fail_json(f, "slos", &slos, "must be an array");
  for (std::size_t i = 0; i < slos.size(); ++i) {
    const std::string sp = fmt::format("slos[{}]", i);
    if (!slos[i].is_object()) fail_json(f, sp, &slos[i], "must be an object {\"metric\", \"op\", \"value\"}");
    const ojson& m = member(f, slos[i], sp, "metric");
    const ojson& op = member(f, slos[i], sp, "op");
    if (!m.is_string()) fail_json(f, sp + ".metric", &m, "must be a string");
    if (!op.is_string()) fail_json(f, sp + ".op", &op, "must be a string");
    const double v = *jnum(f, member(f, slos[i], sp, "value"), sp + ".value");
    const std::string ms = m.get<std::string>(), ops = op.get<std::string>();
    if (std::none_of(obj.begin(), obj.end(), [&](const FrontObjective& o) { return o.metric == ms; }))
      obj.push_back({ms, ops == "<=" || ops == "<", v, fmt::format("{} {} {}", ms, ops, v)});
  }
  const ojson& points = member(f, plan, "", "points");
  if (!points.is_array()) fail_json(f, "points", &points, "must be an array");
  std::vector<FrontPoint> pts;
  std::optional<std::size_t> ans;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string pp = fmt::format("points[{}]", i);
    const ojson& p = points[i];
    if (!p.is_object()) fail_json(f, pp, &p, "must be an object");
    const ojson& vals = member(f, p, pp, "values");
    if (!vals.is_object()) fail_json(f, pp + ".values", &vals, "must be an object PATH: VALUE");
    FrontPoint fp;
    for (const auto& n : names) {
      const ojson& v = member(f, vals, pp + ".values", n.c_str());
      fp.cells.push_back(front_value_text(v));
      fp.label += (fp.label.empty() ? "" : ", ") + n + "=" + fp.cells.back();
    }
    const ojson& met = member(f, p, pp, "met");
    if (!met.is_boolean()) fail_json(f, pp + ".met", &met, "must be true or false");
    fp.met = met.get<bool>();
    for (const auto& r : metric_object(f, member(f, p, pp, "metrics"), pp + ".metrics", {"mean", "std", "ci95_low", "ci95_high", "n"}))
      if (r.v.at("mean")) fp.mean[r.metric] = *r.v.at("mean");
    if (answer.is_object() && vals == answer) ans = pts.size();
    pts.push_back(std::move(fp));
  }
  std::vector<bool> front(pts.size(), true);
  for (std::size_t p = 0; p < pts.size(); ++p)
    for (std::size_t q = 0; q < pts.size() && front[p]; ++q) front[p] = q == p || !front_dominates(pts[q], pts[p], obj);

  const std::string ans_text = ans ? pts[*ans].label : "none (no point meets every SLO)";
  page.title = "schedsim plan: minimize " + metric;
  page.subtitle = fmt::format("Folder {}: the point with the smallest mean {} meeting every SLO: {}{}.", dir.string(), metric, ans_text,
                              ans && pts[*ans].mean.count(metric) ? fmt::format(" ({} {})", metric, pts[*ans].mean.at(metric)) : "");
  for (std::size_t o = 1; o < obj.size(); ++o) {
    const std::string& m = obj[o].metric;
    ojson values = ojson::array(), line = ojson::array();
    for (std::size_t p = 0; p < pts.size(); ++p) {
      if (!pts[p].mean.count(metric) || !pts[p].mean.count(m)) continue;
      const std::string series = std::string(front[p] ? "on the front, " : "") + (pts[p].met ? "meets the SLOs" : "misses the SLOs");
      values.push_back({{"x", pts[p].mean.at(metric)}, {"y", pts[p].mean.at(m)}, {"point", pts[p].label}, {"series", series}});
      if (front[p]) line.push_back({{"x", pts[p].mean.at(metric)}, {"y", pts[p].mean.at(m)}});
    }
    ojson layer = ojson::array();
    layer.push_back({{"data", {{"values", line}}},
                     {"mark", {{"type", "line"}, {"color", "gray"}, {"strokeDash", {2, 2}}}},
                     {"encoding", {{"x", field("x", "quantitative", metric)}, {"y", field("y", "quantitative", m)}, {"order", {{"field", "x"}}}}}});
    layer.push_back({{"data", {{"values", values}}},
                     {"mark", {{"type", "point"}, {"filled", true}, {"size", 60}}},
                     {"encoding", {{"x", field("x", "quantitative", metric + " (mean)")},
                                   {"y", field("y", "quantitative", m + " (mean)")},
                                   {"color", field("series", "nominal", "point")},
                                   {"tooltip", {field("point", "nominal", "point"), field("x", "quantitative", metric),
                                                field("y", "quantitative", m)}}}}});
    if (obj[o].slo)
      layer.push_back({{"data", {{"values", {{{"y", *obj[o].slo}, {"label", "SLO " + obj[o].slo_text}}}}}},
                       {"layer",
                        {{{"mark", {{"type", "rule"}, {"color", "firebrick"}, {"strokeDash", {6, 4}}}},
                          {"encoding", {{"y", field("y", "quantitative", m)}}}},
                         {{"mark", {{"type", "text"}, {"align", "left"}, {"dy", -6}, {"color", "firebrick"}}},
                          {"encoding", {{"y", field("y", "quantitative", m)}, {"text", {{"field", "label"}}}, {"x", {{"value", 4}}}}}}}}});
    if (ans && pts[*ans].mean.count(metric) && pts[*ans].mean.count(m))
      layer.push_back({{"data", {{"values", {{{"x", pts[*ans].mean.at(metric)}, {"y", pts[*ans].mean.at(m)}, {"label", "answer " + ans_text}}}}}},
                       {"layer",
                        {{{"mark", {{"type", "point"}, {"shape", "diamond"}, {"size", 220}, {"color", "seagreen"}, {"filled", false},
                                    {"strokeWidth", 2}}},
                          {"encoding", {{"x", field("x", "quantitative", metric)}, {"y", field("y", "quantitative", m)}}}},
                         {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 8}, {"dy", -8}, {"color", "seagreen"}}},
                          {"encoding", {{"x", field("x", "quantitative", metric)}, {"y", field("y", "quantitative", m)},
                                        {"text", {{"field", "label"}}}}}}}}});
    page.blocks.push_back(chart(fmt::format("{} against {}", m, metric),
                                fmt::format("plan.json: every evaluated point (means over seeds); the dotted line joins the Pareto "
                                            "front (pareto.csv); dashed red line: the SLO threshold; green diamond: the answer."),
                                {{"width", 560}, {"height", 300}, {"layer", layer}}));
  }
  std::vector<std::string> head = names;
  head.push_back("meets the SLOs");
  for (const auto& o : obj) head.push_back(o.metric + " mean");
  head.push_back("on the front");
  head.push_back("answer");
  std::vector<std::vector<std::string>> t;
  for (std::size_t p = 0; p < pts.size(); ++p) {
    std::vector<std::string> row = pts[p].cells;
    row.push_back(pts[p].met ? "yes" : "no");
    for (const auto& o : obj) row.push_back(pts[p].mean.count(o.metric) ? metric_text(o.metric, pts[p].mean.at(o.metric)) : "");
    row.push_back(front[p] ? "yes" : "no");
    row.push_back(ans == p ? "yes" : "");
    t.push_back(std::move(row));
  }
  page.blocks.push_back(html_block("Evaluated points", "plan.json points, in grid order.", table(head, t)));
}

}  // namespace sim::report_detail
