// `schedsim report DIR` (sim/report.hpp, docs/report.md): reads a run / seeds / compare / sweep /
// plan folder, checks its files, and writes one self-contained HTML page with Vega-Lite charts
// (rendered by the inlined vega, vega-lite and vega-embed runtimes, svg renderer) and tables.
// Every chart's data is embedded in its spec under plain field names (t, gpus, mean, lo, hi,
// ...): PATH columns such as `cluster.pools[a].count` would otherwise be read as nested fields.
#include "sim/outputs/report.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/io/diagnostics.hpp"
#include "sim/io/json_file.hpp"
#include "sim/io/limits.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/io/version.hpp"

namespace sim {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

// ------------------------------------------------------------------ reading files

std::string esc(std::string_view s) { return io::escape_for_diagnostic(s); }

[[noreturn]] void fail(const fs::path& file, const std::string& problem) {
  throw ReportInputError(esc(file.string()) + ": " + problem);
}

/// The whole file `p` through the shared reader (io::read_text_file): a regular file of at most
/// `max_bytes`; a missing, special or oversized file is the input's fault (ReportInputError,
/// exit 2), a read error the environment's (OutputError, exit 1).
std::string read_text(const fs::path& p, std::uint64_t max_bytes = io::limits::max_trace_bytes) {
  std::vector<io::Diagnostic> d;
  io::JsonReadOptions o;
  o.max_bytes = max_bytes;
  io::TextRead r = io::read_text_file(p.string(), "an output file", d, o);
  if (r.text) return std::move(*r.text);
  const std::string what = d.empty() ? esc(p.string()) + ": cannot be read" : d.front().str();
  if (r.environment) throw OutputError(what);
  throw ReportInputError(what);
}

std::optional<double> parse_double(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

/// A CSV file (RFC 4180: quoted fields with "" escapes, LF or CRLF) with a header row.
struct Csv {
  fs::path file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> lines;  // 1-based line of each row

  int find(std::string_view name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return int(i);
    return -1;
  }
  std::size_t need(std::string_view name) const {
    const int c = find(name);
    if (c < 0) fail(file, fmt::format("missing column `{}` (header: {})", esc(name), esc(join_header())));
    return std::size_t(c);
  }
  std::string join_header() const {
    std::string h;
    for (const auto& c : header) h += (h.empty() ? "" : ",") + c;
    return h;
  }
  /// The number in row r, column c; an empty cell is nullopt when `optional`, else an error.
  std::optional<double> number(std::size_t r, std::size_t c, bool optional = false) const {
    const std::string& v = rows[r][c];
    if (v.empty() && optional) return std::nullopt;
    auto x = parse_double(v);
    if (!x) fail(file, fmt::format("line {}, column `{}`: {}: not a number", lines[r], esc(header[c]), esc(v.empty() ? "\"\"" : v)));
    return x;
  }
};

Csv parse_csv(const fs::path& file, const std::string& s) {
  Csv csv;
  csv.file = file;
  std::vector<std::vector<std::string>> recs;
  std::vector<std::size_t> rec_lines;
  std::size_t i = 0, line = 1;
  const std::size_t n = s.size();
  while (i < n) {
    std::vector<std::string> rec;
    const std::size_t start_line = line;
    while (true) {
      std::string f;
      if (i < n && s[i] == '"') {
        ++i;
        while (true) {
          if (i >= n) fail(file, fmt::format("line {}: a quoted field is not closed", line));
          const char c = s[i++];
          if (c == '"') {
            if (i < n && s[i] == '"') {
              f += '"';
              ++i;
            } else {
              break;
            }
          } else {
            if (c == '\n') ++line;
            f += c;
          }
        }
        if (i < n && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
          fail(file, fmt::format("line {}: unexpected character after a closing quote", line));
      } else {
        while (i < n && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
          if (s[i] == '"') fail(file, fmt::format("line {}: a quote inside an unquoted field", line));
          f += s[i++];
        }
      }
      rec.push_back(std::move(f));
      if (i < n && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < n && s[i] == '\r') ++i;
      if (i < n && s[i] == '\n') {
        ++i;
        ++line;
      }
      break;
    }
    if (rec.size() == 1 && rec[0].empty()) continue;  // blank line
    recs.push_back(std::move(rec));
    rec_lines.push_back(start_line);
  }
  if (recs.empty()) fail(file, "empty file: expected a CSV header");
  csv.header = std::move(recs[0]);
  for (std::size_t r = 1; r < recs.size(); ++r) {
    if (recs[r].size() != csv.header.size())
      fail(file, fmt::format("line {}: {} fields, expected {} (header: {})", rec_lines[r], recs[r].size(), csv.header.size(),
                             esc(csv.join_header())));
    csv.rows.push_back(std::move(recs[r]));
    csv.lines.push_back(rec_lines[r]);
  }
  return csv;
}

Csv read_csv(const fs::path& file) { return parse_csv(file, read_text(file)); }

ojson read_json(const fs::path& file) {
  const std::string text = read_text(file, io::limits::max_scenario_bytes);
  std::vector<io::Diagnostic> d;
  if (auto j = io::parse_json_text<ojson>(text, file.string(), d)) return std::move(*j);
  throw ReportInputError(d.empty() ? esc(file.string()) + ": malformed JSON" : d.front().str());
}

std::string short_dump(const ojson& v) {
  std::string d = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (d.size() > 80) d = d.substr(0, 77) + "...";
  return d;
}

[[noreturn]] void fail_json(const fs::path& file, const std::string& path, const ojson* v, const std::string& rule) {
  throw ReportInputError(
      fmt::format("{}: {}: {}: {}", esc(file.string()), esc(path), esc(v ? short_dump(*v) : io::missing_value), rule));
}

const ojson& member(const fs::path& file, const ojson& obj, const std::string& path, const char* key) {
  if (!obj.contains(key)) fail_json(file, path.empty() ? key : path + "." + key, nullptr, "required key is missing");
  return obj.at(key);
}

/// A number, or nullopt for null when `nullable`.
std::optional<double> jnum(const fs::path& file, const ojson& v, const std::string& path, bool nullable = false) {
  if (v.is_null() && nullable) return std::nullopt;
  if (!v.is_number()) fail_json(file, path, &v, nullable ? "must be a number or null" : "must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail_json(file, path, &v, "must be finite");
  return x;
}

/// `{"METRIC": {keys...}, ...}` (seeds_summary.json, compare.json, plan points' metrics).
struct MetricRow {
  std::string metric;
  std::map<std::string, std::optional<double>> v;
};
std::vector<MetricRow> metric_object(const fs::path& file, const ojson& obj, const std::string& path,
                                     const std::vector<const char*>& keys) {
  if (!obj.is_object()) fail_json(file, path.empty() ? "(top level)" : path, &obj, "must be an object of metrics");
  std::vector<MetricRow> out;
  for (const auto& [metric, m] : obj.items()) {
    const std::string p = path.empty() ? metric : path + "." + metric;
    if (!m.is_object()) fail_json(file, p, &m, fmt::format("must be an object with {}", fmt::join(keys, ", ")));
    MetricRow row{metric, {}};
    for (const char* k : keys) row.v[k] = jnum(file, member(file, m, p, k), p + "." + k, true);
    out.push_back(std::move(row));
  }
  return out;
}

// ------------------------------------------------------------------ page model

struct Block {
  std::string title, text;
  bool chart = false;
  ojson spec;          // chart: the Vega-Lite spec
  std::string html;    // table or note
};

struct Page {
  std::string title, subtitle;
  std::vector<Block> blocks;
};

std::string html_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num_text(std::optional<double> x) {
  if (!x) return "";
  return fmt::format("{}", *x);
}

/// An HTML table; `numeric[i]` right-aligns column i.
std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::string t = "<table><thead><tr>";
  for (const auto& h : head) t += "<th>" + html_escape(h) + "</th>";
  t += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    t += "<tr>";
    for (const auto& c : r) t += (parse_double(c) ? "<td class=\"num\">" : "<td>") + html_escape(c) + "</td>";
    t += "</tr>\n";
  }
  return t + "</tbody></table>";
}

Block chart(std::string title, std::string text, ojson spec) {
  Block b;
  b.title = std::move(title);
  b.text = std::move(text);
  b.chart = true;
  b.spec = std::move(spec);
  return b;
}
Block html_block(std::string title, std::string text, std::string html) {
  Block b;
  b.title = std::move(title);
  b.text = std::move(text);
  b.html = std::move(html);
  return b;
}
Block note(std::string title, std::string text) { return html_block(std::move(title), std::move(text), ""); }

ojson field(const char* name, const char* type, const std::string& title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

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
constexpr std::size_t k_max_table_rows = 500;

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
    for (const auto& [k, v] : summary.items())
      if (v.is_number() || v.is_string() || v.is_boolean()) rows.push_back({k, v.is_string() ? v.get<std::string>() : v.dump()});
    page.blocks.push_back(html_block("Summary metrics", "summary.json: every top-level metric of the run (docs/outputs.md).",
                                     table({"metric", "value"}, rows)));
  }

  // Time series: GPU allocation by capacity class, queue length.
  std::vector<double> sample_times;
  const fs::path tf = dir / "timeseries.csv";
  if (fs::exists(tf)) {
    const Csv ts = read_csv(tf);
    const std::size_t ct = ts.need("time_s");
    const std::vector<std::string> classes{"reserved", "pay_as_you_go", "spot", "idle"};
    std::size_t cc[4];
    for (int c = 0; c < 4; ++c) cc[c] = ts.need("gpus_" + classes[std::size_t(c)]);
    const std::size_t cup = ts.need("gpus_up"), cq = ts.need("queue_length"), crun = ts.need("running_tasks");
    ojson alloc = ojson::array(), up = ojson::array(), queue = ojson::array();
    for (std::size_t r : strided(ts.rows.size(), k_max_points)) {
      const double t = *ts.number(r, ct);
      sample_times.push_back(t);
      for (std::size_t c = 0; c < 4; ++c) alloc.push_back({{"t", t}, {"class", classes[c]}, {"gpus", *ts.number(r, cc[c])}});
      up.push_back({{"t", t}, {"gpus", *ts.number(r, cup)}});
      queue.push_back({{"t", t}, {"series", "waiting tasks"}, {"n", *ts.number(r, cq)}});
      queue.push_back({{"t", t}, {"series", "running tasks"}, {"n", *ts.number(r, crun)}});
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
             {"order", {{"field", "class"}, {"type", "nominal"}}}}}},
          {{"data", {{"values", up}}},
           {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"color", "black"}, {"strokeDash", {4, 3}}}},
           {"encoding", {{"x", field("t", "quantitative", "time (s)")}, {"y", field("gpus", "quantitative", "GPUs")}}}}}}};
    page.blocks.push_back(chart("GPU allocation by capacity class",
                                "timeseries.csv: GPUs allocated per capacity class (stacked) and GPUs of up nodes (dashed line).",
                                std::move(spec)));
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
                    {{"x", field("wait_s", "quantitative", "queueing delay (s)")},
                     {"y", {{"field", "fraction"}, {"type", "quantitative"}, {"title", "fraction of tasks"}, {"scale", {{"domain", {0, 1}}}}}},
                     {"color", field("tenant", "nominal", "tenant (team)")}}}};
    page.blocks.push_back(chart("Queueing delay CDF per tenant",
                                "tasks.csv task_wait_s (one value per task, censored for unfinished tasks): the fraction of a "
                                "tenant's tasks that waited at most x seconds.",
                                std::move(cspec)));

    std::stable_sort(waiters.begin(), waiters.end(), [&](const Waiter& a, const Waiter& b) {
      if (a.wait != b.wait) return a.wait > b.wait;
      return tasks.rows[a.row][c_task] < tasks.rows[b.row][c_task];
    });
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < std::min(waiters.size(), k_top_waits); ++i) {
      const auto& row = tasks.rows[waiters[i].row];
      rows.push_back({row[c_task], row[c_tenant], num_text(waiters[i].wait), row[c_attempt], row[c_state],
                      c_end_reason >= 0 ? row[std::size_t(c_end_reason)] : "", row[c_reason]});
    }
    page.blocks.push_back(html_block("Top waiting tasks",
                                     fmt::format("The {} tasks with the longest queueing delay; reason = tasks.csv `reason` of "
                                                 "the task's last attempt (for a task still queued: why it waits).",
                                                 rows.size()),
                                     table({"task", "tenant", "wait (s)", "attempts", "last state", "end reason", "reason"}, rows)));
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
      rows.push_back({g.rows[r][c_group], g.rows[r][c_tasks], g.rows[r][c_mean], g.rows[r][c_p95]});
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
                                     table({"tenant", "tasks", "mean wait (s)", "p95 wait (s)"}, rows)));
  }
}

