#include "sim/cli/forecast_cli.hpp"

#include <algorithm>
#include <csignal>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/decide_cli.hpp"
#include "sim/experiments/forecast.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

namespace forecast_cli_detail {

using libsched::Time;

/// Seconds on the snapshot's clock: whole seconds as integers, else three decimals.
std::string seconds_text(Time t) {
  if (t % 1000 == 0) return fmt::format("{}", t / 1000);
  return fmt::format("{:.3f}", libsched::to_seconds(t));
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

/// The nearest-rank quantile q% of sorted `v`: v[ceil(q K / 100) - 1].
Time quantile(const std::vector<Time>& v, int q) {
  const std::size_t k = v.size();
  return v[(k * std::size_t(q) + 99) / 100 - 1];
}

}  // namespace forecast_cli_detail

int forecast_command(const ForecastArgs& args, std::ostream& out, std::ostream& err, const libsched::Registry& registry) {
  using namespace forecast_cli_detail;
  std::vector<io::Diagnostic> diags;
  const auto print = [&] {
    for (const auto& d : diags) err << d.str() << '\n';
    diags.clear();
  };
  const std::optional<std::string> text = io::read_scenario_file(args.snapshot, diags);
  if (!text) {
    print();
    return io::exit_invalid_input;
  }
  std::unique_ptr<DecideSnapshot> snap = read_snapshot(*text, args.snapshot, registry, diags);
  // Every task needs a run time: duration_s when given, else runtime_estimate_s.
  std::vector<ForecastTask> tasks;
  std::vector<std::string> length_from;
  if (snap) {
    const auto& sc = snap->scenario;
    for (std::size_t i = 0; i < sc.tasks.size(); ++i) {
      ForecastTask ft;
      ft.start = snap->running_start[i];
      if (snap->duration_given[i]) {
        ft.length = libsched::from_seconds(sc.tasks[i].duration_s);
        length_from.push_back("duration_s");
      } else if (sc.tasks[i].runtime_estimate_s) {
        ft.length = libsched::from_seconds(*sc.tasks[i].runtime_estimate_s);
        length_from.push_back("runtime_estimate_s");
      } else {
        diags.push_back({io::Diagnostic::Severity::error, args.snapshot, fmt::format("tasks[{}].runtime_estimate_s", i), io::missing_value,
                         "forecast needs the task's run time: duration_s or runtime_estimate_s"});
        length_from.emplace_back();
      }
      tasks.push_back(ft);
    }
  }
  std::unique_ptr<libsched::Scheduler> first;
  if (snap && io::count_errors(diags) == 0) first = snapshot_scheduler(*snap, args.snapshot, diags);
  const bool bad = !first || io::count_errors(diags) > 0;
  print();
  if (bad) return io::exit_invalid_input;

  // Why each waiting task waits now: decide's answer (schedule(now) once, then explain).
  const Time now = snap->now;
  const std::vector<libsched::TaskId> queued = first->queue();
  first->schedule(now);
  std::vector<std::string> reason(tasks.size());
  for (libsched::TaskId t : queued) reason[t.index()] = first->is_waiting(t) ? first->explain(t, now).reason : "starts now";

  InterruptGuard interrupts;
  std::optional<OutputDir> outdir;
  try {
    outdir.emplace(args.out, std::vector<std::string>{"forecast.csv", "forecast.json"});
  } catch (const OutputError& e) {
    err << "schedsim forecast: --out: " << e.what() << "\n";
    return e.status;
  }
  try {
    ForecastParams p;
    p.samples = args.samples;
    p.seed = args.seed;
    p.spread = args.spread;
    p.horizon = libsched::from_seconds(args.horizon_s);
    const auto make = [&] {
      std::vector<io::Diagnostic> ignored;  // the first construction reported every problem
      return snapshot_scheduler(*snap, args.snapshot, ignored);
    };
    std::vector<std::vector<Time>> starts = forecast_starts(make, now, tasks, p);
    std::string csv = "task,p10_start_s,p50_start_s,p90_start_s,prob_start_within_1h,reason\n";
    const Time hour = now + 3600 * 1000;
    for (libsched::TaskId t : queued) {
      std::vector<Time>& v = starts[t.index()];
      std::sort(v.begin(), v.end());
      const auto cell = [&](int q) {
        const Time x = quantile(v, q);
        return x == libsched::kTimeNever ? std::string() : seconds_text(x);
      };
      const auto within = std::size_t(std::count_if(v.begin(), v.end(), [&](Time x) { return x <= hour; }));
      csv += fmt::format("{},{},{},{},{},{}\n", csv_field(snap->scenario.tasks[t.index()].name), cell(10), cell(50), cell(90),
                         double(within) / double(v.size()), csv_field(reason[t.index()]));
    }
    nlohmann::ordered_json j;
    j["schema"] = "schedsim/forecast-v1";
    j["snapshot"] = args.snapshot;
    j["now_s"] = libsched::to_seconds(now);
    j["model"] = "uniform-conditional";
    j["spread"] = args.spread;
    j["samples"] = args.samples;
    j["seed"] = args.seed;
    j["horizon_s"] = args.horizon_s;
    j["quantiles"] = "nearest-rank";
    nlohmann::ordered_json tj = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < tasks.size(); ++i)
      tj.push_back({{"task", snap->scenario.tasks[i].name},
                    {"state", tasks[i].start >= 0 ? "running" : "waiting"},
                    {"length_s", libsched::to_seconds(tasks[i].length)},
                    {"length_from", length_from[i]}});
    j["tasks"] = std::move(tj);
    outdir->write("forecast.csv", csv);
    outdir->write("forecast.json", j.dump(2) + "\n");
    outdir->publish();
    out << fmt::format("schedsim forecast: {} waiting tasks, {} samples; outputs in {}\n", queued.size(), args.samples, args.out);
    return 0;
  } catch (const Interrupted& e) {
    outdir.reset();
    err << fmt::format("schedsim forecast: interrupted by {}; no output written\n", e.signal == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + e.signal;
  } catch (const OutputError& e) {
    outdir.reset();
    err << "schedsim forecast: --out: " << e.what() << "\n";
    return e.status;
  } catch (const std::exception& e) {
    outdir.reset();
    err << "schedsim forecast: " << e.what() << "\n";
    return output_exit_status(e);
  }
}

}  // namespace sim
