// `schedsim merge SHARD_DIR... --out DIR` (docs/sharding.md "merge").
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace sim {

/// `schedsim merge SHARD_DIR... --out DIR`: read_shards, then the command's own merge
/// (sweep_merge, fill_merge), which writes exactly the files and the table of one unsharded run.
/// Returns 0; 2 for bad, missing, duplicated or mixed shards (nothing written); 1 for I/O
/// problems; 130/143 when interrupted.
int merge_command(const std::vector<std::string>& dirs, const std::string& out_dir, std::ostream& out, std::ostream& err);

}  // namespace sim
