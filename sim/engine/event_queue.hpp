// The simulator's event queue: integer time, (time, sequence) order, O(1) cancel.
//
// Ordering contract: events are delivered in increasing time (libsched::Time, milliseconds);
// events with the same time are delivered first-in first-out, i.e. in the order schedule()
// was called for them (each event gets a strictly increasing sequence number, and the heap
// orders by (time, sequence)). This makes a run deterministic and replayable.
//
// Cancellation: cancel(handle) is O(1): the handle (= the event's sequence number) loses its
// pending flag; the event stays in the heap as a tombstone and is dropped when it reaches the
// top. Cancelling an unknown, already delivered or already cancelled handle is a no-op that
// returns false.
//
// Memory: O(events in the heap) items, plus one pending flag (a bit) per handle from the
// oldest pending handle to the newest: the flags below the oldest pending one are dropped, so
// a long run's memory does not grow with the number of events delivered. (The flags replace
// hash sets of pending and cancelled handles: no allocation per event.)
//
// Boundaries: run_until(t) delivers every event with time <= t (events at exactly t ARE
// processed) and leaves later events queued; now() is then t if t is later than the last
// delivered event.
//
// A value, not a singleton: a test can hold several queues.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <libsched/resources.hpp>

namespace sim {

using libsched::Time;

/// Handle of a scheduled event (its sequence number). Value 0 is never used.
using EventHandle = std::uint64_t;

// ------------------------------------------------------------------ typed simulator events
/// A task (index in the scenario) is submitted for the first time.
struct SubmitEv { int task = 0; };
/// The current attempt of a task finished its start-up phase `phase` (0 precheck, 1 image pull).
struct StartupEv { int task = 0; int attempt = 0; int phase = 0; };
/// The entrypoint of the attempt completes (all remaining work done).
struct FinishEv { int task = 0; int attempt = 0; };
/// A stochastic transient failure of the attempt.
struct TransientEv { int task = 0; int attempt = 0; };
/// Injected or stochastic node failure / repair (node index in the cluster).
struct NodeDownEv { int node = 0; bool stochastic = false; };
struct NodeUpEv { int node = 0; bool stochastic = false; };
/// Injected task fault: scenario `events[event]` (its `error` is the error kind).
struct TaskFaultEv { int task = 0; int event = 0; };
/// Injected spot reclaim of the node indices the simulator keeps at position `nodes`
/// (Simulator::reclaim_nodes_).
struct SpotReclaimEv { int nodes = 0; };
/// Stochastic spot reclaim of a node (scenario `spot_reclaim`): its spot replicas get the notice.
struct SpotNoticeEv { int node = 0; };
/// The notice of a spot reclaim on `node` ends: the task's attempt `attempt` (if still current) is evicted.
struct SpotEvictEv { int task = 0; int attempt = 0; int node = 0; };
/// A node policy (index among the scheduler's) is created or expires: only makes the
/// scheduler run at that instant.
struct PolicyTickEv { int policy = 0; };
/// Some waiting task may become startable with no other event (an idle fragment reaches its
/// stability threshold): only makes the scheduler run at that instant.
struct WakeEv {};
/// RayJob debug hold ends: release the pods.
struct DebugReleaseEv { int task = 0; int attempt = 0; };
/// RayJob autoscaling: the demand profile changes to `workers` desired workers.
struct DemandEv { int task = 0; int attempt = 0; int workers = 0; };
/// RayJob autoscaling: idle workers reach idle_reclaim_s, scale in.
struct ScaleInEv { int task = 0; int attempt = 0; };
/// A node cordoned after a failed precheck (scheduler.precheck_cordon_s) may take replicas again.
struct UncordonEv { int node = 0; };

/// 16 bytes: the events hold indices only (a heap item is 32 bytes), so the heap moves little.
using Event = std::variant<SubmitEv, StartupEv, FinishEv, TransientEv, NodeDownEv, NodeUpEv, TaskFaultEv,
                           SpotReclaimEv, PolicyTickEv, DebugReleaseEv, DemandEv, ScaleInEv, WakeEv, UncordonEv,
                           SpotNoticeEv, SpotEvictEv>;
static_assert(sizeof(Event) <= 16);

/// Priority queue of timed events of type `E`; see the file comment for the ordering,
/// cancellation and boundary contracts.
template <class E>
class BasicEventQueue {
 public:
  struct Item {
    Time time = 0;
    EventHandle handle = 0;
    E event;
  };

  /// Schedules `e` at time `t` (ms). Precondition: t >= now() (no events in the past);
  /// throws std::invalid_argument otherwise. O(log n).
  EventHandle schedule(Time t, E e) {
    if (t < now_) throw std::invalid_argument("EventQueue::schedule: time in the past");
    EventHandle h = ++seq_;
    heap_.push(Item{t, h, std::move(e)});
    set_pending(h);
    ++live_;
    return h;
  }

