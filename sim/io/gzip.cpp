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

struct GzipStream::State {
  std::string_view raw;
  std::uint64_t max_bytes;
  std::string path;
  z_stream zs{};
  bool started = false, done = false;
  std::size_t pos = 0;       // input handed to zlib
  std::uint64_t total = 0;   // output so far
  std::vector<char> buf = std::vector<char>(1 << 16);
  TraceError bad(const std::string& why) const { return TraceError("trace: '" + path + "': bad gzip stream: " + why); }
};

GzipStream::GzipStream(std::string_view raw, std::uint64_t max_bytes, std::string path) : s_(std::make_unique<State>()) {
  s_->raw = raw;
  s_->max_bytes = max_bytes;
  s_->path = std::move(path);
  if (inflateInit2(&s_->zs, 16 + MAX_WBITS) != Z_OK) throw s_->bad("zlib could not start");
  s_->started = true;
}

GzipStream::~GzipStream() {
  if (s_ && s_->started) inflateEnd(&s_->zs);
}

std::uint64_t GzipStream::size_hint() const {
  const std::string_view raw = s_->raw;
  if (raw.size() < 18) return 0;
  std::uint64_t isize = 0;
  for (int b = 3; b >= 0; --b) isize = (isize << 8) | static_cast<unsigned char>(raw[raw.size() - 4 + std::size_t(b)]);
  return std::min<std::uint64_t>({isize, s_->max_bytes, std::uint64_t(raw.size()) * 1032});
}

std::string_view GzipStream::next() {
  State& st = *s_;
  z_stream& zs = st.zs;
  const std::string_view raw = st.raw;
  constexpr std::size_t kMaxIn = std::numeric_limits<uInt>::max();
  while (!st.done) {
    if (zs.avail_in == 0 && st.pos < raw.size()) {  // feed the input in pieces uInt can count
      const std::size_t n = std::min(raw.size() - st.pos, kMaxIn);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + st.pos));
      zs.avail_in = static_cast<uInt>(n);
      st.pos += n;
    }
    zs.next_out = reinterpret_cast<Bytef*>(st.buf.data());
    zs.avail_out = static_cast<uInt>(st.buf.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t got = st.buf.size() - zs.avail_out;
    if (st.total + got > st.max_bytes)
      throw TraceError("trace: '" + st.path + "': decompresses to more than " + std::to_string(st.max_bytes) +
                       " bytes (the limit for one trace file)");
    st.total += got;
    if (rc == Z_STREAM_END) {
      const std::size_t left = zs.avail_in + (raw.size() - st.pos);
      if (left == 0) {
        st.done = true;
      } else {
        // Another member follows (concatenated gzip files), or trailing garbage.
        const std::string_view rest = raw.substr(raw.size() - left);
        if (!is_gzip(rest)) throw st.bad("trailing data after the end of the stream");
        if (inflateReset(&zs) != Z_OK) throw st.bad("zlib could not restart");
      }
    } else if (rc == Z_BUF_ERROR && zs.avail_in == 0 && st.pos == raw.size()) {
      throw st.bad("the stream is truncated");
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      throw st.bad(zs.msg ? zs.msg : "inflate error " + std::to_string(rc));
    }
    if (got > 0) return {st.buf.data(), got};
  }
  return {};
}

std::string gunzip(std::string_view raw, std::uint64_t max_bytes, const std::string& path) {
  GzipStream in(raw, max_bytes, path);
  std::string out;
  // The trailer's size hint sizes the text once instead of by doubling (a copy per doubling,
  // up to twice the text held).
  out.reserve(static_cast<std::size_t>(in.size_hint()));
  for (std::string_view piece = in.next(); !piece.empty(); piece = in.next()) out.append(piece);
  return out;
}

}  // namespace sim::io
