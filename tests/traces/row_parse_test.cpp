// The trace readers' per-row fast paths (issue 38): splitting on blanks 64 bytes at a time, short
// integers read without std::from_chars, and a row's task checked against the trace's prototype.
// An SWF row is split by split_ws_fixed (one comparison per byte, no vector) and its numbers
// read by parse_short_number (short integers inline).
// Each must give exactly what the plain code gives: same fields and columns, same numbers (the
// sign of -0 included), same first problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/io/traces_detail.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using sim::io::detail::Field;

namespace {

/// split_ws as it was written before the 8-byte scan: one byte at a time.
std::vector<Field> split_bytewise(std::string_view line) {
  std::vector<Field> out;
  std::size_t i = 0, n = line.size();
  while (i < n) {
    while (i < n && detail::is_blank(line[i])) ++i;
    if (i >= n) break;
    std::size_t b = i;
    while (i < n && !detail::is_blank(line[i])) ++i;
    out.push_back(Field{line.substr(b, i - b), b + 1});
  }
  return out;
}

/// number_of<double> as it was before the short-integer path: from_chars only.
std::optional<double> from_chars_only(std::string_view text) {
  double value = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc{} || ptr != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

/// The first problem of check_row_task(t), or "" when it passes.
std::string row_problem(const TaskCfg& t, bool by_prototype, const TaskCfg& prototype) {
  try {
    if (by_prototype) detail::RowTaskCheck{prototype}(t);
    else detail::check_row_task(t);
  } catch (const detail::RowError& e) {
    return std::to_string(e.column) + ": " + e.message;
  }
  return "";
}

}  // namespace

TEST_CASE("split_ws gives the fields and columns of a byte-by-byte split", "[traces][swf]") {
  // Bytes a row may hold: blanks, text, and bytes whose low 7 bits are a blank's (0xa0, 0x89)
  // or that sit next to one in value (0x1f, 0x21, 0x08, 0x0a): the 8-byte test must not take
  // them for blanks.
  const std::string alphabet = std::string(" \t\t  a9-.\x1f\x21\x08\x0a") + "\xa0\x89\xff";
  std::mt19937_64 rng(38);
  for (int run = 0; run < 20000; ++run) {
    std::string line;
    // Lengths around and across the 64-byte chunks (64 and 128 exactly, a field open at the end).
    const std::size_t len = run % 10 == 0 ? 64 * (1 + rng() % 2) : rng() % 200;
    for (std::size_t i = 0; i < len; ++i) line.push_back(alphabet[rng() % alphabet.size()]);
    std::vector<Field> got;
    detail::split_ws(line, got);
    const std::vector<Field> want = split_bytewise(line);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      INFO("line '" << line << "' field " << k);
      REQUIRE(got[k].text == want[k].text);
      REQUIRE(got[k].column == want[k].column);
      REQUIRE(got[k].text.data() == want[k].text.data());
    }
  }
  // A real SWF row (fixed-width columns padded with spaces).
  std::vector<Field> f;
  detail::split_ws("    12  831600   2094  14400    32   -1   -1    32  14400   -1  1   4   1  -1  1  -1  -1  -1", f);
  REQUIRE(f.size() == 18);
  CHECK(f[0].text == "12");
  CHECK(f[0].column == 5);
  CHECK(f[17].text == "-1");
}

TEST_CASE("split_ws_fixed gives split_ws's first fields, count and next column on rows without control bytes", "[traces][swf]") {
  // What for_each_row lets through to a reader: no byte below 0x20 but the tab (bytes of 0x80
  // and above, 0x21 and 0x7e are text; 0x20 and the tab are blanks).
  const std::string alphabet = std::string(" \t\t  a9-.\x21\x7e") + "\xa0\x89\xff";
  std::mt19937_64 rng(3838);
  for (int run = 0; run < 20000; ++run) {
    std::string line;
    // Lengths on both sides of the copied walk's limit (254 bytes), a field open at the end.
    const std::size_t len = run % 10 == 0 ? 250 + rng() % 10 : rng() % 400;
    for (std::size_t i = 0; i < len; ++i) line.push_back(alphabet[rng() % alphabet.size()]);
    detail::FixedFields<18> got;
    detail::split_ws_fixed(line, got);
    const std::vector<Field> want = split_bytewise(line);
    INFO("line '" << line << "'");
    REQUIRE(got.count == want.size());
    REQUIRE(got.next_column == (want.size() > 18 ? want[18].column : 0));
    for (std::size_t k = 0; k < std::min<std::size_t>(18, want.size()); ++k) {
      REQUIRE(got[k].text == want[k].text);
      REQUIRE(got[k].column == want[k].column);
      REQUIRE(got[k].text.data() == want[k].text.data());
    }
  }
  detail::FixedFields<18> f;
  detail::split_ws_fixed("    12  831600   2094  14400    32   -1   -1    32  14400   -1  1   4   1  -1  1  -1  -1  -1", f);
  REQUIRE(f.count == 18);
  CHECK(f[0].text == "12");
  CHECK(f[0].column == 5);
  CHECK(f[17].text == "-1");
  CHECK(f.next_column == 0);
}

