// Workload generator (docs/scenario-format.md "Workload generator").
#include "sim/io/workload.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <boost/random/discrete_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <fmt/format.h>

#include "sim/io/limits.hpp"

namespace sim::io {

namespace {

using Rng = boost::random::mt19937_64;

/// Candidate arrivals the thinning may reject before giving up (a profile whose peak is 1e12
/// times its other weights would otherwise loop for hours).
constexpr std::int64_t k_max_candidates = 100'000'000;

/// One stream per purpose, derived from the scenario seed and a tag (std::seed_seq's algorithm is
/// fixed by the C++ standard, so the streams are the same everywhere).
Rng stream(std::uint64_t seed, std::uint32_t tag) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), tag,
                    0x776b6c64u /* "wkld" */};
  return Rng(seq);
}

double round_ms(double s) { return std::round(s * 1000.0) / 1000.0; }

/// A sampler of one duration distribution (values in seconds, clamped to [min_s, max_s]).
class DurationSampler {
 public:
  DurationSampler(const DurationCfg& d, const std::string& path, const TraceOptions& opts) : cfg_(d) {
    if (d.distribution == "lognormal") {
      const double median = d.median_s.value_or(1);
      const double sigma = d.sigma ? *d.sigma : std::sqrt(2.0 * std::log(d.mean_s.value_or(median) / median));
      logn_ = boost::random::lognormal_distribution<double>(std::log(median), sigma);
    } else if (d.distribution == "exponential") {
      expo_ = boost::random::exponential_distribution<double>(1.0 / d.mean_s.value_or(1));
    } else {
      values_ = d.values;
      if (d.trace) {
        TraceLoad load;
        try {
          load = load_trace(*d.trace, opts);
        } catch (const TraceError& e) {
          throw WorkloadError(fmt::format("{}.trace: {}", path, e.what()));
        }
        for (const auto& t : load.tasks) values_.push_back(t.duration_s);
        if (load.tasks.empty())
          throw WorkloadError(fmt::format("{}.trace: \"{}\": the trace has no task to draw durations from", path,
                                          d.trace->path));
      }
      if (values_.empty()) throw WorkloadError(fmt::format("{}.values: []: no value to draw from", path));
      pick_ = boost::random::uniform_int_distribution<std::size_t>(0, values_.size() - 1);
    }
  }
  double operator()(Rng& rng) {
    double v = 0;
    if (cfg_.distribution == "lognormal") v = logn_(rng);
    else if (cfg_.distribution == "exponential") v = expo_(rng);
    else v = values_[pick_(rng)];
    v = std::clamp(v, cfg_.min_s, cfg_.max_s);
    return std::max(round_ms(v), 0.001);
  }

 private:
  DurationCfg cfg_;
  boost::random::lognormal_distribution<double> logn_;
  boost::random::exponential_distribution<double> expo_;
  std::vector<double> values_;
  boost::random::uniform_int_distribution<std::size_t> pick_;
};

template <class T>
boost::random::discrete_distribution<std::size_t> weights_of(const std::vector<T>& items) {
  std::vector<double> w;
  for (const auto& i : items) w.push_back(i.share);
  return boost::random::discrete_distribution<std::size_t>(w.begin(), w.end());
}

/// Draws one value of a choice (a fixed value draws nothing).
int draw(const ChoiceCfg<int>& c, boost::random::discrete_distribution<std::size_t>& dist, Rng& rng) {
  return c.fixed() ? c.values.front() : c.values[dist(rng)];
}

double max_of(const std::vector<double>& v) { return v.empty() ? 1.0 : *std::max_element(v.begin(), v.end()); }

}  // namespace

