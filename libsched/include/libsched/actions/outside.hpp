// Action `outside`: starts that another party decided, checked and committed as the scheduler's
// own would be. Scheduler::start_at (an external scheduler's decision, schedsim run
// --scheduler-cmd) and Scheduler::adopt_task (a running task restored from a snapshot or taken
// over from another scheduler) call these; the Scheduler keeps the id checks and registration.
//
// Contract. take_exact either takes every replica where the decision says or takes nothing and
// throws. start_decided either commits the whole start (quota charged, never a victim at this
// instant) or throws before anything changes.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "libsched/decisions.hpp"
#include "libsched/errors.hpp"
#include "libsched/node_policy.hpp"
#include "libsched/session.hpp"

namespace libsched::actions {

/// Takes every replica of `a` (an option of `spec`) on its node exactly
/// (Cluster::allocate_exact: replica 0 the head shape, the others the worker's; GPU mask 0: the
/// node picks the GPUs). On a throw (InvalidState: the replica does not fit; InvalidArgument: a
/// malformed GPU mask) releases what it took and rethrows.
inline std::vector<ReplicaAllocation> take_exact(Cluster& cluster, const TaskSpec& spec, const Adoption& a) {
  std::vector<ReplicaAllocation> got;
  const GangOption& o = spec.options[a.option];
  try {
    for (std::size_t i = 0; i < a.replicas.size(); ++i)
      got.push_back(cluster.allocate_exact(a.replicas[i].node, i == 0 ? o.head : o.worker, a.replicas[i].gpu_mask));
  } catch (...) {
    for (auto it = got.rbegin(); it != got.rend(); ++it) cluster.release(*it);
    throw;
  }
  return got;
}

/// Starts waiting task `t` at `a.start` (ms) exactly where an outside decision says: checked
/// as a built-in start is (every replica on a node up, not drained, of a pool open to the task
/// on that class, allowed by the node policies and idle stability, fitting what is free there;
/// the admission plugin admits the whole gang's demand), then committed as schedule() commits
/// one. Preconditions (the caller checked them): `t` is known and `a.start` is not before the
/// last call's instant. Throws InvalidState (`t` does not wait, a node is not eligible, a replica
/// does not fit, admission refuses), InvalidArgument (option, class, replica count, GPU mask),
/// UnknownNode. On a throw nothing changes. Rules: docs/platform.md (gangs start whole).
inline void start_decided(Session::Core& st, TaskId t, const Adoption& a) {
  const Time now = a.start;
  const Session::Entry& e = st.tasks_[t.index()];
  const TaskSpec& spec = e.spec;
  if (e.state != Session::State::waiting) throw InvalidState(fmt::format("Scheduler::start_at: task {} does not wait", spec.name));
  if (a.option >= spec.options.size())
    throw InvalidArgument(fmt::format("option {} is not one of the task's {} options", a.option, spec.options.size()));
  const auto cls = Session::classes(spec);
  if (std::find(cls.begin(), cls.end(), a.capacity) == cls.end())
    throw InvalidArgument(fmt::format("may not run on {} capacity", to_string(a.capacity)));
  if (a.replicas.size() != std::size_t(spec.replicas()))
    throw InvalidArgument(fmt::format("{} replicas given for a gang of {} (a gang starts whole or not at all)", a.replicas.size(),
                                      spec.replicas()));
  for (const auto& r : a.replicas) st.cluster_.node(r.node);  // throws UnknownNode
  Session session(st, now);
  const NodeFilter f = NodeFilter::build(st.policies_, spec, now, st.cluster_.size());
  for (const auto& r : a.replicas) {
    const Node& n = st.cluster_.node(r.node);
    if (!n.up) throw InvalidState(fmt::format("node {} is {}", n.name, n.removed ? "removed" : "down"));
    if (n.drained) throw InvalidState(fmt::format("node {} is drained (takes no new replica)", n.name));
    if (!session.node_eligible(spec, a.capacity, r.node, f, now, false))
      throw InvalidState(fmt::format("node {} is not eligible on {} capacity (pool, node policy or idle stability)", n.name,
                                     to_string(a.capacity)));
  }
  const QuotaKey k = Session::quota_key(spec, a.capacity);
  const Resources d = spec.demand(a.option);
  if (!session.admits(k, spec, t, d))
    throw InvalidState(fmt::format("admission ({}) refuses the gang's demand on {} capacity (quota of {})", st.options_.admission,
                                   to_string(a.capacity), spec.user));
  std::vector<ReplicaAllocation> got = take_exact(st.cluster_, spec, a);
  Placement p;
  p.task = t;
  p.option = a.option;
  p.capacity = a.capacity;
  p.replicas = std::move(got);
  p.start = now;
  p.quota_key = k;
  p.quota_held = a.capacity == ResourceType::idle ? Resources{} : d;
  if (a.capacity != ResourceType::idle) st.quotas_.charge(k, d, +1);
  // Nothing throws from here on: the instant is noted, then the start committed.
  if (now != st.started_now_at_) {
    st.started_now_.clear();
    st.started_now_at_ = now;
  }
  session.note_time(now);
  session.commit_start(t, std::move(p), now);
}

}  // namespace libsched::actions
