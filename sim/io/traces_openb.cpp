// Alibaba cluster-trace-gpu-v2023 ("openb", Weng et al., USENIX ATC'23): node and pod lists.
#include <algorithm>
#include <array>
#include <optional>

#include "sim/io/traces.hpp"
#include "sim/io/traces_detail.hpp"

namespace sim::io {

namespace {

using detail::Field;
using detail::field_name;
using detail::parse_number;
using detail::row_fail;
using detail::read_header;
using detail::check_width;

template <class T>
T get_num(const std::vector<Field>& f, int idx, std::string_view name) {
  return parse_number<T>(f[static_cast<std::size_t>(idx)], field_name(static_cast<std::size_t>(idx), name));
}

bool missing(std::string_view v) { return v.empty() || v == "nan" || v == "NaN" || v == "None"; }

}  // namespace

std::vector<NodeCfg> read_openb_nodes(const std::string& path, const TraceOptions& opts,
                                      std::size_t* skipped) {
  const std::string data = detail::read_file(path, opts.max_bytes);
  detail::LineReader lines(data);
  enum { kSn, kCpu, kMem, kGpu, kModel };
  static constexpr std::array<std::string_view, 5> kCols = {"sn", "cpu_milli", "memory_mib", "gpu",
                                                            "model"};
  const auto h = read_header(path, lines, kCols, kCols.size());
  std::vector<NodeCfg> nodes;
  std::vector<Field> f;
  std::size_t skip = 0;
  detail::for_each_row(path, lines, opts, skip, [&](std::string_view line) {
    detail::split_csv(line, ',', f);
    check_width(line, f, h.names.size());
    NodeCfg n;
    const Field& sn = f[static_cast<std::size_t>(h.index[kSn])];
    if (sn.text.empty()) row_fail(sn.column, field_name(static_cast<std::size_t>(h.index[kSn]), "sn") + ": empty node name");
    const double cpu = get_num<double>(f, h.index[kCpu], "cpu_milli");
    const double mem = get_num<double>(f, h.index[kMem], "memory_mib");
    const int gpus = get_num<int>(f, h.index[kGpu], "gpu");
    if (cpu < 0) row_fail(f[static_cast<std::size_t>(h.index[kCpu])].column, field_name(static_cast<std::size_t>(h.index[kCpu]), "cpu_milli") + ": must be >= 0");
    if (mem < 0) row_fail(f[static_cast<std::size_t>(h.index[kMem])].column, field_name(static_cast<std::size_t>(h.index[kMem]), "memory_mib") + ": must be >= 0");
    if (gpus < 0 || gpus > 64)
      row_fail(f[static_cast<std::size_t>(h.index[kGpu])].column,
               field_name(static_cast<std::size_t>(h.index[kGpu]), "gpu") + ": must be in 0..64 (GPUs of one node), got " + std::to_string(gpus));
    const Field& model = f[static_cast<std::size_t>(h.index[kModel])];
    if (gpus > 0 && missing(model.text))
      row_fail(model.column, field_name(static_cast<std::size_t>(h.index[kModel]), "model") +
                                 ": a node with " + std::to_string(gpus) + " GPUs needs a GPU model");
    n.name = sanitize_name(sn.text, "node");
    n.vcpu = cpu / 1000.0;
    n.memory_gib = mem / 1024.0;
    n.gpus = gpus;
    if (gpus > 0) n.gpu_model = std::string(model.text);
    detail::check_row_node(n);
    nodes.push_back(std::move(n));
    return true;
  });
  if (skipped) *skipped += skip;
  return nodes;
}

std::vector<TaskCfg> read_openb_pods(const std::string& path, const TraceCfg& cfg,
                                     const TraceOptions& opts, std::size_t* skipped) {
  const std::string data = detail::read_file(path, opts.max_bytes);
  detail::LineReader lines(data);
  enum { kName, kCpu, kMem, kNumGpu, kGpuMilli, kSpec, kQos, kCreate, kDelete };
  static constexpr std::array<std::string_view, 9> kCols = {
      "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
      "creation_time", "deletion_time"};
  const auto h = read_header(path, lines, kCols, 5);
  auto idx = [&](int k) { return static_cast<std::size_t>(h.index[static_cast<std::size_t>(k)]); };
  auto has = [&](int k) { return h.index[static_cast<std::size_t>(k)] >= 0; };

  std::vector<TaskCfg> tasks;
  tasks.reserve(detail::reserve_hint(cfg.limit ? *cfg.limit : data.size() / 64));
  std::vector<Field> f;
  std::size_t skip = 0;
  const bool qos_map = cfg.resource_type == "pay_as_you_go";
  detail::for_each_row(path, lines, opts, skip, [&](std::string_view line) {
    if (detail::limit_reached(cfg, tasks.size())) return false;
    detail::check_row_count(tasks.size());
    detail::split_csv(line, ',', f);
    check_width(line, f, h.names.size());
    const Field& name = f[idx(kName)];
    if (name.text.empty()) row_fail(name.column, field_name(idx(kName), "name") + ": empty pod name");
    const double cpu = get_num<double>(f, h.index[kCpu], "cpu_milli");
    const double mem = get_num<double>(f, h.index[kMem], "memory_mib");
    const int num_gpu = get_num<int>(f, h.index[kNumGpu], "num_gpu");
    // A share above a whole GPU is clipped to 1000, as the FGD paper's simulator does.
    const int gpu_milli = std::min(get_num<int>(f, h.index[kGpuMilli], "gpu_milli"), 1000);
    if (cpu < 0) row_fail(f[idx(kCpu)].column, field_name(idx(kCpu), "cpu_milli") + ": must be >= 0");
    if (mem < 0) row_fail(f[idx(kMem)].column, field_name(idx(kMem), "memory_mib") + ": must be >= 0");
    if (num_gpu < 0) row_fail(f[idx(kNumGpu)].column, field_name(idx(kNumGpu), "num_gpu") + ": must be >= 0");
    if (gpu_milli < 0)
      row_fail(f[idx(kGpuMilli)].column, field_name(idx(kGpuMilli), "gpu_milli") + ": must be >= 0, got " +
                                              std::to_string(gpu_milli));
    if (num_gpu == 1 && gpu_milli == 0)
      row_fail(f[idx(kGpuMilli)].column, field_name(idx(kGpuMilli), "gpu_milli") +
                                              ": a pod with num_gpu=1 must ask for 1..1000 milli-GPU");

    TaskCfg t;
    detail::init_task(t, cfg, "openb");
    t.name = sanitize_name(name.text, "pod");
    t.workers = 0;
    ReplicaCfg r;
    r.gpus = num_gpu;
    r.gpu_milli = num_gpu == 1 ? gpu_milli : 1000;
    r.vcpu = cpu / 1000.0;
    r.memory_gib = mem / 1024.0;
    if (has(kSpec) && num_gpu > 0) {
      std::string_view spec = f[idx(kSpec)].text;
      if (!missing(spec)) {
        std::size_t start = 0;
        while (start <= spec.size()) {
          std::size_t bar = spec.find('|', start);
          if (bar == std::string_view::npos) bar = spec.size();
          std::string_view m = spec.substr(start, bar - start);
          while (!m.empty() && detail::is_blank(m.front())) m.remove_prefix(1);
          while (!m.empty() && detail::is_blank(m.back())) m.remove_suffix(1);
          if (!m.empty() && std::find(r.gpu_models.begin(), r.gpu_models.end(), m) == r.gpu_models.end())
            r.gpu_models.emplace_back(m);
          start = bar + 1;
        }
      }
    }
    t.replica = std::move(r);
    if (qos_map && has(kQos) && f[idx(kQos)].text == "BE") t.resource_type = "spot";

    std::optional<double> created, deleted;
    if (has(kCreate) && !missing(f[idx(kCreate)].text)) {
      created = get_num<double>(f, h.index[kCreate], "creation_time");
      if (*created < 0) row_fail(f[idx(kCreate)].column, field_name(idx(kCreate), "creation_time") + ": must be >= 0");
    }
    if (has(kDelete) && !missing(f[idx(kDelete)].text))
      deleted = get_num<double>(f, h.index[kDelete], "deletion_time");
    t.submit_s = created.value_or(0.0) * cfg.time_scale;
    double duration = 1.0;  // documented default: unknown or non-positive lifetime -> 1 s
    if (created && deleted && *deleted - *created > 0) duration = (*deleted - *created) * cfg.time_scale;
    t.duration_s = duration;
    detail::check_row_task(t);
    tasks.push_back(std::move(t));
    return true;
  });
  if (skipped) *skipped += skip;
  return tasks;
}

}  // namespace sim::io
