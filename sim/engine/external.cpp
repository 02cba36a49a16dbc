// The external scheduler's rounds (external.hpp, docs/external-scheduler.md): the `decide`
// snapshot of the simulator's state out, the answer in, checked and applied through the
// Scheduler's own checks (Scheduler::preempt_for, Scheduler::start_at) so that the lifecycle,
// metrics and outputs take it exactly as a built-in decision.
#include "sim/engine/external.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/io/scenario_json.hpp"

namespace sim {

using namespace libsched;
using json = nlohmann::json;

namespace {

/// A JSON value as it appears in a message: one line, invalid UTF-8 replaced.
std::string ext_shown(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

/// The broken rule `what: rule` of an answer (the caller adds the instant).
[[noreturn]] void ext_fail(const std::string& what, const std::string& rule) { throw ExternalSchedulerError(what + ": " + rule); }

/// `obj[key]` as a string (required or absent), else an error about `what`.
std::optional<std::string> ext_string(const json& obj, const char* key, const std::string& what, bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) ext_fail(what, fmt::format("`{}` is missing", key));
    return std::nullopt;
  }
  if (!it->is_string()) ext_fail(what, fmt::format("`{}`: {}: must be a string", key, ext_shown(*it)));
  return it->get<std::string>();
}

/// Keys of object `obj` must be among `known` (an answer's shape is checked, not guessed).
void ext_known_keys(const json& obj, const std::string& what, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : obj.items())
    if (std::none_of(known.begin(), known.end(), [&k = k](const char* n) { return k == n; }))
      ext_fail(what, fmt::format("unknown key `{}`", k));
}

std::optional<ResourceType> ext_class(const std::string& s) {
  if (s == "reserved") return ResourceType::reserved;
  if (s == "pay_as_you_go") return ResourceType::pay_as_you_go;
  if (s == "spot") return ResourceType::spot;
  if (s == "idle") return ResourceType::idle;
  return std::nullopt;
}

}  // namespace

std::string Simulator::decide_snapshot(Time now) {
  if (compact_) throw std::logic_error("Simulator::decide_snapshot: needs a run that keeps ended tasks");
  if (!ext_) ext_ = std::make_unique<ExternalRun>();
  return external_snapshot(now);
}

std::string Simulator::external_snapshot(Time now) {
  ExternalRun& x = *ext_;
  if (x.head.empty()) {
    // The constant part: the scenario's cluster (trace nodes inline), quotas, node policies and
    // scheduler options, with the decide keys' order.
    json sc = io::scenario_to_json(sc_);
    std::string text = "{\"schema\":\"schedsim/decide-v1\"";
    for (const char* k : {"name", "seed", "cluster", "quotas", "node_policies", "scheduler"})
      if (auto it = sc.find(k); it != sc.end()) text += fmt::format(",\"{}\":{}", k, ext_shown(*it));
    x.head = std::move(text);
    x.task_text.assign(task_count(), std::string());
  }
  std::string s = x.head;
  s += ",\"now_s\":" + format_seconds(now);
  // Nodes down or drained (owner_changed_s is left to decide's default).
  s += ",\"node_state\":[";
  bool first = true;
  for (const Node& n : sched_->cluster().nodes()) {
    if (n.up && !n.drained) continue;
    s += fmt::format("{}{{\"node\":{},\"up\":{},\"drained\":{}}}", first ? "" : ",", ext_shown(json(n.name)), n.up ? "true" : "false",
                     n.drained ? "true" : "false");
    first = false;
  }
  s += "],\"tasks\":[";
  first = true;
  auto task_text = [&](int ti) -> const std::string& {
    std::string& t = x.task_text[std::size_t(ti)];
    if (t.empty()) {
      json j = io::task_to_json(task_cfg(std::size_t(ti)));
      j.erase("duration_s");  // the ground truth: not the scheduler's to know
      t = ext_shown(j);
      t.pop_back();  // the closing brace: a running task's `running` follows
    }
    return t;
  };
  // The running tasks (id order) with their placements, then the waiting tasks in queue order.
  for (TaskId id : sched_->running()) {
    const int ti = task_of_id_[id.index()];
    const Placement* p = sched_->placement_of(id);
    const TaskSpec& spec = sched_->task(id);
    s += first ? "" : ",";
    first = false;
    s += task_text(ti);
    s += fmt::format(",\"running\":{{\"start_s\":{}", format_seconds(p->start));
    if (!spec.options[p->option].label.empty()) s += ",\"spec\":" + ext_shown(json(spec.options[p->option].label));
    s += fmt::format(",\"capacity\":\"{}\",\"replicas\":[", libsched::to_string(p->capacity));
    for (std::size_t r = 0; r < p->replicas.size(); ++r) {
      const ReplicaAllocation& a = p->replicas[r];
      s += fmt::format("{}{{\"node\":{},\"gpus\":[", r ? "," : "", ext_shown(json(sched_->cluster().node(a.node).name)));
      bool g1 = true;
      for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) {
        s += fmt::format("{}{}", g1 ? "" : ",", std::countr_zero(m));
        g1 = false;
      }
      s += "]}";
    }
    s += "]}}";
  }
  for (TaskId id : sched_->queue()) {
    s += first ? "" : ",";
    first = false;
    s += task_text(task_of_id_[id.index()]);
    s += "}";
  }
  s += "]}";
  return s;
}

