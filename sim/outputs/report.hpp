// `schedsim report OUTDIR`: one self-contained HTML page (OUTDIR/report.html) with Vega-Lite
// charts and tables of a run folder, a `run --seeds` folder, a compare, sweep or plan folder
// (docs/report.md). The Vega, Vega-Lite and vega-embed runtimes are inlined into the page: it
// opens without a network.
#pragma once

#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>

namespace sim {

/// A problem with the folder's files (exit 2). what() is one line: `FILE: PROBLEM` (for JSON
/// shape problems `FILE: JSON.PATH: VALUE: RULE`), escaped with io::escape_for_diagnostic.
struct ReportInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The kind of folder a report is made of, detected by the files present (first match wins):
/// plan.json, sweep_summary.csv, compare.json, seeds_summary.json, summary.json, fill_curves.csv
/// or fill.csv (schedsim fill).
enum class ReportKind { plan, sweep, compare, seeds, run, fill };

/// The three JavaScript runtimes inlined into the page (minified UMD builds, as installed from
/// npm by tools/install-deps.sh into tools/report/node_modules).
struct ReportRuntimes {
  std::string vega, vega_lite, vega_embed;  ///< file contents
  std::string from;                         ///< the folder they were read from
};

/// Looks for vega.min.js, vega-lite.min.js and vega-embed.min.js in $SCHEDSIM_REPORT_ASSETS when
/// it is set (only there), else in <binary folder>/../share/schedsim/report, then in the source
/// tree's tools/report/node_modules (a build tree). In each folder the files are looked up flat
/// and in the npm layout (node_modules/vega/build/vega.min.js, ...). Returns nullopt, with
/// `searched` listing the folders tried, when no folder has all three.
std::optional<ReportRuntimes> find_report_runtimes(std::string& searched);

/// Detects the folder's kind; throws ReportInputError naming the folder and the files expected
/// when it holds none of them (or is not a folder).
ReportKind detect_report_kind(const std::string& dir);

/// The page for folder `dir`: reads and checks its files (throws ReportInputError for a
/// malformed CSV or JSON file, with the file and the problem), builds the charts (Vega-Lite
/// specs; data embedded as JSON with every `<` written as \u003c, so task names holding
/// `</script>` cannot end the script) and the tables (HTML-escaped), and inlines `rt`.
/// Deterministic: same files, same page. Returns the HTML text.
std::string build_report_html(const std::string& dir, const ReportRuntimes& rt);

/// The number of charts build_report_html puts on the page of `dir` (each a Vega-Lite view).
/// Throws like build_report_html. Used by tests and printed by the command.
int report_chart_count(const std::string& dir);

/// The files `schedsim report --format` writes (docs/report.md "Export").
struct ReportFormats {
  bool html = true;  ///< DIR/report.html
  bool svg = false;  ///< DIR/report-svg/NN-TITLE.svg, one per chart (vega's SVG renderer under node)
  bool pdf = false;  ///< DIR/report.pdf (the page printed by headless Chromium)
};

/// Parses the `--format` list: comma-separated `html`, `svg`, `pdf` (each at most once, at least
/// one). Throws ReportInputError `--format: VALUE: RULE` otherwise (exit 2).
ReportFormats parse_report_formats(const std::string& list);

/// `schedsim report DIR --format ...`: the files of `formats`, published all together after
/// every one was made (nothing is replaced when one fails). Exit 2 as below; exit 1 also when
/// node (svg) or chromium (pdf) is missing ($SCHEDSIM_NODE / $SCHEDSIM_CHROMIUM, else PATH),
/// fails or takes more than 180 s.
int report_command(const std::string& dir, const ReportFormats& formats, std::ostream& out, std::ostream& err);

/// `schedsim report DIR`: writes DIR/report.html atomically (sim/publish.hpp
/// write_file_atomic). Returns 0 on success; 2 when the folder or its files are wrong (one line
/// `FILE: PROBLEM` on `err`); 1 when the runtimes are missing (a message saying to run
/// tools/install-deps.sh) or the page cannot be written.
int report_command(const std::string& dir, std::ostream& out, std::ostream& err);

}  // namespace sim
