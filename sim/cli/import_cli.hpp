// `schedsim import k8s`: Kubernetes objects to a scenario and/or a `decide` snapshot
// (docs/kubernetes.md).
#pragma once

#include <ostream>
#include <string>

#include "sim/io/k8s_import.hpp"

namespace sim {

struct ImportK8sOptions {
  io::K8sImportOptions import;
  std::string out;       ///< scenario file to write ("" = none)
  std::string snapshot;  ///< decide snapshot to write ("" = none)
};

/// Reads the objects, prints one warning line per unmapped field on `err`, checks the scenario
/// with the scenario reader's rules and writes --out / --snapshot (each complete or not at all).
/// Returns 0; 2 on bad input (`FILE: PATH: VALUE: RULE` lines on `err`, nothing written, also
/// when neither --out nor --snapshot is given); 1 when an output cannot be written.
int import_k8s_command(const ImportK8sOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace sim
