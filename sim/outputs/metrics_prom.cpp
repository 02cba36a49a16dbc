// metrics.prom of sim::Simulator (docs/outputs.md "metrics.prom"): Prometheus text format with
// the platform's labels, per task up to kPromTaskSeriesMax tasks, else per group; the costs with a
// `currency` label when the scenario has prices.
#include <cmath>
#include <iterator>
#include <string_view>
#include <tuple>
#include <utility>

#include <boost/container_hash/hash.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <fmt/format.h>

#include "sim/engine/simulator.hpp"
#include "sim/outputs/group_index.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

using namespace libsched;
using detail::GroupIndex;

namespace {

std::string prom_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '\\') o += "\\\\";
    else if (c == '"') o += "\\\"";
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o;
}

std::string prom_num(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{}", std::int64_t(v));
  return fmt::format("{:.3f}", v);
}

/// Deterministic UUID-shaped id of a task (hash of scenario name, task name and index).
std::string task_uuid(const std::string& scenario, const std::string& task, std::size_t i) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : scenario + "\x1f" + task) h = (h ^ std::uint8_t(c)) * 1099511628211ull;
  boost::random::mt19937_64 g(h ^ i);
  std::uint64_t a = g(), b = g();
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", std::uint32_t(a >> 32), std::uint32_t((a >> 16) & 0xffff),
                     std::uint32_t(a & 0xfff), std::uint32_t(0x8000 | ((b >> 48) & 0x3fff)), b & 0xffffffffffffull);
}

/// Hash of a metrics.prom group key (tenant, user, task type, pool).
struct PromKeyHash {
  std::size_t operator()(const std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>& k) const {
    std::hash<std::string_view> h;
    std::size_t x = 0;
    for (std::string_view v : {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)}) boost::hash_combine(x, h(v));
    return x;
  }
};

}  // namespace

