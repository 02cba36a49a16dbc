// `schedsim merge`: reads the shard folders (sim/experiments/shard.hpp) and hands them to the
// command whose shards they are (sweep_merge in sweep_cli.cpp, fill_merge in fill_cli.cpp).
#include "sim/cli/merge_cli.hpp"

#include "sim/cli/fill_cli.hpp"
#include "sim/cli/multirun_cli.hpp"
#include "sim/experiments/shard.hpp"

namespace sim {

int merge_command(const std::vector<std::string>& dirs, const std::string& out_dir, std::ostream& out, std::ostream& err) {
  int rc = 0;
  const auto shards = read_shards(dirs, err, rc);
  if (!shards) return rc;
  if (shards->front().command == "sweep") return sweep_merge(*shards, out_dir, out, err);
  return fill_merge(*shards, out_dir, out, err);
}

}  // namespace sim
