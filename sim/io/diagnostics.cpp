#include "sim/io/diagnostics.hpp"

#include <algorithm>
#include <cstdint>

namespace sim::io {

std::string escape_for_diagnostic(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto byte_escape = [&](unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else byte_escape(c);
      ++i;
      continue;
    }
    // UTF-8 sequence: decode and check (shortest form, no surrogates, <= U+10FFFF).
    std::size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? (c <= 0xef ? 3 : 0) : c >= 0xc2 ? 2 : 0;
    std::uint32_t cp = len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
    bool valid = len != 0 && i + len <= n;
    for (std::size_t k = 1; valid && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) valid = false;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    if (valid && ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
                  (cp >= 0xd800 && cp <= 0xdfff)))
      valid = false;
    if (!valid) {
      byte_escape(c);
      ++i;
      continue;
    }
    if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029) {
      out += "\\u{";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex[(cp >> shift) & 15];
      out += '}';
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string Diagnostic::str() const {
  std::string s = escape_for_diagnostic(file);
  s += ": ";
  if (severity == Severity::warning) s += "warning: ";
  if (!path.empty()) {
    s += escape_for_diagnostic(path);
    s += ": ";
  }
  if (!value.empty()) {
    s += escape_for_diagnostic(value);
    s += ": ";
  }
  s += escape_for_diagnostic(rule);
  return s;
}

std::size_t count_errors(const std::vector<Diagnostic>& diagnostics) {
  return static_cast<std::size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.is_error(); }));
}

}  // namespace sim::io
