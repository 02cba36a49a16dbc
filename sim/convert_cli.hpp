// `schedsim convert`: one public trace to a self-contained scenario file (nodes and tasks
// inline), so that it can be edited, validated and run like any scenario.
#pragma once

#include <ostream>
#include <string>

#include "sim/io/scenario.hpp"

namespace sim {

struct ConvertOptions {
  io::TraceCfg trace;          ///< format, path, nodes, limit, procs_per_node, pool, resource_type, time_scale
  bool skip_bad_rows = false;
  std::string out;             ///< scenario file to write
  std::string placement = "best-fit";
};

/// Reads the trace, builds a scenario (one pool holding the trace's nodes, one task per job)
/// and writes it as JSON to opts.out (complete or not at all: written to a temporary file,
/// then renamed). Returns 0, or 2 after printing the error on `err` (missing data file with
/// where to download it, malformed row with file:line:column).
int convert_command(const ConvertOptions& opts, std::ostream& out, std::ostream& err);

/// Writes `content` to `path` completely or not at all (temporary file in the same folder,
/// then rename). Throws std::runtime_error naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace sim
