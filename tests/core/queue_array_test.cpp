// detail::QueueArray (actions::allocate walks the queue through it) against the std::set it
// mirrors, under random inserts (last and in the middle), erasures and compactions.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include <libsched/detail/queue_array.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using libsched::TaskId;
using libsched::detail::QueueArray;

struct Key {
  std::int64_t rank;
  TaskId id;
  friend bool operator<(const Key& a, const Key& b) { return a.rank != b.rank ? a.rank < b.rank : a.id < b.id; }
};

/// The live slots of `a`, in order.
std::vector<TaskId> live(const QueueArray& a) {
  std::vector<TaskId> v;
  for (TaskId t : a.slots())
    if (t.valid()) v.push_back(t);
  return v;
}

std::vector<TaskId> ids(const std::set<Key>& s) {
  std::vector<TaskId> v;
  for (const auto& k : s) v.push_back(k.id);
  return v;
}

TEST_CASE("QueueArray keeps the set's order under random inserts, erasures and compactions") {
  std::size_t went_stale = 0, checked_in_place = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    std::set<Key> set;
    // every other seed moves at most 4 slots per insert, so that far inserts go stale
    QueueArray a(seed % 2 == 0 ? 4 : 64);
    std::vector<std::int64_t> rank_of(400, -1);  // per id: its rank while in the set
    // mostly FIFO ranks (appends), some in the middle; a few seeds rank at random only
    const bool fifo = seed % 3 != 0;
    std::int64_t clock = 0;
    const int ops = 200 + int(rng() % 3000);
    for (int i = 0; i < ops; ++i) {
      const std::int32_t id = std::int32_t(rng() % rank_of.size());  // (ids are reused)
      const TaskId t(id);
      const bool was_stale = a.stale();
      if (rank_of[std::size_t(id)] < 0 && rng() % 100 < 55) {
        const std::int64_t r = fifo && rng() % 10 != 0 ? (clock += std::int64_t(rng() % 3)) : std::int64_t(rng() % 500);
        rank_of[std::size_t(id)] = r;
        const auto it = set.insert({r, t}).first;
        a.insert(set, it);
      } else if (rank_of[std::size_t(id)] >= 0) {
        set.erase({rank_of[std::size_t(id)], t});
        a.erase(t);
        rank_of[std::size_t(id)] = -1;
      }
      went_stale += !was_stale && a.stale();
      if (rng() % 200 == 0) a.compact_if_sparse();
      if (rng() % 500 == 0) a.compact();
      if (rng() % 700 == 0) a.rebuild(set);
      if (rng() % 40 == 0) a.refresh(set);
      if (!a.stale()) {  // in step without a rebuild since the last refresh
        REQUIRE(a.size() == set.size());
        if (i % 16 == 0 || i + 1 == ops) {
          REQUIRE(live(a) == ids(set));
          ++checked_in_place;
        }
      }
    }
    a.refresh(set);
    REQUIRE_FALSE(a.stale());
    REQUIRE(live(a) == ids(set));
    a.compact();
    REQUIRE(a.holes() == 0);
    REQUIRE(a.slots() == ids(set));
  }
  REQUIRE(went_stale > 0);
  REQUIRE(checked_in_place > 1000);
}

TEST_CASE("QueueArray: a far insert makes it stale until one refresh; appends and near inserts never do") {
  std::set<Key> set;
  QueueArray a(3);
  for (std::int32_t i = 0; i < 10; ++i) a.insert(set, set.insert({10 * i, TaskId(i)}).first);
  REQUIRE_FALSE(a.stale());
  a.insert(set, set.insert({75, TaskId(20)}).first);  // 2 slots behind it: moved
  REQUIRE_FALSE(a.stale());
  REQUIRE(live(a) == ids(set));
  a.insert(set, set.insert({5, TaskId(21)}).first);  // 10 slots behind it: stale
  REQUIRE(a.stale());
  a.insert(set, set.insert({1, TaskId(22)}).first);  // (ignored while stale)
  set.erase({30, TaskId(3)});
  a.erase(TaskId(3));
  a.refresh(set);
  REQUIRE_FALSE(a.stale());
  REQUIRE(a.holes() == 0);
  REQUIRE(a.slots() == ids(set));
}

TEST_CASE("QueueArray: an erasure leaves a hole in its slot; no slot moves until an insert or compaction") {
  std::set<Key> set;
  QueueArray a;
  for (std::int32_t i = 0; i < 40; ++i) a.insert(set, set.insert({i, TaskId(i)}).first);
  const std::vector<TaskId> before = a.slots();
  for (std::int32_t i = 0; i < 40; i += 2) {
    set.erase({i, TaskId(i)});
    a.erase(TaskId(i));
  }
  REQUIRE(a.slots().size() == before.size());
  for (std::size_t i = 0; i < before.size(); ++i) REQUIRE(a.slots()[i] == (i % 2 == 0 ? TaskId{} : before[i]));
  // an insert compacts once holes are half the slots (and more than a few)
  a.insert(set, set.insert({100, TaskId(100)}).first);
  REQUIRE(a.holes() == 0);
  REQUIRE(a.slots() == ids(set));
  // a middle insert takes the slot before its successor's
  a.insert(set, set.insert({2, TaskId(2)}).first);
  REQUIRE(a.slots() == ids(set));
}

}  // namespace SCHEDSIM_UNITY_ID
