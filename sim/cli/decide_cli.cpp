#include "sim/cli/decide_cli.hpp"

#include <algorithm>
#include <cstdint>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <libsched/libsched.hpp>

#include "sim/io/limits.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/cli/validate_cli.hpp"
#include "sim/engine/simulator.hpp"

namespace sim {

namespace decide_detail {

/// `tasks[i].running`, checked against the scenario but not yet against the cluster's state.
struct RunningCfg {
  std::size_t task = 0;
  std::string path;
  nlohmann::json value;  ///< tasks[i].running as written (the VALUE of a diagnostic about it)
  double start_s = 0;
  std::size_t option = 0;
  libsched::ResourceType capacity = libsched::ResourceType::reserved;
  struct Replica {
    std::string node;
    std::uint64_t gpu_mask = 0;
  };
  std::vector<Replica> replicas;
};

struct NodeStateCfg {
  std::string path;
  nlohmann::json value;  ///< node_state[k] as written
  std::string node;
  std::optional<bool> up, drained;
  std::optional<double> owner_changed_s;
};

/// What read_snapshot keeps for snapshot_scheduler.
struct SnapshotParts {
  nlohmann::json doc;  ///< the snapshot as read as a scenario (the VALUE of diagnostics)
  std::vector<RunningCfg> runs;
  std::vector<NodeStateCfg> states;
  std::optional<Simulator> built;  ///< the library objects exactly as the simulator builds them
};

}  // namespace decide_detail

namespace {

using decide_detail::RunningCfg;
using decide_detail::NodeStateCfg;

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using io::Diagnostic;
using libsched::Time;

/// The snapshot's own keys (docs/decide.md); every other top-level key is the scenario's.
constexpr const char* k_schema = "schedsim/decide-v1";
/// Scenario keys that mean nothing for one decision: warned about and ignored.
const std::vector<std::string> k_ignored_top = {"events", "traces", "fill", "until_s", "timeseries_interval_s"};

class Report {
 public:
  Report(std::string file, std::vector<Diagnostic>& out) : file_(std::move(file)), out_(out) {}
  void error(std::string path, const json* value, std::string rule) {
    out_.push_back({Diagnostic::Severity::error, file_, std::move(path), value ? dump(*value) : io::missing_value, std::move(rule)});
  }
  void warning(std::string path, const json& value, std::string rule) {
    out_.push_back({Diagnostic::Severity::warning, file_, std::move(path), dump(value), std::move(rule)});
  }
  /// Warns about every key of object `j` not in `known`.
  void unknown_keys(const json& j, const std::string& path, const std::vector<std::string>& known) {
    for (const auto& [k, v] : j.items())
      if (std::find(known.begin(), known.end(), k) == known.end()) warning(path + "." + k, v, fmt::format("unknown key `{}` (ignored)", k));
  }
  /// A number in [lo, hi] at `path`, or nullopt after reporting.
  std::optional<double> number(const json& obj, const std::string& key, const std::string& path, bool required, double lo, double hi) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) error(path, nullptr, "required key is missing");
      return std::nullopt;
    }
    if (!it->is_number()) {
      error(path, &*it, "must be a number");
      return std::nullopt;
    }
    const double d = it->get<double>();
    if (!(d >= lo && d <= hi)) {
      error(path, &*it, fmt::format("must be between {} and {}", lo, hi));
      return std::nullopt;
    }
    return d;
  }
  std::optional<bool> boolean(const json& obj, const std::string& key, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (!it->is_boolean()) {
      error(path, &*it, "must be a boolean (true or false)");
      return std::nullopt;
    }
    return it->get<bool>();
  }
  std::optional<std::string> string(const json& obj, const std::string& key, const std::string& path, bool required) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) error(path, nullptr, "required key is missing");
      return std::nullopt;
    }
    if (!it->is_string()) {
      error(path, &*it, "must be a string");
      return std::nullopt;
    }
    return it->get<std::string>();
  }
  std::size_t errors() const { return io::count_errors(out_); }

 private:
  static std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
  std::string file_;
  std::vector<Diagnostic>& out_;
};