ScheduleResult Simulator::external_round(Time now) {
  ScheduleResult res;
  if (sched_->waiting_count() == 0) return res;  // nothing to decide: no exchange
  if (!ext_) ext_ = std::make_unique<ExternalRun>();
  ExternalRun& x = *ext_;
  const std::string at = fmt::format("--scheduler-cmd: t={} s: ", format_seconds(now));
  try {
    const std::string answer = opt_.external->exchange(external_snapshot(now));
    ++x.rounds;
    if (x.task_of_name.empty())
      for (std::size_t ti = 0; ti < task_count(); ++ti) x.task_of_name.emplace(task_name(ti), int(ti));
    const json d = json::parse(answer, nullptr, false);
    if (d.is_discarded()) ext_fail("answer", fmt::format("not JSON: {}", ext_shown(json(answer.substr(0, 200)))));
    if (!d.is_object()) ext_fail("answer", "must be a JSON object with `placements` and `preemptions`");
    ext_known_keys(d, "answer", {"now_s", "placements", "preemptions", "waiting", "next_eligibility_change_s"});
    if (auto it = d.find("now_s"); it != d.end() && !(it->is_number() && from_seconds(it->get<double>()) == now))
      ext_fail("answer", fmt::format("`now_s`: {}: must be the snapshot's now_s ({})", ext_shown(*it), format_seconds(now)));
    auto list = [&](const char* key) -> const json& {
      static const json empty = json::array();
      auto it = d.find(key);
      if (it == d.end()) return empty;
      if (!it->is_array()) ext_fail("answer", fmt::format("`{}`: must be an array", key));
      return *it;
    };
    const json& placements = list("placements");
    const json& preemptions = list("preemptions");
    // The task a name stands for, or an error about it.
    auto task_named = [&](const std::string& name, const std::string& what) {
      auto it = x.task_of_name.find(name);
      if (it == x.task_of_name.end()) ext_fail(what, "not a task of the scenario");
      return runs_[std::size_t(it->second)].id;
    };
    // Placements first read (the preemptions name their preemptors among them).
    std::vector<std::pair<TaskId, Adoption>> starts;
    for (std::size_t i = 0; i < placements.size(); ++i) {
      const json& p = placements[i];
      const std::string where = fmt::format("placements[{}]", i);
      if (!p.is_object()) ext_fail(where, "must be an object");
      const std::string name = *ext_string(p, "task", where, true);
      const std::string what = "task " + name;
      ext_known_keys(p, what, {"task", "spec", "option", "capacity", "replicas"});
      const TaskId id = task_named(name, what);
      if (!sched_->is_waiting(id)) ext_fail(what, sched_->is_running(id) ? "runs already" : "does not wait (not submitted or ended)");
      for (const auto& [other, o] : starts)
        if (other == id) ext_fail(what, "placed twice in one answer");
      const TaskSpec& spec = sched_->task(id);
      Adoption a;
      a.start = now;
      a.capacity = spec.resource_type;
      if (auto it = p.find("option"); it != p.end()) {
        if (!it->is_number_unsigned() || it->get<std::uint64_t>() >= spec.options.size())
          ext_fail(what, fmt::format("`option`: {}: must be an index into the task's {} options", ext_shown(*it), spec.options.size()));
        a.option = it->get<std::size_t>();
      }
      if (auto sp = ext_string(p, "spec", what, false)) {
        std::size_t k = 0;
        while (k < spec.options.size() && spec.options[k].label != *sp) ++k;
        if (k == spec.options.size() || (p.contains("option") && k != a.option))
          ext_fail(what, fmt::format("`spec`: {}: must name one of the task's specs (the one `option` names)", ext_shown(json(*sp))));
        a.option = k;
      }
      if (auto c = ext_string(p, "capacity", what, false)) {
        const auto cls = ext_class(*c);
        if (!cls) ext_fail(what, fmt::format("`capacity`: {}: must be reserved, pay_as_you_go, spot or idle", ext_shown(json(*c))));
        a.capacity = *cls;
      }
      auto reps = p.find("replicas");
      if (reps == p.end() || !reps->is_array()) ext_fail(what, "`replicas` must be an array: master/head first, then the workers");
      for (std::size_t r = 0; r < reps->size(); ++r) {
        const json& rj = (*reps)[r];
        const std::string rw = fmt::format("{}: replicas[{}]", what, r);
        if (!rj.is_object()) ext_fail(rw, "must be an object");
        ext_known_keys(rj, rw, {"node", "gpus", "gpu_milli", "vcpu", "memory_gib"});
        const std::string node = *ext_string(rj, "node", rw, true);
        ReplicaAssignment ra;
        ra.node = sched_->cluster().find_node(node);
        if (!ra.node.valid()) ext_fail(rw, fmt::format("node {}: not a node of the cluster", ext_shown(json(node))));
        if (auto g = rj.find("gpus"); g != rj.end()) {
          if (!g->is_array()) ext_fail(rw, "`gpus` must be an array of GPU indices");
          for (const json& gi : *g) {
            if (!gi.is_number_unsigned() || gi.get<std::uint64_t>() >= std::uint64_t(kMaxGpusPerNode))
              ext_fail(rw, fmt::format("`gpus`: {}: must be GPU indices from 0 to 63", ext_shown(gi)));
            const std::uint64_t bit = std::uint64_t{1} << gi.get<std::uint64_t>();
            if (ra.gpu_mask & bit) ext_fail(rw, fmt::format("`gpus`: names GPU {} twice", gi.get<std::uint64_t>()));
            ra.gpu_mask |= bit;
          }
        }
        a.replicas.push_back(ra);
      }
      starts.emplace_back(id, std::move(a));
    }
    // Preemptions, in order, each for a task this answer starts.
    for (std::size_t i = 0; i < preemptions.size(); ++i) {
      const json& p = preemptions[i];
      const std::string where = fmt::format("preemptions[{}]", i);
      if (!p.is_object()) ext_fail(where, "must be an object");
      const std::string victim = *ext_string(p, "victim", where, true);
      const std::string what = "task " + victim;
      ext_known_keys(p, what, {"victim", "preemptor", "kind"});
      const std::string preemptor = *ext_string(p, "preemptor", what, true);
      const TaskId v = task_named(victim, what), by = task_named(preemptor, "task " + preemptor);
      if (std::none_of(starts.begin(), starts.end(), [by](const auto& st) { return st.first == by; }))
        ext_fail(what, fmt::format("preempted for {}, which this answer does not place", preemptor));
      PreemptionKind kind{};
      try {
        kind = sched_->preempt_for(v, by, now);
      } catch (const libsched::Error& e) {
        ext_fail(what, e.what());
      }
      if (auto k = ext_string(p, "kind", what, false); k && *k != libsched::to_string(kind))
        ext_fail(what, fmt::format("`kind`: {}: the rules make this preemption {}", ext_shown(json(*k)), libsched::to_string(kind)));
      res.preemptions.push_back({v, by, kind});
    }
    for (const auto& [id, a] : starts) {
      try {
        sched_->start_at(id, a);
      } catch (const libsched::Error& e) {
        ext_fail("task " + sched_->task(id).name, e.what());
      }
      res.started.push_back(id);
    }
  } catch (const ExternalSchedulerError& e) {
    throw ExternalSchedulerError(at + e.what());
  }
  return res;
}

}  // namespace sim
