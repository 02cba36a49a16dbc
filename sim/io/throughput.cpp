// The `throughput` section (docs/heterogeneity.md, docs/scenario-format.md "Throughput"): pass 1
// reads its shape (every key known, speeds in range); check_throughput checks its GPU models once
// the cluster is complete; glob_match and throughput_row pick a task's row.
#include "sim/io/throughput.hpp"

#include <functional>
#include <set>
#include <string>

#include "sim/io/scenario_read_detail.hpp"

namespace sim::io {

namespace detail {

std::vector<ThroughputCfg> read_throughput(Sink& sink, const json& j, const std::string& path) {
  std::vector<ThroughputCfg> rows;
  if (!j.is_array()) {
    sink.error(path, dump(j), "must be an array of {\"match\": ..., \"speed\": ...} rows");
    return rows;
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = index_path(path, i);
    ThroughputCfg row;
    // Strict like `prices`: a misspelt key would silently leave every task at speed 1.0.
    Obj o(sink, j[i], p, {"match", "speed"}, /*strict=*/true);
    if (!o.valid()) continue;
    if (const json* m = o.get("match", Req::required)) {
      Obj mo(sink, *m, o.path("match"), {"name_glob"}, /*strict=*/true);
      mo.str("name_glob", row.name_glob, Req::required, true);
    }
    if (const json* sp = o.get("speed", Req::required)) {
      if (!sp->is_object() || sp->empty()) {
        o.error("speed", "must be a non-empty object of relative speeds by GPU model");
      } else {
        for (const auto& [model, v] : sp->items()) {
          const std::string mp = key_path(o.path("speed"), model);
          if (model.empty()) sink.error(mp, dump(v), "a GPU model name must not be empty");
          else if (!v.is_number()) sink.error(mp, dump(v), "must be a number");
          else if (const double d = v.get<double>(); !(d >= limits::min_gpu_speed && d <= limits::max_gpu_speed))
            sink.error(mp, dump(v), fmt::format("must be > 0 and finite, between {} and {}", num_text(limits::min_gpu_speed),
                                                num_text(limits::max_gpu_speed)));
          else row.speed[model] = d;
        }
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace detail

bool glob_match(std::string_view glob, std::string_view name) {
  // Iterative wildcard match with one backtrack point (the last `*`): O(|glob| x |name|).
  std::size_t g = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g;
      ++n;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      mark = n;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

const ThroughputCfg* throughput_row(const std::vector<ThroughputCfg>& rows, std::string_view name) {
  for (const auto& r : rows)
    if (glob_match(r.name_glob, name)) return &r;
  return nullptr;
}

void check_throughput(const Scenario& s, std::vector<Diagnostic>& diagnostics) {
  if (s.throughput.empty()) return;
  detail::Sink sink(s.file, diagnostics);
  std::set<std::string, std::less<>> models;
  for (const auto& p : s.cluster.pools) {
    for (const auto& g : p.node_groups)
      if (!g.gpu_model.empty()) models.insert(g.gpu_model);
    for (const auto& n : p.nodes)
      if (!n.gpu_model.empty()) models.insert(n.gpu_model);
  }
  for (std::size_t i = 0; i < s.throughput.size(); ++i)
    for (const auto& [model, v] : s.throughput[i].speed)
      if (!models.count(model))
        sink.error(detail::key_path(detail::index_path("throughput", i) + ".speed", model), detail::num_text(v),
                   "unknown GPU model (no node of the cluster has it)");
}

}  // namespace sim::io
