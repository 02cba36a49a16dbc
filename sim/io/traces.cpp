// Trace readers: data root, file access, dispatch and scenario merge (docs/traces.md).
#include "sim/io/traces.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "sim/io/key_sort.hpp"
#include "sim/io/diagnostics.hpp"
#include "sim/io/gzip.hpp"
#include "sim/io/traces_detail.hpp"

#ifndef SCHEDSIM_SOURCE_DIR
#define SCHEDSIM_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace sim::io {

std::string data_root() {
  if (const char* env = std::getenv("SCHEDSIM_DATA"); env && *env) return env;
  return (fs::path(SCHEDSIM_SOURCE_DIR) / ".." / "shared" / "data").lexically_normal().string();
}

std::string trace_source(std::string_view format) {
  if (format == "openb")
    return "https://github.com/alibaba/clusterdata (cluster-trace-gpu-v2023, the 'openb' traces of "
           "Weng et al., USENIX ATC'23)";
  if (format == "philly")
    return "https://github.com/msr-fiddle/philly-traces (machine lists; the per-job trace "
           "philly_trace.RFold-derived.csv is derived from it by the RFold artifact, "
           "https://github.com/shuoshuc/RFold)";
  if (format == "swf")
    return "the Parallel Workloads Archive, https://www.cs.huji.ac.il/labs/parallel/workload/";
  return trace_source("openb") + "; " + trace_source("philly") + "; " + trace_source("swf");
}

namespace {

std::string_view guess_format(std::string_view path) {
  if (path.find("openb") != std::string_view::npos) return "openb";
  if (path.find("philly") != std::string_view::npos) return "philly";
  if (path.find(".swf") != std::string_view::npos || path.find("swf/") != std::string_view::npos)
    return "swf";
  return {};
}

/// True when two of `tasks` have the same name: (hash of the name, index) sorted, equal hashes
/// then told apart by the names. A few MB for 10^5 tasks, where a hash set of the names held a
/// node and a copy of each name.
bool any_duplicate_name(const std::vector<TaskCfg>& tasks) {
  {
    // Distinct hashes are distinct names (most traces): the hashes alone sorted (a radix sort,
    // no more memory than the pairs below), the names compared only when two hashes are equal.
    std::vector<std::uint64_t> hashes(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) hashes[i] = std::hash<std::string_view>{}(tasks[i].name);
    sim::detail::sort_keys(hashes);
    if (std::adjacent_find(hashes.begin(), hashes.end()) == hashes.end()) return false;
  }
  std::vector<std::pair<std::size_t, std::size_t>> keys(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) keys[i] = {std::hash<std::string_view>{}(tasks[i].name), i};
  std::sort(keys.begin(), keys.end());
  for (std::size_t a = 0; a < keys.size();) {
    std::size_t b = a + 1;
    while (b < keys.size() && keys[b].first == keys[a].first) ++b;
    for (std::size_t j = a + 1; j < b; ++j)
      for (std::size_t k = a; k < j; ++k)
        if (tasks[keys[j].second].name == tasks[keys[k].second].name) return true;
    a = b;
  }
  return false;
}

}  // namespace

