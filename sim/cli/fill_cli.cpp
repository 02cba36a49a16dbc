#include "sim/cli/fill_cli.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "libsched/registry.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/cli/convert_cli.hpp"
#include "sim/experiments/fill.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/cli/run_cli.hpp"
#include "sim/experiments/shard.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/io/version.hpp"

namespace sim {

namespace {

using ojson = nlohmann::ordered_json;

/// One fill experiment's result: what the output files need of it.
struct FillRun {
  std::string policy;
  std::uint64_t seed = 0;
  std::vector<FillRow> rows;
  double seconds = 0;  ///< wall time of run_fill
};

/// fill.csv, fill_curves.csv, fill_summary.csv and the printed table from the runs, policy by
/// policy. The one formatter of `fill` and `merge`, so merged shards give the unsharded bytes.
/// Wall time appears only in the printed table (files are the same for the same inputs).
class FillText {
 public:
  FillText(FillSemantics semantics, double target) {
    table = fmt::format("semantics: {}; GPU allocation and fragmented GPUs (% of cluster GPUs): mean over the arrivals rounding to {} %\n",
                        to_string(semantics), int(target));
    table += fmt::format("{:<16} {:>5} {:>22} {:>20} {:>9}\n", "policy", "runs", "GPU alloc % @target", "frag % @target", "seconds");
  }
  /// Adds the runs of one policy (its seeds in order); returns its table line.
  std::string add_policy(const std::vector<FillRun>& runs) {
    const int seeds = int(runs.size());
    Eigen::VectorXd alloc(seeds), frag(seeds), walloc(seeds), wfrag(seeds);
    double secs = 0;
    for (int k = 0; k < seeds; ++k) {
      const FillRun& r = runs[std::size_t(k)];
      if (first_csv_.empty()) first_csv_ = fill_csv(FillResult{r.rows, {}, 0, 0});
      for (const auto& row : r.rows)
        curves_ += fmt::format("{},{},{},{:.4f},{:.4f},{},{:.4f},{:.4f},{}\n", r.policy, r.seed, row.arrived_pct, row.allocated_gpu_pct,
                               row.frag_gpu_pct, row.failed_tasks, row.allocated_gpu_pct_mean, row.frag_gpu_pct_mean, row.window_states);
      alloc[k] = r.rows.back().allocated_gpu_pct;
      frag[k] = r.rows.back().frag_gpu_pct;
      walloc[k] = r.rows.back().allocated_gpu_pct_mean;
      wfrag[k] = r.rows.back().frag_gpu_pct_mean;
      secs += r.seconds;
    }
    auto sample_sd = [seeds](const Eigen::VectorXd& v) {
      return seeds > 1 ? std::sqrt((v.array() - v.mean()).square().sum() / double(seeds - 1)) : 0.0;
    };
    const std::string& policy = runs.front().policy;
    summary_ += fmt::format("{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f}\n", policy, seeds, alloc.mean(),
                            sample_sd(alloc), frag.mean(), walloc.mean(), sample_sd(walloc), wfrag.mean(), sample_sd(frag),
                            sample_sd(wfrag));
    return fmt::format("{:<16} {:>5} {:>15.2f} ± {:<5.2f} {:>20.2f} {:>9.2f}\n", policy, seeds, walloc.mean(), sample_sd(walloc),
                       wfrag.mean(), secs);
  }
  /// The files (name, text) of a fill of `policies` x `seeds` runs.
  std::vector<std::pair<std::string, std::string>> files(std::size_t policies, int seeds) const {
    if (policies > 1 || seeds > 1) return {{"fill.csv", first_csv_}, {"fill_curves.csv", curves_}, {"fill_summary.csv", summary_}};
    return {{"fill.csv", first_csv_}};
  }
  std::string table;  ///< the table's header lines

