// sim::SnapshotLog: the cluster time series (one Snapshot per change instant), delta-encoded.
// A run records one snapshot per simulated instant: two million of them in a run of a million
// tasks, 88 bytes each as structs. Consecutive snapshots differ in a few fields by small
// amounts, so the log stores each one as the fields that changed since the previous snapshot
// (a bit mask, then each changed integer as a zigzag LEB128 varint of its difference and the
// fragmentation as its 8 bytes), about 15-25 bytes. Reading is sequential only (a forward
// iterator that decodes as it goes), which is all the outputs do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <vector>

#include <libsched/libsched.hpp>

namespace sim {

/// One change point of the cluster, taken after scheduling at an instant.
struct Snapshot {
  libsched::Time time = 0;                        ///< ms
  std::int64_t gpu_by_class[4] = {0, 0, 0, 0};  ///< allocated milli-GPU, index = libsched::ResourceType
  std::int64_t gpu_up = 0;                        ///< milli-GPU of up nodes
  std::int64_t cpu_alloc = 0;                     ///< allocated milli-vCPU on up nodes
  std::int64_t cpu_up = 0;                        ///< milli-vCPU of up nodes
  std::size_t queue = 0;                          ///< waiting tasks
  std::size_t running = 0;                        ///< tasks holding resources
  double frag_milli = 0;                          ///< cluster_fragmentation (milli-GPU)
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

/// Append-only, delta-encoded sequence of Snapshots with non-decreasing times.
class SnapshotLog {
  static constexpr std::size_t kBlock = 1 << 16;  // bytes per block (blocks never move)
  static constexpr std::size_t kMaxRecord = 2 * 10 + 10 * 10 + 8;  // mask + 10 varints + the double
  static constexpr int kFields = 11;

  // Field k of a snapshot as an integer (the double's bits for the last one).
  static std::int64_t field(const Snapshot& s, int k) {
    switch (k) {
      case 0: return s.time;
      case 1: case 2: case 3: case 4: return s.gpu_by_class[k - 1];
      case 5: return s.gpu_up;
      case 6: return s.cpu_alloc;
      case 7: return s.cpu_up;
      case 8: return std::int64_t(s.queue);
      case 9: return std::int64_t(s.running);
      default: {
        std::int64_t b;
        std::memcpy(&b, &s.frag_milli, sizeof b);
        return b;
      }
    }
  }
  static void set_field(Snapshot& s, int k, std::int64_t v) {
    switch (k) {
      case 0: s.time = v; break;
      case 1: case 2: case 3: case 4: s.gpu_by_class[k - 1] = v; break;
      case 5: s.gpu_up = v; break;
      case 6: s.cpu_alloc = v; break;
      case 7: s.cpu_up = v; break;
      case 8: s.queue = std::size_t(v); break;
      case 9: s.running = std::size_t(v); break;
      default: std::memcpy(&s.frag_milli, &v, sizeof v); break;
    }
  }
  static std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
    while (v >= 0x80) {
      *p++ = std::uint8_t(v | 0x80);
      v >>= 7;
    }
    *p++ = std::uint8_t(v);
    return p;
  }
  static const std::uint8_t* get_varint(const std::uint8_t* p, std::uint64_t& v) {
    v = 0;
    for (int shift = 0;; shift += 7) {
      std::uint8_t b = *p++;
      v |= std::uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return p;
    }
  }
  // Decodes one record at `p` onto `s` (the previous snapshot); returns the next record.
  static const std::uint8_t* decode(const std::uint8_t* p, Snapshot& s) {
    std::uint64_t mask;
    p = get_varint(p, mask);
    for (int k = 0; k < kFields; ++k) {
      if (!(mask >> k & 1)) continue;
      if (k == kFields - 1) {
        std::int64_t b;
        std::memcpy(&b, p, sizeof b);
        p += sizeof b;
        set_field(s, k, b);
      } else {
        std::uint64_t z;
        p = get_varint(p, z);
        std::int64_t d = std::int64_t(z >> 1) ^ -std::int64_t(z & 1);  // zigzag
        set_field(s, k, std::int64_t(std::uint64_t(field(s, k)) + std::uint64_t(d)));
      }
    }
    return p;
  }

