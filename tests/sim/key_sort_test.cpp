// sim::detail::sort_by_key_stable (sim/engine/key_sort.hpp) against std::sort of the pairs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/io/key_sort.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {
namespace {
using Pairs = std::vector<std::pair<std::size_t, int>>;

/// n pairs with ascending indices and keys from `key` (called with the generator).
template <class Key>
Pairs make(std::size_t n, Key key) {
  std::mt19937_64 rng(n);
  Pairs v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = {key(rng), int(i)};
  return v;
}

void check_same(Pairs v) {
  Pairs want = v;
  std::sort(want.begin(), want.end());
  sim::detail::sort_by_key_stable(v);
  CHECK(v == want);
}
}  // namespace

TEST_CASE("key sort: random 64-bit keys equal std::sort, small and radix sizes", "[key_sort]") {
  for (std::size_t n : {0, 1, 5, 4095, 4096, 5000, 70001}) check_same(make(n, [](auto& r) { return std::size_t(r()); }));
}

TEST_CASE("key sort: equal keys keep their index order", "[key_sort]") {
  // Few distinct keys: long runs of ties, decided by the index alone.
  check_same(make(20000, [](auto& r) { return std::size_t(r() % 7) << 40; }));
  check_same(make(20000, [](auto& r) { return std::size_t(r() % 3); }));
}

TEST_CASE("key sort: digits shared by every key are skipped, the rest still sorted", "[key_sort]") {
  // Only the top and bottom bits vary: the middle digits are constant and skipped.
  check_same(make(9000, [](auto& r) { return (std::size_t(r() % 16) << 60) | 0x0000abcdef123400ull | std::size_t(r() % 200); }));
  // Every digit constant: nothing moves.
  check_same(make(9000, [](auto&) { return std::size_t(0x1234567890abcdefull); }));
  // Descending keys (the whole order reversed).
  std::size_t k = 1u << 30;
  check_same(make(9000, [&](auto&) { return k -= 3; }));
}

TEST_CASE("key sort: sort_keys equals std::sort of the keys", "[key_sort]") {
  std::mt19937_64 rng(38);
  auto check = [](std::vector<std::uint64_t> v) {
    std::vector<std::uint64_t> want = v;
    std::sort(want.begin(), want.end());
    sim::detail::sort_keys(v);
    CHECK(v == want);
  };
  for (std::size_t n : {0, 1, 5, 4095, 4096, 70001}) {
    std::vector<std::uint64_t> v(n);
    for (auto& k : v) k = rng();
    check(v);
    for (auto& k : v) k = rng() % 5;  // ties; four digits shared by every key
    check(v);
    for (std::size_t i = 0; i < n; ++i) v[i] = ~std::uint64_t{0} - 3 * i;  // descending, top digits shared
    check(v);
  }
}

}  // namespace SCHEDSIM_UNITY_ID
