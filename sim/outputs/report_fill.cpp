// `schedsim report`: the page of a `schedsim fill` folder (docs/fill.md): the FGD paper's figure,
// allocated and fragmented GPUs (% of cluster GPUs) against the GPUs arrived, one line per policy
// (mean over seeds) with the min..max band over seeds, and the fill_summary.csv table.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/outputs/report_detail.hpp"

namespace sim::report_detail {

namespace {

/// The values of one (policy, arrived %) over seeds.
struct FillSeedStats {
  double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  int n = 0;
  void add(double v) {
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ++n;
  }
};

/// One chart: `measure` of the fill data against arrived %, a line per policy and its band.
ojson fill_chart_spec(const ojson& values, const std::vector<std::string>& policies, const std::string& ytitle) {
  const std::string xtitle = "GPUs arrived (% of cluster GPUs)";
  ojson color = {{"field", "policy"}, {"type", "nominal"}, {"title", "policy"}, {"sort", policies}};
  ojson layer = ojson::array();
  layer.push_back({{"mark", {{"type", "area"}, {"opacity", 0.2}}},
                   {"encoding",
                    {{"x", field("arrived", "quantitative", xtitle)},
                     {"y", field("lo", "quantitative", ytitle)},
                     {"y2", {{"field", "hi"}}},
                     {"color", color}}}});
  layer.push_back({{"mark", {{"type", "line"}}},
                   {"encoding",
                    {{"x", field("arrived", "quantitative", xtitle)},
                     {"y", field("mean", "quantitative", ytitle)},
                     {"color", color},
                     {"tooltip",
                      {field("policy", "nominal", "policy"), field("arrived", "quantitative", "arrived %"),
                       field("mean", "quantitative", "mean over seeds"), field("lo", "quantitative", "min over seeds"),
                       field("hi", "quantitative", "max over seeds"), field("seeds", "quantitative", "seeds")}}}}});
  return {{"width", 640}, {"height", 300}, {"data", {{"values", values}}}, {"layer", layer}};
}

}  // namespace

void fill_page(const fs::path& dir, Page& page) {
  const fs::path cf = dir / "fill_curves.csv";
  const bool sweep = fs::exists(cf);
  const Csv c = read_csv(sweep ? cf : dir / "fill.csv");
  const int c_policy = sweep ? int(c.need("policy")) : -1;
  if (sweep) c.need("seed");
  const std::size_t c_arr = c.need("arrived_pct"), c_alloc = c.need("allocated_gpu_pct_mean"), c_frag = c.need("frag_gpu_pct_mean");
  std::vector<std::string> policies;  // first-seen order (the --policies order)
  std::map<std::string, std::map<double, std::array<FillSeedStats, 2>>> acc;
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    const std::string policy = sweep ? c.rows[r][std::size_t(c_policy)] : "fill.csv";
    if (!acc.count(policy)) policies.push_back(policy);
    auto& cell = acc[policy][*c.number(r, c_arr)];
    cell[0].add(*c.number(r, c_alloc));
    cell[1].add(*c.number(r, c_frag));
  }
  ojson values[2] = {ojson::array(), ojson::array()};
  int max_seeds = 0;
  for (const auto& p : policies)
    for (const auto& [arrived, st] : acc[p])
      for (int m = 0; m < 2; ++m) {
        values[m].push_back({{"policy", p}, {"arrived", arrived}, {"mean", st[m].sum / st[m].n}, {"lo", st[m].lo}, {"hi", st[m].hi},
                             {"seeds", st[m].n}});
        max_seeds = std::max(max_seeds, st[m].n);
      }
  page.title = "schedsim fill: " + dir.filename().string();
  page.subtitle = fmt::format("Folder {}: {} polic{} over {} seed{}; GPU allocation and fragmented GPUs as the pods arrive (docs/fill.md).",
                              dir.string(), policies.size(), policies.size() == 1 ? "y" : "ies", max_seeds, max_seeds == 1 ? "" : "s");
  const std::string src = sweep ? "fill_curves.csv" : "fill.csv";
  const std::string band = " Line: the mean over seeds; band: the lowest to the highest seed (min..max, not a confidence interval).";
  page.blocks.push_back(chart("GPU allocation against GPUs arrived",
                              src + " allocated_gpu_pct_mean (the mean over the states whose arrived GPUs round to x %) per policy." + band,
                              fill_chart_spec(values[0], policies, "GPUs allocated (% of cluster GPUs)")));
  page.blocks.push_back(chart("Fragmented GPUs against GPUs arrived",
                              src + " frag_gpu_pct_mean per policy (FGD's fragmentation measure, docs/fill.md)." + band,
                              fill_chart_spec(values[1], policies, "fragmented GPUs (% of cluster GPUs)")));
  const fs::path sf = dir / "fill_summary.csv";
  if (fs::exists(sf)) {
    const Csv s = read_csv(sf);
    const std::vector<std::string> cols{"runs", "alloc_window_mean", "alloc_window_std", "frag_window_mean", "frag_window_std"};
    std::vector<std::string> head{"policy"};
    std::vector<std::size_t> idx{s.need("policy")};
    for (const auto& col : cols)
      if (const int i = s.find(col); i >= 0 || col != "frag_window_std") {  // frag_window_std: absent in older folders
        head.push_back(col);
        idx.push_back(i >= 0 ? std::size_t(i) : s.need(col));
      }
    std::vector<std::vector<std::string>> t;
    for (std::size_t r = 0; r < s.rows.size(); ++r) {
      std::vector<std::string> row{s.rows[r][idx[0]]};
      for (std::size_t k = 1; k < idx.size(); ++k) row.push_back(num_text(s.number(r, idx[k])));
      t.push_back(std::move(row));
    }
    page.blocks.push_back(html_block("At the target",
                                     "fill_summary.csv: per policy, the mean and sample standard deviation over seeds of the GPU "
                                     "allocation and the fragmented GPUs (% of cluster GPUs) at the target row (window means).",
                                     table(head, t)));
  }
}

}  // namespace sim::report_detail
