#include "sim/experiments/backtest.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "sim/engine/interrupt.hpp"

namespace sim {

using libsched::kTimeNever;
using libsched::Time;

namespace backtest_detail {

/// The nearest-rank quantile q% of sorted `v`: v[ceil(q K / 100) - 1] (as forecast.csv's).
Time nearest_rank(const std::vector<Time>& v, int q) { return v[(v.size() * std::size_t(q) + 99) / 100 - 1]; }

/// What was known at the snapshots so far: the tasks finished by then (grown at each snapshot).
struct History {
  std::vector<bool> counted;      // per scenario task: its run time is in `known`
  EmpiricalDurations known;       // sorted
  std::vector<double> estimate_s; // per scenario task: its estimate (NaN: none), read once

  void update(const Simulator& sim, Time now) {
    const std::size_t n = sim.task_count();
    if (counted.empty()) {
      counted.assign(n, false);
      estimate_s.assign(n, std::nan(""));
      for (std::size_t ti = 0; ti < n; ++ti)
        if (auto e = sim.task_cfg(ti).runtime_estimate_s) estimate_s[ti] = *e;
    }
    bool grew = false;
    for (const AttemptRecord* a : sim.attempts()) {
      const auto ti = std::size_t(a->task);
      if (counted[ti] || a->end_reason != EndReason::succeeded || a->end < 0 || a->end > now || a->start < 0) continue;
      counted[ti] = true;
      grew = true;
      const Time d = a->end - a->start;
      known.durations.push_back(d);
      if (!std::isnan(estimate_s[ti]) && estimate_s[ti] > 0) known.ratios.push_back(libsched::to_seconds(d) / estimate_s[ti]);
    }
    if (grew) {
      std::sort(known.durations.begin(), known.durations.end());
      std::sort(known.ratios.begin(), known.ratios.end());
    }
  }
};

}  // namespace backtest_detail

BacktestScores backtest_scores(const std::vector<BacktestRow>& rows, Time horizon, bool baseline) {
  BacktestScores s;
  std::size_t n = 0, m1 = 0, m10 = 0, h1 = 0, covered = 0;
  double abs_sum = 0;
  for (const BacktestRow& r : rows) {
    if (r.actual == kTimeNever) continue;
    ++n;
    const Time p = baseline ? r.baseline : r.p50;
    const Time pred = p == kTimeNever ? r.snapshot + horizon : p;
    const Time err = pred > r.actual ? pred - r.actual : r.actual - pred;
    m1 += err <= 60'000 ? 1 : 0;
    m10 += err <= 600'000 ? 1 : 0;
    h1 += err <= 3'600'000 ? 1 : 0;
    abs_sum += libsched::to_seconds(err);
    if (baseline) covered += r.baseline == r.actual ? 1 : 0;
    else covered += r.p10 <= r.actual && (r.p90 == kTimeNever || r.actual <= r.p90) ? 1 : 0;
  }
  if (n == 0) return s;
  const double dn = double(n);
  s.within_1min = double(m1) / dn;
  s.within_10min = double(m10) / dn;
  s.within_1h = double(h1) / dn;
  s.mae_s = abs_sum / dn;
  s.p10_p90_coverage = double(covered) / dn;
  return s;
}

BacktestResult backtest(io::Scenario sc, SimOptions opt, const BacktestParams& params, const BacktestReader& read) {
  using namespace backtest_detail;
  BacktestResult out;
  History history;
  opt.observe_every = params.every;
  opt.observer = [&](Simulator& sim, Time now) {
    if (params.max_snapshots > 0 && out.snapshots >= params.max_snapshots) return;
    throw_if_interrupted();
    ++out.snapshots;
    history.update(sim, now);
    BacktestSnapshot snap = read(sim.decide_snapshot(now));
    std::vector<std::size_t> waiting;
    bool unestimated = false;
    for (std::size_t i = 0; i < snap.tasks.size(); ++i) {
      if (snap.tasks[i].start < 0) waiting.push_back(i);
      unestimated = unestimated || !snap.tasks[i].estimated;
    }
    if (waiting.empty()) return;
    if (unestimated) {
      if (history.known.durations.empty()) {
        ++out.snapshots_skipped;
        return;
      }
      const std::vector<Time>& d = history.known.durations;
      const Time median = nearest_rank(d, 50);
      for (ForecastTask& t : snap.tasks)
        if (!t.estimated) t.length = median;
    }
    ForecastParams base;
    base.samples = 1;
    base.seed = params.seed;
    base.spread = 0;
    base.horizon = params.horizon;
    const std::vector<std::vector<Time>> b = forecast_starts(snap.make, now, snap.tasks, base);
    ForecastParams fp = base;
    fp.samples = params.samples;
    fp.spread = params.spread;
    if (params.empirical) fp.empirical = &history.known;
    std::vector<std::vector<Time>> f = forecast_starts(snap.make, now, snap.tasks, fp);
    // Rows in queue order: the snapshot lists the waiting tasks in queue order.
    for (std::size_t i : waiting) {
      std::vector<Time>& v = f[i];
      std::sort(v.begin(), v.end());
      BacktestRow r;
      r.snapshot = now;
      r.task = snap.names[i];
      r.baseline = b[i][0];
      r.p10 = nearest_rank(v, 10);
      r.p50 = nearest_rank(v, 50);
      r.p90 = nearest_rank(v, 90);
      out.rows.push_back(std::move(r));
    }
  };
  Simulator sim(std::move(sc), std::move(opt));
  sim.run();
  // The replay's actual starts: each row's task's first attempt started at or after the snapshot.
  std::unordered_map<std::string_view, std::size_t> task_of_name;
  for (std::size_t ti = 0; ti < sim.task_count(); ++ti) task_of_name.emplace(sim.task_name(ti), ti);
  std::vector<std::vector<Time>> starts(sim.task_count());
  for (const AttemptRecord* a : sim.attempts())
    if (a->start >= 0) starts[std::size_t(a->task)].push_back(a->start);
  for (BacktestRow& r : out.rows) {
    auto it = task_of_name.find(r.task);
    if (it == task_of_name.end()) continue;
    for (Time s : starts[it->second])
      if (s >= r.snapshot) {
        r.actual = s;
        break;
      }
    out.compared += r.actual != kTimeNever ? 1 : 0;
  }
  out.forecast = backtest_scores(out.rows, params.horizon, false);
  out.baseline = backtest_scores(out.rows, params.horizon, true);
  return out;
}

}  // namespace sim
