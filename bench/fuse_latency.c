// SPDX-License-Identifier: MIT
// The bench's fuse-latency filesystem: a read-only FUSE passthrough of a directory that answers each request a fixed delay late, as a network filesystem does.
//
//   fuse_latency SOURCE MOUNTPOINT [--delay-us=N] [--cache-ms=N] [--opens-log=FILE] [-f] [-o OPTION,...]
//
// Shared storage in production (gcsfuse, s3fs, sshfs, NFS) answers every request a round trip
// later, and serves many requests at once. This daemon stands for it: every request (lookup and
// getattr, open, read, readlink, statfs, the directory calls, release) is served from SOURCE as
// it arrives, and its answer goes back to the kernel --delay-us microseconds (default 1000) after
// that. The answers wait in one queue, in the order they are due (the delay is the same for
// all), and one thread sends each when it is due, as many at one wake-up as are due by then: a
// request in its delay holds no thread, as a request on the network holds none of the server's.
// So the daemon never sets the pace, whatever the depth of the reader, and it spends on a
// request little more than its passthrough work. In the bench's cold trial it took about 60 µs
// of CPU per file, most of it the kernel's (the source's disk read, a switch to the thread that
// takes each request), where the same passthrough sleeping on a thread per request took 75–90
// µs, as much as the reader beside it on these two CPUs. The requests are taken from the kernel
// by libfuse's threads (up to max_threads, 512 here unless told), which block only where SOURCE
// does (a cold read of its disk). The kernel's own limit on asynchronous requests (reads issued
// by readahead) is raised to 512 (max_background). One limit is the kernel's: the Linux 6.18
// measured here sends the LOOKUPs of one directory one at a time, though the daemon asks for
// parallel directory operations.
//
// What is cached where, on purpose: names and attributes stay cached in the kernel for a day
// (the bench's cold reads evict file data, not directory entries, as after a warm stat), or for
// --cache-ms (0: every lookup and stat reaches the daemon, as on a mount whose cached attributes
// have lapsed; for the tests), while file data is not kept across opens (each open drops the
// file's pages, as bindfs does), so each read of a file reaches this daemon.
//
// Each name the kernel looks up is an inode here, held by an O_PATH descriptor of the source's
// file until the kernel forgets it (as libfuse's passthrough_ll example does), with its path
// beneath the mount for the log.
//
// Defaults, each overridden by the same option given on the command line: max_threads=512,
// max_idle_threads=512 (threads kept once started), auto_unmount (the mount goes when this
// process goes, however it ends), allow_other and default_permissions (other users may read, and
// the kernel checks the files' modes for them), ro, subtype=smartread-latency and fsname=SOURCE
// (so that /proc/mounts names it fuse.smartread-latency). In the foreground (-f) it also ends
// when its parent does (PR_SET_PDEATHSIG), so that a bench that is killed leaves no daemon.
//
// Built by the bench (bench/mounts.js) with $CC and pkg-config's fuse3 flags into its cache.
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
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
#define INODE_BUCKETS 4096

struct latency_options {
  unsigned int delay_us;
  unsigned int cache_ms;
  const char *source;
  const char *opens_log;
  int show_help;
};

static struct latency_options options = {.delay_us = DEFAULT_DELAY_US, .cache_ms = DEFAULT_CACHE_MS};
static double cache_s;

// With --opens-log=FILE, each open, statfs, stat and read appends a line to FILE: the thread ID
// of the thread that asked (the kernel's request says it), "open", "statfs", "stat" (a lookup
// of the name or a stat of the file) or "read", and the path beneath the mount, separated by
// spaces. The tests read it to see which of a reader's threads waits for the server.
static int opens_log_fd = -1;

// --- Inodes: the source's files the kernel holds a name of -----------------------------------

struct inode {
  struct inode *next_in_bucket;
  int fd;  // O_PATH, of the file itself (a symbolic link is not followed)
  dev_t dev;
  ino_t ino;
  uint64_t lookups;  // how many the kernel holds; at 0 the inode goes
  char *path;        // beneath the mount, "/" for the root: for the log
};

static struct inode root = {.path = "/"};
static struct inode *buckets[INODE_BUCKETS];
static pthread_mutex_t inodes_lock = PTHREAD_MUTEX_INITIALIZER;

static struct inode *inode_of(fuse_ino_t ino) {
  return ino == FUSE_ROOT_ID ? &root : (struct inode *)(uintptr_t)ino;
}

