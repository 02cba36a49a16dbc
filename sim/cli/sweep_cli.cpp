// `schedsim sweep` (also --shard, --emit) and the merge of sweep shards: the grid, sweep.csv, sweep_summary.csv.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/cli/multirun_cli.hpp"
#include "sim/cli/multirun_detail.hpp"
#include "sim/engine/interrupt.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/experiments/shard.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/overrides.hpp"
#include "sim/io/version.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

using namespace multirun_detail;

// ------------------------------------------------------------------ sweep

namespace {

/// Point p's index on each axis: the first --vary is the slowest (lexicographic order).
std::vector<std::size_t> axis_indices(std::size_t p, const std::vector<VaryAxis>& axes) {
  std::vector<std::size_t> idx(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    idx[a] = p % axes[a].values.size();
    p /= axes[a].values.size();
  }
  return idx;
}

/// A sweep's outputs from all its runs (`res[p * k + i]`: point p, seed s0 + i): sweep.csv,
/// sweep_summary.csv and the printed table. The one formatter of `sweep` and `merge`, so a
/// merged sweep is byte for byte the unsharded one.
struct SweepText {
  std::string csv, summary, table;
  std::string slo;  ///< sweep_slo.csv (only with --slo)
};

SweepText sweep_text(const std::vector<VaryAxis>& axes, std::size_t points, std::size_t k, std::uint64_t s0,
                     const std::vector<RunMetrics>& res, const std::vector<Slo>& slos) {
  const auto names = metric_order(res);
  std::string paths;
  for (const auto& ax : axes) {
    (paths += ',') += csv_cell(ax.path);  // not "," + s: GCC 12 -Wrestrict false positive
    for (const auto& z : ax.zipped) (paths += ',') += csv_cell(z.path);
  }
  SweepText t;
  std::string& csv = t.csv;
  std::string& summary = t.summary;
  std::string& table = t.table;
  csv = "point,seed" + paths;
  for (const auto& m : names) (csv += ',') += csv_cell(m);
  csv += "\n";
  summary = "point" + paths + ",metric,n,mean,std,ci95_low,ci95_high\n";
  if (!slos.empty()) t.slo = "point" + paths + ",slo,metric,op,value,mean,ci95_low,ci95_high,met\n";
  table = fmt::format("schedsim sweep: {} points x {} seeds ({} .. {})\n  {:>5}", points, k, s0, s0 + k - 1, "point");
  for (const auto& ax : axes) table += fmt::format(" {:>16}", ax.path.size() > 16 ? "..." + ax.path.substr(ax.path.size() - 13) : ax.path);
  const char* shown[] = {"mean_wait_s", "p95_wait_s", "mean_jct_s", "gpu_allocation_ratio"};
  for (const char* m : shown) table += fmt::format(" {:>20}", m);
  if (!slos.empty()) table += fmt::format(" {:>9}", "slos_met");
  table += "\n";
  for (std::size_t p = 0; p < points; ++p) {
    const auto idx = axis_indices(p, axes);
    std::string vals;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      (vals += ',') += csv_cell(axes[a].values[idx[a]]);  // not "," + s: GCC 12 -Wrestrict false positive
      for (const auto& z : axes[a].zipped) (vals += ',') += csv_cell(z.values[idx[a]]);
    }
    for (std::size_t i = 0; i < k; ++i) {
      const auto& r = res[p * k + i];
      csv += fmt::format("{},{}{}", p, r.seed, vals);
      for (const auto& m : names) (csv += ',') += num(value_of(r.scalars, m));
      csv += "\n";
    }
    table += fmt::format("  {:>5}", p);
    for (std::size_t a = 0; a < axes.size(); ++a) table += fmt::format(" {:>16}", axes[a].values[idx[a]]);
    for (const auto& m : names) {
      const Stats s = summarize(column(res, p * k, p * k + k, m));
      summary += fmt::format("{}{},{},{},{},{},{},{}\n", p, vals, csv_cell(m), s.n, num(s.mean), num(s.std), num(s.ci95_low),
                             num(s.ci95_high));
    }
    for (const char* m : shown) table += fmt::format(" {:>20}", short_num(summarize(column(res, p * k, p * k + k, m)).mean));
    if (!slos.empty()) {
      const auto checks = check_slos(slos, res, p * k, p * k + k);
      std::size_t met = 0;
      for (std::size_t i = 0; i < slos.size(); ++i) {
        const auto& c = checks[i];
        met += c.met ? 1 : 0;
        t.slo += fmt::format("{}{},{},{},{},{},{},{},{},{}\n", p, vals, csv_cell(slos[i].text), csv_cell(slos[i].metric), slos[i].op,
                             num(slos[i].value), num(c.stats.mean), num(c.stats.ci95_low), num(c.stats.ci95_high),
                             c.met ? "true" : "false");
      }
      table += fmt::format(" {:>9}", fmt::format("{}/{}", met, slos.size()));
    }
    table += "\n";
  }
  return t;
}

