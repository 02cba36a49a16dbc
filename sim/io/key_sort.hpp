// Internal to sim (the trace readers, and the engine above them): sorting 64-bit keys, or (key, index)
// pairs, of a whole scenario's tasks.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sim::detail {

/// Stable least-significant-digit radix sort of `v` by key(element) (a std::uint64_t): 11-bit
/// digits, a digit every key shares skipped. Uses a second buffer of v's size.
template <class T, class KeyOf>
void radix_sort_lsd(std::vector<T>& v, KeyOf key) {
  constexpr int kBits = 11;
  constexpr std::size_t kRadix = std::size_t{1} << kBits;
  std::vector<T> buf(v.size());
  std::vector<std::array<std::size_t, kRadix>> count((64 + kBits - 1) / kBits);
  for (auto& c : count) c.fill(0);
  for (const auto& e : v)
    for (std::size_t d = 0; d < count.size(); ++d) ++count[d][(key(e) >> (d * kBits)) & (kRadix - 1)];
  auto* src = &v;
  auto* dst = &buf;
  for (std::size_t d = 0; d < count.size(); ++d) {
    auto& c = count[d];
    if (std::find(c.begin(), c.end(), v.size()) != c.end()) continue;  // every key has this digit: nothing moves
    std::size_t at = 0;
    for (auto& k : c) at += std::exchange(k, at);
    for (const auto& e : *src) (*dst)[c[(key(e) >> (d * kBits)) & (kRadix - 1)]++] = e;
    std::swap(src, dst);
  }
  if (src != &v) v.swap(buf);
}

/// Sorts `v` ascending as std::sort of the pairs would, when the indices are distinct and
/// ascending on entry (v[i].second < v[i + 1].second): then equal keys keep their index order,
/// which is the pairs' order. A least-significant-digit radix sort on the key (11-bit digits,
/// a digit shared by every key is skipped): O(n) per digit instead of O(n log n) comparisons,
/// for the task names' hashes of a million tasks. Uses a second buffer of v's size. Below 4,096
/// entries it calls std::sort. No errors.
inline void sort_by_key_stable(std::vector<std::pair<std::size_t, int>>& v) {
  if (v.size() < 4096) {
    std::sort(v.begin(), v.end());
    return;
  }
  radix_sort_lsd(v, [](const std::pair<std::size_t, int>& e) { return std::uint64_t(e.first); });
}

/// Sorts 64-bit keys ascending (as std::sort would), by the same radix sort as
/// sort_by_key_stable (std::sort below 4,096 keys). Uses a second buffer of v's size. No errors.
inline void sort_keys(std::vector<std::uint64_t>& v) {
  if (v.size() < 4096) {
    std::sort(v.begin(), v.end());
    return;
  }
  radix_sort_lsd(v, [](std::uint64_t k) { return k; });
}

}  // namespace sim::detail