static fuse_ino_t id_of(struct inode *inode) {
  return inode == &root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

// The inode of the file fd was opened on, counted once more; fd becomes its descriptor, or is
// closed when the inode was already held. NULL (errno ENOMEM) when out of memory.
static struct inode *hold_inode(int fd, const struct stat *st, const char *parent_path, const char *name) {
  struct inode **bucket = &buckets[(st->st_ino ^ st->st_dev) % INODE_BUCKETS];
  pthread_mutex_lock(&inodes_lock);
  struct inode *inode = *bucket;
  while (inode != NULL && !(inode->ino == st->st_ino && inode->dev == st->st_dev)) inode = inode->next_in_bucket;
  if (inode != NULL) {
    inode->lookups++;
    pthread_mutex_unlock(&inodes_lock);
    close(fd);
    return inode;
  }
  inode = calloc(1, sizeof *inode);
  if (inode == NULL || asprintf(&inode->path, "%s%s%s", parent_path, strcmp(parent_path, "/") ? "/" : "", name) < 0) {
    pthread_mutex_unlock(&inodes_lock);
    free(inode);
    close(fd);
    errno = ENOMEM;
    return NULL;
  }
  inode->fd = fd;
  inode->dev = st->st_dev;
  inode->ino = st->st_ino;
  inode->lookups = 1;
  inode->next_in_bucket = *bucket;
  *bucket = inode;
  pthread_mutex_unlock(&inodes_lock);
  return inode;
}

static void forget_inode(struct inode *inode, uint64_t count) {
  if (inode == &root) return;
  pthread_mutex_lock(&inodes_lock);
  inode->lookups = inode->lookups > count ? inode->lookups - count : 0;
  if (inode->lookups > 0) {
    pthread_mutex_unlock(&inodes_lock);
    return;
  }
  struct inode **link = &buckets[(inode->ino ^ inode->dev) % INODE_BUCKETS];
  while (*link != inode) link = &(*link)->next_in_bucket;
  *link = inode->next_in_bucket;
  pthread_mutex_unlock(&inodes_lock);
  close(inode->fd);
  free(inode->path);
  free(inode);
}

// --- Answers, each sent when it is due ------------------------------------------------------

enum answer_kind { ANSWER_ERROR, ANSWER_ENTRY, ANSWER_ATTR, ANSWER_OPEN, ANSWER_BUFFER, ANSWER_STATFS };

struct answer {
  struct answer *next;
  uint64_t due_ns;
  fuse_req_t req;
  enum answer_kind kind;
  int error;  // ANSWER_ERROR: 0 or a positive errno
  int opens_dir;  // ANSWER_OPEN: the handle is a DIR stream, not a descriptor
  // ANSWER_ENTRY: the inode counted for the kernel, given back if the answer does not reach it.
  struct inode *looked_up;
  union {
    struct fuse_entry_param entry;
    struct stat attr;
    struct fuse_file_info file;
    struct statvfs statfs;
    struct {
      char *data;  // malloc'd, freed once sent
      size_t size;
    } buffer;
  } u;
};

static struct answer *queue_head;
static struct answer *queue_tail;
static int queue_closed;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_changed;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void send_answer(struct answer *a) {
  int failed = 0;
  switch (a->kind) {
  case ANSWER_ERROR:
    failed = fuse_reply_err(a->req, a->error);
    break;
  case ANSWER_ENTRY:
    failed = fuse_reply_entry(a->req, &a->u.entry);
    break;
  case ANSWER_ATTR:
    failed = fuse_reply_attr(a->req, &a->u.attr, cache_s);
    break;
  case ANSWER_OPEN:
    failed = fuse_reply_open(a->req, &a->u.file);
    break;
  case ANSWER_BUFFER:
    failed = fuse_reply_buf(a->req, a->u.buffer.data, a->u.buffer.size);
    free(a->u.buffer.data);
    break;
  case ANSWER_STATFS:
    failed = fuse_reply_statfs(a->req, &a->u.statfs);
    break;
  }
  // The asker was interrupted and is gone: what the answer gave it is taken back.
  if (failed != 0) {
    if (a->looked_up != NULL) forget_inode(a->looked_up, 1);
    if (a->kind == ANSWER_OPEN) {
      if (a->opens_dir) closedir((DIR *)(uintptr_t)a->u.file.fh);
      else close((int)a->u.file.fh);
    }
  }
  free(a);
}

// Queues the answer to be sent the delay from now (at once with no delay).
static void answer_later(struct answer *a) {
  if (options.delay_us == 0) {
    send_answer(a);
    return;
  }
  a->next = NULL;
  pthread_mutex_lock(&queue_lock);
  // The time is read under the lock, so that the queue's order is the order of the due times.
  a->due_ns = now_ns() + (uint64_t)options.delay_us * 1000u;
  if (queue_tail != NULL) {
    queue_tail->next = a;
  } else {
    queue_head = a;
    // The sender waits for the head's time, or, with none, for a head: only a first one wakes it.
    pthread_cond_signal(&queue_changed);
  }
  queue_tail = a;
  pthread_mutex_unlock(&queue_lock);
}

// The sender: one thread, woken when the head of the queue is due (late by the kernel's timer
// slack, 50 µs), that sends every answer due by then.
static void *send_when_due(void *unused) {
  (void)unused;
  pthread_mutex_lock(&queue_lock);
  for (;;) {
    if (queue_head == NULL) {
      if (queue_closed) break;
      pthread_cond_wait(&queue_changed, &queue_lock);
      continue;
    }
    uint64_t now = now_ns();
    if (queue_head->due_ns > now && !queue_closed) {
      struct timespec until = {.tv_sec = (time_t)(queue_head->due_ns / 1000000000u),
                               .tv_nsec = (long)(queue_head->due_ns % 1000000000u)};
      pthread_cond_timedwait(&queue_changed, &queue_lock, &until);
      continue;
    }
    struct answer *due = queue_head;
    struct answer *last = due;
    while (last->next != NULL && (last->next->due_ns <= now || queue_closed)) last = last->next;
    queue_head = last->next;
    if (queue_head == NULL) queue_tail = NULL;
    last->next = NULL;
    pthread_mutex_unlock(&queue_lock);
    while (due != NULL) {
      struct answer *next = due->next;
      send_answer(due);
      due = next;
    }
    pthread_mutex_lock(&queue_lock);
  }
  pthread_mutex_unlock(&queue_lock);
  return NULL;
}

static struct answer *new_answer(fuse_req_t req, enum answer_kind kind) {
  struct answer *a = calloc(1, sizeof *a);
  if (a == NULL) {
    fuse_reply_err(req, ENOMEM);
    return NULL;
  }
  a->req = req;
  a->kind = kind;
  return a;
}

static void answer_error(fuse_req_t req, int error) {
  struct answer *a = new_answer(req, ANSWER_ERROR);
  if (a == NULL) return;
  a->error = error;
  answer_later(a);
}

static void log_request(fuse_req_t req, const char *op, const char *path, const char *name) {
  if (opens_log_fd < 0) return;
  const char *between = name == NULL ? "" : strcmp(path, "/") ? "/" : "";
  dprintf(opens_log_fd, "%d %s %s%s%s\n", (int)fuse_req_ctx(req)->pid, op, path, between, name == NULL ? "" : name);
}

// --- The requests ---------------------------------------------------------------------------

static void latency_init(void *userdata, struct fuse_conn_info *conn) {
  (void)userdata;
  // Reads issued by readahead are the kernel's background requests, of which it keeps at most
  // 12 in flight by default: as many as the threads, so that a reader's depth reaches the daemon.
  conn->max_background = MAX_BACKGROUND;
  conn->congestion_threshold = MAX_BACKGROUND * 3 / 4;
}

static void latency_lookup(fuse_req_t req, fuse_ino_t parent_id, const char *name) {
  struct inode *parent = inode_of(parent_id);
  log_request(req, "stat", parent->path, name);
  struct answer *a = new_answer(req, ANSWER_ENTRY);
  if (a == NULL) return;
  struct stat st;
  int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
    int error = errno;
    close(fd);
    fd = -1;
    errno = error;
  }
  // hold_inode takes the descriptor, and closes it where it fails.
  if (fd >= 0) a->looked_up = hold_inode(fd, &st, parent->path, name);
  if (a->looked_up == NULL) {
    a->kind = ANSWER_ERROR;
    a->error = errno;
  } else {
    a->u.entry.ino = id_of(a->looked_up);
    a->u.entry.attr = st;
    a->u.entry.attr_timeout = cache_s;
    a->u.entry.entry_timeout = cache_s;
  }
  answer_later(a);
}

