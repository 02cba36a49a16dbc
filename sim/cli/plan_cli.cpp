// `schedsim plan`: the smallest value of a --vary range meeting every --slo (bisection), plan.json.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/multirun_cli.hpp"
#include "sim/cli/multirun_detail.hpp"
#include "sim/engine/interrupt.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/overrides.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

using namespace multirun_detail;

// ------------------------------------------------------------------ plan

int plan_command(const ScenarioSource& source, const PlanArgs& args, const MultirunOptions& opts, std::ostream& out,
                 std::ostream& err) {
  bool bad = false;
  std::string e;
  std::optional<VaryAxis> axis;
  {
    std::vector<GridOption> grid{{args.vary, false}};
    for (const auto& z : args.zip) grid.push_back({z, true});
    std::vector<VaryAxis> axes;
    if (!parse_grid(grid, kMaxPlanValues, axes, err)) bad = true;
    if (!axes.empty()) {  // only a --vary that parsed makes an axis
      axis = std::move(axes.front());
      if (!axis->range) {
        err << diag_line("--vary", args.vary, "plan needs a numeric range PATH=lo..hi[:step]") << "\n";
        bad = true;
      }
    }
  }
  std::set<std::string> seen;
  if (refuse_seed_overrides(source.overrides, seen, err)) bad = true;
  std::vector<NamedMetric> group_metrics;
  if (!parse_metric_options(opts.metrics, group_metrics, err)) bad = true;
  std::vector<Slo> slos;
  for (const auto& s : args.slos) {
    if (auto slo = parse_slo(s, e)) {
      if (!slo->ref.group_by.empty()) group_metrics.push_back(NamedMetric{"--slo", s, slo->ref});
      slos.push_back(std::move(*slo));
    } else {
      err << e << "\n";
      bad = true;
    }
  }
  if (args.slos.empty()) {
    err << "--slo: at least one --slo METRIC<=VALUE is required\n";
    bad = true;
  }
  std::string comp_path;
  double comp_total = 0;
  int comp_decimals = 0;
  if (args.complement) {
    const std::string_view c = *args.complement;
    const auto eq = path_value_split(c);
    const auto total = eq == std::string_view::npos || eq == 0 ? std::nullopt : parse_number(c.substr(eq + 1));
    if (!total) {
      err << diag_line("--complement", c, "expected PATH2=TOTAL with TOTAL a number") << "\n";
      bad = true;
    } else {
      comp_path = std::string(c.substr(0, eq));
      comp_total = *total;
      comp_decimals = decimals_of(c.substr(eq + 1));
      const bool zipped = axis && std::any_of(axis->zipped.begin(), axis->zipped.end(), [&](const VaryAxis& z) { return z.path == comp_path; });
      if (axis && comp_path == axis->path) {
        err << diag_line("--complement", c, "PATH2 is the --vary PATH") << "\n";
        bad = true;
      } else if (zipped) {
        err << diag_line("--complement", c, "PATH2 is a --zip PATH") << "\n";
        bad = true;
      } else if (comp_path == "seed") {
        err << diag_line("--complement", c, kSeedOverrideRule) << "\n";
        bad = true;
      }
    }
  }
  if (bad) return io::exit_invalid_input;

  const std::size_t n = axis->values.size();
  std::vector<ScenarioSource> srcs(n, source);
  const bool int_grid = std::all_of(axis->values.begin(), axis->values.end(), [](const std::string& v) { return is_integer_text(v); });
  // An integer grid and an integer TOTAL: the rest is exact (int64, overflow refused).
  std::optional<std::int64_t> comp_int;
  if (!comp_path.empty() && !axis->integers.empty()) {
    const std::string total_t = args.complement->substr(path_value_split(*args.complement) + 1);  // owned: not a view of a temporary
    if (is_integer_text(total_t)) {
      comp_int = parse_int64(total_t);
      bool fits = comp_int.has_value();
      for (std::size_t i = 0; fits && i < n; ++i) {
        std::int64_t rest = 0;
        fits = !__builtin_sub_overflow(*comp_int, axis->integers[i], &rest);
      }
      if (!fits) {
        err << diag_line("--complement", *args.complement,
                         "TOTAL - value is out of range: integers go from -9223372036854775808 to 9223372036854775807")
            << "\n";
        return io::exit_invalid_input;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    srcs[i].overrides.push_back(io::make_override("--vary", axis->path, axis->values[i]));
    for (const auto& z : axis->zipped) srcs[i].overrides.push_back(io::make_override("--zip", z.path, z.values[i]));
    if (comp_int) {
      srcs[i].overrides.push_back(io::make_override("--complement", comp_path, std::to_string(*comp_int - axis->integers[i])));
    } else if (!comp_path.empty()) {
      double rest = comp_total - axis->numbers[i];
      int d = comp_decimals;
      for (const auto& v : axis->values) d = std::max(d, decimals_of(v));
      rest = round_to(rest, d);
      srcs[i].overrides.push_back(io::make_override("--complement", comp_path, num(rest)));
    }
  }
  std::optional<std::uint64_t> point0_seed;
  if (!validate_points(srcs, source.seed, err, &point0_seed)) return io::exit_invalid_input;
  const auto s0 = first_seed(source.seed, point0_seed.value_or(0), opts.seeds, err);
  if (!s0) return io::exit_invalid_input;
  const std::size_t k = std::size_t(opts.seeds);
  if (k == 1) err << "schedsim plan: note: one seed: every interval has width 0 (use --seeds 5 or more)\n";

  InterruptGuard interrupts;
  std::optional<OutputDir> od;
  if (int rc = open_out("plan", opts.out_dir, {"plan.json"}, od, err)) return rc;

  struct Eval {
    std::vector<std::pair<std::string, Stats>> metrics;
    bool met = false;
  };
  std::map<std::size_t, Eval> evals;  // grid index -> evaluation
  std::map<std::string, std::set<std::string>> group_keys;  // the groups of every run so far
  // "PATH=V" and, with --zip, " (PATH2=W, ...)": grid value i as the printed lines show it.
  auto point_text = [&](std::size_t i) {
    std::string t = axis->path + "=" + axis->values[i];
    for (std::size_t z = 0; z < axis->zipped.size(); ++z)
      t += fmt::format("{}{}={}{}", z ? ", " : " (", axis->zipped[z].path, axis->zipped[z].values[i], z + 1 == axis->zipped.size() ? ")" : "");
    return t;
  };
  const bool tty = opts.progress && ::isatty(STDERR_FILENO) == 1;
  out << fmt::format("schedsim plan: {} in [{}, {}] ({} values), {} seed{} ({} .. {}) per value\n", axis->path, axis->values.front(),
                     axis->values.back(), n, k, k == 1 ? "" : "s", *s0, *s0 + k - 1);
  // Evaluates the grid indices `want` (those not evaluated yet) in one parallel batch.
  auto evaluate = [&](std::vector<std::size_t> want) -> std::optional<int> {
    want.erase(std::remove_if(want.begin(), want.end(), [&](std::size_t i) { return evals.count(i) > 0; }), want.end());
    if (want.empty()) return std::nullopt;
    std::vector<std::pair<const ScenarioSource*, std::uint64_t>> runs;
    for (std::size_t i : want)
      for (std::size_t s = 0; s < k; ++s) runs.emplace_back(&srcs[i], *s0 + s);
    std::string label = "schedsim plan: " + axis->path + "=" + axis->values[want[0]];
    for (std::size_t j = 1; j < want.size(); ++j) label += "," + axis->values[want[j]];
    Progress progress(err, tty, label, runs.size());
    std::vector<RunMetrics> res;
    const auto rc = run_all("plan", runs, res, opts.jobs, progress.callback(), err);
    progress.end();
    if (rc) return rc;
    collect_group_keys(res, group_keys);
    append_group_metrics(res, group_metrics);
    for (std::size_t j = 0; j < want.size(); ++j) {
      Eval ev;
      ev.met = true;
      for (const auto& m : metric_order(res)) ev.metrics.emplace_back(m, summarize(column(res, j * k, j * k + k, m)));
      std::string line = fmt::format("  {}:", point_text(want[j]));
      for (const auto& slo : slos) {
        bool ok = false;
        for (const auto& [m, s] : ev.metrics)
          if (m == slo.metric) {
            ok = slo_met(slo, s.ci95_low, s.ci95_high);
            line += fmt::format(" {} mean {} [{}, {}] {}", m, short_num(s.mean), short_num(s.ci95_low), short_num(s.ci95_high),
                                ok ? "ok" : "FAIL");
          }
        ev.met = ev.met && ok;
      }
      out << line << (ev.met ? "  -> meets every SLO\n" : "  -> not met\n");
      evals[want[j]] = std::move(ev);
    }
    return std::nullopt;
  };

  // Bisection, assuming "more is better": the smallest index meeting every SLO.
  std::optional<std::size_t> answer;
  if (auto rc = evaluate({n - 1})) return *rc;
  if (evals[n - 1].met) {
    std::ptrdiff_t lo = -1, hi = std::ptrdiff_t(n - 1);  // lo fails (or is below the grid), hi meets
    while (hi - lo > 1) {
      const std::ptrdiff_t mid = lo + (hi - lo) / 2;
      if (auto rc = evaluate({std::size_t(mid)})) return *rc;
      (evals[std::size_t(mid)].met ? hi : lo) = mid;
    }
    answer = std::size_t(hi);
    std::vector<std::size_t> below;  // the two grid values below the answer
    for (std::size_t d = 1; d <= 2 && d <= *answer; ++d) below.push_back(*answer - d);
    if (auto rc = evaluate(below)) return *rc;
  }
  // Monotone: sorted by value, the evaluated points fail, then meet (never meet, then fail).
  bool monotone = true;
  bool seen_met = false;
  std::vector<std::string> smaller_met;
  for (const auto& [i, ev] : evals) {
    if (seen_met && !ev.met) monotone = false;
    seen_met = seen_met || ev.met;
    if (answer && i < *answer && ev.met) smaller_met.push_back(axis->values[i]);
  }
  if (!smaller_met.empty()) monotone = false;

  auto value_json = [&](std::size_t i) -> ojson {
    if (!axis->integers.empty()) return axis->integers[i];
    if (int_grid) return std::int64_t(axis->numbers[i]);
    return axis->numbers[i];
  };
  if (!check_group_keys(group_keys, group_metrics, err)) return io::exit_invalid_input;
  ojson plan;
  plan["path"] = axis->path;
  plan["answer"] = answer ? value_json(*answer) : ojson(nullptr);
  plan["met"] = answer.has_value();
  plan["monotone"] = monotone;
  ojson jslos = ojson::array();
  for (const auto& s : slos) jslos.push_back(ojson{{"metric", s.metric}, {"op", s.op}, {"value", s.value}});
  plan["slos"] = jslos;
  ojson pts = ojson::array();
  for (const auto& [i, ev] : evals) {
    ojson p;
    p["value"] = value_json(i);
    for (const auto& z : axis->zipped) {  // only with --zip: the zipped paths' values at this point
      const ojson v = ojson::parse(z.values[i], nullptr, false);
      p["zip"][z.path] = v.is_discarded() ? ojson(z.values[i]) : v;
    }
    p["met"] = ev.met;
    ojson ms = ojson::object();
    for (const auto& [m, s] : ev.metrics) ms[m] = stats_json(s);
    p["metrics"] = ms;
    pts.push_back(p);
  }
  plan["points"] = pts;
  if (int prc = publish_files("plan", od, {{"plan.json", plan.dump(2) + "\n"}}, err)) return prc;
  if (!monotone) {
    std::string list;
    for (const auto& v : smaller_met) list += (list.empty() ? "" : ", ") + v;
    const std::string why = smaller_met.empty()
                                ? "a smaller evaluated value meets every SLO while a larger one does not"
                                : fmt::format("{} below the answer also meet{} every SLO", list, smaller_met.size() == 1 ? "s" : "");
    err << fmt::format("schedsim plan: warning: the SLOs are not monotone in {} ({}); the answer is the bisection's, check "
                       "plan.json's points\n",
                       axis->path, why);
  }
  out << fmt::format("  outputs in {}\n", opts.out_dir);
  if (answer)
    out << fmt::format("answer: {}\n", point_text(*answer));
  else
    out << fmt::format("answer: not met: no value of {} in [{}, {}] meets every SLO\n", axis->path, axis->values.front(),
                       axis->values.back());
  return 0;
}

}  // namespace sim
