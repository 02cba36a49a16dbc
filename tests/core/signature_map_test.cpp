// detail::SignatureMap (actions::allocate's failed and held signatures, the simulator's wait
// codes by signature) against std::map, one test per rule.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>

#include <libsched/detail/signature_map.hpp>

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using libsched::detail::SignatureMap;

TEST_CASE("SignatureMap finds what std::map finds, through growth and clears") {
  SignatureMap<int> m;  // one map for every round: clear() must leave no key behind
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    std::map<std::uint64_t, int> ref;
    m.clear();
    REQUIRE(m.empty());
    // dense keys (many collisions of low bits) and sparse 64-bit keys
    const std::uint64_t range = seed % 2 ? 60 : (std::uint64_t{1} << 62);
    const int inserts = int(rng() % 3000);
    for (int i = 0; i < inserts; ++i) {
      const std::uint64_t k = 1 + rng() % range;
      const int v = int(rng() % 100);
      REQUIRE(m.insert(k, v) == ref.emplace(k, v).second);
    }
    REQUIRE(m.size() == ref.size());
    for (const auto& [k, v] : ref) {
      REQUIRE(m.find(k) != nullptr);
      REQUIRE(*m.find(k) == v);
    }
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t k = 1 + rng() % (range + 10);
      REQUIRE(m.contains(k) == (ref.count(k) == 1));
    }
  }
}

TEST_CASE("SignatureMap keeps the first value of a key inserted twice") {
  SignatureMap<int> m;
  REQUIRE(m.insert(7, 1));
  REQUIRE_FALSE(m.insert(7, 2));
  REQUIRE(*m.find(7) == 1);
  REQUIRE(m.size() == 1);
}

TEST_CASE("SignatureMap is empty when new, after clear and after being moved from") {
  SignatureMap<char> a;
  REQUIRE(a.find(1) == nullptr);
  a.insert(1, 1);
  SignatureMap<char> b = std::move(a);  // (the scratch moves in and out of the scheduler's state)
  REQUIRE(b.contains(1));
  a.clear();
  REQUIRE_FALSE(a.contains(1));
  REQUIRE(a.insert(1, 1));  // usable again
  b.clear();
  REQUIRE_FALSE(b.contains(1));
  REQUIRE(b.empty());
}

}  // namespace SCHEDSIM_UNITY_ID
