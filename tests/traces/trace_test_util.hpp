// Helpers for the trace tests: temp files (plain and gzip) and an environment-variable guard.
#pragma once

#include <atomic>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <unistd.h>

#include "sim/io/traces.hpp"

namespace trace_test {

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("schedsim-traces-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  /// Writes `text` to `name` (sub-directories created) and returns the absolute path.
  std::string write(const std::string& name, const std::string& text) const {
    auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  /// Same, as a gzip file (RFC 1952) holding stored (uncompressed) deflate blocks: a valid
  /// gzip stream written without zlib (Boost's gzip_compressor trips a GCC 12 -Wrestrict false
  /// positive at -O2). Real deflate data is covered by the real-trace test (KTH-SP2 .swf.gz).
  std::string write_gz(const std::string& name, const std::string& text) const {
    std::string gz = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, '\xff'};  // magic, deflate, no flags, OS unknown
    std::size_t pos = 0;
    do {
      const std::size_t n = std::min<std::size_t>(65535, text.size() - pos);
      const bool last = pos + n == text.size();
      gz.push_back(last ? 1 : 0);  // BFINAL, BTYPE=00 (stored)
      put16(gz, static_cast<unsigned>(n));
      put16(gz, static_cast<unsigned>(~n & 0xffffu));
      gz.append(text, pos, n);
      pos += n;
    } while (pos < text.size());
    put32(gz, crc32(text));
    put32(gz, static_cast<std::uint32_t>(text.size()));
    return write(name, gz);
  }

 private:
  static void put16(std::string& out, unsigned v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>((v >> 8) & 0xff));
  }
  static void put32(std::string& out, std::uint32_t v) {
    put16(out, v & 0xffffu);
    put16(out, v >> 16);
  }
  static std::uint32_t crc32(const std::string& data) {
    std::uint32_t crc = 0xffffffffu;
    for (unsigned char c : data) {
      crc ^= c;
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
  }

  std::filesystem::path path_;
};

/// Sets (or unsets, with nullopt) an environment variable for the scope; restores it after.
class EnvGuard {
 public:
  EnvGuard(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// The message of the sim::io::TraceError `f` throws, or "<no TraceError>" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sim::io::TraceError& e) {
    return e.what();
  }
  return "<no TraceError>";
}

}  // namespace trace_test
