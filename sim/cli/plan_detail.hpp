// Internal to `schedsim plan` (not part of the public API): the grid of a plan, its evaluation
// and the helpers shared by plan_cli.cpp (option checks, bisection, --search exhaustive) and
// plan_minimize.cpp (--minimize, pareto.csv); may change any time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/multirun_cli.hpp"
#include "sim/cli/multirun_detail.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/outputs/publish.hpp"

namespace sim::plan_detail {

using ojson = nlohmann::ordered_json;

/// One evaluated point: the statistics of every scalar metric over the K seeds, and whether
/// every SLO is met with 95 % confidence (slo_met).
struct PlanEval {
  std::vector<std::pair<std::string, Stats>> metrics;
  bool met = false;
  /// The mean of `metric` over the seeds (0 when absent).
  double mean(const std::string& metric) const;
};

/// A plan's grid: the cartesian product of its --vary axes (first = slowest), one scenario
/// source per point (the --vary and --complement overrides applied), and the evaluations so far.
struct PlanGrid {
  std::vector<VaryAxis> axes;
  std::vector<Slo> slos;
  std::vector<ScenarioSource> srcs;             ///< one per point
  std::vector<std::vector<std::size_t>> index;  ///< per point: its index on each axis
  std::uint64_t s0 = 0;                         ///< first seed
  std::size_t k = 1;                            ///< seeds per point
  std::map<std::size_t, PlanEval> evals;        ///< point -> evaluation (each point run once)
  /// Group metrics (DIMENSION[KEY].METRIC) of --slo and --metric: appended to every run's
  /// metrics; their KEYs are checked against `group_keys` (the groups of every run so far).
  std::vector<multirun_detail::NamedMetric> group_metrics;
  std::map<std::string, std::set<std::string>> group_keys;

  /// `PATH=VALUE` of each axis at point p (with --zip: ` (PATH2=W, ...)` after it), joined by ", ".
  std::string label(std::size_t p) const;
};

/// Runs the points of `want` not evaluated yet (K seeds each) in one parallel batch, prints one
/// line per point (the SLO metrics' means and intervals, `ok` / `FAIL`) and stores the results
/// in g.evals. Returns nullopt, or the exit status of a failed run (2, 1, 130, 143).
std::optional<int> evaluate_points(PlanGrid& g, std::vector<std::size_t> want, const MultirunOptions& opts, std::ostream& out,
                                   std::ostream& err);

/// The value of axis `ax` at index i as plan.json writes it: an integer on an integer grid, a
/// number on a range, else the value read like a --set VALUE (JSON when valid, else a string).
ojson plan_value_json(const VaryAxis& ax, std::size_t i);

/// plan.json point entry `zip` (only with --zip): each zipped path's value at point p.
void plan_zip_json(const PlanGrid& g, std::size_t p, ojson& point);

/// The rest of plan.json's entry of point `p` after its value(s): `zip` (plan_zip_json), `met`
/// and `metrics` (every metric's stats_json, in the evaluation's order).
void plan_point_json(const PlanGrid& g, std::size_t p, const PlanEval& ev, ojson& point);

/// plan.json `slos`: [{"metric", "op", "value"}, ...].
ojson plan_slos_json(const std::vector<Slo>& slos);

/// `schedsim plan --minimize METRIC`: evaluates every point of `g` (no pruning: neither the
/// metric nor the SLOs are assumed monotone), answers the point with the smallest mean METRIC
/// among those meeting every SLO (ties: the first in grid order) and publishes DIR/plan.json
/// and DIR/pareto.csv through `od` (opened for both). Returns the exit status (0 also when no
/// point meets the SLOs).
int plan_minimize(PlanGrid& g, const std::string& metric, std::optional<OutputDir>& od, const MultirunOptions& opts,
                  std::ostream& out, std::ostream& err);

/// pareto.csv of evaluated points `points` (grid order): the points no other point dominates
/// on (mean METRIC, lower is better; each distinct SLO metric's mean, better in the direction
/// its SLO bounds: lower for `<=` / `<`, higher for `>=` / `>`). `answer`: the answer's point.
std::string pareto_csv(const PlanGrid& g, const std::string& metric, std::optional<std::size_t> answer);

}  // namespace sim::plan_detail
