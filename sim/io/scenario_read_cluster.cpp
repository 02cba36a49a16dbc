// Pass 1, the `cluster` section: instance specs, pools, node groups and nodes.
#include "sim/io/scenario_read_detail.hpp"

namespace sim::io::detail {

namespace {

InstanceSpecCfg read_spec(Sink& sink, const json& j, const std::string& path) {
  InstanceSpecCfg s;
  Obj o(sink, j, path, {"name", "gpu_model", "gpus", "gpu_milli", "vcpu", "memory_gib"});
  o.str("name", s.name, Req::required, true);
  o.str("gpu_model", s.gpu_model);
  o.integer("gpus", s.gpus, Req::optional, between(0, k_max_node_gpus));
  if (o.integer("gpu_milli", s.gpu_milli, Req::optional, between(1, 1000)) && s.gpu_milli < 1000 && s.gpus != 1)
    o.error("gpu_milli", "a GPU share (gpu_milli < 1000) needs gpus == 1");
  o.number("vcpu", s.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", s.memory_gib, Req::optional, between(0, k_max_amount));
  return s;
}

NodeGroupCfg read_node_group(Sink& sink, const json& j, const std::string& path) {
  NodeGroupCfg g;
  Obj o(sink, j, path,
        {"prefix", "count", "gpu_model", "gpus", "vcpu", "memory_gib", "nodes_per_rack", "racks_per_switch", "labels",
         "mtbf_s", "mttr_s", "unhealthy_prob"});
  o.str("prefix", g.prefix, Req::required);
  o.integer("count", g.count, Req::required, between(1, k_max_group_count));
  o.str("gpu_model", g.gpu_model);
  o.integer("gpus", g.gpus, Req::optional, between(0, k_max_node_gpus));
  o.number("vcpu", g.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", g.memory_gib, Req::optional, between(0, k_max_amount));
  o.integer("nodes_per_rack", g.nodes_per_rack, Req::optional, at_least(0));
  o.integer("racks_per_switch", g.racks_per_switch, Req::optional, at_least(0));
  o.labels("labels", g.labels);
  o.number("mtbf_s", g.mtbf_s, Req::optional, between(0, k_max_time_s));
  o.number("mttr_s", g.mttr_s, Req::optional, between(0, k_max_time_s));
  o.number("unhealthy_prob", g.unhealthy_prob, Req::optional, between(0, 1));
  return g;
}

NodeCfg read_node(Sink& sink, const json& j, const std::string& path) {
  NodeCfg n;
  Obj o(sink, j, path, {"name", "gpu_model", "gpus", "vcpu", "memory_gib", "rack", "labels"});
  o.str("name", n.name, Req::required, true);
  o.str("gpu_model", n.gpu_model);
  o.integer("gpus", n.gpus, Req::optional, between(0, k_max_node_gpus));
  o.number("vcpu", n.vcpu, Req::optional, between(0, k_max_amount));
  o.number("memory_gib", n.memory_gib, Req::optional, between(0, k_max_amount));
  o.str("rack", n.rack);
  o.labels("labels", n.labels);
  return n;
}

PoolCfg read_pool(Sink& sink, const json& j, const std::string& path) {
  PoolCfg p;
  Obj o(sink, j, path, {"name", "kind", "node_groups", "nodes"});
  o.str("name", p.name, Req::required, true);
  o.enumeration("kind", p.kind, k_pool_kinds);
  o.array("node_groups", Req::optional,
          [&](const json& e, const std::string& ep) { p.node_groups.push_back(read_node_group(sink, e, ep)); });
  o.array("nodes", Req::optional,
          [&](const json& e, const std::string& ep) { p.nodes.push_back(read_node(sink, e, ep)); });
  return p;
}

}  // namespace

ClusterCfg read_cluster(Sink& sink, const json& j, const std::string& path) {
  ClusterCfg c;
  Obj o(sink, j, path, {"name", "region", "instance_specs", "pools"});
  o.str("name", c.name);
  o.str("region", c.region);
  o.array("instance_specs", Req::optional,
          [&](const json& e, const std::string& ep) { c.instance_specs.push_back(read_spec(sink, e, ep)); });
  o.array("pools", Req::optional,
          [&](const json& e, const std::string& ep) { c.pools.push_back(read_pool(sink, e, ep)); });
  return c;
}

}  // namespace sim::io::detail
