// `schedsim report`: the page of a run folder (summary.json, timeseries.csv, tasks.csv, groups.csv).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "sim/io/limits.hpp"
#include "sim/outputs/report_detail.hpp"

namespace sim::report_detail {

namespace {

/// At most `cap` evenly strided indices of [0, n), always keeping the last.
std::vector<std::size_t> strided(std::size_t n, std::size_t cap) {
  std::vector<std::size_t> v;
  if (n == 0) return v;
  const std::size_t stride = (n + cap - 1) / cap;
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, stride)) v.push_back(i);
  if (v.back() != n - 1) v.push_back(n - 1);
  return v;
}

constexpr std::size_t k_max_points = 2000;  // samples per time-series chart
constexpr std::size_t k_cdf_points = 400;   // points per tenant of the wait CDF
constexpr std::size_t k_top_waits = 20;     // rows of the top waiting tasks table
constexpr std::size_t k_top_users = 50;     // rows of the users table

/// tasks.csv's wait split columns (the buckets of summary.json wait_split_s) and their titles.
const std::pair<const char*, const char*> k_wait_split_columns[] = {
    {"wait_quota_s", "quota"},           {"wait_capacity_s", "capacity"},   {"wait_fragmentation_s", "fragmentation"},
    {"wait_cpu_memory_s", "cpu/memory"}, {"wait_node_policy_s", "node policy"}, {"wait_idle_stability_s", "idle stability"},
    {"wait_preemption_s", "preemption"}};

// ------------------------------------------------------------------ run folder

/// Node name -> pool name from scenario.resolved.json (node groups: prefix + index; explicit
/// nodes). Empty when the file is absent.
std::map<std::string, std::string> node_pools(const fs::path& dir) {
  std::map<std::string, std::string> m;
  const fs::path f = dir / "scenario.resolved.json";
  if (!fs::exists(f)) return m;
  const ojson j = read_json(f);
  const ojson* pools = nullptr;
  if (j.is_object() && j.contains("cluster") && j["cluster"].is_object() && j["cluster"].contains("pools"))
    pools = &j["cluster"]["pools"];
  if (!pools || !pools->is_array()) fail_json(f, "cluster.pools", pools, "must be an array of pools");
  for (std::size_t p = 0; p < pools->size(); ++p) {
    const ojson& pool = (*pools)[p];
    const std::string path = fmt::format("cluster.pools[{}]", p);
    const ojson& name = member(f, pool, path, "name");
    if (!name.is_string()) fail_json(f, path + ".name", &name, "must be a string");
    if (pool.contains("node_groups") && pool["node_groups"].is_array())
      for (std::size_t g = 0; g < pool["node_groups"].size(); ++g) {
        const ojson& grp = pool["node_groups"][g];
        const std::string gp = fmt::format("{}.node_groups[{}]", path, g);
        const ojson& prefix = member(f, grp, gp, "prefix");
        const ojson& count = member(f, grp, gp, "count");
        if (!prefix.is_string()) fail_json(f, gp + ".prefix", &prefix, "must be a string");
        // The scenario limits (docs/scenario-format.md "Limits"): a hand-edited file must not
        // make the report expand 10 million nodes per group.
        if (!count.is_number_integer() || count.get<std::int64_t>() < 0 || count.get<std::int64_t>() > io::limits::max_group_count)
          fail_json(f, gp + ".count", &count, fmt::format("must be an integer from 0 to {}", io::limits::max_group_count));
        if (std::int64_t(m.size()) + count.get<std::int64_t>() > io::limits::max_total_nodes)
          fail_json(f, gp + ".count", &count, fmt::format("more than {} nodes in the cluster", io::limits::max_total_nodes));
        for (std::int64_t i = 0; i < count.get<std::int64_t>(); ++i)
          m.emplace(prefix.get<std::string>() + std::to_string(i), name.get<std::string>());
      }
    if (pool.contains("nodes") && pool["nodes"].is_array())
      for (const auto& n : pool["nodes"])
        if (n.is_object() && n.contains("name") && n["name"].is_string()) {
          if (std::int64_t(m.size()) >= io::limits::max_total_nodes)
            fail_json(f, path + ".nodes", &n, fmt::format("more than {} nodes in the cluster", io::limits::max_total_nodes));
          m.emplace(n["name"].get<std::string>(), name.get<std::string>());
        }
  }
  return m;
}

}  // namespace

