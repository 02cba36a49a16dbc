// Internal to sim/outputs (writers.cpp, metrics_prom.cpp): accumulators by group key.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
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

/// GroupIndex::row_of remembered by the key's address and length (64 slots, direct-mapped; a
/// miss asks the index, which compares texts). The keys are views into texts that outlive the
/// tables and stay put (interned task keys, the cluster's names, the simulator's labels,
/// literals), so one address and length is one text for the whole summary; two addresses of
/// one text both map to its row. Per task this replaces hashing the key's text (users: hundreds
/// of groups) or comparing it with each group's (up to eight).
class RowMemo {
 public:
  template <class Acc>
  std::size_t row_of(GroupIndex<std::string_view, Acc>& index, std::string_view key) {
    const auto a = reinterpret_cast<std::uintptr_t>(key.data());
    Slot& s = slots_[((a >> 3) ^ (a >> 11) ^ key.size()) % kSlots];
    if (s.data == key.data() && s.size == key.size()) return s.row;
    const std::size_t r = index.row_of(key);
    s = Slot{key.data(), key.size(), r};
    return r;
  }

 private:
  struct Slot {
    const char* data = nullptr;
    std::size_t size = std::size_t(-1);  // no view has this size: an empty slot never matches
    std::size_t row = 0;
  };
  static constexpr std::size_t kSlots = 64;
  std::array<Slot, kSlots> slots_{};
};

}  // namespace sim::detail
