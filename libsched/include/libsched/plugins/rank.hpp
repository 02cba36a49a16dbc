// Rank: the sort key that queue and victim orders return (libsched/plugins/queue_order.hpp,
// victim_order.hpp).
#pragma once

#include <array>
#include <cstdint>

namespace libsched {

/// Three integers compared lexicographically; smaller goes first. An order is given as a key
/// (not a comparator) so that it is a strict weak order by construction and costs one call per
/// task instead of one per comparison.
using Rank = std::array<std::int64_t, 3>;

}  // namespace libsched
