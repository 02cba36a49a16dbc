// Checks of the public API's arguments, shared by Scheduler and its helpers. Each throws a typed
// error from libsched/errors.hpp whose message names the function, the argument and the rule;
// none changes anything. Costs are O(size of the argument).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "libsched/cluster.hpp"
#include "libsched/errors.hpp"
#include "libsched/node_policy.hpp"
#include "libsched/quota.hpp"
#include "libsched/task.hpp"

namespace libsched::detail {

/// A replica shape the scheduler can model (docs/scheduler.md "Library API"): 0..64 GPUs; with
/// GPUs, 1..1000 milli-GPU each and < 1000 only for a single GPU (a share of one GPU);
/// vCPU and memory >= 0. InvalidArgument. (A `models` bit of a model no node has yet is allowed:
/// it matches no node until one with that model is added.)
/// `where()` builds the message prefix only when a rule fails (tasks are checked at every
/// add_task: no formatting on the way through).
template <class Where>
inline void check_shape(const ReplicaShape& r, const Cluster&, const Where& where) {
  auto bad = [&](const std::string& rule) { throw InvalidArgument(fmt::format("{}: {}", where(), rule)); };
  if (r.num_gpu < 0 || r.num_gpu > kMaxGpusPerNode) bad(fmt::format("num_gpu {} out of 0..64", r.num_gpu));
  if (r.num_gpu > 0) {
    if (r.gpu_milli < 1 || r.gpu_milli > kMilliPerGpu) bad(fmt::format("gpu_milli {} out of 1..1000", r.gpu_milli));
    if (r.gpu_milli < kMilliPerGpu && r.num_gpu != 1)
      bad(fmt::format("{} GPUs of {} milli-GPU: a GPU share (gpu_milli < 1000) needs num_gpu == 1", r.num_gpu, r.gpu_milli));
  }
  if (r.cpu_milli < 0) bad(fmt::format("negative vCPU ({} milli-vCPU)", r.cpu_milli));
  if (r.mem_mib < 0) bad(fmt::format("negative memory ({} MiB)", r.mem_mib));
}

/// A task the scheduler can model: at least one option, workers >= 0, every shape valid
/// (check_shape), priority 1..9 (idle tasks: ignored, they have none), a known pool (required
/// for reserved), accept_idle / prefer_idle only on reserved, no guarantee on idle or spot,
/// runtime_estimate -1 or >= 0, checkpoint_interval >= 0, every gpu_speed > 0 and finite.
/// InvalidArgument; UnknownPool.
inline void check_task(const TaskSpec& s, const Cluster& c, std::string_view fn) {
  auto where = [&] { return fmt::format("{}: task {}", fn, s.name); };  // built only on failure
  auto bad = [&](const std::string& rule) { throw InvalidArgument(fmt::format("{}: {}", where(), rule)); };
  if (s.options.empty()) bad("has no candidate spec (options is empty)");
  if (s.workers < 0) bad(fmt::format("workers {} < 0", s.workers));
  for (std::size_t i = 0; i < s.options.size(); ++i) {
    check_shape(s.options[i].head, c, [&] { return fmt::format("{}: options[{}].head", where(), i); });
    check_shape(s.options[i].worker, c, [&] { return fmt::format("{}: options[{}].worker", where(), i); });
  }
  if (!s.is_idle() && (s.priority < 1 || s.priority > 9)) bad(fmt::format("priority {} out of 1..9", s.priority));
  if (s.pool.valid() && s.pool.index() >= c.pools().size())
    throw UnknownPool(fmt::format("{}: unknown pool id {}", where(), s.pool.value));
  if (s.resource_type == ResourceType::reserved && !s.pool.valid()) bad("a reserved task needs a pool");
  if (s.resource_type != ResourceType::reserved && (s.accept_idle || s.prefer_idle))
    bad(fmt::format("accept_idle / prefer_idle need resource type reserved, not {}", to_string(s.resource_type)));
  if (s.guarantee && (s.is_idle() || s.resource_type == ResourceType::spot))
    bad(fmt::format("a {} task cannot carry guarantee", to_string(s.resource_type)));
  if (s.runtime_estimate < -1) bad(fmt::format("runtime_estimate {} ms: -1 (unknown) or >= 0", s.runtime_estimate));
  if (s.checkpoint_interval < 0) bad(fmt::format("checkpoint_interval {} ms < 0", s.checkpoint_interval));
  for (const auto& g : s.gpu_speed)
    if (!(g.speed > 0) || !std::isfinite(g.speed)) bad(fmt::format("gpu_speed of {}: {} must be > 0 and finite", g.model, g.speed));
}

/// A quota entry: no idle key (idle capacity holds no quota), a known pool (required for
/// reserved), no negative limit. InvalidArgument; UnknownPool.
inline void check_quota(const QuotaKey& k, const Resources& limit, const Cluster& c, std::string_view fn) {
  const std::string where = fmt::format("{}: quota of {} ({})", fn, k.user, to_string(k.resource_type));
  if (k.resource_type == ResourceType::idle) throw InvalidArgument(where + ": idle capacity holds no quota");
  if (k.pool.valid() && k.pool.index() >= c.pools().size()) throw UnknownPool(fmt::format("{}: unknown pool id {}", where, k.pool.value));
  if (k.resource_type == ResourceType::reserved && !k.pool.valid()) throw InvalidArgument(where + ": a reserved quota needs a pool");
  if (limit.any_negative()) throw InvalidArgument(where + ": negative limit");
}

/// A node policy naming only nodes of `c`, with created <= expire. UnknownNode; InvalidArgument.
inline void check_node_policy(const NodePolicy& p, const Cluster& c, std::string_view fn) {
  for (NodeId n : p.nodes)
    if (!n.valid() || n.index() >= c.size())
      throw UnknownNode(fmt::format("{}: node policy {}: unknown node id {}", fn, p.name, n.value));
  if (p.expire < p.created)
    throw InvalidArgument(fmt::format("{}: node policy {}: expires ({} ms) before it is created ({} ms)", fn, p.name, p.expire, p.created));
}

/// `now` must not be earlier than `clock` (the latest schedule() time). TimeWentBackwards.
inline void check_time(Time now, Time clock, std::string_view fn) {
  if (now < clock) throw TimeWentBackwards(fmt::format("{}: now {} ms is earlier than the scheduler's time {} ms", fn, now, clock));
}

}  // namespace libsched::detail