std::vector<TaskCfg> generate_workload(const Scenario& s, const std::vector<std::string>& taken,
                                       const TraceOptions& opts) {
  std::vector<TaskCfg> out;
  if (!s.workload) return out;
  const WorkloadCfg& w = *s.workload;
  if (w.classes.empty() || !(w.rate_per_hour > 0)) return out;

  // Samplers, built once (an empirical trace is read once per distribution).
  std::optional<DurationSampler> section_duration;
  if (w.duration) section_duration.emplace(*w.duration, "workload.duration", opts);
  std::vector<std::optional<DurationSampler>> class_duration(w.classes.size());
  std::vector<boost::random::discrete_distribution<std::size_t>> workers_dist, priority_dist;
  for (std::size_t i = 0; i < w.classes.size(); ++i) {
    const auto& c = w.classes[i];
    if (c.duration) class_duration[i].emplace(*c.duration, fmt::format("workload.classes[{}].duration", i), opts);
    else if (!section_duration)
      throw WorkloadError(fmt::format("workload.classes[{}].duration: <missing>: required key is missing", i));
    workers_dist.emplace_back(c.workers.shares.begin(), c.workers.shares.end());
    priority_dist.emplace_back(c.priority ? c.priority->shares.begin() : c.workers.shares.begin(),
                               c.priority ? c.priority->shares.end() : c.workers.shares.end());
  }
  auto class_dist = weights_of(w.classes);
  std::vector<NamedShareCfg> users = w.users.empty() ? std::vector<NamedShareCfg>{{"workload", 1}} : w.users;
  std::vector<NamedShareCfg> tenants = w.tenants.empty() ? std::vector<NamedShareCfg>{{"default", 1}} : w.tenants;
  auto user_dist = weights_of(users);
  auto tenant_dist = weights_of(tenants);
  // A class that names its users / tenants draws among them instead (one draw either way, so a
  // workload without class users or tenants draws exactly what it did before they existed).
  std::vector<std::optional<boost::random::discrete_distribution<std::size_t>>> class_user_dist(w.classes.size()),
      class_tenant_dist(w.classes.size());
  for (std::size_t i = 0; i < w.classes.size(); ++i) {
    if (!w.classes[i].users.empty()) class_user_dist[i] = weights_of(w.classes[i].users);
    if (!w.classes[i].tenants.empty()) class_tenant_dist[i] = weights_of(w.classes[i].tenants);
  }
  // The names drawn, interned once (not a lookup in the process-wide pool per task).
  auto interned = [](const std::vector<NamedShareCfg>& v) {
    std::vector<Interned> keys;
    keys.reserve(v.size());
    for (const auto& e : v) keys.emplace_back(e.name);
    return keys;
  };
  const std::vector<Interned> user_names = interned(users), tenant_names = interned(tenants);
  std::vector<std::vector<Interned>> class_user_names, class_tenant_names;
  for (const auto& c : w.classes) {
    class_user_names.push_back(interned(c.users));
    class_tenant_names.push_back(interned(c.tenants));
  }

  Rng arrivals = stream(s.seed, 1);
  Rng attrs = stream(s.seed, 2);

  // Non-homogeneous Poisson process by thinning: candidates at the peak rate, each kept with
  // probability rate(t) / peak rate, where rate(t) = rate_per_hour x daily[hour of day of t] x
  // weekly[day of t mod 7] (day 0 = simulation time 0).
  const double peak_per_s = w.rate_per_hour * max_of(w.daily_profile) * max_of(w.weekly_profile) / 3600.0;
  const double peak_mult = max_of(w.daily_profile) * max_of(w.weekly_profile);
  boost::random::exponential_distribution<double> gap(peak_per_s);
  boost::random::uniform_real_distribution<double> u01(0.0, 1.0);
  const std::int64_t max_count = w.tasks ? *w.tasks : limits::max_tasks;
  const double horizon = w.until_s ? *w.until_s : limits::max_time_s;
  // The names in use: `taken` and the renamed generated ones. A generated name (prefix + its
  // index) is never another generated name, nor a renamed one (those end in `-k`), so the
  // others need not be kept (a million-task workload held a million-node set here).
  std::set<std::string> names(taken.begin(), taken.end());
  // The count is known up front when given: one buffer, none of a growing vector's discarded
  // copies (576 bytes a task; an allocator that keeps freed memory, e.g. tcmalloc, would hold them).
  // Capped by the scenario limit (the JSON reader enforces it; a scenario built in code may not).
  if (w.tasks && *w.tasks > 0) out.reserve(static_cast<std::size_t>(std::min(*w.tasks, limits::max_tasks)));
  double t = w.start_s;
  std::int64_t candidates = 0;
  while (static_cast<std::int64_t>(out.size()) < max_count) {
    if (++candidates > k_max_candidates)
      throw WorkloadError(fmt::format("workload.arrival: the profiles rejected more than {} candidate arrivals (their peak "
                                      "is too far above their mean)", k_max_candidates));
    t += gap(arrivals);
    const double submit = round_ms(t);
    if (submit >= horizon) {
      if (!w.until_s)
        throw WorkloadError(fmt::format("workload.tasks: {}: only {} tasks arrived before {} s, the largest time",
                                        *w.tasks, out.size(), limits::max_time_s));
      break;
    }
    double mult = 1;
    if (!w.daily_profile.empty()) mult *= w.daily_profile[static_cast<std::size_t>(std::fmod(std::floor(submit / 3600.0), 24.0))];
    if (!w.weekly_profile.empty()) mult *= w.weekly_profile[static_cast<std::size_t>(std::fmod(std::floor(submit / 86400.0), 7.0))];
    const double keep = u01(arrivals);
    if (!(keep * peak_mult < mult)) continue;

    const std::size_t ci = class_dist(attrs);
    const WorkloadClassCfg& c = w.classes[ci];
    std::string name = generated_task_name(w.name_prefix, out.size());
    if (names.count(name) != 0) {
      std::string base = name;
      for (int k = 2; !names.insert(name).second; ++k) name = fmt::format("{}-{}", base, k);
    }
    TaskCfg& task = out.emplace_back(c.task);  // built in place (no 320-byte move per task)
    task.name = std::move(name);
    task.user = class_user_dist[ci] ? class_user_names[ci][(*class_user_dist[ci])(attrs)] : user_names[user_dist(attrs)];
    task.tenant = class_tenant_dist[ci] ? class_tenant_names[ci][(*class_tenant_dist[ci])(attrs)] : tenant_names[tenant_dist(attrs)];
    task.submit_s = submit;
    task.workers = draw(c.workers, workers_dist[ci], attrs);
    if (c.priority) {
      task.priority = draw(*c.priority, priority_dist[ci], attrs);
      task.priority_set = true;
    }
    task.duration_s = class_duration[ci] ? (*class_duration[ci])(attrs) : (*section_duration)(attrs);
    if (c.runtime_estimate_factor) {
      const auto [lo, hi] = *c.runtime_estimate_factor;
      const double f = lo == hi ? lo : boost::random::uniform_real_distribution<double>(lo, hi)(attrs);
      task.runtime_estimate_s = std::clamp(round_ms(task.duration_s * f), 0.001, limits::max_time_s);
    }
  }
  return out;
}

