// `schedsim run` implementation: simulate, write outputs atomically, print a summary table.
#include "sim/run_cli.hpp"

#include "sim/io/validate_cli.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/simulator.hpp"

namespace sim {

namespace fs = std::filesystem;

int run_command(const io::Scenario& sc, const RunOptions& opts, std::ostream& out, std::ostream& err) {
  if (opts.out_dir.empty()) {
    err << "schedsim run: --out: \"\": must name a directory\n";
    return io::exit_invalid_input;
  }
  // Refuse an output path that cannot receive the six files before simulating anything, so a
  // run never fails half-way through moving its files into place (partial outputs).
  static constexpr const char* k_files[] = {"tasks.csv", "summary.json", "groups.csv", "events.jsonl", "timeseries.csv", "metrics.prom"};
  {
    std::error_code ec;
    const fs::path d(opts.out_dir);
    if (fs::exists(d, ec) && !fs::is_directory(d, ec)) {
      err << "schedsim run: --out: " << opts.out_dir << ": exists and is not a directory\n";
      return io::exit_invalid_input;
    }
    if (fs::is_directory(d, ec)) {
      for (const char* f : k_files) {
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
  SimOptions so;
  so.seed = opts.seed;
  so.until_s = opts.until_s;
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
  fs::path dir(opts.out_dir);
  fs::path tmp = dir;
  tmp += fmt::format(".tmp-{}", ::getpid());
  try {
    Simulator s(sc, std::move(so));
    s.run();
    if (tty) err << "\n";
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    s.write_outputs(tmp.string());
    if (fs::exists(dir)) {
      // Move each finished file into the existing directory (each rename is atomic).
      for (const char* f : k_files)
        fs::rename(tmp / f, dir / f);
      fs::remove_all(tmp);
    } else {
      if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
      fs::rename(tmp, dir);
    }
    auto j = nlohmann::json::parse(s.summary_json());
    err << s.unfinished_warning();  // tasks still queued or stopped: their waits are censored
    out << fmt::format("schedsim run: {} (seed {})\n", sc.name.empty() ? sc.file : sc.name, s.seed());
    out << fmt::format("  {:<22} {:>12}\n", "metric", "value");
    for (const char* k : {"tasks", "attempts", "succeeded", "failed", "unfinished", "never_started", "makespan_s", "mean_wait_s",
                          "p95_wait_s", "mean_jct_s", "gpu_allocation_ratio", "preemptions", "resubmissions", "lost_work_s", "events"})
      out << fmt::format("  {:<22} {:>12}\n", k, j[k].dump());
    out << fmt::format("  outputs in {}\n", dir.string());
    return 0;
  } catch (const std::exception& e) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    err << "schedsim run: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace sim