static void latency_forget(fuse_req_t req, fuse_ino_t ino, uint64_t count) {
  forget_inode(inode_of(ino), count);
  fuse_reply_none(req);
}

static void latency_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
  for (size_t i = 0; i < count; i++) forget_inode(inode_of(forgets[i].ino), forgets[i].nlookup);
  fuse_reply_none(req);
}

static void latency_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)fi;
  struct inode *inode = inode_of(ino);
  log_request(req, "stat", inode->path, NULL);
  struct answer *a = new_answer(req, ANSWER_ATTR);
  if (a == NULL) return;
  if (fstatat(inode->fd, "", &a->u.attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
    a->kind = ANSWER_ERROR;
    a->error = errno;
  }
  answer_later(a);
}

static void latency_readlink(fuse_req_t req, fuse_ino_t ino) {
  struct answer *a = new_answer(req, ANSWER_BUFFER);
  if (a == NULL) return;
  char target[PATH_MAX];
  ssize_t n = readlinkat(inode_of(ino)->fd, "", target, sizeof target - 1);
  if (n < 0 || (a->u.buffer.data = strndup(target, (size_t)n)) == NULL) {
    a->kind = ANSWER_ERROR;
    a->error = n < 0 ? errno : ENOMEM;
  } else {
    a->u.buffer.size = (size_t)n;
  }
  // fuse_reply_readlink takes a string; the buffer answer sends the same bytes without the NUL.
  answer_later(a);
}

