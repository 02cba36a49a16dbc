// `schedsim report DIR` (docs/report.md): folder detection, input errors, the self-contained
// page, escaping, and charts really drawn by headless Chromium. The tests that need the Vega
// runtimes (tools/install-deps.sh) or chromium skip with a message when they are missing.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <regex>
#include <string>

#include "sim/outputs/report.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;

struct Result {
  int status = -1;
  std::string out, err;
};

Result sh(const std::string& cmd_line) {
  const fs::path base = fs::temp_directory_path() / ("schedsim-report-" + std::to_string(::getpid()));
  const std::string cmd = cmd_line + " >" + base.string() + ".out 2>" + base.string() + ".err";
  const int st = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  fs::remove(base.string() + ".out");
  fs::remove(base.string() + ".err");
  return r;
}

Result schedsim(const std::string& args, const std::string& env = "") {
  return sh((env.empty() ? "" : "env " + env + " ") + SCHEDSIM_BINARY + " " + args);
}

fs::path work_dir(const std::string& name) {
  fs::path d = testutil::fresh_dir("report-" + name);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

/// Two pools, two tenants; run_folder() then gives a task and a tenant names that would end a
/// <script> element if they were not escaped (scenario names cannot hold `<`; files can).
const char* k_scenario = R"({"schema": "schedsim/v1", "name": "report-test", "seed": 5,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "g8", "gpu_model": "A100", "gpus": 8, "vcpu": 32, "memory_gib": 256},
                       {"name": "g4", "gpu_model": "A100", "gpus": 4, "vcpu": 16, "memory_gib": 128}],
    "pools": [{"name": "a", "kind": "shared", "node_groups": [{"prefix": "a-", "count": 2, "gpu_model": "A100",
               "gpus": 8, "vcpu": 96, "memory_gib": 960}]},
              {"name": "b", "kind": "shared", "node_groups": [{"prefix": "b-", "count": 1, "gpu_model": "A100",
               "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "gang", "user": "u", "tenant": "team-a", "submit_s": 0, "type": "PyTorchJob", "workers": 1, "specs": ["g8"],
     "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 1000},
    {"name": "evil", "user": "v", "tenant": "team-b", "submit_s": 10, "type": "PyTorchJob",
     "workers": 0, "specs": ["g4"], "resource_type": "pay_as_you_go", "pool": "b", "duration_s": 2000},
    {"name": "wait-1", "user": "v", "tenant": "team-b", "submit_s": 20, "type": "PyTorchJob", "workers": 0, "specs": ["g8"],
     "resource_type": "pay_as_you_go", "pool": "b", "duration_s": 300},
    {"name": "wait-2", "user": "u", "tenant": "team-a", "submit_s": 30, "type": "PyTorchJob", "workers": 0, "specs": ["g8"],
     "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 300}]})";

/// A run folder of k_scenario (all outputs).
fs::path run_folder(const fs::path& w) {
  write(w / "s.json", k_scenario);
  const auto r = schedsim("run " + (w / "s.json").string() + " --no-progress --outputs all --out " + (w / "run").string());
  REQUIRE(r.status == 0);
  std::string tasks = slurp(w / "run" / "tasks.csv");
  for (auto [from, to] : {std::pair<std::string, std::string>{"evil,", "x</script><script>alert(1)</script>,"},
                          {",team-b,", ",team</script><script>alert(2)</script>,"}})
    for (std::size_t p = tasks.find(from); p != std::string::npos; p = tasks.find(from, p + to.size())) tasks.replace(p, from.size(), to);
  REQUIRE(tasks.find("alert(2)") != std::string::npos);
  write(w / "run" / "tasks.csv", tasks);
  return w / "run";
}

// Fixture folders in the formats of run --seeds, compare, sweep and plan (docs/planning.md).
void seeds_fixture(const fs::path& d) {
  fs::create_directories(d);
  write(d / "seeds_summary.json", R"({"mean_wait_s": {"mean": 120.5, "std": 10.25, "ci95_low": -20, "ci95_high": 141, "n": 3},
  "gpu_allocation_ratio": {"mean": 0.8, "std": 0.01, "ci95_low": 0.775, "ci95_high": 0.825, "n": 3}})");
  write(d / "seeds.csv", "seed,mean_wait_s,gpu_allocation_ratio\n1,110,0.79\n2,121,0.8\n3,130.5,0.81\n");
}
void compare_fixture(const fs::path& d) {
  fs::create_directories(d);
  write(d / "a.resolved.json", R"({"name": "what-if", "cluster": {"pools": [{"name": "a100", "node_groups": [{"count": 2}]}]}})");
  write(d / "b.resolved.json", R"({"name": "what-if", "cluster": {"pools": [{"name": "a100", "node_groups": [{"count": 4}]}]}})");
  write(d / "compare.json", R"({"mean_wait_s": {"a": 120, "b": 60, "diff": -60, "ci95_low": -80, "ci95_high": -40},
  "gpu_allocation_ratio": {"a": 0.8, "b": 0.7, "diff": -0.1, "ci95_low": -0.15, "ci95_high": 0.02}})");
  write(d / "compare_groups.csv",
        "group_by,group,metric,a,b,diff,ci95_low,ci95_high\n"
        "tenant,team-a,mean_wait_s,100,50,-50,-70,-30\ntenant,team-b,mean_wait_s,140,70,-70,-90,-50\n"
        "pool,a,mean_wait_s,120,60,-60,-80,-40\n");
}
void sweep_fixture(const fs::path& d, bool two_params) {
  fs::create_directories(d);
  std::string s = two_params ? "point,cluster.pools[a].node_groups[0].count,scheduler.placement,metric,n,mean,std,ci95_low,ci95_high\n"
                             : "point,cluster.pools[a].node_groups[0].count,metric,n,mean,std,ci95_low,ci95_high\n";
  int point = 0;
  for (int count : {2, 4, 6}) {
    for (const char* pl : {"best-fit", "fgd"}) {
      if (!two_params && std::string(pl) == "fgd") continue;
      const std::string p = two_params ? std::to_string(count) + "," + pl : std::to_string(count);
      const double wait = 1000.0 / count + (std::string(pl) == "fgd" ? 20 : 0);
      s += std::to_string(point) + "," + p + ",mean_wait_s,3," + std::to_string(wait) + ",5," + std::to_string(wait - 10) + "," +
           std::to_string(wait + 10) + "\n";
      s += std::to_string(point) + "," + p + ",gpu_allocation_ratio,3,0." + std::to_string(9 - count) + ",0.01,0." +
           std::to_string(8 - count) + ",0." + std::to_string(9 - count) + "5\n";
      ++point;
    }
  }
  write(d / "sweep_summary.csv", s);
}
void plan_fixture(const fs::path& d) {
  fs::create_directories(d);
  write(d / "plan.json", R"({"path": "cluster.pools[a].node_groups[0].count", "answer": 4, "met": true, "monotone": true,
  "slos": ["p95_wait_s<=100"],
  "points": [
    {"value": 2, "met": false, "metrics": {"p95_wait_s": {"mean": 400, "std": 20, "ci95_low": 350, "ci95_high": 450, "n": 3},
                                           "mean_wait_s": {"mean": 200, "std": 10, "ci95_low": 180, "ci95_high": 220, "n": 3}}},
    {"value": 3, "met": false, "metrics": {"p95_wait_s": {"mean": 150, "std": 20, "ci95_low": 100, "ci95_high": 200, "n": 3},
                                           "mean_wait_s": {"mean": 80, "std": 10, "ci95_low": 60, "ci95_high": 100, "n": 3}}},
    {"value": 4, "met": true, "metrics": {"p95_wait_s": {"mean": 0, "std": 0, "ci95_low": 0, "ci95_high": 0, "n": 3},
                                          "mean_wait_s": {"mean": 0, "std": 0, "ci95_low": 0, "ci95_high": 0, "n": 3}}}]})");
}

/// The runtimes, or a skip message.
bool have_runtimes(std::string& why) {
  std::string searched;
  if (sim::find_report_runtimes(searched)) return true;
  why = "skipped: the Vega runtimes are missing (looked in " + searched + "); run tools/install-deps.sh";
  return false;
}

bool have_chromium(std::string& why) {
  if (sh("command -v chromium").status == 0) return true;
  why = "skipped: chromium is not installed; run tools/install-deps.sh";
  return false;
}

/// The DOM of `html` after the page's scripts ran in headless Chromium in a 1280 px wide window.
/// Checks on the way that the page logged nothing to the console (no error, no Vega warning) and
/// does not scroll sideways: a copy of the page gets a probe script that writes the document's
/// scroll width into the DOM once the charts are drawn.
std::string rendered_dom(const fs::path& html, const fs::path& work) {
  std::string page = slurp(html);
  const auto end = page.rfind("</body>");
  REQUIRE(end != std::string::npos);
  page.insert(end, "<script>setTimeout(function () { document.body.setAttribute('data-scroll-width', "
                   "String(document.documentElement.scrollWidth)); }, 3000);</script>\n");
  const fs::path probe = work / ("probe-" + html.parent_path().filename().string() + ".html");
  write(probe, page);
  const std::string cmd = "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
                          "--user-data-dir=" + (work / "chromium-profile").string() +
                          " --window-size=1280,900 --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom file://" +
                          fs::absolute(probe).string();
  const auto r = sh(cmd);
  INFO(r.err);
  REQUIRE(r.status == 0);
  // Console messages are logged as `...:INFO:CONSOLE:LINE] "TEXT", source: ...`.
  std::string console;
  for (std::size_t p = r.err.find(":CONSOLE"); p != std::string::npos; p = r.err.find(":CONSOLE", p + 1))
    console += r.err.substr(p, r.err.find('\n', p) - p) + "\n";
  INFO(console);
  CHECK(console.empty());
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex(R"re(data-scroll-width="(\d+)")re")));
  CHECK(std::stoi(m[1]) <= 1280);
  return r.out;
}

