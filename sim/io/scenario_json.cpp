// Scenario JSON entry points (text, file, document) and the reader of the root object. The sections
// are read in scenario_read_*.cpp, checked in scenario_validate.cpp, written in scenario_to_json.cpp;
// docs/scenario-format.md lists the keys and the rules (each rule names its source there).
#include "sim/io/scenario_json.hpp"

#include <string>
#include <utility>

#include "sim/io/json_file.hpp"
#include "sim/io/scenario_read_detail.hpp"

namespace sim::io {

using nlohmann::json;
using namespace detail;

namespace {

// ------------------------------------------------------------------ pass 1: the root object

Scenario read_scenario(Sink& sink, const json& j, const libsched::Registry& registry) {
  Scenario s;
  Obj o(sink, j, "",
        {"schema", "name", "seed", "until_s", "timeseries_interval_s", "cluster", "quotas", "node_policies", "scheduler",
         "tasks", "events", "traces", "workload", "fill", "prices", "spot_reclaim", "arrival_scale",
         "measure", "throughput"});
  if (!o.valid()) return s;
  if (const json* v = o.get("schema", Req::required)) {
    if (!v->is_string() || v->get_ref<const std::string&>() != "schedsim/v1")
      o.error("schema", "must be \"schedsim/v1\"");
  }
  o.str("name", s.name, Req::required, true);
  o.uint64("seed", s.seed);
  o.number("until_s", s.until_s, between(0, k_max_time_s));
  if (o.number("timeseries_interval_s", s.timeseries_interval_s, Req::optional, between(0, k_max_time_s)) &&
      s.timeseries_interval_s > 0 && s.timeseries_interval_s < 1)
    sink.error("timeseries_interval_s", num_text(s.timeseries_interval_s), "must be 0 (automatic) or >= 1");
  if (const json* c = o.get("cluster", Req::required)) s.cluster = read_cluster(sink, *c, "cluster");
  o.array("quotas", Req::optional, [&](const json& e, const std::string& p) { s.quotas.push_back(read_quota(sink, e, p)); });
  o.array("node_policies", Req::optional,
          [&](const json& e, const std::string& p) { s.node_policies.push_back(read_policy(sink, e, p)); });
  if (const json* sc = o.find("scheduler")) s.scheduler = read_scheduler(sink, *sc, "scheduler", registry);
  o.array("traces", Req::optional, [&](const json& e, const std::string& p) { s.traces.push_back(read_trace(sink, e, p)); });
  if (const json* w = o.find("workload")) s.workload = read_workload(sink, *w, "workload");
  const json* tasks = o.find("tasks");
  if (!tasks && s.traces.empty() && !o.has("workload"))
    sink.error("tasks", missing_value, "required key is missing (tasks may be absent or empty only when traces are given)");
  else if (tasks && tasks->is_array() && tasks->empty() && s.traces.empty() && !o.has("workload"))
    o.error("tasks", "must not be empty unless traces are given");
  o.array("tasks", Req::optional, [&](const json& e, const std::string& p) { s.tasks.push_back(read_task(sink, e, p)); });
  o.array("events", Req::optional, [&](const json& e, const std::string& p) { s.events.push_back(read_event(sink, e, p)); });
  if (const json* f = o.find("fill")) {
    Obj fo(sink, *f, "fill", {"target_pct"});
    fo.number("target_pct", s.fill.target_pct, Req::optional, above(0));
  }
  if (const json* pr = o.find("prices")) s.prices = read_prices(sink, *pr, "prices");
  if (const json* sr = o.find("spot_reclaim")) s.spot_reclaim = read_spot_reclaim(sink, *sr, "spot_reclaim");
  o.number("arrival_scale", s.arrival_scale, Req::optional, Range{0, false, limits::max_arrival_scale, true});
  if (const json* m = o.find("measure")) {
    Obj mo(sink, *m, "measure", {"start_s", "end_s"}, /*strict=*/true);
    MeasureCfg mc;
    const bool a = mo.number("start_s", mc.start_s, Req::required, between(0, k_max_time_s));
    const bool b = mo.number("end_s", mc.end_s, Req::required, Range{0, false, k_max_time_s, true});
    if (a && b && !(mc.end_s > mc.start_s)) mo.error("end_s", fmt::format("must be > start_s ({})", num_text(mc.start_s)));
    else if (a && b && mo.valid()) s.measure = mc;
  }
  if (const json* th = o.find("throughput")) s.throughput = read_throughput(sink, *th, "throughput");
  return s;
}

}  // namespace

// ------------------------------------------------------------------ entry points

bool ParseResult::ok() const { return scenario.has_value() && count_errors(diagnostics) == 0; }

std::optional<json> parse_scenario_json(std::string_view text, const std::string& file_label,
                                        std::vector<Diagnostic>& diagnostics) {
  return parse_json_text<json>(text, file_label, diagnostics);
}

ParseResult parse_scenario_document(const json& j, const std::string& file_label,
                                    const libsched::Registry& registry) {
  ParseResult r;
  Sink sink(file_label, r.diagnostics);
  if (!j.is_object()) {
    sink.error("<root>", dump(j), "a scenario must be a JSON object");
    return r;
  }
  try {
    Scenario s = read_scenario(sink, j, registry);
    s.file = file_label;
    validate_scenario(s, r.diagnostics);
    r.scenario = std::move(s);
  } catch (const json::exception& e) {  // defensive: never escapes as an abort
    sink.error("<root>", "", std::string("cannot read the scenario: ") + e.what());
  }
  return r;
}

ParseResult parse_scenario_text(std::string_view text, const std::string& file_label,
                                const libsched::Registry& registry) {
  ParseResult r;
  auto j = parse_scenario_json(text, file_label, r.diagnostics);
  if (!j) return r;
  return parse_scenario_document(*j, file_label, registry);
}

std::optional<std::string> read_scenario_stream(std::istream& in, const std::string& label, std::string_view what,
                                                std::vector<Diagnostic>& diagnostics) {
  return read_text_stream(in, label, what, diagnostics);
}

std::optional<std::string> read_scenario_file(const std::string& path, std::vector<Diagnostic>& diagnostics) {
  JsonReadOptions o;
  o.allow_pipe = true;  // `schedsim run <(generate ...)`
  return read_text_file(path, "a scenario file", diagnostics, o).text;
}


ParseResult load_scenario_file(const std::string& path, const libsched::Registry& registry) {
  ParseResult r;
  auto text = read_scenario_file(path, r.diagnostics);
  if (!text) return r;
  return parse_scenario_text(*text, path, registry);
}

}  // namespace sim::io