std::string resolve_data_path(const std::string& rel, std::string_view format) {
  if (rel.empty()) throw TraceError("trace: empty data file path");
  if (const auto nul = rel.find('\0'); nul != std::string::npos)
    throw TraceError("trace: '" + escape_for_diagnostic(rel) + "': a path must not contain a NUL byte (byte " +
                     std::to_string(nul + 1) + ")");
  fs::path p(rel);
  const std::string root = data_root();
  if (!p.is_absolute()) p = fs::path(root) / p;
  std::error_code ec;
  const auto st = fs::status(p, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw TraceError("trace data file '" + p.string() + "' is not a regular file (" +
                     (fs::is_directory(st) ? "a directory" : fs::is_fifo(st) ? "a FIFO" : "a device or socket") + ")");
  if (!fs::is_regular_file(st)) {
    if (format.empty()) format = guess_format(rel);
    throw TraceError("trace data file '" + p.string() + "' not found (data root '" + root +
                     "'): set SCHEDSIM_DATA or download it from " + trace_source(format));
  }
  return p.string();
}

std::string sanitize_name(std::string_view raw, std::string_view fallback) {
  std::string out;
  out.reserve(raw.size());
  detail::append_sanitized_name(out, raw, fallback);
  return out;
}

namespace detail {

void append_sanitized_name(std::string& out, std::string_view raw, std::string_view fallback) {
  // Most ids (a trace's job numbers) are lowercase letters and digits already: appended whole.
  if (!raw.empty() && std::all_of(raw.begin(), raw.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); })) {
    out.append(raw);
    return;
  }
  const std::size_t base = out.size();
  for (char c : raw) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (ok) {
      out.push_back(c);
    } else if (out.size() > base && out.back() != '-') {
      out.push_back('-');
    }
  }
  while (out.size() > base && out.back() == '-') out.pop_back();
  if (out.size() == base) out.append(fallback);
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
  std::string raw = read_raw(path, max_bytes);
  if (is_gzip(raw)) return gunzip(raw, max_bytes, path);
  return raw;
}

std::string read_raw(const std::string& path, std::uint64_t max_bytes) {
  // The file system would see the path up to a NUL byte: another file (a `\u0000` in JSON).
  if (const auto nul = path.find('\0'); nul != std::string::npos)
    throw TraceError("trace: '" + escape_for_diagnostic(path) + "': a path must not contain a NUL byte (byte " +
                     std::to_string(nul + 1) + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError("trace: cannot open '" + path + "'");
  auto too_large = [&](const char* what) {
    return TraceError("trace: '" + path + "': " + what + " more than " + std::to_string(max_bytes) +
                      " bytes (the limit for one trace file)");
  };
  // Read in chunks (never trusting a size the file system reports) up to the limit.
  std::string raw;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    if (raw.size() + got > max_bytes) throw too_large("has");
    raw.append(buf.data(), got);
  }
  if (in.bad()) throw TraceError("trace: cannot read '" + path + "'");
  return raw;
}

std::string located(const std::string& path, std::size_t line, std::size_t column,
                    const std::string& message) {
  return path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

void advise_huge_pages(const void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{1} << 21;
  if (bytes < 2 * huge) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge - 1);
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void check_cfg(const TraceCfg& cfg) {
  if (!(cfg.time_scale > 0))
    throw TraceError("trace '" + cfg.path + "': time_scale must be > 0, got " +
                     std::to_string(cfg.time_scale));
  if (!(cfg.arrival_scale > 0 && cfg.arrival_scale <= limits::max_arrival_scale))
    throw TraceError("trace '" + cfg.path + "': arrival_scale must be > 0 and <= " +
                     fmt::format("{}", limits::max_arrival_scale) + ", got " + fmt::format("{}", cfg.arrival_scale));
  static const std::set<std::string, std::less<>> kTypes = {"reserved", "pay_as_you_go", "spot",
                                                            "idle"};
  if (!kTypes.count(cfg.resource_type))
    throw TraceError("trace '" + cfg.path + "': resource_type must be reserved, pay_as_you_go, "
                     "spot or idle, got '" + cfg.resource_type + "'");
}

void init_task(TaskCfg& t, const TraceCfg& cfg, std::string_view user) {
  t.user = std::string(user);
  t.type = "PyTorchJob";
  t.resource_type = cfg.resource_type;
  if (cfg.resource_type == "reserved") t.pool = cfg.pool;
}

}  // namespace detail

std::string resolve_data_path_of(std::string_view where, std::string_view key, const std::string& rel, std::string_view format) {
  try {
    return resolve_data_path(rel, format);
  } catch (const TraceError& e) {
    throw TraceError(fmt::format("{}.{}: \"{}\": {}", where.empty() ? "trace" : where, key, escape_for_diagnostic(rel), e.what()));
  }
}

