// Output publishing (all-or-nothing) and checked writes. See publish.hpp and
// docs/outputs.md "Publishing".
#include "sim/outputs/publish.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace sim {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] void fail(const std::string& what, int e) { throw OutputError(fmt::format("{}: {}", what, errno_text(e))); }

/// fsync of a directory (durability of the renames in it). Errors other than EINVAL/EROFS
/// (file systems that cannot sync directories) are reported.
void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(dir + ": cannot open the directory to sync it", errno);
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    int e = errno;
    ::close(fd);
    fail(dir + ": cannot sync the directory", e);
  }
  ::close(fd);
}

bool pid_alive(long pid) {
  if (pid <= 0) return true;  // never touch what we cannot attribute
  if (pid == long(::getpid())) return true;
  return ::kill(pid_t(pid), 0) == 0 || errno != ESRCH;
}

/// Removes entries of `dir` named `prefix` followed by a decimal pid of a process that no
/// longer exists (leftovers of a killed run). `want_dir`: only directories, else only files.
void remove_stale(const std::string& dir, const std::string& prefix, bool want_dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid_alive(std::stol(digits))) continue;
    struct stat st {};
    std::string p = dir + "/" + name;
    if (::lstat(p.c_str(), &st) != 0) continue;
    if (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) stale.push_back(p);
  }
  ::closedir(d);
  for (const auto& p : stale) {
    std::error_code ec;
    fs::remove_all(p, ec);
  }
}

/// `p` without a trailing separator ("out/" -> "out").
fs::path normalised(const std::string& s) {
  fs::path p = fs::path(s).lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

}  // namespace

void write_file_checked(const std::string& path, const std::string& content) {
  CheckedWriter w(path);
  w.append(content);
  w.close();
}

// ------------------------------------------------------------------------- CheckedWriter

CheckedWriter::CheckedWriter(std::string path) : path_(std::move(path)) {
  throw_if_interrupted();
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) fail(path_ + ": cannot create", errno);
  buf_.reserve(kChunk);
}

CheckedWriter::~CheckedWriter() {
  if (fd_ < 0) return;  // closed, or failed (the file is already removed)
  ::close(fd_);
  ::unlink(path_.c_str());  // never closed: an exception is unwinding; leave no partial file
}

void CheckedWriter::bail(const char* what, int e, bool close_fd) {
  if (close_fd) ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
  fail(fmt::format("{}: {}", path_, what), e);
}

void CheckedWriter::write_out(const char* p, std::size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR && !interrupt_signal()) continue;
      if (errno == EINTR) {
        ::close(fd_);
        fd_ = -1;
        ::unlink(path_.c_str());
        throw Interrupted(interrupt_signal());
      }
      bail("cannot write", errno, true);
    }
    if (n == 0) bail("cannot write", EIO, true);
    p += n;
    left -= std::size_t(n);
  }
}

void CheckedWriter::flush_chunk() {
  if (fd_ < 0) throw OutputError(path_ + ": written after close");
  write_out(buf_.data(), buf_.size());
  buf_.clear();
}

void CheckedWriter::append(std::string_view text) {
  if (buf_.size() + text.size() > kChunk) {
    flush_chunk();
    if (text.size() >= kChunk) {  // large pieces go straight out
      write_out(text.data(), text.size());
      return;
    }
  }
  buf_.append(text);
}

void CheckedWriter::close() {
  flush_chunk();
  if (::fsync(fd_) != 0 && errno != EINVAL) bail("cannot sync to disk", errno, true);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(path_.c_str());
    fail(fmt::format("{}: {}", path_, "cannot close"), e);
  }
}

int output_exit_status(const std::exception& e) {
  if (const auto* o = dynamic_cast<const OutputError*>(&e)) return o->status;
  return exit_environment;
}

void refuse_non_regular(const std::string& path, const std::string& label) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return;  // directories: the callers' own rule
  const char* kind = S_ISCHR(st.st_mode)    ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  throw OutputRefused(fmt::format("{}: exists and is {}; an output is never written over anything but a regular file", label, kind));
}

// ------------------------------------------------------------------------- OutputDir

