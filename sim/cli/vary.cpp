// Option text of sweep and plan: --vary (lists, integer and decimal ranges), --slo, numbers, diagnostics.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/cli/multirun_cli.hpp"
#include "sim/cli/multirun_detail.hpp"
#include "sim/io/diagnostics.hpp"

namespace sim {

namespace multirun_detail {

/// A number as the output files print it: fmt "{}" (shortest round-trip).
std::string num(double x) { return fmt::format("{}", x); }
/// A number as the printed tables show it (6 significant digits).
std::string short_num(double x) { return fmt::format("{:.6g}", x); }

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace multirun_detail

using namespace multirun_detail;

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

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::optional<MetricRef> parse_metric_ref(std::string_view text, std::string& rule) {
  MetricRef r;
  r.text = std::string(text);
  const auto open = text.find('[');
  if (open == std::string_view::npos) {
    const auto& names = summary_metric_names();
    if (std::find(names.begin(), names.end(), text) == names.end()) {
      rule = fmt::format("unknown metric `{}` (metrics: {}; or a group metric DIMENSION[KEY].METRIC, DIMENSION one of {})", text,
                         joined(names), joined(group_by_names()));
      return std::nullopt;
    }
    r.metric = r.text;
    return r;
  }
  const auto close = text.find(']', open);
  r.group_by = std::string(text.substr(0, open));
  const auto& dims = group_by_names();
  if (std::find(dims.begin(), dims.end(), r.group_by) == dims.end()) {
    rule = fmt::format("unknown dimension `{}` (dimensions: {})", r.group_by, joined(dims));
    return std::nullopt;
  }
  if (close == std::string_view::npos || close == open + 1 || close + 1 >= text.size() || text[close + 1] != '.') {
    rule = "expected DIMENSION[KEY].METRIC, e.g. tenant[vision].p95_wait_s";
    return std::nullopt;
  }
  r.group = std::string(text.substr(open + 1, close - open - 1));
  r.metric = std::string(text.substr(close + 2));
  const auto& gm = group_metric_names();
  if (std::find(gm.begin(), gm.end(), r.metric) == gm.end()) {
    rule = fmt::format("unknown group metric `{}` (group metrics: {})", r.metric, joined(gm));
    return std::nullopt;
  }
  return r;
}

double metric_value(const RunMetrics& r, const MetricRef& ref) {
  if (ref.group_by.empty()) return multirun_detail::value_of(r.scalars, ref.metric);
  const auto d = r.groups.find(ref.group_by);
  if (d == r.groups.end()) return 0.0;
  const auto g = d->second.find(ref.group);
  return g == d->second.end() ? 0.0 : multirun_detail::value_of(g->second, ref.metric);
}

namespace multirun_detail {

bool parse_metric_options(const std::vector<std::string>& args, std::vector<NamedMetric>& refs, std::ostream& err) {
  bool ok = true;
  std::set<std::string> seen;
  for (const auto& a : args) {
    std::string rule;
    auto r = parse_metric_ref(a, rule);
    if (!r) {
      err << diag_line("--metric", a, rule) << "\n";
      ok = false;
    } else if (!seen.insert(a).second) {
      err << diag_line("--metric", a, "named twice") << "\n";
      ok = false;
    } else if (!r->group_by.empty()) {
      refs.push_back(NamedMetric{"--metric", a, std::move(*r)});
    }
  }
  return ok;
}

void append_group_metrics(std::vector<RunMetrics>& runs, const std::vector<NamedMetric>& refs) {
  for (auto& r : runs)
    for (const auto& n : refs)
      if (std::none_of(r.scalars.begin(), r.scalars.end(), [&](const auto& kv) { return kv.first == n.ref.text; }))
        r.scalars.emplace_back(n.ref.text, metric_value(r, n.ref));
}

void collect_group_keys(const std::vector<RunMetrics>& runs, std::map<std::string, std::set<std::string>>& keys) {
  for (const auto& r : runs)
    for (const auto& [by, groups] : r.groups)
      for (const auto& [g, ml] : groups) keys[by].insert(g);
}

bool check_group_keys(const std::map<std::string, std::set<std::string>>& keys, const std::vector<NamedMetric>& refs,
                      std::ostream& err) {
  bool ok = true;
  std::set<std::string> said;
  for (const auto& n : refs) {
    const auto it = keys.find(n.ref.group_by);
    if (it != keys.end() && it->second.count(n.ref.group)) continue;
    if (!said.insert(n.option + n.arg).second) continue;
    std::vector<std::string> seen;
    if (it != keys.end()) seen.assign(it->second.begin(), it->second.end());
    err << diag_line(n.option, n.arg,
                     fmt::format("unknown {} `{}`: no run has that group ({} keys seen in the runs: {})", n.ref.group_by, n.ref.group,
                                 n.ref.group_by, seen.empty() ? std::string("none") : joined(seen)))
        << "\n";
    ok = false;
  }
  return ok;
}

bool parse_slo_options(const std::vector<std::string>& args, std::vector<Slo>& slos, std::vector<NamedMetric>& refs,
                       std::ostream& err) {
  bool ok = true;
  for (const auto& a : args) {
    std::string e;
    auto slo = parse_slo(a, e);
    if (!slo) {
      err << e << "\n";
      ok = false;
      continue;
    }
    if (!slo->ref.group_by.empty()) refs.push_back(NamedMetric{"--slo", a, slo->ref});
    slos.push_back(std::move(*slo));
  }
  return ok;
}

std::vector<SloCheck> check_slos(const std::vector<Slo>& slos, const std::vector<RunMetrics>& runs, std::size_t from,
                                 std::size_t to) {
  std::vector<SloCheck> checks;
  for (const auto& slo : slos) {
    std::vector<double> v;
    for (std::size_t i = from; i < to; ++i) v.push_back(metric_value(runs[i], slo.ref));
    SloCheck c;
    c.stats = summarize(v);
    c.met = slo_met(slo, c.stats.ci95_low, c.stats.ci95_high);
    checks.push_back(c);
  }
  return checks;
}

ojson slo_check_json(const Slo& slo, const SloCheck& c) {
  return ojson{{"metric", slo.metric}, {"op", slo.op},           {"value", slo.value},
               {"mean", c.stats.mean}, {"ci95_low", c.stats.ci95_low}, {"ci95_high", c.stats.ci95_high},
               {"met", c.met}};
}

std::string slo_check_text(const Slo& slo, const SloCheck& c) {
  return fmt::format("SLO {}{}{}: mean {} [{}, {}]: {}", slo.metric, slo.op, short_num(slo.value), short_num(c.stats.mean),
                     short_num(c.stats.ci95_low), short_num(c.stats.ci95_high), c.met ? "met" : "NOT MET");
}

bool parse_grid(const std::vector<GridOption>& grid, std::uint64_t max_values, std::vector<VaryAxis>& axes, std::ostream& err) {
  bool bad = false;
  std::set<std::string> paths;
  for (const auto& g : grid) {
    const char* option = g.zip ? "--zip" : "--vary";
    std::string e;
    auto ax = parse_vary(g.text, max_values, e);
    if (!ax) {
      if (g.zip && e.rfind("--vary: ", 0) == 0) e = "--zip: " + e.substr(8);
      err << e << "\n";
      bad = true;
      continue;
    }
    if (ax->path == "seed") {
      err << diag_line(option, g.text, kSeedOverrideRule) << "\n";
      bad = true;
    }
    if (!paths.insert(ax->path).second) {
      err << diag_line(option, g.text, fmt::format("PATH `{}` is varied twice", ax->path)) << "\n";
      bad = true;
    }
    if (!g.zip) {
      axes.push_back(std::move(*ax));
      continue;
    }
    if (axes.empty()) {
      err << diag_line("--zip", g.text, "no --vary before it: a --zip pairs its values one for one with the preceding --vary")
          << "\n";
      bad = true;
    } else if (ax->values.size() != axes.back().values.size()) {
      err << diag_line("--zip", g.text,
                       fmt::format("{} value{}; the preceding --vary {} has {} (a --zip pairs its values one for one with it)",
                                   ax->values.size(), ax->values.size() == 1 ? "" : "s", axes.back().path,
                                   axes.back().values.size()))
          << "\n";
      bad = true;
    } else {
      axes.back().zipped.push_back(std::move(*ax));
    }
  }
  return !bad;
}

}  // namespace multirun_detail

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
  {
    std::string rule;
    auto ref = parse_metric_ref(s.metric, rule);
    if (!ref) return fail(rule);
    s.ref = std::move(*ref);
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

}  // namespace sim
