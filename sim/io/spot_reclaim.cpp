// The `spot_reclaim` section (docs/scenario-format.md "Spot reclaims"): pass 1 reads its shape
// (every key known, rates and notices finite numbers in range); check_spot_reclaim (spot_reclaim.hpp)
// checks its names once the cluster is complete.
#include "sim/io/spot_reclaim.hpp"

#include <set>
#include <string>

#include "sim/io/scenario_read_detail.hpp"

namespace sim::io {

namespace detail {

namespace {

SpotReclaimRateCfg read_reclaim_entry(Sink& sink, const json& j, const std::string& path) {
  SpotReclaimRateCfg r;
  Obj o(sink, j, path, {"rate_per_node_h", "notice_s"}, /*strict=*/true);
  if (!o.valid()) return r;
  o.number("rate_per_node_h", r.rate_per_node_h, Req::required, between(0, limits::max_reclaim_rate_per_node_h));
  o.number("notice_s", r.notice_s, Req::optional, between(0, k_max_time_s));
  return r;
}

}  // namespace

SpotReclaimCfg read_spot_reclaim(Sink& sink, const json& j, const std::string& path) {
  SpotReclaimCfg c;
  // Strict like `prices`: a misspelt key would silently leave spot never reclaimed.
  Obj o(sink, j, path, {"gpu_models", "pools"}, /*strict=*/true);
  if (!o.valid()) return c;
  auto table = [&](std::string_view key, std::map<std::string, SpotReclaimRateCfg>& out, const char* what) {
    const json* v = o.find(key);
    if (!v) return;
    if (!v->is_object()) {
      o.error(key, fmt::format("must be an object of reclaim models by {}", what));
      return;
    }
    for (const auto& [name, e] : v->items()) out[name] = read_reclaim_entry(sink, e, key_path(o.path(key), name));
  };
  table("gpu_models", c.gpu_models, "GPU model");
  table("pools", c.pools, "pool name");
  return c;
}

}  // namespace detail

void check_spot_reclaim(const Scenario& s, std::vector<Diagnostic>& diagnostics) {
  if (!s.spot_reclaim) return;
  detail::Sink sink(s.file, diagnostics);
  std::set<std::string> models, pools;
  for (const auto& p : s.cluster.pools) {
    pools.insert(p.name);
    for (const auto& g : p.node_groups)
      if (!g.gpu_model.empty()) models.insert(g.gpu_model);
    for (const auto& n : p.nodes)
      if (!n.gpu_model.empty()) models.insert(n.gpu_model);
  }
  for (const auto& [name, r] : s.spot_reclaim->gpu_models)
    if (!models.count(name))
      sink.error(detail::key_path("spot_reclaim.gpu_models", name), detail::q(name), "unknown GPU model (no node of the cluster has it)");
  for (const auto& [name, r] : s.spot_reclaim->pools)
    if (!pools.count(name))
      sink.error(detail::key_path("spot_reclaim.pools", name), detail::q(name), "unknown pool (not in cluster.pools)");
}

}  // namespace sim::io
