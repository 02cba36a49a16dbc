// `schedsim run --seeds`, `compare`, `sweep`, `plan` (sim/multirun_cli.hpp, docs/planning.md).
// This file: run --seeds, compare, and the running and publishing helpers of every multi-run
// command (multirun_detail.hpp). Option parsing: vary.cpp; sweep and merge: sweep_cli.cpp; plan:
// plan_cli.cpp.
#include "sim/cli/multirun_cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/multirun_detail.hpp"
#include "sim/engine/interrupt.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/experiments/shard.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

namespace multirun_detail {

// ------------------------------------------------------------------ running and publishing

/// Checks --out before any simulation: "" or an existing non-directory is an input error (exit 2,
/// as `run`); then the staging directory is created (OutputError: exit 1). Returns 0 when ready.
int open_out(const char* cmd, const std::string& out_dir, const std::vector<std::string>& files, std::optional<OutputDir>& od,
             std::ostream& err) {
  std::error_code ec;
  if (out_dir.empty()) {
    err << fmt::format("schedsim {}: --out: \"\": must name a directory\n", cmd);
    return io::exit_invalid_input;
  }
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec)) {
    err << fmt::format("schedsim {}: --out: {}: exists and is not a directory\n", cmd, out_dir);
    return io::exit_invalid_input;
  }
  try {
    od.emplace(out_dir, files);
  } catch (const OutputError& e) {
    err << fmt::format("schedsim {}: --out: {}\n", cmd, e.what());
    return e.status;
  }
  return 0;
}

/// Writes `files` into staging and publishes them. Returns the exit status.
int publish_files(const char* cmd, std::optional<OutputDir>& od, const std::vector<std::pair<std::string, std::string>>& files,
                  std::ostream& err) {
  try {
    for (const auto& [name, text] : files) od->write(name, text);
    od->publish();
    return 0;
  } catch (const Interrupted& e) {
    od.reset();
    err << fmt::format("schedsim {}: interrupted by {}; no output written\n", cmd, e.signal == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + e.signal;
  } catch (const std::exception& e) {
    od.reset();
    err << fmt::format("schedsim {}: --out: {}\n", cmd, e.what());
    return output_exit_status(e);
  }
}

/// Runs `jobs` (source, seed) simulations; on failure prints the problem and returns its exit
/// status (2 input, 1 environment, 130/143 interrupted).
std::optional<int> run_all(const char* cmd, const std::vector<std::pair<const ScenarioSource*, std::uint64_t>>& runs,
                           std::vector<RunMetrics>& results, unsigned jobs, const std::function<void(std::size_t)>& done,
                           std::ostream& err) {
  results.assign(runs.size(), RunMetrics{});
  try {
    parallel_for(runs.size(), jobs, [&](std::size_t i) { results[i] = simulate_seed(*runs[i].first, runs[i].second); }, done);
    return std::nullopt;
  } catch (const RunInputError& e) {
    err << e.what() << "\n";
    return io::exit_invalid_input;
  } catch (const Interrupted& e) {
    err << fmt::format("schedsim {}: interrupted by {}; no output written\n", cmd, e.signal == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + e.signal;
  } catch (const std::bad_alloc&) {
    err << fmt::format("schedsim {}: out of memory\n", cmd);
    return exit_environment;
  } catch (const std::exception& e) {
    err << fmt::format("schedsim {}: {}\n", cmd, e.what());
    return output_exit_status(e);
  }
}

/// The first seed s (--seed or the scenario's) after checking that s + K - 1 fits in 64 bits.
std::optional<std::uint64_t> first_seed(std::optional<std::uint64_t> given, std::uint64_t scenario_seed, int k,
                                        std::ostream& err) {
  const std::uint64_t s = given.value_or(scenario_seed);
  if (k < 1 || std::uint64_t(k - 1) > std::numeric_limits<std::uint64_t>::max() - s) {
    err << fmt::format("--seeds: {}: the seeds {} .. {} + {} - 1 do not fit in 0 .. 18446744073709551615\n", k, s, s, k);
    return std::nullopt;
  }
  return s;
}

/// Metric names in output order: those of the first run, then any other run's extra ones.
std::vector<std::string> metric_order(const std::vector<RunMetrics>& runs) {
  std::vector<std::string> names;
  for (const auto& r : runs)
    for (const auto& [k, v] : r.scalars)
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  return names;
}

double value_of(const MetricList& m, const std::string& key) {
  for (const auto& [k, v] : m)
    if (k == key) return v;
  return 0.0;
}

/// Values of `metric` in runs [from, to).
std::vector<double> column(const std::vector<RunMetrics>& runs, std::size_t from, std::size_t to, const std::string& metric) {
  std::vector<double> v;
  for (std::size_t i = from; i < to; ++i) v.push_back(value_of(runs[i].scalars, metric));
  return v;
}

ojson stats_json(const Stats& s) {
  ojson o;
  o["mean"] = s.mean;
  o["std"] = s.std;
  o["ci95_low"] = s.ci95_low;
  o["ci95_high"] = s.ci95_high;
  o["n"] = s.n;
  return o;
}

/// Validates every point's source with seed `seed` (no simulation). Diagnostics are printed
/// once per distinct line; a line not given by every point names its points. Returns false
/// when a point has an error. `fingerprint_text` (optional) gets one line per point: the
/// fingerprint_hex of its resolved scenario.
bool validate_points(const std::vector<ScenarioSource>& points, std::optional<std::uint64_t> seed, std::ostream& err,
                     std::optional<std::uint64_t>* point0_seed, std::string* fingerprint_text) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> where;
  bool ok = true;
  for (std::size_t p = 0; p < points.size(); ++p) {
    ScenarioSource src = points[p];
    src.seed = seed;
    src.load_traces = p == 0;  // the traces are read once, here; the runs read them again
    std::ostringstream diag;
    const auto r = resolve_scenario(src, diag);
    if (!r) ok = false;
    if (r && p == 0 && point0_seed) *point0_seed = r->scenario.seed;
    if (r && fingerprint_text) *fingerprint_text += fingerprint_hex(r->resolved_json) + "\n";
    std::istringstream lines(diag.str());
    for (std::string line; std::getline(lines, line);) {
      auto& w = where[line];
      if (w.empty()) order.push_back(line);
      if (w.empty() || w.back() != p) w.push_back(p);
    }
  }
  for (const auto& line : order) {
    const auto& w = where[line];
    std::string suffix;
    if (w.size() != points.size() || !ok) {
      if (w.size() == 1) {
        suffix = fmt::format(" (point {})", w[0]);
      } else {
        suffix = " (points ";
        for (std::size_t i = 0; i < w.size() && i < 5; ++i) suffix += (i ? ", " : "") + std::to_string(w[i]);
        suffix += w.size() > 5 ? fmt::format(", ...: {} points)", w.size()) : ")";
      }
    }
    err << line << suffix << "\n";
  }
  return ok;
}

}  // namespace multirun_detail

