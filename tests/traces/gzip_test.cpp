// gzip traces are inflated with zlib (sim/io/gzip.hpp, docs/traces.md "SWF"): one member,
// concatenated members, and each way a stream can be broken (corrupt, truncated, trailing bytes).
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>
#include <zlib.h>

#include "sim/io/gzip.hpp"
#include "sim/io/traces.hpp"
#include "sim/io/traces_detail.hpp"
#include "trace_test_util.hpp"

#include "tests/common/unity.hpp"

namespace SCHEDSIM_UNITY_ID {  // one namespace per test file (tests/common/unity.hpp)

using namespace sim::io;
using trace_test::error_of;

namespace {

/// `text` as one gzip member (RFC 1952), compressed by zlib.
std::string gz(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

TEST_CASE("gunzip: one member and concatenated members inflate to the original bytes", "[traces][gzip]") {
  const std::string a(200000, 'a');  // more than one 64 KiB output chunk
  const std::string b = "1 0 0 10 1 -1 -1 1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n";
  CHECK(is_gzip(gz(a)));
  CHECK_FALSE(is_gzip(b));
  CHECK(gunzip(gz(a), 1 << 20, "t.gz") == a);
  CHECK(gunzip(gz(a) + gz(b), 1 << 20, "t.gz") == a + b);  // as `cat x.gz y.gz` makes
  CHECK(gunzip(gz(""), 1 << 20, "t.gz").empty());
}

TEST_CASE("gunzip: the limit counts inflated bytes and stops at it", "[traces][gzip]") {
  const std::string a(1000, 'x');
  CHECK(gunzip(gz(a), 1000, "t.gz") == a);  // exactly the limit: accepted
  CHECK(error_of([&] { gunzip(gz(a), 999, "t.gz"); }) ==
        "trace: 't.gz': decompresses to more than 999 bytes (the limit for one trace file)");
}

TEST_CASE("gunzip: corrupt, truncated and trailing-garbage streams throw naming the file", "[traces][gzip]") {
  const std::string good = gz(std::string(5000, 'q'));
  std::string corrupt = good;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0x55);  // inside the deflate data
  CHECK_THAT(error_of([&] { gunzip(corrupt, 1 << 20, "c.gz"); }), Catch::StartsWith("trace: 'c.gz': bad gzip stream: "));
  CHECK(error_of([&] { gunzip(good.substr(0, good.size() - 4), 1 << 20, "t.gz"); }) ==
        "trace: 't.gz': bad gzip stream: the stream is truncated");
  CHECK(error_of([&] { gunzip(good + "junk", 1 << 20, "j.gz"); }) ==
        "trace: 'j.gz': bad gzip stream: trailing data after the end of the stream");
  std::string bad_crc = good;
  bad_crc[bad_crc.size() - 6] = static_cast<char>(bad_crc[bad_crc.size() - 6] ^ 1);  // the CRC-32
  CHECK_THAT(error_of([&] { gunzip(bad_crc, 1 << 20, "crc.gz"); }), Catch::StartsWith("trace: 'crc.gz': bad gzip stream: "));
}

namespace {

using Lines = std::vector<std::pair<std::size_t, std::string>>;  // (line number, text)

/// Every line of `path` through detail::TraceLines, twice (the second pass after rewind()).
std::pair<Lines, Lines> trace_lines(const std::string& path) {
  sim::io::detail::TraceLines in(path, 1 << 24);
  std::pair<Lines, Lines> out;
  for (Lines* pass : {&out.first, &out.second}) {
    std::string_view l;
    while (in.next(l)) pass->emplace_back(in.number(), std::string(l));
    in.rewind();
  }
  return out;
}

/// Every line of `text` through detail::LineReader (what readers see of read_file's text).
Lines reader_lines(const std::string& text) {
  sim::io::detail::LineReader in(text);
  Lines out;
  std::string_view l;
  while (in.next(l)) out.emplace_back(in.number(), std::string(l));
  return out;
}

}  // namespace

TEST_CASE("TraceLines: a gzip file inflated piece by piece gives read_file's lines", "[traces][gzip]") {
  const trace_test::TempDir dir;
  auto write_file = [&](const std::string& name, const std::string& bytes) { return dir.write(name, bytes); };
  // Lines across the 64 KiB pieces, a BOM, CRLF, blank lines, no final newline, two members.
  std::string big;
  for (int i = 0; big.size() < 300000; ++i) big += std::string(std::size_t(i % 97), char('a' + i % 26)) + (i % 3 ? "\n" : "\r\n");
  const std::vector<std::string> texts = {
      "", "\n", "a", "a\nb", "a\n\nb\n", "\xEF\xBB\xBF; header\n1 2\r\n\n", "\xEF\xBB", "x\r", big, big + "tail"};
  int k = 0;
  for (const std::string& text : texts) {
    INFO("text " << k << " (" << text.size() << " bytes)");
    const Lines want = reader_lines(text);
    const auto [first, second] = trace_lines(write_file("lines-" + std::to_string(k) + ".gz", gz(text)));
    CHECK(first == want);
    CHECK(second == want);
    const auto [plain, plain2] = trace_lines(write_file("lines-" + std::to_string(k) + ".txt", text));
    CHECK(plain == want);
    CHECK(plain2 == want);
    ++k;
  }
  // Two members (as `cat a.gz b.gz`), the line split between them.
  const std::string split = gz(big.substr(0, 100001)) + gz(big.substr(100001));
  CHECK(trace_lines(write_file("lines-split.gz", split)).first == reader_lines(big));
}

TEST_CASE("TraceLines: gzip errors and the limit are gunzip's", "[traces][gzip]") {
  const trace_test::TempDir dir;
  auto write_file = [&](const std::string& name, const std::string& bytes) { return dir.write(name, bytes); };
  const std::string good = gz(std::string(5000, 'q') + "\n");
  const std::string trunc = write_file("trunc.gz", good.substr(0, good.size() - 4));
  CHECK(error_of([&] { trace_lines(trunc); }) == "trace: '" + trunc + "': bad gzip stream: the stream is truncated");
  const std::string junk = write_file("junk.gz", good + "junk");
  CHECK(error_of([&] { trace_lines(junk); }) == "trace: '" + junk + "': bad gzip stream: trailing data after the end of the stream");
  const std::string big = write_file("limit.gz", gz(std::string(1000, 'x')));
  CHECK(error_of([&] {
          sim::io::detail::TraceLines in(big, 999);
          std::string_view l;
          while (in.next(l)) {
          }
        }) == "trace: '" + big + "': decompresses to more than 999 bytes (the limit for one trace file)");
}

}  // namespace SCHEDSIM_UNITY_ID
