#include "sim/cli/convert_cli.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"
#include "sim/outputs/publish.hpp"

namespace sim {

int convert_command(const ConvertOptions& opts, std::ostream& out, std::ostream& err) {
  try {
    check_output_file(opts.out);  // before reading the trace: an unwritable --out fails fast (exit 1)
  } catch (const OutputError& e) {
    err << "schedsim convert: --out: " << e.what() << "\n";
    return e.status;
  }
  const libsched::Registry& registry = opts.registry ? *opts.registry : libsched::Registry::builtin();
  if (!registry.placement.contains(opts.placement)) {
    err << fmt::format("schedsim convert: --placement: {}: unknown placement policy (registered: {})\n",
                       io::escape_for_diagnostic(opts.placement), fmt::join(registry.placement.names(), ", "));
    return 2;
  }
  io::Scenario s;
  s.name = std::filesystem::path(opts.trace.path).stem().string();
  s.cluster.name = opts.trace.format;
  s.scheduler.placement = opts.placement;
  io::PoolCfg pool;
  pool.name = opts.trace.pool.empty() ? opts.trace.format : opts.trace.pool;
  s.cluster.pools.push_back(pool);
  io::TraceCfg t = opts.trace;
  t.pool = pool.name;
  s.traces.push_back(t);
  std::size_t skipped = 0;
  try {
    skipped = io::apply_traces(s, io::TraceOptions{opts.skip_bad_rows});
  } catch (const io::TraceError& e) {
    err << io::escape_for_diagnostic(e.what()) << "\n";
    return 2;
  }
  s.traces.clear();
  try {
    write_file_atomic(opts.out, io::scenario_to_json(s).dump(1) + "\n");
  } catch (const OutputError& e) {
    err << "schedsim convert: --out: " << io::escape_for_diagnostic(e.what()) << "\n";
    return e.status;
  } catch (const std::exception& e) {  // e.g. a name that is not UTF-8 in the trace
    err << io::escape_for_diagnostic(opts.trace.path) << ": " << io::escape_for_diagnostic(e.what()) << "\n";
    return 2;
  }
  std::size_t nodes = 0;
  for (const auto& p : s.cluster.pools) nodes += p.nodes.size();
  if (nodes == 0 && !s.tasks.empty())
    err << fmt::format("{}: warning: the scenario has no node (give --nodes with the trace's node or machine list, "
                       "or add node groups): every task would stay queued\n", opts.out);
  out << fmt::format("{}: {} tasks, {} nodes{}\n", opts.out, s.tasks.size(), nodes,
                     skipped ? fmt::format(", {} malformed rows skipped", skipped) : "");
  return 0;
}

}  // namespace sim
