// libsched::detail::FreeOrder: the nodes in free-capacity order, (free milli-GPU, free
// milli-vCPU, node id) ascending, for best-fit / worst-fit and the preemption bound
// (Cluster::free_order). A sorted sequence cut into blocks of at most 2 x kBlock entries; each
// block knows the largest GPU capability (`cap`) of its entries, so a search for a replica
// that needs cap >= c jumps over whole blocks of nodes that cannot take it: nodes whose free
// GPU capacity is split into shares too small for the request (a red-black tree walk visited
// each of them).
//
// `cap` of a node (Cluster::gpu_cap): 1000 x its fully free GPUs when it has one, else the
// largest free share of one GPU (milli-GPU, < 1000). A replica of k whole GPUs fits only where
// cap >= 1000 k; a replica of one share of m milli-GPU only where cap >= m (a fully free GPU or
// a share of at least m); several shares of m only where cap >= m (necessary, not sufficient).
// Upkeep: O(log B + kBlock) per insert or erase (B blocks), no allocation but block splits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

namespace libsched::detail {

class FreeOrder {
 public:
  /// Blocks hold kBlock to 2 x kBlock entries once split (fewer after erases).
  static constexpr std::size_t kBlock = 32;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int32_t>;
  struct Entry {
    std::int64_t gpu = 0;  ///< free milli-GPU
    std::int64_t cpu = 0;  ///< free milli-vCPU
    std::int32_t id = 0;   ///< node id
    std::int32_t cap = 0;  ///< GPU capability (file comment)
    Key key() const { return {gpu, cpu, id}; }
  };

  /// A position: block b, entry i. Bidirectional over the whole order.
  class Cursor {
   public:
    const Entry& operator*() const { return o_->blocks_[b_].entries[i_]; }
    const Entry* operator->() const { return &**this; }
    Cursor& operator++() {
      if (++i_ == o_->blocks_[b_].entries.size()) ++b_, i_ = 0;
      return *this;
    }
    Cursor& operator--() {
      if (i_ == 0) i_ = o_->blocks_[--b_].entries.size();
      --i_;
      return *this;
    }
    bool operator==(const Cursor& o) const { return b_ == o.b_ && i_ == o.i_; }

   private:
    friend class FreeOrder;
    Cursor(const FreeOrder* o, std::size_t b, std::size_t i) : o_(o), b_(b), i_(i) {}
    const FreeOrder* o_;
    std::size_t b_, i_;
  };
  Cursor begin() const { return {this, 0, 0}; }
  Cursor end() const { return {this, blocks_.size(), 0}; }
  /// The first entry with key >= k.
  Cursor lower_bound(const Key& k) const {
    const std::size_t b = block_of(k);
    if (b == blocks_.size()) return end();
    const auto& v = blocks_[b].entries;
    auto it = std::lower_bound(v.begin(), v.end(), k, [](const Entry& e, const Key& x) { return e.key() < x; });
    return {this, b, std::size_t(it - v.begin())};
  }

  std::size_t size() const { return size_; }
  void clear() {
    blocks_.clear();
    last_.clear();
    size_ = 0;
  }
  void insert(const Entry& e) {
    ++size_;
    if (blocks_.empty()) {
      blocks_.push_back(Block{{e}, e.cap, 1});
      last_.push_back(e.key());
      return;
    }
    std::size_t b = std::min(block_of(e.key()), blocks_.size() - 1);
    auto& v = blocks_[b].entries;
    auto at = std::upper_bound(v.begin(), v.end(), e.key(), [](const Key& x, const Entry& y) { return x < y.key(); });
    if (at == v.end()) last_[b] = e.key();
    v.insert(at, e);
    blocks_[b].take(e.cap);
    if (v.size() > 2 * kBlock) split(b);
  }
  /// Removes the entry of key k; false when there is none.
  bool erase(const Key& k) {
    const std::size_t b = block_of(k);
    if (b == blocks_.size()) return false;
    auto& v = blocks_[b].entries;
    auto it = std::lower_bound(v.begin(), v.end(), k, [](const Entry& e, const Key& x) { return e.key() < x; });
    if (it == v.end() || it->key() != k) return false;
    const std::int32_t cap = it->cap;
    v.erase(it);
    --size_;
    if (v.empty()) {
      blocks_.erase(blocks_.begin() + std::ptrdiff_t(b));
      last_.erase(last_.begin() + std::ptrdiff_t(b));
      return true;
    }
    last_[b] = v.back().key();
    if (cap == blocks_[b].max_cap && --blocks_[b].at_max == 0) blocks_[b].rescan();  // the last entry at the largest cap left
    return true;
  }

