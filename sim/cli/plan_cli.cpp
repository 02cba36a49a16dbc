// `schedsim plan`: the smallest value of a --vary range meeting every --slo (bisection, or every
// value with --search exhaustive), or with --minimize METRIC the cheapest point of a grid meeting
// them (plan_minimize.cpp); plan.json (docs/planning.md).
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
#include "sim/cli/plan_detail.hpp"
#include "sim/engine/interrupt.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/overrides.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

using namespace multirun_detail;

namespace plan_detail {

double PlanEval::mean(const std::string& metric) const {
  for (const auto& [m, s] : metrics)
    if (m == metric) return s.mean;
  return 0.0;
}

std::string PlanGrid::label(std::size_t p) const {
  std::string s;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const std::size_t i = index[p][a];
    s += fmt::format("{}{}={}", a ? ", " : "", axes[a].path, axes[a].values[i]);
    const auto& zipped = axes[a].zipped;
    for (std::size_t z = 0; z < zipped.size(); ++z)
      s += fmt::format("{}{}={}{}", z ? ", " : " (", zipped[z].path, zipped[z].values[i], z + 1 == zipped.size() ? ")" : "");
  }
  return s;
}

std::optional<int> evaluate_points(PlanGrid& g, std::vector<std::size_t> want, const MultirunOptions& opts, std::ostream& out,
                                   std::ostream& err) {
  want.erase(std::remove_if(want.begin(), want.end(), [&](std::size_t i) { return g.evals.count(i) > 0; }), want.end());
  if (want.empty()) return std::nullopt;
  const std::size_t k = g.k;
  std::vector<std::pair<const ScenarioSource*, std::uint64_t>> runs;
  for (std::size_t i : want)
    for (std::size_t s = 0; s < k; ++s) runs.emplace_back(&g.srcs[i], g.s0 + s);
  std::string label = "schedsim plan: " + g.label(want[0]);
  if (want.size() > 1) label += fmt::format(" and {} more point{}", want.size() - 1, want.size() == 2 ? "" : "s");
  const bool tty = opts.progress && ::isatty(STDERR_FILENO) == 1;
  Progress progress(err, tty, label, runs.size());
  std::vector<RunMetrics> res;
  const auto rc = run_all("plan", runs, res, opts.jobs, progress.callback(), err);
  progress.end();
  if (rc) return rc;
  collect_group_keys(res, g.group_keys);
  append_group_metrics(res, g.group_metrics);
  for (std::size_t j = 0; j < want.size(); ++j) {
    PlanEval ev;
    ev.met = true;
    for (const auto& m : metric_order(res)) ev.metrics.emplace_back(m, summarize(column(res, j * k, j * k + k, m)));
    std::string line = fmt::format("  {}:", g.label(want[j]));
    for (const auto& slo : g.slos) {
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
    g.evals[want[j]] = std::move(ev);
  }
  return std::nullopt;
}

ojson plan_value_json(const VaryAxis& ax, std::size_t i) {
  if (!ax.integers.empty()) return ax.integers[i];
  if (ax.range) {
    if (std::all_of(ax.values.begin(), ax.values.end(), [](const std::string& v) { return is_integer_text(v); }))
      return std::int64_t(ax.numbers[i]);
    return ax.numbers[i];
  }
  ojson v = ojson::parse(ax.values[i], nullptr, false);
  return v.is_discarded() ? ojson(ax.values[i]) : v;
}

void plan_zip_json(const PlanGrid& g, std::size_t p, ojson& point) {
  for (std::size_t a = 0; a < g.axes.size(); ++a)
    for (const auto& z : g.axes[a].zipped) {
      const std::string& text = z.values[g.index[p][a]];
      const ojson v = ojson::parse(text, nullptr, false);
      point["zip"][z.path] = v.is_discarded() ? ojson(text) : v;
    }
}

void plan_point_json(const PlanGrid& g, std::size_t p, const PlanEval& ev, ojson& point) {
  plan_zip_json(g, p, point);
  point["met"] = ev.met;
  ojson ms = ojson::object();
  for (const auto& [m, s] : ev.metrics) ms[m] = stats_json(s);
  point["metrics"] = ms;
}

ojson plan_slos_json(const std::vector<Slo>& slos) {
  ojson jslos = ojson::array();
  for (const auto& s : slos) jslos.push_back(ojson{{"metric", s.metric}, {"op", s.op}, {"value", s.value}});
  return jslos;
}

}  // namespace plan_detail

