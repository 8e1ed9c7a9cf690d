// SPDX-License-Identifier: MIT
// The bench's fuse-latency filesystem: a read-only FUSE passthrough of a directory that waits a fixed delay before answering each request, as a network filesystem does.
//
//   fuse_latency SOURCE MOUNTPOINT [--delay-us=N] [--cache-ms=N] [--opens-log=FILE] [-f] [-o OPTION,...]
//
// Shared storage in production (gcsfuse, s3fs, sshfs, NFS) answers every request a round trip
// later, and serves many requests at once. This daemon stands for it: every request it answers
// (lookup and getattr, open, read, readlink, statfs, the directory calls, release) first sleeps
// --delay-us microseconds (default 1000) on the thread that serves it, then is answered from
// SOURCE. The threads are libfuse's: up to max_threads of them (default here 512, more than the
// deepest trial of the bench keeps in flight), kept once started (max_idle_threads), so that a
// reader with 64 or 256 requests in flight sees as many served at once, and the daemon never
// sets the pace as a daemon of few threads does. The kernel's own limit on asynchronous
// requests (reads issued by readahead) is raised to match (max_background 512). One limit is
// the kernel's: the Linux 6.18 measured here sends the LOOKUPs of one directory one at a time,
// though the daemon asks for parallel directory operations.
//
// What is cached where, on purpose: names and attributes stay cached in the kernel for a day
// (the bench's cold reads evict file data, not directory entries, as after a warm stat), or for
// --cache-ms (0: every lookup and stat reaches the daemon, as on a mount whose cached attributes
// have lapsed; for the tests), while
// file data is not kept across opens (no kernel_cache: each open drops the file's pages, as
// bindfs does), so each read of a file reaches this daemon.
//
// Defaults, each overridden by the same option given on the command line: max_threads=512,
// max_idle_threads=512, auto_unmount (the mount goes when this process goes, however it ends),
// allow_other and default_permissions (other users may read, and the kernel checks the files'
// modes for them), ro, subtype=smartread-latency and fsname=SOURCE (so that /proc/mounts names
// it fuse.smartread-latency). In the foreground (-f) it also ends when its parent does
// (PR_SET_PDEATHSIG), so that a bench that is killed leaves no daemon.
//
// Built by the bench (bench/mounts.js) with $CC and pkg-config's fuse3 flags into its cache.
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_DELAY_US 1000
// How long the kernel may trust a name or an attribute it was given, unless told: longer than
// any run.
#define DEFAULT_CACHE_MS 86400000u
#define MAX_BACKGROUND 512

struct latency_options {
  unsigned int delay_us;
  unsigned int cache_ms;
  const char *source;
  const char *opens_log;
  int show_help;
};

static struct latency_options options = {.delay_us = DEFAULT_DELAY_US, .cache_ms = DEFAULT_CACHE_MS};
// The source directory, opened once: every path is looked up beneath it.
static int source_fd = -1;
// With --opens-log=FILE, each open, statfs, stat and read appends a line to FILE: the thread ID
// of the thread that asked (the kernel's request says it), "open", "statfs", "stat" (a lookup
// of the name or a stat of the file: libfuse asks getattr for both) or "read", and the path
// beneath the mount, separated by spaces. The tests read it to see which of a reader's threads
// waits for the server.
static int opens_log_fd = -1;

static void log_request(const char *op, const char *path) {
  if (opens_log_fd >= 0) dprintf(opens_log_fd, "%d %s %s\n", (int)fuse_get_context()->pid, op, path);
}

enum { KEY_HELP };

static const struct fuse_opt latency_opts[] = {
    {"--delay-us=%u", offsetof(struct latency_options, delay_us), 0},
    {"--cache-ms=%u", offsetof(struct latency_options, cache_ms), 0},
    {"--opens-log=%s", offsetof(struct latency_options, opens_log), 0},
    FUSE_OPT_KEY("-h", KEY_HELP),
    FUSE_OPT_KEY("--help", KEY_HELP),
    FUSE_OPT_END,
};

// Takes the first argument that is not an option as the source (the second, the mount point,
// stays for libfuse), and notes a request for help, which libfuse answers too.
static int take_argument(void *data, const char *arg, int key, struct fuse_args *outargs) {
  (void)data;
  (void)outargs;
  if (key == KEY_HELP) {
    options.show_help = 1;
    return 1;
  }
  if (key == FUSE_OPT_KEY_NONOPT && options.source == NULL) {
    options.source = arg;
    return 0;
  }
  return 1;
}

static void wait_delay(void) {
  if (options.delay_us == 0) return;
  struct timespec delay = {.tv_sec = options.delay_us / 1000000, .tv_nsec = (long)(options.delay_us % 1000000) * 1000};
  // A signal (libfuse's handler, as the daemon ends) interrupts the sleep: the rest is slept, so
  // that every answer waits the whole delay.
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &delay, &delay) == EINTR) {
  }
}

// libfuse's paths start with '/'; beneath source_fd the root is ".".
static const char *relative(const char *path) {
  while (*path == '/') path++;
  return *path ? path : ".";
}

static int latency_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  log_request("stat", path);
  wait_delay();
  int res = fi ? fstat((int)fi->fh, st) : fstatat(source_fd, relative(path), st, AT_SYMLINK_NOFOLLOW);
  return res < 0 ? -errno : 0;
}

