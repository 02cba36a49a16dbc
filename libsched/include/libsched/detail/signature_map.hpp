// A small hash map keyed by request signature (Session::signature), for the per-pass and
// per-instant memos that are probed once per visited task: actions::allocate's failed and held
// signatures, and the simulator's wait codes by signature. A sorted vector cost a binary search
// per probe (tens of instructions on a long queue); here a probe is one hash and, mostly, one
// comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace libsched::detail {

/// Map from a nonzero 64-bit signature to a `V`. Open addressing with linear probing; 0 marks
/// an empty slot, so key 0 ("not comparable") must never be inserted or looked up (callers
/// test `sig != 0` first, as they did). Iteration order is not defined and nothing iterates:
/// only membership and values are read, so replacing a sorted vector changes no result.
/// clear() costs O(entries), not O(capacity): the scratch keeps its capacity between passes.
template <class V>
class SignatureMap {
 public:
  /// The value of `sig` (nonzero), or nullptr when absent. O(1) expected.
  const V* find(std::uint64_t sig) const {
    if (keys_.empty()) return nullptr;
    for (std::size_t i = slot(sig);; i = (i + 1) & mask_) {
      if (keys_[i] == sig) return &values_[i];
      if (keys_[i] == 0) return nullptr;
    }
  }
  bool contains(std::uint64_t sig) const { return find(sig) != nullptr; }
  /// Inserts `sig` (nonzero) with `v` unless present (then the stored value is kept). Returns
  /// true when inserted. Grows (doubling) at half load.
  bool insert(std::uint64_t sig, const V& v) {
    if ((used_.size() + 1) * 2 > keys_.size()) grow();
    std::size_t i = slot(sig);
    for (; keys_[i] != 0; i = (i + 1) & mask_)
      if (keys_[i] == sig) return false;
    keys_[i] = sig;
    values_[i] = v;
    used_.push_back(static_cast<std::uint32_t>(i));
    return true;
  }
  /// Empties the map in O(entries); keeps the capacity.
  void clear() {
    for (std::uint32_t i : used_) keys_[i] = 0;
    used_.clear();
  }
  bool empty() const { return used_.empty(); }
  std::size_t size() const { return used_.size(); }

 private:
  std::vector<std::uint64_t> keys_;  ///< 0: empty slot; size a power of two (or 0)
  std::vector<V> values_;
  std::vector<std::uint32_t> used_;  ///< occupied slots (for clear and rehash)
  std::size_t mask_ = 0;

  std::size_t slot(std::uint64_t sig) const {
    // (signatures are hashes already; the multiply spreads their low bits anyway)
    return static_cast<std::size_t>((sig * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void grow() {
    std::vector<std::uint64_t> old_keys;
    std::vector<V> old_values;
    old_keys.swap(keys_);
    old_values.swap(values_);
    std::vector<std::uint32_t> old_used;
    old_used.swap(used_);
    const std::size_t n = old_keys.empty() ? 64 : old_keys.size() * 2;
    keys_.assign(n, 0);
    values_.assign(n, V{});
    mask_ = n - 1;
    used_.reserve(n / 2);
    for (std::uint32_t i : old_used) insert(old_keys[i], old_values[i]);
  }
};

}  // namespace libsched::detail