Time ms(double s) { return libsched::from_seconds(s); }

std::optional<libsched::ResourceType> resource_type(const std::string& s) {
  using libsched::ResourceType;
  if (s == "reserved") return ResourceType::reserved;
  if (s == "pay_as_you_go") return ResourceType::pay_as_you_go;
  if (s == "spot") return ResourceType::spot;
  if (s == "idle") return ResourceType::idle;
  return std::nullopt;
}

/// `nodes`: the cluster's node names, or nullptr when the cluster has errors (names unchecked).
std::optional<RunningCfg> read_running(Report& rep, const json& j, const std::string& path, std::size_t task,
                                       const io::TaskCfg& t, const std::vector<std::string>* nodes) {
  if (!j.is_object()) {
    rep.error(path, &j, "must be an object");
    return std::nullopt;
  }
  const std::size_t before = rep.errors();
  rep.unknown_keys(j, path, {"start_s", "spec", "capacity", "replicas"});
  RunningCfg r;
  r.task = task;
  r.path = path;
  r.value = j;
  if (auto v = rep.number(j, "start_s", path + ".start_s", true, 0, io::limits::max_time_s)) r.start_s = *v;
  if (auto spec = rep.string(j, "spec", path + ".spec", false)) {
    auto it = std::find(t.specs.begin(), t.specs.end(), *spec);
    if (it == t.specs.end())
      rep.error(path + ".spec", &j["spec"], "must name one of the task's specs");
    else
      r.option = std::size_t(it - t.specs.begin());  // options are the specs in order (or one inline replica)
  }
  auto rt = resource_type(t.resource_type);
  if (rt) r.capacity = *rt;
  if (auto c = rep.string(j, "capacity", path + ".capacity", false)) {
    if (auto v = resource_type(*c)) r.capacity = *v;
    else rep.error(path + ".capacity", &j["capacity"], "must be one of reserved, pay_as_you_go, spot, idle");
  }
  auto reps = j.find("replicas");
  if (reps == j.end()) {
    rep.error(path + ".replicas", nullptr, "required key is missing");
  } else if (!reps->is_array() || reps->empty()) {
    rep.error(path + ".replicas", &*reps, "must be a non-empty array");
  } else {
    for (std::size_t k = 0; k < reps->size(); ++k) {
      const json& e = (*reps)[k];
      const std::string ep = fmt::format("{}.replicas[{}]", path, k);
      if (!e.is_object()) {
        rep.error(ep, &e, "must be an object");
        continue;
      }
      rep.unknown_keys(e, ep, {"node", "gpus"});
      RunningCfg::Replica out;
      if (auto n = rep.string(e, "node", ep + ".node", true)) {
        if (nodes && std::find(nodes->begin(), nodes->end(), *n) == nodes->end())
          rep.error(ep + ".node", &e["node"], "must name a cluster node");
        out.node = *n;
      }
      if (auto g = e.find("gpus"); g != e.end()) {
        if (!g->is_array()) {
          rep.error(ep + ".gpus", &*g, "must be an array of GPU indices");
        } else {
          for (std::size_t x = 0; x < g->size(); ++x) {
            const json& gi = (*g)[x];
            const std::string gp = fmt::format("{}.gpus[{}]", ep, x);
            if (!gi.is_number_integer() || gi.get<std::int64_t>() < 0 || gi.get<std::int64_t>() >= libsched::kMaxGpusPerNode) {
              rep.error(gp, &gi, "must be a GPU index from 0 to 63");
              continue;
            }
            const std::uint64_t bit = std::uint64_t{1} << gi.get<std::int64_t>();
            if (out.gpu_mask & bit) rep.error(gp, &gi, "names a GPU twice");
            out.gpu_mask |= bit;
          }
        }
      }
      r.replicas.push_back(std::move(out));
    }
  }
  if (rep.errors() > before) return std::nullopt;
  return r;
}

