// Internal to the multi-run commands (not part of the public API): the helpers they share.
// Used by multirun_cli.cpp (run --seeds, compare), sweep_cli.cpp (sweep, merge of sweeps),
// plan_cli.cpp (plan) and vary.cpp (option parsing); may change any time.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/cli/multirun_cli.hpp"
#include "sim/experiments/multirun.hpp"
#include "sim/io/overrides.hpp"
#include "sim/io/resolve.hpp"
#include "sim/outputs/publish.hpp"

namespace sim::multirun_detail {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// ------------------------------------------------------------------ numbers and option text (vary.cpp)

/// A number as the output files print it: fmt "{}" (shortest round-trip).
std::string num(double x);
/// A number as the printed tables show it (6 significant digits).
std::string short_num(double x);

/// A finite number written entirely as `t` (std::from_chars: no leading `+`, no spaces).
std::optional<double> parse_number(std::string_view t);

/// `t` is an optionally negative decimal integer (any number of digits).
bool is_integer_text(std::string_view t);

/// `t` (is_integer_text) as an int64, exactly; nullopt when it is out of range.
std::optional<std::int64_t> parse_int64(std::string_view t);

/// Digits after the decimal point of a number written as `t`; -1 with an exponent.
int decimals_of(std::string_view t);

/// `x` rounded to `d` decimals (d < 0 or > 15: unchanged), as fmt "{}" prints it.
double round_to(double x, int d);

/// Position of the first `=` outside [] (as --set splits PATH=VALUE), or npos.
std::size_t path_value_split(std::string_view arg);

/// `OPTION: ARG: RULE` (ARG and RULE escaped for a diagnostic line).
std::string diag_line(std::string_view option, std::string_view arg, std::string_view rule);

/// The rule broken by overriding `seed` in a multi-run command: every run's seed is --seed S +
/// i (i < --seeds K), so an override of the scenario's seed would be silently replaced.
inline constexpr const char* kSeedOverrideRule =
    "the seed cannot be overridden here: the runs use the seeds S .. S+K-1 of --seed S and --seeds K (use --seed)";

/// Prints one line per override of the path `seed` in `overrides` (each origin once, also
/// across calls through `seen`); returns true when there was one.
bool refuse_seed_overrides(const std::vector<io::Override>& overrides, std::set<std::string>& seen, std::ostream& err);

/// A group metric named by an option: OPTION (`--slo`, `--metric`), its argument as given, the metric.
struct NamedMetric {
  std::string option, arg;
  MetricRef ref;
};

/// Parses the --metric arguments; the group metrics among them are appended to `refs`. Prints
/// `--metric: NAME: RULE` for an unknown metric or dimension and a name given twice; returns
/// false then.
bool parse_metric_options(const std::vector<std::string>& args, std::vector<NamedMetric>& refs, std::ostream& err);

/// Appends to every run's scalars (text, metric_value) of each ref not there yet, so the
/// formatters of the summary metrics write them as further columns.
void append_group_metrics(std::vector<RunMetrics>& runs, const std::vector<NamedMetric>& refs);

/// Parses the --slo arguments of `run --seeds`, `sweep` and `compare` (an SLO is optional there)
/// into `slos`; the group metrics among them are appended to `refs` as option `--slo`. Prints
/// `--slo: ARG: RULE` for each bad one; returns false then.
bool parse_slo_options(const std::vector<std::string>& args, std::vector<Slo>& slos, std::vector<NamedMetric>& refs,
                       std::ostream& err);

/// One SLO checked on runs [from, to): the statistics of its metric over those runs (seeds) and
/// whether it is met with 95 % confidence (slo_met).
struct SloCheck {
  Stats stats;
  bool met = false;
};

/// Checks every SLO on runs [from, to) (metric_value of each run: a summary or group metric).
std::vector<SloCheck> check_slos(const std::vector<Slo>& slos, const std::vector<RunMetrics>& runs, std::size_t from,
                                 std::size_t to);

/// {"metric", "op", "value", "mean", "ci95_low", "ci95_high", "met"} of one checked SLO.
ojson slo_check_json(const Slo& slo, const SloCheck& c);

/// The printed line of one checked SLO: `SLO p95_wait_s<=3600: mean 1.2e+03 [1.1e+03, 1.3e+03]: met`.
std::string slo_check_text(const Slo& slo, const SloCheck& c);

/// Adds the group keys of `runs` (by dimension) to `keys`.
void collect_group_keys(const std::vector<RunMetrics>& runs, std::map<std::string, std::set<std::string>>& keys);

/// Checks that every ref's KEY is among `keys` of its dimension; prints `OPTION: ARG: unknown
/// DIMENSION `KEY`: ...` listing the keys seen and returns false when one is not.
bool check_group_keys(const std::map<std::string, std::set<std::string>>& keys, const std::vector<NamedMetric>& refs,
                      std::ostream& err);

/// Parses --vary / --zip options (command-line order) into `axes`: each --zip joins the axis of
/// the --vary before it. Prints every problem (bad syntax, `seed`, a path given twice, a --zip
/// without a --vary before it or with another count of values); returns false then.
bool parse_grid(const std::vector<GridOption>& grid, std::uint64_t max_values, std::vector<VaryAxis>& axes, std::ostream& err);

// ------------------------------------------------------------------ running and publishing (multirun_cli.cpp)

/// Checks --out before any simulation: "" or an existing non-directory is an input error (exit 2,
/// as `run`); then the staging directory is created (OutputError: exit 1). Returns 0 when ready.
int open_out(const char* cmd, const std::string& out_dir, const std::vector<std::string>& files, std::optional<OutputDir>& od,
             std::ostream& err);

/// Writes `files` into staging and publishes them. Returns the exit status.
int publish_files(const char* cmd, std::optional<OutputDir>& od, const std::vector<std::pair<std::string, std::string>>& files,
                  std::ostream& err);

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
                           std::ostream& err);

/// The first seed s (--seed or the scenario's) after checking that s + K - 1 fits in 64 bits.
std::optional<std::uint64_t> first_seed(std::optional<std::uint64_t> given, std::uint64_t scenario_seed, int k,
                                        std::ostream& err);

/// Metric names in output order: those of the first run, then any other run's extra ones.
std::vector<std::string> metric_order(const std::vector<RunMetrics>& runs);

/// The value of `key` in `m`; 0 when absent.
double value_of(const MetricList& m, const std::string& key);

/// Values of `metric` in runs [from, to).
std::vector<double> column(const std::vector<RunMetrics>& runs, std::size_t from, std::size_t to, const std::string& metric);

/// {"mean", "std", "ci95_low", "ci95_high", "n"} of `s`.
ojson stats_json(const Stats& s);

/// Validates every point's source with seed `seed` (no simulation). Diagnostics are printed
/// once per distinct line; a line not given by every point names its points. Returns false
/// when a point has an error. `fingerprint_text` (optional) gets one line per point: the
/// fingerprint_hex of its resolved scenario.
bool validate_points(const std::vector<ScenarioSource>& points, std::optional<std::uint64_t> seed, std::ostream& err,
                     std::optional<std::uint64_t>* point0_seed, std::string* fingerprint_text = nullptr);

}  // namespace sim::multirun_detail
