// Pass 2: the cross-field rules of a typed scenario (validate_scenario, expanded_node_names).
#include "sim/io/scenario_json.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/io/limits.hpp"
#include "sim/io/scenario_read_detail.hpp"

namespace sim::io {

using nlohmann::json;
using namespace detail;

namespace {

constexpr double k_block_min_s = 60;               // docs/platform.md: block expiry >= 1 minute
constexpr double k_block_max_s = 72.0 * 3600.0;    // ... and <= 72 hours after creation

// ------------------------------------------------------------------ pass 2 helpers

/// One expanded node: its name and where it comes from (the origin path is formed only for a
/// message, so expanding 1,000,000 nodes costs one string each).
struct NodeShape {
  std::string name;
  const std::string* gpu_model = nullptr;
  int gpus = 0;
  double vcpu = 0;
  double memory_gib = 0;
  std::size_t pool = 0, index = 0;
  bool from_group = false;
  std::string origin() const {
    return index_path(index_path("cluster.pools", pool) + (from_group ? ".node_groups" : ".nodes"), index) +
           (from_group ? ".prefix" : ".name");
  }
};

std::vector<NodeShape> expand_nodes(const ClusterCfg& c) {
  std::vector<NodeShape> out;
  out.reserve(static_cast<std::size_t>(std::min<std::int64_t>(total_nodes(c), limits::max_total_nodes)));
  for (std::size_t p = 0; p < c.pools.size(); ++p) {
    const auto& pool = c.pools[p];
    for (std::size_t g = 0; g < pool.node_groups.size(); ++g) {
      const auto& ng = pool.node_groups[g];
      for (int i = 0; i < ng.count; ++i)
        out.push_back({ng.prefix + std::to_string(i), &ng.gpu_model, ng.gpus, ng.vcpu, ng.memory_gib, p, g, true});
    }
    for (std::size_t n = 0; n < pool.nodes.size(); ++n) {
      const auto& nd = pool.nodes[n];
      out.push_back({nd.name, &nd.gpu_model, nd.gpus, nd.vcpu, nd.memory_gib, p, n, false});
    }
  }
  return out;
}

/// The distinct node shapes of the cluster with their multiplicity: the "fits" warnings scan
/// these (a few per cluster), not every node, and cache their answer per distinct replica shape,
/// so validation is O(tasks + nodes log nodes) for usual clusters.
class FitIndex {
 public:
  explicit FitIndex(const std::vector<NodeShape>& nodes) {
    std::map<std::tuple<std::string, int, double, double>, long long> count;
    for (const auto& n : nodes) ++count[{*n.gpu_model, n.gpus, n.vcpu, n.memory_gib}];
    for (const auto& [k, c] : count) shapes_.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), c});
  }
  bool empty() const { return shapes_.empty(); }
  /// Replicas of this shape the empty cluster can host (capped at 2^62).
  long long slots(int gpus, double vcpu, double mem, const std::vector<std::string>& models) {
    std::string key = fmt::format("{}|{}|{}|{}", gpus, vcpu, mem, fmt::join(models, "|"));
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    constexpr long long cap = 1LL << 62;
    long long total = 0;
    for (const auto& n : shapes_) {
      const bool model_ok =
          gpus == 0 || models.empty() || std::find(models.begin(), models.end(), n.model) != models.end();
      if (!model_ok || n.gpus < gpus || n.vcpu < vcpu || n.mem < mem) continue;
      long long k = gpus > 0 ? n.gpus / gpus : cap;
      if (vcpu > 0) k = std::min<long long>(k, static_cast<long long>(std::min(n.vcpu / vcpu, 1e18)));
      if (mem > 0) k = std::min<long long>(k, static_cast<long long>(std::min(n.mem / mem, 1e18)));
      k = std::max<long long>(k, 1);
      total = (k >= cap / n.count) ? cap : std::min(cap, total + k * n.count);
    }
    cache_.emplace(std::move(key), total);
    return total;
  }

 private:
  struct Shape {
    std::string model;
    int gpus;
    double vcpu, mem;
    long long count;
  };
  std::vector<Shape> shapes_;
  std::unordered_map<std::string, long long> cache_;
};