// ------------------------------------------------------------------ seeds, compare

/// A faceted point + error-bar chart: one row per metric, independent x scales.
ojson errorbar_facet(const ojson& values, const char* x, const char* lo, const char* hi, const std::string& xtitle,
                     const std::string& ytitle_field, bool zero_rule) {
  ojson layer = ojson::array();
  layer.push_back({{"mark", {{"type", "rule"}}},
                   {"encoding", {{"x", field(lo, "quantitative", xtitle)}, {"x2", {{"field", hi}}}, {"y", field("label", "nominal", ytitle_field)}}}});
  layer.push_back({{"mark", {{"type", "point"}, {"filled", true}}},
                   {"encoding", {{"x", field(x, "quantitative", xtitle)}, {"y", field("label", "nominal", ytitle_field)}}}});
  if (zero_rule) layer.push_back({{"mark", {{"type", "rule"}, {"color", "grey"}, {"strokeDash", {3, 3}}}}, {"encoding", {{"x", {{"datum", 0}}}}}});
  return {{"data", {{"values", values}}},
          {"facet", {{"row", {{"field", "metric"}, {"type", "nominal"}, {"title", nullptr}, {"header", {{"labelAngle", 0}, {"labelAlign", "left"}}}}}}},
          {"spec", {{"width", 480}, {"layer", layer}}},
          {"resolve", {{"scale", {{"x", "independent"}, {"y", "independent"}}}}}};
}