std::optional<NodeStateCfg> read_node_state(Report& rep, const json& j, const std::string& path,
                                            const std::vector<std::string>* nodes) {
  if (!j.is_object()) {
    rep.error(path, &j, "must be an object");
    return std::nullopt;
  }
  const std::size_t before = rep.errors();
  rep.unknown_keys(j, path, {"node", "up", "drained", "owner_changed_s"});
  NodeStateCfg s;
  s.path = path;
  s.value = j;
  if (auto n = rep.string(j, "node", path + ".node", true)) {
    if (nodes && std::find(nodes->begin(), nodes->end(), *n) == nodes->end())
      rep.error(path + ".node", &j["node"], "must name a cluster node");
    s.node = *n;
  }
  s.up = rep.boolean(j, "up", path + ".up");
  s.drained = rep.boolean(j, "drained", path + ".drained");
  s.owner_changed_s = rep.number(j, "owner_changed_s", path + ".owner_changed_s", false, 0, io::limits::max_time_s);
  if (rep.errors() > before) return std::nullopt;
  return s;
}

std::vector<int> gpu_list(std::uint64_t mask) {
  std::vector<int> v;
  for (int i = 0; i < 64; ++i)
    if ((mask >> i) & 1u) v.push_back(i);
  return v;
}

/// The RULE of a diagnostic from a libsched error message: without the function that threw
/// ("Scheduler::adopt_task: ", "Cluster::allocate_exact: ") nor "task NAME: " (the path names
/// the task), e.g. "node a100-0: not enough free GPUs".
std::string decide_rule(std::string m, const std::string& task) {
  for (bool again = true; again;) {
    again = false;
    const auto colon = m.find(": ");
    const auto scope = m.find("::");
    if (scope != std::string::npos && colon != std::string::npos && scope < colon &&
        m.find_first_of(" \t", 0) > colon) {  // "Type::function: " before any space
      m.erase(0, colon + 2);
      again = true;
    }
    if (!task.empty() && m.rfind("task " + task + ": ", 0) == 0) {
      m.erase(0, task.size() + 7);
      again = true;
    }
  }
  return m;
}

ojson seconds_json(Time t) {
  // Whole seconds as integers, else the exact millisecond value as a decimal number.
  if (t % 1000 == 0) return ojson(t / 1000);
  return ojson(libsched::to_seconds(t));
}

/// The decision with one line per top-level key and one line per list entry (compact JSON
/// inside), so that a decision is readable and diffable; still one JSON document.
std::string render(const ojson& d) {
  std::string s = "{\n";
  std::size_t k = 0;
  for (const auto& [key, value] : d.items()) {
    s += "  " + ojson(key).dump() + ": ";
    if (value.is_array() && !value.empty()) {
      s += "[\n";
      for (std::size_t i = 0; i < value.size(); ++i) s += "    " + value[i].dump() + (i + 1 < value.size() ? ",\n" : "\n");
      s += "  ]";
    } else {
      s += value.dump();
    }
    s += ++k < d.size() ? ",\n" : "\n";
  }
  return s + "}\n";
}

}  // namespace

DecideSnapshot::DecideSnapshot() = default;
DecideSnapshot::~DecideSnapshot() = default;