/// Warns when a replica (gpus, vcpu, memory) fits on no node whose GPU model is allowed, or
/// when the whole gang (`replicas` of them) does not fit even on the empty cluster (at most
/// sum over nodes of min(GPUs / replica GPUs, vCPU / replica vCPU, GiB / replica GiB)).
void check_replica_fits(Sink& sink, FitIndex& fit, const std::string& path, const std::string& value, int gpus,
                        double vcpu, double mem, const std::vector<std::string>& models, long long replicas) {
  if (fit.empty()) return;
  const long long slots = fit.slots(gpus, vcpu, mem, models);
  if (slots >= replicas) return;
  const std::string where = models.empty() ? std::string() : fmt::format(" with GPU model {}", fmt::join(models, "/"));
  if (slots == 0)
    sink.warning(path, value,
                 fmt::format("a replica of {} GPUs, {} vCPU, {} GiB is larger than every node{}; the task can never start",
                             gpus, num_text(vcpu), num_text(mem), where));
  else
    sink.warning(path, value,
                 fmt::format("a gang of {} replicas of {} GPUs, {} vCPU, {} GiB needs more than the whole cluster{} "
                             "(at most {} such replicas fit on it empty); the task can never start",
                             replicas, gpus, num_text(vcpu), num_text(mem), where, slots));
}

/// Warns when a task's whole demand (head + workers, every candidate spec) exceeds its quota
/// limit even with nothing running, or a reserved task has no quota entry (zero quota): the
/// scheduler reports it as never_fits with quota as the binding constraint. Tasks that may run
/// on idle capacity (idle, accept_idle, prefer_idle) hold no quota there and are skipped.
void check_quota_admits(Sink& sink, const Scenario& s, const TaskCfg& t, const std::string& path,
                        const std::map<std::string, const InstanceSpecCfg*>& spec_by_name) {
  if (t.resource_type == "idle" || t.accept_idle || t.prefer_idle) return;
  if (t.resource_type == "reserved" && t.pool.empty()) return;  // an error of its own
  const QuotaCfg* quota = nullptr;
  for (const auto& qc : s.quotas)
    if (qc.user == t.user && qc.resource_type == t.resource_type && qc.pool == t.pool) quota = &qc;
  if (!quota && t.resource_type != "reserved") return;  // unlimited
  struct Demand { double gpus = 0, vcpu = 0, mem = 0; };
  const bool autoscaled = t.type == "RayJob" && t.autoscaling->enabled;
  const long long workers = autoscaled ? t.autoscaling->min_workers : t.workers;
  auto shape = [&](double gpus, int gpu_milli, double vcpu, double mem) {
    return Demand{gpus * (gpus > 0 ? gpu_milli : 1000) / 1000.0 * t.count_per_node, vcpu * t.count_per_node,
                  mem * t.count_per_node};
  };
  std::vector<Demand> demands;
  if (t.replica) {
    Demand r = shape(t.replica->gpus, t.replica->gpu_milli, t.replica->vcpu, t.replica->memory_gib);
    demands.push_back({r.gpus * double(1 + workers), r.vcpu * double(1 + workers), r.mem * double(1 + workers)});
  }
  for (const auto& name : t.specs) {
    auto it = spec_by_name.find(name);
    if (it == spec_by_name.end()) return;  // reported elsewhere
    Demand w = shape(it->second->gpus, it->second->gpu_milli, it->second->vcpu, it->second->memory_gib);
    Demand h = w;
    if (t.type == "RayJob" && !t.head_spec.empty()) {
      auto hs = spec_by_name.find(t.head_spec);
      if (hs == spec_by_name.end()) return;
      h = shape(hs->second->gpus, hs->second->gpu_milli, hs->second->vcpu, hs->second->memory_gib);
    }
    demands.push_back({h.gpus + w.gpus * double(workers), h.vcpu + w.vcpu * double(workers), h.mem + w.mem * double(workers)});
  }
  if (demands.empty()) return;
  const double eps = 1e-9;
  for (const auto& d : demands)
    if (quota && d.gpus <= quota->gpus + eps && d.vcpu <= quota->vcpu + eps && d.mem <= quota->memory_gib + eps) return;
  const Demand& d = demands.front();
  const std::string owner = fmt::format("{} ({}{}{})", t.user, t.resource_type, t.pool.empty() ? "" : ", pool ", t.pool);
  if (!quota)
    sink.warning(path + ".resource_type", q(t.resource_type),
                 fmt::format("no reserved quota for {}: zero quota, the task can never start", owner));
  else
    sink.warning(path + ".resource_type", q(t.resource_type),
                 fmt::format("the whole task needs {} GPUs, {} vCPU, {} GiB, more than the quota of {} ({} GPUs, {} vCPU, {} "
                             "GiB) even with nothing running; the task can never start",
                             num_text(d.gpus), num_text(d.vcpu), num_text(d.mem), owner, num_text(quota->gpus),
                             num_text(quota->vcpu), num_text(quota->memory_gib)));
}

}  // namespace

