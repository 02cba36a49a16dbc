// `schedsim convert`: one public trace to a self-contained scenario file (nodes and tasks
// inline), so that it can be edited, validated and run like any scenario.
#pragma once

#include <ostream>
#include <string>

#include <libsched/registry.hpp>

#include "sim/io/scenario.hpp"
#include "sim/outputs/publish.hpp"  // write_file_atomic

namespace sim {

struct ConvertOptions {
  io::TraceCfg trace;          ///< format, path, nodes, limit, procs_per_node, pool, resource_type, time_scale
  bool skip_bad_rows = false;
  std::string out;             ///< scenario file to write
  std::string placement = "best-fit";  ///< must be registered in `registry`
  /// Placement policies by name; nullptr = libsched::Registry::builtin().
  const libsched::Registry* registry = nullptr;
};

/// Reads the trace, builds a scenario (one pool holding the trace's nodes, one task per job)
/// and writes it as JSON to opts.out (complete or not at all: written to a temporary file,
/// then renamed). Returns 0; 2 after printing the error on `err` (missing data file with
/// where to download it, malformed row with file:line:column); 1 when --out cannot be
/// written (checked before the trace is read, and on any write, fsync or rename failure).
int convert_command(const ConvertOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace sim