/// The files a sweep (or the merge of its shards) publishes: sweep_slo.csv only with --slo.
std::vector<std::string> sweep_files(bool with_slos) {
  std::vector<std::string> f{"sweep.csv", "sweep_summary.csv"};
  if (with_slos) f.push_back("sweep_slo.csv");
  return f;
}

std::vector<std::pair<std::string, std::string>> sweep_outputs(const SweepText& t) {
  std::vector<std::pair<std::string, std::string>> f{{"sweep.csv", t.csv}, {"sweep_summary.csv", t.summary}};
  if (!t.slo.empty()) f.emplace_back("sweep_slo.csv", t.slo);
  return f;
}

/// shard.json `grid` of a sweep: what merge needs to write the outputs (and what identifies it).
ojson sweep_grid_json(const std::vector<VaryAxis>& axes, std::size_t points, std::size_t k, std::uint64_t s0,
                      const std::vector<Slo>& slos) {
  ojson jaxes = ojson::array();
  for (const auto& ax : axes) {
    ojson j{{"path", ax.path}, {"values", ax.values}};
    for (const auto& z : ax.zipped) j["zip"].push_back(ojson{{"path", z.path}, {"values", z.values}});  // only when zipped
    jaxes.push_back(std::move(j));
  }
  ojson g;
  g["axes"] = jaxes;
  g["points"] = points;
  g["seeds"] = k;
  g["first_seed"] = s0;
  if (!slos.empty()) {  // only with --slo: the grid of a sweep without one is unchanged
    ojson js = ojson::array();
    for (const auto& s : slos) js.push_back(s.text);
    g["slos"] = js;
  }
  return g;
}

}  // namespace

