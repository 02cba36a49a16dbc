// A small hash map keyed by request signature (Session::signature), for the per-pass and
// per-instant memos that are probed once per visited task: actions::allocate's failed and held
// signatures, and the simulator's wait codes by signature. A sorted vector cost a binary search
// per probe and a shift per insertion (tens of instructions on a long queue); here a probe is
// one hash and, mostly, one comparison, and clear() is O(1).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace libsched::detail {

/// Map from a nonzero 64-bit signature to a `V`. Open addressing with linear probing, at most
/// half full. A slot is occupied when its stamp equals the map's generation, so clear() only
/// moves the generation on. Key 0 ("not comparable") must never be inserted or looked up
/// (callers test `sig != 0` first). Nothing iterates the map: only membership and values are
/// read, so replacing a sorted vector changes no result. A moved-from map is empty.
template <class V>
class SignatureMap {
 public:
  SignatureMap() = default;
  SignatureMap(SignatureMap&& o) noexcept : slots_(std::move(o.slots_)), mask_(o.mask_), size_(o.size_), gen_(o.gen_) { o.reset(); }
  SignatureMap& operator=(SignatureMap&& o) noexcept {
    if (this != &o) {
      slots_ = std::move(o.slots_);
      mask_ = o.mask_;
      size_ = o.size_;
      gen_ = o.gen_;
      o.reset();
    }
    return *this;
  }
  SignatureMap(const SignatureMap&) = default;
  SignatureMap& operator=(const SignatureMap&) = default;

  /// The value of `sig` (nonzero), or nullptr when absent. O(1) expected.
  const V* find(std::uint64_t sig) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = slot(sig);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.stamp != gen_) return nullptr;
      if (s.key == sig) return &s.value;
    }
  }
  bool contains(std::uint64_t sig) const { return find(sig) != nullptr; }
  /// Inserts `sig` (nonzero) with `v` unless present (then the stored value is kept). Returns
  /// true when inserted. Doubles its slots when it would pass half full.
  bool insert(std::uint64_t sig, const V& v) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = slot(sig);
    for (; slots_[i].stamp == gen_; i = (i + 1) & mask_)
      if (slots_[i].key == sig) return false;
    slots_[i] = Slot{sig, gen_, v};
    ++size_;
    return true;
  }
  /// Empties the map in O(1) (O(slots) once every 2^32 clears); keeps the slots.
  void clear() {
    size_ = 0;
    if (++gen_ == 0) {
      for (Slot& s : slots_) s.stamp = 0;
      gen_ = 1;
    }
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t stamp = 0;  ///< occupied when equal to gen_
    V value{};
  };
  std::vector<Slot> slots_;  ///< size a power of two (or 0)
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::uint32_t gen_ = 1;  ///< (stamps start at 0: every slot empty)

  void reset() {
    slots_.clear();
    mask_ = 0;
    size_ = 0;
    gen_ = 1;
  }
  std::size_t slot(std::uint64_t sig) const {
    // (signatures are hashes already; the multiply spreads their bits anyway)
    return static_cast<std::size_t>((sig * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const std::uint32_t old_gen = gen_;
    const std::size_t n = old.empty() ? 64 : old.size() * 2;
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    size_ = 0;
    gen_ = 1;
    for (const Slot& s : old)
      if (s.stamp == old_gen) insert(s.key, s.value);
  }
};

}  // namespace libsched::detail
