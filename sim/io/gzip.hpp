// gzip (RFC 1952) decompression of a whole in-memory buffer, with a size limit: how the trace
// readers open `.gz` traces (docs/traces.md "Limits"). zlib's inflate, no iostreams.
#pragma once

#include <cstdint>
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

}  // namespace sim::io
