// `schedsim import k8s`: nodes -> pools, priority classes, Kueue flavors and queues -> pools,
// GPU models, reserved quotas and tenants; pod templates -> replica shapes (docs/kubernetes.md).
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>

#include "sim/io/k8s_detail.hpp"
#include "sim/io/limits.hpp"

namespace sim::io::k8s_detail {

using nlohmann::json;

namespace {

constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;
const char* const k_gpu = "nvidia.com/gpu";

/// Pod spec fields that change where or whether a pod runs and that the scenario cannot express.
const char* const k_unmapped_pod_fields[] = {
    "nodeSelector", "affinity",     "tolerations",       "topologySpreadConstraints", "schedulerName",
    "nodeName",     "runtimeClassName", "overhead",      "priority",                  "preemptionPolicy",
    "resourceClaims", "schedulingGates", "hostNetwork"};

/// Resources a pod may request that the scenario ignores without changing where it runs.
bool k8s_harmless_resource(const std::string& r) {
  return r == "ephemeral-storage" || r.starts_with("hugepages-");
}

const json* k8s_obj(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace

void Context::warn(const Object& o, const std::string& field, const std::string& reason) {
  if (!warned.insert(o.id() + "\n" + field).second) return;
  out.warnings.push_back(escape_for_diagnostic(fmt::format("import: {}: {}: not mapped: {}", o.id(), field, reason)));
}

void Context::error(const Object& o, const std::string& field, const json& value, const std::string& rule) {
  std::string v = value.is_null() ? std::string(missing_value) : value.dump();
  if (v.size() > 200) v = v.substr(0, 200) + "...";
  out.errors.push_back({Diagnostic::Severity::error, o.file, o.path() + (field.empty() ? "" : "." + field), v, rule});
}

bool flag(Context& cx, const Object& o, const std::string& field, const json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    cx.error(o, field.empty() ? key : field + "." + key, *it, "must be true or false");
    return false;
  }
  return it->get<bool>();
}

json array_at(Context& cx, const Object& o, const std::string& field, const json& obj, const char* key) {
  if (!obj.is_object()) return json::array();
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return json::array();
  if (!it->is_array()) {
    cx.error(o, field.empty() ? key : field + "." + key, *it, "must be an array");
    return json::array();
  }
  return *it;
}

std::optional<double> quantity(Context& cx, const Object& o, const std::string& field, const json& v) {
  std::optional<double> q;
  if (v.is_number()) q = v.get<double>() >= 0 ? std::optional<double>(v.get<double>()) : std::nullopt;
  else if (v.is_string()) q = parse_k8s_quantity(v.get<std::string>());
  if (!q) cx.error(o, field, v, "not a Kubernetes quantity (e.g. 8, 500m, 64Gi)");
  return q;
}

Shape resources_shape(Context& cx, const Object& o, const std::string& field, const json& res) {
  Shape s;
  if (!res.is_object()) return s;
  // requests win; a resource with only a limit requests its limit (Kubernetes defaulting)
  std::map<std::string, std::pair<std::string, json>> want;
  for (const char* part : {"limits", "requests"})
    if (const json* m = k8s_obj(res, part))
      for (auto it = m->begin(); it != m->end(); ++it) want[it.key()] = {field + "." + part + "." + it.key(), *it};
  for (const auto& [name, fv] : want) {
    const auto& [path, v] = fv;
    if (name == "cpu") {
      if (auto q = quantity(cx, o, path, v)) s.vcpu = *q;
    } else if (name == "memory") {
      if (auto q = quantity(cx, o, path, v)) s.memory_gib = *q / k_gib;
    } else if (name == k_gpu) {
      if (auto q = quantity(cx, o, path, v)) {
        if (*q != std::floor(*q) || *q > limits::max_node_gpus)
          cx.error(o, path, v, fmt::format("must be a whole number of GPUs from 0 to {}", limits::max_node_gpus));
        else s.gpus = static_cast<int>(*q);
      }
    } else if (!k8s_harmless_resource(name)) {
      cx.warn(o, path, fmt::format("resource `{}` is not modelled (only cpu, memory and nvidia.com/gpu)", name));
    }
  }
  return s;
}

Shape pod_shape(Context& cx, const Object& o, const std::string& field, const json& tmpl) {
  Shape total;
  const json* spec = k8s_obj(tmpl, "spec");
  if (!spec) return total;
  for (const char* f : k_unmapped_pod_fields)
    if (spec->contains(f) && !(*spec)[f].is_null())
      cx.warn(o, fmt::format("{}.spec.{}", field, f), "the scenario has no node selection or scheduler choice per pod");
  const json containers = array_at(cx, o, field + ".spec", *spec, "containers");
  for (std::size_t i = 0; i < containers.size(); ++i) {
    const Shape c = resources_shape(cx, o, fmt::format("{}.spec.containers[{}].resources", field, i),
                                    containers[i].is_object() ? containers[i].value("resources", json::object()) : json::object());
    total.gpus += c.gpus;
    total.vcpu += c.vcpu;
    total.memory_gib += c.memory_gib;
  }
  // Init containers run one at a time before the others: the pod needs the largest of them.
  const json inits = array_at(cx, o, field + ".spec", *spec, "initContainers");
  for (std::size_t i = 0; i < inits.size(); ++i) {
    const Shape c = resources_shape(cx, o, fmt::format("{}.spec.initContainers[{}].resources", field, i),
                                    inits[i].is_object() ? inits[i].value("resources", json::object()) : json::object());
    total.gpus = std::max(total.gpus, c.gpus);
    total.vcpu = std::max(total.vcpu, c.vcpu);
    total.memory_gib = std::max(total.memory_gib, c.memory_gib);
  }
  if (total.gpus > limits::max_node_gpus)
    cx.error(o, field + ".spec.containers", total.gpus, fmt::format("a pod asks for at most {} GPUs", limits::max_node_gpus));
  return total;
}

// ------------------------------------------------------------------ nodes and priority classes

void read_cluster(Context& cx, const std::vector<Object>& objects) {
  Scenario& s = cx.out.scenario;
  for (const auto& o : objects) {
    if (o.kind == "PriorityClass") {
      const json& v = o.j.contains("value") ? o.j["value"] : json();
      if (!v.is_number_integer() || v.get<long long>() < -2147483648LL || v.get<long long>() > 2147483647LL) {
        cx.error(o, "value", v, "must be a 32-bit integer");
        continue;
      }
      cx.priority_classes[o.name] = {v.get<int>(), flag(cx, o, "", o.j, "globalDefault")};
      if (str_at(o.j, "preemptionPolicy") == "Never")
        cx.warn(o, "preemptionPolicy", "a non-preempting priority is not modelled (every priority may preempt)");
    } else if (o.kind == "WorkloadPriorityClass") {
      const json& v = o.j.contains("value") ? o.j["value"] : json();
      if (!v.is_number_integer() || v.get<long long>() < -2147483648LL || v.get<long long>() > 2147483647LL) {
        cx.error(o, "value", v, "must be a 32-bit integer");
        continue;
      }
      cx.workload_priority_classes[o.name] = v.get<int>();
    }
    if (o.kind != "Node") continue;
    NodeCfg n;
    n.name = o.name;
    std::map<std::string, std::string> labels;
    if (const json* md = k8s_obj(o.j, "metadata"); md && k8s_obj(*md, "labels"))
      for (auto it = (*md)["labels"].begin(); it != (*md)["labels"].end(); ++it)
        if (it->is_string()) labels[it.key()] = it->get<std::string>();
    n.labels = labels;
    const json* st = k8s_obj(o.j, "status");
    const json* alloc = st ? k8s_obj(*st, "allocatable") : nullptr;
    std::string alloc_path = "status.allocatable";
    if (!alloc && st && k8s_obj(*st, "capacity")) {
      alloc = k8s_obj(*st, "capacity");
      alloc_path = "status.capacity";
    }
    if (!alloc) {
      cx.error(o, "status.allocatable", json(), "required: the node's schedulable cpu, memory and nvidia.com/gpu");
      continue;
    }
    for (auto it = alloc->begin(); it != alloc->end(); ++it) {
      const std::string path = alloc_path + "." + it.key();
      if (it.key() == "cpu") {
        if (auto q = quantity(cx, o, path, *it)) n.vcpu = *q;
      } else if (it.key() == "memory") {
        if (auto q = quantity(cx, o, path, *it)) n.memory_gib = *q / k_gib;
      } else if (it.key() == k_gpu) {
        if (auto q = quantity(cx, o, path, *it)) {
          if (*q != std::floor(*q) || *q > limits::max_node_gpus)
            cx.error(o, path, *it, fmt::format("must be a whole number of GPUs from 0 to {}", limits::max_node_gpus));
          else n.gpus = static_cast<int>(*q);
        }
      } else if (it.key() != "pods" && !k8s_harmless_resource(it.key())) {
        cx.warn(o, path, fmt::format("resource `{}` is not modelled (only cpu, memory and nvidia.com/gpu)", it.key()));
      }
    }
    for (const char* model_label : {"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator"})
      if (auto it = labels.find(model_label); it != labels.end() && n.gpu_model.empty()) n.gpu_model = it->second;
    if (n.gpus == 0) n.gpu_model.clear();
    if (const json* spec = k8s_obj(o.j, "spec")) {
      if (auto t = spec->find("taints"); t != spec->end() && t->is_array()) {
        for (const auto& taint : *t)
          if (str_at(taint, "effect") != "PreferNoSchedule") {
            cx.warn(o, "spec.taints", "taints and tolerations are not modelled: every pod may use the node");
            break;
          }
      }
      if (flag(cx, o, "spec", *spec, "unschedulable")) {
        cx.warn(o, "spec.unschedulable", "a scenario node always takes pods (the --snapshot marks it drained)");
        cx.out.unschedulable_nodes.push_back(o.name);
      }
    }
    std::string pool = "default";
    if (!cx.opts.pool_label.empty()) {
      if (auto it = labels.find(cx.opts.pool_label); it != labels.end() && !it->second.empty()) pool = it->second;
      else cx.warn(o, "metadata.labels." + cx.opts.pool_label, "the node has no such label: put in pool `default`");
    }
    if (cx.pool_of_node.count(n.name)) {
      cx.error(o, "metadata.name", n.name, "a node is given twice");
      continue;
    }
    cx.pool_of_node[n.name] = pool;
    cx.model_of_node[n.name] = n.gpu_model;
    cx.nodes.emplace_back(n.name, labels);
    auto p = std::find_if(s.cluster.pools.begin(), s.cluster.pools.end(), [&](const PoolCfg& x) { return x.name == pool; });
    if (p == s.cluster.pools.end()) {
      PoolCfg pc;
      pc.name = pool;
      s.cluster.pools.push_back(pc);
      p = s.cluster.pools.end() - 1;
    }
    p->nodes.push_back(std::move(n));
  }
}

// ------------------------------------------------------------------ Kueue

namespace {

/// The pool and GPU model of the nodes a flavor's nodeLabels select.
Placement k8s_flavor_placement(Context& cx, const Object& o, const std::map<std::string, std::string>& node_labels) {
  Placement pl;
  std::set<std::string> pools, models;
  for (const auto& [node, labels] : cx.nodes) {
    bool match = true;
    for (const auto& [k, v] : node_labels)
      if (auto it = labels.find(k); it == labels.end() || it->second != v) match = false;
    if (!match) continue;
    pools.insert(cx.pool_of_node[node]);
    models.insert(cx.model_of_node[node]);
  }
  if (auto it = node_labels.find("nvidia.com/gpu.product"); it != node_labels.end()) pl.gpu_model = it->second;
  else if (models.size() == 1) pl.gpu_model = *models.begin();
  if (pools.size() == 1) {
    pl.pool = *pools.begin();
  } else if (cx.nodes.empty()) {
    auto it = cx.opts.pool_label.empty() ? node_labels.end() : node_labels.find(cx.opts.pool_label);
    pl.pool = it != node_labels.end() ? it->second : "default";
  } else if (pools.empty()) {
    pl.pool = cx.out.scenario.cluster.pools.empty() ? "default" : cx.out.scenario.cluster.pools.front().name;
    cx.warn(o, "spec.nodeLabels", fmt::format("selects no node read; its queues use pool `{}`", pl.pool));
  } else {
    pl.pool = *pools.begin();
    cx.warn(o, "spec.nodeLabels", fmt::format("selects nodes of {} pools; its queues use pool `{}` (a task has one pool; "
                                              "give --pool-label to match the flavors)", pools.size(), pl.pool));
  }
  return pl;
}

void k8s_read_cluster_queue(Context& cx, const Object& o) {
  Queue q;
  q.name = o.name;
  const json* spec = k8s_obj(o.j, "spec");
  if (!spec) {
    cx.error(o, "spec", json(), "required");
    return;
  }
  const std::string cohort = !str_at(*spec, "cohort").empty() ? str_at(*spec, "cohort") : str_at(*spec, "cohortName");
  bool borrowing = !cohort.empty();
  for (const char* f : {"preemption", "flavorFungibility", "admissionChecks", "admissionChecksStrategy", "fairSharing",
                        "admissionScope", "stopPolicy"})
    if (spec->contains(f) && !(*spec)[f].is_null() && !(std::string(f) == "stopPolicy" && (*spec)[f] == "None"))
      cx.warn(o, std::string("spec.") + f, "Kueue's per-queue policy is not modelled (the scenario's preemption and "
                                           "admission rules apply)");
  if (const json* ns = k8s_obj(*spec, "namespaceSelector"); ns && !ns->empty())
    cx.warn(o, "spec.namespaceSelector", "every LocalQueue read may submit to the queue");
  std::map<std::string, QuotaCfg> by_pool;
  std::vector<std::string> pool_order;
  const json groups = array_at(cx, o, "spec", *spec, "resourceGroups");
  bool first_flavor = true;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const json flavors = array_at(cx, o, fmt::format("spec.resourceGroups[{}]", g), groups[g], "flavors");
    for (std::size_t f = 0; f < flavors.size(); ++f) {
      const std::string fpath = fmt::format("spec.resourceGroups[{}].flavors[{}]", g, f);
      const std::string fname = str_at(flavors[f], "name");
      Placement pl;
      if (auto it = cx.flavors.find(fname); it != cx.flavors.end()) pl = it->second;
      else {
        pl.pool = cx.out.scenario.cluster.pools.empty() ? "default" : cx.out.scenario.cluster.pools.front().name;
        cx.warn(o, fpath + ".name", fmt::format("ResourceFlavor `{}` not among the objects read; pool `{}` used", fname, pl.pool));
      }
      if (first_flavor) q.placement = pl;
      else if (pl.pool != q.placement.pool || pl.gpu_model != q.placement.gpu_model)
        cx.warn(o, fpath, fmt::format("a task has one pool and GPU model: the queue's tasks use its first flavor's "
                                      "(pool `{}`); this flavor's quota is kept in pool `{}`", q.placement.pool, pl.pool));
      first_flavor = false;
      if (!by_pool.count(pl.pool)) pool_order.push_back(pl.pool);
      QuotaCfg& quota = by_pool[pl.pool];
      const json res = array_at(cx, o, fpath, flavors[f], "resources");
      for (std::size_t r = 0; r < res.size(); ++r) {
        const std::string rpath = fmt::format("{}.resources[{}]", fpath, r);
        const std::string rname = str_at(res[r], "name");
        const json& nominal = res[r].is_object() && res[r].contains("nominalQuota") ? res[r]["nominalQuota"] : json();
        auto v = quantity(cx, o, rpath + ".nominalQuota", nominal);
        if (v) {
          if (rname == "cpu") quota.vcpu += *v;
          else if (rname == "memory") quota.memory_gib += *v / k_gib;
          else if (rname == k_gpu) quota.gpus += *v;
          else if (!k8s_harmless_resource(rname) && rname != "pods")
            cx.warn(o, rpath + ".name", fmt::format("resource `{}` is not modelled (only cpu, memory and nvidia.com/gpu)", rname));
        }
        if (res[r].contains("borrowingLimit")) {
          auto b = quantity(cx, o, rpath + ".borrowingLimit", res[r]["borrowingLimit"]);
          if (b && *b == 0) borrowing = false;
          else if (b && !cohort.empty())
            cx.warn(o, rpath + ".borrowingLimit", "borrowing maps to accept_idle, which has no limit");
        }
        if (res[r].contains("lendingLimit"))
          cx.warn(o, rpath + ".lendingLimit", "a reserved quota lends all its unused capacity (as idle capacity)");
      }
    }
  }
  q.accept_idle = borrowing;
  if (groups.empty()) cx.warn(o, "spec.resourceGroups", "no resource group: the queue's tasks get a zero quota");
  for (const auto& pool : pool_order) {
    QuotaCfg quota = by_pool[pool];
    quota.user = o.name;
    quota.resource_type = "reserved";
    quota.pool = pool;
    for (double* x : {&quota.gpus, &quota.vcpu, &quota.memory_gib})
      if (*x > limits::max_amount) {
        cx.error(o, "spec.resourceGroups", *x, "a quota must be <= 1e9");
        *x = 0;
      }
    cx.out.scenario.quotas.push_back(quota);
  }
  cx.cluster_queues[o.name] = q;
}

}  // namespace

void read_kueue(Context& cx, const std::vector<Object>& objects) {
  for (const auto& o : objects) {
    if (o.kind != "ResourceFlavor") continue;
    std::map<std::string, std::string> nl;
    const json* spec = k8s_obj(o.j, "spec");
    if (const json* m = spec ? k8s_obj(*spec, "nodeLabels") : nullptr)
      for (auto it = m->begin(); it != m->end(); ++it)
        if (it->is_string()) nl[it.key()] = it->get<std::string>();
    for (const char* f : {"nodeTaints", "tolerations", "topologyName"})
      if (spec && spec->contains(f)) cx.warn(o, std::string("spec.") + f, "taints, tolerations and topologies of a flavor are not modelled");
    cx.flavors[o.name] = k8s_flavor_placement(cx, o, nl);
  }
  std::set<std::string> strategies;
  for (const auto& o : objects) {
    if (o.kind != "ClusterQueue") continue;
    k8s_read_cluster_queue(cx, o);
    const json* spec = k8s_obj(o.j, "spec");
    strategies.insert(spec && !str_at(*spec, "queueingStrategy").empty() ? str_at(*spec, "queueingStrategy") : "BestEffortFIFO");
  }
  // scheduler.queueing is global: strict only when every queue is StrictFIFO
  const bool strict = strategies.size() == 1 && *strategies.begin() == "StrictFIFO";
  cx.out.scenario.scheduler.queueing = strict ? "strict" : "greedy";
  for (const auto& o : objects) {
    if (o.kind == "ClusterQueue" && !strict) {
      const json* spec = k8s_obj(o.j, "spec");
      if (spec && str_at(*spec, "queueingStrategy") == "StrictFIFO")
        cx.warn(o, "spec.queueingStrategy", "queueing is one mode for the whole scenario: greedy (BestEffortFIFO), "
                                            "since not every ClusterQueue is StrictFIFO");
    }
    if (o.kind != "LocalQueue") continue;
    const json* spec = k8s_obj(o.j, "spec");
    const std::string cq = spec ? str_at(*spec, "clusterQueue") : "";
    if (cq.empty()) cx.error(o, "spec.clusterQueue", json(), "required");
    else cx.local_queues[o.ns + "/" + o.name] = cq;
  }
}

}  // namespace sim::io::k8s_detail
