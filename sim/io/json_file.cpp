// The shared JSON reader (sim/io/json_file.hpp): file checks, size limit, depth limit, and a
// SAX parse that locates every error and duplicate key.
#include "sim/io/json_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <unordered_map>

#include <fmt/format.h>

namespace sim::io {

using json = nlohmann::json;

namespace {

std::string json_key_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}
std::string json_index_path(const std::string& parent, std::size_t i) { return parent + "[" + std::to_string(i) + "]"; }

/// 1-based line and column of byte `offset` of `text` (the column counts bytes).
std::pair<int, int> line_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  return {line, static_cast<int>(offset - line_start) + 1};
}

Diagnostic malformed(const std::string& file, std::string_view text, std::size_t offset, const std::string& msg) {
  const auto [line, column] = line_column(text, offset);
  Diagnostic d{Diagnostic::Severity::error, file, fmt::format("line {}, column {}", line, column), "",
               "malformed JSON: " + msg};
  d.line = line;
  d.column = column;
  return d;
}

/// Input iterator over the text that records the offset of the furthest byte the lexer read, so
/// SAX events (which carry no position) can be located.
struct TrackingIter {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char* base = nullptr;
  std::size_t* furthest = nullptr;
  reference operator*() const {
    const auto off = static_cast<std::size_t>(p - base);
    if (off > *furthest) *furthest = off;
    return *p;
  }
  TrackingIter& operator++() {
    ++p;
    return *this;
  }
  TrackingIter operator++(int) {
    TrackingIter t = *this;
    ++p;
    return t;
  }
  bool operator==(const TrackingIter& o) const { return p == o.p; }
  bool operator!=(const TrackingIter& o) const { return p != o.p; }
};

/// Builds the DOM (nlohmann's own SAX DOM builder, no exceptions) and on the way records every
/// duplicate key with both positions, and the first error (any nlohmann exception kind: syntax,
/// number overflow, ...) with its position.
template <class Json>
class CheckedDom {
 public:
  struct Duplicate {
    std::string path;
    std::string key;
    std::size_t first = 0, again = 0;  // byte offsets of the opening quotes
  };

  CheckedDom(Json& root, std::string_view text, const std::size_t* furthest)
      : dom_(root, /*allow_exceptions=*/false), text_(text), furthest_(furthest) {}

  bool null() { return value(), dom_.null(); }
  bool boolean(bool v) { return value(), dom_.boolean(v); }
  bool number_integer(typename Json::number_integer_t v) { return value(), dom_.number_integer(v); }
  bool number_unsigned(typename Json::number_unsigned_t v) { return value(), dom_.number_unsigned(v); }
  bool number_float(typename Json::number_float_t v, const std::string& s) { return value(), dom_.number_float(v, s); }
  bool string(std::string& v) { return value(), dom_.string(v); }
  bool binary(typename Json::binary_t& v) { return value(), dom_.binary(v); }
  bool start_object(std::size_t n) {
    value();
    frames_.push_back(Frame{});
    return dom_.start_object(n);
  }
  bool key(std::string& k) {
    Frame& f = frames_.back();
    f.key = k;
    const std::size_t at = opening_quote(*furthest_);
    auto [it, inserted] = f.keys.emplace(k, at);
    if (!inserted) duplicates.push_back({path(), k, it->second, at});
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    value();
    Frame f;
    f.array = true;
    frames_.push_back(std::move(f));
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& /*token*/, const nlohmann::detail::exception& ex) {
    error_offset = position == 0 ? 0 : position - 1;  // position: bytes read, the last one offending
    std::string msg = ex.what();
    if (!msg.empty() && msg.front() == '[')
      if (auto close = msg.find("] "); close != std::string::npos) msg = msg.substr(close + 2);
    if (auto pos = msg.find("column "); pos != std::string::npos)
      if (auto colon = msg.find(": ", pos); colon != std::string::npos) msg = msg.substr(colon + 2);
    error = msg;
    return false;
  }

  std::vector<Duplicate> duplicates;
  std::optional<std::string> error;
  std::size_t error_offset = 0;

 private:
  struct Frame {
    bool array = false;
    std::size_t count = 0;  // arrays: elements seen so far
    std::string key;        // objects: the current key
    std::unordered_map<std::string, std::size_t> keys;
  };
  void value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().count;
  }
  std::string path() const {
    std::string p;
    for (const auto& f : frames_) p = f.array ? json_index_path(p, f.count - 1) : json_key_path(p, f.key);
    return p;
  }
  /// The key's closing quote is the last byte read; walk back to the unescaped opening quote.
  std::size_t opening_quote(std::size_t close) const {
    for (std::size_t i = close; i-- > 0;) {
      if (text_[i] != '"') continue;
      std::size_t slashes = 0;
      while (slashes < i && text_[i - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) return i;
    }
    return close;
  }
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::string_view text_;
  const std::size_t* furthest_;
  std::vector<Frame> frames_;
};

}  // namespace

