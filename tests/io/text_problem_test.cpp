// io::text_problem: the first byte that output text refuses, at every position of a line (the
// reader skips printable ASCII eight bytes at a time; a refused byte anywhere in or after such a
// block, or a tab, must still be found at its own offset; a line of printable ASCII is first
// tested 32 bytes at a time, so the lengths run past two such blocks).
#include <string>

#include <catch2/catch.hpp>

#include "sim/io/limits.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using sim::io::text_problem;

TEST_CASE("text_problem: a control character or DEL is found at its offset wherever it stands", "[io][text]") {
  for (const char bad : {'\0', '\x01', '\r', '\x1f', '\x7f'})
    for (std::size_t len = 1; len <= 80; ++len)
      for (std::size_t at = 0; at < len; ++at) {
        std::string s(len, 'a');
        s[at] = bad;
        const auto p = text_problem(s);
        REQUIRE(p);
        CHECK(p->offset == at);
        CHECK(p->rule.find("control characters") != std::string::npos);
      }
}

TEST_CASE("text_problem: invalid UTF-8 is found at its offset wherever it stands", "[io][text]") {
  for (const std::string& bad : {std::string("\xff"), std::string("\x80"), std::string("\xc0\xaf"), std::string("\xe2\x82")})
    for (std::size_t at = 0; at < 70; ++at) {
      const std::string s = std::string(at, '~') + bad;  // '~' (0x7e): the last printable byte
      const auto p = text_problem(s);
      REQUIRE(p);
      CHECK(p->offset == at);
      CHECK(p->rule == "must be valid UTF-8");
    }
}

TEST_CASE("text_problem: printable ASCII, tabs, newlines and valid UTF-8 pass at any length", "[io][text]") {
  std::string all;
  for (int c = 0x20; c < 0x7f; ++c) all.push_back(char(c));
  for (std::size_t len = 0; len <= all.size(); ++len) CHECK_FALSE(text_problem(all.substr(0, len)));
  CHECK_FALSE(text_problem("  279   707964\t58707  30999 \n  30  30999    -1   30  37980"));
  CHECK_FALSE(text_problem("job-\xc3\xa9t\xc3\xa9 \xe2\x82\xac 12345678 \xf0\x9f\x98\x80 end"));
}

}  // namespace SCHEDSIM_UNITY_ID
