// `schedsim run` implementation: simulate, write outputs atomically, print a summary table.
#include "sim/cli/run_cli.hpp"

#include "sim/cli/validate_cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <csignal>
#include <optional>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/io/workload.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/engine/scheduler_process.hpp"
#include "sim/engine/simulator.hpp"

namespace sim {

namespace fs = std::filesystem;

int run_command(const io::Scenario& sc, const RunOptions& opts, std::ostream& out, std::ostream& err,
                const std::string& resolved_scenario) {
  return run_command(io::Scenario(sc), opts, out, err, resolved_scenario);
}

int run_command(io::Scenario&& sc, const RunOptions& opts, std::ostream& out, std::ostream& err,
                const std::string& resolved_scenario) {
  if (opts.out_dir.empty()) {
    err << "schedsim run: --out: \"\": must name a directory\n";
    return io::exit_invalid_input;
  }
  // Refuse an output path that cannot receive the six files before simulating anything, so a
  // run never fails half-way through moving its files into place (partial outputs).
  const std::vector<std::string> k_files = opts.outputs.files();
  {
    std::error_code ec;
    const fs::path d(opts.out_dir);
    if (fs::exists(d, ec) && !fs::is_directory(d, ec)) {
      err << "schedsim run: --out: " << opts.out_dir << ": exists and is not a directory\n";
      return io::exit_invalid_input;
    }
    if (fs::is_directory(d, ec)) {
      for (const std::string& f : k_files) {
        if (fs::is_directory(d / f, ec)) {
          err << "schedsim run: --out: " << (d / f).string() << ": is a directory; cannot write the output file\n";
          return io::exit_invalid_input;
        }
      }
    }
    for (fs::path p = d.parent_path(); !p.empty(); p = p.parent_path()) {
      if (fs::exists(p, ec)) {
        if (!fs::is_directory(p, ec)) {
          err << "schedsim run: --out: " << opts.out_dir << ": " << p.string() << " is not a directory\n";
          return io::exit_invalid_input;
        }
        break;
      }
      if (p == p.parent_path()) break;
    }
  }
  // The external scheduler's process starts at the first exchange and is killed and reaped when
  // this returns (declared before the simulator, so it outlives it).
  std::optional<SchedulerProcess> external;
  SimOptions so;
  if (!opts.scheduler_cmd.empty()) {
    external.emplace(opts.scheduler_cmd, opts.scheduler_timeout_s);
    so.external = &*external;
  }
  so.seed = opts.seed;
  so.until_s = opts.until_s;
  so.registry = opts.registry;
  // Outputs that list attempts or name ended tasks need every task kept; without them the run's
  // memory follows the tasks live at once (summary.json and groups.csv are the same).
  so.keep_ended_tasks = opts.outputs.has(Output::tasks) || opts.outputs.has(Output::events) ||
                        opts.outputs.has(Output::metrics) || opts.outputs.has(Output::timeline);
  // Only timeseries.csv and timeline.json read the time series (summary.json's utilization is
  // summed as the run goes).
  so.keep_snapshots = opts.outputs.has(Output::timeseries) || opts.outputs.has(Output::timeline);
  const bool tty = opts.progress && ::isatty(STDERR_FILENO) == 1;
  auto t0 = std::chrono::steady_clock::now();
  if (tty) {
    so.progress = [&err, t0](Time now, std::uint64_t events) {
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      err << fmt::format("\rsimulated {:>12} s  {:>10} events  {:>10.0f} events/s", format_seconds(now), events,
                         wall > 0 ? double(events) / wall : 0.0)
          << std::flush;
    };
  }
  // Everything knowable up front is checked before simulating: the input (exit 2), then the
  // output location (exit 1). Stale staging directories of killed runs are removed here.
  const std::string label = sc.file.empty() ? (sc.name.empty() ? "<default scenario>" : sc.name) : sc.file;
  const std::string title = sc.name.empty() ? sc.file : sc.name;
  // The scenario moves into the simulator; a copy stays only when scenario.resolved.json is
  // derived from it.
  std::optional<io::Scenario> kept;
  if (opts.outputs.has(Output::resolved) && resolved_scenario.empty()) kept = sc;
  std::optional<Simulator> sim;
  try {
    check_runtime_bounds(sc, so);
    so.runtime_bounds_checked = true;
    sim.emplace(std::move(sc), std::move(so));
  } catch (const SimulationLimitError& e) {
    err << e.what() << "\n";
    return io::exit_invalid_input;
  } catch (const std::bad_alloc&) {
    err << "schedsim run: out of memory while building the scenario\n";
    return exit_environment;
  } catch (const std::exception& e) {  // dangling reference, shape libsched cannot model
    err << label << ": " << e.what() << "\n";
    return io::exit_invalid_input;
  }
  InterruptGuard interrupts;  // SIGINT/SIGTERM: stop, remove the staging directory, exit 130/143
  std::optional<OutputDir> outdir;
  try {
    outdir.emplace(opts.out_dir, k_files);
  } catch (const OutputError& e) {
    err << "schedsim run: --out: " << e.what() << "\n";
    return e.status;
  }
  try {
    Simulator& s = *sim;
    s.run();
    if (tty) err << "\n";
    std::string summary_text;  // summary.json's bytes when written (the table below reads them)
    s.write_outputs(outdir->staging(), opts.outputs, &summary_text);
    if (opts.outputs.has(Output::resolved)) {
      // What reproduces this run: the scenario with every override, the seed and until_s.
      io::Scenario effective;
      if (resolved_scenario.empty()) {
        effective = std::move(*kept);
        effective.seed = s.seed();
        if (opts.until_s) effective.until_s = opts.until_s;
        effective.traces.clear();  // their nodes and tasks are inline now
        effective.workload.reset();  // so are the generated tasks
        effective.arrival_scale = 1.0;  // and their submit times are scaled already
      }
      write_file_checked((fs::path(outdir->staging()) / "scenario.resolved.json").string(),
                         resolved_scenario.empty() ? resolved_scenario_json(effective) : resolved_scenario);
    }
    // write_outputs names its own files: publish whatever it wrote (files added later included).
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(outdir->staging())) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    outdir->adopt(names);
    outdir->publish();
    auto j = nlohmann::json::parse(summary_text.empty() ? s.summary_json() : summary_text);
    err << s.unfinished_warning();  // tasks still queued or stopped: their waits are censored
    out << fmt::format("schedsim run: {} (seed {})\n", title, s.seed());
    out << fmt::format("  {:<22} {:>12}\n", "metric", "value");
    for (const char* k : {"tasks", "attempts", "succeeded", "failed", "unfinished", "never_started", "makespan_s", "mean_wait_s",
                          "p95_wait_s", "mean_jct_s", "gpu_allocation_ratio", "cpu_allocation_ratio", "preemptions", "resubmissions", "lost_work_s", "events"})
      out << fmt::format("  {:<22} {:>12}\n", k, j[k].dump());
    if (const std::string currency = j["currency"].get<std::string>(); !currency.empty())  // a scenario with prices
      out << fmt::format("  {:<22} {:>12}\n", "cost_total (" + currency + ")", j["cost_total"].dump());
    if (external)
      out << fmt::format("  {:<22} {:>12}\n  {:<22} {:>12.3f}\n", "scheduler_cmd_instants", external->exchanges(),
                         "scheduler_cmd_ms_each", external->exchanges() ? 1000 * external->exchange_seconds() / double(external->exchanges()) : 0.0);
    out << fmt::format("  outputs in {}\n", opts.out_dir);
    return 0;
  } catch (const Interrupted& e) {
    outdir.reset();  // removes the staging directory
    if (tty) err << "\n";
    err << fmt::format("schedsim run: interrupted by {}; no output written ({} left as it was)\n",
                       e.signal == SIGINT ? "SIGINT" : "SIGTERM", opts.out_dir);
    return 128 + e.signal;
  } catch (const SimulationLimitError& e) {
    outdir.reset();
    if (tty) err << "\n";
    err << e.what() << "\n";
    return io::exit_invalid_input;
  } catch (const OutputError& e) {
    outdir.reset();
    err << "schedsim run: --out: " << e.what() << "\n";
    return e.status;
  } catch (const std::exception& e) {
    outdir.reset();
    err << "schedsim run: " << e.what() << "\n";
    return output_exit_status(e);
  }
}

}  // namespace sim
