// `schedsim report` (docs/report.md): the page of a fill folder (the FGD paper's figure, one line
// per policy with a band over seeds) and readable table numbers (4 significant digits, times in
// s/min/h/d) on every page kind. The tests need the Vega runtimes (tools/install-deps.sh) and
// skip with a message when they are missing; the drawing check also needs chromium.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/outputs/report.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;

testutil::CommandResult schedsim(const std::string& args) {
  return testutil::run_command(std::string(SCHEDSIM_BINARY) + " " + args, "report-fill");
}

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

bool have_runtimes(std::string& why) {
  std::string searched;
  if (sim::find_report_runtimes(searched)) return true;
  why = "skipped: the Vega runtimes are missing (looked in " + searched + "); run tools/install-deps.sh";
  return false;
}

/// An openb trace (3 nodes, 5 pods) and a fill scenario on it.
fs::path write_fill_scenario(const fs::path& dir) {
  write(dir / "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,V100\nn1,64000,262144,8,V100\nn2,32000,131072,4,T4\n");
  write(dir / "pods.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
        "p0,4000,16384,1,1000,,LS,Running,0,100,0\np1,2000,8192,1,500,,LS,Running,1,100,1\n"
        "p2,8000,32768,2,1000,,LS,Running,2,100,2\np3,1000,4096,1,250,,LS,Running,3,100,3\n"
        "p4,4000,8192,0,0,,LS,Running,4,100,4\n");
  const fs::path p = dir / "f.json";
  write(p, R"({"schema": "schedsim/v1", "name": "fill", "seed": 1,
    "cluster": {"name": "c", "region": "r", "instance_specs": [], "pools": [{"name": "p", "kind": "shared", "node_groups": []}]},
    "traces": [{"format": "openb", "path": ")" + (dir / "pods.csv").string() + R"(", "nodes": ")" + (dir / "nodes.csv").string() +
                  R"(", "pool": "p"}], "tasks": []})");
  return p;
}

/// The charts' specs embedded in a report page.
nlohmann::json page_charts(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"schedsim-report-data\">";
  const auto b = html.find(open);
  REQUIRE(b != std::string::npos);
  const auto e = html.find("</script>", b);
  return nlohmann::json::parse(html.substr(b + open.size(), e - b - open.size())).at("charts");
}

/// The text of every right-aligned (numeric) table cell of a page.
std::vector<std::string> numeric_cells(const std::string& html) {
  std::vector<std::string> v;
  const std::regex td(R"(<td class="num">([^<]*)</td>)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), td); it != std::sregex_iterator(); ++it) v.push_back((*it)[1]);
  return v;
}

/// Significant digits of a cell "12.35", "-0.01235", "123500", "1.235e+20", "3.429 h": the digits
/// from the first non-zero one, without an integer's trailing zeros.
int significant_digits(std::string c) {
  if (const auto sp = c.find(' '); sp != std::string::npos) c = c.substr(0, sp);  // the unit
  if (const auto ex = c.find_first_of("eE"); ex != std::string::npos) c = c.substr(0, ex);
  const bool has_point = c.find('.') != std::string::npos;
  std::string d;
  for (char ch : c)
    if (std::isdigit(static_cast<unsigned char>(ch))) d += ch;
  d.erase(0, std::min(d.find_first_not_of('0'), d.size()));
  if (!has_point)
    while (!d.empty() && d.back() == '0') d.pop_back();
  return int(d.size());
}

}  // namespace

