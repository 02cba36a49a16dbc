// CostModel (sim/engine/cost.hpp) and the cost accounting of sim::Simulator: each attempt pays
// its rate (currency per hour, summed over its replicas) for every millisecond it holds them,
// start-up, precheck and debug holding included; a RayJob's rate changes when autoscaling adds or
// removes workers. Reserved attempts are valued at the reserved price (the commitment covers
// them: they pay nothing per use); the commitments are charged at the end, over [0, makespan]. With a
// measurement window (scenario `measure`) the summary counts only the parts inside it.
#include "sim/engine/cost.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/engine/simulator.hpp"

namespace sim {

using namespace libsched;

namespace {

std::array<std::optional<double>, 4> row_of(const io::ClassPricesCfg& c) {
  return {c.reserved, c.pay_as_you_go, c.spot, c.idle};
}

}  // namespace

CostModel::CostModel(const io::PricesCfg& prices, const Cluster& cluster) : currency_(prices.currency) {
  model_.resize(cluster.models().size());
  for (std::size_t m = 0; m < cluster.models().size(); ++m)
    if (auto it = prices.gpu_models.find(cluster.models()[m]); it != prices.gpu_models.end()) model_[m] = row_of(it->second);
  for (const auto& [name, c] : prices.instance_specs) spec_.emplace(name, row_of(c));
  cpu_ = row_of(prices.cpu_vcpu);
  // One reserved price per pool: the price shared by its GPU nodes' models (NaN: they differ).
  pool_reserved_.assign(cluster.pools().size(), -1.0);
  for (const Node& n : cluster.nodes()) {
    if (n.removed || n.model < 0 || n.gpus == 0) continue;
    const double p = model_[std::size_t(n.model)][0].value_or(0.0);
    double& pr = pool_reserved_[n.pool.index()];
    if (pr < 0) pr = p;
    else if (pr != p) pr = std::nan("");
  }
}

double CostModel::replica_rate(ResourceType cls, const Node& node, std::string_view spec, int count_per_node,
                               std::int64_t gpu_milli, std::int64_t cpu_milli) const {
  const auto c = std::size_t(cls);
  if (cls != ResourceType::reserved && !spec.empty()) {
    if (auto it = spec_.find(std::string(spec)); it != spec_.end() && it->second[c]) return *it->second[c] * count_per_node;
  }
  if (gpu_milli > 0) {
    if (node.model < 0) return 0.0;
    return model_[std::size_t(node.model)][c].value_or(0.0) * double(gpu_milli) / 1000.0;
  }
  if (cls == ResourceType::reserved) return 0.0;
  return cpu_[c].value_or(0.0) * double(cpu_milli) / 1000.0;
}

double CostModel::pool_reserved_price(PoolId pool) const {
  const double p = pool_reserved_[pool.index()];
  if (std::isnan(p))
    throw std::invalid_argument(fmt::format("prices: pool {} has GPU models with different reserved prices", pool.index()));
  return std::max(p, 0.0);
}

// ------------------------------------------------------------------ the simulator's accounting

double Simulator::attempt_rate(int ti) const {
  const TaskRun& r = runs_[std::size_t(ti)];
  const Placement* p = sched_->placement_of(r.id);
  if (!p) return 0.0;
  const io::TaskCfg& t = cfg(std::size_t(ti));
  const Cluster& cl = sched_->cluster();
  const std::string& label = sched_->task(r.id).options[p->option].label;
  const bool own_head = t.type == "RayJob" && !t.head_spec.empty();
  double rate = 0;
  for (std::size_t i = 0; i < p->replicas.size(); ++i) {
    const auto& rep = p->replicas[i];
    rate += cost_->replica_rate(p->capacity, cl.node(rep.node), i == 0 && own_head ? std::string_view(t.head_spec) : label,
                                t.count_per_node, rep.total_gpu_milli(), rep.cpu_milli);
  }
  return rate;
}

void Simulator::cost_start(int ti, Time now) {
  CostRun& c = cost_runs_[std::size_t(ti)];
  c = CostRun{attempt_rate(ti), now, 0.0};
  if (cfg(std::size_t(ti)).autoscaling->enabled) rate_steps_[ti] = {{now, c.rate}};
}

void Simulator::cost_rerate(int ti, Time now) {
  CostRun& c = cost_runs_[std::size_t(ti)];
  c.acc += c.rate * double(now - c.since) / kMsPerHour;
  c.since = now;
  c.rate = attempt_rate(ti);
  rate_steps_[ti].push_back({now, c.rate});
}

void Simulator::cost_end(int ti, Time now, Time kept_until) {
  CostRun& c = cost_runs_[std::size_t(ti)];
  AttemptRecord& a = runs_[std::size_t(ti)].attempts.back();
  a.cost = c.acc + c.rate * double(now - c.since) / kMsPerHour;
  a.lost_cost = 0;
  if (kept_until < now) {
    auto steps = rate_steps_.find(ti);
    if (steps == rate_steps_.end()) {
      a.lost_cost = c.rate * double(now - kept_until) / kMsPerHour;
    } else {  // the rate over [kept_until, now], step by step
      const auto& v = steps->second;
      for (std::size_t k = 0; k < v.size(); ++k) {
        const Time from = std::max(v[k].first, kept_until);
        const Time to = k + 1 < v.size() ? v[k + 1].first : now;
        if (to > from) a.lost_cost += v[k].second * double(to - from) / kMsPerHour;
      }
    }
  }
  if (has_window()) {  // the parts inside the measurement window, step by step
    auto steps = rate_steps_.find(ti);
    const std::vector<std::pair<Time, double>> one{{c.since, c.rate}};
    const auto& v = steps == rate_steps_.end() ? one : steps->second;
    a.window_cost = a.window_lost_cost = 0;
    for (std::size_t k = 0; k < v.size(); ++k) {
      const Time from = v[k].first, to = k + 1 < v.size() ? v[k + 1].first : now;
      a.window_cost += v[k].second * double(window_overlap(from, to)) / kMsPerHour;
      if (kept_until < now) a.window_lost_cost += v[k].second * double(window_overlap(std::max(from, kept_until), to)) / kMsPerHour;
    }
  }
  rate_steps_.erase(ti);
  c = CostRun{};
}

CostSummary Simulator::cost_summary() const {
  CostSummary s;
  if (!cost_) return s;
  s.currency = cost_->currency();
  long double by_class[4] = {0, 0, 0, 0}, lost = 0;
  // Reserved usage by (user, pool): the reserved attempts' value at the reserved price.
  std::map<std::pair<std::string_view, std::string_view>, long double> used;
  for (std::size_t ti = 0; ti < runs_.size(); ++ti) {
    const io::TaskCfg& t = cfg(ti);
    for (const AttemptRecord& a : runs_[ti].attempts) {
      if (a.start < 0) continue;
      const double cost = has_window() ? a.window_cost : a.cost;
      lost += has_window() ? a.window_lost_cost : a.lost_cost;
      if (a.capacity == "reserved") used[{t.user, t.pool}] += cost;
      else by_class[class_index(a.capacity)] += cost;
    }
  }
  // The commitments over [0, makespan] (with a measurement window: over the window's part of it),
  // one per (user, pool) as the quota book keeps them.
  const double span_h = double(window_overlap(0, makespan_)) / kMsPerHour;
  long double committed = 0, unused = 0;
  for (const auto& q : commitments_) {
    CostSummary::Commitment c;
    c.user = q.user;
    c.pool = q.pool;
    c.gpu_model = q.gpu_model;
    c.tenant = q.tenant;
    c.cost = q.gpus * span_h * q.price;
    auto u = used.find({q.user, q.pool});
    c.used = u == used.end() ? 0.0 : double(u->second);
    committed += c.cost;
    unused += std::max(0.0, c.cost - c.used);
    s.commitments.push_back(c);
  }
  by_class[0] = committed;
  for (std::size_t k = 0; k < 4; ++k) s.by_class[k] = double(by_class[k]);
  s.total = double(by_class[0] + by_class[1] + by_class[2] + by_class[3]);
  s.reserved_unused = double(unused);
  s.lost_work = double(lost);
  return s;
}

double Simulator::billed_cost(const AttemptRecord& a) { return a.capacity == "reserved" ? 0.0 : a.cost; }

std::size_t Simulator::class_index(std::string_view capacity) {
  if (capacity == "reserved") return 0;
  if (capacity == "pay_as_you_go") return 1;
  if (capacity == "spot") return 2;
  return 3;
}

void Simulator::build_costs() {
  if (!sc_.prices) return;
  const Cluster& cl = sched_->cluster();
  cost_ = std::make_unique<CostModel>(*sc_.prices, cl);
  cost_runs_.assign(runs_.size(), CostRun{});
  // The tenant of a quota's user: that of the user's first task ("default" without one).
  std::map<std::string_view, std::string_view> tenant_of;
  for (std::size_t ti = 0; ti < runs_.size(); ++ti) tenant_of.try_emplace(cfg(ti).user, cfg(ti).tenant);
  std::map<std::pair<std::string, std::string>, std::size_t> at;  // (user, pool) -> commitments_ index (last quota wins)
  // Each pool's GPU model (its first GPU node's; "cpu" without one): the commitment's group in `groups`.
  std::vector<std::string_view> pool_model(cl.pools().size(), "cpu");
  std::vector<bool> seen(cl.pools().size(), false);
  for (const Node& n : cl.nodes())
    if (n.model >= 0 && n.gpus > 0 && !seen[n.pool.index()]) {
      seen[n.pool.index()] = true;
      pool_model[n.pool.index()] = cl.models()[std::size_t(n.model)];
    }
  for (const auto& q : sc_.quotas) {
    if (q.resource_type != "reserved") continue;
    const PoolId pid = cl.find_pool(q.pool);
    if (!pid.valid()) continue;
    Commitment c;
    c.user = q.user;
    c.pool = q.pool;
    c.gpus = q.gpus;
    c.price = q.gpus > 0 ? cost_->pool_reserved_price(pid) : 0.0;
    auto t = tenant_of.find(q.user);
    c.tenant = t == tenant_of.end() ? std::string_view("default") : t->second;
    c.gpu_model = pool_model[pid.index()];
    auto [it, inserted] = at.try_emplace(std::pair<std::string, std::string>(q.user, q.pool), commitments_.size());
    if (inserted) commitments_.push_back(c);
    else commitments_[it->second] = c;
  }
}

}  // namespace sim