using namespace multirun_detail;

namespace {

std::string scenario_label(const ScenarioSource& src, const ResolvedScenario& r) {
  if (!r.scenario.name.empty()) return r.scenario.name;
  return src.path.empty() ? "<default>" : src.path;
}

}  // namespace

// ------------------------------------------------------------------ run --seeds

int seeds_command(const ScenarioSource& source, const MultirunOptions& opts, std::ostream& out, std::ostream& err) {
  std::vector<NamedMetric> group_metrics;
  std::vector<Slo> slos;
  const bool metrics_ok = parse_metric_options(opts.metrics, group_metrics, err);
  if (!parse_slo_options(opts.slos, slos, group_metrics, err) || !metrics_ok) return io::exit_invalid_input;
  const auto base = resolve_scenario(source, err);
  if (!base) return io::exit_invalid_input;
  const auto s0 = first_seed(source.seed, base->scenario.seed, opts.seeds, err);
  if (!s0) return io::exit_invalid_input;
  const std::size_t k = std::size_t(opts.seeds);

  InterruptGuard interrupts;
  std::optional<OutputDir> od;
  if (int rc = open_out("run", opts.out_dir, {"seeds_summary.json", "seeds.csv", "scenario.resolved.json"}, od, err)) return rc;
  std::vector<std::pair<const ScenarioSource*, std::uint64_t>> runs;
  for (std::size_t i = 0; i < k; ++i) runs.emplace_back(&source, *s0 + i);
  std::vector<RunMetrics> res;
  Progress progress(err, opts.progress, "schedsim run", k);
  const auto rc = run_all("run", runs, res, opts.jobs, progress.callback(), err);
  progress.end();
  if (rc) return *rc;
  std::map<std::string, std::set<std::string>> keys;
  collect_group_keys(res, keys);
  if (!check_group_keys(keys, group_metrics, err)) return io::exit_invalid_input;
  append_group_metrics(res, group_metrics);

  const auto names = metric_order(res);
  ojson summary = ojson::object();
  std::string csv = "seed";
  for (const auto& m : names) csv += "," + csv_cell(m);
  csv += "\n";
  for (const auto& r : res) {
    csv += std::to_string(r.seed);
    for (const auto& m : names) csv += "," + num(value_of(r.scalars, m));
    csv += "\n";
  }
  std::string table = fmt::format("schedsim run: {} (seeds {} .. {}, {} runs)\n", scenario_label(source, *base), *s0, *s0 + k - 1, k);
  table += fmt::format("  {:<22} {:>12} {:>12} {:>12} {:>12}\n", "metric", "mean", "std", "ci95_low", "ci95_high");
  for (const auto& m : names) {
    const Stats s = summarize(column(res, 0, k, m));
    summary[m] = stats_json(s);
    table += fmt::format("  {:<22} {:>12} {:>12} {:>12} {:>12}\n", m, short_num(s.mean), short_num(s.std), short_num(s.ci95_low),
                         short_num(s.ci95_high));
  }
  if (!slos.empty()) {
    const auto checks = check_slos(slos, res, 0, k);
    ojson jslos = ojson::array();
    bool all = true;
    for (std::size_t i = 0; i < slos.size(); ++i) {
      jslos.push_back(slo_check_json(slos[i], checks[i]));
      table += "  " + slo_check_text(slos[i], checks[i]) + "\n";
      all = all && checks[i].met;
    }
    summary["slos"] = jslos;
    summary["slos_met"] = all;
    table += fmt::format("  {}\n", all ? "every SLO met" : "not every SLO met");
  }
  if (int prc = publish_files("run",
                              od,
                              {{"seeds_summary.json", summary.dump(2) + "\n"}, {"seeds.csv", csv},
                               {"scenario.resolved.json", base->resolved_json}},
                              err))
    return prc;
  out << table << fmt::format("  outputs in {}\n", opts.out_dir);
  return 0;
}

