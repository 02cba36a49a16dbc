// gzip decompression with zlib (see gzip.hpp).
#include "sim/io/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "sim/io/traces.hpp"

namespace sim::io {

bool is_gzip(std::string_view raw) {
  return raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b;
}

std::string gunzip(std::string_view raw, std::uint64_t max_bytes, const std::string& path) {
  auto bad = [&](const std::string& why) { return TraceError("trace: '" + path + "': bad gzip stream: " + why); };
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw bad("zlib could not start");
  struct End {
    z_stream& zs;
    ~End() { inflateEnd(&zs); }
  } end{zs};
  std::string out;
  // The trailer's ISIZE (the last member's uncompressed size mod 2^32) sizes the text once
  // instead of by doubling (a copy per doubling, up to twice the text held). Only a hint:
  // bounded by the limit and by deflate's largest ratio (1032:1); zlib checks the length and
  // the limit is still checked per chunk.
  if (raw.size() >= 18) {
    std::uint64_t isize = 0;
    for (int b = 3; b >= 0; --b) isize = (isize << 8) | static_cast<unsigned char>(raw[raw.size() - 4 + std::size_t(b)]);
    out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>({isize, max_bytes, std::uint64_t(raw.size()) * 1032})));
  }
  std::vector<char> buf(1 << 16);
  std::size_t pos = 0;  // input consumed
  constexpr std::size_t kMaxIn = std::numeric_limits<uInt>::max();
  for (;;) {
    if (zs.avail_in == 0 && pos < raw.size()) {  // feed the input in pieces uInt can count
      const std::size_t n = std::min(raw.size() - pos, kMaxIn);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + pos));
      zs.avail_in = static_cast<uInt>(n);
      pos += n;
    }
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t got = buf.size() - zs.avail_out;
    if (out.size() + got > max_bytes)
      throw TraceError("trace: '" + path + "': decompresses to more than " + std::to_string(max_bytes) +
                       " bytes (the limit for one trace file)");
    out.append(buf.data(), got);
    if (rc == Z_STREAM_END) {
      const std::size_t left = zs.avail_in + (raw.size() - pos);
      if (left == 0) return out;
      // Another member follows (concatenated gzip files), or trailing garbage.
      const std::string_view rest = raw.substr(raw.size() - left);
      if (!is_gzip(rest)) throw bad("trailing data after the end of the stream");
      if (inflateReset(&zs) != Z_OK) throw bad("zlib could not restart");
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && pos == raw.size()) throw bad("the stream is truncated");
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw bad(zs.msg ? zs.msg : "inflate error " + std::to_string(rc));
  }
}

}  // namespace sim::io