// ------------------------------------------------------------------ pass 2: cross-field rules

bool trace_makes_nodes(const TraceCfg& t) {
  return t.format == "swf" ? t.nodes != "none" : !t.nodes.empty();
}

void check_trace_node_references(const Scenario& s, std::vector<Diagnostic>& diagnostics) {
  if (!std::any_of(s.traces.begin(), s.traces.end(), trace_makes_nodes)) return;
  const auto nodes = expand_nodes(s.cluster);
  std::unordered_set<std::string_view> names;
  names.reserve(nodes.size());
  for (const auto& n : nodes) names.insert(n.name);
  Sink sink(s.file, diagnostics, /*dedupe=*/true);
  constexpr const char* rule = "unknown node (neither in cluster.pools nor made by a trace)";
  auto check = [&](const std::string& path, const std::string& n) {
    if (!names.count(n)) sink.error(path, q(n), rule);
  };
  for (std::size_t i = 0; i < s.node_policies.size(); ++i)
    for (std::size_t k = 0; k < s.node_policies[i].nodes.size(); ++k)
      check(index_path(index_path("node_policies", i) + ".nodes", k), s.node_policies[i].nodes[k]);
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const auto& e = s.events[i];
    const std::string p = index_path("events", i);
    if (!e.node.empty()) check(p + ".node", e.node);
    for (std::size_t k = 0; k < e.nodes.size(); ++k) check(index_path(p + ".nodes", k), e.nodes[k]);
  }
}

std::vector<std::string> expanded_node_names(const ClusterCfg& cluster) {
  std::vector<std::string> names;
  for (auto& n : expand_nodes(cluster)) names.push_back(std::move(n.name));
  return names;
}