// ------------------------------------------------------------------ compare

int compare_command(const ScenarioSource& a, const ScenarioSource& b, const MultirunOptions& opts, std::ostream& out,
                    std::ostream& err) {
  {
    std::set<std::string> seen;
    const bool in_a = refuse_seed_overrides(a.overrides, seen, err);
    if (refuse_seed_overrides(b.overrides, seen, err) || in_a) return io::exit_invalid_input;
  }
  std::vector<NamedMetric> slo_groups;
  std::vector<Slo> slos;
  if (!parse_slo_options(opts.slos, slos, slo_groups, err)) return io::exit_invalid_input;
  const auto ra = resolve_scenario(a, err);
  ScenarioSource bs = b;
  bs.seed = a.seed ? a.seed : ra ? std::optional<std::uint64_t>(ra->scenario.seed) : b.seed;
  const auto rb = resolve_scenario(bs, err);
  if (!ra || !rb) return io::exit_invalid_input;
  const auto s0 = first_seed(a.seed, ra->scenario.seed, opts.seeds, err);
  if (!s0) return io::exit_invalid_input;
  const std::size_t k = std::size_t(opts.seeds);
  if (k == 1) err << "schedsim compare: note: one seed: every interval has width 0 (use --seeds 5 or more)\n";

  InterruptGuard interrupts;
  std::optional<OutputDir> od;
  if (int rc = open_out("compare", opts.out_dir, {"compare.json", "compare_groups.csv", "a.resolved.json", "b.resolved.json"}, od,
                        err))
    return rc;
  std::vector<std::pair<const ScenarioSource*, std::uint64_t>> runs;
  for (std::size_t i = 0; i < k; ++i) runs.emplace_back(&a, *s0 + i);
  for (std::size_t i = 0; i < k; ++i) runs.emplace_back(&bs, *s0 + i);
  std::vector<RunMetrics> res;
  Progress progress(err, opts.progress, "schedsim compare", 2 * k);
  const auto rc = run_all("compare", runs, res, opts.jobs, progress.callback(), err);
  progress.end();
  if (rc) return *rc;
  {
    std::map<std::string, std::set<std::string>> keys;
    collect_group_keys(res, keys);
    if (!check_group_keys(keys, slo_groups, err)) return io::exit_invalid_input;
  }

  const auto names = metric_order(res);
  ojson cmp = ojson::object();
  std::string table = fmt::format("schedsim compare: A {} vs B {} (seeds {} .. {}, {} paired runs)\n", scenario_label(a, *ra),
                                  scenario_label(b, *rb), *s0, *s0 + k - 1, k);
  table += fmt::format("  {:<22} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "metric", "a", "b", "diff", "ci95_low", "ci95_high");
  for (const auto& m : names) {
    const PairedStats p = summarize_paired(column(res, 0, k, m), column(res, k, 2 * k, m));
    ojson o;
    o["a"] = p.a;
    o["b"] = p.b;
    o["diff"] = p.diff;
    o["ci95_low"] = p.ci95_low;
    o["ci95_high"] = p.ci95_high;
    cmp[m] = o;
    table += fmt::format("  {:<22} {:>12} {:>12} {:>12} {:>12} {:>12}\n", m, short_num(p.a), short_num(p.b), short_num(p.diff),
                         short_num(p.ci95_low), short_num(p.ci95_high));
  }
  // Per-group paired differences; a group absent from a run has no task there: every metric 0.
  std::string groups = "group_by,group,metric,a,b,diff,ci95_low,ci95_high\n";
  for (const auto& by : group_by_names()) {
    std::set<std::string> keys;
    for (const auto& r : res)
      if (auto it = r.groups.find(by); it != r.groups.end())
        for (const auto& [g, ml] : it->second) keys.insert(g);
    for (const auto& g : keys) {
      for (const auto& m : group_metric_names()) {
        std::vector<double> va, vb;
        for (std::size_t i = 0; i < 2 * k; ++i) {
          double v = 0;
          if (auto it = res[i].groups.find(by); it != res[i].groups.end())
            if (auto gi = it->second.find(g); gi != it->second.end()) v = value_of(gi->second, m);
          (i < k ? va : vb).push_back(v);
        }
        const PairedStats p = summarize_paired(va, vb);
        groups += fmt::format("{},{},{},{},{},{},{},{}\n", by, csv_cell(g), m, num(p.a), num(p.b), num(p.diff), num(p.ci95_low),
                              num(p.ci95_high));
      }
    }
  }
  if (!slos.empty()) {  // each SLO checked on A's runs and on B's
    const auto ca = check_slos(slos, res, 0, k), cb = check_slos(slos, res, k, 2 * k);
    ojson jslos = ojson::array();
    bool all_a = true, all_b = true;
    for (std::size_t i = 0; i < slos.size(); ++i) {
      ojson ja = slo_check_json(slos[i], ca[i]), jb = slo_check_json(slos[i], cb[i]);
      ojson j{{"metric", slos[i].metric}, {"op", slos[i].op}, {"value", slos[i].value}};
      for (const char* key : {"metric", "op", "value"}) {
        ja.erase(key);
        jb.erase(key);
      }
      j["a"] = std::move(ja);
      j["b"] = std::move(jb);
      jslos.push_back(std::move(j));
      table += "  A " + slo_check_text(slos[i], ca[i]) + "\n  B " + slo_check_text(slos[i], cb[i]) + "\n";
      all_a = all_a && ca[i].met;
      all_b = all_b && cb[i].met;
    }
    cmp["slos"] = jslos;
    cmp["slos_met"] = ojson{{"a", all_a}, {"b", all_b}};
    table += fmt::format("  every SLO met: A {}, B {}\n", all_a ? "yes" : "no", all_b ? "yes" : "no");
  }
  if (int prc = publish_files("compare", od,
                              {{"compare.json", cmp.dump(2) + "\n"},
                               {"compare_groups.csv", groups},
                               {"a.resolved.json", ra->resolved_json},
                               {"b.resolved.json", rb->resolved_json}},
                              err))
    return prc;
  out << table << fmt::format("  outputs in {}\n", opts.out_dir);
  return 0;
}

}  // namespace sim