// Opens the inode's file anew through its O_PATH descriptor, with flags.
static int reopen(struct inode *inode, int flags) {
  char proc_path[64];
  snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", inode->fd);
  return open(proc_path, flags | O_CLOEXEC);
}

static void latency_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct inode *inode = inode_of(ino);
  log_request(req, "open", inode->path, NULL);
  if ((fi->flags & O_ACCMODE) != O_RDONLY) {
    answer_error(req, EROFS);
    return;
  }
  struct answer *a = new_answer(req, ANSWER_OPEN);
  if (a == NULL) return;
  // The kernel resolves the path's symbolic links itself; what comes here is a file to open.
  int fd = reopen(inode, fi->flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW));
  if (fd < 0) {
    a->kind = ANSWER_ERROR;
    a->error = errno;
  } else {
    a->u.file = *fi;
    a->u.file.fh = (uint64_t)fd;
  }
  answer_later(a);
}

static void latency_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
  log_request(req, "read", inode_of(ino)->path, NULL);
  struct answer *a = new_answer(req, ANSWER_BUFFER);
  if (a == NULL) return;
  char *data = malloc(size > 0 ? size : 1);
  size_t done = 0;
  int error = data == NULL ? ENOMEM : 0;
  while (error == 0 && done < size) {
    ssize_t n = pread((int)fi->fh, data + done, size - done, offset + (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && done == 0) error = errno;
    if (n <= 0) break;
    done += (size_t)n;
  }
  if (error != 0) {
    free(data);
    a->kind = ANSWER_ERROR;
    a->error = error;
  } else {
    a->u.buffer.data = data;
    a->u.buffer.size = done;
  }
  answer_later(a);
}

static void latency_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  close((int)fi->fh);
  answer_error(req, 0);
}

static void latency_statfs(fuse_req_t req, fuse_ino_t ino) {
  struct inode *inode = inode_of(ino);
  log_request(req, "statfs", inode->path, NULL);
  struct answer *a = new_answer(req, ANSWER_STATFS);
  if (a == NULL) return;
  if (fstatvfs(root.fd, &a->u.statfs) < 0) {
    a->kind = ANSWER_ERROR;
    a->error = errno;
  }
  answer_later(a);
}

// A directory's handle is its DIR stream.
static void latency_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct answer *a = new_answer(req, ANSWER_OPEN);
  if (a == NULL) return;
  int fd = openat(inode_of(ino)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir = fd < 0 ? NULL : fdopendir(fd);
  if (dir == NULL) {
    a->kind = ANSWER_ERROR;
    a->error = errno;
    if (fd >= 0) close(fd);
  } else {
    a->u.file = *fi;
    a->u.file.fh = (uint64_t)(uintptr_t)dir;
    a->opens_dir = 1;
  }
  answer_later(a);
}

// The entries from offset on (each entry's offset is where the next one starts), as many as fit.
static void latency_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
  (void)ino;
  struct answer *a = new_answer(req, ANSWER_BUFFER);
  if (a == NULL) return;
  DIR *dir = (DIR *)(uintptr_t)fi->fh;
  char *data = malloc(size > 0 ? size : 1);
  if (data == NULL) {
    a->kind = ANSWER_ERROR;
    a->error = ENOMEM;
    answer_later(a);
    return;
  }
  if (offset == 0) rewinddir(dir);
  else seekdir(dir, offset);
  size_t used = 0;
  for (;;) {
    errno = 0;
    struct dirent *entry = readdir(dir);
    if (entry == NULL) {
      if (errno != 0 && used == 0) {
        free(data);
        a->kind = ANSWER_ERROR;
        a->error = errno;
        answer_later(a);
        return;
      }
      break;
    }
    struct stat st = {.st_ino = entry->d_ino, .st_mode = (mode_t)DTTOIF(entry->d_type)};
    size_t needed = fuse_add_direntry(req, data + used, size - used, entry->d_name, &st, entry->d_off);
    if (needed > size - used) break;
    used += needed;
  }
  a->u.buffer.data = data;
  a->u.buffer.size = used;
  answer_later(a);
}