void validate_scenario(const Scenario& s, std::vector<Diagnostic>& diagnostics) {
  // A reference cannot be checked against a collection whose names are themselves broken (a
  // missing cluster, a pool without a valid count, ...): skip those checks instead of blaming
  // every reference (one problem, one diagnostic).
  // Each pattern starts with a literal prefix: test the prefix first (cheap), the regex only then.
  // The regex is compiled only when an error's path has the prefix (compiling the five costs
  // more than validating a small scenario, and a valid scenario has no error at all).
  auto broken = [&](const char* pattern) {
    const std::string_view pat(pattern);
    const std::string prefix(pat.substr(0, pat.find_first_of("(\\[")));
    std::optional<std::regex> re;
    return std::any_of(diagnostics.begin(), diagnostics.end(), [&](const Diagnostic& d) {
      if (!d.is_error() || d.path.compare(0, prefix.size(), prefix) != 0) return false;
      if (!re) re.emplace(pattern);
      return std::regex_match(d.path, *re);
    });
  };
  const bool specs_broken = broken(R"(cluster(\.instance_specs(\[\d+\](\.name)?)?)?)");
  const bool pools_broken = broken(R"(cluster(\.pools(\[\d+\](\.name)?)?)?)");
  const bool nodes_broken =
      broken(R"(cluster(\.pools(\[\d+\](\.(node_groups|nodes)(\[\d+\](\.(prefix|count|name))?)?)?)?)?)");
  const bool policies_broken = broken(R"(node_policies(\[\d+\](\.name)?)?)");
  const bool tasks_broken = broken(R"(tasks(\[\d+\](\.name)?)?)");

  Sink sink(s.file, diagnostics, /*dedupe=*/true);

  // Duplicate names (contract: node names unique across the cluster; specs/pools/policies/tasks
  // are referenced by name).
  auto check_dupes = [&](const std::string& array, auto const& items, auto name_of) {
    std::map<std::string, std::size_t> first;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string& n = name_of(items[i]);
      if (n.empty()) continue;
      auto [it, inserted] = first.emplace(n, i);
      if (!inserted)
        sink.error(index_path(array, i) + ".name", q(n), fmt::format("duplicate name (also {}[{}])", array, it->second));
    }
  };
  check_dupes("cluster.instance_specs", s.cluster.instance_specs, [](const InstanceSpecCfg& x) -> const std::string& { return x.name; });
  check_dupes("cluster.pools", s.cluster.pools, [](const PoolCfg& x) -> const std::string& { return x.name; });
  check_dupes("node_policies", s.node_policies, [](const NodePolicyCfg& x) -> const std::string& { return x.name; });
  check_dupes("tasks", s.tasks, [](const TaskCfg& x) -> const std::string& { return x.name; });

  std::map<std::string, const InstanceSpecCfg*> spec_by_name;
  for (const auto& sp : s.cluster.instance_specs) spec_by_name.emplace(sp.name, &sp);
  std::set<std::string> pools, policies, tasks;
  for (const auto& p : s.cluster.pools) pools.insert(p.name);
  for (const auto& p : s.node_policies) policies.insert(p.name);
  for (const auto& t : s.tasks) tasks.insert(t.name);

  // A node shape that failed its own check (e.g. gpus 1000000, refused and read as 0) would make
  // every replica look too large: skip the "fits on no node" warnings then.
  bool node_shapes_broken =
      broken(R"(cluster\.pools\[\d+\]\.(node_groups|nodes)\[\d+\]\.(gpus|vcpu|memory_gib|gpu_model))");
  // Node rules (the same for trace nodes: check_node_values) and the mean times of node groups.
  for (std::size_t pi = 0; pi < s.cluster.pools.size(); ++pi) {
    const auto& pool = s.cluster.pools[pi];
    const std::string pp = index_path("cluster.pools", pi);
    for (std::size_t g = 0; g < pool.node_groups.size(); ++g) {
      const auto& ng = pool.node_groups[g];
      const std::string gp = index_path(pp + ".node_groups", g);
      if (auto rule = node_name_problem(ng.prefix, /*allow_empty=*/true); !rule.empty())
        sink.error(gp + ".prefix", q(ng.prefix), rule);
      if (ng.mtbf_s != 0 && !(ng.mtbf_s >= limits::min_mtbf_s))
        sink.error(gp + ".mtbf_s", num_text(ng.mtbf_s),
                   fmt::format("must be 0 (no random failures) or >= {} s", num_text(limits::min_mtbf_s)));
      if (ng.mttr_s != 0 && !(ng.mttr_s >= limits::min_delay_s))
        sink.error(gp + ".mttr_s", num_text(ng.mttr_s),
                   fmt::format("must be 0 or >= {} s (time must advance)", num_text(limits::min_delay_s)));
    }
    for (std::size_t n = 0; n < pool.nodes.size(); ++n) {
      const std::string np = index_path(pp + ".nodes", n);
      check_node_values(pool.nodes[n], [&](const std::string& field, const std::string& value, const std::string& rule) {
        sink.error(np + "." + field, value, rule);
        if (field != "name") node_shapes_broken = true;
      });
    }
  }
  // Never expand more nodes than the limit (1,000 groups x 100,000 nodes is a 38 KB file).
  const std::int64_t node_total = total_nodes(s.cluster);
  const bool too_many_nodes = node_total > limits::max_total_nodes;
  if (too_many_nodes)
    sink.error("cluster.pools", std::to_string(node_total),
               fmt::format("the cluster has {} nodes, more than the limit of {}", node_total, limits::max_total_nodes));
  const auto nodes = too_many_nodes ? std::vector<NodeShape>{} : expand_nodes(s.cluster);
  FitIndex fit_nodes(node_shapes_broken ? std::vector<NodeShape>{} : nodes);
  std::unordered_map<std::string_view, const NodeShape*> node_by_name;
  node_by_name.reserve(nodes.size());
  for (const auto& n : nodes) {
    auto [it, inserted] = node_by_name.emplace(n.name, &n);
    if (!inserted)
      sink.error(n.origin(), q(n.name),
                 fmt::format("node name `{}` is not unique (also from {})", n.name, it->second->origin()));
  }
  // Node names can come from traces too (trace_makes_nodes); then references are checked once the
  // traces are loaded (check_trace_node_references).
  const bool nodes_from_traces = std::any_of(s.traces.begin(), s.traces.end(), trace_makes_nodes);
  const bool tasks_from_traces = !s.traces.empty();
  auto known_node = [&](const std::string& n) {
    return nodes_broken || too_many_nodes || nodes_from_traces || node_by_name.count(n) > 0;
  };
  auto known_pool = [&](const std::string& n) { return pools_broken || pools.count(n) > 0; };
  auto known_spec = [&](const std::string& n) { return specs_broken || spec_by_name.count(n) > 0; };
  auto known_policy = [&](const std::string& n) { return policies_broken || policies.count(n) > 0; };
  auto known_task = [&](const std::string& n) {
    return tasks_broken || tasks_from_traces || s.workload.has_value() || tasks.count(n) > 0;
  };


  for (std::size_t i = 0; i < s.quotas.size(); ++i) {
    const auto& qt = s.quotas[i];
    const std::string p = index_path("quotas", i);
    if (!qt.pool.empty() && !known_pool(qt.pool)) sink.error(p + ".pool", q(qt.pool), "unknown pool (not in cluster.pools)");
    if (qt.pool.empty() && qt.resource_type == "reserved")
      sink.error(p + ".pool", missing_value, "a reserved quota needs a pool");
  }

  for (std::size_t i = 0; i < s.node_policies.size(); ++i) {
    const auto& np = s.node_policies[i];
    const std::string p = index_path("node_policies", i);
    if (np.scope == "user" && np.user.empty()) sink.error(p + ".user", missing_value, "a scope=user policy needs `user`");
    for (std::size_t k = 0; k < np.nodes.size(); ++k)
      if (!known_node(np.nodes[k])) sink.error(index_path(p + ".nodes", k), q(np.nodes[k]), "unknown node");
    if (np.type == "NodeNotIn" && !np.expire_s) {
      sink.error(p + ".expire_s", missing_value, "a NodeNotIn block must expire between 1 minute and 72 hours after created_s");
    } else if (np.expire_s) {
      const double d = *np.expire_s - np.created_s;
      if (d < k_block_min_s || d > k_block_max_s)
        sink.error(p + ".expire_s", num_text(*np.expire_s),
                   fmt::format("must be between 1 minute and 72 hours after created_s ({}), i.e. in [{}, {}]",
                               num_text(np.created_s), num_text(np.created_s + k_block_min_s),
                               num_text(np.created_s + k_block_max_s)));
    }
  }

  // The rules of one task (an inline task, or the partial task of a workload class: path `p`).
  auto check_task = [&](const TaskCfg& t, const std::string& p, bool quota_check) {
    if (!t.name.empty() && !valid_task_name(t.name))
      sink.error(p + ".name", q(t.name),
                 "must use lowercase letters, digits and '-', starting and ending with a letter or digit");
    for (std::size_t k = 0; k < t.specs.size(); ++k)
      if (!known_spec(t.specs[k]))
        sink.error(index_path(p + ".specs", k), q(t.specs[k]), "unknown spec (not in cluster.instance_specs)");
    if (!t.head_spec.empty() && !known_spec(t.head_spec))
      sink.error(p + ".head_spec", q(t.head_spec), "unknown spec (not in cluster.instance_specs)");
    if (t.resource_type == "reserved" && t.pool.empty())
      sink.error(p + ".pool", missing_value, "a reserved task needs a pool");
    if (!t.pool.empty() && !known_pool(t.pool)) sink.error(p + ".pool", q(t.pool), "unknown pool (not in cluster.pools)");
    for (std::size_t k = 0; k < t.node_policies.size(); ++k)
      if (!known_policy(t.node_policies[k]))
        sink.error(index_path(p + ".node_policies", k), q(t.node_policies[k]), "unknown node policy");
    if (t.autoscaling->min_workers > t.autoscaling->max_workers)
      sink.error(p + ".autoscaling.min_workers", std::to_string(t.autoscaling->min_workers),
                 fmt::format("must be <= max_workers ({})", t.autoscaling->max_workers));

    // The value rules shared with trace tasks (limits.hpp).
    bool values_ok = true;
    check_task_values(t, [&](const std::string& field, const std::string& value, const std::string& rule) {
      sink.error(p + "." + field, value, rule);
      values_ok = false;
    });
    if (!values_ok) return;  // products and fits below need in-range factors

    // spec x count_per_node: within the limits of one node (checked factors: no overflow).
    auto spec_product_ok = [&](const InstanceSpecCfg& sp, const std::string& path) {
      const long long cpn = t.count_per_node;
      if (sp.gpus > limits::max_node_gpus) return false;  // blamed on the spec itself
      if (sp.gpus * cpn > limits::max_node_gpus) {
        sink.error(path, q(sp.name),
                   fmt::format("spec gpus x count_per_node = {} x {} = {} exceeds {}, the most GPUs of a node", sp.gpus,
                               cpn, sp.gpus * cpn, limits::max_node_gpus));
        return false;
      }
      if (sp.gpus > 0 && sp.gpu_milli < 1000 && cpn > 1) {
        sink.error(path, q(sp.name),
                   fmt::format("spec of a GPU share (gpu_milli {} < 1000) x count_per_node {}: a replica holds a share "
                               "of one GPU at most (count_per_node must be 1)",
                               sp.gpu_milli, cpn));
        return false;
      }
      for (auto [what, v] : {std::pair<const char*, double>{"vcpu", sp.vcpu}, {"memory_gib", sp.memory_gib}})
        if (v * double(cpn) > limits::max_amount) {
          sink.error(path, q(sp.name),
                     fmt::format("spec {} x count_per_node = {} exceeds {}", what, num_text(v * double(cpn)),
                                 num_text(limits::max_amount)));
          return false;
        }
      return true;
    };
    if (!t.head_spec.empty())
      if (auto it = spec_by_name.find(t.head_spec); it != spec_by_name.end()) spec_product_ok(*it->second, p + ".head_spec");

    const std::size_t before_fit_checks = diagnostics.size();
    // Warning: a replica that no node can ever host.
    for (std::size_t k = 0; k < t.specs.size(); ++k) {
      auto it = spec_by_name.find(t.specs[k]);
      if (it == spec_by_name.end()) continue;
      const auto& sp = *it->second;
      if (!spec_product_ok(sp, index_path(p + ".specs", k))) continue;
      std::vector<std::string> models;
      if (!sp.gpu_model.empty()) models.push_back(sp.gpu_model);
      check_replica_fits(sink, fit_nodes, index_path(p + ".specs", k), q(sp.name), sp.gpus * t.count_per_node,
                         sp.vcpu * t.count_per_node, sp.memory_gib * t.count_per_node, models,
                         std::max<long long>(1, t.workers + (t.head_spec.empty() ? 1LL : 0LL)));
    }
    if (t.replica) {
      const auto& r = *t.replica;
      check_replica_fits(sink, fit_nodes, p + ".replica", "", r.gpus * t.count_per_node, r.vcpu * t.count_per_node,
                         r.memory_gib * t.count_per_node, r.gpu_models, 1LL + t.workers);
    }
    // One problem, one diagnostic: a task already warned about as never fitting the cluster
    // is not warned about its quota too.
    if (quota_check && diagnostics.size() == before_fit_checks) check_quota_admits(sink, s, t, p, spec_by_name);
  };
  for (std::size_t i = 0; i < s.tasks.size(); ++i) check_task(s.tasks[i], index_path("tasks", i), true);
  if (s.workload) {
    // A class's task keys obey the task rules (unknown spec, pool or policy, quota, fits), checked
    // with its largest gang; users are drawn, so the quota warning is left to the generated tasks.
    // A class that names its users is checked against each one's quota (a warning: the gang of
    // its largest workers choice can never be admitted for that user).
    for (std::size_t i = 0; i < s.workload->classes.size(); ++i) {
      const WorkloadClassCfg& c = s.workload->classes[i];
      const std::size_t before = diagnostics.size();
      check_task(c.task, index_path("workload.classes", i), false);
      if (diagnostics.size() != before) continue;
      for (std::size_t k = 0; k < c.users.size(); ++k) {
        TaskCfg as_user = c.task;
        as_user.user = c.users[k].name;
        check_quota_admits(sink, s, as_user, index_path(index_path("workload.classes", i) + ".users", k), spec_by_name);
      }
    }
  }

  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const auto& e = s.events[i];
    const std::string p = index_path("events", i);
    if (!e.node.empty() && !known_node(e.node)) sink.error(p + ".node", q(e.node), "unknown node");
    for (std::size_t k = 0; k < e.nodes.size(); ++k)
      if (!known_node(e.nodes[k])) sink.error(index_path(p + ".nodes", k), q(e.nodes[k]), "unknown node");
    if (!e.task.empty() && !known_task(e.task))
      sink.error(p + ".task", q(e.task), "unknown task (not in tasks)");
  }

  // Scenario-wide totals (nodes were checked above, before expanding them).
  check_scenario_totals(s, [&](const std::string& field, const std::string& value, const std::string& rule) {
    if (field != "cluster.pools") sink.error(field, value, rule);
  });
}

}  // namespace sim::io
