// detail::QueueArray: the waiting queue's order as one contiguous array of task ids, kept in
// step with SchedulerCore::queue_ (the std::set stays the source of truth for the order and
// for look-ups). actions::allocate's walk reads it instead of stepping the tree: a 4-byte slot
// per step, no call into the library and no pointer chase through scattered nodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "libsched/ids.hpp"

namespace libsched::detail {

/// The ids of a set of queue keys (anything with a TaskId `id` member, ordered) in the set's
/// order, with holes: an erased task leaves an invalid id in its slot until the next
/// compaction, so that a walk holding a slot index may go on across the erasure of the task it
/// just visited. Positions move only in insert(), refresh(), rebuild() and compact(), never
/// while a walk holds an index (nothing enters the queue during a pass).
///
/// An insert with more than `max_shift` slots behind it (a queue order that ranks a new task
/// ahead of many, e.g. `sjf` under congestion) does not move them: the array goes stale and
/// the next refresh() rebuilds it from the set, once however many such inserts came before.
/// A walk costs O(queue) anyway, so the array never costs more than one more pass over the
/// set per walk, and a FIFO queue (appends) never goes stale.
class QueueArray {
 public:
  explicit QueueArray(std::size_t max_shift = 64) : max_shift_(max_shift) {}
  /// The slots in queue order; a hole is an invalid TaskId (a walk passes over it). Valid when
  /// not stale().
  const std::vector<TaskId>& slots() const { return ids_; }
  /// Live ids (slots that are not holes); not stale() only.
  std::size_t size() const { return ids_.size() - holes_; }
  std::size_t holes() const { return holes_; }
  /// A far insert left the slots out of step with the set until the next refresh().
  bool stale() const { return stale_; }
  /// In step with `set` before a walk: rebuilt when stale, else compacted when sparse.
  template <class Set>
  void refresh(const Set& set) {
    if (stale_) rebuild(set);
    else compact_if_sparse();
  }

  /// The key at `it` was just inserted into `set`: its id takes the slot before its successor's
  /// (appended when it is the last key: O(1), the FIFO case), the later slots moved up by one
  /// (O(slots after it)). Compacts first when holes are half the slots.
  template <class Set, class It>
  void insert(const Set& set, It it) {
    if (stale_) return;
    compact_if_sparse();
    const TaskId t = it->id;
    const auto next = std::next(it);
    if (next == set.end()) {
      place(t, ids_.size());
      ids_.push_back(t);
      return;
    }
    const std::size_t at = pos_[next->id.index()];
    if (ids_.size() - at > max_shift_) {
      stale_ = true;
      return;
    }
    ids_.insert(ids_.begin() + std::ptrdiff_t(at), t);
    for (std::size_t i = at; i < ids_.size(); ++i)
      if (ids_[i].valid()) place(ids_[i], i);
  }
  /// Task `t` (in the array) left the queue: its slot becomes a hole. O(1).
  void erase(TaskId t) {
    if (stale_) return;
    ids_[pos_[t.index()]] = TaskId{};
    ++holes_;
  }
  /// The slots anew from `set` (its order changed as a whole). O(set).
  template <class Set>
  void rebuild(const Set& set) {
    ids_.clear();
    holes_ = 0;
    stale_ = false;
    for (const auto& k : set) {
      place(k.id, ids_.size());
      ids_.push_back(k.id);
    }
  }
  /// Drops the holes when they are at least half the slots (and more than a few). O(slots).
  void compact_if_sparse() {
    if (holes_ > 16 && 2 * holes_ >= ids_.size()) compact();
  }
  /// Drops every hole, keeping the order. O(slots).
  void compact() {
    std::size_t n = 0;
    for (std::size_t i = 0; i < ids_.size(); ++i)
      if (ids_[i].valid()) {
        place(ids_[i], n);
        ids_[n++] = ids_[i];
      }
    ids_.resize(n);
    holes_ = 0;
  }

 private:
  void place(TaskId t, std::size_t i) {
    if (pos_.size() <= t.index()) pos_.resize(t.index() + 1, 0);
    pos_[t.index()] = std::uint32_t(i);
  }
  std::vector<TaskId> ids_;
  std::vector<std::uint32_t> pos_;  ///< per task id: its slot while it is in the array
  std::size_t holes_ = 0;
  std::size_t max_shift_;  ///< most slots an insert moves; more makes the array stale
  bool stale_ = false;
};

}  // namespace libsched::detail
