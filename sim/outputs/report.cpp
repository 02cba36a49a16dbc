// `schedsim report DIR` (sim/report.hpp, docs/report.md): reads a run / seeds / compare / sweep /
// plan / fill folder, checks its files, and writes one self-contained HTML page with Vega-Lite charts
// (rendered by the inlined vega, vega-lite and vega-embed runtimes, svg renderer) and tables.
// Every chart's data is embedded in its spec under plain field names (t, gpus, mean, lo, hi,
// ...): PATH columns such as `cluster.pools[a].count` would otherwise be read as nested fields.
// This file: the folder's kind, the runtimes' lookup and the command. The parts
// (report_detail.hpp): reading the files (report_read.cpp), the page of a run folder
// (report_run.cpp), the seeds / compare / sweep / plan pages (report_pages.cpp), the blocks and
// the HTML rendering (report_html.cpp).
#include "sim/outputs/report.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/io/diagnostics.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/outputs/report_detail.hpp"

namespace sim {

namespace fs = std::filesystem;
using report_detail::esc;
using report_detail::Page;
using report_detail::read_text;
using report_detail::render;

namespace {

Page build_page(const std::string& dir) {
  Page page;
  const fs::path d(dir);
  switch (detect_report_kind(dir)) {
    case ReportKind::plan: report_detail::plan_page(d, page); break;
    case ReportKind::sweep: report_detail::sweep_page(d, page); break;
    case ReportKind::compare: report_detail::compare_page(d, page); break;
    case ReportKind::seeds: report_detail::seeds_page(d, page); break;
    case ReportKind::run: report_detail::run_page(d, page); break;
    case ReportKind::fill: report_detail::fill_page(d, page); break;
  }
  return page;
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
                                                      {"summary.json", ReportKind::run},
                                                      {"fill_curves.csv", ReportKind::fill},
                                                      {"fill.csv", ReportKind::fill}};
  for (const auto& [f, kind] : files)
    if (fs::is_regular_file(d / f, ec)) return kind;
  throw ReportInputError(esc(dir) +
                         ": no schedsim outputs found: expected summary.json (schedsim run), seeds_summary.json (run --seeds), "
                         "compare.json (compare), sweep_summary.csv (sweep), plan.json (plan) or fill_curves.csv / fill.csv (fill)");
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