  /// Moves entries in one pass: erases the entry of every key of `gone` (each must be in the
  /// order; a key that is not is skipped) and inserts every entry of `added` (their keys must
  /// not be in the order once `gone` is erased). Sorts both vectors. The result is the same
  /// sequence of entries as erase() and insert() one by one (the blocks may be cut
  /// differently, which no reader sees). Each block that some move touches is rebuilt once:
  /// O(c log c + entries of the touched blocks) for c moves, where one by one costs a block
  /// search, a shift of the block's tail and, when the block's largest cap leaves, a re-scan of
  /// the block, per move.
  /// `singly_up_to`: up to that many moves (gone.size()), erase() and insert() one by one.
  void move_all(std::vector<Key>& gone, std::vector<Entry>& added, std::size_t singly_up_to = 0) {
    if (gone.empty() && added.empty()) return;
    if (gone.size() <= singly_up_to && gone.size() == added.size()) {
      for (std::size_t i = 0; i < gone.size(); ++i) {
        erase(gone[i]);
        insert(added[i]);
      }
      return;
    }
    std::sort(gone.begin(), gone.end());
    std::sort(added.begin(), added.end(), [](const Entry& a, const Entry& b) { return a.key() < b.key(); });
    if (blocks_.empty()) {
      for (const Entry& e : added) insert(e);
      return;
    }
    bool reshape = false;  // a block left empty or above 2 x kBlock entries
    std::size_t gi = 0, ai = 0;
    const std::size_t nb = blocks_.size();
    for (std::size_t b = 0; b < nb && (gi < gone.size() || ai < added.size()); ++b) {
      // This block's moves: the keys up to its last key (every key after the last block's
      // goes into the last block, as insert() puts it).
      std::size_t g1 = gi, a1 = ai;
      while (g1 < gone.size() && gone[g1] <= last_[b]) ++g1;
      if (b + 1 == nb) a1 = added.size();
      else
        while (a1 < added.size() && added[a1].key() <= last_[b]) ++a1;
      if (g1 == gi && a1 == ai) continue;
      auto& v = blocks_[b].entries;
      scratch_.clear();
      auto put = [&](const Entry& e) { scratch_.push_back(e); };
      std::size_t g = gi, a = ai;
      for (const Entry& e : v) {
        const Key k = e.key();
        while (g < g1 && gone[g] < k) ++g;  // (a key not in the order)
        if (g < g1 && gone[g] == k) {
          ++g;
          --size_;
          continue;
        }
        for (; a < a1 && added[a].key() < k; ++a) put(added[a]);
        put(e);
      }
      for (; a < a1; ++a) put(added[a]);
      size_ += a1 - ai;
      v.assign(scratch_.begin(), scratch_.end());
      blocks_[b].rescan();
      if (!v.empty()) last_[b] = v.back().key();
      reshape = reshape || v.empty() || v.size() > 2 * kBlock;
      gi = g1;
      ai = a1;
    }
    if (!reshape) return;
    for (std::size_t b = 0; b < blocks_.size();) {
      if (blocks_[b].entries.empty()) {
        blocks_.erase(blocks_.begin() + std::ptrdiff_t(b));
        last_.erase(last_.begin() + std::ptrdiff_t(b));
      } else if (blocks_[b].entries.size() > 2 * kBlock) {
        split(b);  // (b is checked again: its lower half may still be too large)
      } else {
        ++b;
      }
    }
  }

  /// The first entry from `from` on (ascending) with cap >= need for which ok(id) holds, or
  /// end(). Blocks whose largest cap is below `need` are skipped whole.
  template <class Ok>
  Cursor find_from(Cursor from, std::int32_t need, Ok&& ok) const {
    for (std::size_t b = from.b_, i = from.i_; b < blocks_.size(); ++b, i = 0) {
      const Block& bl = blocks_[b];
      if (bl.max_cap < need) continue;
      for (; i < bl.entries.size(); ++i)
        if (bl.entries[i].cap >= need && ok(bl.entries[i].id)) return {this, b, i};
    }
    return end();
  }

  /// The same entries as a std::set of keys (Cluster::free_index).
  std::set<Key> keys() const {
    std::set<Key> s;
    for (const auto& bl : blocks_)
      for (const auto& e : bl.entries) s.emplace_hint(s.end(), e.key());
    return s;
  }

 private:
  struct Block {
    std::vector<Entry> entries;  // sorted by key, never empty
    std::int32_t max_cap = std::numeric_limits<std::int32_t>::min();
    std::int32_t at_max = 0;  // entries whose cap is max_cap (an erase re-scans only when the last one leaves)
    void take(std::int32_t cap) {
      if (cap > max_cap) max_cap = cap, at_max = 1;
      else if (cap == max_cap) ++at_max;
    }
    void rescan() {
      max_cap = std::numeric_limits<std::int32_t>::min();
      at_max = 0;
      for (const auto& e : entries) take(e.cap);
    }
  };
  // The first block whose last key is >= k (blocks_.size() when none): a binary search over
  // the contiguous last keys (not one block's heap memory per step).
  std::size_t block_of(const Key& k) const { return std::size_t(std::lower_bound(last_.begin(), last_.end(), k) - last_.begin()); }
  void split(std::size_t b) {
    Block hi;
    auto& v = blocks_[b].entries;
    hi.entries.assign(v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    v.resize(v.size() / 2);
    for (Block* bl : {&blocks_[b], &hi}) bl->rescan();
    last_[b] = v.back().key();
    last_.insert(last_.begin() + std::ptrdiff_t(b) + 1, hi.entries.back().key());
    blocks_.insert(blocks_.begin() + std::ptrdiff_t(b) + 1, std::move(hi));
  }

  std::vector<Block> blocks_;
  std::vector<Key> last_;  // last_[b] = blocks_[b].entries.back().key()
  std::vector<Entry> scratch_;  // move_all(): a block being rebuilt
  std::size_t size_ = 0;
};

}  // namespace libsched::detail
