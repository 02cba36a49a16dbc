// Microsoft Philly (Jeon et al., USENIX ATC'19): machine lists and the per-job derived trace.
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>

#include "sim/io/traces.hpp"
#include "sim/io/traces_detail.hpp"

namespace sim::io {

namespace {

using detail::Field;
using detail::field_name;
using detail::parse_number;
using detail::row_fail;

// Documented assumptions (docs/traces.md): the trace has no CPU or memory figures.
constexpr double kVcpuPerGpu = 6.0;        // an 8-GPU server: 48 vCPU
constexpr double kMemGibPerGpu = 64.0;     // an 8-GPU server: 512 GiB
constexpr double kCpuOnlyVcpu = 8 * kVcpuPerGpu;
constexpr double kCpuOnlyMemGib = 8 * kMemGibPerGpu;

}  // namespace

std::vector<NodeCfg> read_philly_machines(const std::string& path, const TraceOptions& opts,
                                          std::size_t* skipped) {
  const std::string data = detail::read_file(path, opts.max_bytes);
  detail::LineReader lines(data);
  enum { kId, kGpus, kMem };
  static constexpr std::array<std::string_view, 3> kCols = {"machineId", "number of GPUs",
                                                            "single GPU mem"};
  const auto h = detail::read_header(path, lines, kCols, 2);
  auto idx = [&](int k) { return static_cast<std::size_t>(h.index[static_cast<std::size_t>(k)]); };
  std::vector<NodeCfg> nodes;
  std::vector<Field> f;
  std::size_t skip = 0;
  detail::for_each_row(path, lines, opts, skip, [&](std::string_view line) {
    detail::split_csv(line, ',', f);
    detail::check_width(line, f, h.names.size());
    const Field& id = f[idx(kId)];
    if (id.text.empty()) row_fail(id.column, field_name(idx(kId), "machineId") + ": empty machine id");
    const int gpus = parse_number<int>(f[idx(kGpus)], field_name(idx(kGpus), "number of GPUs"));
    if (gpus < 0 || gpus > 64)
      row_fail(f[idx(kGpus)].column, field_name(idx(kGpus), "number of GPUs") + ": must be in 0..64 (GPUs of one node), got " + std::to_string(gpus));
    NodeCfg n;
    n.name = sanitize_name(id.text, "machine");
    n.gpus = gpus;
    if (gpus > 0) {
      n.gpu_model = "PhillyGPU";
      if (h.index[kMem] >= 0 && !f[idx(kMem)].text.empty())
        n.gpu_model.append("-").append(f[idx(kMem)].text);  // e.g. PhillyGPU-12GB
      n.vcpu = kVcpuPerGpu * gpus;
      n.memory_gib = kMemGibPerGpu * gpus;
    } else {
      n.vcpu = kCpuOnlyVcpu;
      n.memory_gib = kCpuOnlyMemGib;
    }
    detail::check_row_node(n);
    nodes.push_back(std::move(n));
    return true;
  });
  if (skipped) *skipped += skip;
  return nodes;
}

std::vector<TaskCfg> read_philly_jobs(const std::string& path, const TraceCfg& cfg,
                                      const TraceOptions& opts, std::size_t* skipped) {
  const std::string data = detail::read_file(path, opts.max_bytes);
  detail::LineReader lines(data);
  std::vector<TaskCfg> tasks;
  tasks.reserve(detail::reserve_hint(cfg.limit ? *cfg.limit : data.size() / 30));
  std::vector<Field> f;
  std::size_t skip = 0;
  static constexpr std::array<std::string_view, 6> kNames = {
      "job id", "arrival time (sec)", "topology", "shape", "size", "duration (sec)"};
  detail::for_each_row(path, lines, opts, skip, [&](std::string_view line) {
    if (line.front() == '#') return true;  // header / comment
    if (detail::limit_reached(cfg, tasks.size())) return false;
    detail::check_row_count(tasks.size());
    detail::split_csv(line, ',', f);
    detail::check_width(line, f, 6);
    if (f[0].text.empty()) row_fail(f[0].column, field_name(0, kNames[0]) + ": empty job id");
    const double arrival = parse_number<double>(f[1], field_name(1, kNames[1]));
    if (arrival < 0) row_fail(f[1].column, field_name(1, kNames[1]) + ": must be >= 0");
    // shape: GPUs per server joined by '+'
    std::string_view shape = f[3].text;
    // parts and total in 64 bits: each part is an int, and there are fewer parts than bytes in a
    // line, so neither can overflow (a shape `2147483647+1` sums to 2147483648, not INT_MIN).
    long long parts = 0, total = 0;
    int largest = 0;
    std::size_t start = 0;
    while (true) {
      std::size_t plus = shape.find('+', start);
      if (plus == std::string_view::npos) plus = shape.size();
      Field part{shape.substr(start, plus - start), f[3].column + start};
      const int g = parse_number<int>(part, field_name(3, kNames[3]) + " part " + std::to_string(parts + 1));
      if (g <= 0) row_fail(part.column, field_name(3, kNames[3]) + ": GPUs per server must be > 0");
      ++parts;
      largest = std::max(largest, g);
      total += g;
      if (plus >= shape.size()) break;
      start = plus + 1;
    }
    if (parts - 1 > limits::max_workers)
      row_fail(f[3].column, field_name(3, kNames[3]) + ": " + std::to_string(parts) + " servers, more than " +
                                std::to_string(limits::max_workers + 1) + " replicas (the limit for one task)");
    const long long size = parse_number<long long>(f[4], field_name(4, kNames[4]));
    if (size != total)
      row_fail(f[4].column, field_name(4, kNames[4]) + ": " + std::to_string(size) +
                                " GPUs but the shape '" + std::string(shape) + "' sums to " +
                                std::to_string(total));
    double duration = parse_number<double>(f[5], field_name(5, kNames[5]));
    if (duration < 0) row_fail(f[5].column, field_name(5, kNames[5]) + ": must be >= 0");
    // 10 jobs of the derived trace last 0.0 s (shorter than the trace's 1 s resolution): 1 s.
    if (duration == 0) duration = 1.0;

    if (cfg.gpus_per_replica > 0) {  // split into replicas of gpus_per_replica GPUs
      const long long g = cfg.gpus_per_replica;
      parts = (total + g - 1) / g;
      largest = static_cast<int>(std::min(total, g));
      if (parts - 1 > limits::max_workers)
        row_fail(f[4].column, field_name(4, kNames[4]) + ": " + std::to_string(parts) + " replicas of " + std::to_string(g) +
                                  " GPUs, more than " + std::to_string(limits::max_workers + 1) + " (the limit for one task)");
    }
    TaskCfg t;
    detail::init_task(t, cfg, "philly");
    t.name.assign("philly-");  // "philly-" + sanitize_name(job id, "job"), written in place
    detail::append_sanitized_name(t.name, f[0].text, "job");
    t.workers = static_cast<int>(parts - 1);  // <= limits::max_workers, checked above
    ReplicaCfg r;
    r.gpus = largest;  // unequal parts (none in the derived trace): every replica asks for the largest
    r.gpu_milli = 1000;
    r.vcpu = kVcpuPerGpu * largest;
    r.memory_gib = kMemGibPerGpu * largest;
    t.replica = std::move(r);
    t.submit_s = arrival * cfg.time_scale;
    t.duration_s = duration * cfg.time_scale;  // 0 -> 1 s, then scaled
    detail::check_row_task(t);
    tasks.push_back(std::move(t));
    return true;
  });
  if (skipped) *skipped += skip;
  return tasks;
}

std::vector<VirtualClusterCfg> read_philly_virtual_clusters(const std::string& path, const TraceOptions& opts) {
  const std::string data = detail::read_file(path, opts.max_bytes);
  detail::LineReader lines(data);
  enum { kVc, kNodes };
  static constexpr std::array<std::string_view, 2> kCols = {"vc", "node num"};
  const auto h = detail::read_header(path, lines, kCols, 2);
  auto idx = [&](int k) { return static_cast<std::size_t>(h.index[static_cast<std::size_t>(k)]); };
  std::vector<VirtualClusterCfg> vcs;
  std::set<std::string, std::less<>> seen;
  std::vector<Field> f;
  std::size_t skip = 0;
  TraceOptions strict = opts;
  strict.skip_bad_rows = false;  // a VC file is configuration: every row counts
  detail::for_each_row(path, lines, strict, skip, [&](std::string_view line) {
    detail::split_csv(line, ',', f);
    detail::check_width(line, f, h.names.size());
    const Field& id = f[idx(kVc)];
    if (id.text.empty()) row_fail(id.column, field_name(idx(kVc), "vc") + ": empty virtual cluster id");
    VirtualClusterCfg vc;
    vc.name = sanitize_name(id.text, "vc");
    if (!seen.insert(vc.name).second)
      row_fail(id.column, field_name(idx(kVc), "vc") + ": virtual cluster '" + vc.name + "' appears twice");
    vc.nodes = parse_number<int>(f[idx(kNodes)], field_name(idx(kNodes), "node num"));
    if (vc.nodes < 1 || vc.nodes > limits::max_group_count)
      row_fail(f[idx(kNodes)].column, field_name(idx(kNodes), "node num") + ": must be in 1.." +
                                          std::to_string(limits::max_group_count) + ", got " + std::to_string(vc.nodes));
    vcs.push_back(std::move(vc));
    return true;
  });
  if (vcs.empty()) throw TraceError(path + ": no virtual cluster (expected rows `vc,node num`)");
  return vcs;
}

namespace {
/// FNV-1a 64 of the text, then splitmix64's finaliser: a portable, seed-free hash.
std::uint64_t stable_hash(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}
}  // namespace

void map_virtual_clusters(Scenario& scenario, const std::string& vc_file, const std::vector<VirtualClusterCfg>& vcs,
                          TraceLoad& load) {
  struct Vc {
    std::string pool;
    long long gpus = 0;
    int largest = 0;  // GPUs of its largest machine
  };
  std::vector<Vc> out;
  std::int64_t wanted = 0;
  for (const auto& vc : vcs) wanted += vc.nodes;
  std::int64_t gpu_machines = std::count_if(load.nodes.begin(), load.nodes.end(), [](const NodeCfg& n) { return n.gpus > 0; });
  if (gpu_machines < wanted)
    throw TraceError(vc_file + ": the virtual clusters ask for " + std::to_string(wanted) + " machines, the machine list has " +
                     std::to_string(gpu_machines) + " GPU machines");
  std::vector<NodeCfg> rest;
  auto next = load.nodes.begin();
  for (const auto& vc : vcs) {
    Vc v;
    v.pool = "vc-" + vc.name;
    for (const auto& p : scenario.cluster.pools)
      if (p.name == v.pool) throw TraceError(vc_file + ": virtual cluster '" + vc.name + "': pool '" + v.pool + "' already exists");
    for (const auto& q : scenario.quotas)
      if (q.user == v.pool) throw TraceError(vc_file + ": virtual cluster '" + vc.name + "': quota user '" + v.pool + "' already exists");
    PoolCfg pool;
    pool.name = v.pool;
    pool.kind = "dedicated";
    QuotaCfg quota;
    quota.user = v.pool;
    quota.resource_type = "reserved";
    quota.pool = v.pool;
    while (static_cast<int>(pool.nodes.size()) < vc.nodes) {
      NodeCfg& n = *next++;
      if (n.gpus == 0) {
        rest.push_back(std::move(n));
        continue;
      }
      v.gpus += n.gpus;
      v.largest = std::max(v.largest, n.gpus);
      quota.gpus += n.gpus;
      quota.vcpu += n.vcpu;
      quota.memory_gib += n.memory_gib;
      pool.nodes.push_back(std::move(n));
    }
    scenario.cluster.pools.push_back(std::move(pool));
    scenario.quotas.push_back(std::move(quota));
    out.push_back(std::move(v));
  }
  for (; next != load.nodes.end(); ++next) rest.push_back(std::move(*next));
  load.nodes = std::move(rest);

  std::size_t largest_vc = 0;
  for (std::size_t k = 1; k < out.size(); ++k)
    if (out[k].gpus > out[largest_vc].gpus) largest_vc = k;
  std::vector<std::size_t> fit;
  for (auto& t : load.tasks) {
    const int per_replica = t.replica ? t.replica->gpus : 0;
    const long long total = static_cast<long long>(per_replica) * (static_cast<long long>(t.workers) + 1);
    fit.clear();
    std::uint64_t weight = 0;
    for (std::size_t k = 0; k < out.size(); ++k)
      if (out[k].gpus >= total && out[k].largest >= per_replica) {
        fit.push_back(k);
        weight += static_cast<std::uint64_t>(vcs[k].nodes);
      }
    std::size_t chosen = largest_vc;
    if (!fit.empty()) {
      std::uint64_t u = stable_hash(t.name) % weight;
      for (std::size_t k : fit) {
        const auto w = static_cast<std::uint64_t>(vcs[k].nodes);
        if (u < w) {
          chosen = k;
          break;
        }
        u -= w;
      }
    }
    t.user = out[chosen].pool;
    t.tenant = out[chosen].pool;
    t.resource_type = "reserved";
    t.pool = out[chosen].pool;
  }
}

}  // namespace sim::io