using namespace plan_detail;

namespace {

/// The values of `ax` as numbers (a range's, or each listed value read as a number); nullopt
/// when one is not a number.
std::optional<std::vector<double>> plan_axis_numbers(const VaryAxis& ax) {
  if (ax.range) return ax.numbers;
  std::vector<double> v;
  for (const auto& t : ax.values) {
    const auto x = parse_number(t);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  return v;
}

/// Adds the --complement override (PATH2 = TOTAL - the sum of the point's varied values) to
/// every point of `g`. Exact in int64 when TOTAL and every value are written as integers (an
/// overflow is exit 2), else rounded to the most decimals written. Returns false (diagnostic
/// printed) on an error.
bool plan_add_complement(PlanGrid& g, const std::string& arg, std::ostream& err) {
  const auto eq = path_value_split(arg);
  const std::string path = arg.substr(0, eq);
  const std::string total_t = arg.substr(eq + 1);
  std::vector<std::vector<double>> numbers;
  for (const auto& ax : g.axes) {
    auto n = plan_axis_numbers(ax);
    if (!n) {
      err << diag_line("--complement", arg,
                       fmt::format("every --vary needs numeric values (PATH2 = TOTAL - the sum of the varied values); --vary {} has `{}`",
                                   ax.path, *std::find_if(ax.values.begin(), ax.values.end(),
                                                          [](const std::string& v) { return !parse_number(v); })))
          << "\n";
      return false;
    }
    numbers.push_back(std::move(*n));
  }
  bool ints = is_integer_text(total_t);
  for (const auto& ax : g.axes)
    ints = ints && std::all_of(ax.values.begin(), ax.values.end(), [](const std::string& v) { return is_integer_text(v); });
  const auto total_int = ints ? parse_int64(total_t) : std::nullopt;
  int decimals = decimals_of(total_t);
  for (const auto& ax : g.axes)
    for (const auto& v : ax.values) decimals = std::max(decimals, decimals_of(v));
  for (std::size_t p = 0; p < g.srcs.size(); ++p) {
    std::string value;
    if (ints) {
      bool fits = total_int.has_value();
      std::int64_t rest = fits ? *total_int : 0;
      for (std::size_t a = 0; fits && a < g.axes.size(); ++a) {
        const auto x = parse_int64(g.axes[a].values[g.index[p][a]]);
        fits = x && !__builtin_sub_overflow(rest, *x, &rest);
      }
      if (!fits) {
        err << diag_line("--complement", arg,
                         "TOTAL - value is out of range: integers go from -9223372036854775808 to 9223372036854775807")
            << "\n";
        return false;
      }
      value = std::to_string(rest);
    } else {
      double rest = *parse_number(total_t);
      for (std::size_t a = 0; a < g.axes.size(); ++a) rest -= numbers[a][g.index[p][a]];
      value = num(round_to(rest, decimals));
    }
    g.srcs[p].overrides.push_back(io::make_override("--complement", path, value));
  }
  return true;
}

/// plan.json and the answer of a one-axis plan (bisection or --search exhaustive).
int plan_smallest(PlanGrid& g, bool exhaustive, std::optional<OutputDir>& od, const MultirunOptions& opts, std::ostream& out,
                  std::ostream& err) {
  const VaryAxis& axis = g.axes[0];
  const std::size_t n = axis.values.size();
  const auto smallest_met = [&]() -> std::optional<std::size_t> {
    for (const auto& [i, ev] : g.evals)
      if (ev.met) return i;
    return std::nullopt;
  };
  std::optional<std::size_t> answer;
  std::optional<std::size_t> bisection_answer;  // set when a recheck below it changed nothing or something
  if (exhaustive) {
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    if (auto rc = evaluate_points(g, all, opts, out, err)) return *rc;
    answer = smallest_met();
  } else {
    // Bisection, assuming "more is better": the smallest index meeting every SLO.
    if (auto rc = evaluate_points(g, {n - 1}, opts, out, err)) return *rc;
    if (g.evals[n - 1].met) {
      std::ptrdiff_t lo = -1, hi = std::ptrdiff_t(n - 1);  // lo fails (or is below the grid), hi meets
      while (hi - lo > 1) {
        const std::ptrdiff_t mid = lo + (hi - lo) / 2;
        if (auto rc = evaluate_points(g, {std::size_t(mid)}, opts, out, err)) return *rc;
        (g.evals[std::size_t(mid)].met ? hi : lo) = mid;
      }
      answer = std::size_t(hi);
      std::vector<std::size_t> below;  // the two grid values below the answer
      for (std::size_t d = 1; d <= 2 && d <= *answer; ++d) below.push_back(*answer - d);
      if (auto rc = evaluate_points(g, below, opts, out, err)) return *rc;
    }
  }
  // Monotone: sorted by value, the evaluated points fail, then meet (never meet, then fail).
  bool monotone = true;
  bool seen_met = false;
  std::vector<std::string> smaller_met;
  for (const auto& [i, ev] : g.evals) {
    if (seen_met && !ev.met) monotone = false;
    seen_met = seen_met || ev.met;
    if (answer && i < *answer && ev.met) smaller_met.push_back(axis.values[i]);
  }
  if (!smaller_met.empty()) monotone = false;
  if (!exhaustive && !monotone && answer) {
    // The bisection's assumption broke: evaluate every value below its answer, so that the
    // answer is the smallest value meeting every SLO after all.
    bisection_answer = answer;
    std::vector<std::size_t> below;
    for (std::size_t i = 0; i < *answer; ++i)
      if (g.evals.count(i) == 0) below.push_back(i);
    out << fmt::format("  not monotone: {} below {}={}\n",
                       below.empty() ? std::string("every value was evaluated")
                                     : fmt::format("evaluating the {} other value{}", below.size(), below.size() == 1 ? "" : "s"),
                       axis.path, axis.values[*answer]);
    if (auto rc = evaluate_points(g, below, opts, out, err)) return *rc;
    answer = smallest_met();
  }
  // Values below the answer (every value when none met) never evaluated: the bisection assumed
  // they fail.
  std::size_t unevaluated = 0;
  for (std::size_t i = 0; i < (answer ? *answer : n); ++i) unevaluated += g.evals.count(i) == 0;

  if (!check_group_keys(g.group_keys, g.group_metrics, err)) return io::exit_invalid_input;
  ojson plan;
  plan["path"] = axis.path;
  plan["answer"] = answer ? plan_value_json(axis, *answer) : ojson(nullptr);
  plan["met"] = answer.has_value();
  plan["monotone"] = monotone;
  plan["search"] = exhaustive ? "exhaustive" : "bisection";
  plan["bisection_answer"] = bisection_answer ? plan_value_json(axis, *bisection_answer) : ojson(nullptr);
  plan["unevaluated_below"] = unevaluated;
  plan["slos"] = plan_slos_json(g.slos);
  ojson pts = ojson::array();
  for (const auto& [i, ev] : g.evals) {
    ojson p;
    p["value"] = plan_value_json(axis, i);
    plan_point_json(g, i, ev, p);
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
    const std::string what =
        bisection_answer ? fmt::format("every value below the bisection's answer {} was evaluated, the answer is the smallest value "
                                       "meeting every SLO",
                                       axis.values[*bisection_answer])
                         : std::string("every value was evaluated, the answer is the smallest value meeting every SLO");
    err << fmt::format("schedsim plan: warning: the SLOs are not monotone in {} ({}); {}\n", axis.path, why, what);
  }
  if (unevaluated > 0)
    out << fmt::format("  {} value{} below {} {} not evaluated: the bisection assumes {} (--search exhaustive evaluates every value)\n",
                       unevaluated, unevaluated == 1 ? "" : "s", answer ? "the answer" : "the range's end",
                       unevaluated == 1 ? "was" : "were", answer ? "they fail, as the values it saw" : "they fail, as the largest did");
  out << fmt::format("  outputs in {}\n", opts.out_dir);
  if (answer)
    out << fmt::format("answer: {}\n", g.label(*answer));
  else
    out << fmt::format("answer: not met: no value of {} in [{}, {}] meets every SLO\n", axis.path, axis.values.front(),
                       axis.values.back());
  return 0;
}

}  // namespace

// ------------------------------------------------------------------ plan

int plan_command(const ScenarioSource& source, const PlanArgs& args, const MultirunOptions& opts, std::ostream& out,
                 std::ostream& err) {
  bool bad = false;
  std::string e;
  PlanGrid g;
  const bool minimize = args.minimize.has_value();
  {
    // --vary and --zip (parse_grid: syntax, `seed`, a path given twice, a --zip's count).
    std::vector<GridOption> grid = args.grid;
    if (grid.empty()) {
      for (const auto& v : args.vary) grid.push_back({v, false});
      for (const auto& z : args.zip) grid.push_back({z, true});
    }
    if (!parse_grid(grid, kMaxPlanValues, g.axes, err)) bad = true;
    std::size_t a = 0;
    for (const auto& o : grid) {
      if (o.zip) continue;
      // (an axis for each --vary that parsed, in order)
      if (a < g.axes.size() && o.text.substr(0, g.axes[a].path.size()) == g.axes[a].path) {
        if (!minimize && !g.axes[a].range) {
          err << diag_line("--vary", o.text, "plan needs a numeric range PATH=lo..hi[:step]") << "\n";
          bad = true;
        }
        ++a;
      }
    }
  }
  if (args.vary.empty()) {
    err << "--vary: at least one --vary PATH=lo..hi[:step] is required\n";
    bad = true;
  } else if (!minimize && args.vary.size() > 1) {
    err << diag_line("--vary", args.vary[1], "plan takes one --vary unless --minimize METRIC is given") << "\n";
    bad = true;
  }
  if (minimize) {
    const auto& names = summary_metric_names();
    if (std::find(names.begin(), names.end(), *args.minimize) == names.end()) {
      std::string known;
      for (const auto& m : names) known += (known.empty() ? "" : ", ") + m;
      err << diag_line("--minimize", *args.minimize, fmt::format("unknown metric `{}` (metrics: {})", *args.minimize, known)) << "\n";
      bad = true;
    }
  }
  bool exhaustive = false;
  if (args.search) {
    if (*args.search != "bisection" && *args.search != "exhaustive") {
      err << diag_line("--search", *args.search, "must be `bisection` or `exhaustive`") << "\n";
      bad = true;
    } else if (minimize && *args.search == "bisection") {
      err << diag_line("--search", *args.search, "--minimize evaluates every point of the grid (leave --search out or use exhaustive)")
          << "\n";
      bad = true;
    }
    exhaustive = *args.search == "exhaustive";
  }
  std::set<std::string> seen;
  if (refuse_seed_overrides(source.overrides, seen, err)) bad = true;
  if (!parse_metric_options(opts.metrics, g.group_metrics, err)) bad = true;
  for (const auto& s : args.slos) {
    if (auto slo = parse_slo(s, e)) {
      if (!slo->ref.group_by.empty()) g.group_metrics.push_back(NamedMetric{"--slo", s, slo->ref});
      g.slos.push_back(std::move(*slo));
    } else {
      err << e << "\n";
      bad = true;
    }
  }
  if (args.slos.empty()) {
    err << "--slo: at least one --slo METRIC<=VALUE is required\n";
    bad = true;
  }
  if (args.complement) {
    const std::string_view c = *args.complement;
    const auto eq = path_value_split(c);
    const auto total = eq == std::string_view::npos || eq == 0 ? std::nullopt : parse_number(c.substr(eq + 1));
    if (!total) {
      err << diag_line("--complement", c, "expected PATH2=TOTAL with TOTAL a number") << "\n";
      bad = true;
    } else {
      const std::string comp_path(c.substr(0, eq));
      for (const auto& ax : g.axes) {
        if (comp_path == ax.path) {
          err << diag_line("--complement", c, "PATH2 is a --vary PATH") << "\n";
          bad = true;
        }
        for (const auto& z : ax.zipped)
          if (comp_path == z.path) {
            err << diag_line("--complement", c, "PATH2 is a --zip PATH") << "\n";
            bad = true;
          }
      }
      if (comp_path == "seed") {
        err << diag_line("--complement", c, kSeedOverrideRule) << "\n";
        bad = true;
      }
    }
  }
  if (bad) return io::exit_invalid_input;

  std::uint64_t points = 1;
  for (const auto& ax : g.axes) {
    points *= ax.values.size();
    if (points > kMaxPlanValues) {
      std::string sizes;
      for (const auto& a : g.axes) sizes += (sizes.empty() ? "" : " x ") + std::to_string(a.values.size());
      err << fmt::format("--vary: a grid of {} values is more than the limit of {} points\n", sizes, kMaxPlanValues);
      return io::exit_invalid_input;
    }
  }
  g.srcs.assign(points, source);
  g.index.resize(points);
  for (std::size_t p = 0; p < points; ++p) {
    std::vector<std::size_t>& idx = g.index[p];
    idx.resize(g.axes.size());
    std::size_t rest = p;
    for (std::size_t a = g.axes.size(); a-- > 0;) {  // the first --vary is the slowest
      idx[a] = rest % g.axes[a].values.size();
      rest /= g.axes[a].values.size();
    }
    for (std::size_t a = 0; a < g.axes.size(); ++a) {
      g.srcs[p].overrides.push_back(io::make_override("--vary", g.axes[a].path, g.axes[a].values[idx[a]]));
      for (const auto& z : g.axes[a].zipped) g.srcs[p].overrides.push_back(io::make_override("--zip", z.path, z.values[idx[a]]));
    }
  }
  if (args.complement && !plan_add_complement(g, *args.complement, err)) return io::exit_invalid_input;
  std::optional<std::uint64_t> point0_seed;
  if (!validate_points(g.srcs, source.seed, err, &point0_seed)) return io::exit_invalid_input;
  const auto s0 = first_seed(source.seed, point0_seed.value_or(0), opts.seeds, err);
  if (!s0) return io::exit_invalid_input;
  g.s0 = *s0;
  g.k = std::size_t(opts.seeds);
  if (g.k == 1) err << "schedsim plan: note: one seed: every interval has width 0 (use --seeds 5 or more)\n";

  InterruptGuard interrupts;
  std::optional<OutputDir> od;
  const std::vector<std::string> files = minimize ? std::vector<std::string>{"plan.json", "pareto.csv"}
                                                  : std::vector<std::string>{"plan.json"};
  if (int rc = open_out("plan", opts.out_dir, files, od, err)) return rc;
  const auto seeds_text = fmt::format("{} seed{} ({} .. {})", g.k, g.k == 1 ? "" : "s", g.s0, g.s0 + g.k - 1);
  if (minimize) {
    std::string sizes;
    for (const auto& a : g.axes) sizes += fmt::format("{}{} ({} values)", sizes.empty() ? "" : " x ", a.path, a.values.size());
    out << fmt::format("schedsim plan: minimize {} over {} points: {}, {} per point\n", *args.minimize, points, sizes, seeds_text);
    return plan_minimize(g, *args.minimize, od, opts, out, err);
  }
  const VaryAxis& axis = g.axes[0];
  out << fmt::format("schedsim plan: {} in [{}, {}] ({} values), {} per value\n", axis.path, axis.values.front(), axis.values.back(),
                     axis.values.size(), seeds_text);
  return plan_smallest(g, exhaustive, od, opts, out, err);
}

}  // namespace sim
