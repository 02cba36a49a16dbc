// sim::SnapshotLog: the cluster time series (one Snapshot per change instant), delta-encoded.
// A run records one snapshot per simulated instant: two million of them in a run of a million
// tasks, 88 bytes each as structs. Consecutive snapshots differ in a few fields by small
// amounts, so the log stores each one as the fields that changed since the previous snapshot
// (a bit mask, then each changed integer as a zigzag varint of its difference and the
// fragmentation as its 8 bytes), about 15-25 bytes (sim/delta_log.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <libsched/libsched.hpp>

#include "sim/engine/delta_log.hpp"

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

/// DeltaLog codec of Snapshot: a mask of the fields that changed, then each changed field.
struct SnapshotCodec {
  static constexpr int kFields = 11;
  static constexpr std::size_t kMaxBytes = 2 + 10 * 10 + 8;  // mask, 10 varints, the double
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
  static std::uint8_t* encode(std::uint8_t* out, const Snapshot& prev, const Snapshot& s) {
    std::uint64_t mask = 0;
    for (int k = 0; k < kFields; ++k)
      if (field(prev, k) != field(s, k)) mask |= std::uint64_t(1) << k;
    out = varint::put(out, mask);
    for (int k = 0; k < kFields; ++k) {
      if (!(mask >> k & 1)) continue;
      if (k == kFields - 1) {
        const std::int64_t b = field(s, k);
        std::memcpy(out, &b, sizeof b);
        out += sizeof b;
      } else {
        out = varint::put_delta(out, field(prev, k), field(s, k));
      }
    }
    return out;
  }
  static const std::uint8_t* decode(const std::uint8_t* p, Snapshot& s) {
    std::uint64_t mask;
    p = varint::get(p, mask);
    for (int k = 0; k < kFields; ++k) {
      if (!(mask >> k & 1)) continue;
      std::int64_t v;
      if (k == kFields - 1) {
        std::memcpy(&v, p, sizeof v);
        p += sizeof v;
      } else {
        p = varint::get_delta(p, field(s, k), v);
      }
      set_field(s, k, v);
    }
    return p;
  }
};

/// The time series: snapshots with non-decreasing times, in time order (forward iteration);
/// a second snapshot of the same instant replaces the first.
class SnapshotLog {
  using Log = DeltaLog<Snapshot, SnapshotCodec>;

 public:
  using const_iterator = Log::const_iterator;
  /// Appends `s` (s.time >= back().time); a snapshot at the time of the last one replaces it.
  void push(const Snapshot& s) {
    if (!log_.empty() && s.time == log_.back().time) log_.replace_back(s);
    else log_.push(s);
  }
  std::size_t size() const { return log_.size(); }
  bool empty() const { return log_.empty(); }
  /// The latest snapshot. Precondition: !empty().
  const Snapshot& back() const { return log_.back(); }
  /// Bytes held by the encoded snapshots (for benchmarks and tests).
  std::size_t encoded_bytes() const { return log_.encoded_bytes(); }
  const_iterator begin() const { return log_.begin(); }
  const_iterator end() const { return log_.end(); }

 private:
  Log log_;
};

}  // namespace sim
