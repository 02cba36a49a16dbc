// `schedsim report --format html,svg,pdf` (docs/report.md "Export"): one parseable SVG file per
// chart (vega's SVG renderer under node), the page as a PDF (headless Chromium) that pdftoppm
// renders, the option's errors, and the missing programs. The tests that need the Vega runtimes,
// node, chromium, python3 or poppler-utils (tools/install-deps.sh installs them) skip with a
// message when one is missing.
#include <catch2/catch.hpp>

#include "tests/common/files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>

#include "sim/outputs/report.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

namespace fs = std::filesystem;

namespace {

using testutil::slurp;

testutil::CommandResult sh(const std::string& cmd) { return testutil::run_command(cmd, "report-export"); }

testutil::CommandResult schedsim(const std::string& args, const std::string& env = "") {
  return sh((env.empty() ? "" : "env " + env + " ") + SCHEDSIM_BINARY + " " + args);
}

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

/// A run folder (all outputs) of a two-pool scenario with four tasks: 6 charts on its page.
fs::path export_run_folder(const fs::path& w) {
  fs::create_directories(w);
  write(w / "s.json", R"({"schema": "schedsim/v1", "name": "export-test", "seed": 3,
  "cluster": {"name": "c", "region": "r",
    "instance_specs": [{"name": "g8", "gpu_model": "A100", "gpus": 8, "vcpu": 32, "memory_gib": 256}],
    "pools": [{"name": "a", "kind": "shared", "node_groups": [{"prefix": "a-", "count": 2, "gpu_model": "A100",
               "gpus": 8, "vcpu": 96, "memory_gib": 960}]}]},
  "tasks": [
    {"name": "t1", "user": "u", "tenant": "team-a", "submit_s": 0, "type": "PyTorchJob", "workers": 1, "specs": ["g8"],
     "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 1000},
    {"name": "t2", "user": "v", "tenant": "team-b", "submit_s": 10, "type": "PyTorchJob", "workers": 0, "specs": ["g8"],
     "resource_type": "pay_as_you_go", "pool": "a", "duration_s": 300}]})");
  const auto r = schedsim("run " + (w / "s.json").string() + " --no-progress --outputs all --out " + (w / "run").string());
  REQUIRE(r.status == 0);
  return w / "run";
}

/// Every program named in `programs` is on PATH, else `why` says which one is missing.
bool have_programs(std::initializer_list<const char*> programs, std::string& why) {
  std::string searched;
  if (!sim::find_report_runtimes(searched)) {
    why = "skipped: the Vega runtimes are missing (looked in " + searched + "); run tools/install-deps.sh";
    return false;
  }
  for (const char* p : programs)
    if (sh(std::string("command -v ") + p).status != 0) {
      why = std::string("skipped: ") + p + " is not installed; run tools/install-deps.sh";
      return false;
    }
  return true;
}

}  // namespace

TEST_CASE("report --format svg,pdf writes one parseable SVG per chart and a PDF that pdftoppm renders page by page") {
  std::string why;
  if (!have_programs({"node", "chromium", "python3", "pdfinfo", "pdftoppm"}, why)) {
    WARN(why);
    return;
  }
  const fs::path w = testutil::fresh_dir("report-export");
  const fs::path run = export_run_folder(w);
  const auto r = schedsim("report " + run.string() + " --format svg,pdf");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_FALSE(fs::exists(run / "report.html"));  // html is not in the list
  const int charts = sim::report_chart_count(run.string());
  REQUIRE(charts == 6);  // capacity class, queue, pool, CDF, wait split, per-tenant delay
  CHECK(r.out.find("(6 SVG files)") != std::string::npos);
  // The names: NN-TITLE.svg in page order.
  CHECK(fs::is_regular_file(run / "report-svg" / "01-gpu-allocation-by-capacity-class.svg"));
  CHECK(fs::is_regular_file(run / "report-svg" / "02-queue-length.svg"));
  int files = 0;
  for (const auto& e : fs::directory_iterator(run / "report-svg")) {
    ++files;
    INFO(e.path());
    CHECK(e.path().extension() == ".svg");
    // Well-formed XML whose root is an svg element with vega's marks.
    const auto p = sh("python3 -c \"import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]).documentElement; "
                      "print(d.tagName, d.getAttribute('class'))\" " + e.path().string());
    CHECK(p.status == 0);
    CHECK(p.out == "svg marks\n");
  }
  CHECK(files == charts);
  // The PDF: the summary table and six charts do not fit on one page.
  REQUIRE(slurp(run / "report.pdf").rfind("%PDF-", 0) == 0);
  const auto info = sh("pdfinfo " + (run / "report.pdf").string() + " | sed -n 's/^Pages: *//p'");
  REQUIRE(info.status == 0);
  const int pages = std::stoi(info.out);
  CHECK(pages >= 2);
  REQUIRE(sh("pdftoppm -r 20 -png " + (run / "report.pdf").string() + " " + (w / "page").string()).status == 0);
  int pngs = 0;
  for (const auto& e : fs::directory_iterator(w))
    if (e.path().extension() == ".png" && fs::file_size(e.path()) > 0) ++pngs;
  CHECK(pngs == pages);
  // No scratch folder left behind.
  for (const auto& e : fs::directory_iterator(run)) CHECK(e.path().filename().string().rfind(".report-tmp-", 0) != 0);
  fs::remove_all(w);
}

