#include "sim/fill_cli.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <filesystem>
#include <optional>

#include <Eigen/Core>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "libsched/registry.hpp"
#include "sim/convert_cli.hpp"
#include "sim/fill.hpp"
#include "sim/publish.hpp"
#include "sim/simulator.hpp"

namespace sim {

int fill_command(const io::Scenario& sc, const FillCommandOptions& opts, std::ostream& out, std::ostream& err) {
  std::vector<std::string> policies = opts.policies;
  if (policies.empty()) policies.push_back(opts.policy.value_or(sc.scheduler.placement));
  const libsched::Registry& registry = opts.registry ? *opts.registry : libsched::Registry::builtin();
  if (opts.semantics != "reference" && opts.semantics != "platform") {
    err << fmt::format("schedsim fill: --semantics: \"{}\": must be reference or platform\n", opts.semantics);
    return 2;
  }
  const FillSemantics semantics = opts.semantics == "reference" ? FillSemantics::reference : FillSemantics::platform;
  for (const auto& p : policies) {
    if (semantics == FillSemantics::reference) {
      const auto& known = reference_fill_policies();
      if (std::find(known.begin(), known.end(), p) == known.end()) {
        err << fmt::format("{}: --policy: {}: not a policy of the reference fill semantics ({}; other registered policies need "
                           "--semantics platform)\n",
                           sc.file, p, fmt::join(known, ", "));
        return 2;
      }
      continue;
    }
    if (!registry.placement.contains(p)) {
      err << fmt::format("{}: --policy: {}: unknown placement policy (registered: {})\n", sc.file, p,
                         fmt::join(registry.placement.names(), ", "));
      return 2;
    }
  }
  const double target = opts.target_pct.value_or(sc.fill.target_pct);
  if (!(target > 0) || target > 1000) {
    err << fmt::format("{}: fill.target_pct: {}: must be in (0, 1000]\n", sc.file, target);
    return 2;
  }
  const std::uint64_t seed0 = opts.seed.value_or(sc.seed);
  const int seeds = std::max(1, opts.seeds);

  {
    std::error_code ec;
    if (opts.out_dir.empty() || (std::filesystem::exists(opts.out_dir, ec) && !std::filesystem::is_directory(opts.out_dir, ec))) {
      err << fmt::format("schedsim fill: --out: \"{}\": must name a directory\n", opts.out_dir);
      return 2;
    }
  }
  // The cluster and task shapes exactly as the simulator builds them from the scenario. The
  // library refuses shapes it cannot model (e.g. a node of more than 64 GPUs): report, not abort.
  std::optional<Simulator> built_holder;
  try {
    SimOptions so;
    so.registry = &registry;
    built_holder.emplace(sc, std::move(so));
  } catch (const std::exception& e) {
    err << fmt::format("{}: {}\n", sc.file, e.what());
    return 2;
  }
  Simulator& built = *built_holder;
  const libsched::Cluster& cluster = built.scheduler().cluster();
  std::vector<libsched::TaskSpec> tasks;
  tasks.reserve(built.scheduler().task_count());
  for (std::size_t i = 0; i < built.scheduler().task_count(); ++i)
    tasks.push_back(built.scheduler().task(libsched::TaskId(std::int32_t(i))));
  if (semantics == FillSemantics::reference) {
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (tasks[i].workers != 0) {
        err << fmt::format("{}: tasks[{}]: {}: a gang of {} replicas: the reference fill semantics place single pods (use --semantics "
                           "platform)\n",
                           sc.file, i, tasks[i].name, tasks[i].replicas());
        return 2;
      }
    }
  }
  const bool any_gpu_task = std::any_of(tasks.begin(), tasks.end(), [](const libsched::TaskSpec& t) { return t.demand(0).gpu_milli > 0; });
  if (tasks.empty() || cluster.total_capacity().gpu_milli == 0 || !any_gpu_task) {
    err << fmt::format("{}: fill needs tasks asking for GPUs and GPU nodes (got {} tasks, {} of them with GPUs, {} GPUs)\n", sc.file,
                       tasks.size(), std::count_if(tasks.begin(), tasks.end(), [](const libsched::TaskSpec& t) { return t.demand(0).gpu_milli > 0; }),
                       cluster.total_capacity().gpu_milli / 1000);
    return 2;
  }