void seeds_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "seeds_summary.json";
  const auto rows = metric_object(f, read_json(f), "", {"mean", "std", "ci95_low", "ci95_high", "n"});
  page.title = "schedsim run --seeds: " + dir.filename().string();
  page.subtitle = fmt::format("Folder {}: {} metrics over seeds (mean, sample standard deviation, 95 % confidence interval).",
                              dir.string(), rows.size());
  std::vector<std::vector<std::string>> t;
  ojson vals = ojson::array();
  for (const auto& r : rows) {
    t.push_back({r.metric, num_text(r.v.at("mean")), num_text(r.v.at("std")), num_text(r.v.at("ci95_low")),
                 num_text(r.v.at("ci95_high")), num_text(r.v.at("n"))});
    if (r.v.at("mean"))
      vals.push_back({{"metric", r.metric},
                      {"label", "mean"},
                      {"mean", *r.v.at("mean")},
                      {"lo", r.v.at("ci95_low").value_or(*r.v.at("mean"))},
                      {"hi", r.v.at("ci95_high").value_or(*r.v.at("mean"))}});
  }
  page.blocks.push_back(html_block("Metrics with 95 % confidence intervals", "seeds_summary.json.",
                                   table({"metric", "mean", "std", "ci95_low", "ci95_high", "n"}, t)));
  page.blocks.push_back(chart("Mean and 95 % CI per metric", "seeds_summary.json: the mean (point) and its 95 % confidence interval (bar).",
                              errorbar_facet(vals, "mean", "lo", "hi", "value", "", false)));
  const fs::path sf = dir / "seeds.csv";
  if (fs::exists(sf)) {
    const Csv s = read_csv(sf);
    const std::size_t cs = s.need("seed");
    ojson pts = ojson::array();
    for (std::size_t r = 0; r < s.rows.size(); ++r)
      for (std::size_t c = 0; c < s.header.size(); ++c)
        if (c != cs)
          if (auto v = s.number(r, c, true)) pts.push_back({{"metric", s.header[c]}, {"seed", s.rows[r][cs]}, {"value", *v}});
    ojson spec = {{"data", {{"values", pts}}},
                  {"facet", {{"row", {{"field", "metric"}, {"type", "nominal"}, {"title", nullptr}, {"header", {{"labelAngle", 0}, {"labelAlign", "left"}}}}}}},
                  {"spec", {{"width", 480}, {"height", 20}, {"mark", {{"type", "tick"}}},
                            {"encoding", {{"x", field("value", "quantitative", "value")}, {"tooltip", {field("seed", "nominal", "seed"), field("value", "quantitative", "value")}}}}}},
                  {"resolve", {{"scale", {{"x", "independent"}}}}}};
    page.blocks.push_back(chart("Per-seed values", "seeds.csv: one tick per seed and metric.", std::move(spec)));
  }
}

