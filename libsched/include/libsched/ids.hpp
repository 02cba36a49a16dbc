// Strong integer ids for the hot paths (no bare ints or strings): NodeId, PoolId, TaskId.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

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

}  // namespace libsched

template <class Tag>
struct std::hash<libsched::StrongId<Tag>> {
  std::size_t operator()(libsched::StrongId<Tag> id) const noexcept { return std::hash<std::int32_t>{}(id.value); }
};
