// gzip traces are inflated with zlib (sim/io/gzip.hpp, docs/traces.md "SWF"): one member,
// concatenated members, and each way a stream can be broken (corrupt, truncated, trailing bytes).
#include <catch2/catch.hpp>

#include <string>
#include <zlib.h>

#include "sim/io/gzip.hpp"
#include "sim/io/traces.hpp"
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

}  // namespace SCHEDSIM_UNITY_ID