template <class Json>
std::optional<Json> parse_json_text(std::string_view text, const std::string& file_label,
                                    std::vector<Diagnostic>& diagnostics) {
  // A NUL byte would end nlohmann's input early and the rest of the file would be ignored.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    diagnostics.push_back(
        malformed(file_label, text, nul, "NUL byte (JSON is text; what follows it would be ignored)"));
    return std::nullopt;
  }
  // Refuse absurd nesting before parsing: dumping or walking such a value recurses once per level
  // and overflowed the stack (SIGSEGV on `[[[[...]]]]` 100000 deep). No scenario nests this deep.
  {
    constexpr int k_max_depth = limits::max_json_depth;
    int depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
        continue;
      }
      if (c == '"') in_string = true;
      else if (c == '[' || c == '{') {
        if (++depth > k_max_depth) {
          diagnostics.push_back(
              malformed(file_label, text, i, fmt::format("nested deeper than {} levels", k_max_depth)));
          return std::nullopt;
        }
      } else if (c == ']' || c == '}') {
        --depth;
      }
    }
  }
  Json j;
  {
    std::size_t furthest = 0;
    CheckedDom<Json> sax(j, text, &furthest);
    const TrackingIter first{text.data(), text.data(), &furthest};
    const TrackingIter last{text.data() + text.size(), text.data(), &furthest};
    bool ok = false;
    try {
      ok = Json::sax_parse(first, last, &sax);
    } catch (const nlohmann::json::exception& e) {  // defensive: every nlohmann exception kind is reported
      sax.error = e.what();
      sax.error_offset = furthest;
    }
    if (!ok || sax.error) {
      diagnostics.push_back(malformed(file_label, text, sax.error_offset, sax.error.value_or("invalid JSON")));
      return std::nullopt;
    }
    if (!sax.duplicates.empty()) {
      for (const auto& d : sax.duplicates) {
        const auto [l1, c1] = line_column(text, d.first);
        const auto [l2, c2] = line_column(text, d.again);
        Diagnostic diag{Diagnostic::Severity::error, file_label, d.path, nlohmann::json(d.key).dump(),
                        fmt::format("duplicate key (at line {}, column {} and again at line {}, column {})", l1, c1,
                                    l2, c2)};
        diagnostics.push_back(std::move(diag));
      }
      return std::nullopt;
    }
  }
  return j;
}

template std::optional<nlohmann::json> parse_json_text<nlohmann::json>(std::string_view, const std::string&, std::vector<Diagnostic>&);
template std::optional<nlohmann::ordered_json> parse_json_text<nlohmann::ordered_json>(std::string_view, const std::string&,
                                                                                       std::vector<Diagnostic>&);

std::optional<std::string> read_text_stream(std::istream& in, const std::string& label, std::string_view what,
                                            std::vector<Diagnostic>& diagnostics, std::uint64_t max_bytes) {
  auto fail = [&](std::string rule) -> std::optional<std::string> {
    diagnostics.push_back({Diagnostic::Severity::error, label, "", "", std::move(rule)});
    return std::nullopt;
  };
  // Read in chunks: stop at the first NUL byte (reported with its position) and refuse input
  // larger than the limit (so /dev/zero or an endless stream is refused, not read forever).
  std::string text;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    const auto* nul = static_cast<const char*>(std::memchr(buf.data(), 0, got));
    if (nul) {
      text.append(buf.data(), static_cast<std::size_t>(nul - buf.data()) + 1);
      break;
    }
    if (text.size() + got > max_bytes) return fail(fmt::format("larger than {} bytes, the limit for {}", max_bytes, what));
    text.append(buf.data(), got);
  }
  if (in.bad()) return fail("cannot read " + std::string(what));
  return text;
}

TextRead read_text_file(const std::string& path, std::string_view what, std::vector<Diagnostic>& diagnostics,
                        const JsonReadOptions& options) {
  TextRead r;
  auto fail = [&](std::string rule, bool environment) {
    diagnostics.push_back({Diagnostic::Severity::error, path, "", "", std::move(rule)});
    r.environment = environment;
    return r;
  };
  // Check the kind of file first (through symbolic links): opening a FIFO would block, and a
  // device such as /dev/zero or /dev/urandom never ends.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) return fail("cannot read file", false);  // no such file: the input is wrong
    return fail(fmt::format("cannot read file: {}", std::strerror(e)), true);
  }
  if (S_ISDIR(st.st_mode)) return fail(fmt::format("is a directory, not {}", what), false);
  const bool pipe = S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !(pipe && options.allow_pipe)) {
    const char* kind = S_ISCHR(st.st_mode) ? "a character device" : S_ISBLK(st.st_mode) ? "a block device"
                       : pipe                ? "a pipe"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return fail(fmt::format("is {}, not {} (a regular file is required)", kind, what), false);
  }
  if (S_ISREG(st.st_mode) && std::uint64_t(st.st_size) > options.max_bytes)
    return fail(fmt::format("larger than {} bytes, the limit for {}", options.max_bytes, what), false);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(fmt::format("cannot read file: {}", std::strerror(errno)), true);
  r.text = read_text_stream(in, path, what, diagnostics, options.max_bytes);
  if (!r.text && in.bad()) r.environment = true;
  return r;
}

}  // namespace sim::io
