// `schedsim report`: reading and checking the folder's files (CSV and JSON readers, metric tables).
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/io/diagnostics.hpp"
#include "sim/io/json_file.hpp"
#include "sim/outputs/publish.hpp"
#include "sim/outputs/report_detail.hpp"

namespace sim::report_detail {

std::string esc(std::string_view s) { return io::escape_for_diagnostic(s); }

[[noreturn]] void fail(const fs::path& file, const std::string& problem) {
  throw ReportInputError(esc(file.string()) + ": " + problem);
}

/// The whole file `p` through the shared reader (io::read_text_file): a regular file of at most
/// `max_bytes`; a missing, special or oversized file is the input's fault (ReportInputError,
/// exit 2), a read error the environment's (OutputError, exit 1).
std::string read_text(const fs::path& p, std::uint64_t max_bytes) {
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

namespace {

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

}  // namespace

Csv read_csv(const fs::path& file) { return parse_csv(file, read_text(file)); }

ojson read_json(const fs::path& file) {
  const std::string text = read_text(file, io::limits::max_scenario_bytes);
  std::vector<io::Diagnostic> d;
  if (auto j = io::parse_json_text<ojson>(text, file.string(), d)) return std::move(*j);
  throw ReportInputError(d.empty() ? esc(file.string()) + ": malformed JSON" : d.front().str());
}

namespace {

std::string short_dump(const ojson& v) {
  std::string d = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (d.size() > 80) d = d.substr(0, 77) + "...";
  return d;
}

}  // namespace

[[noreturn]] void fail_json(const fs::path& file, const std::string& path, const ojson* v, const std::string& rule) {
  throw ReportInputError(
      fmt::format("{}: {}: {}: {}", esc(file.string()), esc(path), esc(v ? short_dump(*v) : io::missing_value), rule));
}

const ojson& member(const fs::path& file, const ojson& obj, const std::string& path, const char* key) {
  if (!obj.contains(key)) fail_json(file, path.empty() ? key : path + "." + key, nullptr, "required key is missing");
  return obj.at(key);
}

/// A number, or nullopt for null when `nullable`.
std::optional<double> jnum(const fs::path& file, const ojson& v, const std::string& path, bool nullable) {
  if (v.is_null() && nullable) return std::nullopt;
  if (!v.is_number()) fail_json(file, path, &v, nullable ? "must be a number or null" : "must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail_json(file, path, &v, "must be finite");
  return x;
}

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

}  // namespace sim::report_detail