void compare_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "compare.json";
  const auto rows = metric_object(f, read_json(f), "", {"a", "b", "diff", "ci95_low", "ci95_high"});
  page.title = "schedsim compare: " + dir.filename().string();
  page.subtitle = fmt::format("Folder {}: B - A per metric (paired over seeds) with the 95 % confidence interval of the difference.",
                              dir.string());
  std::vector<std::vector<std::string>> t;
  ojson vals = ojson::array();
  for (const auto& r : rows) {
    t.push_back({r.metric, num_text(r.v.at("a")), num_text(r.v.at("b")), num_text(r.v.at("diff")), num_text(r.v.at("ci95_low")),
                 num_text(r.v.at("ci95_high"))});
    if (r.v.at("diff"))
      vals.push_back({{"metric", r.metric},
                      {"label", "B - A"},
                      {"diff", *r.v.at("diff")},
                      {"lo", r.v.at("ci95_low").value_or(*r.v.at("diff"))},
                      {"hi", r.v.at("ci95_high").value_or(*r.v.at("diff"))}});
  }
  page.blocks.push_back(html_block("Metrics of A and B", "compare.json.", table({"metric", "a", "b", "diff (b - a)", "ci95_low", "ci95_high"}, t)));
  page.blocks.push_back(chart("Difference B - A with 95 % CI",
                              "compare.json: the mean paired difference (point), its 95 % CI (bar) and zero (dashed): a bar "
                              "that does not cross zero is a difference the seeds support.",
                              errorbar_facet(vals, "diff", "lo", "hi", "B - A", "", true)));
  const fs::path gf = dir / "compare_groups.csv";
  if (fs::exists(gf)) {
    const Csv g = read_csv(gf);
    const std::size_t c_by = g.need("group_by"), c_group = g.need("group"), c_metric = g.need("metric"), c_a = g.need("a"),
                      c_b = g.need("b"), c_diff = g.need("diff"), c_lo = g.need("ci95_low"), c_hi = g.need("ci95_high");
    ojson gv = ojson::array();
    std::vector<std::vector<std::string>> gt;
    for (std::size_t r = 0; r < g.rows.size(); ++r) {
      const auto d = g.number(r, c_diff, true);
      g.number(r, c_a, true);
      g.number(r, c_b, true);
      const auto lo = g.number(r, c_lo, true), hi = g.number(r, c_hi, true);
      const std::string label = g.rows[r][c_by] + ": " + g.rows[r][c_group];
      if (d) gv.push_back({{"metric", g.rows[r][c_metric]}, {"label", label}, {"diff", *d}, {"lo", lo.value_or(*d)}, {"hi", hi.value_or(*d)}});
      if (gt.size() < k_max_table_rows) gt.push_back(g.rows[r]);
    }
    page.blocks.push_back(chart("Per-group differences B - A",
                                "compare_groups.csv: per tenant and pool, the difference of each group metric with its 95 % CI.",
                                errorbar_facet(gv, "diff", "lo", "hi", "B - A", "group", true)));
    page.blocks.push_back(html_block("Per-group differences", fmt::format("compare_groups.csv (first {} rows).", gt.size()), table(g.header, gt)));
  }
}

