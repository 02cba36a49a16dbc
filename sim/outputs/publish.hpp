// Publishing output files completely or not at all (run, fill, convert, ...); the SIGINT/SIGTERM
// handling they rely on is sim/engine/interrupt.hpp. The exact guarantee: docs/outputs.md
// "Publishing".
//
// Exit-status contract of the CLI: 2 = the input is wrong (scenario, options); 1 = the
// environment failed (I/O: cannot create, write, fsync or rename); 128 + signal when
// interrupted (130 SIGINT, 143 SIGTERM). OutputError is the "1" kind.
#pragma once

#include <csignal>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/interrupt.hpp"

namespace sim {

/// Exit status for an environment (I/O) failure.
inline constexpr int exit_environment = 1;

/// A problem with the output location. `status` is the exit status it means: 1 (the
/// environment: cannot create, write, sync or rename) unless it is an OutputRefused.
struct OutputError : std::runtime_error {
  explicit OutputError(const std::string& what, int exit_status = exit_environment)
      : std::runtime_error(what), status(exit_status) {}
  int status;
};

/// The output path names something that must not be written over (exit 2, the option is
/// wrong): an existing file that is not a regular file (a character or block device such as
/// /dev/null, a FIFO, a socket), a directory where a file goes, a file where a directory goes.
/// Nothing is replaced, nothing is created.
struct OutputRefused : OutputError {
  explicit OutputRefused(const std::string& what) : OutputError(what, 2) {}
};

/// The exit status an exception caught at the end of a command means: OutputError's status,
/// else 1 (the environment).
int output_exit_status(const std::exception& e);

/// Throws OutputRefused when `path` exists (through symbolic links) and is not a regular file;
/// `label` is the path as the user gave it. A missing path or a regular file passes.
void refuse_non_regular(const std::string& path, const std::string& label);

/// Writes `content` to the file `path` (created or truncated) with write(2) until done, then
/// fsync(2) and close(2); any failure (including of fsync or close) throws OutputError naming
/// the file and the system error, and removes the file. Throws Interrupted if a signal came.
void write_file_checked(const std::string& path, const std::string& content);

/// The streaming form of write_file_checked: creates (truncates) `path`, takes the content
/// piece by piece through append() (buffered, written out in 1 MiB chunks, so a writer never
/// holds a whole large file in memory) and close() fsyncs and closes it. Same errors as
/// write_file_checked; any failure, or destruction without close() (an exception unwinding),
/// removes the file, so a file is left complete or not at all.
class CheckedWriter {
 public:
  explicit CheckedWriter(std::string path);
  ~CheckedWriter();
  CheckedWriter(const CheckedWriter&) = delete;
  CheckedWriter& operator=(const CheckedWriter&) = delete;
  /// Appends `text`; writes a chunk out when the buffer is full. Throws OutputError, Interrupted.
  void append(std::string_view text);
  /// The buffer to append to directly; call maybe_flush() after appending.
  std::string& buffer() { return buf_; }
  /// Writes the buffer out when it holds a chunk or more.
  void maybe_flush() {
    if (buf_.size() >= kChunk) flush_chunk();
  }
  /// Writes the rest, fsync(2), close(2). Throws OutputError (the file is then removed).
  void close();

 private:
  static constexpr std::size_t kChunk = std::size_t(1) << 20;
  void flush_chunk();
  void write_out(const char* p, std::size_t n);
  [[noreturn]] void bail(const char* what, int e, bool close_fd);
  std::string path_;
  std::string buf_;
  int fd_ = -1;
};

/// An output directory being prepared: `prepare` checks the destination and creates the
/// staging directory before anything is computed; `write` puts a file into staging; `publish`
/// moves everything into place all-or-nothing. The destructor removes the staging directory
/// (and parents it created) unless published.
class OutputDir {
 public:
  /// Checks `out` (see docs/outputs.md "Publishing"): a dangling symbolic link, a path through a
  /// regular file, a read-only or otherwise unwritable location throw OutputError (exit 1); a
  /// symbolic link to a directory is followed. Removes stale staging directories of dead
  /// processes, creates missing parents and the staging directory. `files` are the names that
  /// will be written (an existing directory of that name inside `out` is an OutputError).
  OutputDir(const std::string& out, const std::vector<std::string>& files);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  /// The staging directory (write files here, or use write()).
  const std::string& staging() const { return staging_; }
  /// write_file_checked(staging/name, content).
  void write(const std::string& name, const std::string& content);
  /// Declares files written into staging() by other means (published in this order).
  void adopt(const std::vector<std::string>& names);
  /// Publishes every file written into staging; see docs/outputs.md for the guarantee. Throws
  /// OutputError with the destination left as it was.
  void publish();
  /// The destination directory as given.
  const std::string& path() const { return out_; }

 private:
  void abandon() noexcept;
  std::string out_;          // as given
  std::string target_;       // resolved destination directory
  std::string staging_;
  bool existed_ = false;     // target_ existed before: stage inside it, publish file by file
  bool published_ = false;
  std::vector<std::string> created_parents_;  // to remove (if empty) when abandoned
  std::vector<std::string> written_;
};

/// Writes `content` to `path` completely or not at all: a checked write into `path.tmp-<pid>`
/// in the same folder (removed on failure), fsync, then one rename(2) and an fsync of the
/// folder. Stale `path.tmp-<pid>` files of dead processes are removed first. Throws
/// OutputError naming the path and the system error.
void write_file_atomic(const std::string& path, const std::string& content);

/// Checks, before any work, that `path` (a file to be written) can be created: its folder
/// exists or can be created, is a directory and is writable, and `path` is not a directory.
/// Throws OutputError.
void check_output_file(const std::string& path);

}  // namespace sim
