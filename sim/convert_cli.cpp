#include "sim/convert_cli.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/io/diagnostics.hpp"
#include "sim/io/scenario_json.hpp"
#include "sim/io/traces.hpp"

namespace sim {

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  fs::path tmp = p;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(fmt::format("{}: cannot open for writing", tmp.string()));
    f.write(content.data(), std::streamsize(content.size()));
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("{}: write failed", tmp.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("{}: cannot rename into place", path));
  }
}

int convert_command(const ConvertOptions& opts, std::ostream& out, std::ostream& err) {
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
  } catch (const std::exception& e) {  // the input was fine: an I/O failure (exit 1)
    err << io::escape_for_diagnostic(e.what()) << "\n";
    return 1;
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
