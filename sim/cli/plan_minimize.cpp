// `schedsim plan --minimize METRIC`: the point of a --vary grid with the smallest mean METRIC
// among those meeting every --slo, plan.json and pareto.csv (docs/planning.md).
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/multirun_cli.hpp"
#include "sim/cli/multirun_detail.hpp"
#include "sim/cli/plan_detail.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/outputs/publish.hpp"

namespace sim::plan_detail {

using multirun_detail::num;
using multirun_detail::publish_files;
using multirun_detail::short_num;
using multirun_detail::stats_json;

namespace {

/// One objective of the Pareto front: a metric's mean, lower or higher is better.
struct ParetoObjective {
  std::string metric;
  bool lower_is_better = true;
};

/// METRIC (lower is better), then each SLO metric once (in SLO order, the direction of its
/// first SLO: lower for `<=` / `<`, higher for `>=` / `>`), METRIC itself not repeated.
std::vector<ParetoObjective> pareto_objectives(const PlanGrid& g, const std::string& metric) {
  std::vector<ParetoObjective> obj{{metric, true}};
  for (const auto& s : g.slos) {
    bool known = false;
    for (const auto& o : obj) known = known || o.metric == s.metric;
    if (!known) obj.push_back({s.metric, s.op == "<=" || s.op == "<"});
  }
  return obj;
}

/// Whether point q dominates point p: at least as good on every objective, better on one.
bool pareto_dominates(const PlanEval& q, const PlanEval& p, const std::vector<ParetoObjective>& obj) {
  bool better = false;
  for (const auto& o : obj) {
    const double a = q.mean(o.metric), b = p.mean(o.metric);
    if (o.lower_is_better ? a > b : a < b) return false;
    better = better || a != b;
  }
  return better;
}

}  // namespace

std::string pareto_csv(const PlanGrid& g, const std::string& metric, std::optional<std::size_t> answer) {
  const auto obj = pareto_objectives(g, metric);
  std::string csv;
  for (const auto& ax : g.axes) (csv += csv_cell(ax.path)) += ',';
  for (const auto& o : obj) (csv += csv_cell(o.metric)) += ',';
  csv += "met,answer\n";
  for (const auto& [p, ev] : g.evals) {
    bool front = true;
    for (const auto& [q, other] : g.evals) front = front && (q == p || !pareto_dominates(other, ev, obj));
    if (!front) continue;
    for (std::size_t a = 0; a < g.axes.size(); ++a) (csv += csv_cell(g.axes[a].values[g.index[p][a]])) += ',';
    for (const auto& o : obj) (csv += num(ev.mean(o.metric))) += ',';
    csv += fmt::format("{},{}\n", ev.met, answer == p);
  }
  return csv;
}

int plan_minimize(PlanGrid& g, const std::string& metric, std::optional<OutputDir>& od, const MultirunOptions& opts,
                  std::ostream& out, std::ostream& err) {
  // Every point: neither METRIC nor the SLO metrics are assumed monotone in any PATH (a larger
  // quota can raise a cost and lower a wait at once), so no point can be skipped safely.
  std::vector<std::size_t> all(g.srcs.size());
  for (std::size_t p = 0; p < all.size(); ++p) all[p] = p;
  if (auto rc = evaluate_points(g, all, opts, out, err)) return *rc;
  std::optional<std::size_t> answer;
  for (const auto& [p, ev] : g.evals)
    if (ev.met && (!answer || ev.mean(metric) < g.evals.at(*answer).mean(metric))) answer = p;

  if (!multirun_detail::check_group_keys(g.group_keys, g.group_metrics, err)) return io::exit_invalid_input;
  ojson plan;
  plan["minimize"] = metric;
  plan["search"] = "exhaustive";
  ojson paths = ojson::array();
  for (const auto& ax : g.axes) paths.push_back(ax.path);
  plan["paths"] = paths;
  const auto values_json = [&](std::size_t p) {
    ojson v = ojson::object();
    for (std::size_t a = 0; a < g.axes.size(); ++a) v[g.axes[a].path] = plan_value_json(g.axes[a], g.index[p][a]);
    return v;
  };
  plan["answer"] = answer ? values_json(*answer) : ojson(nullptr);
  plan["answer_mean"] = answer ? ojson(g.evals.at(*answer).mean(metric)) : ojson(nullptr);
  plan["met"] = answer.has_value();
  plan["slos"] = plan_slos_json(g.slos);
  ojson pts = ojson::array();
  for (const auto& [p, ev] : g.evals) {
    ojson jp;
    jp["values"] = values_json(p);
    plan_point_json(g, p, ev, jp);
    pts.push_back(jp);
  }
  plan["points"] = pts;
  if (int prc = publish_files("plan", od, {{"plan.json", plan.dump(2) + "\n"}, {"pareto.csv", pareto_csv(g, metric, answer)}}, err))
    return prc;
  out << fmt::format("  outputs in {}\n", opts.out_dir);
  if (answer)
    out << fmt::format("answer: {} ({} mean {})\n", g.label(*answer), metric, short_num(g.evals.at(*answer).mean(metric)));
  else
    out << fmt::format("answer: not met: no point of the grid ({} points) meets every SLO\n", g.srcs.size());
  return 0;
}

}  // namespace sim::plan_detail