TEST_CASE("fill_summary.csv gives the sample standard deviation of the fragmentation over seeds") {
  const fs::path w = testutil::fresh_dir("report-fill-summary");
  fs::create_directories(w);
  const fs::path s = write_fill_scenario(w);
  const auto r = schedsim("fill " + s.string() + " --policies fgd,random --seeds 3 --out " + (w / "fill").string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::istringstream summary(slurp(w / "fill" / "fill_summary.csv"));
  std::string line;
  std::getline(summary, line);
  CHECK(line ==
        "policy,runs,alloc_at_target_mean,alloc_at_target_std,frag_at_target_mean,alloc_window_mean,alloc_window_std,frag_window_mean,"
        "frag_at_target_std,frag_window_std");
  // The std of frag_gpu_pct_mean in the last row of each seed (fill_curves.csv), computed here.
  std::map<std::string, std::vector<double>> last;
  std::istringstream curves(slurp(w / "fill" / "fill_curves.csv"));
  std::getline(curves, line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(curves, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    rows.push_back(f);
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (i + 1 == rows.size() || rows[i + 1][1] != rows[i][1] || rows[i + 1][0] != rows[i][0]) last[rows[i][0]].push_back(std::stod(rows[i][7]));
  REQUIRE(last.size() == 2);
  while (std::getline(summary, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 10);
    const auto& v = last.at(f[0]);
    REQUIRE(v.size() == 3);
    const double mean = (v[0] + v[1] + v[2]) / 3;
    const double sd = std::sqrt(((v[0] - mean) * (v[0] - mean) + (v[1] - mean) * (v[1] - mean) + (v[2] - mean) * (v[2] - mean)) / 2);
    CHECK(std::stod(f[9]) == Approx(sd).margin(1e-4));
  }
  fs::remove_all(w);
}

TEST_CASE("report of a fill folder draws allocated and fragmented GPUs against arrived, one line per policy, min..max band over seeds") {
  std::string why;
  if (!have_runtimes(why)) {
    WARN(why);
    return;
  }
  const fs::path w = testutil::fresh_dir("report-fill");
  fs::create_directories(w);
  const fs::path s = write_fill_scenario(w);
  const fs::path d = w / "fill";
  REQUIRE(schedsim("fill " + s.string() + " --policies fgd,best-fit,random --seeds 3 --out " + d.string()).status == 0);
  CHECK(sim::detect_report_kind(d.string()) == sim::ReportKind::fill);
  const auto r = schedsim("report " + d.string());
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("(2 charts)") != std::string::npos);
  const std::string html = slurp(d / "report.html");
  const auto charts = page_charts(html);
  REQUIRE(charts.size() == 2);
  // fill_curves.csv: allocated_gpu_pct_mean (column 6) and frag_gpu_pct_mean (7) per policy, arrived (2).
  std::map<std::pair<std::string, double>, std::vector<double>> curve[2];
  {
    std::istringstream curves(slurp(d / "fill_curves.csv"));
    std::string line;
    std::getline(curves, line);
    while (std::getline(curves, line)) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
      for (int m = 0; m < 2; ++m) curve[m][{f[0], std::stod(f[2])}].push_back(std::stod(f[std::size_t(6 + m)]));
    }
  }
  for (int m = 0; m < 2; ++m) {
    const auto& spec = charts[std::size_t(m)].at("spec");
    const auto& layer = spec.at("layer");
    REQUIRE(layer.size() == 2);
    CHECK(layer[0].at("mark").at("type") == "area");  // the band
    CHECK(layer[0].at("encoding").at("y2").at("field") == "hi");
    CHECK(layer[1].at("mark").at("type") == "line");  // one line per policy: coloured by policy
    CHECK(layer[1].at("encoding").at("color").at("field") == "policy");
    CHECK(layer[1].at("encoding").at("x").at("field") == "arrived");
    std::set<std::string> policies;
    std::size_t points = 0;
    for (const auto& v : spec.at("data").at("values")) {
      policies.insert(v.at("policy").get<std::string>());
      const auto& seeds = curve[m].at({v.at("policy").get<std::string>(), v.at("arrived").get<double>()});
      REQUIRE(seeds.size() == 3);
      CHECK(v.at("seeds") == 3);
      CHECK(v.at("mean").get<double>() == Approx((seeds[0] + seeds[1] + seeds[2]) / 3));
      CHECK(v.at("lo").get<double>() == *std::min_element(seeds.begin(), seeds.end()));
      CHECK(v.at("hi").get<double>() == *std::max_element(seeds.begin(), seeds.end()));
      ++points;
    }
    CHECK(policies == std::set<std::string>{"fgd", "best-fit", "random"});
    CHECK(points == curve[m].size());  // every (policy, arrived %) once: 3 x 131 rows at 130 %
    CHECK(points == 3 * 131);
  }
  // The summary table shows the fill_summary.csv columns, the std of the fragmentation among them.
  CHECK(html.find("<th>frag_window_std</th>") != std::string::npos);
  for (const auto& c : numeric_cells(html)) {
    INFO(c);
    CHECK(significant_digits(c) <= 4);
  }
  fs::remove_all(w);
}

TEST_CASE("report tables show numbers to 4 significant digits and times in s, min, h or d") {
  std::string why;
  if (!have_runtimes(why)) {
    WARN(why);
    return;
  }
  const fs::path w = testutil::fresh_dir("report-digits");
  const fs::path d = w / "seeds";
  fs::create_directories(d);
  write(d / "seeds_summary.json",
        R"({"mean_wait_s": {"mean": 12345.678, "std": 10.25, "ci95_low": 90, "ci95_high": 200000, "n": 3},
  "gpu_allocation_ratio": {"mean": 0.8123456, "std": 0.000012345, "ci95_low": 123456.7, "ci95_high": 0.99996, "n": 3}})");
  REQUIRE(schedsim("report " + d.string()).status == 0);
  const std::string html = slurp(d / "report.html");
  // 12345.678 s = 3.4294 h; 10.25 s; 90 s = 1.5 min; 200000 s = 2.3148 d.
  CHECK(html.find("<tr><td>mean_wait_s</td><td class=\"num\">3.429 h</td><td class=\"num\">10.25 s</td><td class=\"num\">1.5 min</td>"
                  "<td class=\"num\">2.315 d</td><td class=\"num\">3</td></tr>") != std::string::npos);
  // 0.8123456 -> 0.8123; 0.000012345 -> 1.234e-05 or 1.235e-05 (binary rounding); 123456.7 -> 123500; 0.99996 -> 1.
  CHECK(html.find("<td class=\"num\">0.8123</td>") != std::string::npos);
  CHECK(html.find("<td class=\"num\">123500</td><td class=\"num\">1</td>") != std::string::npos);
  // Every numeric cell of every page kind: at most 4 significant digits. A run folder, compare
  // and a fill folder besides these seeds.
  const fs::path run = w / "run";
  write(w / "s.json", R"({"schema": "schedsim/v1", "name": "digits", "seed": 5,
    "cluster": {"name": "c", "region": "r", "instance_specs": [{"name": "g8", "gpu_model": "A100", "gpus": 8, "vcpu": 32, "memory_gib": 256}],
      "pools": [{"name": "a", "kind": "shared", "node_groups": [{"prefix": "a-", "count": 1, "gpu_model": "A100", "gpus": 8, "vcpu": 96,
                 "memory_gib": 960}]}]},
    "tasks": [{"name": "t1", "user": "u", "tenant": "x", "submit_s": 0, "type": "PyTorchJob", "workers": 0, "specs": ["g8"],
               "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 1234.567},
              {"name": "t2", "user": "u", "tenant": "y", "submit_s": 1, "type": "PyTorchJob", "workers": 0, "specs": ["g8"],
               "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 77777.7}]})");
  const auto rr = schedsim("run " + (w / "s.json").string() + " --no-progress --outputs all --out " + run.string());
  INFO(rr.err);
  REQUIRE(rr.status == 0);
  const fs::path cmp = w / "compare";
  fs::create_directories(cmp);
  write(cmp / "compare.json", R"({"p95_wait_s": {"a": 1234.5678, "b": 60.123456, "diff": -1174.444, "ci95_low": -1300.98765, "ci95_high": -40.5},
  "cost_total": {"a": 1234567.891, "b": 0.3333333, "diff": -1234567.5577, "ci95_low": -2e6, "ci95_high": 12.3456}})");
  write(cmp / "compare_groups.csv", "group_by,group,metric,a,b,diff,ci95_low,ci95_high\n"
                                    "tenant,team-a,mean_wait_s,100.123,50.5555,-49.56745,-70.11111,-30.22222\n");
  const fs::path fill = w / "fill";
  REQUIRE(schedsim("fill " + write_fill_scenario(w).string() + " --policies fgd,random --seeds 2 --out " + fill.string()).status == 0);
  for (const fs::path& f : {run, cmp, fill, d}) {
    REQUIRE(schedsim("report " + f.string()).status == 0);
    const auto cells = numeric_cells(slurp(f / "report.html"));
    CHECK(cells.size() >= 3);
    for (const auto& c : cells) {
      INFO(f.string() << ": " << c);
      CHECK(significant_digits(c) <= 4);
    }
  }
  // The wait of t2 (top waiting tasks): t1's end minus t2's submission, 1234.567 - 1 s = 20.56 min.
  const std::string run_html = slurp(run / "report.html");
  CHECK(run_html.find("20.56 min") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("report of a CPU-only (SWF) run draws no GPU chart and names cpu_allocation_ratio") {
  std::string why;
  if (!have_runtimes(why)) {
    WARN(why);
    return;
  }
  const fs::path w = testutil::fresh_dir("report-swf");
  fs::create_directories(w);
  write(w / "t.swf", "; SWF\n1 0 0 100 4 -1 -1 4 100 -1 1 1 1 1 1 -1 -1 -1\n2 10 0 50 2 -1 -1 2 50 -1 1 1 1 1 1 -1 -1 -1\n");
  REQUIRE(schedsim("convert --format swf --path " + (w / "t.swf").string() + " --procs-per-node 4 --out " + (w / "conv.json").string())
              .status == 0);
  const auto rr = schedsim("run " + (w / "conv.json").string() + " --no-progress --outputs all --out " + (w / "run").string());
  INFO(rr.err);
  REQUIRE(rr.status == 0);
  const auto r = schedsim("report " + (w / "run").string());
  REQUIRE(r.status == 0);
  const std::string html = slurp(w / "run" / "report.html");
  CHECK(html.find("GPU allocation by capacity class") == std::string::npos);
  CHECK(html.find("GPU allocation by pool") == std::string::npos);
  CHECK(html.find("<h2>CPU-only cluster</h2>") != std::string::npos);
  CHECK(html.find("<h2>Queue length</h2>") != std::string::npos);
  CHECK(rr.out.find("  cpu_allocation_ratio ") != std::string::npos);  // in the table run prints
  // The vCPU chart: timeseries.csv vcpus_allocated and vcpus_up, and the min..max band.
  REQUIRE(html.find("<h2>vCPU allocation</h2>") != std::string::npos);
  const auto charts = page_charts(html);
  const nlohmann::json* vspec = nullptr;
  for (const auto& c : charts)
    if (c.at("spec").contains("layer") && c.at("spec").at("layer").at(0).at("encoding").at("y").at("field") == "vcpus") vspec = &c.at("spec");
  REQUIRE(vspec != nullptr);
  // One 4-vCPU node (--procs-per-node 4): job 1 holds 4 vCPU over [0, 100), job 2 (waiting since
  // 10) 2 vCPU over [100, 150); samples every 2 s (makespan 150 s / 100, whole seconds).
  const auto& lines = vspec->at("layer").at(0).at("data").at("values");
  auto has = [&](double t, const char* series, double vcpus) {
    for (const auto& v : lines)
      if (v.at("t") == t && v.at("series") == series) return v.at("vcpus") == vcpus;
    return false;
  };
  CHECK(has(0, "allocated", 4));
  CHECK(has(98, "allocated", 4));
  CHECK(has(100, "allocated", 2));
  CHECK(has(150, "allocated", 0));
  CHECK(has(150, "up", 4));
  // The band of the row at 100 covers [98, 100]: 4 before the change, 2 at it.
  const auto& band = vspec->at("layer").at(1).at("data").at("values");
  bool seen = false;
  for (const auto& v : band)
    if (v.at("t") == 100) {
      seen = true;
      CHECK(v.at("t0") == 98);
      CHECK(v.at("lo") == 2);
      CHECK(v.at("hi") == 4);
    }
  CHECK(seen);
  const auto summary = nlohmann::json::parse(slurp(w / "run" / "summary.json"));
  const double ratio = summary.at("cpu_allocation_ratio").get<double>();
  CHECK(ratio > 0);
  std::string shown = fmt::format("{:.4g}", ratio);  // 4 significant digits, as the table shows it
  CHECK(html.find("cpu_allocation_ratio = " + shown + " in the summary table") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("report of a run with prices names the currency next to every cost", "[report]") {
  std::string why;
  if (!have_runtimes(why)) {
    WARN(why);
    return;
  }
  const fs::path w = testutil::fresh_dir("report-currency");
  fs::create_directories(w);
  const auto rr = schedsim("run " + std::string(SCHEDSIM_SOURCE_DIR) + "/scenarios/team-quota.json --no-progress --out " + (w / "run").string());
  INFO(rr.err);
  REQUIRE(rr.status == 0);
  REQUIRE(nlohmann::json::parse(slurp(w / "run" / "summary.json")).at("currency") == "USD");
  REQUIRE(schedsim("report " + (w / "run").string()).status == 0);
  const std::string html = slurp(w / "run" / "report.html");
  for (const char* k : {"cost_total", "cost_reserved", "cost_pay_as_you_go", "cost_spot", "cost_idle", "cost_reserved_unused", "cost_lost_work"}) {
    INFO(k);
    CHECK(html.find(std::string("<td>") + k + " (USD)</td>") != std::string::npos);
  }
  CHECK(html.find("<td>mean_wait_s</td>") != std::string::npos);  // other metrics keep their names
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
