// IdSet (Scheduler::running()) against std::set under random inserts and erases.
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <vector>

#include <libsched/libsched.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using libsched::IdSet;
using libsched::TaskId;

TEST_CASE("IdSet holds the ids of a std::set, iterated in ascending order") {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    IdSet<TaskId> s;
    std::set<TaskId> ref;
    const std::int32_t range = seed % 2 ? 100 : 5000;  // dense and sparse
    for (int op = 0; op < 4000; ++op) {
      TaskId id(std::int32_t(rng() % std::uint64_t(range)));
      if (rng() % 100 < 55) {
        REQUIRE(s.insert(id) == ref.insert(id).second);
      } else {
        REQUIRE(s.erase(id) == ref.erase(id));
      }
      REQUIRE(s.size() == ref.size());
      REQUIRE(s.contains(id) == (ref.count(id) != 0));
      if (op % 100 == 0) {
        REQUIRE(std::vector<TaskId>(s.begin(), s.end()) == std::vector<TaskId>(ref.begin(), ref.end()));
        REQUIRE_FALSE(s.contains(TaskId()));
      }
    }
  }
  IdSet<TaskId> empty;
  CHECK(empty.begin() == empty.end());
  CHECK(empty.empty());
}

}  // namespace SCHEDSIM_UNITY_ID
