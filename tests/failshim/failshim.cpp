/* LD_PRELOAD shim for the output-publishing tests: makes one system call fail for one file.
 *   SCHEDSIM_FAIL_FILE   base name of the file (or directory) to fail, e.g. "summary.json";
 *                        "prefix*" matches every base name starting with prefix
 *   SCHEDSIM_FAIL_OP     write | fsync | close | rename | mkdir
 *                        (mkdir: every mkdir fails, as under a read-only parent)
 *   SCHEDSIM_FAIL_ERRNO  ENOSPC (default) | EIO | EROFS
 * write/fsync/close fail on descriptors opened on a path whose base name matches; rename fails
 * when the base name of its source or destination matches. Without the variables it does
 * nothing. Built by tests/CMakeLists.txt (never linked into schedsim). C++ only because the
 * project enables no C compiler. */
#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

extern "C" {

#define MAX_FD 65536
static unsigned char marked[MAX_FD];

static const char* env(const char* k) {
  const char* v = getenv(k);
  return v && *v ? v : NULL;
}

static int matches(const char* path) {
  const char* want = env("SCHEDSIM_FAIL_FILE");
  if (!want || !path) return 0;
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(want);
  if (n > 0 && want[n - 1] == '*') return strncmp(base, want, n - 1) == 0;  /* "name*": a prefix */
  return strcmp(base, want) == 0;
}

static int op_is(const char* op) {
  const char* v = env("SCHEDSIM_FAIL_OP");
  return v && strcmp(v, op) == 0;
}

static int fail_errno(void) {
  const char* v = env("SCHEDSIM_FAIL_ERRNO");
  if (v && strcmp(v, "EIO") == 0) return EIO;
  if (v && strcmp(v, "EROFS") == 0) return EROFS;
  return ENOSPC;
}

static void mark(int fd, const char* path) {
  if (fd >= 0 && fd < MAX_FD) marked[fd] = (unsigned char)matches(path);
}

static int is_marked(int fd) { return fd >= 0 && fd < MAX_FD && marked[fd]; }

#define REAL(name) static const auto real_##name = reinterpret_cast<decltype(&name)>(dlsym(RTLD_NEXT, #name))

int open(const char* path, int flags, ...) {
  REAL(open);
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
  int fd = real_open(path, flags, mode);
  mark(fd, path);
  return fd;
}

int open64(const char* path, int flags, ...) {
  REAL(open64);
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
  int fd = real_open64(path, flags, mode);
  mark(fd, path);
  return fd;
}

int openat(int dirfd, const char* path, int flags, ...) {
  REAL(openat);
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
  int fd = real_openat(dirfd, path, flags, mode);
  mark(fd, path);
  return fd;
}

ssize_t write(int fd, const void* buf, size_t n) {
  REAL(write);
  if (is_marked(fd) && op_is("write")) { errno = fail_errno(); return -1; }
  return real_write(fd, buf, n);
}

int fsync(int fd) {
  REAL(fsync);
  if (is_marked(fd) && op_is("fsync")) { errno = fail_errno(); return -1; }
  return real_fsync(fd);
}

int fdatasync(int fd) {
  REAL(fdatasync);
  if (is_marked(fd) && op_is("fsync")) { errno = fail_errno(); return -1; }
  return real_fdatasync(fd);
}

int close(int fd) {
  REAL(close);
  int was = is_marked(fd);
  if (fd >= 0 && fd < MAX_FD) marked[fd] = 0;
  int r = real_close(fd);
  if (was && op_is("close") && r == 0) { errno = fail_errno(); return -1; }
  return r;
}

int rename(const char* from, const char* to) {
  REAL(rename);
  if ((matches(from) || matches(to)) && op_is("rename")) { errno = fail_errno(); return -1; }
  return real_rename(from, to);
}

int renameat(int fd1, const char* from, int fd2, const char* to) {
  REAL(renameat);
  if ((matches(from) || matches(to)) && op_is("rename")) { errno = fail_errno(); return -1; }
  return real_renameat(fd1, from, fd2, to);
}

int mkdir(const char* path, mode_t mode) {
  REAL(mkdir);
  if (op_is("mkdir")) { errno = fail_errno(); return -1; }
  return real_mkdir(path, mode);
}

}  // extern "C"