static void latency_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  closedir((DIR *)(uintptr_t)fi->fh);
  answer_error(req, 0);
}

static const struct fuse_lowlevel_ops latency_ops = {
    .init = latency_init,
    .lookup = latency_lookup,
    .forget = latency_forget,
    .forget_multi = latency_forget_multi,
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

// --- The command line -----------------------------------------------------------------------

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
// stays for libfuse), and notes a request for help.
static int take_argument(void *data, const char *arg, int key, struct fuse_args *outargs) {
  (void)data;
  (void)outargs;
  if (key == KEY_HELP) {
    options.show_help = 1;
    return 0;
  }
  if (key == FUSE_OPT_KEY_NONOPT && options.source == NULL) {
    options.source = arg;
    return 0;
  }
  return 1;
}

static void usage(const char *program) {
  printf("usage: %s SOURCE MOUNTPOINT [--delay-us=N] [--cache-ms=N] [--opens-log=FILE] [-f] [-o OPTION,...]\n"
         "  --delay-us=N      answer each request N microseconds after serving it (default %u)\n"
         "  --cache-ms=N      how long the kernel may keep names and attributes (default %u)\n"
         "  --opens-log=FILE  append the asking thread's ID, open, statfs, stat or read, and the\n"
         "                    path of each open, statfs, stat (or lookup) and read to FILE\n\n",
         program, DEFAULT_DELAY_US, DEFAULT_CACHE_MS);
}

static int serve(struct fuse_args *args) {
  struct fuse_cmdline_opts cmdline;
  if (fuse_parse_cmdline(args, &cmdline) != 0) return 1;
  int status = 1;
  struct fuse_session *se = NULL;
  struct fuse_loop_config *loop = NULL;
  pthread_t sender;
  int sending = 0;
  if (cmdline.mountpoint == NULL) {
    fprintf(stderr, "fuse_latency: no mount point\n");
    goto out;
  }
  se = fuse_session_new(args, &latency_ops, sizeof latency_ops, NULL);
  if (se == NULL) goto out;
  if (fuse_set_signal_handlers(se) != 0) goto out;
  if (fuse_session_mount(se, cmdline.mountpoint) != 0) goto out_signals;
  fuse_daemonize(cmdline.foreground);
  pthread_condattr_t clock;
  pthread_condattr_init(&clock);
  pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
  pthread_cond_init(&queue_changed, &clock);
  pthread_condattr_destroy(&clock);
  if (pthread_create(&sender, NULL, send_when_due, NULL) != 0) goto out_unmount;
  sending = 1;
  if (cmdline.singlethread) {
    status = fuse_session_loop(se) != 0;
  } else {
    loop = fuse_loop_cfg_create();
    if (loop == NULL) goto out_unmount;
    fuse_loop_cfg_set_clone_fd(loop, (unsigned int)cmdline.clone_fd);
    fuse_loop_cfg_set_max_threads(loop, cmdline.max_threads);
    fuse_loop_cfg_set_idle_threads(loop, cmdline.max_idle_threads);
    status = fuse_session_loop_mt(se, loop) != 0;
  }
out_unmount:
  if (sending) {
    // What is still queued is sent at once, then the sender ends.
    pthread_mutex_lock(&queue_lock);
    queue_closed = 1;
    pthread_cond_signal(&queue_changed);
    pthread_mutex_unlock(&queue_lock);
    pthread_join(sender, NULL);
  }
  fuse_session_unmount(se);
out_signals:
  fuse_remove_signal_handlers(se);
out:
  if (loop != NULL) fuse_loop_cfg_destroy(loop);
  if (se != NULL) fuse_session_destroy(se);
  free(cmdline.mountpoint);
  return status;
}

int main(int argc, char *argv[]) {
  struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
  if (fuse_opt_parse(&args, &options, latency_opts, take_argument) != 0) return 1;
  if (options.show_help) {
    usage(argv[0]);
    fuse_cmdline_help();
    fuse_lowlevel_help();
    return 0;
  }
  if (options.source == NULL) {
    usage(argv[0]);
    fprintf(stderr, "%s: no source directory\n", argv[0]);
    return 1;
  }
  cache_s = options.cache_ms / 1000.0;
  root.fd = open(options.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root.fd < 0) {
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
  int status = serve(&args);
  fuse_opt_free_args(&args);
  close(root.fd);
  return status;
}