std::unique_ptr<DecideSnapshot> read_snapshot(std::string_view text, const std::string& label, const libsched::Registry& registry,
                                        std::vector<io::Diagnostic>& diagnostics) {
  std::unique_ptr<DecideSnapshot> out;  // set once everything is valid
  std::optional<json> parsed = io::parse_scenario_json(text, label, diagnostics);
  if (!parsed) return out;
  Report rep(label, diagnostics);
  json& j = *parsed;
  if (!j.is_object()) {
    rep.error("<root>", &j, "a decide snapshot must be a JSON object");
    return out;
  }

  // 1. Take the snapshot's own keys out; what is left is read as a scenario.
  if (auto it = j.find("schema"); it != j.end()) {
    if (!it->is_string() || it->get<std::string>() != k_schema) rep.error("schema", &*it, fmt::format("must be \"{}\"", k_schema));
  }
  j["schema"] = "schedsim/v1";
  if (!j.contains("name")) j["name"] = "decide";
  const std::optional<double> now_s = rep.number(j, "now_s", "now_s", true, 0, io::limits::max_time_s);
  json node_state = j.contains("node_state") ? j["node_state"] : json::array();
  j.erase("now_s");
  j.erase("node_state");
  for (const auto& k : k_ignored_top)
    if (auto it = j.find(k); it != j.end()) {
      rep.warning(k, *it, "ignored by decide (a snapshot is one instant)");
      j.erase(it);
    }
  const bool no_tasks = !j.contains("tasks") || (j["tasks"].is_array() && j["tasks"].empty());
  if (!j.contains("tasks")) j["tasks"] = json::array();
  std::vector<std::pair<std::size_t, json>> running;  // (task index, tasks[i].running)
  std::vector<bool> duration_given;
  if (j["tasks"].is_array())
    for (std::size_t i = 0; i < j["tasks"].size(); ++i) {
      json& t = j["tasks"][i];
      if (!t.is_object()) continue;
      if (auto it = t.find("running"); it != t.end()) {
        running.emplace_back(i, *it);
        t.erase(it);
      }
      duration_given.resize(i + 1, false);
      duration_given[i] = t.contains("duration_s");
      if (!t.contains("duration_s")) t["duration_s"] = 1;  // unknown to a scheduler; not used by a decision
    }

  io::ParseResult pr = io::parse_scenario_document(j, label, registry);
  std::size_t scenario_errors = 0;
  bool cluster_errors = false;
  std::vector<bool> task_errors(j["tasks"].is_array() ? j["tasks"].size() : 0, false);
  for (auto& d : pr.diagnostics) {
    if (no_tasks && d.path == "tasks") continue;  // an empty queue is a valid snapshot
    if (d.is_error()) {
      ++scenario_errors;
      cluster_errors = cluster_errors || d.path.rfind("cluster", 0) == 0;
      for (std::size_t i = 0; i < task_errors.size(); ++i)
        if (d.path.rfind(fmt::format("tasks[{}]", i), 0) == 0) task_errors[i] = true;
    }
    diagnostics.push_back(std::move(d));
  }
  if (!pr.scenario) return out;
  // The snapshot's keys are checked even when the scenario has errors (every problem in one
  // pass): node names only against a cluster without errors, a task's `running` only when the
  // task itself has none (its specs are known).
  const io::Scenario& sc = *pr.scenario;
  const bool tasks_aligned = j["tasks"].is_array() && sc.tasks.size() == j["tasks"].size();

  // 2. The snapshot's own keys, against the scenario.
  const std::vector<std::string> node_names = io::expanded_node_names(sc.cluster);
  const std::vector<std::string>* nodes = cluster_errors ? nullptr : &node_names;
  // Every task, waiting or running, was submitted by now_s (a task of the future is not the
  // scheduler's yet).
  if (now_s && tasks_aligned)
    for (std::size_t i = 0; i < sc.tasks.size(); ++i)
      if (!task_errors[i] && sc.tasks[i].submit_s > *now_s)  // submit_s was given (its default 0 is never late): its JSON as written
        rep.error(fmt::format("tasks[{}].submit_s", i), &j.at("tasks").at(i).at("submit_s"),
                  fmt::format("must be <= now_s ({}): the task is not submitted yet", *now_s));
  std::vector<RunningCfg> runs;
  for (const auto& [i, rj] : running) {
    if (!tasks_aligned || task_errors[i]) continue;
    if (auto r = read_running(rep, rj, fmt::format("tasks[{}].running", i), i, sc.tasks[i], nodes)) {
      if (now_s && r->start_s > *now_s) rep.error(r->path + ".start_s", &rj["start_s"], "must be <= now_s");
      else if (r->start_s < sc.tasks[i].submit_s)
        rep.error(r->path + ".start_s", &rj["start_s"],
                  fmt::format("must be >= the task's submit_s ({}): an attempt starts after its submission", sc.tasks[i].submit_s));
      runs.push_back(std::move(*r));
    }
  }
  std::vector<NodeStateCfg> states;
  if (!node_state.is_array()) {
    rep.error("node_state", &node_state, "must be an array");
  } else {
    std::map<std::string, std::size_t> state_of;  // node -> its node_state entry
    for (std::size_t k = 0; k < node_state.size(); ++k)
      if (auto s = read_node_state(rep, node_state[k], fmt::format("node_state[{}]", k), nodes)) {
        if (const auto [it, fresh] = state_of.emplace(s->node, k); !fresh) {
          rep.error(s->path + ".node", &node_state[k]["node"],
                    fmt::format("node_state[{}] is already about this node: one entry per node", it->second));
          continue;
        }
        states.push_back(std::move(*s));
      }
  }
  if (rep.errors() > 0 || scenario_errors > 0 || !now_s) return out;
  auto parts = std::make_unique<decide_detail::SnapshotParts>();
  try {
    SimOptions so;
    so.registry = &registry;
    parts->built.emplace(sc, so);
  } catch (const std::exception& e) {
    rep.error("<root>", nullptr, decide_rule(e.what(), ""));
    return out;
  }
  parts->doc = std::move(j);
  parts->runs = std::move(runs);
  parts->states = std::move(states);
  out = std::make_unique<DecideSnapshot>();
  out->scenario = std::move(*pr.scenario);
  out->now = ms(*now_s);
  out->registry = &registry;
  out->running_start.assign(out->scenario.tasks.size(), -1);
  for (const auto& r : parts->runs) out->running_start[r.task] = ms(r.start_s);
  out->duration_given = std::move(duration_given);
  out->duration_given.resize(out->scenario.tasks.size(), false);
  out->parts = std::move(parts);
  return out;
}