OutputDir::OutputDir(const std::string& out, const std::vector<std::string>& files) : out_(out) {
  fs::path p = normalised(out);
  struct stat lst {};
  if (::lstat(p.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      std::error_code ec;
      auto to = fs::read_symlink(p, ec);
      throw OutputError(fmt::format("{}: is a dangling symbolic link (its target {} does not exist; create it or remove the link)",
                                    out, ec ? "?" : to.string()));
    }
  }
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw OutputRefused(out + ": exists and is not a directory");
    existed_ = true;
    std::error_code ec;
    fs::path real = fs::canonical(p, ec);  // follow a symlink: stage on the target's file system
    if (ec) fail(out + ": cannot resolve the path", ec.value());
    target_ = real.string();
    for (const auto& f : files) {
      struct stat fst {};
      if (::lstat((real / f).c_str(), &fst) == 0 && S_ISDIR(fst.st_mode))
        throw OutputRefused((fs::path(out) / f).string() + ": is a directory; cannot write the output file");
      refuse_non_regular((real / f).string(), (fs::path(out) / f).string());
    }
    remove_stale(target_, ".schedsim-tmp-", true);
    staging_ = (real / fmt::format(".schedsim-tmp-{}", ::getpid())).string();
  } else {
    if (errno != ENOENT) fail(out, errno);
    fs::path parent = p.parent_path();
    if (parent.empty()) parent = ".";
    // Create the missing parents now (checked before any work), remembering them for cleanup.
    std::vector<fs::path> missing;
    for (fs::path a = parent; !a.empty(); a = a.parent_path()) {
      struct stat ast {};
      if (::stat(a.c_str(), &ast) == 0) {
        if (!S_ISDIR(ast.st_mode)) throw OutputError(fmt::format("{}: {} is not a directory", out, a.string()));
        break;
      }
      if (errno != ENOENT) fail(fmt::format("{}: {}", out, a.string()), errno);
      missing.push_back(a);
      if (a == a.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
        int e = errno;
        abandon();
        fail(fmt::format("{}: cannot create {}", out, it->string()), e);
      }
      created_parents_.push_back(it->string());
    }
    target_ = p.string();
    std::string base = p.filename().string();
    remove_stale(parent.string(), base + ".tmp-", true);
    staging_ = (parent / fmt::format("{}.tmp-{}", base, ::getpid())).string();
  }
  std::error_code ec;
  fs::remove_all(staging_, ec);
  if (::mkdir(staging_.c_str(), 0777) != 0) {
    int e = errno;
    staging_.clear();
    abandon();
    fail(fmt::format("{}: cannot create the staging directory (is the location writable?)", out), e);
  }
}

OutputDir::~OutputDir() {
  if (!published_) abandon();
}

void OutputDir::abandon() noexcept {
  if (!staging_.empty()) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
  for (auto it = created_parents_.rbegin(); it != created_parents_.rend(); ++it) ::rmdir(it->c_str());
  created_parents_.clear();
}

void OutputDir::write(const std::string& name, const std::string& content) {
  write_file_checked(staging_ + "/" + name, content);
  written_.push_back(name);
}

void OutputDir::adopt(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (std::find(written_.begin(), written_.end(), n) == written_.end()) written_.push_back(n);
}