TraceLoad load_trace(const TraceCfg& cfg, const TraceOptions& opts, std::string_view where) {
  detail::check_cfg(cfg);
  TraceLoad load;
  auto data = [&](const std::string& rel, std::string_view key) { return resolve_data_path_of(where, key, rel, cfg.format); };
  if (cfg.format == "openb") {
    if (!cfg.nodes.empty()) load.nodes = read_openb_nodes(data(cfg.nodes, "nodes"), opts, &load.skipped_rows);
    if (!cfg.path.empty()) load.tasks = read_openb_pods(data(cfg.path, "path"), cfg, opts, &load.skipped_rows);
  } else if (cfg.format == "philly") {
    if (!cfg.nodes.empty()) load.nodes = read_philly_machines(data(cfg.nodes, "nodes"), opts, &load.skipped_rows);
    if (!cfg.path.empty()) load.tasks = read_philly_jobs(data(cfg.path, "path"), cfg, opts, &load.skipped_rows);
  } else if (cfg.format == "swf") {
    load = read_swf(data(cfg.path, "path"), cfg, opts);
  } else {
    throw TraceError("trace '" + cfg.path + "': unknown format '" + cfg.format +
                     "' (expected openb, philly or swf)");
  }
  // Runtime estimates and rebasing (docs/traces.md "Runtime estimates", "rebase_time").
  if (cfg.runtime_estimate == "requested" && cfg.format != "swf")
    throw TraceError("trace '" + cfg.path + "': runtime_estimate \"requested\": only swf traces carry a requested time");
  // Resubmission and checkpoints for every task of the trace (docs/traces.md "Scenario keys"),
  // the estimates and rebase_time: one pass over the task records (a large trace's 65 MB), made
  // only when one of them applies; the option strings compared once. The earliest submit_s is
  // the reader's when it kept it (TraceLoad::earliest_submit_s), else found by a pass first.
  const bool actual = cfg.runtime_estimate == "actual", affine = cfg.runtime_estimate == "affine";
  const bool fault_tolerance = cfg.max_resubmissions != 0 || cfg.checkpoint_interval_s.has_value();
  const bool rebase = cfg.rebase_time && !load.tasks.empty();
  double first = 0;
  if (rebase) {
    if (load.earliest_submit_s) {
      first = *load.earliest_submit_s;
    } else {
      first = load.tasks.front().submit_s;
      for (const auto& t : load.tasks) first = std::min(first, t.submit_s);
    }
  }
  if (actual || affine || fault_tolerance || rebase)
    for (auto& t : load.tasks) {
      if (actual) t.runtime_estimate_s = t.duration_s;
      else if (affine) t.runtime_estimate_s = cfg.estimate_factor * t.duration_s + cfg.estimate_add_s;
      if (fault_tolerance) {
        t.fault_tolerance.max_resubmissions = cfg.max_resubmissions;
        t.checkpoint_interval_s = cfg.checkpoint_interval_s;
      }
      if (rebase) t.submit_s -= first;
    }
  if (cfg.arrival_scale != 1.0 && !load.tasks.empty()) {
    // Gaps between arrivals scaled from the earliest one; durations kept.
    double first = load.tasks.front().submit_s;
    for (const auto& t : load.tasks) first = std::min(first, t.submit_s);
    for (auto& t : load.tasks) {
      t.submit_s = first + (t.submit_s - first) * cfg.arrival_scale;
      if (t.submit_s > limits::max_time_s)
        throw TraceError("trace '" + cfg.path + "': task '" + t.name + "': submit_s: " + fmt::format("{}", t.submit_s) +
                         ": must be <= 1e9 after arrival_scale " + fmt::format("{}", cfg.arrival_scale));
    }
  }
  return load;
}