// ------------------------------------------------------------------ sweep, plan

/// One chart of a metric against a parameter: CI band, mean line and points; series by colour.
ojson metric_vs_param(const ojson& values, bool x_numeric, const std::string& xtitle, const std::string& ytitle, bool series,
                      const std::string& series_title, const ojson& extra_layers = ojson::array()) {
  const char* xt = x_numeric ? "quantitative" : "ordinal";
  ojson enc_x = field("x", xt, xtitle);
  ojson color = series ? field("series", "nominal", series_title) : ojson();
  auto with_color = [&](ojson enc) {
    if (series) enc["color"] = color;
    return enc;
  };
  ojson layer = ojson::array();
  layer.push_back({{"mark", {{"type", "area"}, {"opacity", 0.2}}},
                   {"encoding", with_color({{"x", enc_x}, {"y", field("lo", "quantitative", ytitle)}, {"y2", {{"field", "hi"}}}})}});
  layer.push_back({{"mark", {{"type", "line"}, {"point", true}}},
                   {"encoding", with_color({{"x", enc_x},
                                            {"y", field("mean", "quantitative", ytitle)},
                                            {"tooltip", {field("x", xt, xtitle), field("mean", "quantitative", "mean"),
                                                         field("lo", "quantitative", "ci95_low"), field("hi", "quantitative", "ci95_high")}}})}});
  for (const auto& l : extra_layers) layer.push_back(l);
  return {{"width", 560}, {"height", 240}, {"data", {{"values", values}}}, {"layer", layer}};
}

void sweep_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "sweep_summary.csv";
  const Csv s = read_csv(f);
  const std::size_t c_point = s.need("point"), c_metric = s.need("metric"), c_mean = s.need("mean"), c_lo = s.need("ci95_low"),
                    c_hi = s.need("ci95_high");
  s.need("n");
  if (c_point != 0 || c_metric < 2)
    fail(f, fmt::format("header {}: expected point,<PATH columns>,metric,n,mean,std,ci95_low,ci95_high with at least one PATH column",
                        esc(s.join_header())));
  std::vector<std::string> params(s.header.begin() + 1, s.header.begin() + std::ptrdiff_t(c_metric));
  bool x_numeric = true;
  for (std::size_t r = 0; r < s.rows.size(); ++r)
    if (!parse_double(s.rows[r][1])) x_numeric = false;
  std::vector<std::string> metrics;
  std::map<std::string, ojson> values;
  for (std::size_t r = 0; r < s.rows.size(); ++r) {
    const std::string& m = s.rows[r][c_metric];
    if (!values.count(m)) {
      metrics.push_back(m);
      values[m] = ojson::array();
    }
    std::string series;
    for (std::size_t p = 1; p < params.size(); ++p) series += (series.empty() ? "" : ", ") + params[p] + "=" + s.rows[r][1 + p];
    const auto mean = s.number(r, c_mean, true);
    if (!mean) continue;
    ojson x = x_numeric ? ojson(*parse_double(s.rows[r][1])) : ojson(s.rows[r][1]);
    values[m].push_back({{"x", x}, {"series", series}, {"mean", *mean}, {"lo", s.number(r, c_lo, true).value_or(*mean)},
                         {"hi", s.number(r, c_hi, true).value_or(*mean)}});
  }
  page.title = "schedsim sweep: " + dir.filename().string();
  std::string ps;
  for (const auto& p : params) ps += (ps.empty() ? "" : ", ") + p;
  page.subtitle = fmt::format("Folder {}: {} metrics over {} (mean over seeds with the 95 % confidence band).", dir.string(),
                              metrics.size(), ps);
  if (metrics.empty()) page.blocks.push_back(note("No rows", "sweep_summary.csv has a header but no rows."));
  for (const auto& m : metrics)
    page.blocks.push_back(chart(m, fmt::format("sweep_summary.csv: {} against {}{}.", m, params[0],
                                               params.size() > 1 ? ", one colour per value of the other parameters" : ""),
                                metric_vs_param(values[m], x_numeric, params[0], m, params.size() > 1, "other parameters")));
}

struct Slo {
  std::string metric, op;
  double value = 0;
  std::string text;
};