int sweep_command(const ScenarioSource& source, const std::vector<GridOption>& grid_options, const MultirunOptions& opts,
                  std::ostream& out, std::ostream& err) {
  std::vector<VaryAxis> axes;
  bool bad = !parse_grid(grid_options, kMaxSweepRuns, axes, err);
  std::vector<NamedMetric> group_metrics;
  if (!parse_metric_options(opts.metrics, group_metrics, err)) bad = true;
  std::vector<Slo> slos;
  if (!parse_slo_options(opts.slos, slos, group_metrics, err)) bad = true;
  if (!group_metrics.empty() && (opts.shard || opts.emit)) {
    const NamedMetric& g = group_metrics.front();
    err << diag_line(g.option, g.arg,
                     g.option == "--slo"
                         ? "a group metric cannot be checked in a sharded sweep (--shard, --emit): shards carry the summary metrics only"
                         : "a group metric cannot be a column of a sharded sweep (--shard, --emit): shards carry the summary metrics only")
        << "\n";
    bad = true;
  }
  if (axes.empty() && !bad) {
    err << "--vary: at least one --vary PATH=VALUES is required\n";
    bad = true;
  }
  std::set<std::string> seen;
  if (refuse_seed_overrides(source.overrides, seen, err)) bad = true;
  if (bad) return io::exit_invalid_input;
  std::uint64_t points = 1;
  for (const auto& ax : axes) {
    points *= ax.values.size();
    if (points * std::uint64_t(opts.seeds) > kMaxSweepRuns) break;
  }
  const std::uint64_t total = points * std::uint64_t(opts.seeds);
  if (total > kMaxSweepRuns) {
    std::string sizes;
    for (const auto& ax : axes) sizes += (sizes.empty() ? "" : " x ") + std::to_string(ax.values.size());
    err << fmt::format("--vary: a grid of {} values x {} seeds is more than the limit of {} runs\n", sizes, opts.seeds,
                       kMaxSweepRuns);
    return io::exit_invalid_input;
  }
  std::vector<ScenarioSource> srcs(points, source);
  for (std::size_t p = 0; p < points; ++p) {
    const auto idx = axis_indices(p, axes);
    for (std::size_t a = 0; a < axes.size(); ++a) {
      srcs[p].overrides.push_back(io::make_override("--vary", axes[a].path, axes[a].values[idx[a]]));
      for (const auto& z : axes[a].zipped) srcs[p].overrides.push_back(io::make_override("--zip", z.path, z.values[idx[a]]));
    }
  }
  std::optional<std::uint64_t> point0_seed;
  std::string fingerprint_text;
  if (!validate_points(srcs, source.seed, err, &point0_seed, &fingerprint_text)) return io::exit_invalid_input;
  const auto s0 = first_seed(source.seed, point0_seed.value_or(0), opts.seeds, err);
  if (!s0) return io::exit_invalid_input;
  const std::size_t k = std::size_t(opts.seeds);
  // The fingerprint of shard.json: the command, version, grid, seeds, --skip-bad-rows and every
  // point's resolved scenario (the traces' paths, not their rows).
  const ojson grid = sweep_grid_json(axes, points, k, *s0, slos);
  const std::string fingerprint = fingerprint_hex(
      fmt::format("sweep\n{}\n{}\nskip_bad_rows={}\n{}", version(), grid.dump(), source.skip_bad_rows, fingerprint_text));

  InterruptGuard interrupts;
  if (opts.emit) {  // one run of the first point measures the memory each shard asks for
    std::vector<RunMetrics> res;
    if (const auto rc = run_all("sweep", {{&srcs[0], *s0}}, res, 1, {}, err)) return *rc;
    return emit_jobs(EmitPlan{"sweep", fingerprint, points, peak_rss_mib()}, *opts.emit, opts.out_dir, out, err);
  }
  std::vector<std::size_t> mine(points);  // the points this process runs
  for (std::size_t p = 0; p < points; ++p) mine[p] = p;
  if (opts.shard) mine = shard_points(points, *opts.shard);

  std::optional<OutputDir> od;
  const std::vector<std::string> files = opts.shard ? std::vector<std::string>{kShardFileName}
                                                    : sweep_files(!slos.empty());
  if (int rc = open_out("sweep", opts.out_dir, files, od, err)) return rc;
  std::vector<std::pair<const ScenarioSource*, std::uint64_t>> runs;
  for (std::size_t p : mine)
    for (std::size_t i = 0; i < k; ++i) runs.emplace_back(&srcs[p], *s0 + i);
  std::vector<RunMetrics> res;
  Progress progress(err, opts.progress, "schedsim sweep", runs.size());
  const auto rc = run_all("sweep", runs, res, opts.jobs, progress.callback_units("points", k, mine.size()), err);
  progress.end();
  if (rc) return *rc;

  if (opts.shard) {
    ojson jruns = ojson::array();
    for (std::size_t j = 0; j < res.size(); ++j) {
      ojson metrics = ojson::object();  // in summary order (ordered_json keeps it)
      for (const auto& [m, v] : res[j].scalars) metrics[m] = v;
      jruns.push_back(ojson{{"point", mine[j / k]}, {"seed", res[j].seed}, {"metrics", metrics}});
    }
    if (int prc = publish_files("sweep", od, {{kShardFileName, shard_document("sweep", fingerprint, *opts.shard, grid, jruns)}}, err))
      return prc;
    out << fmt::format("schedsim sweep: shard {} of {}: {} of {} points x {} seeds ({} .. {})\n  outputs in {} (schedsim merge)\n",
                       opts.shard->index, opts.shard->count, mine.size(), points, k, *s0, *s0 + k - 1, opts.out_dir);
    return 0;
  }
  std::map<std::string, std::set<std::string>> keys;
  collect_group_keys(res, keys);
  if (!check_group_keys(keys, group_metrics, err)) return io::exit_invalid_input;
  append_group_metrics(res, group_metrics);
  const SweepText t = sweep_text(axes, points, k, *s0, res, slos);
  if (int prc = publish_files("sweep", od, sweep_outputs(t), err)) return prc;
  out << t.table << fmt::format("  outputs in {}\n", opts.out_dir);
  return 0;
}

