// sim::DeltaLog: an append-only log of records stored as their difference from the previous
// record, for the per-instant and per-change records a run keeps until its outputs are
// written (millions in a run of a million tasks). A Codec turns (previous, current) into a
// few bytes (LEB128 varints of zigzag differences, sim::varint below) and back. The bytes live
// in 64 KiB blocks that never move (no regrowth copy, no doubling slack); every kStride-th
// record leaves a checkpoint, so reading record i decodes at most kStride records. Reading in
// order (the iterator) decodes each record once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

namespace sim {

namespace varint {
/// Writes `v` as LEB128 (7 bits a byte, low first); at most 10 bytes.
inline std::uint8_t* put(std::uint8_t* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = std::uint8_t(v | 0x80);
    v >>= 7;
  }
  *p++ = std::uint8_t(v);
  return p;
}
inline const std::uint8_t* get(const std::uint8_t* p, std::uint64_t& v) {
  v = 0;
  for (int shift = 0;; shift += 7) {
    std::uint8_t b = *p++;
    v |= std::uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return p;
  }
}
/// The difference b - a (wrapping) as a zigzag varint: small differences of either sign are short.
inline std::uint8_t* put_delta(std::uint8_t* p, std::int64_t a, std::int64_t b) {
  std::int64_t d = std::int64_t(std::uint64_t(b) - std::uint64_t(a));
  return put(p, (std::uint64_t(d) << 1) ^ std::uint64_t(d >> 63));
}
/// Reads what put_delta wrote and returns a + the difference.
inline const std::uint8_t* get_delta(const std::uint8_t* p, std::int64_t a, std::int64_t& b) {
  std::uint64_t z;
  p = get(p, z);
  std::int64_t d = std::int64_t(z >> 1) ^ -std::int64_t(z & 1);
  b = std::int64_t(std::uint64_t(a) + std::uint64_t(d));
  return p;
}
}  // namespace varint

/// Codec requirements: `static constexpr std::size_t kMaxBytes` (longest encoding);
/// `static std::uint8_t* encode(std::uint8_t* out, const Record& prev, const Record& cur)`;
/// `static const std::uint8_t* decode(const std::uint8_t* in, Record& r)` turning `r` from the
/// previous record into this one. The first record is encoded against Record{}.
template <class Record, class Codec>
class DeltaLog {
  static constexpr std::size_t kBlock = std::size_t(1) << 16;
  static constexpr std::size_t kStride = 64;
  static_assert(Codec::kMaxBytes <= kBlock);
  struct Checkpoint {
    std::uint32_t block, offset;
    Record before;  // the record preceding the checkpointed one (Record{} for the first)
  };

 public:
  void push(const Record& r) {
    if (blocks_.empty() || used_ + Codec::kMaxBytes > kBlock) {
      if (!blocks_.empty()) block_used_.push_back(used_);
      blocks_.push_back(std::make_unique<std::uint8_t[]>(kBlock));
      used_ = 0;
    }
    if (count_ % kStride == 0) checkpoints_.push_back(Checkpoint{std::uint32_t(blocks_.size() - 1), std::uint32_t(used_), prev_});
    last_at_ = used_;
    before_last_ = prev_;
    write(r);
    ++count_;
  }
  /// Replaces the last record (re-encoded in place). Precondition: !empty().
  void replace_back(const Record& r) {
    used_ = last_at_;  // same block: it had room for kMaxBytes when the record was pushed
    prev_ = before_last_;
    write(r);
  }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// The last record. Precondition: !empty().
  const Record& back() const { return prev_; }
  /// Record `i` (< size()), decoded from the nearest checkpoint: O(64).
  Record operator[](std::size_t i) const {
    const Checkpoint& c = checkpoints_[i / kStride];
    Record r = c.before;
    std::size_t block = c.block, offset = c.offset;
    for (std::size_t k = i - i % kStride;; ++k) {
      read(block, offset, r);
      if (k == i) return r;
    }
  }
  /// Bytes held by the encoded records.
  std::size_t encoded_bytes() const { return blocks_.empty() ? 0 : (blocks_.size() - 1) * kBlock + used_; }

  /// Forward iterator in push order; the referenced record lives in the iterator.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Record;
    using difference_type = std::ptrdiff_t;
    using pointer = const Record*;
    using reference = const Record&;
    const_iterator() = default;
    reference operator*() const { return cur_; }
    pointer operator->() const { return &cur_; }
    const_iterator& operator++() {
      if (++index_ < log_->count_) log_->read(block_, offset_, cur_);
      return *this;
    }
    const_iterator operator++(int) {
      auto c = *this;
      ++*this;
      return c;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.index_ == b.index_; }

   private:
    friend class DeltaLog;
    const_iterator(const DeltaLog* log, std::size_t index) : log_(log), index_(index) {
      if (index_ < log_->count_) log_->read(block_, offset_, cur_);
    }
    const DeltaLog* log_ = nullptr;
    std::size_t index_ = 0, block_ = 0, offset_ = 0;
    Record cur_{};
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, count_); }

 private:
  void write(const Record& r) {
    std::uint8_t* out = blocks_.back().get() + used_;
    used_ += std::size_t(Codec::encode(out, prev_, r) - out);
    prev_ = r;
  }
  // Decodes the record at (block, offset) onto `r` and moves the position past it.
  void read(std::size_t& block, std::size_t& offset, Record& r) const {
    if (offset >= (block + 1 == blocks_.size() ? used_ : block_used_[block])) {
      ++block;
      offset = 0;
    }
    const std::uint8_t* base = blocks_[block].get();
    offset = std::size_t(Codec::decode(base + offset, r) - base);
  }

  std::vector<std::unique_ptr<std::uint8_t[]>> blocks_;
  std::vector<std::size_t> block_used_;  // bytes used in each full block (all but the last)
  std::vector<Checkpoint> checkpoints_;  // one per kStride records
  std::size_t used_ = 0;                 // bytes used in the last block
  std::size_t count_ = 0;
  std::size_t last_at_ = 0;  // offset of the last record in the last block
  Record prev_{};            // the last record
  Record before_last_{};     // the record before it (Record{} for the first)
};

}  // namespace sim