 private:
  std::string first_csv_;
  std::string curves_ =
      "policy,seed,arrived_pct,allocated_gpu_pct,frag_gpu_pct,failed_tasks,allocated_gpu_pct_mean,frag_gpu_pct_mean,window_states\n";
  std::string summary_ =
      "policy,runs,alloc_at_target_mean,alloc_at_target_std,frag_at_target_mean,alloc_window_mean,alloc_window_std,frag_window_mean,"
      "frag_at_target_std,frag_window_std\n";
};

std::vector<std::string> fill_output_files(std::size_t policies, int seeds) {
  if (policies > 1 || seeds > 1) return {"fill.csv", "fill_curves.csv", "fill_summary.csv"};
  return {"fill.csv"};
}

/// shard.json `grid` of a fill.
ojson fill_grid_json(const std::vector<std::string>& policies, int seeds, std::uint64_t seed0, double target, FillSemantics semantics) {
  ojson g;
  g["policies"] = policies;
  g["seeds"] = seeds;
  g["first_seed"] = seed0;
  g["target_pct"] = target;
  g["semantics"] = std::string(to_string(semantics));
  return g;
}

/// A run in shard.json: rows as [arrived_pct, allocated_gpu_pct, frag_gpu_pct, failed_tasks,
/// allocated_gpu_pct_mean, frag_gpu_pct_mean, window_states] at full precision.
ojson fill_run_json(const FillRun& r) {
  ojson rows = ojson::array();
  for (const auto& row : r.rows)
    rows.push_back(ojson::array({row.arrived_pct, row.allocated_gpu_pct, row.frag_gpu_pct, row.failed_tasks, row.allocated_gpu_pct_mean,
                                 row.frag_gpu_pct_mean, row.window_states}));
  return ojson{{"policy", r.policy}, {"seed", r.seed}, {"seconds", r.seconds}, {"rows", rows}};
}

/// The inverse of fill_run_json; throws on a malformed run.
FillRun fill_run_from_json(const ojson& j) {
  constexpr std::uint64_t kMaxCount = std::uint64_t(1) << 53;  // counts as written, exact in a double
  FillRun r;
  r.policy = j.at("policy").get<std::string>();
  r.seed = shard_uint(j.at("seed"), std::numeric_limits<std::uint64_t>::max());
  r.seconds = shard_number(j.at("seconds"));
  for (const auto& a : j.at("rows")) {
    if (!a.is_array() || a.size() != 7) throw std::invalid_argument("a row that is not an array of 7 numbers");
    FillRow row;
    row.arrived_pct = int(shard_uint(a.at(0), 1'000'000));
    row.allocated_gpu_pct = shard_number(a.at(1));
    row.frag_gpu_pct = shard_number(a.at(2));
    row.failed_tasks = std::size_t(shard_uint(a.at(3), kMaxCount));
    row.allocated_gpu_pct_mean = shard_number(a.at(4));
    row.frag_gpu_pct_mean = shard_number(a.at(5));
    row.window_states = std::size_t(shard_uint(a.at(6), kMaxCount));
    r.rows.push_back(row);
  }
  if (r.rows.empty()) throw std::invalid_argument("a run without rows");
  return r;
}

}  // namespace

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
  if (std::uint64_t(seeds - 1) > std::numeric_limits<std::uint64_t>::max() - seed0) {  // seed0 + seeds - 1 must not wrap
    err << fmt::format("--seeds: {}: the seeds {} .. {} + {} - 1 do not fit in 0 .. 18446744073709551615\n", seeds, seed0, seed0,
                       seeds);
    return 2;
  }

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

