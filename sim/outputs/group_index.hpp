// Internal to sim/outputs (writers.cpp, metrics_prom.cpp): accumulators by group key.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sim::detail {

/// Accumulators by key, found by hash while tasks are added, then handed out in key order
/// (as a std::map<Key, Acc> would iterate them, without its O(log groups) key comparisons per
/// task). Only the sorted rows reach an output: no hash order does.
template <class Key, class Acc, class Hash = std::hash<Key>>
class GroupIndex {
 public:
  Acc& operator[](const Key& key) { return rows_[row_of(key)].second; }
  /// The row of `key` (added when new), in order of first appearance until sorted().
  std::size_t row_of(const Key& key) {
    // A handful of groups (tenants, pools, classes): compared in turn; more: by hash.
    if (rows_.size() <= kLinear) {
      for (std::size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].first == key) return i;
      if (rows_.size() < kLinear) {
        rows_.emplace_back(key, Acc{});
        return rows_.size() - 1;
      }
      for (std::size_t i = 0; i < rows_.size(); ++i) index_.emplace(rows_[i].first, i);
    }
    auto [it, inserted] = index_.try_emplace(key, rows_.size());
    if (inserted) rows_.emplace_back(key, Acc{});
    return it->second;
  }
  std::size_t size() const { return rows_.size(); }
  Acc& row(std::size_t i) { return rows_[i].second; }
  std::vector<std::pair<Key, Acc>> sorted() && {
    std::sort(rows_.begin(), rows_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return std::move(rows_);
  }

 private:
  static constexpr std::size_t kLinear = 8;
  std::unordered_map<Key, std::size_t, Hash> index_;
  std::vector<std::pair<Key, Acc>> rows_;
};

}  // namespace sim::detail
