// sim::detail::RowMemo (sim/outputs/group_index.hpp): the summary's group rows remembered by the
// key's address. It must give every task the row GroupIndex::row_of gives it, and add the rows
// in the same order (first appearance), whatever the addresses of equal texts.
#include <cstddef>
#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/outputs/group_index.hpp"
#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {
namespace {

using Index = sim::detail::GroupIndex<std::string_view, int>;

TEST_CASE("RowMemo gives the rows GroupIndex gives, in the same order", "[groups]") {
  // Texts at several addresses each (copies), some short (in the string object) and some long
  // (on the heap), the empty text as a null view and as an empty string: more distinct texts
  // than the index compares in turn (it hashes past eight) and more addresses than the memo
  // has slots, so slots are overwritten.
  std::deque<std::string> storage;  // (a deque: the texts never move)
  std::vector<std::string_view> keys;
  keys.push_back(std::string_view());
  for (int copy = 0; copy < 3; ++copy) {
    storage.emplace_back();
    keys.push_back(storage.back());
    for (int t = 0; t < 40; ++t) {
      storage.push_back(t % 2 ? "user-" + std::to_string(t) : "a-long-user-name-past-the-short-string-" + std::to_string(t));
      keys.push_back(storage.back());
    }
  }
  std::mt19937_64 rng(38);
  Index plain, memoized;
  sim::detail::RowMemo memo;
  for (int i = 0; i < 20000; ++i) {
    const std::string_view k = keys[rng() % keys.size()];
    const std::size_t want = plain.row_of(k);
    REQUIRE(memo.row_of(memoized, k) == want);
    ++memoized.row(want);
  }
  REQUIRE(memoized.size() == plain.size());
  CHECK(plain.size() == 41);  // the 40 texts and the empty one
  // Equal texts at other addresses (the copies) share one row; the empty views too.
  CHECK(memo.row_of(memoized, keys[0]) == memo.row_of(memoized, keys[1]));
  CHECK(memo.row_of(memoized, keys[2]) == memo.row_of(memoized, keys[43]));
  CHECK(memo.row_of(memoized, keys[2]) != memo.row_of(memoized, keys[3]));
}

}  // namespace
}  // namespace SCHEDSIM_UNITY_ID