 public:
  /// Appends `s` (s.time >= back().time); a snapshot at the time of the last one replaces it.
  void push(const Snapshot& s) {
    if (count_ > 0 && s.time == last_.time) {
      last_ = s;
      return;
    }
    if (count_ > 0) encode(last_);
    last_ = s;
    ++count_;
  }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// The latest snapshot. Precondition: !empty().
  const Snapshot& back() const { return last_; }
  /// Bytes held by the encoded snapshots (for benchmarks and tests).
  std::size_t encoded_bytes() const { return blocks_.empty() ? 0 : (blocks_.size() - 1) * kBlock + used_; }

  /// Forward iterator over the snapshots in time order, decoding as it advances.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Snapshot;
    using difference_type = std::ptrdiff_t;
    using pointer = const Snapshot*;
    using reference = const Snapshot&;
    const_iterator() = default;
    reference operator*() const { return index_ + 1 == log_->count_ ? log_->last_ : cur_; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      ++index_;
      if (index_ + 1 < log_->count_) load();
      return *this;
    }
    const_iterator operator++(int) {
      auto c = *this;
      ++*this;
      return c;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.index_ == b.index_; }

   private:
    friend class SnapshotLog;
    const_iterator(const SnapshotLog* log, std::size_t index) : log_(log), index_(index) {
      if (index_ + 1 < log_->count_) load();
    }
    // Decodes record index_ (the records before the last snapshot are encoded in order).
    void load() {
      if (offset_ >= (block_ + 1 == log_->blocks_.size() ? log_->used_ : log_->block_used_[block_])) {
        ++block_;
        offset_ = 0;
      }
      const std::uint8_t* p = log_->blocks_[block_].get() + offset_;
      offset_ = std::size_t(decode(p, cur_) - log_->blocks_[block_].get());
    }
    const SnapshotLog* log_ = nullptr;
    std::size_t index_ = 0;
    std::size_t block_ = 0, offset_ = 0;
    Snapshot cur_{};
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, count_); }

 private:
  void encode(const Snapshot& s) {
    if (blocks_.empty() || used_ + kMaxRecord > kBlock) {
      if (!blocks_.empty()) block_used_.push_back(used_);
      blocks_.push_back(std::make_unique<std::uint8_t[]>(kBlock));
      used_ = 0;
    }
    std::uint8_t buf[kMaxRecord];
    std::uint8_t* p = buf + 2;  // the mask goes first; written once known
    std::uint64_t mask = 0;
    for (int k = 0; k < kFields; ++k) {
      std::int64_t a = field(prev_, k), b = field(s, k);
      if (a == b) continue;
      mask |= std::uint64_t(1) << k;
      if (k == kFields - 1) {
        std::memcpy(p, &b, sizeof b);
        p += sizeof b;
      } else {
        std::int64_t d = std::int64_t(std::uint64_t(b) - std::uint64_t(a));
        p = put_varint(p, (std::uint64_t(d) << 1) ^ std::uint64_t(d >> 63));  // zigzag
      }
    }
    std::uint8_t* out = blocks_.back().get() + used_;
    std::uint8_t* q = put_varint(out, mask);
    std::memcpy(q, buf + 2, std::size_t(p - (buf + 2)));
    used_ = std::size_t(q - blocks_.back().get()) + std::size_t(p - (buf + 2));
    prev_ = s;
  }

  std::vector<std::unique_ptr<std::uint8_t[]>> blocks_;
  std::vector<std::size_t> block_used_;  // bytes used in each full block (all but the last)
  std::size_t used_ = 0;                 // bytes used in the last block
  std::size_t count_ = 0;                // snapshots, the last one included
  Snapshot prev_{};                      // the last encoded snapshot (decoding starts from {})
  Snapshot last_{};                      // the latest snapshot, not encoded yet (may be replaced)
};

}  // namespace sim