TEST_CASE("a short integer field reads as from_chars reads it into a long long", "[traces][swf]") {
  auto from_chars_ll = [](std::string_view text) -> std::optional<long long> {
    long long value = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    if (first != last && *first == '+') ++first;
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (text.empty() || ec != std::errc{} || ptr != last) return std::nullopt;
    return value;
  };
  for (const std::string text : {"0", "-0", "+0", "7", "007", "-1", "+5", "123456789012345", "-123456789012345", "1234567890123456",
                                 "9223372036854775807", "9223372036854775808", "-9223372036854775808", "99999999999999999999", "+-5",
                                 "--5", "-", "+", "", "1e3", "3.5", " 1", "1 ", "12a"}) {
    INFO("field '" << text << "'");
    CHECK(detail::number_of<long long>(Field{text, 1}) == from_chars_ll(text));
  }
  std::mt19937_64 rng(77);
  for (int run = 0; run < 20000; ++run) {
    std::string text;
    const int len = int(rng() % 22);
    for (int i = 0; i < len; ++i) text.push_back("0123456789-+."[rng() % (i == 0 ? 13 : 10)]);
    INFO("field '" << text << "'");
    REQUIRE(detail::number_of<long long>(Field{text, 1}) == from_chars_ll(text));
  }
}

/// parse_number's or parse_short_number's value (as text, sign of 0 included) or message.
template <class T, bool kShort>
std::string parsed(const std::string& text) {
  try {
    const Field f{text, 4};
    const T v = kShort ? detail::parse_short_number<T>(f, detail::FieldName{3, "run time"})
                       : detail::parse_number<T>(f, detail::FieldName{3, "run time"});
    if constexpr (std::is_same_v<T, double>) return (std::signbit(v) ? "-" : "+") + std::to_string(std::fabs(v));
    else return std::to_string(v);
  } catch (const detail::RowError& e) {
    return std::to_string(e.column) + ": " + e.message;
  }
}

TEST_CASE("parse_short_number gives parse_number's value or message", "[traces][swf]") {
  std::mt19937_64 rng(3801);
  const std::string alphabet = std::string("0123456789-+.e ") + "/:\x80\xff";
  for (int run = 0; run < 40000; ++run) {
    std::string text;
    const int len = int(rng() % 20);
    for (int i = 0; i < len; ++i) text.push_back(i == 0 || rng() % 8 == 0 ? alphabet[rng() % alphabet.size()] : char('0' + rng() % 10));
    INFO("field '" << text << "'");
    REQUIRE(parsed<double, true>(text) == parsed<double, false>(text));
    REQUIRE(parsed<long long, true>(text) == parsed<long long, false>(text));
  }
  for (const std::string text : {"-0", "0", "-", "", "999999999999999", "-999999999999999", "1000000000000000", "9223372036854775808"}) {
    INFO("field '" << text << "'");
    CHECK(parsed<double, true>(text) == parsed<double, false>(text));
    CHECK(parsed<long long, true>(text) == parsed<long long, false>(text));
  }
  CHECK(parsed<double, true>("-0") == "-0.000000");
}

TEST_CASE("a short integer field reads as from_chars reads it", "[traces][swf]") {
  for (const std::string text :
       {"0", "-0", "+0", "7", "007", "-1", "+5", "123456789012345", "-123456789012345", "1234567890123456", "99999999999999999999",
        "+-5", "-+5", "--5", "++5", "-", "+", "", "1e3", "3.5", "-1.0", "0x10", " 1", "1 ", "12a", "inf", "nan", "1e999"}) {
    INFO("field '" << text << "'");
    const auto got = detail::number_of<double>(Field{text, 1});
    const auto want = from_chars_only(text);
    REQUIRE(got.has_value() == want.has_value());
    if (got) {
      CHECK(*got == *want);
      CHECK(std::signbit(*got) == std::signbit(*want));  // "-0" is -0.0, as from_chars reads it
    }
  }
  std::mt19937_64 rng(7);
  for (int run = 0; run < 20000; ++run) {
    std::string text;
    const int len = int(rng() % 18);
    for (int i = 0; i < len; ++i) text.push_back("0123456789-+."[rng() % (i == 0 ? 13 : 10)]);
    const auto got = detail::number_of<double>(Field{text, 1});
    const auto want = from_chars_only(text);
    INFO("field '" << text << "'");
    REQUIRE(got.has_value() == want.has_value());
    if (got) {
      REQUIRE(*got == *want);
      REQUIRE(std::signbit(*got) == std::signbit(*want));
    }
  }
}

