// Internal helpers shared by the trace readers (not part of the public API).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/io/gzip.hpp"
#include "sim/io/limits.hpp"
#include "sim/io/traces.hpp"

namespace sim::io::detail {

/// Whole file as bytes; gzip streams (magic 1f 8b) are decompressed. At most `max_bytes` bytes
/// are read and at most `max_bytes` are produced by decompression: more throws TraceError naming
/// the file and the limit. Throws TraceError.
std::string read_file(const std::string& path, std::uint64_t max_bytes);

/// Appends sanitize_name(raw, fallback) to `out` (what is already in `out`, a prefix such as
/// "swf-", is kept): a reader names each row's task in place, without the temporaries of
/// `prefix + sanitize_name(...)`.
void append_sanitized_name(std::string& out, std::string_view raw, std::string_view fallback);

/// The file's bytes as stored (gzip not decompressed), with read_file's checks and limit.
std::string read_raw(const std::string& path, std::uint64_t max_bytes);

/// A field of a row: its text (trimmed of blanks) and the 1-based character column where it starts.
struct Field {
  std::string_view text;
  std::size_t column = 1;
};

/// Thrown inside a row handler; the reader loop turns it into TraceError or a skipped row.
struct RowError {
  std::size_t column;
  std::string message;
};

[[noreturn]] inline void row_fail(std::size_t column, std::string message) {
  throw RowError{column, std::move(message)};
}

/// Iterates lines of a buffer (LF or CRLF), 1-based line numbers.
class LineReader {
 public:
  explicit LineReader(std::string_view data) : data_(data) {
    if (data_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 BOM
  }
  bool next(std::string_view& line) {
    if (pos_ >= data_.size()) return false;
    std::size_t end = data_.find('\n', pos_);
    if (end == std::string_view::npos) end = data_.size();
    line = data_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  std::size_t number() const { return number_; }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
  std::size_t number_ = 0;
};

/// The lines of a trace file (LineReader's lines, numbers and errors over read_file's text)
/// without holding the decompressed text whole: a gzip file is inflated piece by piece as the
/// lines are taken (GzipStream), so only the compressed bytes and the current piece are held
/// (HPC2N: 3 MB instead of 19 MB of text beside the tasks). A plain file is read whole. A
/// line's view is valid until the next call. rewind() starts again from line 1 (a second pass
/// inflates the file again).
class TraceLines {
 public:
  TraceLines(const std::string& path, std::uint64_t max_bytes)
      : path_(path), max_bytes_(max_bytes), raw_(read_raw(path, max_bytes)) {
    rewind();
  }
  TraceLines(const TraceLines&) = delete;  // the stream and the lines view raw_
  TraceLines& operator=(const TraceLines&) = delete;
  void rewind() {
    number_ = 0;
    eof_ = false;
    if (is_gzip(raw_)) {
      gz_ = std::make_unique<GzipStream>(raw_, max_bytes_, path_);
      buf_.clear();
      pos_ = 0;
      bom_pending_ = true;
    } else {
      gz_.reset();
      plain_ = LineReader(raw_);
    }
  }
  bool next(std::string_view& line) {
    if (!gz_) {
      if (!plain_.next(line)) return false;
      number_ = plain_.number();
      return true;
    }
    for (;;) {
      if (bom_pending_ && (buf_.size() - pos_ >= 3 || eof_)) {
        if (std::string_view(buf_).substr(pos_, 3) == "\xEF\xBB\xBF") pos_ += 3;  // UTF-8 BOM
        bom_pending_ = false;
      }
      if (!bom_pending_) {
        const std::size_t end = buf_.find('\n', pos_);
        if (end != std::string::npos || (eof_ && pos_ < buf_.size())) {
          const std::size_t stop = end == std::string::npos ? buf_.size() : end;
          line = std::string_view(buf_).substr(pos_, stop - pos_);
          if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
          pos_ = stop + 1;
          ++number_;
          return true;
        }
        if (eof_) return false;
      }
      const std::string_view piece = gz_->next();
      if (piece.empty()) {
        eof_ = true;
        continue;
      }
      buf_.erase(0, std::min(pos_, buf_.size()));  // keep only the line in progress
      pos_ = 0;
      buf_.append(piece);
    }
  }
  std::size_t number() const { return number_; }
  /// A gzip file's text size from its trailer (GzipStream::size_hint: the last member's size
  /// mod 2^32, a hint only); 0 for a plain file.
  std::uint64_t gzip_size_hint() const { return gz_ ? gz_->size_hint() : 0; }

 private:
  std::string path_;
  std::uint64_t max_bytes_;
  std::string raw_;                  // the file's bytes
  std::unique_ptr<GzipStream> gz_;   // null: raw_ is the text (plain_)
  LineReader plain_{std::string_view()};
  std::string buf_;                  // gzip: inflated text not yet taken as lines
  std::size_t pos_ = 0;
  std::size_t number_ = 0;
  bool eof_ = false;
  bool bom_pending_ = false;
};

inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

inline bool blank_line(std::string_view line) {
  for (char c : line)
    if (!is_blank(c)) return false;
  return true;
}

/// Splits on `sep`, trimming blanks around each field. A field may be quoted as in RFC 4180
/// (`"a,b"`, `"say ""hi"""`; blanks around the quotes are allowed); its text is then the
/// unquoted content (kept in thread-local storage until the next call on this thread). A
/// quote that is not closed on the line, text after a closing quote, or a quote inside an
/// unquoted field fails the row (row_fail, 1-based column of the quote).
inline void split_csv(std::string_view line, char sep, std::vector<Field>& out) {
  out.clear();
  const bool quoted = line.find('"') != std::string_view::npos;
  thread_local std::deque<std::string> unescaped;  // references stay valid across push_back
  if (quoted) unescaped.clear();
  std::size_t start = 0;
  while (true) {
    std::size_t b = start;
    while (b < line.size() && is_blank(line[b])) ++b;
    if (quoted && b < line.size() && line[b] == '"') {
      std::string text;
      std::size_t i = b + 1;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            text.push_back('"');
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        text.push_back(line[i++]);
      }
      if (!closed) row_fail(b + 1, "the quote `\"` that opens this field is not closed on the line");
      while (i < line.size() && is_blank(line[i])) ++i;
      if (i < line.size() && line[i] != sep)
        row_fail(i + 1, "text after the closing quote of a quoted field (expected the separator or the end of the line)");
      out.push_back(Field{unescaped.emplace_back(std::move(text)), b + 1});
      if (i >= line.size()) break;
      start = i + 1;
      continue;
    }
    std::size_t end = line.find(sep, start);
    std::size_t stop = end == std::string_view::npos ? line.size() : end;
    std::size_t e = stop;
    while (e > b && is_blank(line[e - 1])) --e;
    if (quoted)
      if (const auto q = line.substr(b, e - b).find('"'); q != std::string_view::npos)
        row_fail(b + q + 1, "a quote `\"` inside an unquoted field (quote the whole field and double the quote)");
    out.push_back(Field{line.substr(b, e - b), b + 1});
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

/// The 8 bytes at `p`, one high bit (0x80) per byte that is a blank (is_blank), in the bytes'
/// order of memory (the first byte in the lowest byte on a little-endian machine). Exact: each
/// byte's test (`x == 0` as `~(((x & 0x7f) + 0x7f) | x) & 0x80`) carries into no other byte.
inline std::uint64_t blank_bytes8(const char* p) {
  constexpr std::uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL, highs = 0x8080808080808080ULL;
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  auto zero_bytes = [](std::uint64_t x) { return ~(((x & low7) + low7) | x) & highs; };
  return zero_bytes(w ^ 0x2020202020202020ULL) | zero_bytes(w ^ 0x0909090909090909ULL);
}

/// Bit k set when byte k of the 64 (at most) bytes at `p` is a blank (is_blank); `len` <= 64.
inline std::uint64_t blank_mask(const char* p, std::size_t len) {
  std::uint64_t mask = 0;
  std::size_t k = 0;
  if constexpr (std::endian::native == std::endian::little)
    for (; k + 8 <= len; k += 8)  // byte j's high bit (blank_bytes8) to bit j: no two products overlap
      mask |= (((blank_bytes8(p + k) >> 7) * 0x0102040810204080ULL) >> 56) << k;
  for (; k < len; ++k) mask |= std::uint64_t(is_blank(p[k])) << k;
  return mask;
}

/// Splits on runs of blanks (SWF: fixed-width columns padded with spaces). The line is read 64
/// bytes at a time as a mask of its blanks (blank_mask); a field starts at a non-blank byte
/// after a blank one (or the line's start) and ends at the next blank (or the line's end).
inline void split_ws(std::string_view line, std::vector<Field>& out) {
  out.clear();
  const char* const base = line.data();
  const std::size_t n = line.size();
  std::uint64_t before_blank = 1;  // the byte before the chunk was a blank (the line's start counts as one)
  std::size_t start = 0;
  for (std::size_t c = 0; c < n; c += 64) {
    const std::size_t len = std::min<std::size_t>(64, n - c);
    std::uint64_t blanks = blank_mask(base + c, len);
    if (len < 64) blanks |= ~std::uint64_t{0} << len;  // past the end: blank (ends the last field)
    const std::uint64_t text = ~blanks;
    const std::uint64_t starts = text & ((blanks << 1) | before_blank);
    const std::uint64_t ends = blanks & ((text << 1) | (before_blank ^ 1));
    for (std::uint64_t edges = starts | ends; edges != 0; edges &= edges - 1) {
      const std::size_t bit = std::size_t(std::countr_zero(edges));
      if ((starts >> bit) & 1) start = c + bit;
      else out.push_back(Field{line.substr(start, c + bit - start), start + 1});
    }
    before_blank = blanks >> 63;
  }
  if (n > 0 && n % 64 == 0 && before_blank == 0) out.push_back(Field{line.substr(start, n - start), start + 1});
}

/// The first `N` fields of a line split on runs of blanks (the fields and 1-based columns of
/// split_ws), how many fields the line has, and the column of field N + 1 (0 when there is
/// none). For a line with no byte below 0x20 but the tab, as every row a reader handles
/// (for_each_row refuses the others first, text_problem): a byte is then a blank exactly when it
/// is at most 0x20, one comparison per byte. No vector is filled: each field is two offsets
/// (an SWF row: N = 18, of which a reader reads 7).
template <std::size_t N>
struct FixedFields {
  std::string_view line;
  std::array<std::uint32_t, N> begin{}, end{};  ///< 0-based offsets of field k in `line` (k < count)
  std::size_t count = 0;                        ///< fields on the line (may exceed N)
  std::size_t next_column = 0;                  ///< 1-based column of field N + 1; 0 when count <= N
  /// Field k (< min(count, N)) as split_ws gives it.
  Field operator[](std::size_t k) const {
    return Field{std::string_view(line.data() + begin[k], end[k] - begin[k]), std::size_t(begin[k]) + 1};
  }
};
template <std::size_t N>
inline void split_ws_fixed(std::string_view line, FixedFields<N>& out) {
  static_assert(limits::max_trace_line_bytes < (std::size_t{1} << 32), "offsets are 32-bit");
  out.line = line;
  out.next_column = 0;
  std::size_t n = 0;
  auto add = [&](std::size_t b, std::size_t e) {
    if (n < N) {
      out.begin[n] = std::uint32_t(b);
      out.end[n] = std::uint32_t(e);
    } else if (n == N) {
      out.next_column = b + 1;
    }
    ++n;
  };
  const std::size_t len = line.size();
  constexpr std::size_t kCopy = 254;  // a row up to this long is walked in a copy with two sentinels
  if (len <= kCopy) {
    unsigned char buf[kCopy + 2];
    std::memcpy(buf, line.data(), len);
    buf[len] = 'x';  // text: stops a walk over blanks at the end of the line
    buf[len + 1] = 0;  // a blank: stops the walk over a field that runs to the end of the line
    const unsigned char* p = buf;
    const unsigned char* const stop = buf + len;
    for (;;) {
      while (*p <= 0x20) ++p;
      if (p == stop) break;
      const unsigned char* const start = p;
      while (*p > 0x20) ++p;
      if (p > stop) {  // the field ran into the sentinel: it ends the line
        add(std::size_t(start - buf), len);
        break;
      }
      add(std::size_t(start - buf), std::size_t(p - buf));
    }
  } else {
    const auto* const base = reinterpret_cast<const unsigned char*>(line.data());
    const unsigned char* p = base;
    const unsigned char* const stop = base + len;
    for (;;) {
      while (p != stop && *p <= 0x20) ++p;
      if (p == stop) break;
      const unsigned char* const start = p;
      while (p != stop && *p > 0x20) ++p;
      add(std::size_t(start - base), std::size_t(p - base));
    }
  }
  out.count = n;
}

/// The value of [+-]?[0-9]{1,15} spanning [first, last) (every such integer is exact in a
/// double, so it is the value std::from_chars reads, -0 included), or nullopt for any other text.
inline std::optional<double> short_integer(const char* first, const char* last) {
  const bool negative = first != last && *first == '-';
  if (first != last && (*first == '-' || *first == '+')) ++first;
  if (first == last || last - first > 15) return std::nullopt;
  std::int64_t v = 0;
  for (const char* p = first; p != last; ++p) {
    if (*p < '0' || *p > '9') return std::nullopt;
    v = v * 10 + (*p - '0');
  }
  return negative ? -double(v) : double(v);
}

/// The whole field as a number (std::from_chars, no locale; a leading '+' is taken; a floating
/// point value must be finite), or nullopt when it is not one.
template <class T>
std::optional<T> number_of(const Field& f) {
  T value{};
  const char* first = f.text.data();
  const char* last = first + f.text.size();
  if constexpr (std::is_same_v<T, double>)  // most fields of a trace are short integers
    if (auto v = short_integer(first, last)) return *v;
  if constexpr (std::is_same_v<T, long long>)  // exact as a double too: the same value from_chars reads
    if (auto v = short_integer(first, last)) return static_cast<long long>(*v);
  if (first != last && *first == '+') ++first;  // from_chars rejects a leading '+'
  auto [ptr, ec] = std::from_chars(first, last, value);
  bool bad = f.text.empty() || ec != std::errc{} || ptr != last;
  if constexpr (std::is_floating_point_v<T>) bad = bad || !std::isfinite(value);  // no nan / inf
  if (bad) return std::nullopt;
  return value;
}

/// Parses a whole field as a number (number_of). `what` names the field in messages, e.g.
/// "field 4 (num_gpu)". Throws RowError (via row_fail) when the field is not a number.
template <class T>
T parse_number(const Field& f, std::string_view what) {
  if (auto v = number_of<T>(f)) return *v;
  std::string msg = std::string(what) + ": expected ";
  msg += std::is_integral_v<T> ? "an integer" : "a number";
  msg += ", got '" + std::string(f.text) + "'";
  row_fail(f.column, std::move(msg));
}

/// "field N (name)" for messages.
inline std::string field_name(std::size_t index0, std::string_view name) {
  return "field " + std::to_string(index0 + 1) + " (" + std::string(name) + ")";
}

/// A field's 0-based index and name, spelled as field_name() only when a message needs it (a
/// reader that parses every field of 10^5 rows builds no string for a valid one).
struct FieldName {
  std::size_t index0;
  std::string_view name;
};

/// parse_number with the field named lazily: the message is the one of
/// parse_number(f, field_name(what.index0, what.name)). Throws RowError (via row_fail).
template <class T>
T parse_number(const Field& f, FieldName what) {
  if (auto v = number_of<T>(f)) return *v;
  return parse_number<T>(f, std::string_view(field_name(what.index0, what.name)));  // throws its message
}

/// parse_number(f, what) for a double or a long long with the common field, a short integer
/// (short_integer: [+-]?[0-9]{1,15}, exact in a double, -0 included), read inline without
/// number_of's checks; any other text goes to parse_number (the same value or the same message).
template <class T>
[[gnu::always_inline]] inline T parse_short_number(const Field& f, FieldName what) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, long long>);
  if (auto v = short_integer(f.text.data(), f.text.data() + f.text.size())) return static_cast<T>(*v);
  return parse_number<T>(f, what);
}

/// `FILE:LINE:COLUMN: message`.
std::string located(const std::string& path, std::size_t line, std::size_t column,
                    const std::string& message);

/// Runs `handle(line_view, fields)` for every data line, turning RowError into TraceError or a
/// counted skip. The handler returns false to stop reading (limit reached).
template <class Lines, class Handler>
void for_each_row(const std::string& path, Lines& lines,
                  const TraceOptions& opts, std::size_t& skipped, Handler&& handle) {
  std::string_view line;
  while (lines.next(line)) {
    if (line.size() > limits::max_trace_line_bytes)
      throw TraceError(located(path, lines.number(), 1,
                               "line longer than " + std::to_string(limits::max_trace_line_bytes) +
                                   " bytes (the limit for one trace line)"));
    if (blank_line(line)) continue;
    try {
      // Trace text ends up in outputs (names, GPU models): the output text rule applies.
      if (auto bad = text_problem(line)) row_fail(bad->offset + 1, "row text " + bad->rule);
      if (!handle(line)) return;
    } catch (const RowError& e) {
      if (!opts.skip_bad_rows) throw TraceError(located(path, lines.number(), e.column, e.message));
      ++skipped;
    }
  }
}

/// Column positions found from a CSV header by name; -1 = absent.
template <std::size_t N>
struct Header {
  std::array<int, N> index{};
  std::vector<std::string> names;  // as in the file, for messages
};

template <std::size_t N>
Header<N> read_header(const std::string& path, LineReader& lines,
                      const std::array<std::string_view, N>& wanted, std::size_t required) {
  std::string_view line;
  while (lines.next(line) && blank_line(line)) {
  }
  if (lines.number() == 0 || blank_line(line))
    throw TraceError(located(path, std::max<std::size_t>(lines.number(), 1), 1,
                                     "empty file: expected a CSV header"));
  std::vector<Field> fields;
  try {
    split_csv(line, ',', fields);
  } catch (const RowError& e) {  // the header is not a row: never skipped
    throw TraceError(located(path, lines.number(), e.column, "header: " + e.message));
  }
  Header<N> h;
  h.index.fill(-1);
  std::unordered_map<std::string_view, std::size_t> first_column;  // name -> 0-based index
  for (std::size_t i = 0; i < fields.size(); ++i) {
    h.names.emplace_back(fields[i].text);
    // A column named twice is ambiguous (which one holds the values?): refused. Unnamed
    // columns (a pandas index) are never looked up.
    if (!fields[i].text.empty())
      if (const auto [it, fresh] = first_column.emplace(fields[i].text, i); !fresh)
        throw TraceError(located(path, lines.number(), fields[i].column,
                                 "header names column '" + std::string(fields[i].text) + "' twice (columns " +
                                     std::to_string(it->second + 1) + " and " + std::to_string(i + 1) + ")"));
    for (std::size_t w = 0; w < N; ++w)
      if (fields[i].text == wanted[w]) h.index[w] = static_cast<int>(i);
  }
  for (std::size_t w = 0; w < required; ++w)
    if (h.index[w] < 0) {
      std::string expected;
      for (std::size_t k = 0; k < required; ++k) {
        if (k) expected.push_back(',');
        expected.append(wanted[k]);
      }
      throw TraceError(located(path, lines.number(), 1,
                                       "header lacks column '" + std::string(wanted[w]) +
                                           "' (expected at least " + expected + ")"));
    }
  return h;
}

/// The row must have exactly as many fields as the header.
inline void check_width(std::string_view line, const std::vector<Field>& f, std::size_t expected) {
  if (f.size() == expected) return;
  if (f.size() > expected)
    row_fail(f[expected].column, "expected " + std::to_string(expected) + " fields, got " +
                                     std::to_string(f.size()));
  row_fail(line.size() + 1, "expected " + std::to_string(expected) + " fields, got " +
                                std::to_string(f.size()));
}

/// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with huge pages (Linux
/// madvise MADV_HUGEPAGE, when transparent huge pages are enabled for such requests): a large
/// buffer written once, as a trace's task vector (HPC2N: 65 MB, 16 000 first-touch page faults
/// of 4 KiB), then faults once per 2 MiB. A hint: no effect on the contents, ignored when it
/// fails or elsewhere. Buffers under 4 MiB are left alone.
void advise_huge_pages(const void* p, std::size_t bytes);

/// Validates the TraceCfg knobs shared by all readers (time_scale > 0). Throws TraceError.
void check_cfg(const TraceCfg& cfg);

/// Common task fields: user, resource type, pool for reserved.
void init_task(TaskCfg& t, const TraceCfg& cfg, std::string_view user);

/// The task and node value rules of scenario files (limits.hpp, check_task_values /
/// check_node_values) applied to a task or node built from a trace row: the first problem fails
/// the row (`FILE:LINE:1: task `NAME`: FIELD: VALUE: RULE`).
/// `check` (a check_task_* function) of task `t`; its first problem fails the row.
inline void fail_row_on_task_problem(const TaskCfg& t, void (*check)(const TaskCfg&, const ProblemFn&)) {
  std::string msg;
  check(t, [&](const std::string& field, const std::string& value, const std::string& rule) {
    if (msg.empty()) msg = "task `" + t.name + "`: " + field + ": " + value + ": " + rule;
  });
  if (!msg.empty()) row_fail(1, std::move(msg));
}
inline void check_row_task(const TaskCfg& t) { fail_row_on_task_problem(t, check_task_values); }
inline void check_row_node(const NodeCfg& n) {
  std::string msg;
  check_node_values(n, [&](const std::string& field, const std::string& value, const std::string& rule) {
    if (msg.empty()) msg = "node `" + n.name + "`: " + field + ": " + value + ": " + rule;
  });
  if (!msg.empty()) row_fail(1, std::move(msg));
}
/// check_row_task for the rows of one trace, whose tasks differ from the reader's prototype
/// task (built before the first row) only in check_task_shape_values' fields: the other values
/// are checked once, on the prototype. The same first problem as check_row_task: when the
/// prototype breaks an other-value rule, every row is checked whole.
/// The report function is built once (not per row); a row's first problem fails it as
/// fail_row_on_task_problem does.
class RowTaskCheck {
 public:
  explicit RowTaskCheck(const TaskCfg& prototype)
      : report_([this](const std::string& field, const std::string& value, const std::string& rule) {
          if (msg_.empty()) msg_ = "task `" + row_->name + "`: " + field + ": " + value + ": " + rule;
        }) {
    check_task_other_values(prototype, [this](const std::string&, const std::string&, const std::string&) { others_ok_ = false; });
  }
  RowTaskCheck(const RowTaskCheck&) = delete;  // report_ refers to this object
  RowTaskCheck& operator=(const RowTaskCheck&) = delete;
  void operator()(const TaskCfg& t) const {
    row_ = &t;
    (others_ok_ ? check_task_shape_values : check_task_values)(t, report_);
    if (!msg_.empty()) row_fail(1, std::exchange(msg_, std::string()));
  }

 private:
  bool others_ok_ = true;
  mutable const TaskCfg* row_ = nullptr;  // the row being checked (for report_'s message)
  mutable std::string msg_;               // its first problem
  ProblemFn report_;
};
/// A trace brings at most limits::max_tasks tasks (the row is refused before it is stored).
inline void check_row_count(std::size_t stored) {
  if (static_cast<std::int64_t>(stored) >= limits::max_tasks)
    row_fail(1, "more than " + std::to_string(limits::max_tasks) + " tasks (the limit for a scenario)");
}
/// Capacity to reserve for a vector of rows: never more than a small bound (the file size says
/// nothing trustworthy about the row count).
inline std::size_t reserve_hint(std::size_t guess) { return std::min<std::size_t>(guess, std::size_t{1} << 16); }

inline bool limit_reached(const TraceCfg& cfg, std::size_t n) { return cfg.limit && n >= *cfg.limit; }

}  // namespace sim::io::detail