/// plan.json `slos` entries: "METRIC<=VALUE" strings or {"metric", "op", "value"|"threshold"} objects.
std::vector<Slo> parse_slos(const fs::path& f, const ojson& plan) {
  std::vector<Slo> out;
  if (!plan.contains("slos")) return out;
  const ojson& slos = plan["slos"];
  if (!slos.is_array()) fail_json(f, "slos", &slos, "must be an array");
  for (std::size_t i = 0; i < slos.size(); ++i) {
    const ojson& s = slos[i];
    const std::string path = fmt::format("slos[{}]", i);
    Slo slo;
    if (s.is_string()) {
      const std::string t = s.get<std::string>();
      std::size_t k = t.find_first_of("<>");
      if (k == std::string::npos || k == 0) fail_json(f, path, &s, "must be METRIC<=VALUE (or <, >=, >)");
      slo.metric = t.substr(0, k);
      slo.op = t.substr(k, k + 1 < t.size() && t[k + 1] == '=' ? 2 : 1);
      auto v = parse_double(t.substr(k + slo.op.size()));
      if (!v) fail_json(f, path, &s, "must be METRIC<=VALUE (or <, >=, >) with a number");
      slo.value = *v;
    } else if (s.is_object()) {
      const ojson& m = member(f, s, path, "metric");
      if (!m.is_string()) fail_json(f, path + ".metric", &m, "must be a string");
      slo.metric = m.get<std::string>();
      const char* vk = s.contains("value") ? "value" : "threshold";
      slo.value = *jnum(f, member(f, s, path, vk), path + "." + vk);
      const char* ok = s.contains("op") ? "op" : "operator";
      if (s.contains(ok) && s[ok].is_string()) slo.op = s[ok].get<std::string>();
    } else {
      fail_json(f, path, &s, "must be a string METRIC<=VALUE or an object");
    }
    slo.text = slo.metric + " " + slo.op + " " + fmt::format("{}", slo.value);
    out.push_back(std::move(slo));
  }
  return out;
}

void plan_page(const fs::path& dir, Page& page) {
  const fs::path f = dir / "plan.json";
  const ojson plan = read_json(f);
  if (!plan.is_object()) fail_json(f, "(top level)", &plan, "must be an object (plan.json of schedsim plan)");
  const ojson& path = member(f, plan, "", "path");
  if (!path.is_string()) fail_json(f, "path", &path, "must be a string");
  const ojson& answer = member(f, plan, "", "answer");
  const ojson& met = member(f, plan, "", "met");
  if (!met.is_boolean()) fail_json(f, "met", &met, "must be true or false");
  const ojson& points = member(f, plan, "", "points");
  if (!points.is_array()) fail_json(f, "points", &points, "must be an array");
  const auto slos = parse_slos(f, plan);
  bool x_numeric = true;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].is_object()) fail_json(f, fmt::format("points[{}]", i), &points[i], "must be an object");
    if (!member(f, points[i], fmt::format("points[{}]", i), "value").is_number()) x_numeric = false;
  }
  std::vector<std::string> metrics;
  std::map<std::string, ojson> values;
  std::vector<std::vector<std::string>> t;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string pp = fmt::format("points[{}]", i);
    const ojson& p = points[i];
    const ojson& v = p["value"];
    const ojson& pmet = member(f, p, pp, "met");
    if (!pmet.is_boolean()) fail_json(f, pp + ".met", &pmet, "must be true or false");
    const auto rows = metric_object(f, member(f, p, pp, "metrics"), pp + ".metrics", {"mean", "std", "ci95_low", "ci95_high", "n"});
    std::vector<std::string> cells{v.is_string() ? v.get<std::string>() : v.dump(), pmet.get<bool>() ? "yes" : "no"};
    for (const auto& r : rows) {
      if (!values.count(r.metric)) {
        metrics.push_back(r.metric);
        values[r.metric] = ojson::array();
      }
      if (!r.v.at("mean")) continue;
      const double mean = *r.v.at("mean");
      values[r.metric].push_back({{"x", v},
                                  {"series", pmet.get<bool>() ? "meets the SLOs" : "misses the SLOs"},
                                  {"mean", mean},
                                  {"lo", r.v.at("ci95_low").value_or(mean)},
                                  {"hi", r.v.at("ci95_high").value_or(mean)}});
      for (const auto& s : slos)
        if (s.metric == r.metric)
          cells.push_back(fmt::format("{} [{}, {}]", mean, num_text(r.v.at("ci95_low")), num_text(r.v.at("ci95_high"))));
    }
    t.push_back(std::move(cells));
  }
  const std::string ans = answer.is_null() ? "none (not met at the highest value)" : (answer.is_string() ? answer.get<std::string>() : answer.dump());
  std::string slo_text;
  for (const auto& s : slos) slo_text += (slo_text.empty() ? "" : "; ") + s.text;
  page.title = "schedsim plan: " + path.get<std::string>();
  page.subtitle = fmt::format("Folder {}: the smallest {} meeting {}: {}{}.", dir.string(), path.get<std::string>(),
                              slo_text.empty() ? "the SLOs" : slo_text, ans,
                              plan.contains("monotone") && plan["monotone"].is_boolean() && !plan["monotone"].get<bool>()
                                  ? " (warning: the evaluated points are not monotone; see docs/report.md)"
                                  : "");
  std::vector<std::string> head{"value", "meets the SLOs"};
  for (const auto& s : slos) head.push_back(s.metric + " mean [95 % CI]");
  // Metrics with an SLO first, the others after, each in first-seen order.
  std::stable_sort(metrics.begin(), metrics.end(), [&](const std::string& a, const std::string& b) {
    auto has = [&](const std::string& m) { return std::any_of(slos.begin(), slos.end(), [&](const Slo& s) { return s.metric == m; }); };
    return has(a) && !has(b);
  });
  for (const auto& m : metrics) {
    ojson extra = ojson::array();
    for (const auto& s : slos)
      if (s.metric == m)
        extra.push_back({{"data", {{"values", {{{"y", s.value}, {"label", "SLO " + s.text}}}}}},
                         {"layer",
                          {{{"mark", {{"type", "rule"}, {"color", "firebrick"}, {"strokeDash", {6, 4}}}},
                            {"encoding", {{"y", field("y", "quantitative", m)}}}},
                           {{"mark", {{"type", "text"}, {"align", "left"}, {"dy", -6}, {"color", "firebrick"}}},
                            {"encoding", {{"y", field("y", "quantitative", m)}, {"text", {{"field", "label"}}}, {"x", {{"value", 4}}}}}}}}});
    if (!answer.is_null())
      extra.push_back({{"data", {{"values", {{{"x", answer}, {"label", "answer " + ans}}}}}},
                       {"layer",
                        {{{"mark", {{"type", "rule"}, {"color", "seagreen"}, {"size", 2}}},
                          {"encoding", {{"x", field("x", x_numeric ? "quantitative" : "ordinal", path.get<std::string>())}}}},
                         {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"baseline", "top"}, {"color", "seagreen"}}},
                          {"encoding", {{"x", field("x", x_numeric ? "quantitative" : "ordinal", path.get<std::string>())},
                                        {"text", {{"field", "label"}}}, {"y", {{"value", 4}}}}}}}}});
    page.blocks.push_back(chart(m,
                                fmt::format("plan.json: {} against {} (mean over seeds, 95 % band; points coloured by whether "
                                            "the value meets every SLO){}.",
                                            m, path.get<std::string>(),
                                            std::any_of(slos.begin(), slos.end(), [&](const Slo& s) { return s.metric == m; })
                                                ? "; dashed red line: the SLO threshold; green line: the answer"
                                                : "; green line: the answer"),
                                metric_vs_param(values[m], x_numeric, path.get<std::string>(), m, true, "point", extra)));
  }
  page.blocks.push_back(html_block("Evaluated points", "plan.json points.", table(head, t)));
}