  /// Cancels a pending event. O(1). Returns false when `h` is not pending.
  bool cancel(EventHandle h) {
    if (!clear_pending(h)) return false;
    --live_;
    return true;
  }

  /// True while `h` is scheduled and neither delivered nor cancelled. O(1).
  bool pending(EventHandle h) const {
    if ((h >> 6) < base_word_) return false;
    const std::size_t w = std::size_t((h >> 6) - base_word_);
    return w < flags_.size() && (flags_[w] >> (h & 63) & 1) != 0;
  }
  /// Handles the queue remembers (pending events and tombstones of cancelled ones still in the
  /// heap): bounded by the heap's size, whatever the number of events delivered so far.
  std::size_t tracked_handles() const { return heap_.size(); }
  /// Handles the pending flags cover (64 per word kept): from about the oldest pending handle
  /// to the newest, whatever the number of events delivered before the oldest pending one.
  std::size_t flag_window() const { return flags_.size() * 64; }

  /// Number of pending (not cancelled) events.
  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  /// Time of the last delivered event (or of the last run_until boundary), 0 at the start.
  Time now() const { return now_; }

  /// Time of the next pending event, or nullopt when none. Amortised O(log n) (drops tombstones).
  std::optional<Time> next_time() {
    drop_cancelled();
    if (heap_.empty()) return std::nullopt;
    return heap_.top().time;
  }

  /// The item at the heap's top, cancelled or not (null when the heap is empty): a hint of
  /// what step() may deliver next. O(1).
  const Item* peek() const { return heap_.empty() ? nullptr : &heap_.top(); }

  /// Removes and returns the next pending event (advancing now()), or nullopt when empty.
  std::optional<Item> step() {
    drop_cancelled();
    if (heap_.empty()) return std::nullopt;
    Item it = heap_.top();
    heap_.pop();
    --live_;
    now_ = it.time;
    clear_pending(it.handle);
    return it;
  }

  /// Delivers every pending event to `f(Time, E&)` in order until the queue is empty.
  /// Events scheduled by `f` are delivered too. Returns the number delivered.
  template <class F>
  std::size_t run(F&& f) {
    std::size_t n = 0;
    while (auto it = step()) {
      f(it->time, it->event);
      ++n;
    }
    return n;
  }

  /// Delivers, in order, every event with time <= t (inclusive boundary), then sets now() to
  /// max(now(), t). Returns the number delivered.
  template <class F>
  std::size_t run_until(Time t, F&& f) {
    std::size_t n = 0;
    while (true) {
      auto nt = next_time();
      if (!nt || *nt > t) break;
      auto it = step();
      f(it->time, it->event);
      ++n;
    }
    if (t > now_) now_ = t;
    return n;
  }

 private:
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.time != b.time ? a.time > b.time : a.handle > b.handle;
    }
  };
  // An item in the heap whose handle is not pending was cancelled: a tombstone.
  void drop_cancelled() {
    while (!heap_.empty() && !pending(heap_.top().handle)) heap_.pop();
  }
  // Handles are issued in increasing order, so the flag of a new one is at or past the last word.
  void set_pending(EventHandle h) {
    const std::size_t w = std::size_t((h >> 6) - base_word_);
    if (w >= flags_.size()) flags_.resize(w + 1, 0);
    flags_[w] |= std::uint64_t{1} << (h & 63);
    if (w < head_) head_ = w;
  }
  // Clears `h`'s flag; false when it was not set. Drops the leading words with no flag set once
  // they are at least half of the words kept (amortised O(1)).
  bool clear_pending(EventHandle h) {
    if (!pending(h)) return false;
    const std::size_t w = std::size_t((h >> 6) - base_word_);
    flags_[w] &= ~(std::uint64_t{1} << (h & 63));
    while (head_ < flags_.size() && flags_[head_] == 0) ++head_;
    if (head_ >= 64 && head_ * 2 >= flags_.size()) {
      // Keep the last word: the next handle's flag may be in it.
      const std::size_t drop = std::min(head_, flags_.size() - 1);
      flags_.erase(flags_.begin(), flags_.begin() + std::ptrdiff_t(drop));
      base_word_ += drop;
      head_ -= drop;
    }
    return true;
  }

  std::priority_queue<Item, std::vector<Item>, Later> heap_;
  // Pending flags: bit (h & 63) of flags_[(h >> 6) - base_word_] is set while handle h is
  // scheduled and neither delivered nor cancelled. Words before head_ have no flag set.
  std::vector<std::uint64_t> flags_;
  std::uint64_t base_word_ = 0;
  std::size_t head_ = 0;
  EventHandle seq_ = 0;
  std::size_t live_ = 0;
  Time now_ = 0;
};

/// The simulator's queue of typed events.
using EventQueue = BasicEventQueue<Event>;

}  // namespace sim
