// The cross-section rules of `prices` (sim/io/prices.hpp).
#include "sim/io/prices.hpp"

#include <array>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "sim/io/scenario_read_detail.hpp"

namespace sim::io {

using namespace detail;

namespace {

constexpr std::array<std::string_view, 4> k_classes = {"reserved", "pay_as_you_go", "spot", "idle"};

const std::optional<double>& price_of(const ClassPricesCfg& c, std::size_t cls) {
  switch (cls) {
    case 0: return c.reserved;
    case 1: return c.pay_as_you_go;
    case 2: return c.spot;
    default: return c.idle;
  }
}

}  // namespace

void check_prices(const Scenario& s, std::vector<Diagnostic>& diagnostics) {
  if (!s.prices) return;
  const PricesCfg& pr = *s.prices;
  Sink sink(s.file, diagnostics);

  // GPU models of the cluster: node groups, nodes (trace nodes included), instance specs.
  std::set<std::string> models;
  std::map<std::string, std::set<std::string>> pool_models;
  for (const auto& p : s.cluster.pools) {
    for (const auto& g : p.node_groups)
      if (!g.gpu_model.empty() && g.gpus > 0 && g.count > 0) pool_models[p.name].insert(g.gpu_model), models.insert(g.gpu_model);
    for (const auto& n : p.nodes)
      if (!n.gpu_model.empty() && n.gpus > 0) pool_models[p.name].insert(n.gpu_model), models.insert(n.gpu_model);
  }
  std::map<std::string, const InstanceSpecCfg*> specs;
  for (const auto& sp : s.cluster.instance_specs) {
    specs.emplace(sp.name, &sp);
    if (!sp.gpu_model.empty()) models.insert(sp.gpu_model);
  }
  for (const auto& [name, c] : pr.gpu_models)
    if (!models.count(name))
      sink.error(key_path("prices.gpu_models", name), q(name), "unknown GPU model (no node or instance spec of the cluster has it)");
  for (const auto& [name, c] : pr.instance_specs)
    if (!specs.count(name)) sink.error(key_path("prices.instance_specs", name), q(name), "unknown spec (not in cluster.instance_specs)");

  auto model_price = [&](const std::string& model, std::size_t cls) -> std::optional<double> {
    auto it = pr.gpu_models.find(model);
    return it == pr.gpu_models.end() ? std::nullopt : price_of(it->second, cls);
  };

  // Reserved commitments: one reserved price per pool (the quota is GPUs, not GPUs of a model).
  std::array<std::string, 4> unpriced;  // by class: an example of what is not priced ("" = none)
  bool reserved_used = false;
  for (std::size_t i = 0; i < s.quotas.size(); ++i) {
    const QuotaCfg& qc = s.quotas[i];
    if (qc.resource_type != "reserved" || qc.gpus <= 0) continue;
    reserved_used = true;
    const auto it = pool_models.find(qc.pool);
    if (it == pool_models.end()) continue;  // a pool without GPU nodes: nothing to commit to
    std::set<std::optional<double>> prices;
    for (const auto& m : it->second) prices.insert(model_price(m, 0));
    if (prices.size() > 1) {
      sink.error(index_path("quotas", i) + ".pool", q(qc.pool),
                 fmt::format("the pool has GPU models {} with different reserved prices in prices.gpu_models; a reserved "
                             "quota is committed per GPU of one price: give its models one reserved price or split the pool",
                             fmt::join(it->second, ", ")));
      continue;
    }
    if (!*prices.begin() && unpriced[0].empty())
      unpriced[0] = fmt::format("quotas[{}] (user `{}`, pool `{}`, GPU model {}) has no reserved price", i, qc.user, qc.pool,
                                fmt::join(it->second, "/"));
  }

  // Per-use classes of the tasks: is every way a task may run priced?
  auto replica_priced = [&](const std::string& spec_name, std::size_t cls) {
    auto it = specs.find(spec_name);
    if (it == specs.end()) return true;  // an error of its own
    if (auto sp = pr.instance_specs.find(spec_name); sp != pr.instance_specs.end() && price_of(sp->second, cls)) return true;
    const InstanceSpecCfg& sp = *it->second;
    if (sp.gpus > 0 && !sp.gpu_model.empty()) return model_price(sp.gpu_model, cls).has_value();
    if (sp.gpus > 0) {  // any model
      for (const auto& m : models)
        if (!model_price(m, cls)) return false;
      return true;
    }
    return price_of(pr.cpu_vcpu, cls).has_value();
  };
  auto task_problem = [&](const TaskCfg& t, std::size_t cls) -> std::string {
    for (const auto& sp : t.specs)
      if (!replica_priced(sp, cls)) return fmt::format("spec `{}`", sp);
    if (!t.head_spec.empty() && !replica_priced(t.head_spec, cls)) return fmt::format("spec `{}`", t.head_spec);
    if (t.replica) {
      if (t.replica->gpus == 0) return price_of(pr.cpu_vcpu, cls) ? "" : "a CPU-only replica (prices.cpu_vcpu)";
      const std::set<std::string> allowed = t.replica->gpu_models.empty()
                                                ? models
                                                : std::set<std::string>(t.replica->gpu_models.begin(), t.replica->gpu_models.end());
      for (const auto& m : allowed)
        if (!model_price(m, cls)) return fmt::format("GPU model {}", m);
    }
    return "";
  };
  for (const TaskCfg& t : s.tasks) {
    for (std::size_t cls = 1; cls < 4; ++cls) {
      const bool uses = t.resource_type == k_classes[cls] ||
                        (cls == 3 && t.resource_type == "reserved" && (t.accept_idle || t.prefer_idle));
      if (!uses || !unpriced[cls].empty()) continue;
      if (std::string what = task_problem(t, cls); !what.empty())
        unpriced[cls] = fmt::format("task `{}` may run on {} without a {} price", t.name, what, k_classes[cls]);
    }
    if (t.resource_type == "reserved") reserved_used = true;
  }
  for (std::size_t cls = 0; cls < 4; ++cls) {
    if (unpriced[cls].empty() || (cls == 0 && !reserved_used)) continue;
    sink.warning("prices", q(std::string(k_classes[cls])),
                 fmt::format("{} capacity is used but not priced everywhere ({}): it costs 0 there", k_classes[cls],
                             unpriced[cls]));
  }
}

}  // namespace sim::io