Page build_page(const std::string& dir) {
  Page page;
  const fs::path d(dir);
  switch (detect_report_kind(dir)) {
    case ReportKind::plan: plan_page(d, page); break;
    case ReportKind::sweep: sweep_page(d, page); break;
    case ReportKind::compare: compare_page(d, page); break;
    case ReportKind::seeds: seeds_page(d, page); break;
    case ReportKind::run: run_page(d, page); break;
  }
  return page;
}

/// JSON text safe inside a <script> element: every `<` as \u003c (so `</script>` and `<!--`
/// cannot appear), U+2028/U+2029 escaped too.
std::string script_json(const ojson& j) {
  const std::string d = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string o;
  o.reserve(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] == '<') o += "\\u003c";
    else if (d.compare(i, 3, "\xE2\x80\xA8") == 0) { o += "\\u2028"; i += 2; }
    else if (d.compare(i, 3, "\xE2\x80\xA9") == 0) { o += "\\u2029"; i += 2; }
    else o += d[i];
  }
  return o;
}

/// A runtime's text made safe to inline in a <script> element (`</script` cannot end it early).
std::string inline_script(const std::string& js) {
  std::string o;
  o.reserve(js.size());
  for (std::size_t i = 0; i < js.size(); ++i) {
    if (js[i] == '<' && i + 1 < js.size() && js[i + 1] == '/' && i + 8 <= js.size()) {
      std::string w = js.substr(i + 2, 6);
      std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return char(std::tolower(c)); });
      if (w == "script") {
        o += "<\\/";
        ++i;
        continue;
      }
    }
    o += js[i];
  }
  return o;
}

const char* k_style = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
p.sub { color: #555; margin-top: 0; }
p.desc { color: #555; font-size: 0.92em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f4f4; }
.chart.failed { color: #b00; }
footer { margin-top: 3em; color: #888; font-size: 0.85em; }
)";

std::string render(const Page& page, const ReportRuntimes& rt) {
  ojson charts = ojson::array();
  std::string body;
  int n = 0;
  for (const Block& b : page.blocks) {
    body += "<section>\n<h2>" + html_escape(b.title) + "</h2>\n";
    if (!b.text.empty()) body += "<p class=\"desc\">" + html_escape(b.text) + "</p>\n";
    if (b.chart) {
      const std::string id = fmt::format("chart-{}", n++);
      body += "<div class=\"chart\" id=\"" + id + "\"></div>\n";
      charts.push_back({{"id", id}, {"spec", b.spec}});
    } else {
      body += b.html + "\n";
    }
    body += "</section>\n";
  }
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"generator\" content=\"schedsim " + html_escape(version()) + "\">\n";
  h += "<title>" + html_escape(page.title) + "</title>\n<style>" + k_style + "</style>\n";
  h += "<script>\n" + inline_script(rt.vega) + "\n</script>\n";
  h += "<script>\n" + inline_script(rt.vega_lite) + "\n</script>\n";
  h += "<script>\n" + inline_script(rt.vega_embed) + "\n</script>\n";
  h += "</head>\n<body>\n<h1>" + html_escape(page.title) + "</h1>\n<p class=\"sub\">" + html_escape(page.subtitle) + "</p>\n";
  h += body;
  h += "<footer>Made by schedsim " + html_escape(version()) +
       " report; charts drawn by Vega-Lite in this page (no network needed). docs/report.md explains every chart.</footer>\n";
  h += "<script type=\"application/json\" id=\"schedsim-report-data\">" + script_json({{"charts", charts}}) + "</script>\n";
  h += R"(<script>
(function () {
  var data = JSON.parse(document.getElementById("schedsim-report-data").textContent);
  data.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    vegaEmbed(el, c.spec, { mode: "vega-lite", renderer: "svg", actions: false }).catch(function (e) {
      el.className += " failed";
      el.textContent = "This chart could not be drawn: " + e;
    });
  });
})();
</script>
</body>
</html>
)";
  return h;
}