TEST_CASE("a row checked against its trace's prototype fails as check_row_task does", "[traces][swf]") {
  TaskCfg prototype;
  prototype.name = "swf-1";
  prototype.duration_s = 60;
  prototype.replica.emplace().gpus = 0;
  auto row = [&](double submit, int workers, double vcpu) {
    TaskCfg t = prototype;
    t.submit_s = submit;
    t.workers = workers;
    t.replica->vcpu = vcpu;
    return t;
  };
  // Valid, then each shape rule a row can break.
  for (const TaskCfg& t : {row(5, 3, 1), row(-1, 3, 1), row(5, -2, 1), row(5, 3, -4), row(-1, -2, -4)})
    CHECK(row_problem(t, true, prototype) == row_problem(t, false, prototype));
  CHECK(row_problem(row(-1, 3, 1), true, prototype).find("submit_s") != std::string::npos);
  {  // One checker for many rows (as a reader uses it): a failed row leaves nothing to the next.
    const detail::RowTaskCheck check(prototype);
    for (const TaskCfg& t : {row(-1, 3, 1), row(5, 3, 1), row(5, -2, 1), row(5, -2, 1), row(5, 3, 1)}) {
      std::string got;
      try {
        check(t);
      } catch (const detail::RowError& e) {
        got = std::to_string(e.column) + ": " + e.message;
      }
      CHECK(got == row_problem(t, false, prototype));
    }
  }
  INFO(row_problem(row(5, 3, 1), true, prototype));
  CHECK(row_problem(row(5, 3, 1), true, prototype).empty());
  // A prototype that breaks a rule of the other values (set from the trace's settings): every
  // row fails, with the shape problem first when it has one (the order of check_task_values).
  TaskCfg bad = prototype;
  bad.precheck_s = -3;
  prototype = bad;
  for (const TaskCfg& t : {row(5, 3, 1), row(-1, 3, 1)}) {
    const std::string got = row_problem(t, true, prototype);
    CHECK_FALSE(got.empty());
    CHECK(got == row_problem(t, false, prototype));
  }
  CHECK(row_problem(row(5, 3, 1), true, prototype).find("precheck_s") != std::string::npos);
  CHECK(row_problem(row(-1, 3, 1), true, prototype).find("submit_s") != std::string::npos);
}

/// sanitize_name as it was written before names were built in place: a string of its own.
std::string sanitize_reference(std::string_view raw, std::string_view fallback) {
  std::string out;
  for (char c : raw) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out.push_back(c);
    else if (!out.empty() && out.back() != '-') out.push_back('-');
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? std::string(fallback) : out;
}

TEST_CASE("a task name written in place is the prefix and sanitize_name's text", "[traces][swf]") {
  // The prefix ends in '-' (as "swf-" does): a raw text that sanitizes to nothing, or starts
  // with characters that become '-', must neither strip nor repeat the prefix's '-'.
  for (std::string_view raw : {"", "-", "--", "_x", "x_", "123", "abc123", "Job_42.A", "..", "a--b", "\xff\x80", "-7-"}) {
    for (std::string_view prefix : {"", "swf-", "philly-"}) {
      std::string out(prefix);
      detail::append_sanitized_name(out, raw, "job");
      CHECK(out == std::string(prefix) + sanitize_reference(raw, "job"));
    }
    CHECK(sanitize_name(raw, "job") == sanitize_reference(raw, "job"));
  }
  std::mt19937_64 rng(38);
  const std::string alphabet = "aZ09-_. \t/:\x80\xff";
  for (int i = 0; i < 20000; ++i) {
    std::string raw(rng() % 12, ' ');
    for (char& c : raw) c = alphabet[rng() % alphabet.size()];
    std::string out = "swf-";
    detail::append_sanitized_name(out, raw, "job");
    REQUIRE(out == "swf-" + sanitize_reference(raw, "job"));
    REQUIRE(sanitize_name(raw, "pod") == sanitize_reference(raw, "pod"));
  }
}

}  // namespace SCHEDSIM_UNITY_ID
