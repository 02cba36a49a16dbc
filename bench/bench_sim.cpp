// Simulator benchmark: one case per process (so peak memory is the case's own).
//   bench_sim synthetic NODES TASKS [POLICY]   seeded synthetic cluster + workload (sim/synthetic.hpp)
//   bench_sim default                          the embedded default scenario (schedsim run)
//   bench_sim scenario FILE [QUEUEING [SCALE]] a scenario file (traces applied), e.g. openb/Philly replay;
//                                              QUEUEING (greedy | strict | backfill) overrides scheduler.queueing,
//                                              SCALE every trace's arrival_scale (0.25: four times the load)
//   bench_sim outputs FILE                     simulate FILE, then write its default outputs: the share
//                                              of the run spent writing them (target <= 20 %)
//   bench_sim fill FILE POLICIES SEEDS         the fill experiment, all policies x seeds
// Prints one JSON object on stdout: case, wall_s, events, events_per_s, placements,
// placements_per_s, peak_rss_mib. Build in Release (bench/run.sh does).
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/fill_cli.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/cli/run_cli.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/experiments/synthetic.hpp"
#include "sim/io/workload.hpp"

namespace {

/// CPU seconds of this process (user + system): steadier than wall time on a shared machine.
double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// The run keeps what `schedsim run --outputs summary` keeps (SimOptions::keep_ended_tasks
/// false: a compact run, docs/outputs.md "Memory"; keep_snapshots false: no time series);
/// BENCH_KEEP_ENDED_TASKS=1 keeps every task's attempts (what tasks.csv or events.jsonl need)
/// and the time series, as the rounds before the nineteenth measured.
int run_sim(const std::string& name, sim::io::Scenario sc) {
  auto t0 = std::chrono::steady_clock::now();
  sim::SimOptions opt;
  const char* keep = std::getenv("BENCH_KEEP_ENDED_TASKS");
  opt.keep_ended_tasks = keep && std::string(keep) == "1";
  opt.keep_snapshots = opt.keep_ended_tasks;
  auto s_ptr = std::make_unique<sim::Simulator>(std::move(sc), opt);  // held once (a million tasks: ~320 MB of scenario)
  sim::Simulator& s = *s_ptr;
  const double build = since(t0);
  s.run();
  double wall = since(t0);
  const std::uint64_t placements = s.placements();
  auto t1 = std::chrono::steady_clock::now();
  auto summary = nlohmann::json::parse(s.summary_json());
  const double summary_s = since(t1);
  std::cerr << fmt::format("{:<58} {:>8.2f} {:>10.0f} {:>12.0f} {:>9.0f}\n", name, wall, double(s.events_processed()) / wall,
                           double(placements) / wall, peak_rss_mib());
  std::cout << fmt::format(
      R"J({{"case": "{}", "wall_s": {:.3f}, "events": {}, "events_per_s": {:.0f}, "placements": {}, "placements_per_s": {:.0f}, "tasks": {}, "nodes": {}, "gpu_allocation_ratio": {}, "mean_wait_s": {}, "preemptions": {}, "peak_rss_mib": {:.1f}}})J",
      name, wall, s.events_processed(), double(s.events_processed()) / wall, placements, double(placements) / wall, s.task_count(),
      s.scheduler().cluster().size(), summary["gpu_allocation_ratio"].dump(), summary["mean_wait_s"].dump(),
      summary["preemptions"].dump(), peak_rss_mib())
            << "\n";
  const bool compact = s.compact();
  auto t2 = std::chrono::steady_clock::now();
  s_ptr.reset();
  std::cerr << fmt::format("  phases: build {:.2f} s, simulate {:.2f} s, summary {:.2f} s, teardown {:.2f} s ({} run)\n", build,
                           wall - build, summary_s, since(t2), compact ? "compact" : "full");
  return 0;
}

/// `arrival_scale` > 0 replaces every trace's arrival_scale (gaps between arrivals x it).
sim::io::Scenario load(const std::string& file, double arrival_scale = 0) {
  auto r = sim::io::load_scenario_file(file);
  if (!r.ok()) {
    for (const auto& d : r.diagnostics) std::cerr << d.str() << "\n";
    std::exit(2);
  }
  if (arrival_scale > 0)
    for (auto& t : r.scenario->traces) t.arrival_scale = arrival_scale;
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
    auto t0 = std::chrono::steady_clock::now();
    sim::io::Scenario sc = sim::synthetic_scenario(o);
    std::cerr << fmt::format("  phases: scenario generation {:.2f} s\n", since(t0));
    int rc = run_sim(fmt::format("synthetic {} nodes x {} tasks ({})", o.nodes, o.tasks, o.placement), std::move(sc));
    if (o.nodes == 10000 && o.tasks == 1000000 && o.placement == "best-fit") {
      // Issue #38 target (docs/benchmarks.md): the whole case, scenario generation included, run
      // as `schedsim run --outputs summary` runs (compact, run_sim).
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double rss = peak_rss_mib();
      std::cerr << fmt::format("1M tasks on 10k nodes: {:.1f} s ({}), {:.0f} MiB ({}) (targets <= 5 s, <= 512 MiB)\n", wall,
                               wall <= 5.0 ? "PASS" : "MISS", rss, rss <= 512.0 ? "PASS" : "MISS");
    }
    return rc;
  }
  if (mode == "outputs" && argc >= 3) {
    // Share of a run spent writing the default output files (target <= 20 %, docs/benchmarks.md):
    // the run is what `schedsim run` does (load the scenario and its trace, simulate, write).
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_s();
    sim::io::Scenario sc = load(argv[2]);
    const std::string name = sc.name;
    sim::Simulator s(std::move(sc));
    s.run();
    auto t1 = std::chrono::steady_clock::now();
    double c1 = cpu_s();
    auto dir = std::filesystem::temp_directory_path() / fmt::format("schedsim-bench-outputs-{}", ::getpid());
    std::filesystem::create_directories(dir);
    s.write_outputs(dir.string());
    auto t2 = std::chrono::steady_clock::now();
    double c2 = cpu_s();
    if (std::getenv("BENCH_OUTPUTS_DETAIL")) {  // each file alone (the derived task metrics each time)
      for (auto o : {sim::Output::tasks, sim::Output::summary, sim::Output::groups, sim::Output::events, sim::Output::timeseries,
                     sim::Output::metrics}) {
        auto one = sim::OutputSelection::none();
        one.set(o);
        auto a = std::chrono::steady_clock::now();
        s.write_outputs(dir.string(), one);
        std::cerr << fmt::format("  output {}: {:.3f} s\n", int(o), std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
      }
    }
    std::uintmax_t bytes = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) bytes += e.file_size();
    std::filesystem::remove_all(dir);
    double sim_s = std::chrono::duration<double>(t1 - t0).count(), out_s = std::chrono::duration<double>(t2 - t1).count();
    double share = 100.0 * out_s / (sim_s + out_s);
    double cpu_sim = c1 - c0, cpu_out = c2 - c1, cpu_share = 100.0 * cpu_out / (cpu_sim + cpu_out);
    std::cerr << fmt::format("{} outputs: {:.2f} s of {:.2f} s = {:.0f} % (target <= 20 %) {}; CPU time {:.2f} s of {:.2f} s = {:.0f} %; "
                             "{:.1f} MB written\n",
                             name, out_s, sim_s + out_s, share, share <= 20.0 ? "PASS" : "MISS", cpu_out, cpu_sim + cpu_out, cpu_share,
                             double(bytes) / 1e6);
    std::cout << fmt::format(R"J({{"case": "outputs {}", "simulate_s": {:.3f}, "outputs_s": {:.3f}, "outputs_share_pct": {:.1f}, "simulate_cpu_s": {:.3f}, "outputs_cpu_s": {:.3f}, "outputs_cpu_share_pct": {:.1f}, "output_bytes": {}, "peak_rss_mib": {:.1f}}})J",
                             name, sim_s, out_s, share, cpu_sim, cpu_out, cpu_share, bytes, peak_rss_mib())
              << "\n";
    return 0;
  }
  if (mode == "default") {
    return run_sim("default scenario (embedded, seed 1)", sim::default_scenario(1));
  }
  if (mode == "scenario" && argc >= 3) {
    const double scale = argc >= 5 ? std::stod(argv[4]) : 0;
    sim::io::Scenario sc = load(argv[2], scale);
    if (argc >= 4) {
      sc.scheduler.queueing = argv[3];
      std::string name = scale > 0 ? fmt::format("replay {} ({}, arrival_scale {})", sc.name, sc.scheduler.queueing, argv[4])
                                   : fmt::format("replay {} ({})", sc.name, sc.scheduler.queueing);
      return run_sim(name, std::move(sc));
    }
    std::string name = fmt::format("replay {}", sc.name);
    return run_sim(name, std::move(sc));
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
  std::cerr << "usage: bench_sim synthetic NODES TASKS [POLICY] | default | scenario FILE [QUEUEING [SCALE]] | outputs FILE | fill FILE POLICIES SEEDS\n";
  return 2;
}