void run_page(const fs::path& dir, Page& page) {
  const fs::path sf = dir / "summary.json";
  const ojson summary = read_json(sf);
  if (!summary.is_object()) fail_json(sf, "(top level)", &summary, "must be an object (summary.json of schedsim run)");
  page.title = fmt::format("schedsim run: {}", summary.contains("scenario") && summary["scenario"].is_string()
                                                   ? summary["scenario"].get<std::string>()
                                                   : dir.filename().string());
  page.subtitle = fmt::format("Run folder {} (seed {}).", dir.string(), summary.contains("seed") ? summary["seed"].dump() : "?");

  // Summary metrics table: the top-level numbers and strings, in file order.
  {
    std::vector<std::vector<std::string>> rows;
    // Costs carry the prices' currency next to their name (summary.json `currency`, "" without prices).
    const std::string currency =
        summary.contains("currency") && summary["currency"].is_string() ? summary["currency"].get<std::string>() : std::string();
    for (const auto& [k, v] : summary.items())
      if (v.is_number() && k != "seed")  // 4 digits; the seed as written
        rows.push_back({k.rfind("cost_", 0) == 0 && !currency.empty() ? k + " (" + currency + ")" : k, metric_text(k, v.get<double>())});
      else if (v.is_number() || v.is_string() || v.is_boolean()) rows.push_back({k, v.is_string() ? v.get<std::string>() : v.dump()});
    page.blocks.push_back(html_block("Summary metrics", "summary.json: every top-level metric of the run (docs/outputs.md), 4 significant digits; "
                                     "metrics in seconds (names ending in _s) in s, min, h or d.",
                                     table({"metric", "value"}, rows)));
  }

  // Time series: GPU allocation by capacity class, queue length.
  std::vector<double> sample_times;
  bool cpu_only = false;  // no GPU up at any sample (e.g. an SWF trace): no GPU charts
  const fs::path tf = dir / "timeseries.csv";
  if (fs::exists(tf)) {
    const Csv ts = read_csv(tf);
    const std::size_t ct = ts.need("time_s");
    const std::vector<std::string> classes{"reserved", "pay_as_you_go", "spot", "idle"};
    std::size_t cc[4];
    for (int c = 0; c < 4; ++c) cc[c] = ts.need("gpus_" + classes[std::size_t(c)]);
    const std::size_t cup = ts.need("gpus_up"), cq = ts.need("queue_length"), crun = ts.need("running_tasks");
    ojson alloc = ojson::array(), up = ojson::array(), queue = ojson::array(), band = ojson::array(), vcpu = ojson::array(),
          vband = ojson::array();
    cpu_only = !ts.rows.empty();
    for (std::size_t r = 0; r < ts.rows.size(); ++r) cpu_only = cpu_only && *ts.number(r, cup) == 0;
    // Columns appended later (folders written before them lack them): the interval's min..max,
    // the vCPU series.
    const int cgmin = ts.find("gpus_allocated_min"), cgmax = ts.find("gpus_allocated_max"), cvalloc = ts.find("vcpus_allocated"),
              cvup = ts.find("vcpus_up"), cvmin = ts.find("vcpus_allocated_min"), cvmax = ts.find("vcpus_allocated_max");
    std::size_t kept = 0;  // the previous row drawn
    // min and max of column c over the rows since the previous one drawn (every interval they cover).
    auto range_of = [&](std::size_t r, int cmin, int cmax) {
      double lo = *ts.number(r, std::size_t(cmin)), hi = *ts.number(r, std::size_t(cmax));
      for (std::size_t k = kept + 1; k < r; ++k) {
        lo = std::min(lo, *ts.number(k, std::size_t(cmin)));
        hi = std::max(hi, *ts.number(k, std::size_t(cmax)));
      }
      return std::pair<double, double>(std::max(0.0, lo), hi);  // clipped at 0: a count
    };
    for (std::size_t r : strided(ts.rows.size(), k_max_points)) {
      const double t = *ts.number(r, ct);
      sample_times.push_back(t);
      for (std::size_t c = 0; c < 4; ++c)
        alloc.push_back({{"t", t}, {"class", classes[c]}, {"k", int(c)}, {"gpus", *ts.number(r, cc[c])}});
      up.push_back({{"t", t}, {"gpus", *ts.number(r, cup)}});
      queue.push_back({{"t", t}, {"series", "waiting tasks"}, {"n", *ts.number(r, cq)}});
      queue.push_back({{"t", t}, {"series", "running tasks"}, {"n", *ts.number(r, crun)}});
      // The band of sample r covers the interval(s) before it: from the previous drawn sample's time.
      const double t0 = r == 0 ? t : *ts.number(kept, ct);
      if (cgmin >= 0 && cgmax >= 0) {
        const auto [lo, hi] = range_of(r, cgmin, cgmax);
        band.push_back({{"t0", t0}, {"t", t}, {"lo", lo}, {"hi", hi}});
      }
      if (cvalloc >= 0 && cvup >= 0) {
        vcpu.push_back({{"t", t}, {"series", "allocated"}, {"vcpus", *ts.number(r, std::size_t(cvalloc))}});
        vcpu.push_back({{"t", t}, {"series", "up"}, {"vcpus", *ts.number(r, std::size_t(cvup))}});
      }
      if (cvmin >= 0 && cvmax >= 0) {
        const auto [lo, hi] = range_of(r, cvmin, cvmax);
        vband.push_back({{"t0", t0}, {"t", t}, {"lo", lo}, {"hi", hi}});
      }
      kept = r;
    }
    ojson spec = {
        {"width", 720},
        {"height", 260},
        {"layer",
         {{{"data", {{"values", alloc}}},
           {"mark", {{"type", "area"}, {"interpolate", "step-after"}}},
           {"encoding",
            {{"x", field("t", "quantitative", "time (s)")},
             {"y", {{"field", "gpus"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "GPUs"}}},
             {"color", {{"field", "class"}, {"type", "nominal"}, {"title", "capacity class"}, {"sort", classes}}},
             {"order", {{"field", "k"}, {"type", "quantitative"}}}}}},  // stacked in capacity-class order
          {{"data", {{"values", up}}},
           {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"color", "black"}, {"strokeDash", {4, 3}}}},
           {"encoding", {{"x", field("t", "quantitative", "time (s)")}, {"y", field("gpus", "quantitative", "GPUs")}}}}}}};
    if (!band.empty())  // the allocated GPUs' min..max over each interval, over the stack
      spec["layer"].push_back({{"data", {{"values", band}}},
                               {"mark", {{"type", "rect"}, {"color", "#555"}, {"opacity", 0.18}}},
                               {"encoding",
                                {{"x", field("t0", "quantitative", "time (s)")},
                                 {"x2", {{"field", "t"}}},
                                 {"y", field("lo", "quantitative", "GPUs")},
                                 {"y2", {{"field", "hi"}}},
                                 {"tooltip", ojson::array({field("t", "quantitative", "until (s)"), field("lo", "quantitative", "min GPUs"),
                                                           field("hi", "quantitative", "max GPUs")})}}}});
    if (cpu_only) {
      page.blocks.push_back(note("CPU-only cluster", fmt::format("timeseries.csv: no GPU is up at any sample, so there is no GPU "
                                                                 "chart; the vCPU allocation is cpu_allocation_ratio = {} in the "
                                                                 "summary table.",
                                                                 summary.contains("cpu_allocation_ratio") && summary["cpu_allocation_ratio"].is_number()
                                                                     ? num_text(summary["cpu_allocation_ratio"].get<double>())
                                                                     : std::string("(absent)"))));
      if (!vcpu.empty()) {
        ojson vspec = {{"width", 720},
                       {"height", 260},
                       {"layer",
                        {{{"data", {{"values", vcpu}}},
                          {"mark", {{"type", "line"}, {"interpolate", "step-after"}}},
                          {"encoding",
                           {{"x", field("t", "quantitative", "time (s)")},
                            {"y", field("vcpus", "quantitative", "vCPU")},
                            {"color", field("series", "nominal", "")},
                            {"strokeDash", {{"field", "series"}, {"type", "nominal"}, {"legend", nullptr}}}}}}}}};
        if (!vband.empty())
          vspec["layer"].push_back({{"data", {{"values", vband}}},
                                    {"mark", {{"type", "rect"}, {"color", "#555"}, {"opacity", 0.18}}},
                                    {"encoding",
                                     {{"x", field("t0", "quantitative", "time (s)")},
                                      {"x2", {{"field", "t"}}},
                                      {"y", field("lo", "quantitative", "vCPU")},
                                      {"y2", {{"field", "hi"}}}}}});
        page.blocks.push_back(chart("vCPU allocation",
                                    "timeseries.csv: vCPU allocated and vCPU of up nodes (dashed); the grey band is the allocated "
                                    "vCPU's min..max over each interval between samples.",
                                    std::move(vspec)));
      }
    } else {
      page.blocks.push_back(chart("GPU allocation by capacity class",
                                  std::string("timeseries.csv: GPUs allocated per capacity class (stacked) and GPUs of up nodes (dashed "
                                              "line)") +
                                      (band.empty() ? "." : "; the grey band is the allocated GPUs' min..max over each interval "
                                                            "between samples (the stack shows the value at each sample)."),
                                  std::move(spec)));
    }
    ojson qspec = {{"width", 720},
                   {"height", 220},
                   {"data", {{"values", queue}}},
                   {"mark", {{"type", "line"}, {"interpolate", "step-after"}}},
                   {"encoding",
                    {{"x", field("t", "quantitative", "time (s)")},
                     {"y", field("n", "quantitative", "tasks")},
                     {"color", field("series", "nominal", "")}}}};
    page.blocks.push_back(chart("Queue length", "timeseries.csv: waiting tasks (queue length) and tasks holding resources.",
                                std::move(qspec)));
  } else {
    page.blocks.push_back(note("GPU allocation by capacity class", "No timeseries.csv in this folder (run with --outputs ...,timeseries)."));
  }

  // tasks.csv: GPU allocation by pool, wait CDF per tenant, top waiting tasks.
  const fs::path kf = dir / "tasks.csv";
  if (fs::exists(kf)) {
    const Csv tasks = read_csv(kf);
    const std::size_t c_task = tasks.need("task"), c_start = tasks.need("start_s"), c_end = tasks.need("end_s"),
                      c_nodes = tasks.need("nodes"), c_gpus = tasks.need("gpus"), c_tenant = tasks.need("tenant"),
                      c_pool = tasks.need("pool"), c_wait = tasks.need("task_wait_s"), c_state = tasks.need("state"),
                      c_reason = tasks.need("reason"), c_attempt = tasks.need("attempt");
    const int c_per = tasks.find("gpu_milli_per_replica"), c_end_reason = tasks.find("end_reason");
    const auto pools = node_pools(dir);
    // GPU allocation by pool: each replica's GPUs on its node's pool.
    struct Step { double t; std::string pool; double d; };
    std::vector<Step> steps;
    double horizon = 0;
    for (std::size_t r = 0; r < tasks.rows.size(); ++r) {
      const auto start = tasks.number(r, c_start, true);
      if (!start) continue;
      const auto end = tasks.number(r, c_end, true);
      const double e = end ? *end : *start;
      horizon = std::max(horizon, e);
      const double g = tasks.number(r, c_gpus, true).value_or(0);
      std::vector<std::string> nodes;
      std::string_view ns = tasks.rows[r][c_nodes];
      while (!ns.empty()) {
        const auto semi = ns.find(';');
        nodes.emplace_back(ns.substr(0, semi));
        if (semi == std::string_view::npos) break;
        ns.remove_prefix(semi + 1);
      }
      std::vector<double> share(nodes.size(), nodes.empty() ? 0 : g / double(nodes.size()));
      if (c_per >= 0 && nodes.size() > 1) {
        const double w = tasks.number(r, std::size_t(c_per), true).value_or(0) / 1000.0;
        const double head = g - w * double(nodes.size() - 1);
        if (head >= 0) {
          share.assign(nodes.size(), w);
          share[0] = head;
        }
      }
      if (nodes.empty()) nodes.push_back("");
      if (share.empty()) share.push_back(g);
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        auto it = pools.find(nodes[k]);
        std::string pool = it != pools.end() ? it->second : tasks.rows[r][c_pool];
        if (pool.empty()) pool = "(no pool)";
        steps.push_back({*start, pool, share[k]});
        steps.push_back({e, pool, -share[k]});
      }
    }
    if (sample_times.empty()) {
      for (int i = 0; i <= 200; ++i) sample_times.push_back(horizon * i / 200.0);
    }
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
      if (a.t != b.t) return a.t < b.t;
      if (a.pool != b.pool) return a.pool < b.pool;
      return a.d < b.d;
    });
    std::map<std::string, double> now;
    for (const auto& s : steps) now.emplace(s.pool, 0.0);
    ojson by_pool = ojson::array();
    std::size_t si = 0;
    for (double t : sample_times) {
      while (si < steps.size() && steps[si].t <= t) {
        now[steps[si].pool] += steps[si].d;
        ++si;
      }
      for (const auto& [pool, g] : now) by_pool.push_back({{"t", t}, {"pool", pool}, {"gpus", std::round(g * 1000) / 1000}});
    }
    ojson pspec = {{"width", 720},
                   {"height", 260},
                   {"data", {{"values", by_pool}}},
                   {"mark", {{"type", "area"}, {"interpolate", "step-after"}}},
                   {"encoding",
                    {{"x", field("t", "quantitative", "time (s)")},
                     {"y", {{"field", "gpus"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "GPUs"}}},
                     {"color", field("pool", "nominal", "pool")}}}};
    if (!cpu_only)
      page.blocks.push_back(chart("GPU allocation by pool",
                                "tasks.csv attempts: each replica's GPUs counted on the pool of its node (scenario.resolved.json; "
                                "else the task's pool), sampled at the timeseries.csv times.",
                                std::move(pspec)));

    // Wait CDF per tenant (team), from the task-level task_wait_s (last attempt row of each task).
    std::map<std::string, std::vector<double>> waits;
    struct Waiter { double wait; std::size_t row; };
    std::vector<Waiter> waiters;
    for (std::size_t r = 0; r < tasks.rows.size(); ++r) {
      const auto w = tasks.number(r, c_wait, true);
      if (!w) continue;
      const std::string& tenant = tasks.rows[r][c_tenant];
      waits[tenant.empty() ? "(no tenant)" : tenant].push_back(*w);
      waiters.push_back({*w, r});
    }
    ojson cdf = ojson::array();
    // Ticks of the log axis: 0, then the powers of 10 up to the longest wait.
    double longest = 0;
    for (const auto& w : waiters) longest = std::max(longest, w.wait);
    ojson ticks = ojson::array({0});
    for (double p = 1; ticks.size() < 2 || p / 10 < longest; p *= 10) ticks.push_back(p);
    for (auto& [tenant, v] : waits) {
      std::sort(v.begin(), v.end());
      const std::size_t n = v.size();
      for (std::size_t k : strided(n, k_cdf_points))
        cdf.push_back({{"tenant", tenant}, {"wait_s", v[k]}, {"fraction", double(k + 1) / double(n)}});
    }
    ojson cspec = {{"width", 720},
                   {"height", 260},
                   {"data", {{"values", cdf}}},
                   {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"point", false}}},
                   {"encoding",
                    {{"x", {{"field", "wait_s"}, {"type", "quantitative"}, {"title", "queueing delay (s, log scale; 0 at the left)"},
                            {"scale", {{"type", "symlog"}, {"domain", ojson::array({0, ticks.back()})}}},
                            {"axis", {{"values", ticks}, {"labelExpr", "format(datum.value, ',')"}}}}},
                     {"y", {{"field", "fraction"}, {"type", "quantitative"}, {"title", "fraction of tasks"}, {"scale", {{"domain", {0, 1}}}}}},
                     {"color", field("tenant", "nominal", "tenant (team)")}}}};
    page.blocks.push_back(chart("Queueing delay CDF per tenant",
                                "tasks.csv task_wait_s (one value per task, censored for unfinished tasks): the fraction of a "
                                "tenant's tasks that waited at most x seconds; x on a symmetric log scale (linear near 0, so "
                                "tasks that did not wait stay on the chart).",
                                std::move(cspec)));

    std::stable_sort(waiters.begin(), waiters.end(), [&](const Waiter& a, const Waiter& b) {
      if (a.wait != b.wait) return a.wait > b.wait;
      return tasks.rows[a.row][c_task] < tasks.rows[b.row][c_task];
    });
    const std::size_t shown = std::min(waiters.size(), k_top_waits);
    // The wait split per task (tasks.csv wait_*_s, on the task's last row): a column per bucket
    // that held one of the shown tasks; folders written before these columns show `reason` only.
    std::vector<std::string> head{"task", "tenant", "wait", "attempts", "last state", "end reason"};
    std::vector<std::size_t> split_cols;
    for (const auto& [col, title] : k_wait_split_columns) {
      const int c = tasks.find(col);
      if (c < 0) continue;
      bool any = false;
      for (std::size_t i = 0; i < shown; ++i) any = any || tasks.number(waiters[i].row, std::size_t(c), true).value_or(0) > 0;
      if (!any) continue;
      split_cols.push_back(std::size_t(c));
      head.push_back(title);
    }
    const bool has_split = tasks.find(k_wait_split_columns[0].first) >= 0;
    bool any_reason = false;
    for (std::size_t i = 0; i < shown; ++i) any_reason = any_reason || !tasks.rows[waiters[i].row][c_reason].empty();
    if (any_reason || !has_split) head.push_back("reason");
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& row = tasks.rows[waiters[i].row];
      std::vector<std::string> cells{row[c_task], row[c_tenant], duration_text(waiters[i].wait), row[c_attempt], row[c_state],
                                     c_end_reason >= 0 ? row[std::size_t(c_end_reason)] : ""};
      for (std::size_t c : split_cols) cells.push_back(cell_text(row[c], true));
      if (any_reason || !has_split) cells.push_back(row[c_reason]);
      rows.push_back(std::move(cells));
    }
    page.blocks.push_back(html_block(
        "Top waiting tasks",
        fmt::format("The {} tasks with the longest queueing delay. {}reason = tasks.csv `reason` of the task's last attempt (for a "
                    "task still queued: why it waits).",
                    rows.size(),
                    has_split ? "Why they waited: the wait split per task (tasks.csv wait_*_s: the queued time by what held it, "
                                "summing to the wait; a bucket is shown when it held one of these tasks); "
                              : ""),
        table(head, rows)));
  } else {
    page.blocks.push_back(note("GPU allocation by pool", "No tasks.csv in this folder (run with --outputs ...,tasks)."));
  }

  // Wait split (summary.json wait_split_s).
  if (summary.contains("wait_split_s")) {
    const ojson& ws = summary["wait_split_s"];
    if (!ws.is_object()) fail_json(sf, "wait_split_s", &ws, "must be an object of seconds per bucket");
    ojson vals = ojson::array();
    std::vector<std::string> order;
    for (const auto& [bucket, v] : ws.items()) {
      vals.push_back({{"bucket", bucket}, {"seconds", *jnum(sf, v, "wait_split_s." + bucket)}});
      order.push_back(bucket);
    }
    ojson spec = {{"width", 720},
                  {"data", {{"values", vals}}},
                  {"mark", "bar"},
                  {"encoding",
                   {{"y", {{"field", "bucket"}, {"type", "nominal"}, {"sort", order}, {"title", "wait bucket"}}},
                    {"x", field("seconds", "quantitative", "seconds (summed over tasks)")},
                    {"color", {{"field", "bucket"}, {"type", "nominal"}, {"legend", nullptr}}}}}};
    page.blocks.push_back(chart("Wait split",
                                "summary.json wait_split_s: queued time summed over tasks by what held it (the buckets sum to "
                                "the total queued time); lost_to_preemption_or_failure is lost work, not queued time.",
                                std::move(spec)));
  }

  // groups.csv: per-tenant waits.
  const fs::path gf = dir / "groups.csv";
  if (fs::exists(gf)) {
    const Csv g = read_csv(gf);
    const std::size_t c_by = g.need("group_by"), c_group = g.need("group"), c_mean = g.need("mean_wait_s"),
                      c_p95 = g.need("p95_wait_s"), c_tasks = g.need("tasks");
    ojson vals = ojson::array();
    std::vector<std::vector<std::string>> rows;
    for (std::size_t r = 0; r < g.rows.size(); ++r) {
      if (g.rows[r][c_by] != "tenant") continue;
      vals.push_back({{"tenant", g.rows[r][c_group]}, {"statistic", "mean"}, {"seconds", *g.number(r, c_mean)}});
      vals.push_back({{"tenant", g.rows[r][c_group]}, {"statistic", "p95"}, {"seconds", *g.number(r, c_p95)}});
      rows.push_back({g.rows[r][c_group], cell_text(g.rows[r][c_tasks]), cell_text(g.rows[r][c_mean], true), cell_text(g.rows[r][c_p95], true)});
    }
    ojson spec = {{"width", 720},
                  {"data", {{"values", vals}}},
                  {"mark", "bar"},
                  {"encoding",
                   {{"y", field("tenant", "nominal", "tenant (team)")},
                    {"yOffset", {{"field", "statistic"}, {"type", "nominal"}}},
                    {"x", field("seconds", "quantitative", "queueing delay (s)")},
                    {"color", field("statistic", "nominal", "")}}}};
    page.blocks.push_back(chart("Queueing delay per tenant", "groups.csv (group_by = tenant): mean and p95 queueing delay.",
                                std::move(spec)));
    page.blocks.push_back(html_block("Tenants", "groups.csv rows of group_by = tenant.",
                                     table({"tenant", "tasks", "mean wait", "p95 wait"}, rows)));
    // Users (traces name them; scenarios may): the users with the longest mean wait.
    const int c_gpu_s = g.find("gpu_seconds");
    struct UserRow { double mean; std::size_t r; };
    std::vector<UserRow> users;
    bool named = false;
    for (std::size_t r = 0; r < g.rows.size(); ++r)
      if (g.rows[r][c_by] == "user") {
        users.push_back({*g.number(r, c_mean), r});
        named = named || !g.rows[r][c_group].empty();
      }
    if (named) {
      std::stable_sort(users.begin(), users.end(), [&](const UserRow& a, const UserRow& b) {
        if (a.mean != b.mean) return a.mean > b.mean;
        return g.rows[a.r][c_group] < g.rows[b.r][c_group];
      });
      std::vector<std::vector<std::string>> urows;
      for (std::size_t i = 0; i < std::min(users.size(), k_top_users); ++i) {
        const std::size_t r = users[i].r;
        urows.push_back({g.rows[r][c_group], cell_text(g.rows[r][c_tasks]), cell_text(g.rows[r][c_mean], true),
                         cell_text(g.rows[r][c_p95], true),
                         c_gpu_s >= 0 ? num_text(*g.number(r, std::size_t(c_gpu_s)) / 3600.0) : std::string()});
      }
      page.blocks.push_back(html_block(
          "Users",
          fmt::format("groups.csv rows of group_by = user: {} of {} users, longest mean wait first; GPU·h = gpu_seconds / 3600 "
                      "(GPUs held at placement size).",
                      urows.size(), users.size()),
          table({"user", "tasks", "mean wait", "p95 wait", "GPU·h"}, urows)));
    }
  }
}

}  // namespace sim::report_detail
