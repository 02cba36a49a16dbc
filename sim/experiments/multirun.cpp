// Multi-run layer: statistics, metrics of one run, the parallel runner (sim/multirun.hpp).
#include "sim/experiments/multirun.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "sim/outputs/publish.hpp"
#include "sim/engine/simulator.hpp"

namespace sim {

double student_t_975(std::size_t dof) {
  if (dof == 0) throw std::invalid_argument("student_t_975: 0 degrees of freedom");
  const boost::math::students_t dist(static_cast<double>(dof));
  return boost::math::quantile(dist, 0.975);
}

namespace {

/// Mean of `v` (non-empty): exactly v[0] when all values are equal, else the long-double sum / n.
double mean_of(std::span<const double> v) {
  if (std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; })) return v[0];
  long double s = 0;
  for (double x : v) s += x;
  return double(s / (long double)v.size());
}

}  // namespace

Stats summarize(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("summarize: no values");
  for (double x : values)
    if (!std::isfinite(x)) throw std::invalid_argument(fmt::format("summarize: value {} is not finite", x));
  Stats s;
  s.n = values.size();
  s.mean = mean_of(values);
  const bool equal = std::all_of(values.begin(), values.end(), [&](double x) { return x == values[0]; });
  if (s.n > 1 && !equal) {
    long double ss = 0;
    for (double x : values) ss += ((long double)x - s.mean) * ((long double)x - s.mean);
    s.std = double(std::sqrt(ss / (long double)(s.n - 1)));
  }
  const double half = s.std == 0 ? 0.0 : student_t_975(s.n - 1) * s.std / std::sqrt(double(s.n));
  s.ci95_low = half == 0 ? s.mean : s.mean - half;
  s.ci95_high = half == 0 ? s.mean : s.mean + half;
  return s;
}

PairedStats summarize_paired(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.empty())
    throw std::invalid_argument(fmt::format("summarize_paired: {} and {} values (need the same number, > 0)", a.size(), b.size()));
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = b[i] - a[i];
  const Stats sd = summarize(d);
  PairedStats p;
  p.n = a.size();
  p.a = mean_of(a);
  p.b = mean_of(b);
  p.diff = sd.mean;
  p.ci95_low = sd.ci95_low;
  p.ci95_high = sd.ci95_high;
  return p;
}

const std::vector<std::string>& summary_metric_names() {
  static const std::vector<std::string> names = {
      "tasks",          "attempts",    "succeeded",     "failed",        "unfinished",           "never_started",
      "not_submitted",  "makespan_s",  "censor_s",      "mean_wait_s",   "p95_wait_s",           "mean_jct_s",
      "mean_slowdown",  "mean_bounded_slowdown",        "gpu_allocation_ratio", "cpu_allocation_ratio",
      "preemptions",    "resubmissions", "lost_work_s", "events",
      "cost_total",     "cost_reserved", "cost_pay_as_you_go", "cost_spot", "cost_idle", "cost_reserved_unused",
      "cost_lost_work"};
  return names;
}

const std::vector<std::string>& group_metric_names() {
  static const std::vector<std::string> names = {"tasks",       "succeeded",  "failed",        "unfinished",
                                                 "never_started", "mean_wait_s", "p95_wait_s",   "mean_jct_s",
                                                 "mean_slowdown", "mean_bounded_slowdown", "gpu_seconds", "vcpu_seconds",
                                                 "cost", "preemptions", "resubmissions", "lost_work_s",
                                                 "gpu_allocation_share"};
  return names;
}

const std::vector<std::string>& group_by_names() {
  static const std::vector<std::string> names = {"user", "tenant", "pool", "gpu_model", "capacity"};
  return names;
}

RunMetrics metrics_from_summary(const nlohmann::json& summary) {
  RunMetrics m;
  if (auto it = summary.find("seed"); it != summary.end() && it->is_number_unsigned()) m.seed = it->get<std::uint64_t>();
  const auto& names = summary_metric_names();
  for (const auto& k : names) {
    const auto it = summary.find(k);
    if (it != summary.end() && it->is_number()) m.scalars.emplace_back(k, it->get<double>());
  }
  for (auto it = summary.begin(); it != summary.end(); ++it) {  // numeric keys added later, in summary order
    if (!it.value().is_number() || it.key() == "seed") continue;
    if (std::find(names.begin(), names.end(), it.key()) != names.end()) continue;
    m.scalars.emplace_back(it.key(), it.value().get<double>());
  }
  if (auto g = summary.find("groups"); g != summary.end() && g->is_object()) {
    for (const auto& by : group_by_names()) {
      const auto dim = g->find(by);
      if (dim == g->end() || !dim->is_object()) continue;
      auto& out = m.groups[by];
      for (auto e = dim->begin(); e != dim->end(); ++e) {
        MetricList ml;
        for (const auto& k : group_metric_names()) {
          const auto v = e.value().find(k);
          ml.emplace_back(k, v != e.value().end() && v->is_number() ? v->get<double>() : 0.0);
        }
        out[e.key()] = std::move(ml);
      }
    }
  }
  return m;
}

RunMetrics simulate_seed(const ScenarioSource& source, std::uint64_t seed) {
  ScenarioSource src = source;
  src.seed = seed;
  std::ostringstream diag;
  std::optional<ResolvedScenario> r = resolve_scenario(src, diag);
  if (!r) {
    std::string text = diag.str();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    throw RunInputError(text);
  }
  SimOptions so;
  so.seed = seed;
  so.registry = source.registry;
  so.keep_snapshots = false;  // only summary.json is read
  const io::Scenario& sc = r->scenario;
  const std::string label = sc.file.empty() ? (sc.name.empty() ? "<default scenario>" : sc.name) : sc.file;
  std::optional<Simulator> sim;
  try {
    check_runtime_bounds(sc, so);
    so.runtime_bounds_checked = true;
    sim.emplace(sc, std::move(so));
    sim->run();
  } catch (const SimulationLimitError& e) {
    throw RunInputError(e.what());
  } catch (const Interrupted&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::invalid_argument& e) {  // dangling reference, shape libsched cannot model
    throw RunInputError(label + ": " + e.what());
  }
  return metrics_from_summary(nlohmann::json::parse(sim->summary_json()));
}

void parallel_for(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& body,
                  const std::function<void(std::size_t)>& done) {
  if (n == 0) return;
  const std::size_t threads = std::min<std::size_t>(std::max(1u, jobs), n);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(n);
  std::mutex done_mutex;
  std::size_t finished = 0;
  auto worker = [&] {
    for (;;) {
      if (failed.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        throw_if_interrupted();
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true);
        return;
      }
      if (done) {
        std::lock_guard<std::mutex> lock(done_mutex);
        done(++finished);
      }
    }
  };
  // threads - 1 helpers plus the calling thread. A helper that cannot be created (std::system_error)
  // leaves its share to the others: the results are the same.
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;
    }
  }
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

}  // namespace sim
