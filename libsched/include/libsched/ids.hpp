// Strong integer ids for the hot paths (no bare ints or strings): NodeId, PoolId, TaskId.
#pragma once

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <vector>

namespace libsched {

template <class Tag>
struct StrongId {
  std::int32_t value = -1;
  constexpr StrongId() = default;
  constexpr explicit StrongId(std::int32_t v) : value(v) {}
  constexpr bool valid() const { return value >= 0; }
  constexpr std::size_t index() const { return static_cast<std::size_t>(value); }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;
};

using NodeId = StrongId<struct NodeTag>;
using PoolId = StrongId<struct PoolTag>;
using TaskId = StrongId<struct TaskTag>;

/// A set of ids of one kind, iterated in ascending order (Scheduler::running()): one bit per id
/// up to the largest ever inserted. insert / erase / contains O(1); iteration O(largest id / 64
/// + size). (A std::set of running tasks cost a tree node per start and a cache-missing walk
/// per end.)
template <class Id>
class IdSet {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Id;
    using difference_type = std::ptrdiff_t;
    using pointer = const Id*;
    using reference = Id;
    iterator() = default;
    Id operator*() const { return Id(std::int32_t(pos_)); }
    iterator& operator++() {
      pos_ = s_->next(pos_ + 1);
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.pos_ == b.pos_; }

   private:
    friend class IdSet;
    iterator(const IdSet* s, std::size_t pos) : s_(s), pos_(pos) {}
    const IdSet* s_ = nullptr;
    std::size_t pos_ = 0;
  };
  using const_iterator = iterator;
  using value_type = Id;

  iterator begin() const { return {this, next(0)}; }
  iterator end() const { return {this, words_.size() * 64}; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(Id id) const {
    const std::size_t w = id.index() / 64;
    return id.valid() && w < words_.size() && (words_[w] >> (id.index() % 64) & 1) != 0;
  }
  std::size_t count(Id id) const { return contains(id) ? 1 : 0; }  ///< as std::set::count
  /// Adds `id` (valid); false when it was in already.
  bool insert(Id id) {
    const std::size_t w = id.index() / 64;
    if (w >= words_.size()) words_.resize(w + 1, 0);
    const std::uint64_t bit = std::uint64_t{1} << (id.index() % 64);
    if (words_[w] & bit) return false;
    words_[w] |= bit;
    ++size_;
    return true;
  }
  /// Removes `id`; the number removed (0 or 1).
  std::size_t erase(Id id) {
    if (!contains(id)) return 0;
    words_[id.index() / 64] &= ~(std::uint64_t{1} << (id.index() % 64));
    --size_;
    return 1;
  }

 private:
  // The first id >= pos in the set, or words_.size() * 64.
  std::size_t next(std::size_t pos) const {
    std::size_t w = pos / 64;
    if (w >= words_.size()) return words_.size() * 64;
    std::uint64_t m = words_[w] & (~std::uint64_t{0} << (pos % 64));
    while (m == 0) {
      if (++w == words_.size()) return words_.size() * 64;
      m = words_[w];
    }
    return w * 64 + std::size_t(std::countr_zero(m));
  }
  std::vector<std::uint64_t> words_;
  std::size_t size_ = 0;
};

}  // namespace libsched

template <class Tag>
struct std::hash<libsched::StrongId<Tag>> {
  std::size_t operator()(libsched::StrongId<Tag> id) const noexcept { return std::hash<std::int32_t>{}(id.value); }
};
