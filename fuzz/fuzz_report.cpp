// Harness 6: bytes -> the files of one output folder -> `schedsim report DIR`
// (sim::report_command, sim/report.hpp, docs/report.md). The first byte chooses the folder kind
// (value mod 5: run, seeds, compare, sweep, plan); the rest is cut at each line `%%` (the
// separator "\n%%\n") into the kind's files, in this order (a missing part: no such file):
//   run      summary.json, tasks.csv, timeseries.csv, groups.csv, scenario.resolved.json
//   seeds    seeds_summary.json, seeds.csv
//   compare  compare.json, compare_groups.csv
//   sweep    sweep_summary.csv, sweep.csv
//   plan     plan.json
// The Vega runtimes are three tiny stand-ins ($SCHEDSIM_REPORT_ASSETS), so each run measures the
// readers and the page, not the copying of 1 MB of JavaScript. Checks: exit 0 or 2 (1 would be
// the environment: it cannot happen here), no exception or sanitizer report; exit 2 prints one
// line `schedsim report: FILE: PROBLEM` and writes no report.html; exit 0 writes report.html in
// which the input cannot open or close a <script> element (exactly the page's five) and whose
// chart data is valid JSON. SCHEDSIM_FUZZ_VERBOSE=1 prints each exit status and stderr.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.hpp"
#include "sim/outputs/report.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSeparator = "\n%%\n";

const std::vector<std::vector<const char*>> kFiles = {
    {"summary.json", "tasks.csv", "timeseries.csv", "groups.csv", "scenario.resolved.json"},
    {"seeds_summary.json", "seeds.csv"},
    {"compare.json", "compare_groups.csv"},
    {"sweep_summary.csv", "sweep.csv"},
    {"plan.json"},
};

std::vector<std::string_view> split_parts(std::string_view in, std::size_t max) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max) {
    const auto at = in.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(in.substr(0, at));
    in.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(in);
  return parts;
}

std::size_t count_ci(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t i = 0; i + what.size() <= text.size(); ++i) {
    bool eq = true;
    for (std::size_t k = 0; k < what.size() && eq; ++k)
      eq = std::tolower(static_cast<unsigned char>(text[i + k])) == what[k];
    n += eq ? 1 : 0;
  }
  return n;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::prefer_memory_tmpdir();
  fuzz::isolate_data_root();
  const fs::path assets = fs::path(fuzz::scratch_dir()) / "report-assets";
  fs::create_directories(assets);
  for (const char* f : {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js"})
    std::ofstream(assets / f) << "/* " << f << " stand-in */\n";
  ::setenv("SCHEDSIM_REPORT_ASSETS", assets.c_str(), 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const fs::path dir = fs::path(fuzz::scratch_dir()) / "report";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) fuzz::fail("cannot create " + dir.string());

  const auto& files = kFiles[data[0] % kFiles.size()];
  const auto parts = split_parts(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), files.size());
  for (std::size_t i = 0; i < parts.size(); ++i)
    fuzz::write_temp(reinterpret_cast<const std::uint8_t*>(parts[i].data()), parts[i].size(), std::string("report/") + files[i]);

  std::ostringstream out, err;
  const int rc = sim::report_command(dir.string(), out, err);
  const std::string e = err.str();
  if (fuzz::verbose()) std::cerr << "report exit " << rc << "\n" << e;
  fuzz::check(rc == 0 || rc == 2, "report exit status " + std::to_string(rc) + "; stderr: " + e);
  const fs::path html = dir / "report.html";
  if (rc == 2) {
    fuzz::check(e.rfind("schedsim report: ", 0) == 0, "exit 2 message does not start with `schedsim report: `: " + e);
    fuzz::check(e.size() > 18 && e.find('\n') == e.size() - 1, "exit 2 message is not one line: " + e);
    fuzz::check(!fs::exists(html, ec), "exit 2 but report.html was written");
    return 0;
  }
  fuzz::check(e.empty(), "exit 0 with a message on stderr: " + e);
  fuzz::check(fs::is_regular_file(html, ec), "exit 0 but no report.html");
  const std::string page = slurp(html);
  // The page has exactly five script elements: three runtimes, the chart data, the drawing code.
  fuzz::check(count_ci(page, "<script") == 5, "report.html has " + std::to_string(count_ci(page, "<script")) +
                                                 " `<script` (expected 5): the input opened a script element");
  fuzz::check(count_ci(page, "</script") == 5, "report.html has " + std::to_string(count_ci(page, "</script")) +
                                                  " `</script` (expected 5): the input closed a script element");
  const std::string open = "<script type=\"application/json\" id=\"schedsim-report-data\">";
  const auto at = page.find(open);
  fuzz::check(at != std::string::npos, "report.html without its chart data");
  const auto from = at + open.size();
  const auto to = page.find("</script>", from);
  fuzz::check(nlohmann::json::accept(page.substr(from, to - from)), "the chart data of report.html is not valid JSON");
  return 0;
}