std::unique_ptr<libsched::Scheduler> snapshot_scheduler(const DecideSnapshot& snap, const std::string& label,
                                                        std::vector<io::Diagnostic>& diagnostics) {
  Report rep(label, diagnostics);
  const decide_detail::SnapshotParts& parts = *snap.parts;
  const io::Scenario& sc = snap.scenario;
  const json& j = parts.doc;
  const Time now = snap.now;
  const libsched::Registry& registry = *snap.registry;
  // The library objects exactly as the simulator builds them from a scenario.
  const libsched::Scheduler& model = parts.built->scheduler();
  auto sp = std::make_unique<libsched::Scheduler>(model.cluster(), model.options(), registry);
  libsched::Scheduler& s = *sp;
  for (const auto& p : model.node_policies()) s.add_node_policy(p);
  for (const auto& [k, e] : model.quotas().entries()) s.quotas().set_limit(k, e.limit);

  std::vector<const RunningCfg*> run_of(sc.tasks.size(), nullptr);
  for (const auto& r : parts.runs) run_of[r.task] = &r;
  for (std::size_t i = 0; i < sc.tasks.size(); ++i) {
    const libsched::TaskSpec& spec = model.task(libsched::TaskId(std::int32_t(i)));
    try {
      if (const RunningCfg* r = run_of[i]) {
        libsched::Adoption a;
        a.option = r->option;
        a.capacity = r->capacity;
        a.start = ms(r->start_s);
        for (const auto& rr : r->replicas) a.replicas.push_back({s.cluster().find_node(rr.node), rr.gpu_mask});
        s.adopt_task(spec, a);
      } else {
        s.enqueue(s.add_task(spec), now);
      }
    } catch (const libsched::Error& e) {
      if (run_of[i]) rep.error(run_of[i]->path, &run_of[i]->value, decide_rule(e.what(), spec.name));
      else rep.error(fmt::format("tasks[{}]", i), &j.at("tasks").at(i), decide_rule(e.what(), spec.name));
    }
  }
  for (const auto& st : parts.states) {
    libsched::NodeId n = s.cluster().find_node(st.node);
    try {
      if (st.owner_changed_s) s.set_owner_change(n, ms(*st.owner_changed_s));
      if (st.drained.value_or(false)) s.drain_node(n);
      if (st.up && !*st.up) s.set_node_up(n, false, now);
    } catch (const libsched::Error& e) {
      rep.error(st.path, &st.value, decide_rule(e.what(), ""));
    }
  }
  if (rep.errors() > 0) return nullptr;
  return sp;
}

