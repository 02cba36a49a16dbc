#include "sim/cli/backtest_cli.hpp"

#include <csignal>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/decide_cli.hpp"
#include "sim/engine/interrupt.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/experiments/backtest.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/resolve.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

namespace backtest_cli_detail {

using libsched::kTimeNever;
using libsched::Time;

/// Seconds on the scenario's clock (format_seconds), "" for never / not by the horizon.
std::string time_cell(Time t) { return t == kTimeNever ? std::string() : format_seconds(t); }

/// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string backtest_csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

nlohmann::ordered_json scores_json(const BacktestScores& s) {
  return {{"within_1min", s.within_1min},
          {"within_10min", s.within_10min},
          {"within_1h", s.within_1h},
          {"mae_s", s.mae_s},
          {"p10_p90_coverage", s.p10_p90_coverage}};
}

/// The snapshot reader: decide's reader and Scheduler builder (an invalid snapshot is a bug of
/// the snapshot writer; reported as the reader's error).
BacktestSnapshot read_backtest_snapshot(const std::string& text, const libsched::Registry& registry) {
  std::vector<io::Diagnostic> diags;
  std::shared_ptr<DecideSnapshot> snap = read_snapshot(text, "<snapshot>", registry, diags);
  if (!snap || io::count_errors(diags) > 0) {
    std::string m = "a replay snapshot is not a valid decide snapshot";
    for (const auto& d : diags) m += "; " + d.str();
    throw std::runtime_error(m);
  }
  BacktestSnapshot b;
  const auto& sc = snap->scenario;
  for (std::size_t i = 0; i < sc.tasks.size(); ++i) {
    ForecastTask ft;
    ft.start = snap->running_start[i];
    ft.estimated = sc.tasks[i].runtime_estimate_s.has_value();
    ft.length = ft.estimated ? libsched::from_seconds(*sc.tasks[i].runtime_estimate_s) : 0;
    b.tasks.push_back(ft);
    b.names.push_back(sc.tasks[i].name);
  }
  b.make = [snap] {
    std::vector<io::Diagnostic> d;
    std::unique_ptr<libsched::Scheduler> s = snapshot_scheduler(*snap, "<snapshot>", d);
    if (!s) throw std::runtime_error("a replay snapshot cannot be rebuilt as a scheduler");
    return s;
  };
  return b;
}

}  // namespace backtest_cli_detail

int backtest_command(const BacktestArgs& args, std::ostream& out, std::ostream& err, const libsched::Registry& registry) {
  using namespace backtest_cli_detail;
  ScenarioSource src;
  src.path = args.scenario;
  src.registry = &registry;
  std::optional<ResolvedScenario> rs = resolve_scenario(src, err);
  if (!rs) return io::exit_invalid_input;
  io::Scenario sc = std::move(rs->scenario);
  SimOptions so;
  so.registry = &registry;
  try {
    check_runtime_bounds(sc, so);
  } catch (const SimulationLimitError& e) {
    err << e.what() << "\n";
    return io::exit_invalid_input;
  }
  const std::string label = sc.file.empty() ? args.scenario : sc.file;
  InterruptGuard interrupts;
  std::optional<OutputDir> outdir;
  try {
    outdir.emplace(args.out, std::vector<std::string>{"backtest.csv", "backtest.json"});
  } catch (const OutputError& e) {
    err << "schedsim backtest: --out: " << e.what() << "\n";
    return e.status;
  }
  BacktestParams p;
  p.every = libsched::from_seconds(args.every_s);
  p.samples = args.samples;
  p.seed = args.seed;
  p.spread = args.spread;
  p.empirical = args.model == "empirical";
  p.horizon = libsched::from_seconds(args.horizon_s);
  p.max_snapshots = args.max_snapshots;
  BacktestResult r;
  try {
    r = backtest(std::move(sc), std::move(so), p, [&registry](const std::string& text) { return read_backtest_snapshot(text, registry); });
  } catch (const Interrupted& e) {
    outdir.reset();
    err << fmt::format("schedsim backtest: interrupted by {}; no output written\n", e.signal == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + e.signal;
  } catch (const SimulationLimitError& e) {
    outdir.reset();
    err << e.what() << "\n";
    return io::exit_invalid_input;
  } catch (const std::invalid_argument& e) {  // dangling reference, shape libsched cannot model
    outdir.reset();
    err << label << ": " << e.what() << "\n";
    return io::exit_invalid_input;
  } catch (const std::exception& e) {
    outdir.reset();
    err << "schedsim backtest: " << e.what() << "\n";
    return output_exit_status(e);
  }
  try {
    std::string csv = "snapshot_s,task,actual_start_s,baseline_start_s,p10_start_s,p50_start_s,p90_start_s\n";
    for (const BacktestRow& row : r.rows)
      csv += fmt::format("{},{},{},{},{},{},{}\n", format_seconds(row.snapshot), backtest_csv_field(row.task), time_cell(row.actual),
                         time_cell(row.baseline), time_cell(row.p10), time_cell(row.p50), time_cell(row.p90));
    nlohmann::ordered_json j;
    j["schema"] = "schedsim/backtest-v1";
    j["scenario"] = args.scenario;
    j["every_s"] = args.every_s;
    j["model"] = args.model;
    j["spread"] = args.spread;
    j["samples"] = args.samples;
    j["seed"] = args.seed;
    j["horizon_s"] = args.horizon_s;
    j["max_snapshots"] = args.max_snapshots;
    j["snapshots"] = r.snapshots;
    j["snapshots_skipped"] = r.snapshots_skipped;
    j["waiting"] = r.rows.size();
    j["compared"] = r.compared;
    j["forecast"] = scores_json(r.forecast);
    j["baseline"] = scores_json(r.baseline);
    outdir->write("backtest.csv", csv);
    outdir->write("backtest.json", j.dump(2) + "\n");
    outdir->publish();
    out << fmt::format("schedsim backtest: {} snapshots ({} skipped), {} waiting tasks, {} compared\n", r.snapshots,
                       r.snapshots_skipped, r.rows.size(), r.compared);
    out << fmt::format("  {:<10} {:>9} {:>9} {:>9} {:>12} {:>9}\n", "", "<=1min", "<=10min", "<=1h", "MAE s", "P10-P90");
    const auto line = [&out](const char* name, const BacktestScores& s) {
      out << fmt::format("  {:<10} {:>9.3f} {:>9.3f} {:>9.3f} {:>12.1f} {:>9.3f}\n", name, s.within_1min, s.within_10min, s.within_1h,
                         s.mae_s, s.p10_p90_coverage);
    };
    line("forecast", r.forecast);
    line("baseline", r.baseline);
    out << fmt::format("  outputs in {}\n", args.out);
    return 0;
  } catch (const Interrupted& e) {
    outdir.reset();
    err << fmt::format("schedsim backtest: interrupted by {}; no output written\n", e.signal == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + e.signal;
  } catch (const OutputError& e) {
    outdir.reset();
    err << "schedsim backtest: --out: " << e.what() << "\n";
    return e.status;
  } catch (const std::exception& e) {
    outdir.reset();
    err << "schedsim backtest: " << e.what() << "\n";
    return output_exit_status(e);
  }
}

}  // namespace sim
