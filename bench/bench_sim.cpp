// Simulator benchmark: one case per process (so peak memory is the case's own).
//   bench_sim synthetic NODES TASKS [POLICY]   seeded synthetic cluster + workload (sim/synthetic.hpp)
//   bench_sim default                          the embedded default scenario (schedsim run)
//   bench_sim scenario FILE [QUEUEING]         a scenario file (traces applied), e.g. openb/Philly replay;
//                                              QUEUEING (greedy | strict | backfill) overrides scheduler.queueing
//   bench_sim fill FILE POLICIES SEEDS         the fill experiment, all policies x seeds
// Prints one JSON object on stdout: case, wall_s, events, events_per_s, placements,
// placements_per_s, peak_rss_mib. Build in Release (bench/run.sh does).
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/fill_cli.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/run_cli.hpp"
#include "sim/simulator.hpp"
#include "sim/synthetic.hpp"
#include "sim/io/workload.hpp"

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

int run_sim(const std::string& name, const sim::io::Scenario& sc) {
  auto t0 = std::chrono::steady_clock::now();
  sim::Simulator s(sc);
  s.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::size_t placements = 0;
  for (const auto* a : s.attempts()) placements += a->start >= 0;
  auto summary = nlohmann::json::parse(s.summary_json());
  std::cerr << fmt::format("{:<58} {:>8.2f} {:>10.0f} {:>12.0f} {:>9.0f}\n", name, wall, double(s.events_processed()) / wall,
                           double(placements) / wall, peak_rss_mib());
  std::cout << fmt::format(
      R"J({{"case": "{}", "wall_s": {:.3f}, "events": {}, "events_per_s": {:.0f}, "placements": {}, "placements_per_s": {:.0f}, "tasks": {}, "nodes": {}, "gpu_allocation_ratio": {}, "mean_wait_s": {}, "preemptions": {}, "peak_rss_mib": {:.1f}}})J",
      name, wall, s.events_processed(), double(s.events_processed()) / wall, placements, double(placements) / wall, sc.tasks.size(),
      s.scheduler().cluster().size(), summary["gpu_allocation_ratio"].dump(), summary["mean_wait_s"].dump(),
      summary["preemptions"].dump(), peak_rss_mib())
            << "\n";
  return 0;
}

sim::io::Scenario load(const std::string& file) {
  auto r = sim::io::load_scenario_file(file);
  if (!r.ok()) {
    for (const auto& d : r.diagnostics) std::cerr << d.str() << "\n";
    std::exit(2);
  }
  sim::io::apply_traces(*r.scenario);
  sim::io::apply_workload(*r.scenario);
  return *r.scenario;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "synthetic" && argc >= 4) {
    sim::SyntheticOptions o;
    o.nodes = std::stoul(argv[2]);
    o.tasks = std::stoul(argv[3]);
    if (argc >= 5) o.placement = argv[4];
    return run_sim(fmt::format("synthetic {} nodes x {} tasks ({})", o.nodes, o.tasks, o.placement), sim::synthetic_scenario(o));
  }
  if (mode == "default") {
    return run_sim("default scenario (embedded, seed 1)", sim::default_scenario(1));
  }
  if (mode == "scenario" && argc >= 3) {
    sim::io::Scenario sc = load(argv[2]);
    if (argc >= 4) {
      sc.scheduler.queueing = argv[3];
      return run_sim(fmt::format("replay {} ({})", sc.name, sc.scheduler.queueing), sc);
    }
    return run_sim(fmt::format("replay {}", sc.name), sc);
  }
  if (mode == "fill" && argc >= 5) {
    sim::io::Scenario sc = load(argv[2]);
    sim::FillCommandOptions o;
    o.out_dir = (std::filesystem::temp_directory_path() / "schedsim-bench-fill").string();
    std::stringstream ss(argv[3]);
    for (std::string p; std::getline(ss, p, ',');) o.policies.push_back(p);
    o.seeds = std::stoi(argv[4]);
    auto t0 = std::chrono::steady_clock::now();
    std::ostringstream table;
    int rc = sim::fill_command(sc, o, table, std::cerr);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << table.str();
    std::cerr << fmt::format("{:<58} {:>8.2f} {:>10} {:>12} {:>9.0f}\n", fmt::format("fill {} ({} policies x {} seeds)", sc.name, o.policies.size(), o.seeds),
                             wall, "-", "-", peak_rss_mib());
    std::cout << fmt::format(R"J({{"case": "fill {} ({} policies x {} seeds)", "wall_s": {:.3f}, "runs": {}, "peak_rss_mib": {:.1f}}})J",
                             sc.name, o.policies.size(), o.seeds, wall, o.policies.size() * std::size_t(o.seeds), peak_rss_mib())
              << "\n";
    return rc;
  }
  std::cerr << "usage: bench_sim synthetic NODES TASKS [POLICY] | default | scenario FILE [QUEUEING] | fill FILE POLICIES SEEDS\n";
  return 2;
}
