// gzip (RFC 1952) decompression of an in-memory buffer, with a size limit: how the trace
// readers open `.gz` traces (docs/traces.md "Limits"). zlib's inflate, no iostreams. Whole
// (gunzip) or piece by piece (GzipStream: the text is never held whole).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sim::io {

/// True when `raw` starts with the gzip magic bytes 1f 8b.
bool is_gzip(std::string_view raw);

/// The decompressed bytes of gzip stream `raw` (one member or several concatenated, as gzip(1)
/// writes them). `path` names the file in messages. Throws TraceError
/// "trace: 'PATH': decompresses to more than MAX bytes (the limit for one trace file)" once the
/// output would pass `max_bytes` (inflation stops there: a gzip bomb costs at most that much
/// memory), and "trace: 'PATH': bad gzip stream: WHY" for a corrupt, truncated or trailing-
/// garbage stream.
std::string gunzip(std::string_view raw, std::uint64_t max_bytes, const std::string& path);

/// The decompressed bytes of gzip stream `raw` piece by piece, with gunzip's rules and errors
/// (the limit counts the whole output; concatenated members; the same TraceError messages,
/// thrown by the next() that meets the problem). `raw` must outlive the stream.
class GzipStream {
 public:
  GzipStream(std::string_view raw, std::uint64_t max_bytes, std::string path);
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;
  /// The next piece of text (at most 64 KiB), valid until the next call; empty at the end.
  std::string_view next();
  /// The last member's uncompressed size mod 2^32 from the trailer (0 if `raw` is too short):
  /// a hint only (the text may be larger or smaller), bounded by the limit and by deflate's
  /// largest ratio (1032:1).
  std::uint64_t size_hint() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace sim::io
