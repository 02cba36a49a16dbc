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

#include <unistd.h>

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

ReportFormats parse_report_formats(const std::string& list) {
  ReportFormats f{false, false, false};
  std::string_view rest = list;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    bool* flag = name == "html" ? &f.html : name == "svg" ? &f.svg : name == "pdf" ? &f.pdf : nullptr;
    if (!flag)
      throw ReportInputError(fmt::format("--format: {}: must be html, svg or pdf (a comma-separated list)", esc(name.empty() ? "\"\"" : name)));
    if (*flag) throw ReportInputError(fmt::format("--format: {}: listed twice", esc(name)));
    *flag = true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return f;
}

namespace {

/// The scratch folder of one export (DIR/.report-tmp-PID), removed on every exit path.
struct ReportScratch {
  fs::path path;
  explicit ReportScratch(fs::path p) : path(std::move(p)) {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (!fs::create_directory(path, ec) || ec)
      throw OutputError(fmt::format("{}: cannot create the scratch folder: {}", path.string(), ec ? ec.message() : "exists"));
  }
  ~ReportScratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ReportScratch(const ReportScratch&) = delete;
  ReportScratch& operator=(const ReportScratch&) = delete;
};

void report_rename(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) throw OutputError(fmt::format("{}: cannot rename to {}: {}", from.string(), to.string(), ec.message()));
}

}  // namespace

namespace {

/// The page of folder `dir` and the Vega runtimes, or the exit status after one line on `err`:
/// input problems first (exit 2), whatever the runtimes; then missing runtimes (exit 1).
int report_page_and_runtimes(const std::string& dir, std::ostream& err, Page& page, std::optional<ReportRuntimes>& rt) {
  try {
    page = build_page(dir);
  } catch (const ReportInputError& e) {
    err << "schedsim report: " << e.what() << "\n";
    return io::exit_invalid_input;
  } catch (const OutputError& e) {
    err << "schedsim report: " << esc(e.what()) << "\n";
    return e.status;
  }
  std::string searched;
  rt = find_report_runtimes(searched);
  if (!rt) {
    err << "schedsim report: the Vega runtimes (vega.min.js, vega-lite.min.js, vega-embed.min.js) were not found (looked in "
        << esc(searched)
        << "); install them with tools/install-deps.sh (npm ci in tools/report), or set SCHEDSIM_REPORT_ASSETS to a folder "
           "holding them\n";
    return exit_environment;
  }
  return 0;
}

}  // namespace

int report_command(const std::string& dir, const ReportFormats& formats, std::ostream& out, std::ostream& err) {
  if (!formats.svg && !formats.pdf) return report_command(dir, out, err);
  Page page;
  std::optional<ReportRuntimes> rt;
  if (const int code = report_page_and_runtimes(dir, err, page, rt)) return code;
  const auto node = formats.svg ? report_detail::find_program("SCHEDSIM_NODE", "node") : std::optional<std::string>("");
  if (!node) {
    err << "schedsim report: --format svg needs node (Node.js) to run vega's SVG renderer, and none was found ($SCHEDSIM_NODE, "
           "else PATH); install it with tools/install-deps.sh (Debian package nodejs)\n";
    return exit_environment;
  }
  const auto chromium = formats.pdf ? report_detail::find_program("SCHEDSIM_CHROMIUM", "chromium") : std::optional<std::string>("");
  if (!chromium) {
    err << "schedsim report: --format pdf needs chromium (headless) to print the page, and none was found ($SCHEDSIM_CHROMIUM, "
           "else PATH); install it with tools/install-deps.sh (Debian package chromium)\n";
    return exit_environment;
  }
  const fs::path d(dir), html_file = d / "report.html", svg_dir = d / "report-svg", pdf_file = d / "report.pdf";
  int charts = 0;
  for (const auto& b : page.blocks) charts += b.chart ? 1 : 0;
  try {
    std::error_code ec;
    if (formats.svg && fs::exists(fs::symlink_status(svg_dir, ec)) && !fs::is_directory(fs::symlink_status(svg_dir, ec)))
      throw OutputRefused(svg_dir.string() + ": exists and is not a folder (a real folder only): not replaced");
    if (formats.pdf) refuse_non_regular(pdf_file.string(), pdf_file.string());
    if (formats.html) refuse_non_regular(html_file.string(), html_file.string());
    const std::string html = render(page, *rt);
    ReportScratch work(d / fmt::format(".report-tmp-{}", ::getpid()));
    std::vector<std::string> svgs;
    if (formats.svg) {
      fs::create_directory(work.path / "report-svg");
      svgs = report_detail::export_svgs(page, *rt, *node, work.path / "report-svg", work.path);
    }
    if (formats.pdf) {
      write_file_checked((work.path / "report.html").string(), html);
      report_detail::export_pdf(*chromium, work.path / "report.html", work.path / "report.pdf", work.path);
    }
    // Everything made: publish (the page, the charts' folder swapped whole, the PDF).
    if (formats.html) write_file_atomic(html_file.string(), html);
    if (formats.svg) {
      if (fs::exists(fs::symlink_status(svg_dir, ec))) report_rename(svg_dir, work.path / "old-report-svg");
      report_rename(work.path / "report-svg", svg_dir);
    }
    if (formats.pdf) report_rename(work.path / "report.pdf", pdf_file);
    if (formats.html) out << fmt::format("schedsim report: {} ({} charts)\n", html_file.string(), charts);
    if (formats.svg) out << fmt::format("schedsim report: {}/ ({} SVG files)\n", svg_dir.string(), svgs.size());
    if (formats.pdf) out << fmt::format("schedsim report: {}\n", pdf_file.string());
  } catch (const std::exception& e) {
    err << "schedsim report: " << esc(e.what()) << "\n";
    return output_exit_status(e);
  }
  return 0;
}

int report_command(const std::string& dir, std::ostream& out, std::ostream& err) {
  Page page;
  std::optional<ReportRuntimes> rt;
  if (const int code = report_page_and_runtimes(dir, err, page, rt)) return code;
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