  // The runs, in output order: policy by policy, seeds seed0 .. seed0 + seeds - 1 each. Run q is
  // the shardable point q (--shard I/N runs those with q mod N = I).
  const std::size_t total_runs = policies.size() * std::size_t(seeds);
  ojson grid;
  std::string fingerprint;
  if (opts.shard || opts.emit) {
    grid = fill_grid_json(policies, seeds, seed0, target, semantics);
    // The trace's path, as for sweep; the tasks' count too (the shards read the same file).
    const std::string& scenario = opts.resolved_json.empty() ? resolved_scenario_json(sc) : opts.resolved_json;
    fingerprint = fingerprint_hex(fmt::format("fill\n{}\n{}\ntasks={}\n{}", version(), grid.dump(), tasks.size(), scenario));
  }
  InterruptGuard interrupts;
  const auto run_one = [&](std::size_t q) {
    FillOptions fo;
    fo.policy = policies[q / std::size_t(seeds)];
    fo.semantics = semantics;
    fo.seed = seed0 + std::uint64_t(q % std::size_t(seeds));
    fo.target_pct = target;
    fo.registry = &registry;
    const auto t0 = std::chrono::steady_clock::now();
    FillResult r = run_fill(cluster, tasks, fo);
    return FillRun{fo.policy, fo.seed, std::move(r.rows), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  };
  const auto interrupted = [&err](int sig) {
    err << fmt::format("schedsim fill: interrupted by {}; no output written\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + sig;
  };
  if (opts.emit) {  // one run of the first policy and seed measures the memory each shard asks for
    run_one(0);
    if (int sig = interrupt_signal()) return interrupted(sig);
    return emit_jobs(EmitPlan{"fill", fingerprint, total_runs, peak_rss_mib()}, *opts.emit, opts.out_dir, out, err);
  }

  // The output location is checked (exit 1) and the staging directory created before any
  // experiment runs; files are published together at the end (docs/outputs.md "Publishing").
  std::vector<std::string> files = fill_output_files(policies.size(), seeds);
  if (opts.shard) files = {kShardFileName};
  std::optional<OutputDir> outdir;
  try {
    outdir.emplace(opts.out_dir, files);
  } catch (const OutputError& e) {
    err << "schedsim fill: --out: " << e.what() << "\n";
    return e.status;
  }

  std::vector<std::pair<std::string, std::string>> texts;
  if (opts.shard) {
    ojson jruns = ojson::array();
    const auto mine = shard_points(total_runs, *opts.shard);
    for (std::size_t q : mine) {
      if (int sig = interrupt_signal()) {
        outdir.reset();  // removes the staging directory
        return interrupted(sig);
      }
      jruns.push_back(fill_run_json(run_one(q)));
    }
    texts.emplace_back(kShardFileName, shard_document("fill", fingerprint, *opts.shard, grid, jruns));
    out << fmt::format("schedsim fill: shard {} of {}: {} of {} runs ({} policies x {} seeds)\n", opts.shard->index, opts.shard->count,
                       mine.size(), total_runs, policies.size(), seeds);
  } else {
    FillText text(semantics, target);
    out << text.table;
    std::vector<FillRun> runs;
    for (std::size_t q = 0; q < total_runs; ++q) {
      if (int sig = interrupt_signal()) {
        outdir.reset();  // removes the staging directory
        return interrupted(sig);
      }
      runs.push_back(run_one(q));
      if (runs.size() == std::size_t(seeds)) {  // a policy is done
        out << text.add_policy(runs);
        runs.clear();
      }
    }
    texts = text.files(policies.size(), seeds);
  }
  try {
    for (const auto& [name, content] : texts) outdir->write(name, content);
    outdir->publish();
  } catch (const Interrupted& e) {
    outdir.reset();
    return interrupted(e.signal);
  } catch (const std::exception& e) {
    outdir.reset();
    err << "schedsim fill: --out: " << e.what() << "\n";
    return output_exit_status(e);
  }
  return 0;
}

int fill_merge(const std::vector<ShardFile>& shards, const std::string& out_dir, std::ostream& out, std::ostream& err) {
  const ShardFile& first = shards.front();
  std::vector<std::string> policies;
  int seeds = 0;
  std::uint64_t seed0 = 0;
  double target = 0;
  FillSemantics semantics = FillSemantics::reference;
  try {
    const ojson& g = first.grid;
    policies = g.at("policies").get<std::vector<std::string>>();
    seeds = int(shard_uint(g.at("seeds"), 10'000'000));
    seed0 = shard_uint(g.at("first_seed"), std::numeric_limits<std::uint64_t>::max());
    target = shard_number(g.at("target_pct"));
    const std::string sem = g.at("semantics").get<std::string>();
    if (sem != "reference" && sem != "platform") throw std::invalid_argument("semantics \"" + sem + "\"");
    semantics = sem == "reference" ? FillSemantics::reference : FillSemantics::platform;
    if (policies.empty() || seeds < 1 || policies.size() * std::size_t(seeds) > 10'000'000) throw std::invalid_argument("sizes");
    if (std::uint64_t(seeds - 1) > std::numeric_limits<std::uint64_t>::max() - seed0)
      throw std::invalid_argument("first_seed + seeds - 1 is past 2^64 - 1");
  } catch (const std::exception& e) {
    err << fmt::format("{}: grid: malformed fill grid ({})\n", first.file, e.what());
    return 2;
  }
  const std::size_t total_runs = policies.size() * std::size_t(seeds);
  // The shards must hold every run before anything is sized by the grid: a 5 KB shard.json
  // claiming 10,000,000 seeds must not allocate 720 MB first.
  std::size_t present = 0;
  for (const auto& s : shards) present += s.runs.size();
  if (present != total_runs) {
    err << fmt::format("{}: runs: {} runs in {} shards: does not match a grid of {} policies x {} seeds\n", first.file, present,
                       shards.size(), policies.size(), seeds);
    return 2;
  }
  std::vector<FillRun> runs(total_runs);
  for (const auto& s : shards) {
    const auto mine = shard_points(total_runs, s.shard);
    const auto mismatch = [&](const std::string& where, const std::string& what) {
      err << fmt::format("{}: {}: {}: does not match shard {} of {} of {} policies x {} seeds\n", s.file, where, what, s.shard.index,
                         s.shard.count, policies.size(), seeds);
      return 2;
    };
    if (s.runs.size() != mine.size()) return mismatch("runs", fmt::format("{} runs (expected {})", s.runs.size(), mine.size()));
    for (std::size_t j = 0; j < mine.size(); ++j) {
      const std::size_t q = mine[j];
      const std::string want_policy = policies[q / std::size_t(seeds)];
      const std::uint64_t want_seed = seed0 + q % std::size_t(seeds);
      try {
        FillRun r = fill_run_from_json(s.runs[j]);
        if (r.policy != want_policy || r.seed != want_seed)
          return mismatch(fmt::format("runs[{}]", j), fmt::format("policy {} seed {} (expected policy {} seed {})",
                                                                  io::escape_for_diagnostic(r.policy), r.seed, want_policy, want_seed));
        runs[q] = std::move(r);
      } catch (const std::exception& e) {
        return mismatch(fmt::format("runs[{}]", j), fmt::format("malformed run ({})", io::escape_for_diagnostic(e.what())));
      }
    }
  }
  FillText text(semantics, target);
  std::string table = text.table;
  for (std::size_t p = 0; p < policies.size(); ++p)
    table += text.add_policy(std::vector<FillRun>(runs.begin() + std::ptrdiff_t(p * std::size_t(seeds)),
                                                  runs.begin() + std::ptrdiff_t((p + 1) * std::size_t(seeds))));
  const auto texts = text.files(policies.size(), seeds);
  std::vector<std::string> names;
  for (const auto& t : texts) names.push_back(t.first);
  InterruptGuard interrupts;
  try {
    OutputDir od(out_dir, names);
    for (const auto& [name, content] : texts) od.write(name, content);
    od.publish();
  } catch (const Interrupted& e) {
    err << fmt::format("schedsim merge: interrupted by {}; no output written\n", e.signal == SIGINT ? "SIGINT" : "SIGTERM");
    return 128 + e.signal;
  } catch (const std::exception& e) {
    err << "schedsim merge: --out: " << e.what() << "\n";
    return output_exit_status(e);
  }
  out << table << fmt::format("  merged {} shards; outputs in {}\n", shards.size(), out_dir);
  return 0;
}

}  // namespace sim
