// Internal to `schedsim report` (not part of the public API): the helpers shared by report*.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/io/limits.hpp"
#include "sim/outputs/report.hpp"

namespace sim::report_detail {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// ------------------------------------------------------------------ reading files (report_read.cpp)

/// `s` escaped for a diagnostic line (io::escape_for_diagnostic).
std::string esc(std::string_view s);

/// Throws ReportInputError `FILE: PROBLEM`.
[[noreturn]] void fail(const fs::path& file, const std::string& problem);

/// The whole file `p` through the shared reader (io::read_text_file): a regular file of at most
/// `max_bytes`; a missing, special or oversized file is the input's fault (ReportInputError,
/// exit 2), a read error the environment's (OutputError, exit 1).
std::string read_text(const fs::path& p, std::uint64_t max_bytes = io::limits::max_trace_bytes);

/// A finite number written entirely as `s` (a leading `+` allowed); nullopt otherwise.
std::optional<double> parse_double(std::string_view s);

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

/// The CSV file `file` (read_text, then parsed; ReportInputError when malformed).
Csv read_csv(const fs::path& file);

/// The JSON file `file` (at most io::limits::max_scenario_bytes; ReportInputError when malformed).
ojson read_json(const fs::path& file);

/// Throws ReportInputError `FILE: PATH: VALUE: RULE` (VALUE: `v` shortened, or the missing marker).
[[noreturn]] void fail_json(const fs::path& file, const std::string& path, const ojson* v, const std::string& rule);

/// obj[key]; fails (required key is missing) when absent. `path`: the JSON path of `obj`.
const ojson& member(const fs::path& file, const ojson& obj, const std::string& path, const char* key);

/// A number, or nullopt for null when `nullable`.
std::optional<double> jnum(const fs::path& file, const ojson& v, const std::string& path, bool nullable = false);

/// `{"METRIC": {keys...}, ...}` (seeds_summary.json, compare.json, plan points' metrics).
struct MetricRow {
  std::string metric;
  std::map<std::string, std::optional<double>> v;
};
std::vector<MetricRow> metric_object(const fs::path& file, const ojson& obj, const std::string& path,
                                     const std::vector<const char*>& keys);

// ------------------------------------------------------------------ page model (report_html.cpp)

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

/// `x` rounded to 4 significant digits for a table cell ("0.8", "1235", "123500", "-0.01235";
/// 1e15 and above or below 1e-4 in magnitude: "1.235e+20"); "" for nullopt. Files keep exact values.
std::string num_text(std::optional<double> x);

/// A duration of `seconds` in the unit that fits, 4 significant digits: "45 s" (below 1 min),
/// "12.5 min" (below 1 h), "3.25 h" (below 1 d), else "1.5 d"; "" for nullopt.
std::string duration_text(std::optional<double> seconds);

/// A table cell of metric `metric`: duration_text when the metric is in seconds (its name ends
/// in `_s`), else num_text.
std::string metric_text(std::string_view metric, std::optional<double> x);

/// A cell read from a file: num_text (or duration_text when `seconds`) of a number, else `s` as is.
std::string cell_text(const std::string& s, bool seconds = false);

/// An HTML table; `numeric[i]` right-aligns column i.
std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows);

/// A chart block: `spec` is its Vega-Lite spec.
Block chart(std::string title, std::string text, ojson spec);
/// A table (or note) block: `html` is inserted as is.
Block html_block(std::string title, std::string text, std::string html);
/// A block with a title and a text only.
Block note(std::string title, std::string text);

/// A Vega-Lite encoding channel: {"field": name, "type": type, "title": title}.
ojson field(const char* name, const char* type, const std::string& title);

/// The whole HTML page: `page`'s blocks (charts rendered by the inlined runtimes `rt`).
std::string render(const Page& page, const ReportRuntimes& rt);

// ------------------------------------------------------------------ pages, one per folder kind

/// The page of a run folder (summary.json, timeseries.csv, tasks.csv, groups.csv; report_run.cpp).
void run_page(const fs::path& dir, Page& page);
/// The pages of seeds_summary.json, compare.json, sweep_summary.csv and plan.json folders
/// (report_pages.cpp).
void seeds_page(const fs::path& dir, Page& page);
void compare_page(const fs::path& dir, Page& page);
void sweep_page(const fs::path& dir, Page& page);
void plan_page(const fs::path& dir, Page& page);
/// The page of a `plan --minimize` folder (plan.json with `minimize`; report_front.cpp): one chart
/// per SLO metric against the minimized metric, the Pareto front, the SLO line, the answer.
void plan_front_page(const fs::path& dir, const ojson& plan, Page& page);
/// The page of a `schedsim fill` folder (fill_curves.csv, else fill.csv; fill_summary.csv;
/// report_fill.cpp): allocated and fragmented GPUs against arrived GPUs, one line per policy
/// (mean over seeds) with the min..max band over seeds.
void fill_page(const fs::path& dir, Page& page);

// ------------------------------------------------------------------ export (report_export.cpp)

/// The program `$ENV` names (a path, or a name looked up in PATH), else `name` looked up in
/// PATH; nullopt when it is not an executable file.
std::optional<std::string> find_program(const char* env, const char* name);

/// Writes every chart of `page` as `out_dir/NN-SLUG.svg` (NN from 01 in page order, SLUG from its
/// title) with vega's SVG renderer under `node` (the runtimes of `rt`); `work` holds the program,
/// the job and the log. Returns the file names. Throws OutputError (exit 1) when node fails or
/// does not finish within 180 s, with the end of its output.
std::vector<std::string> export_svgs(const Page& page, const ReportRuntimes& rt, const std::string& node, const fs::path& out_dir,
                                     const fs::path& work);

/// Prints the page `html` to the PDF file `pdf` with `chromium --headless --print-to-pdf` (a
/// fresh profile in `work`). Throws OutputError (exit 1) when Chromium fails, writes no PDF or
/// does not finish within 180 s.
void export_pdf(const std::string& chromium, const fs::path& html, const fs::path& pdf, const fs::path& work);

}  // namespace sim::report_detail
