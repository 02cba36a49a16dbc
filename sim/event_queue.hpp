// The simulator's event queue: integer time, (time, sequence) order, O(1) cancel.
//
// Ordering contract: events are delivered in increasing time (libsched::Time, milliseconds);
// events with the same time are delivered first-in first-out, i.e. in the order schedule()
// was called for them (each event gets a strictly increasing sequence number, and the heap
// orders by (time, sequence)). This makes a run deterministic and replayable.
//
// Cancellation: cancel(handle) is O(1) (average): the handle (= the event's sequence number)
// is put in a tombstone set; the event stays in the heap and is dropped when it reaches the
// top. Cancelling an unknown, already delivered or already cancelled handle is a no-op that
// returns false.
//
// Memory: O(events in the heap). The queue remembers only the pending handles (not every
// delivered one), so a long run's memory does not grow with the number of events delivered.
//
// Boundaries: run_until(t) delivers every event with time <= t (events at exactly t ARE
// processed) and leaves later events queued; now() is then t if t is later than the last
// delivered event.
//
// A value, not a singleton: a test can hold several queues.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_set>
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
/// Injected task fault (`error` is the error kind of scenario `events[i].error`).
struct TaskFaultEv { int task = 0; std::string error; };
/// Injected spot reclaim of nodes (node indices).
struct SpotReclaimEv { std::vector<int> nodes; };
/// A node policy is created or expires: only makes the scheduler run at that instant.
struct PolicyTickEv { std::string policy; };
/// Some waiting task may become startable with no other event (an idle fragment reaches its
/// stability threshold): only makes the scheduler run at that instant.
struct WakeEv {};
/// RayJob debug hold ends: release the pods.
struct DebugReleaseEv { int task = 0; int attempt = 0; };
/// RayJob autoscaling: the demand profile changes to `workers` desired workers.
struct DemandEv { int task = 0; int attempt = 0; int workers = 0; };
/// RayJob autoscaling: idle workers reach idle_reclaim_s, scale in.
struct ScaleInEv { int task = 0; int attempt = 0; };

using Event = std::variant<SubmitEv, StartupEv, FinishEv, TransientEv, NodeDownEv, NodeUpEv, TaskFaultEv,
                           SpotReclaimEv, PolicyTickEv, DebugReleaseEv, DemandEv, ScaleInEv, WakeEv>;

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
    pending_.insert(h);
    ++live_;
    return h;
  }

  /// Cancels a pending event. O(1) average. Returns false when `h` is not pending.
  bool cancel(EventHandle h) {
    if (pending_.erase(h) == 0) return false;
    cancelled_.insert(h);
    --live_;
    return true;
  }

  /// True while `h` is scheduled and neither delivered nor cancelled. O(1) average.
  bool pending(EventHandle h) const { return pending_.count(h) != 0; }
  /// Handles the queue remembers (pending events and tombstones of cancelled ones still in the
  /// heap): bounded by the heap's size, whatever the number of events delivered so far.
  std::size_t tracked_handles() const { return pending_.size() + cancelled_.size(); }

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

  /// Removes and returns the next pending event (advancing now()), or nullopt when empty.
  std::optional<Item> step() {
    drop_cancelled();
    if (heap_.empty()) return std::nullopt;
    Item it = heap_.top();
    heap_.pop();
    --live_;
    now_ = it.time;
    pending_.erase(it.handle);
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
  void drop_cancelled() {
    while (!heap_.empty() && cancelled_.count(heap_.top().handle)) {
      cancelled_.erase(heap_.top().handle);
      heap_.pop();
    }
  }

  std::priority_queue<Item, std::vector<Item>, Later> heap_;
  std::unordered_set<EventHandle> cancelled_;   // tombstones (never iterated)
  std::unordered_set<EventHandle> pending_;     // scheduled, not yet delivered or cancelled
  EventHandle seq_ = 0;
  std::size_t live_ = 0;
  Time now_ = 0;
};

/// The simulator's queue of typed events.
using EventQueue = BasicEventQueue<Event>;

}  // namespace sim