TEST_CASE("report --format html writes the same page as report without --format") {
  std::string why;
  if (!have_programs({}, why)) {
    WARN(why);
    return;
  }
  const fs::path w = testutil::fresh_dir("report-export-html");
  const fs::path run = export_run_folder(w);
  REQUIRE(schedsim("report " + run.string()).status == 0);
  const std::string page = slurp(run / "report.html");
  fs::remove(run / "report.html");
  const auto r = schedsim("report " + run.string() + " --format html");
  REQUIRE(r.status == 0);
  CHECK(slurp(run / "report.html") == page);
  CHECK(r.out == "schedsim report: " + (run / "report.html").string() + " (6 charts)\n");
  CHECK_FALSE(fs::exists(run / "report-svg"));
  CHECK_FALSE(fs::exists(run / "report.pdf"));
  fs::remove_all(w);
}

TEST_CASE("report --format with an unknown, empty or repeated format exits 2 with one line, writing nothing") {
  const fs::path w = testutil::fresh_dir("report-export-bad");
  const fs::path run = export_run_folder(w);
  for (const auto& [arg, line] : {std::pair<std::string, std::string>{"html,png", "--format: png: must be html, svg or pdf"},
                                  {"html,", "--format: \"\": must be html, svg or pdf"},
                                  {"svg,svg", "--format: svg: listed twice"}}) {
    INFO(arg);
    const auto r = schedsim("report " + run.string() + " --format '" + arg + "'");
    CHECK(r.status == 2);
    CHECK(r.err.find("schedsim report: " + line) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(run / "report.html"));
  CHECK_FALSE(fs::exists(run / "report-svg"));
  fs::remove_all(w);
}

TEST_CASE("report --format svg without node and --format pdf without chromium exit 1 naming the program, writing nothing") {
  std::string why;
  if (!have_programs({}, why)) {
    WARN(why);
    return;
  }
  const fs::path w = testutil::fresh_dir("report-export-missing");
  const fs::path run = export_run_folder(w);
  auto r = schedsim("report " + run.string() + " --format html,svg", "SCHEDSIM_NODE=" + (w / "no-node").string());
  CHECK(r.status == 1);
  CHECK(r.err.find("--format svg needs node") != std::string::npos);
  CHECK(r.err.find("tools/install-deps.sh") != std::string::npos);
  r = schedsim("report " + run.string() + " --format html,pdf", "SCHEDSIM_CHROMIUM=" + (w / "no-chromium").string());
  CHECK(r.status == 1);
  CHECK(r.err.find("--format pdf needs chromium") != std::string::npos);
  // A chromium that fails: exit 1 with its output, nothing published.
  write(w / "bad-chromium", "#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n");
  fs::permissions(w / "bad-chromium", fs::perms::owner_all);
  r = schedsim("report " + run.string() + " --format html,pdf", "SCHEDSIM_CHROMIUM=" + (w / "bad-chromium").string());
  CHECK(r.status == 1);
  CHECK(r.err.find("exited with status 3") != std::string::npos);
  CHECK(r.err.find("cannot open display") != std::string::npos);
  CHECK_FALSE(fs::exists(run / "report.html"));
  CHECK_FALSE(fs::exists(run / "report-svg"));
  CHECK_FALSE(fs::exists(run / "report.pdf"));
  fs::remove_all(w);
}

}  // namespace SCHEDSIM_UNITY_ID