static int latency_readlink(const char *path, char *buf, size_t size) {
  wait_delay();
  ssize_t n = readlinkat(source_fd, relative(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

static int latency_open(const char *path, struct fuse_file_info *fi) {
  log_request("open", path);
  wait_delay();
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
  // The kernel resolves the path's symbolic links itself; what comes here is a file to open.
  int fd = openat(source_fd, relative(path), (fi->flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -errno;
  fi->fh = (uint64_t)fd;
  return 0;
}

static int latency_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
  log_request("read", path);
  wait_delay();
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread((int)fi->fh, buf + done, size - done, offset + (off_t)done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return done > 0 ? (int)done : -errno;
    }
    if (n == 0) break;
    done += (size_t)n;
  }
  return (int)done;
}

static int latency_release(const char *path, struct fuse_file_info *fi) {
  (void)path;
  wait_delay();
  close((int)fi->fh);
  return 0;
}

static int latency_statfs(const char *path, struct statvfs *st) {
  log_request("statfs", path);
  wait_delay();
  return fstatvfs(source_fd, st) < 0 ? -errno : 0;
}

static int latency_opendir(const char *path, struct fuse_file_info *fi) {
  wait_delay();
  int fd = openat(source_fd, relative(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    int err = errno;
    close(fd);
    return -err;
  }
  fi->fh = (uint64_t)(uintptr_t)dir;
  return 0;
}

// The whole directory in one answer (offsets 0: libfuse keeps the entries for later calls).
static int latency_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset, struct fuse_file_info *fi,
                           enum fuse_readdir_flags flags) {
  (void)path;
  (void)offset;
  (void)flags;
  wait_delay();
  DIR *dir = (DIR *)(uintptr_t)fi->fh;
  rewinddir(dir);
  for (;;) {
    errno = 0;
    struct dirent *entry = readdir(dir);
    if (entry == NULL) return -errno;
    struct stat st = {.st_ino = entry->d_ino, .st_mode = (mode_t)DTTOIF(entry->d_type)};
    if (fill(buf, entry->d_name, &st, 0, 0)) return 0;
  }
}

static int latency_releasedir(const char *path, struct fuse_file_info *fi) {
  (void)path;
  wait_delay();
  closedir((DIR *)(uintptr_t)fi->fh);
  return 0;
}

static void *latency_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  // Reads issued by readahead are the kernel's background requests, of which it keeps at most
  // 12 in flight by default (libfuse's high-level API takes no option for it): as many as the
  // threads, so that a reader's depth reaches the daemon.
  conn->max_background = MAX_BACKGROUND;
  conn->congestion_threshold = MAX_BACKGROUND * 3 / 4;
  cfg->use_ino = 1;
  cfg->entry_timeout = options.cache_ms / 1000.0;
  cfg->attr_timeout = options.cache_ms / 1000.0;
  cfg->negative_timeout = 0;
  cfg->kernel_cache = 0;
  cfg->direct_io = 0;
  return NULL;
}

static const struct fuse_operations latency_ops = {
    .init = latency_init,
    .getattr = latency_getattr,
    .readlink = latency_readlink,
    .open = latency_open,
    .read = latency_read,
    .release = latency_release,
    .statfs = latency_statfs,
    .opendir = latency_opendir,
    .readdir = latency_readdir,
    .releasedir = latency_releasedir,
};

static void usage(const char *program) {
  printf("usage: %s SOURCE MOUNTPOINT [--delay-us=N] [--cache-ms=N] [--opens-log=FILE] [-f] [-o OPTION,...]\n"
         "  --delay-us=N      wait N microseconds before answering each request (default %u)\n"
         "  --cache-ms=N      how long the kernel may keep names and attributes (default %u)\n"
         "  --opens-log=FILE  append the asking thread's ID, open, statfs, stat or read, and the\n"
         "                    path of each open, statfs, stat (or lookup) and read to FILE\n\n",
         program, DEFAULT_DELAY_US, DEFAULT_CACHE_MS);
}

int main(int argc, char *argv[]) {
  struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
  if (fuse_opt_parse(&args, &options, latency_opts, take_argument) != 0) return 1;
  if (options.show_help) {
    usage(argv[0]);
    return fuse_main(args.argc, args.argv, &latency_ops, NULL);
  }
  if (options.source == NULL) {
    usage(argv[0]);
    fprintf(stderr, "%s: no source directory\n", argv[0]);
    return 1;
  }
  source_fd = open(options.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (source_fd < 0) {
    fprintf(stderr, "%s: %s: %s\n", argv[0], options.source, strerror(errno));
    return 1;
  }
  if (options.opens_log != NULL) {
    opens_log_fd = open(options.opens_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (opens_log_fd < 0) {
      fprintf(stderr, "%s: %s: %s\n", argv[0], options.opens_log, strerror(errno));
      return 1;
    }
  }
  // A comma or a backslash in the source would end or escape the option.
  const char *fsname = strpbrk(options.source, ",\\") ? "fuse_latency" : options.source;
  char defaults[PATH_MAX + 256];
  snprintf(defaults, sizeof defaults,
           "-omax_threads=512,max_idle_threads=512,auto_unmount,allow_other,default_permissions,ro,"
           "subtype=smartread-latency,fsname=%s",
           fsname);
  // Before the command line's options, so that the same option given there, parsed later, wins.
  if (fuse_opt_insert_arg(&args, 1, defaults) != 0) return 1;
  // In the foreground, a child of whoever started it: it goes when that process goes. The parent
  // may be gone already, and then nothing would send the signal.
  const pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent) return 1;
  int status = fuse_main(args.argc, args.argv, &latency_ops, NULL);
  fuse_opt_free_args(&args);
  close(source_fd);
  return status;
}