  // The output location is checked (exit 1) and the staging directory created before any
  // experiment runs; files are published together at the end (docs/outputs.md "Publishing").
  InterruptGuard interrupts;
  std::vector<std::string> files{"fill.csv"};
  if (policies.size() > 1 || seeds > 1) files = {"fill.csv", "fill_curves.csv", "fill_summary.csv"};
  std::optional<OutputDir> outdir;
  try {
    outdir.emplace(opts.out_dir, files);
  } catch (const OutputError& e) {
    err << "schedsim fill: --out: " << e.what() << "\n";
    return exit_environment;
  }

  std::string first_csv;
  std::string curves =
      "policy,seed,arrived_pct,allocated_gpu_pct,frag_gpu_pct,failed_tasks,allocated_gpu_pct_mean,frag_gpu_pct_mean,window_states\n";
  std::string summary =
      "policy,runs,alloc_at_target_mean,alloc_at_target_std,frag_at_target_mean,seconds,alloc_window_mean,alloc_window_std,frag_window_mean\n";
  out << fmt::format("semantics: {}; GPU allocation and fragmented GPUs (% of cluster GPUs): mean over the arrivals rounding to {} %\n",
                     to_string(semantics), int(target));
  out << fmt::format("{:<16} {:>5} {:>22} {:>20} {:>9}\n", "policy", "runs", "GPU alloc % @target", "frag % @target", "seconds");
  for (const auto& policy : policies) {
    Eigen::VectorXd alloc(seeds), frag(seeds), walloc(seeds), wfrag(seeds);
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < seeds; ++k) {
      if (int sig = interrupt_signal()) {
        outdir.reset();  // removes the staging directory
        err << fmt::format("schedsim fill: interrupted by {}; no output written\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
        return 128 + sig;
      }
      FillOptions fo;
      fo.policy = policy;
      fo.semantics = semantics;
      fo.seed = seed0 + std::uint64_t(k);
      fo.target_pct = target;
      fo.registry = &registry;
      FillResult r = run_fill(cluster, tasks, fo);
      if (first_csv.empty()) first_csv = fill_csv(r);
      for (const auto& row : r.rows)
        curves += fmt::format("{},{},{},{:.4f},{:.4f},{},{:.4f},{:.4f},{}\n", policy, fo.seed, row.arrived_pct, row.allocated_gpu_pct,
                              row.frag_gpu_pct, row.failed_tasks, row.allocated_gpu_pct_mean, row.frag_gpu_pct_mean, row.window_states);
      alloc[k] = r.rows.back().allocated_gpu_pct;
      frag[k] = r.rows.back().frag_gpu_pct;
      walloc[k] = r.rows.back().allocated_gpu_pct_mean;
      wfrag[k] = r.rows.back().frag_gpu_pct_mean;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto sample_sd = [seeds](const Eigen::VectorXd& v) {
      return seeds > 1 ? std::sqrt((v.array() - v.mean()).square().sum() / double(seeds - 1)) : 0.0;
    };
    summary += fmt::format("{},{},{:.4f},{:.4f},{:.4f},{:.3f},{:.4f},{:.4f},{:.4f}\n", policy, seeds, alloc.mean(), sample_sd(alloc),
                           frag.mean(), secs, walloc.mean(), sample_sd(walloc), wfrag.mean());
    out << fmt::format("{:<16} {:>5} {:>15.2f} ± {:<5.2f} {:>20.2f} {:>9.2f}\n", policy, seeds, walloc.mean(), sample_sd(walloc),
                       wfrag.mean(), secs);
  }
  try {
    outdir->write("fill.csv", first_csv);
    if (files.size() > 1) {
      outdir->write("fill_curves.csv", curves);
      outdir->write("fill_summary.csv", summary);
    }
    outdir->publish();
  } catch (const Interrupted& e) {
    outdir.reset();
    err << fmt::format("schedsim fill: interrupted by {}; no output written\n", e.signal == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + e.signal;
  } catch (const std::exception& e) {
    outdir.reset();
    err << "schedsim fill: --out: " << e.what() << "\n";
    return exit_environment;
  }
  return 0;
}

}  // namespace sim