/// Vega views that received an svg (vega's svg renderer: <svg ... class="marks" ...>).
int rendered_views(const std::string& dom) {
  const std::regex svg(R"(<svg[^>]*\sclass="marks")");
  return int(std::distance(std::sregex_iterator(dom.begin(), dom.end(), svg), std::sregex_iterator()));
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report on a folder without schedsim outputs exits 2 naming the folder and the files expected") {
  fs::path w = work_dir("empty");
  write(w / "notes.txt", "hello");
  auto r = schedsim("report " + w.string());
  CHECK(r.status == 2);
  CHECK(r.err.find(w.string()) != std::string::npos);
  for (const char* f : {"summary.json", "seeds_summary.json", "compare.json", "sweep_summary.csv", "plan.json"})
    CHECK(r.err.find(f) != std::string::npos);
  CHECK_FALSE(fs::exists(w / "report.html"));
  r = schedsim("report " + (w / "missing").string());
  CHECK(r.status == 2);
  CHECK(r.err.find("no such folder") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("report on a malformed JSON or CSV file exits 2 with the file and the problem, writing nothing") {
  fs::path w = work_dir("malformed");
  fs::path run = run_folder(w);
  const std::string summary = slurp(run / "summary.json");
  write(run / "summary.json", summary.substr(0, summary.size() / 2));
  auto r = schedsim("report " + run.string());
  CHECK(r.status == 2);
  CHECK(r.err.find("summary.json: line ") != std::string::npos);  // FILE: line L, column C: malformed JSON: ...
  CHECK(r.err.find(": malformed JSON: ") != std::string::npos);
  write(run / "summary.json", summary);
  write(run / "timeseries.csv", "time_s,gpus_reserved\n0,1,2\n");
  r = schedsim("report " + run.string());
  CHECK(r.status == 2);
  CHECK(r.err.find("timeseries.csv: line 2: 3 fields, expected 2") != std::string::npos);
  write(run / "timeseries.csv", "time_s,gpus_reserved,gpus_pay_as_you_go,gpus_spot,gpus_idle,gpus_up,queue_length,running_tasks\n0,x,0,0,0,8,0,0\n");
  r = schedsim("report " + run.string());
  CHECK(r.status == 2);
  CHECK(r.err.find("timeseries.csv: line 2, column `gpus_reserved`: x: not a number") != std::string::npos);
  CHECK(count(r.err, "\n") == 1);
  CHECK_FALSE(fs::exists(run / "report.html"));

  fs::path seeds = w / "seeds";
  seeds_fixture(seeds);
  write(seeds / "seeds_summary.json", R"({"mean_wait_s": {"mean": "a lot", "std": 1, "ci95_low": 0, "ci95_high": 2, "n": 3}})");
  r = schedsim("report " + seeds.string());
  CHECK(r.status == 2);
  CHECK(r.err.find("seeds_summary.json: mean_wait_s.mean: \"a lot\": must be a number or null") != std::string::npos);
  fs::path sweep = w / "sweep";
  sweep_fixture(sweep, false);
  write(sweep / "sweep_summary.csv", "point,metric,n,mean,std,ci95_low,ci95_high\n0,mean_wait_s,1,2,0,2,2\n");
  r = schedsim("report " + sweep.string());
  CHECK(r.status == 2);
  CHECK(r.err.find("sweep_summary.csv: header") != std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("report without the Vega runtimes exits 1 saying how to install them, writing nothing") {
  fs::path w = work_dir("noassets");
  fs::path run = run_folder(w);
  const auto r = schedsim("report " + run.string(), "SCHEDSIM_REPORT_ASSETS=" + (w / "nowhere").string());
  CHECK(r.status == 1);
  CHECK(r.err.find("tools/install-deps.sh") != std::string::npos);
  CHECK_FALSE(fs::exists(run / "report.html"));
  fs::remove_all(w);
}

TEST_CASE("report of a run folder is self-contained: runtimes inlined, no http(s) script or stylesheet, names escaped") {
  std::string why;
  if (!have_runtimes(why)) {
    WARN(why);
    return;
  }
  fs::path w = work_dir("selfcontained");
  fs::path run = run_folder(w);
  const auto r = schedsim("report " + run.string());
  REQUIRE(r.status == 0);
  const std::string html = slurp(run / "report.html");
  CHECK(sim::report_chart_count(run.string()) >= 4);
  CHECK(count(html, "<div class=\"chart\"") == sim::report_chart_count(run.string()));
  // No external references at all: no <script src>, no <link href>, no CSS @import / url(http...).
  CHECK_FALSE(std::regex_search(html, std::regex(R"(<script[^>]*\ssrc\s*=)", std::regex::icase)));
  CHECK_FALSE(std::regex_search(html, std::regex(R"(<link[^>]*href\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  CHECK_FALSE(std::regex_search(html, std::regex(R"(@import|url\(\s*["']?https?:)", std::regex::icase)));
  // The task name holding </script> cannot close an element: exactly our five script elements.
  CHECK(count(html, "<script") == 5);
  CHECK(count(html, "</script") == 5);
  CHECK(html.find("alert(1)") != std::string::npos);  // the names are on the page, escaped
  CHECK(html.find("team\\u003c/script>\\u003cscript>alert(2)") != std::string::npos);
  // Deterministic.
  REQUIRE(schedsim("report " + run.string()).status == 0);
  CHECK(slurp(run / "report.html") == html);
  fs::remove_all(w);
}

TEST_CASE("report of a run folder renders at least 4 Vega charts in headless Chromium") {
  std::string why;
  if (!have_runtimes(why) || !have_chromium(why)) {
    WARN(why);
    return;
  }
  fs::path w = work_dir("render-run");
  fs::path run = run_folder(w);
  REQUIRE(schedsim("report " + run.string()).status == 0);
  const std::string dom = rendered_dom(run / "report.html", w);
  CHECK(rendered_views(dom) >= 4);
  CHECK(rendered_views(dom) == sim::report_chart_count(run.string()));
  CHECK(dom.find("chart failed") == std::string::npos);
  CHECK(dom.find("<script>alert(1)") == std::string::npos);  // the names never became elements
  CHECK(dom.find("<script>alert(2)") == std::string::npos);
  fs::remove_all(w);
}

TEST_CASE("report of a sweep folder renders one chart per metric, coloured by the second parameter") {
  std::string why;
  if (!have_runtimes(why) || !have_chromium(why)) {
    WARN(why);
    return;
  }
  fs::path w = work_dir("render-sweep");
  for (bool two : {false, true}) {
    fs::path d = w / (two ? "two" : "one");
    sweep_fixture(d, two);
    const auto r = schedsim("report " + d.string());
    REQUIRE(r.status == 0);
    CHECK(sim::report_chart_count(d.string()) == 2);
    if (!two) continue;  // the same specs without colour; one Chromium start per page is the slow part
    const std::string dom = rendered_dom(d / "report.html", w);
    CHECK(rendered_views(dom) >= 1);
    CHECK(rendered_views(dom) == 2);
    CHECK(dom.find("chart failed") == std::string::npos);
    CHECK(dom.find("scheduler.placement=fgd") != std::string::npos);  // the legend of the second parameter
  }
  fs::remove_all(w);
}

namespace {
/// Renders the report of fixture folder `kind` and checks every chart was drawn; returns the page.
/// plan --minimize folder: cost_total against p95_wait_s and gpu_allocation_ratio over 3 points.
void plan_minimize_fixture(const fs::path& d) {
  fs::create_directories(d);
  write(d / "plan.json", R"({"minimize": "cost_total", "search": "exhaustive", "paths": ["q", "m"], "answer": {"q": 0, "m": 2},
  "answer_mean": 32, "met": true,
  "slos": [{"metric": "p95_wait_s", "op": "<=", "value": 3600}, {"metric": "gpu_allocation_ratio", "op": ">=", "value": 0.5}],
  "points": [
    {"values": {"q": 0, "m": 1}, "met": false, "metrics": {"cost_total": {"mean": 32, "std": 0, "ci95_low": 32, "ci95_high": 32, "n": 2},
      "p95_wait_s": {"mean": 10800, "std": 0, "ci95_low": 10800, "ci95_high": 10800, "n": 2},
      "gpu_allocation_ratio": {"mean": 0.9, "std": 0, "ci95_low": 0.9, "ci95_high": 0.9, "n": 2}}},
    {"values": {"q": 0, "m": 2}, "met": true, "metrics": {"cost_total": {"mean": 32, "std": 0, "ci95_low": 32, "ci95_high": 32, "n": 2},
      "p95_wait_s": {"mean": 3600, "std": 0, "ci95_low": 3600, "ci95_high": 3600, "n": 2},
      "gpu_allocation_ratio": {"mean": 0.9, "std": 0, "ci95_low": 0.9, "ci95_high": 0.9, "n": 2}}},
    {"values": {"q": 16, "m": 2}, "met": true, "metrics": {"cost_total": {"mean": 56, "std": 0, "ci95_low": 56, "ci95_high": 56, "n": 2},
      "p95_wait_s": {"mean": 0, "std": 0, "ci95_low": 0, "ci95_high": 0, "n": 2},
      "gpu_allocation_ratio": {"mean": 0.6, "std": 0, "ci95_low": 0.6, "ci95_high": 0.6, "n": 2}}}]})");
}

std::string render_fixture(const std::string& kind, void (*make)(const fs::path&)) {
  std::string why;
  if (!have_runtimes(why) || !have_chromium(why)) {
    WARN(why);
    return "";
  }
  fs::path w = work_dir("render-" + kind);
  make(w / kind);
  const fs::path d = w / kind;
  REQUIRE(schedsim("report " + d.string()).status == 0);
  const int charts = sim::report_chart_count(d.string());
  CHECK(charts >= 2);
  const std::string dom = rendered_dom(d / "report.html", w);
  CHECK(rendered_views(dom) == charts);
  CHECK(dom.find("chart failed") == std::string::npos);
  const std::string html = slurp(d / "report.html");
  fs::remove_all(w);
  return html;
}
}  // namespace

TEST_CASE("report of a --seeds folder renders its charts in headless Chromium, the CI clipped at 0") {
  const std::string html = render_fixture("seeds", seeds_fixture);
  if (html.empty()) return;  // skipped
  // mean_wait_s's CI [-20, 141]: the bar starts at 0, the table keeps -20.
  CHECK(html.find(R"({"metric":"mean_wait_s","label":"mean","mean":120.5,"lo":0.0,"hi":141.0})") != std::string::npos);
  CHECK(html.find("<td class=\"num\">-20 s</td>") != std::string::npos);
}

TEST_CASE("report of a compare folder renders its charts in headless Chromium, A and B named") {
  const std::string html = render_fixture("compare", compare_fixture);
  if (html.empty()) return;  // skipped
  CHECK(html.find("A = A (what-if), B = B (what-if)") != std::string::npos);
  CHECK(html.find("<td>cluster.pools[a100].node_groups[0].count: 2 -&gt; 4</td>") != std::string::npos);
  CHECK(html.find("<th>a = A (what-if)</th><th>b = B (what-if)</th>") != std::string::npos);
}

namespace {
/// A `schedsim fill --policies fgd,best-fit --seeds 2` folder (fill_curves.csv only).
void fill_fixture(const fs::path& d) {
  fs::create_directories(d);
  write(d / "fill_curves.csv",
        "policy,seed,arrived_pct,allocated_gpu_pct_mean,frag_gpu_pct_mean\n"
        "fgd,1,50,50,2\nfgd,1,100,90,5\nfgd,2,50,49,3\nfgd,2,100,88,6\n"
        "best-fit,1,50,50,4\nbest-fit,1,100,85,9\nbest-fit,2,50,48,5\nbest-fit,2,100,84,10\n");
}
}  // namespace

TEST_CASE("report of a fill folder renders its charts in headless Chromium") { render_fixture("fill", fill_fixture); }

TEST_CASE("report of a plan folder renders its charts with the SLO threshold and the answer marked") {
  const std::string plan = render_fixture("plan", plan_fixture);
  if (plan.empty()) return;  // skipped
  CHECK(plan.find("SLO p95_wait_s \\u003c= 100") != std::string::npos);  // in the chart data
  CHECK(plan.find("answer 4") != std::string::npos);
}

TEST_CASE("report of a plan --minimize folder draws the front: one chart per SLO metric, the SLO line, the answer marked") {
  const std::string plan = render_fixture("plan-minimize", plan_minimize_fixture);
  if (plan.empty()) return;  // skipped
  CHECK(plan.find("SLO p95_wait_s \\u003c= 3600") != std::string::npos);
  CHECK(plan.find("SLO gpu_allocation_ratio >= 0.5") != std::string::npos);  // `<` is escaped in the page, `>` is not
  CHECK(plan.find("answer q=0, m=2") != std::string::npos);
  // (0, 1) costs what (0, 2) costs with a longer wait: the only point off the front.
  CHECK(plan.find("on the front, meets the SLOs") != std::string::npos);
  CHECK(plan.find("\"series\":\"misses the SLOs\"") != std::string::npos);
  CHECK(plan.find("on the front, misses") == std::string::npos);
}

TEST_CASE("report detects the folder kind by the files present") {
  fs::path w = work_dir("detect");
  seeds_fixture(w / "seeds");
  compare_fixture(w / "compare");
  sweep_fixture(w / "sweep", false);
  plan_fixture(w / "plan");
  CHECK(sim::detect_report_kind((w / "seeds").string()) == sim::ReportKind::seeds);
  CHECK(sim::detect_report_kind((w / "compare").string()) == sim::ReportKind::compare);
  CHECK(sim::detect_report_kind((w / "sweep").string()) == sim::ReportKind::sweep);
  CHECK(sim::detect_report_kind((w / "plan").string()) == sim::ReportKind::plan);
  write(w / "seeds" / "summary.json", "{}");  // a seeds folder with a run's summary too: still seeds
  CHECK(sim::detect_report_kind((w / "seeds").string()) == sim::ReportKind::seeds);
  CHECK_THROWS_AS(sim::detect_report_kind((w / "nope").string()), sim::ReportInputError);
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