int sweep_merge(const std::vector<ShardFile>& shards, const std::string& out_dir, std::ostream& out, std::ostream& err) {
  std::vector<VaryAxis> axes;
  std::vector<Slo> slos;
  std::size_t points = 0, k = 0;
  std::uint64_t s0 = 0;
  const ShardFile& first = shards.front();
  try {
    const ojson& g = first.grid;
    for (const auto& ja : g.at("axes")) {
      VaryAxis ax;
      ax.path = ja.at("path").get<std::string>();
      ax.values = ja.at("values").get<std::vector<std::string>>();
      if (ax.values.empty()) throw std::invalid_argument("an axis without values");
      if (const auto z = ja.find("zip"); z != ja.end())
        for (const auto& jz : *z) {
          VaryAxis zx;
          zx.path = jz.at("path").get<std::string>();
          zx.values = jz.at("values").get<std::vector<std::string>>();
          if (zx.values.size() != ax.values.size()) throw std::invalid_argument("a zipped path without one value per value of its axis");
          ax.zipped.push_back(std::move(zx));
        }
      axes.push_back(std::move(ax));
    }
    points = shard_uint(g.at("points"), kMaxSweepRuns);
    k = shard_uint(g.at("seeds"), kMaxSweepRuns);
    s0 = shard_uint(g.at("first_seed"), std::numeric_limits<std::uint64_t>::max());
    // Sizes checked without overflow: 63 axes of 2 values must not wrap the product to 0.
    std::size_t product = 1;
    for (const auto& ax : axes) {
      if (ax.values.size() > kMaxSweepRuns / product) throw std::invalid_argument(fmt::format("more than {} points", kMaxSweepRuns));
      product *= ax.values.size();
    }
    if (axes.empty() || product != points || k < 1 || k > kMaxSweepRuns / points) throw std::invalid_argument("inconsistent sizes");
    if (s0 > std::numeric_limits<std::uint64_t>::max() - (k - 1)) throw std::invalid_argument("first_seed + seeds overflows");
    if (const auto js = g.find("slos"); js != g.end())
      for (const auto& text : js->get<std::vector<std::string>>()) {
        std::string e;
        auto slo = parse_slo(text, e);
        if (!slo) throw std::invalid_argument(e);
        if (!slo->ref.group_by.empty()) throw std::invalid_argument("a group metric SLO in a shard: " + text);
        slos.push_back(std::move(*slo));
      }
  } catch (const std::exception& e) {
    err << fmt::format("{}: grid: malformed sweep grid ({})\n", first.file, e.what());
    return io::exit_invalid_input;
  }
  std::vector<RunMetrics> res(points * k);
  for (const auto& s : shards) {
    const auto mine = shard_points(points, s.shard);
    const auto mismatch = [&](const std::string& where, const std::string& what) {
      err << fmt::format("{}: {}: {}: does not match shard {} of {} of a grid of {} points x {} seeds\n", s.file, where, what,
                         s.shard.index, s.shard.count, points, k);
      return io::exit_invalid_input;
    };
    if (s.runs.size() != mine.size() * k)
      return mismatch("runs", fmt::format("{} runs (expected {})", s.runs.size(), mine.size() * k));
    for (std::size_t j = 0; j < s.runs.size(); ++j) {
      const std::string where = fmt::format("runs[{}]", j);
      try {
        const ojson& r = s.runs[j];
        const std::size_t p = shard_uint(r.at("point"), points);
        const std::uint64_t seed = shard_uint(r.at("seed"), std::numeric_limits<std::uint64_t>::max());
        if (p != mine[j / k] || seed != s0 + j % k)
          return mismatch(where, fmt::format("point {} seed {} (expected point {} seed {})", p, seed, mine[j / k], s0 + j % k));
        RunMetrics m;
        m.seed = seed;
        // Exactly the metric list of a run, in order: a missing metric would be written as 0 and
        // an unknown one would become a new column.
        const auto& names = summary_metric_names();
        const ojson& jm = r.at("metrics");
        if (!jm.is_object()) throw std::invalid_argument("metrics must be an object");
        std::size_t i = 0;
        for (const auto& [name, value] : jm.items()) {
          if (i >= names.size() || name != names[i]) {
            const auto at = std::find(names.begin(), names.end(), name);
            const bool known = at != names.end();
            if (known && std::size_t(at - names.begin()) > i) break;  // names[i] is missing: reported below
            err << fmt::format("{}: {}.metrics: {}: {} (a run carries exactly these metrics, in this order: {})\n",
                               io::escape_for_diagnostic(s.file), where, io::escape_for_diagnostic(ojson(name).dump()),
                               known ? "out of order or repeated" : "unknown metric", fmt::join(names, ", "));
            return io::exit_invalid_input;
          }
          m.scalars.emplace_back(name, shard_number(value));
          ++i;
        }
        if (i != names.size())
        {
          err << fmt::format("{}: {}.metrics: \"{}\": missing metric (a run carries exactly these metrics, in this order: {})\n",
                             io::escape_for_diagnostic(s.file), where, names[i], fmt::join(names, ", "));
          return io::exit_invalid_input;
        }
        res[p * k + j % k] = std::move(m);
      } catch (const std::exception& e) {
        return mismatch(where, fmt::format("malformed run ({})", io::escape_for_diagnostic(e.what())));
      }
    }
  }
  const SweepText t = sweep_text(axes, points, k, s0, res, slos);
  InterruptGuard interrupts;
  std::optional<OutputDir> od;
  if (int rc = open_out("merge", out_dir, sweep_files(!slos.empty()), od, err)) return rc;
  if (int prc = publish_files("merge", od, sweep_outputs(t), err)) return prc;
  out << t.table << fmt::format("  merged {} shards; outputs in {}\n", shards.size(), out_dir);
  return 0;
}

}  // namespace sim
