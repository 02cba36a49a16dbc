// `schedsim run --seeds`, `compare`, `sweep`, `plan` (sim/multirun_cli.hpp, docs/planning.md).
#include "sim/cli/multirun_cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/overrides.hpp"
#include "sim/cli/validate_cli.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/experiments/shard.hpp"
#include "sim/io/version.hpp"

namespace sim {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

/// A number as the output files print it: fmt "{}" (shortest round-trip).
std::string num(double x) { return fmt::format("{}", x); }
/// A number as the printed tables show it (6 significant digits).
std::string short_num(double x) { return fmt::format("{:.6g}", x); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A finite number written entirely as `t` (std::from_chars: no leading `+`, no spaces).
std::optional<double> parse_number(std::string_view t) {
  double x = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

/// `t` is an optionally negative decimal integer (any number of digits).
bool is_integer_text(std::string_view t) {
  if (!t.empty() && t.front() == '-') t.remove_prefix(1);
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// `t` (is_integer_text) as an int64, exactly; nullopt when it is out of range.
std::optional<std::int64_t> parse_int64(std::string_view t) {
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return x;
}

/// Digits after the decimal point of a number written as `t`; -1 with an exponent.
int decimals_of(std::string_view t) {
  if (t.find_first_of("eE") != std::string_view::npos) return -1;
  const auto dot = t.find('.');
  return dot == std::string_view::npos ? 0 : int(t.size() - dot - 1);
}

/// `x` rounded to `d` decimals (d < 0 or > 15: unchanged), as fmt "{}" prints it.
double round_to(double x, int d) {
  if (d < 0 || d > 15) return x;
  const double f = std::pow(10.0, d);
  const double r = std::round(x * f) / f;
  return r == 0 ? 0.0 : r;  // never -0
}

/// Splits `s` at `sep` outside [], {} and JSON strings.
std::vector<std::string> split_outside(std::string_view s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  bool in_str = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
    } else if (c == '"') {
      in_str = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == sep && depth == 0) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.emplace_back(s.substr(start));
  return out;
}

/// Position of the first `=` outside [] (as --set splits PATH=VALUE), or npos.
std::size_t path_value_split(std::string_view arg) {
  int depth = 0;
  for (std::size_t i = 0; i < arg.size(); ++i) {
    if (arg[i] == '[') ++depth;
    else if (arg[i] == ']' && depth > 0) --depth;
    else if (arg[i] == '=' && depth == 0) return i;
  }
  return std::string_view::npos;
}

std::string diag_line(std::string_view option, std::string_view arg, std::string_view rule) {
  return fmt::format("{}: {}: {}", option, io::escape_for_diagnostic(arg), io::escape_for_diagnostic(rule));
}

/// The rule broken by overriding `seed` in a multi-run command: every run's seed is --seed S +
/// i (i < --seeds K), so an override of the scenario's seed would be silently replaced.
constexpr const char* kSeedOverrideRule =
    "the seed cannot be overridden here: the runs use the seeds S .. S+K-1 of --seed S and --seeds K (use --seed)";

/// Prints one line per override of the path `seed` in `overrides` (each origin once, also
/// across calls through `seen`); returns true when there was one.
bool refuse_seed_overrides(const std::vector<io::Override>& overrides, std::set<std::string>& seen, std::ostream& err) {
  bool found = false;
  for (const auto& o : overrides) {
    if (o.path != "seed") continue;
    found = true;
    if (!seen.insert(o.origin()).second) continue;
    err << io::Diagnostic{io::Diagnostic::Severity::error, o.option, o.path, o.value_text, kSeedOverrideRule}.str() << "\n";
  }
  return found;
}

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

/// Progress line on stderr (terminal only): "LABEL: done/total runs".
class Progress {
 public:
  Progress(std::ostream& err, bool enabled, std::string label, std::size_t total)
      : err_(err), on_(enabled && ::isatty(STDERR_FILENO) == 1), label_(std::move(label)), total_(total) {}
  /// The callback for parallel_for (called serialised).
  std::function<void(std::size_t)> callback() {
    if (!on_) return {};
    return [this](std::size_t done) { err_ << fmt::format("\r{}: {}/{} runs", label_, done, total_) << std::flush; };
  }
  /// Same as callback() but reporting `unit` (e.g. points) of `per` runs each.
  std::function<void(std::size_t)> callback_units(const char* unit, std::size_t per, std::size_t units) {
    if (!on_) return {};
    return [this, unit, per, units](std::size_t done) {
      err_ << fmt::format("\r{}: {}/{} {} ({}/{} runs)", label_, done / per, units, unit, done, total_) << std::flush;
    };
  }
  void end() {
    if (on_) err_ << "\n";
  }

 private:
  std::ostream& err_;
  bool on_;
  std::string label_;
  std::size_t total_;
};

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

std::string scenario_label(const ScenarioSource& src, const ResolvedScenario& r) {
  if (!r.scenario.name.empty()) return r.scenario.name;
  return src.path.empty() ? "<default>" : src.path;
}

/// Validates every point's source with seed `seed` (no simulation). Diagnostics are printed
/// once per distinct line; a line not given by every point names its points. Returns false
/// when a point has an error. `fingerprint_text` (optional) gets one line per point: the
/// fingerprint_hex of its resolved scenario.
bool validate_points(const std::vector<ScenarioSource>& points, std::optional<std::uint64_t> seed, std::ostream& err,
                     std::optional<std::uint64_t>* point0_seed, std::string* fingerprint_text = nullptr) {
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

}  // namespace

// ------------------------------------------------------------------ parsing

std::optional<VaryAxis> parse_vary(std::string_view arg, std::uint64_t max_values, std::string& error) {
  const auto eq = path_value_split(arg);
  if (eq == std::string_view::npos || eq == 0) {
    error = diag_line("--vary", arg, eq == 0 ? "empty PATH: expected PATH=v1,v2,... or PATH=lo..hi[:step]"
                                             : "expected PATH=v1,v2,... or PATH=lo..hi[:step] (no `=`)");
    return std::nullopt;
  }
  VaryAxis ax;
  ax.path = std::string(arg.substr(0, eq));
  const std::string_view text = arg.substr(eq + 1);
  if (text.empty()) {
    error = diag_line("--vary", arg, "no values after `=`");
    return std::nullopt;
  }
  // A range: lo..hi[:step] where lo and hi are numbers.
  if (const auto dots = text.find(".."); dots != std::string_view::npos) {
    const std::string_view lo_t = text.substr(0, dots);
    std::string_view rest = text.substr(dots + 2);
    const auto colon = rest.find(':');
    const std::string_view hi_t = rest.substr(0, colon);
    const std::string_view step_t = colon == std::string_view::npos ? std::string_view("1") : rest.substr(colon + 1);
    // Integers (lo, hi and step all written as integers): exact int64 arithmetic, never doubles
    // (9007199254740993 is not a double).
    if (is_integer_text(lo_t) && is_integer_text(hi_t) && is_integer_text(step_t)) {
      const auto lo = parse_int64(lo_t), hi = parse_int64(hi_t), step = parse_int64(step_t);
      for (const auto& [t, v] : {std::pair{lo_t, lo}, std::pair{hi_t, hi}, std::pair{step_t, step}})
        if (!v) {
          error = diag_line("--vary", arg,
                            fmt::format("`{}` is out of range: integers go from -9223372036854775808 to 9223372036854775807", t));
          return std::nullopt;
        }
      if (!(*step > 0)) {
        error = diag_line("--vary", arg, fmt::format("step `{}` must be a number > 0", step_t));
        return std::nullopt;
      }
      if (*lo > *hi) {
        error = diag_line("--vary", arg, fmt::format("lo {} is greater than hi {}", lo_t, hi_t));
        return std::nullopt;
      }
      // hi - lo fits in uint64 (two's complement difference of hi >= lo).
      const std::uint64_t span = std::uint64_t(*hi) - std::uint64_t(*lo);
      const std::uint64_t steps = span / std::uint64_t(*step);  // values: steps + 1
      if (steps >= max_values) {
        error = diag_line("--vary", arg, fmt::format("{} values; at most {} are allowed",
                                                     steps == std::numeric_limits<std::uint64_t>::max()
                                                         ? std::string("18446744073709551616")
                                                         : std::to_string(steps + 1),
                                                     max_values));
        return std::nullopt;
      }
      ax.range = true;
      for (std::uint64_t i = 0; i <= steps; ++i) {
        // lo + i * step <= hi: computed in uint64 (no signed overflow), exact in int64.
        const auto v = std::int64_t(std::uint64_t(*lo) + i * std::uint64_t(*step));
        ax.values.push_back(std::to_string(v));
        ax.numbers.push_back(double(v));
        ax.integers.push_back(v);
      }
      return ax;
    }
    const auto lo = parse_number(lo_t), hi = parse_number(hi_t);
    if (lo && hi) {
      const auto step = parse_number(step_t);
      if (!step || !(*step > 0)) {
        error = diag_line("--vary", arg, fmt::format("step `{}` must be a number > 0", step_t));
        return std::nullopt;
      }
      if (*lo > *hi) {
        error = diag_line("--vary", arg, fmt::format("lo {} is greater than hi {}", lo_t, hi_t));
        return std::nullopt;
      }
      const long double count_ld = std::floor(((long double)*hi - *lo) / *step + 1e-9L) + 1;
      if (count_ld > (long double)max_values) {
        error = diag_line("--vary", arg, fmt::format("{} values; at most {} are allowed", double(count_ld), max_values));
        return std::nullopt;
      }
      const auto count = std::size_t(count_ld);
      ax.range = true;
      const int d = std::max({decimals_of(lo_t), decimals_of(hi_t), decimals_of(step_t)});
      const bool exp = decimals_of(lo_t) < 0 || decimals_of(hi_t) < 0 || decimals_of(step_t) < 0;
      for (std::size_t i = 0; i < count; ++i) {
        const double v = round_to(*lo + double(i) * *step, exp ? -1 : d);
        ax.values.push_back(num(v));
        ax.numbers.push_back(v);
      }
      return ax;
    }
  }
  ax.values = split_outside(text, ',');
  if (ax.values.size() > max_values) {
    error = diag_line("--vary", arg, fmt::format("{} values; at most {} are allowed", ax.values.size(), max_values));
    return std::nullopt;
  }
  for (std::size_t i = 0; i < ax.values.size(); ++i) {
    if (ax.values[i].empty()) {
      error = diag_line("--vary", arg, fmt::format("value {} is empty", i + 1));
      return std::nullopt;
    }
  }
  return ax;
}

std::optional<Slo> parse_slo(std::string_view arg, std::string& error) {
  const auto fail = [&](const std::string& rule) {
    error = diag_line("--slo", arg, rule);
    return std::nullopt;
  };
  const auto pos = arg.find_first_of("<>");
  if (pos == std::string_view::npos) return fail("expected METRIC<=VALUE (operators <=, <, >=, >)");
  Slo s;
  s.text = std::string(arg);
  s.metric = std::string(trim(arg.substr(0, pos)));
  s.op = std::string(1, arg[pos]);
  std::size_t vstart = pos + 1;
  if (vstart < arg.size() && arg[vstart] == '=') {
    s.op += '=';
    ++vstart;
  }
  if (s.metric.empty()) return fail("no METRIC before `" + s.op + "`: expected METRIC<=VALUE");
  const auto& names = summary_metric_names();
  if (std::find(names.begin(), names.end(), s.metric) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return fail(fmt::format("unknown metric `{}` (metrics: {})", s.metric, known));
  }
  const std::string_view vt = trim(arg.substr(vstart));
  const auto v = parse_number(vt);
  if (!v) {
    if (!vt.empty() && (vt.front() == '<' || vt.front() == '>' || vt.front() == '='))
      return fail(fmt::format("bad operator `{}{}` (operators <=, <, >=, >)", s.op, vt.front()));
    return fail(fmt::format("`{}` is not a finite number", vt));
  }
  s.value = *v;
  return s;
}

bool slo_met(const Slo& slo, double ci95_low, double ci95_high) {
  if (slo.op == "<=") return ci95_high <= slo.value;
  if (slo.op == "<") return ci95_high < slo.value;
  if (slo.op == ">=") return ci95_low >= slo.value;
  return ci95_low > slo.value;
}

// ------------------------------------------------------------------ run --seeds

int seeds_command(const ScenarioSource& source, const MultirunOptions& opts, std::ostream& out, std::ostream& err) {
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
  for (const char* by : {"tenant", "pool"}) {
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
};

SweepText sweep_text(const std::vector<VaryAxis>& axes, std::size_t points, std::size_t k, std::uint64_t s0,
                     const std::vector<RunMetrics>& res) {
  const auto names = metric_order(res);
  std::string paths;
  for (const auto& ax : axes) paths += "," + csv_cell(ax.path);
  SweepText t;
  std::string& csv = t.csv;
  std::string& summary = t.summary;
  std::string& table = t.table;
  csv = "point,seed" + paths;
  for (const auto& m : names) csv += "," + csv_cell(m);
  csv += "\n";
  summary = "point" + paths + ",metric,n,mean,std,ci95_low,ci95_high\n";
  table = fmt::format("schedsim sweep: {} points x {} seeds ({} .. {})\n  {:>5}", points, k, s0, s0 + k - 1, "point");
  for (const auto& ax : axes) table += fmt::format(" {:>16}", ax.path.size() > 16 ? "..." + ax.path.substr(ax.path.size() - 13) : ax.path);
  const char* shown[] = {"mean_wait_s", "p95_wait_s", "mean_jct_s", "gpu_allocation_ratio"};
  for (const char* m : shown) table += fmt::format(" {:>20}", m);
  table += "\n";
  for (std::size_t p = 0; p < points; ++p) {
    const auto idx = axis_indices(p, axes);
    std::string vals;
    for (std::size_t a = 0; a < axes.size(); ++a) (vals += ',') += csv_cell(axes[a].values[idx[a]]);  // not "," + s: GCC 12 -Wrestrict false positive
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
    table += "\n";
  }
  return t;
}

/// shard.json `grid` of a sweep: what merge needs to write the outputs (and what identifies it).
ojson sweep_grid_json(const std::vector<VaryAxis>& axes, std::size_t points, std::size_t k, std::uint64_t s0) {
  ojson jaxes = ojson::array();
  for (const auto& ax : axes) jaxes.push_back(ojson{{"path", ax.path}, {"values", ax.values}});
  ojson g;
  g["axes"] = jaxes;
  g["points"] = points;
  g["seeds"] = k;
  g["first_seed"] = s0;
  return g;
}

}  // namespace

int sweep_command(const ScenarioSource& source, const std::vector<std::string>& vary, const MultirunOptions& opts,
                  std::ostream& out, std::ostream& err) {
  std::vector<VaryAxis> axes;
  bool bad = false;
  for (const auto& v : vary) {
    std::string e;
    if (auto ax = parse_vary(v, kMaxSweepRuns, e)) {
      if (ax->path == "seed") {
        err << diag_line("--vary", v, kSeedOverrideRule) << "\n";
        bad = true;
      }
      for (const auto& other : axes)
        if (other.path == ax->path) {
          err << diag_line("--vary", v, fmt::format("PATH `{}` is varied twice", ax->path)) << "\n";
          bad = true;
        }
      axes.push_back(std::move(*ax));
    } else {
      err << e << "\n";
      bad = true;
    }
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
    for (std::size_t a = 0; a < axes.size(); ++a)
      srcs[p].overrides.push_back(io::make_override("--vary", axes[a].path, axes[a].values[idx[a]]));
  }
  std::optional<std::uint64_t> point0_seed;
  std::string fingerprint_text;
  if (!validate_points(srcs, source.seed, err, &point0_seed, &fingerprint_text)) return io::exit_invalid_input;
  const auto s0 = first_seed(source.seed, point0_seed.value_or(0), opts.seeds, err);
  if (!s0) return io::exit_invalid_input;
  const std::size_t k = std::size_t(opts.seeds);
  // The fingerprint of shard.json: the command, version, grid, seeds, --skip-bad-rows and every
  // point's resolved scenario (the traces' paths, not their rows).
  const ojson grid = sweep_grid_json(axes, points, k, *s0);
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
                                                    : std::vector<std::string>{"sweep.csv", "sweep_summary.csv"};
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
  const SweepText t = sweep_text(axes, points, k, *s0, res);
  if (int prc = publish_files("sweep", od, {{"sweep.csv", t.csv}, {"sweep_summary.csv", t.summary}}, err)) return prc;
  out << t.table << fmt::format("  outputs in {}\n", opts.out_dir);
  return 0;
}

int sweep_merge(const std::vector<ShardFile>& shards, const std::string& out_dir, std::ostream& out, std::ostream& err) {
  std::vector<VaryAxis> axes;
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
  const SweepText t = sweep_text(axes, points, k, s0, res);
  InterruptGuard interrupts;
  std::optional<OutputDir> od;
  if (int rc = open_out("merge", out_dir, {"sweep.csv", "sweep_summary.csv"}, od, err)) return rc;
  if (int prc = publish_files("merge", od, {{"sweep.csv", t.csv}, {"sweep_summary.csv", t.summary}}, err)) return prc;
  out << t.table << fmt::format("  merged {} shards; outputs in {}\n", shards.size(), out_dir);
  return 0;
}

// ------------------------------------------------------------------ plan

int plan_command(const ScenarioSource& source, const PlanArgs& args, const MultirunOptions& opts, std::ostream& out,
                 std::ostream& err) {
  bool bad = false;
  std::string e;
  auto axis = parse_vary(args.vary, kMaxPlanValues, e);
  if (!axis) {
    err << e << "\n";
    bad = true;
  } else if (!axis->range) {
    err << diag_line("--vary", args.vary, "plan needs a numeric range PATH=lo..hi[:step]") << "\n";
    bad = true;
  } else if (axis->path == "seed") {
    err << diag_line("--vary", args.vary, kSeedOverrideRule) << "\n";
    bad = true;
  }
  std::set<std::string> seen;
  if (refuse_seed_overrides(source.overrides, seen, err)) bad = true;
  std::vector<Slo> slos;
  for (const auto& s : args.slos) {
    if (auto slo = parse_slo(s, e)) slos.push_back(std::move(*slo));
    else {
      err << e << "\n";
      bad = true;
    }
  }
  if (args.slos.empty()) {
    err << "--slo: at least one --slo METRIC<=VALUE is required\n";
    bad = true;
  }
  std::string comp_path;
  double comp_total = 0;
  int comp_decimals = 0;
  if (args.complement) {
    const std::string_view c = *args.complement;
    const auto eq = path_value_split(c);
    const auto total = eq == std::string_view::npos || eq == 0 ? std::nullopt : parse_number(c.substr(eq + 1));
    if (!total) {
      err << diag_line("--complement", c, "expected PATH2=TOTAL with TOTAL a number") << "\n";
      bad = true;
    } else {
      comp_path = std::string(c.substr(0, eq));
      comp_total = *total;
      comp_decimals = decimals_of(c.substr(eq + 1));
      if (axis && comp_path == axis->path) {
        err << diag_line("--complement", c, "PATH2 is the --vary PATH") << "\n";
        bad = true;
      } else if (comp_path == "seed") {
        err << diag_line("--complement", c, kSeedOverrideRule) << "\n";
        bad = true;
      }
    }
  }
  if (bad) return io::exit_invalid_input;

  const std::size_t n = axis->values.size();
  std::vector<ScenarioSource> srcs(n, source);
  const bool int_grid = std::all_of(axis->values.begin(), axis->values.end(), [](const std::string& v) { return is_integer_text(v); });
  // An integer grid and an integer TOTAL: the rest is exact (int64, overflow refused).
  std::optional<std::int64_t> comp_int;
  if (!comp_path.empty() && !axis->integers.empty()) {
    const std::string total_t = args.complement->substr(path_value_split(*args.complement) + 1);  // owned: not a view of a temporary
    if (is_integer_text(total_t)) {
      comp_int = parse_int64(total_t);
      bool fits = comp_int.has_value();
      for (std::size_t i = 0; fits && i < n; ++i) {
        std::int64_t rest = 0;
        fits = !__builtin_sub_overflow(*comp_int, axis->integers[i], &rest);
      }
      if (!fits) {
        err << diag_line("--complement", *args.complement,
                         "TOTAL - value is out of range: integers go from -9223372036854775808 to 9223372036854775807")
            << "\n";
        return io::exit_invalid_input;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    srcs[i].overrides.push_back(io::make_override("--vary", axis->path, axis->values[i]));
    if (comp_int) {
      srcs[i].overrides.push_back(io::make_override("--complement", comp_path, std::to_string(*comp_int - axis->integers[i])));
    } else if (!comp_path.empty()) {
      double rest = comp_total - axis->numbers[i];
      int d = comp_decimals;
      for (const auto& v : axis->values) d = std::max(d, decimals_of(v));
      rest = round_to(rest, d);
      srcs[i].overrides.push_back(io::make_override("--complement", comp_path, num(rest)));
    }
  }
  std::optional<std::uint64_t> point0_seed;
  if (!validate_points(srcs, source.seed, err, &point0_seed)) return io::exit_invalid_input;
  const auto s0 = first_seed(source.seed, point0_seed.value_or(0), opts.seeds, err);
  if (!s0) return io::exit_invalid_input;
  const std::size_t k = std::size_t(opts.seeds);
  if (k == 1) err << "schedsim plan: note: one seed: every interval has width 0 (use --seeds 5 or more)\n";

  InterruptGuard interrupts;
  std::optional<OutputDir> od;
  if (int rc = open_out("plan", opts.out_dir, {"plan.json"}, od, err)) return rc;

  struct Eval {
    std::vector<std::pair<std::string, Stats>> metrics;
    bool met = false;
  };
  std::map<std::size_t, Eval> evals;  // grid index -> evaluation
  const bool tty = opts.progress && ::isatty(STDERR_FILENO) == 1;
  out << fmt::format("schedsim plan: {} in [{}, {}] ({} values), {} seed{} ({} .. {}) per value\n", axis->path, axis->values.front(),
                     axis->values.back(), n, k, k == 1 ? "" : "s", *s0, *s0 + k - 1);
  // Evaluates the grid indices `want` (those not evaluated yet) in one parallel batch.
  auto evaluate = [&](std::vector<std::size_t> want) -> std::optional<int> {
    want.erase(std::remove_if(want.begin(), want.end(), [&](std::size_t i) { return evals.count(i) > 0; }), want.end());
    if (want.empty()) return std::nullopt;
    std::vector<std::pair<const ScenarioSource*, std::uint64_t>> runs;
    for (std::size_t i : want)
      for (std::size_t s = 0; s < k; ++s) runs.emplace_back(&srcs[i], *s0 + s);
    std::string label = "schedsim plan: " + axis->path + "=" + axis->values[want[0]];
    for (std::size_t j = 1; j < want.size(); ++j) label += "," + axis->values[want[j]];
    Progress progress(err, tty, label, runs.size());
    std::vector<RunMetrics> res;
    const auto rc = run_all("plan", runs, res, opts.jobs, progress.callback(), err);
    progress.end();
    if (rc) return rc;
    for (std::size_t j = 0; j < want.size(); ++j) {
      Eval ev;
      ev.met = true;
      for (const auto& m : metric_order(res)) ev.metrics.emplace_back(m, summarize(column(res, j * k, j * k + k, m)));
      std::string line = fmt::format("  {}={}:", axis->path, axis->values[want[j]]);
      for (const auto& slo : slos) {
        bool ok = false;
        for (const auto& [m, s] : ev.metrics)
          if (m == slo.metric) {
            ok = slo_met(slo, s.ci95_low, s.ci95_high);
            line += fmt::format(" {} mean {} [{}, {}] {}", m, short_num(s.mean), short_num(s.ci95_low), short_num(s.ci95_high),
                                ok ? "ok" : "FAIL");
          }
        ev.met = ev.met && ok;
      }
      out << line << (ev.met ? "  -> meets every SLO\n" : "  -> not met\n");
      evals[want[j]] = std::move(ev);
    }
    return std::nullopt;
  };

  // Bisection, assuming "more is better": the smallest index meeting every SLO.
  std::optional<std::size_t> answer;
  if (auto rc = evaluate({n - 1})) return *rc;
  if (evals[n - 1].met) {
    std::ptrdiff_t lo = -1, hi = std::ptrdiff_t(n - 1);  // lo fails (or is below the grid), hi meets
    while (hi - lo > 1) {
      const std::ptrdiff_t mid = lo + (hi - lo) / 2;
      if (auto rc = evaluate({std::size_t(mid)})) return *rc;
      (evals[std::size_t(mid)].met ? hi : lo) = mid;
    }
    answer = std::size_t(hi);
    std::vector<std::size_t> below;  // the two grid values below the answer
    for (std::size_t d = 1; d <= 2 && d <= *answer; ++d) below.push_back(*answer - d);
    if (auto rc = evaluate(below)) return *rc;
  }
  // Monotone: sorted by value, the evaluated points fail, then meet (never meet, then fail).
  bool monotone = true;
  bool seen_met = false;
  std::vector<std::string> smaller_met;
  for (const auto& [i, ev] : evals) {
    if (seen_met && !ev.met) monotone = false;
    seen_met = seen_met || ev.met;
    if (answer && i < *answer && ev.met) smaller_met.push_back(axis->values[i]);
  }
  if (!smaller_met.empty()) monotone = false;

  auto value_json = [&](std::size_t i) -> ojson {
    if (!axis->integers.empty()) return axis->integers[i];
    if (int_grid) return std::int64_t(axis->numbers[i]);
    return axis->numbers[i];
  };
  ojson plan;
  plan["path"] = axis->path;
  plan["answer"] = answer ? value_json(*answer) : ojson(nullptr);
  plan["met"] = answer.has_value();
  plan["monotone"] = monotone;
  ojson jslos = ojson::array();
  for (const auto& s : slos) jslos.push_back(ojson{{"metric", s.metric}, {"op", s.op}, {"value", s.value}});
  plan["slos"] = jslos;
  ojson pts = ojson::array();
  for (const auto& [i, ev] : evals) {
    ojson p;
    p["value"] = value_json(i);
    p["met"] = ev.met;
    ojson ms = ojson::object();
    for (const auto& [m, s] : ev.metrics) ms[m] = stats_json(s);
    p["metrics"] = ms;
    pts.push_back(p);
  }
  plan["points"] = pts;
  if (int prc = publish_files("plan", od, {{"plan.json", plan.dump(2) + "\n"}}, err)) return prc;
  if (!monotone) {
    std::string list;
    for (const auto& v : smaller_met) list += (list.empty() ? "" : ", ") + v;
    const std::string why = smaller_met.empty()
                                ? "a smaller evaluated value meets every SLO while a larger one does not"
                                : fmt::format("{} below the answer also meet{} every SLO", list, smaller_met.size() == 1 ? "s" : "");
    err << fmt::format("schedsim plan: warning: the SLOs are not monotone in {} ({}); the answer is the bisection's, check "
                       "plan.json's points\n",
                       axis->path, why);
  }
  out << fmt::format("  outputs in {}\n", opts.out_dir);
  if (answer)
    out << fmt::format("answer: {}={}\n", axis->path, axis->values[*answer]);
  else
    out << fmt::format("answer: not met: no value of {} in [{}, {}] meets every SLO\n", axis->path, axis->values.front(),
                       axis->values.back());
  return 0;
}

}  // namespace sim