DecideResult decide(std::string_view text, const std::string& label, const libsched::Registry& registry) {
  DecideResult out;
  std::unique_ptr<DecideSnapshot> snap = read_snapshot(text, label, registry, out.diagnostics);
  if (!snap) return out;
  std::unique_ptr<libsched::Scheduler> sp = snapshot_scheduler(*snap, label, out.diagnostics);
  if (!sp) return out;
  libsched::Scheduler& s = *sp;
  const io::Scenario& sc = snap->scenario;
  const Time now = snap->now;

  // 4. One decision, then why every task still waits.
  libsched::ScheduleResult res = s.schedule(now);
  std::vector<std::string> name_of(s.task_count());
  for (std::size_t i = 0; i < sc.tasks.size(); ++i) name_of[i] = sc.tasks[i].name;  // task i has id i
  ojson d;
  d["now_s"] = seconds_json(now);
  ojson placements = ojson::array();
  for (libsched::TaskId t : res.started) {
    const libsched::Placement* p = s.placement_of(t);
    if (!p) continue;  // started, then preempted in the same call
    ojson pj;
    pj["task"] = name_of[t.index()];
    pj["spec"] = s.task(t).options[p->option].label;
    pj["option"] = p->option;
    pj["capacity"] = std::string(libsched::to_string(p->capacity));
    ojson reps = ojson::array();
    for (const auto& a : p->replicas) {
      ojson rj;
      rj["node"] = s.cluster().node(a.node).name;
      rj["gpus"] = gpu_list(a.gpu_mask);
      rj["gpu_milli"] = a.gpu_milli;
      rj["vcpu"] = double(a.cpu_milli) / 1000.0;
      rj["memory_gib"] = double(a.mem_mib) / 1024.0;
      reps.push_back(std::move(rj));
    }
    pj["replicas"] = std::move(reps);
    placements.push_back(std::move(pj));
  }
  d["placements"] = std::move(placements);
  ojson preemptions = ojson::array();
  for (const auto& p : res.preemptions)
    preemptions.push_back(ojson{{"victim", name_of[p.victim.index()]},
                                {"preemptor", name_of[p.preemptor.index()]},
                                {"kind", std::string(libsched::to_string(p.kind))}});
  d["preemptions"] = std::move(preemptions);
  ojson waiting = ojson::array();
  for (libsched::TaskId t : s.queue()) {
    libsched::WaitStatus ws = s.explain(t, now);
    ojson blocking = ojson::array();
    for (auto c : ws.blocking) blocking.push_back(std::string(libsched::to_string(c)));
    waiting.push_back(ojson{{"task", name_of[t.index()]},
                            {"code", std::string(libsched::to_string(ws.code))},
                            {"bucket", std::string(libsched::wait_bucket(ws.primary()))},
                            {"blocking", std::move(blocking)},
                            {"reason", ws.reason}});
  }
  d["waiting"] = std::move(waiting);
  const Time next = s.next_eligibility_change(now);
  d["next_eligibility_change_s"] = next == libsched::kTimeNever ? ojson(nullptr) : seconds_json(next);
  out.decision = std::move(d);
  return out;
}

int decide_command(std::istream& in, std::ostream& out, std::ostream& err, const libsched::Registry& registry) {
  std::vector<io::Diagnostic> diagnostics;
  const auto text = io::read_scenario_stream(in, "<stdin>", "a snapshot", diagnostics);
  if (!text) {
    for (const auto& diag : diagnostics) err << diag.str() << '\n';
    return in.bad() ? 1 : io::exit_invalid_input;
  }
  DecideResult r = decide(*text, "<stdin>", registry);
  for (const auto& diag : r.diagnostics) err << diag.str() << '\n';
  if (!r.decision) return io::exit_invalid_input;
  out << render(*r.decision);
  out.flush();
  return out ? 0 : 1;
}

}  // namespace sim