void Simulator::write_metrics_prom(const std::string& dir) const {
  // metrics.prom (docs/outputs.md "metrics.prom"): per-task gauges up to kPromTaskSeriesMax
  // tasks, else per-group gauges (tenant, user, task type, pool). Streamed.
  CheckedWriter w(dir + "/metrics.prom");
  std::string& m = w.buffer();
  auto out = std::back_inserter(m);
  const auto& cl = sc_.cluster;
  // Per task: attempts, gang milli-GPU of the last started attempt.
  auto attempts_of = [&](std::size_t i) { return int(runs_[i].attempts.size()); };
  auto gpus_of = [&](std::size_t i) {
    std::int64_t gpus = 0;
    for (const auto& a : runs_[i].attempts)
      if (a.start >= 0) gpus = a.gpu_milli;
    return gpus;
  };
  const std::string cluster = prom_escape(cl.name), region = prom_escape(cl.region);
  // The run's costs by kind (docs/outputs.md "Costs"), only with prices.
  const std::string currency = cost_ ? prom_escape(cost_->currency()) : std::string();
  auto run_costs = [&] {
    if (!cost_) return;
    const CostSummary c = cost_summary();
    fmt::format_to(out, "# HELP schedsim_cost Cost of the run by kind (currency): total, reserved (the commitments), "
                        "pay_as_you_go, spot, idle, reserved_unused, lost_work.\n# TYPE schedsim_cost gauge\n");
    const std::pair<const char*, double> kinds[] = {{"total", c.total},           {"reserved", c.by_class[0]},
                                                    {"pay_as_you_go", c.by_class[1]}, {"spot", c.by_class[2]},
                                                    {"idle", c.by_class[3]},       {"reserved_unused", c.reserved_unused},
                                                    {"lost_work", c.lost_work}};
    for (const auto& [kind, v] : kinds)
      fmt::format_to(out, "schedsim_cost{{cluster=\"{}\",region=\"{}\",currency=\"{}\",kind=\"{}\"}} {}\n", cluster, region,
                     currency, kind, prom_num(v));
  };
  struct Metric { const char* name; const char* help; };
  if (runs_.size() <= kPromTaskSeriesMax) {
    const Metric metrics[] = {
        {"schedsim_task_attempts", "Attempts of the task."},
        {"schedsim_task_succeeded", "1 when the task succeeded, else 0."},
        {"schedsim_task_wait_seconds", "Total time the task's attempts spent queued (s)."},
        {"schedsim_task_jct_seconds", "Final end minus submit time (s); -1 when unfinished."},
        {"schedsim_task_lost_work_seconds", "Work lost to failures and preemptions (s)."},
        {"schedsim_task_gpus", "GPUs of the gang in its last started attempt."},
    };
    std::vector<Time> waits(runs_.size());
    for (std::size_t i = 0; i < runs_.size(); ++i) waits[i] = task_metrics(i).wait;
    for (std::size_t mi = 0; mi < std::size(metrics); ++mi) {
      fmt::format_to(out, "# HELP {} {}\n# TYPE {} gauge\n", metrics[mi].name, metrics[mi].help, metrics[mi].name);
      for (std::size_t i = 0; i < runs_.size(); ++i) {
        const auto& t = cfg(i);
        const std::string& name = task_name(i);
        const auto& s = task_stats()[i];
        double v = 0;
        switch (mi) {
          case 0: v = attempts_of(i); break;
          case 1: v = s.succeeded ? 1 : 0; break;
          case 2: v = double(waits[i]) / 1000.0; break;
          case 3: v = s.finished ? double(s.end - from_seconds(ident_[i].submit_s)) / 1000.0 : -1; break;
          case 4: v = double(s.lost_work) / 1000.0; break;
          case 5: v = double(gpus_of(i)) / 1000.0; break;
        }
        fmt::format_to(out,
                       "{}{{cluster=\"{}\",orgname=\"{}\",user=\"{}\",module=\"{}\",task_type=\"{}\",task_name=\"{}\",task_uuid=\"{}\","
                       "resource_pool=\"{}\",region=\"{}\"}} {}\n",
                       metrics[mi].name, cluster, prom_escape(t.tenant), prom_escape(t.user), "training", prom_escape(t.type),
                       prom_escape(name), task_uuid(sc_.name, name, i), prom_escape(t.pool), region, prom_num(v));
        w.maybe_flush();
      }
    }
    if (cost_) {
      fmt::format_to(out, "# HELP schedsim_task_cost What the task's attempts paid per use (currency).\n"
                          "# TYPE schedsim_task_cost gauge\n");
      for (std::size_t i = 0; i < runs_.size(); ++i) {
        const auto& t = cfg(i);
        const std::string& name = task_name(i);
        double v = 0;
        for (const auto& a : runs_[i].attempts) v += billed_cost(a);
        fmt::format_to(out,
                       "schedsim_task_cost{{cluster=\"{}\",orgname=\"{}\",user=\"{}\",module=\"{}\",task_type=\"{}\",task_name=\"{}\","
                       "task_uuid=\"{}\",resource_pool=\"{}\",region=\"{}\",currency=\"{}\"}} {}\n",
                       cluster, prom_escape(t.tenant), prom_escape(t.user), "training", prom_escape(t.type), prom_escape(name),
                       task_uuid(sc_.name, name, i), prom_escape(t.pool), region, currency, prom_num(v));
        w.maybe_flush();
      }
    }
    run_costs();
    w.close();
    return;
  }
  // Per group: sums over the tasks of each (tenant, user, task type, pool), in that key order.
  struct Acc {
    std::int64_t tasks = 0, succeeded = 0, finished = 0, attempts = 0, gpu_milli = 0;
    Time wait = 0, jct = 0, lost = 0;
    double cost = 0;
  };
  using PromKey = std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>;
  GroupIndex<PromKey, Acc, PromKeyHash> index;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const auto& t = cfg(i);
    const auto& s = task_stats()[i];
    Acc& g = index[{t.tenant, t.user, t.type, t.pool}];
    ++g.tasks;
    g.succeeded += s.succeeded ? 1 : 0;
    g.finished += s.finished ? 1 : 0;
    g.attempts += attempts_of(i);
    g.gpu_milli += gpus_of(i);
    g.wait += task_metrics(i).wait;
    if (s.finished) g.jct += s.end - from_seconds(ident_[i].submit_s);
    g.lost += s.lost_work;
    if (cost_)
      for (const auto& a : runs_[i].attempts) g.cost += billed_cost(a);
  }
  const auto groups = std::move(index).sorted();
  const Metric metrics[] = {
      {"schedsim_tasks", "Tasks of the group."},
      {"schedsim_tasks_succeeded", "Tasks of the group that succeeded."},
      {"schedsim_tasks_finished", "Tasks of the group that finished (succeeded or failed)."},
      {"schedsim_task_attempts_sum", "Attempts of the group's tasks."},
      {"schedsim_task_wait_seconds_sum", "Queueing delay of the group's tasks, summed (s)."},
      {"schedsim_task_jct_seconds_sum", "JCT of the group's finished tasks, summed (s)."},
      {"schedsim_task_lost_work_seconds_sum", "Work lost to failures and preemptions by the group's tasks (s)."},
      {"schedsim_task_gpus_sum", "GPUs of the gangs in their last started attempts, summed."},
  };
  for (std::size_t mi = 0; mi < std::size(metrics); ++mi) {
    fmt::format_to(out, "# HELP {} {}\n# TYPE {} gauge\n", metrics[mi].name, metrics[mi].help, metrics[mi].name);
    for (const auto& [key, g] : groups) {
      double v = 0;
      switch (mi) {
        case 0: v = double(g.tasks); break;
        case 1: v = double(g.succeeded); break;
        case 2: v = double(g.finished); break;
        case 3: v = double(g.attempts); break;
        case 4: v = double(g.wait) / 1000.0; break;
        case 5: v = double(g.jct) / 1000.0; break;
        case 6: v = double(g.lost) / 1000.0; break;
        case 7: v = double(g.gpu_milli) / 1000.0; break;
      }
      const auto& [tenant, user, type, pool] = key;
      fmt::format_to(out,
                     "{}{{cluster=\"{}\",orgname=\"{}\",user=\"{}\",module=\"{}\",task_type=\"{}\",resource_pool=\"{}\","
                     "region=\"{}\"}} {}\n",
                     metrics[mi].name, cluster, prom_escape(std::string(tenant)), prom_escape(std::string(user)), "training",
                     prom_escape(std::string(type)), prom_escape(std::string(pool)), region, prom_num(v));
      w.maybe_flush();
    }
  }
  if (cost_) {
    fmt::format_to(out, "# HELP schedsim_task_cost_sum What the group's tasks paid per use (currency).\n"
                        "# TYPE schedsim_task_cost_sum gauge\n");
    for (const auto& [key, g] : groups) {
      const auto& [tenant, user, type, pool] = key;
      fmt::format_to(out,
                     "schedsim_task_cost_sum{{cluster=\"{}\",orgname=\"{}\",user=\"{}\",module=\"{}\",task_type=\"{}\","
                     "resource_pool=\"{}\",region=\"{}\",currency=\"{}\"}} {}\n",
                     cluster, prom_escape(std::string(tenant)), prom_escape(std::string(user)), "training",
                     prom_escape(std::string(type)), prom_escape(std::string(pool)), region, currency, prom_num(g.cost));
      w.maybe_flush();
    }
  }
  run_costs();
  w.close();
}

}  // namespace sim