void OutputDir::publish() {
  throw_if_interrupted();
  SignalBlock block;  // from here on the publish step completes or rolls back, never half-way
  fsync_dir(staging_);
  if (!existed_) {
    if (::rename(staging_.c_str(), target_.c_str()) != 0) fail(fmt::format("{}: cannot move {} into place", out_, staging_), errno);
    published_ = true;
    fs::path parent = fs::path(target_).parent_path();
    try {
      fsync_dir(parent.empty() ? "." : parent.string());
    } catch (const OutputError&) {
      // Published; the directory entry may just not be durable yet.
    }
    return;
  }
  // Existing directory: replace the files one by one, keeping a hard link (or the moved file)
  // of every file replaced so that any failure restores the directory exactly.
  const std::string old_dir = staging_ + "/.old";
  if (::mkdir(old_dir.c_str(), 0777) != 0) fail(fmt::format("{}: cannot create {}", out_, old_dir), errno);
  struct Step { std::string name; bool had_old = false; bool old_moved = false; bool placed = false; };
  std::vector<Step> steps;
  auto rollback = [&] {
    bool ok = true;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      const std::string dst = target_ + "/" + it->name, bak = old_dir + "/" + it->name;
      if (it->had_old) {
        if ((it->placed || it->old_moved) && ::rename(bak.c_str(), dst.c_str()) != 0) ok = false;
      } else if (it->placed && ::unlink(dst.c_str()) != 0) {
        ok = false;
      }
    }
    return ok;
  };
  for (const auto& name : written_) {
    const std::string src = staging_ + "/" + name, dst = target_ + "/" + name, bak = old_dir + "/" + name;
    Step s{name};
    struct stat st {};
    int err = 0;
    if (::lstat(dst.c_str(), &st) == 0) {
      s.had_old = true;
      if (::link(dst.c_str(), bak.c_str()) != 0) {
        // No hard links here: move the old file aside instead (restored on failure).
        if (::rename(dst.c_str(), bak.c_str()) != 0) err = errno;
        else s.old_moved = true;
      }
    } else if (errno != ENOENT) {
      err = errno;
    }
    if (!err) {
      if (::rename(src.c_str(), dst.c_str()) != 0) err = errno;
      else s.placed = true;
    }
    steps.push_back(s);
    if (err) {
      bool restored = rollback();
      throw OutputError(fmt::format("{}: cannot move {} into place: {}; {}", out_, name, errno_text(err),
                                    restored ? "the directory was left as it was"
                                             : "restoring the previous files failed too; previous files are in " + old_dir));
    }
  }
  published_ = true;
  std::error_code ec;
  fs::remove_all(staging_, ec);
  try {
    fsync_dir(target_);
  } catch (const OutputError&) {
  }
}

// ------------------------------------------------------------------------- single files

void check_output_file(const std::string& path) {
  fs::path p = normalised(path);
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw OutputRefused(path + ": is a directory");
  refuse_non_regular(p.string(), path);
  struct stat lst {};
  if (::lstat(p.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode) && ::stat(p.c_str(), &st) != 0)
    throw OutputError(path + ": is a dangling symbolic link");
  fs::path a = p.parent_path();
  if (a.empty()) a = ".";
  for (; !a.empty(); a = a.parent_path()) {
    if (::stat(a.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) throw OutputError(fmt::format("{}: {} is not a directory", path, a.string()));
      if (::access(a.c_str(), W_OK | X_OK) != 0) fail(fmt::format("{}: cannot write into {}", path, a.string()), errno);
      return;
    }
    if (errno != ENOENT) fail(fmt::format("{}: {}", path, a.string()), errno);
    if (a == a.parent_path()) break;
  }
}

void write_file_atomic(const std::string& path, const std::string& content) {
  fs::path p = normalised(path);
  refuse_non_regular(p.string(), path);  // rename(2) would replace a device or a FIFO by a file
  struct stat lst {}, st {};
  if (::lstat(p.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    // Write through the link to its target (in the target's folder: no cross-device rename).
    if (::stat(p.c_str(), &st) != 0) throw OutputError(path + ": is a dangling symbolic link");
    std::error_code ec;
    p = fs::canonical(p, ec);
    if (ec) fail(path + ": cannot resolve the path", ec.value());
  }
  fs::path dir = p.parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail(fmt::format("{}: cannot create {}", path, dir.string()), ec.value());
  }
  remove_stale(dir.empty() ? "." : dir.string(), p.filename().string() + ".tmp-", false);
  fs::path tmp = p;
  tmp += fmt::format(".tmp-{}", ::getpid());
  ::unlink(tmp.c_str());
  SignalBlock block;  // the temporary file never outlives this call
  write_file_checked(tmp.string(), content);
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail(fmt::format("{}: cannot rename into place", path), e);
  }
  try {
    fsync_dir(dir.empty() ? "." : dir.string());
  } catch (const OutputError&) {
  }
}

}  // namespace sim