std::size_t apply_traces(Scenario& scenario, const TraceOptions& opts) {
  std::size_t skipped = 0;
  std::unordered_set<std::string> node_names;
  for (const auto& pool : scenario.cluster.pools) {
    for (const auto& g : pool.node_groups)
      for (int i = 0; i < g.count; ++i) node_names.insert(g.prefix + std::to_string(i));
    for (const auto& n : pool.nodes) node_names.insert(n.name);
  }

  for (std::size_t ti = 0; ti < scenario.traces.size(); ++ti) {
    const TraceCfg& cfg = scenario.traces[ti];
    std::string pool_name = cfg.pool;
    if (pool_name.empty())
      pool_name = scenario.cluster.pools.empty() ? "trace" : scenario.cluster.pools.front().name;
    const std::string where = fmt::format("traces[{}]", ti);
    TraceLoad load = load_trace(cfg, opts, where);
    skipped += load.skipped_rows;
    if (!cfg.virtual_clusters.empty()) {
      const std::string vc_path = resolve_data_path_of(where, "virtual_clusters", cfg.virtual_clusters, "philly");
      map_virtual_clusters(scenario, vc_path, read_philly_virtual_clusters(vc_path, opts), load);
    }

    PoolCfg* pool = nullptr;
    for (auto& p : scenario.cluster.pools)
      if (p.name == pool_name) pool = &p;
    if (!pool && !load.nodes.empty()) {  // only a pool that receives nodes is created
      PoolCfg np;
      np.name = pool_name;
      scenario.cluster.pools.push_back(std::move(np));
      pool = &scenario.cluster.pools.back();
    }
    for (auto& n : load.nodes) {
      if (!node_names.insert(n.name).second)
        throw TraceError("trace " + std::to_string(ti) + " ('" + cfg.path + "'): node name '" +
                         n.name + "' is already used in the cluster");
      pool->nodes.push_back(std::move(n));
    }
    const std::string suffix = "-t" + std::to_string(ti);
    // The trace's tasks join the scenario's without a second copy of them held: the whole
    // vector is taken when the scenario has no task yet (a large trace's ~600-byte records).
    const std::size_t first_new = scenario.tasks.size();
    if (first_new == 0) {
      scenario.tasks = std::move(load.tasks);
    } else {
      scenario.tasks.reserve(first_new + load.tasks.size());
      for (auto& t : load.tasks) scenario.tasks.push_back(std::move(t));
    }
    std::vector<TaskCfg>().swap(load.tasks);
    // A task whose name an earlier task has is renamed (NAME-t<I>, then NAME-t<I>-2, ...). The
    // names are hashed into a set only when some name repeats: most traces have none.
    std::unordered_set<std::string> task_names;
    const bool rename = !(first_new == 0 && load.names_distinct) && any_duplicate_name(scenario.tasks);
    if (rename)
      for (std::size_t i = 0; i < first_new; ++i) task_names.insert(scenario.tasks[i].name);
    for (std::size_t added = first_new; added < scenario.tasks.size(); ++added) {
      TaskCfg& t = scenario.tasks[added];
      if (t.resource_type == "reserved" && t.pool.empty()) t.pool = pool_name;
      // The pool a task names must exist (the simulator would refuse it only when it runs).
      if (!t.pool.empty() && t.pool == pool_name && !pool)
        throw TraceError("trace " + std::to_string(ti) + " ('" + cfg.path + "'): task '" + t.name + "': pool '" + pool_name +
                         "': no such pool in the cluster (and the trace brings no node to create it)");
      if (rename && !task_names.insert(t.name).second) {
        std::string base = t.name + suffix;
        std::string name = base;
        for (int k = 2; !task_names.insert(name).second; ++k) name = base + "-" + std::to_string(k);
        t.name = std::move(name);
      }
    }
    // The scenario-wide limits hold with the trace's nodes and tasks too.
    check_scenario_totals(scenario, [&](const std::string& field, const std::string& value, const std::string& rule) {
      throw TraceError("trace " + std::to_string(ti) + " ('" + cfg.path + "'): " + field + ": " + value + ": " + rule);
    });
  }
  return skipped;
}

}  // namespace sim::io