std::optional<std::string> read_if(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  try {
    return read_text(p);
  } catch (const OutputError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<ReportRuntimes> find_report_runtimes(std::string& searched) {
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("SCHEDSIM_REPORT_ASSETS"); env && *env) {
    roots.emplace_back(env);  // set: the only place looked at
  } else {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) roots.push_back(exe.parent_path().parent_path() / "share" / "schedsim" / "report");
#ifdef SCHEDSIM_SOURCE_DIR
    roots.push_back(fs::path(SCHEDSIM_SOURCE_DIR) / "tools" / "report");
#endif
  }
  searched.clear();
  for (const auto& root : roots) {
    searched += (searched.empty() ? "" : ", ") + root.string();
    for (const fs::path& base : {root, root / "node_modules"}) {
      const bool npm = base.filename() == "node_modules";
      auto a = read_if(npm ? base / "vega" / "build" / "vega.min.js" : base / "vega.min.js");
      auto b = read_if(npm ? base / "vega-lite" / "build" / "vega-lite.min.js" : base / "vega-lite.min.js");
      auto c = read_if(npm ? base / "vega-embed" / "build" / "vega-embed.min.js" : base / "vega-embed.min.js");
      if (a && b && c) return ReportRuntimes{std::move(*a), std::move(*b), std::move(*c), base.string()};
    }
  }
  return std::nullopt;
}

ReportKind detect_report_kind(const std::string& dir) {
  std::error_code ec;
  const fs::path d(dir);
  if (!fs::is_directory(d, ec))
    throw ReportInputError(esc(dir) + ": " + (fs::exists(d, ec) ? "is not a folder" : "no such folder") +
                           ": expected a schedsim output folder");
  const std::pair<const char*, ReportKind> files[] = {{"plan.json", ReportKind::plan},
                                                      {"sweep_summary.csv", ReportKind::sweep},
                                                      {"compare.json", ReportKind::compare},
                                                      {"seeds_summary.json", ReportKind::seeds},
                                                      {"summary.json", ReportKind::run}};
  for (const auto& [f, kind] : files)
    if (fs::is_regular_file(d / f, ec)) return kind;
  throw ReportInputError(esc(dir) +
                         ": no schedsim outputs found: expected summary.json (schedsim run), seeds_summary.json (run --seeds), "
                         "compare.json (compare), sweep_summary.csv (sweep) or plan.json (plan)");
}

std::string build_report_html(const std::string& dir, const ReportRuntimes& rt) { return render(build_page(dir), rt); }

int report_chart_count(const std::string& dir) {
  int n = 0;
  for (const auto& b : build_page(dir).blocks) n += b.chart ? 1 : 0;
  return n;
}

int report_command(const std::string& dir, std::ostream& out, std::ostream& err) {
  Page page;
  try {
    page = build_page(dir);  // input problems first (exit 2), whatever the runtimes
  } catch (const ReportInputError& e) {
    err << "schedsim report: " << e.what() << "\n";
    return io::exit_invalid_input;
  } catch (const OutputError& e) {
    err << "schedsim report: " << esc(e.what()) << "\n";
    return e.status;
  }
  std::string searched;
  const auto rt = find_report_runtimes(searched);
  if (!rt) {
    err << "schedsim report: the Vega runtimes (vega.min.js, vega-lite.min.js, vega-embed.min.js) were not found (looked in "
        << esc(searched)
        << "); install them with tools/install-deps.sh (npm ci in tools/report), or set SCHEDSIM_REPORT_ASSETS to a folder "
           "holding them\n";
    return exit_environment;
  }
  const std::string file = (fs::path(dir) / "report.html").string();
  try {
    write_file_atomic(file, render(page, *rt));
  } catch (const std::exception& e) {
    err << "schedsim report: " << esc(e.what()) << "\n";
    return output_exit_status(e);
  }
  int charts = 0;
  for (const auto& b : page.blocks) charts += b.chart ? 1 : 0;
  out << fmt::format("schedsim report: {} ({} charts)\n", file, charts);
  return 0;
}

}  // namespace sim