std::size_t apply_workload(Scenario& s, const TraceOptions& opts) {
  if (!s.workload) return 0;
  std::vector<std::string> taken;
  taken.reserve(s.tasks.size());
  for (const auto& t : s.tasks) taken.push_back(t.name);
  std::vector<TaskCfg> generated = generate_workload(s, taken, opts);
  for (const auto& t : generated) {
    check_task_values(t, [&](const std::string& field, const std::string& value, const std::string& rule) {
      throw WorkloadError(fmt::format("workload: generated task `{}`: {}: {}: {}", t.name, field, value, rule));
    });
  }
  const std::size_t n = generated.size();
  if (s.tasks.empty()) {
    s.tasks = std::move(generated);  // no second copy of the tasks (576 bytes each)
  } else {
    s.tasks.reserve(s.tasks.size() + n);
    for (auto& t : generated) s.tasks.push_back(std::move(t));
  }
  check_scenario_totals(s, [&](const std::string& field, const std::string& value, const std::string& rule) {
    throw WorkloadError(fmt::format("workload: with the {} generated tasks, {}: {}: {}", n, field, value, rule));
  });
  return n;
}

std::string generated_task_name(std::string_view prefix, std::size_t index) {
  char digits[24];
  const std::size_t n = std::size_t(std::to_chars(digits, digits + sizeof digits, index).ptr - digits);
  std::string name;
  name.reserve(prefix.size() + std::max<std::size_t>(n, 6));
  name.append(prefix);
  name.append(n < 6 ? 6 - n : 0, '0');
  name.append(digits, n);
  return name;
}

void apply_arrival_scale(Scenario& s) {
  if (s.arrival_scale == 1.0 || s.tasks.empty()) return;
  if (!(s.arrival_scale > 0 && s.arrival_scale <= limits::max_arrival_scale))
    throw WorkloadError(fmt::format("arrival_scale: {}: must be > 0 and <= {}", s.arrival_scale, limits::max_arrival_scale));
  double first = s.tasks.front().submit_s;
  for (const auto& t : s.tasks) first = std::min(first, t.submit_s);
  for (auto& t : s.tasks) {
    t.submit_s = first + (t.submit_s - first) * s.arrival_scale;
    if (t.submit_s > limits::max_time_s)
      throw WorkloadError(fmt::format("arrival_scale: {}: task `{}`: submit_s {} must be <= {} after scaling", s.arrival_scale,
                                      t.name, t.submit_s, limits::max_time_s));
  }
}

}  // namespace sim::io
