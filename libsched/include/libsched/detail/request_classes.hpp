// Request classes: the waiting tasks grouped by request signature, each group in queue order,
// with the failure memo its members share (SchedulerOptions::request_classes; the greedy pass
// by class, actions::allocate_by_class; docs/scheduler.md "How the queue pass stays cheap").
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "libsched/ids.hpp"
#include "libsched/quota.hpp"
#include "libsched/task.hpp"

namespace libsched::detail {

/// The hash of a request as the scheduler sees it (Session::signature without its node policy
/// test): capacity class and idle fallbacks, idle stability, pool, workers, priority,
/// guarantee, every candidate spec's shapes, and the user when a quota entry applies to it
/// (reserved capacity always). Never 0. Reads the quota book for whether that entry exists.
inline std::uint64_t request_hash(const TaskSpec& s, const QuotaBook& quotas) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; h ^= h >> 29; };
  mix(std::uint64_t(s.resource_type));
  mix(std::uint64_t(s.accept_idle) * 2 + std::uint64_t(s.prefer_idle));
  mix(std::uint64_t(s.idle_stability));
  mix(std::uint64_t(std::int64_t(s.pool.value)));
  mix(std::uint64_t(s.workers));
  mix(std::uint64_t(s.priority));
  mix(std::uint64_t(s.guarantee));
  for (const auto& o : s.options)
    for (const ReplicaShape* r : {&o.head, &o.worker}) {
      mix(std::uint64_t(r->num_gpu));
      mix(std::uint64_t(r->gpu_milli));
      mix(std::uint64_t(r->cpu_milli));
      mix(std::uint64_t(r->mem_mib));
      mix(r->models);
    }
  if (s.resource_type == ResourceType::reserved ||
      (!quotas.entries().empty() && quotas.find(QuotaKey{s.user, s.resource_type, s.pool})))
    mix(std::hash<std::string>{}(s.user));
  return h == 0 ? 1 : h;
}

/// Waiting tasks by request signature. `Key` is the queue's key (ordered like the queue): each
/// class holds its members' keys, so its first member is its earliest in queue order. Class ids
/// are dense and stay assigned until clear(); a class without members keeps its id.
template <class Key>
struct RequestClassIndex {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Class {
    std::uint64_t sig = 0;
    std::set<Key> members;
    /// The members' (TaskSpec::sequence, task id) (ids.begin(): the member the simulator
    /// diagnoses, the first by that key, as the per-signature memo over a visited list sorted
    /// by it does).
    std::set<std::pair<std::uint64_t, TaskId>> ids;
    /// Every member that joined before `failed_seq` failed, or was skipped as known to fail,
    /// at capacity epoch `failed_epoch` (failed_epoch_of).
    std::uint64_t failed_epoch = ~std::uint64_t{0};
    std::uint64_t failed_seq = 0;
    /// The schedule() call (Core::pass_) of that failure (failed_pass_of).
    std::uint64_t failed_pass = 0;
    std::uint32_t live_pos = kNone;  ///< position in `live` while it has members
  };
  std::vector<Class> classes;
  std::unordered_map<std::uint64_t, std::uint32_t> by_sig;
  std::vector<std::uint32_t> live;  ///< classes with members (unordered)
  std::size_t quota_entries = 0;    ///< the quota book's entry count the signatures were read with
  std::uint64_t generation = 0;     ///< bumped by clear(): ids handed out anew
  std::uint64_t joins = 0;          ///< members joined so far (join sequence numbers)

  /// A task with signature `sig` and queue key `key` joins its class: (class id, its join
  /// sequence number). O(log members).
  std::pair<std::uint32_t, std::uint64_t> join(std::uint64_t sig, Key key) {
    auto [it, added] = by_sig.try_emplace(sig, std::uint32_t(classes.size()));
    if (added) {
      classes.emplace_back();
      classes.back().sig = sig;
    }
    Class& c = classes[it->second];
    if (c.members.empty()) {
      c.live_pos = std::uint32_t(live.size());
      live.push_back(it->second);
    }
    c.ids.emplace(key.sequence, key.id);
    c.members.insert(std::move(key));
    return {it->second, ++joins};
  }
  /// The member with `key` leaves class `id`. O(log members).
  void leave(std::uint32_t id, const Key& key) {
    Class& c = classes[id];
    c.members.erase(key);
    c.ids.erase({key.sequence, key.id});
    if (!c.members.empty()) return;
    const std::uint32_t moved = live.back();
    live[c.live_pos] = moved;
    classes[moved].live_pos = c.live_pos;
    live.pop_back();
    c.live_pos = kNone;
  }
  /// Forgets every class (their members join again), read with `entries` quota entries.
  void clear(std::size_t entries) {
    classes.clear();
    by_sig.clear();
    live.clear();
    quota_entries = entries;
    ++generation;
  }
  /// The capacity epoch of the last failed try of a member of class `id` that joined at
  /// `join_seq` and whose own memo says `own`: the class's when the class failed after it joined.
  /// Epochs only grow, so the later of the two memos is the larger (~0: none).
  std::uint64_t failed_epoch_of(std::uint32_t id, std::uint64_t join_seq, std::uint64_t own) const {
    if (id == kNone) return own;
    const Class& c = classes[id];
    if (join_seq >= c.failed_seq || c.failed_epoch == ~std::uint64_t{0}) return own;
    return own == ~std::uint64_t{0} ? c.failed_epoch : std::max(own, c.failed_epoch);
  }
  /// The schedule() call in which a member of class `id` that joined at `join_seq` last failed,
  /// its own memo saying `own` (0: none): the class's when the class failed after it joined
  /// and later than `own`. Calls only grow.
  std::uint64_t failed_pass_of(std::uint32_t id, std::uint64_t join_seq, std::uint64_t own) const {
    if (id == kNone) return own;
    const Class& c = classes[id];
    if (join_seq >= c.failed_seq) return own;
    return std::max(own, c.failed_pass);
  }
  /// A member of class `id` failed at capacity epoch `epoch` in schedule() call `pass`, and
  /// every member behind it in the pass with it: the memo of every member that joined so far.
  void failed(std::uint32_t id, std::uint64_t epoch, std::uint64_t pass) {
    classes[id].failed_epoch = epoch;
    classes[id].failed_seq = joins + 1;
    classes[id].failed_pass = pass;
  }
};

}  // namespace libsched::detail
