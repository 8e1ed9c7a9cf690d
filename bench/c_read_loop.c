// SPDX-License-Identifier: MIT
// The bench's C driver: the least a reader must do (open, fstat, malloc, read to EOF, close, free), timed as the JS peers are.
//
// The bench (peers.js) compiles this file on first use and drives it over stdin and stdout with
// the protocol of peer_runner.js (see there), with one reader, 'read'. An operation frees the
// previous operation's results, then for each file opens it, fstat()s it, allocates its size,
// reads until it has that many bytes or read() returns 0 (a file that reports no size, as procfs
// files do, is read in growing chunks until EOF), closes it; then consumes the results as
// consume.js does (one byte per 4 KiB page, or every byte as 32-bit words folded by XOR). The
// timed loop is tinybench's: a warm-up, then operations timed one by one until both their total
// time and their count reach the bench's minimum; the page faults and peak RSS of the timed
// operations come from getrusage() after /proc/self/clear_refs reset the high-water mark, as in
// resources.js. Results are verified by a CRC-32 (zlib's) and a length per file.
//
// Built with liburing (HAVE_LIBURING, which peers.js defines where pkg-config finds it), it has a
// second reader, 'uring': the least an io_uring reader does for many files, URING_DEPTH of them
// in flight, each a hard-linked chain OPENAT (into a direct descriptor) -> READ (up to
// URING_READ_MAX bytes into a buffer malloc'd for it) -> CLOSE; a file that fills the buffer is
// read again the plain way. It is the limit a batch reader at that depth can reach on a device.
// On a filesystem whose open asks a server (FUSE, NFS, SMB, 9p, Ceph), the kernel runs an OPENAT
// inline in io_uring_enter, where it waits for the answer, and would make the submissions one
// open at a time: there each OPENAT goes to an io-wq worker (IOSQE_ASYNC), as smartread's own
// do where opens wait. io-wq's bounded workers (which run the READs) are raised to the depth.
// Of one file, 'uring' first asks its size (stat() of the path, on the calling thread, as
// smartread's own 'uring' strategy does) and reads it whole, one byte more asked to see EOF, in
// the same chain, then waits for the CLOSE: the least an io_uring reader of one file does, where
// io_uring reads it inline (a cached file on a disk) and where it hands it to a worker
// (overlayfs, FUSE: a thread hop and a wake-up), with no event loop in the way.
//
// A third reader, 'threads', does what 'read' does from every online CPU at once: a crew of one
// thread per CPU but the first, made when the program starts (its ready line says how many
// threads read) and waiting between operations (as a batch reader's pool would), and the
// calling thread, each claiming the next unread file of the list. It is the least a batch reader that uses the whole machine must do: on warm files,
// where reading is work for the CPUs, the limit of a readMany on this machine.
// Of one file, the same crew reads chunks (CHUNK_BYTES each, claimed the same way) into the one
// allocation of the file's size: the least a reader of one large file must do to use every CPU.
// A file under two chunks is read by the calling thread alone, as 'read' does: waking the crew
// would cost it more than it could share.
//
// While 'threads' is timed, one more thread stands for an event loop beside it: it sleeps
// WATCH_MS at a time and records how late each wake-up was, as loop_stall.js records the loop's
// stalls, and the reply's loopStall carries the longest and the p99. With every CPU copying,
// that is how long this machine keeps a waking thread from running, whatever the reader.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

// What fs.readFileSync reads at a time from a file that reports no size (kReadFileUnknownBufferLength).
#define UNKNOWN_SIZE_CHUNK (64 * 1024)
#define PAGE_STRIDE 4096
// The 'threads' reader's chunk of one file, and its watcher's sleep (see the top of this file).
#define CHUNK_BYTES (2 * 1024 * 1024)
#define WATCH_MS 1

struct file_bytes {
  unsigned char *data;
  size_t length;
};

struct context {
  int uring;         // the reader of the command at hand is 'uring'
  int threads;       // ... or 'threads'
  int many;          // 'files': every path in one operation; else the first only
  int consume_all;   // consume every byte, not one per page
  char *list;        // the paths file's contents; paths point into it
  char **paths;
  size_t count;
  int opens_ask_a_server;  // the paths' filesystem asks a server on open (see opens_ask_a_server)
};

// Why an operation failed, said as node:fs says it: "ENOENT: no such file or directory, open '/x'".
struct failure {
  int error;
  const char *syscall;
  const char *path;
};

// What consumption leaves behind, so that the compiler cannot drop a read nobody looks at.
static volatile uint32_t sink;

static void *allocate_or_exit(size_t size) {
  void *p = malloc(size);
  if (p == NULL) {
    fprintf(stderr, "c_read_loop: out of memory for %zu bytes\n", size);
    exit(1);
  }
  return p;
}

static void print_json_string(const char *text) {
  putchar('"');
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\') {
      printf("\\%c", *c);
    } else if (*c < 0x20) {
      printf("\\u%04x", *c);
    } else {
      putchar(*c);
    }
  }
  putchar('"');
}

static void reply_error(const char *message) {
  fputs("{\"ok\":false,\"error\":", stdout);
  print_json_string(message);
  fputs("}\n", stdout);
  fflush(stdout);
}

static void reply_failure(const struct failure *failure) {
  char message[4096];
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 32)
  const char *name = strerrorname_np(failure->error);
#else
  const char *name = NULL;
#endif
  char lower[256];
  snprintf(lower, sizeof lower, "%s", strerror(failure->error));
  if (lower[0] >= 'A' && lower[0] <= 'Z') lower[0] = (char)(lower[0] - 'A' + 'a');
  snprintf(message, sizeof message, "%s: %s, %s '%s'", name ? name : "EUNKNOWN", lower, failure->syscall, failure->path);
  reply_error(message);
}

static int fail(struct failure *failure, const char *syscall, const char *path) {
  failure->error = errno;
  failure->syscall = syscall;
  failure->path = path;
  return -1;
}

/** Reads `fd`, open on `path`, whose fstat() gave `st`, to its end; closes it either way. */
static int read_open_file(int fd, const struct stat *st, const char *path, struct file_bytes *out, struct failure *failure) {
  size_t size = st->st_size > 0 ? (size_t)st->st_size : 0;
  size_t capacity = size > 0 ? size : UNKNOWN_SIZE_CHUNK;
  unsigned char *data = malloc(capacity);
  if (data == NULL) {
    fail(failure, "malloc", path);
    close(fd);
    return -1;
  }
  size_t length = 0;
  for (;;) {
    if (length == capacity) {
      // All of the size fstat() gave: done, as fs.readFileSync is.
      if (size > 0) break;
      unsigned char *grown = realloc(data, capacity * 2);
      if (grown == NULL) {
        fail(failure, "malloc", path);
        free(data);
        close(fd);
        return -1;
      }
      data = grown;
      capacity *= 2;
    }
    ssize_t n = read(fd, data + length, capacity - length);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(failure, "read", path);
      free(data);
      close(fd);
      return -1;
    }
    if (n == 0) break;
    length += (size_t)n;
  }
  close(fd);
  out->data = data;
  out->length = length;
  return 0;
}

/** Opens `path`, or fails as fs.readFileSync would; fstat()s it into `st`. The fd, or -1. */
static int open_and_stat(const char *path, struct stat *st, struct failure *failure) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(failure, "open", path);
  if (fstat(fd, st) != 0) {
    fail(failure, "fstat", path);
    close(fd);
    return -1;
  }
  return fd;
}

static int read_file(const char *path, struct file_bytes *out, struct failure *failure) {
  struct stat st;
  int fd = open_and_stat(path, &st, failure);
  if (fd < 0) return -1;
  return read_open_file(fd, &st, path, out, failure);
}

static size_t operation_files(const struct context *ctx) {
  return ctx->many ? ctx->count : 1;
}

static void free_results(struct file_bytes *results, size_t count) {
  for (size_t i = 0; i < count; i++) {
    free(results[i].data);
    results[i].data = NULL;
  }
}

#ifdef HAVE_LIBURING
// The io_uring reader (see the top of this file): its files in flight, and what each may read.
#define URING_DEPTH 64
#define URING_READ_MAX (64 * 1024)
#define URING_OPEN 0
#define URING_READ 1
#define URING_CLOSE 2

static struct io_uring ring;
static int ring_state;  // 0: not set up yet; 1: ready; -1: setup failed (ring_error)
static int ring_error;

static int ring_ready(struct failure *failure) {
  if (ring_state == 0) {
    int ret = io_uring_queue_init(4 * URING_DEPTH, &ring, 0);
    if (ret == 0) {
      ret = io_uring_register_files_sparse(&ring, URING_DEPTH);
      if (ret != 0) io_uring_queue_exit(&ring);
    }
    if (ret == 0) {
      // io-wq's default is min(SQ entries, 4 x CPUs) bounded workers; 0 keeps the unbounded limit.
      // A kernel without the call (before 5.15) keeps its default.
      unsigned workers[2] = {URING_DEPTH, 0};
      io_uring_register_iowq_max_workers(&ring, workers);
    }
    ring_state = ret == 0 ? 1 : -1;
    ring_error = -ret;
  }
  if (ring_state == 1) return 0;
  failure->error = ring_error;
  failure->syscall = "io_uring_setup";
  failure->path = "";
  return -1;
}

// The chain of file `index`, in direct descriptor `slot`. Hard links: a short read (the usual
// end of a file) must not cancel the CLOSE, and a failed OPENAT leaves READ and CLOSE to fail
// on an empty slot, harmlessly.
static void queue_file(const struct context *ctx, size_t index, unsigned slot, struct file_bytes *result, size_t capacity) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
  // No O_CLOEXEC: a direct descriptor is no fd to inherit, and the kernel refuses the flag.
  io_uring_prep_openat_direct(sqe, AT_FDCWD, ctx->paths[index], O_RDONLY, 0, slot);
  sqe->flags |= IOSQE_IO_HARDLINK | (ctx->opens_ask_a_server ? IOSQE_ASYNC : 0);
  io_uring_sqe_set_data64(sqe, (uint64_t)index << 2 | URING_OPEN);
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_read(sqe, (int)slot, result->data, (unsigned)capacity, 0);
  sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
  io_uring_sqe_set_data64(sqe, (uint64_t)index << 2 | URING_READ);
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_close_direct(sqe, slot);
  io_uring_sqe_set_data64(sqe, (uint64_t)index << 2 | (uint64_t)slot << 32 | URING_CLOSE);
}

static int uring_operation(const struct context *ctx, struct file_bytes *results, struct failure *failure) {
  size_t count = operation_files(ctx);
  if (ring_ready(failure) != 0) return -1;
  // Many files: each read into URING_READ_MAX bytes, unsized. One: sized first, and one byte
  // more; where stat() fails, unsized, and the OPENAT fails as node:fs's open would. A READ's
  // length is 32 bits: a file of 4 GiB or more is read unsized too (then again the plain way).
  size_t capacity = URING_READ_MAX;
  struct stat st;
  if (!ctx->many && stat(ctx->paths[0], &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uint64_t)st.st_size < UINT32_MAX) {
    capacity = (size_t)st.st_size + 1;
  }
  for (size_t i = 0; i < count; i++) {
    results[i].data = malloc(capacity);
    results[i].length = 0;
    if (results[i].data == NULL) {
      free_results(results, i);
      return fail(failure, "malloc", ctx->paths[i]);
    }
  }
  // The first error of each file, as node:fs names it; every chain runs to its CLOSE.
  int *errors = calloc(count, sizeof *errors);
  const char **syscalls = calloc(count, sizeof *syscalls);
  if (errors == NULL || syscalls == NULL) {
    free(errors);
    free(syscalls);
    free_results(results, count);
    return fail(failure, "malloc", ctx->paths[0]);
  }
  size_t next = 0;
  size_t done = 0;
  for (unsigned slot = 0; slot < URING_DEPTH && next < count; slot++, next++) queue_file(ctx, next, slot, &results[next], capacity);
  while (done < count) {
    int ret = io_uring_submit_and_wait(&ring, 1);
    if (ret < 0 && ret != -EINTR) {
      fprintf(stderr, "c_read_loop: io_uring_submit_and_wait: %s\n", strerror(-ret));
      exit(1);
    }
    struct io_uring_cqe *cqe;
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++;
      uint64_t data = cqe->user_data;
      size_t index = (size_t)(data >> 2 & 0x3fffffff);
      int op = (int)(data & 3);
      if (op == URING_OPEN && cqe->res < 0 && errors[index] == 0) {
        errors[index] = -cqe->res;
        syscalls[index] = "open";
      } else if (op == URING_READ) {
        if (cqe->res >= 0) {
          results[index].length = (size_t)cqe->res;
        } else if (errors[index] == 0) {
          errors[index] = -cqe->res;
          syscalls[index] = "read";
        }
      } else if (op == URING_CLOSE) {
        done++;
        if (next < count) {
          queue_file(ctx, next, (unsigned)(data >> 32), &results[next], capacity);
          next++;
        }
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
  int status = 0;
  for (size_t i = 0; i < count && status == 0; i++) {
    if (errors[i] != 0) {
      errno = errors[i];
      status = fail(failure, syscalls[i], ctx->paths[i]);
    } else if (results[i].length == capacity) {
      // It may hold more (or grew since its stat): read again, whole.
      free(results[i].data);
      results[i].data = NULL;
      status = read_file(ctx->paths[i], &results[i], failure);
    }
  }
  free(errors);
  free(syscalls);
  if (status != 0) free_results(results, count);
  return status;
}
#endif

// The 'threads' reader's crew (see the top of this file). An operation is a generation: the
// calling thread publishes the list and wakes the crew, every thread claims files by an atomic
// counter until none is left, and the operation ends when the last helper has stopped.
static struct {
  pthread_mutex_t lock;
  pthread_cond_t start;
  pthread_cond_t finished;
  int made;
  size_t helpers;
  unsigned long generation;
  size_t working;               // helpers still at the current operation
  const struct context *ctx;
  struct file_bytes *results;
  size_t count;
  atomic_size_t next;           // the next file (or, of one file, chunk) to claim
  atomic_int failed;            // a file failed: claim no more
  struct failure failure;       // the failure of the lowest index, as a loop would meet it first
  size_t failure_index;
  // One file read in chunks (chunked): its descriptor, where its bytes go, its size, and the
  // lowest offset at which a read came up short (the file shrank), else its size.
  int chunked;
  int fd;
  unsigned char *dest;
  size_t size;
  size_t end;
} crew = {
  .lock = PTHREAD_MUTEX_INITIALIZER,
  .start = PTHREAD_COND_INITIALIZER,
  .finished = PTHREAD_COND_INITIALIZER,
};

// Records the failure of claim `i` (a file's index, or a chunk's) if no lower one failed.
static void crew_failed(size_t i, const struct failure *failure) {
  pthread_mutex_lock(&crew.lock);
  if (i < crew.failure_index) {
    crew.failure_index = i;
    crew.failure = *failure;
  }
  pthread_mutex_unlock(&crew.lock);
  atomic_store_explicit(&crew.failed, 1, memory_order_relaxed);
}

static void crew_read_chunks(void) {
  for (;;) {
    if (atomic_load_explicit(&crew.failed, memory_order_relaxed)) return;
    size_t i = atomic_fetch_add_explicit(&crew.next, 1, memory_order_relaxed);
    size_t offset = i * CHUNK_BYTES;
    if (offset >= crew.size) return;
    size_t end = offset + CHUNK_BYTES < crew.size ? offset + CHUNK_BYTES : crew.size;
    while (offset < end) {
      ssize_t n = pread(crew.fd, crew.dest + offset, end - offset, (off_t)offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        struct failure failure;
        fail(&failure, "read", crew.ctx->paths[0]);
        crew_failed(i, &failure);
        return;
      }
      if (n == 0) {
        pthread_mutex_lock(&crew.lock);
        if (offset < crew.end) crew.end = offset;
        pthread_mutex_unlock(&crew.lock);
        break;
      }
      offset += (size_t)n;
    }
  }
}

static void crew_read(void) {
  if (crew.chunked) {
    crew_read_chunks();
    return;
  }
  for (;;) {
    if (atomic_load_explicit(&crew.failed, memory_order_relaxed)) return;
    size_t i = atomic_fetch_add_explicit(&crew.next, 1, memory_order_relaxed);
    if (i >= crew.count) return;
    struct failure failure;
    if (read_file(crew.ctx->paths[i], &crew.results[i], &failure) == 0) continue;
    // Every file below a claimed one was claimed before it, and is read to its end: the lowest
    // failing index is found even though no more are claimed from here.
    crew_failed(i, &failure);
  }
}

static void *crew_main(void *unused) {
  (void)unused;
  unsigned long seen = 0;
  pthread_mutex_lock(&crew.lock);
  for (;;) {
    while (crew.generation == seen) pthread_cond_wait(&crew.start, &crew.lock);
    seen = crew.generation;
    pthread_mutex_unlock(&crew.lock);
    crew_read();
    pthread_mutex_lock(&crew.lock);
    if (--crew.working == 0) pthread_cond_signal(&crew.finished);
  }
  return NULL;
}

/** Makes the crew once: one helper per online CPU but the calling thread's (as many as can be made). */
static void crew_make(void) {
  if (crew.made) return;
  crew.made = 1;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (long k = 1; k < cpus; k++) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, crew_main, NULL) != 0) break;
    pthread_detach(thread);
    crew.helpers++;
  }
}

/** Wakes the crew on the operation set up in `crew`, reads beside it, waits for it; 0 or -1. */
static int crew_run(struct failure *failure) {
  pthread_mutex_lock(&crew.lock);
  atomic_store(&crew.next, 0);
  atomic_store(&crew.failed, 0);
  crew.failure_index = SIZE_MAX;
  crew.working = crew.helpers;
  crew.generation++;
  pthread_cond_broadcast(&crew.start);
  pthread_mutex_unlock(&crew.lock);
  crew_read();
  pthread_mutex_lock(&crew.lock);
  while (crew.working > 0) pthread_cond_wait(&crew.finished, &crew.lock);
  int status = 0;
  if (crew.failure_index != SIZE_MAX) {
    *failure = crew.failure;
    status = -1;
  }
  pthread_mutex_unlock(&crew.lock);
  return status;
}

/** One file by the whole crew, in chunks (a small one, or one without a size: by this thread). */
static int threads_read_one(const struct context *ctx, struct file_bytes *result, struct failure *failure) {
  const char *path = ctx->paths[0];
  struct stat st;
  int fd = open_and_stat(path, &st, failure);
  if (fd < 0) return -1;
  if (st.st_size < 2 * CHUNK_BYTES) return read_open_file(fd, &st, path, result, failure);
  size_t size = (size_t)st.st_size;
  unsigned char *data = malloc(size);
  if (data == NULL) {
    close(fd);
    return fail(failure, "malloc", path);
  }
  crew.ctx = ctx;
  crew.chunked = 1;
  crew.fd = fd;
  crew.dest = data;
  crew.size = size;
  crew.end = size;
  int status = crew_run(failure);
  crew.chunked = 0;
  close(fd);
  if (status != 0) {
    free(data);
    return -1;
  }
  result->data = data;
  result->length = crew.end;
  return 0;
}

static int threads_operation(const struct context *ctx, struct file_bytes *results, struct failure *failure) {
  size_t count = operation_files(ctx);
  crew_make();
  for (size_t i = 0; i < count; i++) {
    results[i].data = NULL;
    results[i].length = 0;
  }
  if (!ctx->many) return threads_read_one(ctx, &results[0], failure);
  crew.ctx = ctx;
  crew.results = results;
  crew.count = count;
  int status = crew_run(failure);
  if (status != 0) free_results(results, count);
  return status;
}

/** The number of threads the 'threads' reader reads with; makes its crew. */
static size_t crew_threads(void) {
  crew_make();
  return crew.helpers + 1;
}

/** One operation's reads into `results`; on a failure, nothing of it stays allocated. */
static int read_operation(const struct context *ctx, struct file_bytes *results, struct failure *failure) {
  size_t count = operation_files(ctx);
  if (ctx->threads) return threads_operation(ctx, results, failure);
#ifdef HAVE_LIBURING
  if (ctx->uring) return uring_operation(ctx, results, failure);
#endif
  for (size_t i = 0; i < count; i++) {
    if (read_file(ctx->paths[i], &results[i], failure) != 0) {
      free_results(results, i);
      return -1;
    }
  }
  return 0;
}

static void consume(const struct file_bytes *results, size_t count, int all) {
  uint32_t sum = sink;
  for (size_t f = 0; f < count; f++) {
    const unsigned char *data = results[f].data;
    size_t length = results[f].length;
    if (!all) {
      for (size_t i = 0; i < length; i += PAGE_STRIDE) sum ^= data[i];
      continue;
    }
    size_t words = length / 4;
    for (size_t i = 0; i < words; i++) {
      uint32_t word;
      memcpy(&word, data + i * 4, sizeof word);
      sum ^= word;
    }
    for (size_t i = words * 4; i < length; i++) sum ^= data[i];
  }
  sink = sum;
}

static uint32_t crc_table[256];

static void make_crc_table(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

static uint32_t crc32_of(const unsigned char *data, size_t length) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < length; i++) c = crc_table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

// ---------------------------------------------------------------------------------------------
// Commands

static void free_context(struct context *ctx) {
  free(ctx->list);
  free(ctx->paths);
  memset(ctx, 0, sizeof *ctx);
}

// statfs(2) f_type of the filesystems whose open asks a server (linux/magic.h, fs/smb, fs/ceph).
static const unsigned long OPENS_ASK_A_SERVER[] = {
    0x65735546,  // FUSE_SUPER_MAGIC
    0x6969,      // NFS_SUPER_MAGIC
    0xfe534d42,  // SMB2_SUPER_MAGIC
    0xff534d42,  // CIFS_SUPER_MAGIC
    0x01021997,  // V9FS_MAGIC
    0x00c36400,  // CEPH_SUPER_MAGIC
};

// Whether the filesystem of `path` asks a server on open; one that statfs cannot name does not.
static int opens_ask_a_server(const char *path) {
  struct statfs fs;
  if (statfs(path, &fs) != 0) return 0;
  for (size_t i = 0; i < sizeof OPENS_ASK_A_SERVER / sizeof OPENS_ASK_A_SERVER[0]; i++) {
    if ((unsigned long)fs.f_type == OPENS_ASK_A_SERVER[i]) return 1;
  }
  return 0;
}

static void command_context(struct context *ctx, char *args) {
  char *shape = strsep(&args, " ");
  char *consume_mode = args ? strsep(&args, " ") : NULL;
  const char *file = args;
  if (shape == NULL || consume_mode == NULL || file == NULL || *file == '\0') {
    reply_error("context: expected SHAPE CONSUME FILE");
    return;
  }
  int many = strcmp(shape, "files") == 0;
  if (!many && strcmp(shape, "file") != 0) {
    reply_error("context: shape must be file or files");
    return;
  }
  int all = strcmp(consume_mode, "all") == 0;
  if (!all && strcmp(consume_mode, "page") != 0) {
    reply_error("context: consume must be page or all");
    return;
  }
  FILE *f = fopen(file, "rb");
  if (f == NULL) {
    struct failure failure;
    fail(&failure, "open", file);
    reply_failure(&failure);
    return;
  }
  size_t capacity = 1 << 16;
  size_t length = 0;
  char *list = allocate_or_exit(capacity);
  size_t n;
  while ((n = fread(list + length, 1, capacity - length, f)) > 0) {
    length += n;
    if (length == capacity) {
      capacity *= 2;
      list = realloc(list, capacity);
      if (list == NULL) {
        fprintf(stderr, "c_read_loop: out of memory for the paths\n");
        exit(1);
      }
    }
  }
  fclose(f);
  size_t count = 0;
  for (size_t i = 0; i < length; i++) count += list[i] == '\0';
  if (count == 0 || (!many && count != 1)) {
    free(list);
    reply_error(count == 0 ? "context: no paths" : "context: shape file reads one path");
    return;
  }
  char **paths = allocate_or_exit(count * sizeof *paths);
  for (size_t i = 0, p = 0; p < count; p++) {
    paths[p] = list + i;
    i += strlen(list + i) + 1;
  }
  free_context(ctx);
  ctx->many = many;
  ctx->consume_all = all;
  ctx->list = list;
  ctx->paths = paths;
  ctx->count = count;
  // The list's files lie on one filesystem, the bench's target.
  ctx->opens_ask_a_server = opens_ask_a_server(paths[0]);
  printf("{\"ok\":true,\"files\":%zu}\n", count);
  fflush(stdout);
}

// Sets the context's reader for the command at hand: 'read', 'threads', or 'uring' where built
// with liburing.
static int check_reader(struct context *ctx, const char *reader) {
  ctx->threads = reader != NULL && strcmp(reader, "threads") == 0;
  ctx->uring = 0;
#ifdef HAVE_LIBURING
  if (reader != NULL && strcmp(reader, "uring") == 0) {
    ctx->uring = 1;
  } else if (reader == NULL || (strcmp(reader, "read") != 0 && !ctx->threads)) {
    reply_error("the C driver's readers are 'read', 'threads' and 'uring'");
    return -1;
  }
#else
  if (reader == NULL || (strcmp(reader, "read") != 0 && !ctx->threads)) {
    reply_error(reader != NULL && strcmp(reader, "uring") == 0 ? "the C driver was built without liburing: no 'uring' reader"
                                                                : "the C driver's readers are 'read' and 'threads'");
    return -1;
  }
#endif
  if (ctx->paths == NULL) {
    reply_error("no context: send context first");
    return -1;
  }
  return 0;
}

static void command_verify(struct context *ctx, char *args) {
  if (check_reader(ctx, args) != 0) return;
  size_t count = operation_files(ctx);
  struct file_bytes *results = allocate_or_exit(count * sizeof *results);
  struct failure failure;
  if (read_operation(ctx, results, &failure) != 0) {
    free(results);
    reply_failure(&failure);
    return;
  }
  fputs("{\"ok\":true,\"algorithm\":\"crc32\",\"lengths\":[", stdout);
  for (size_t i = 0; i < count; i++) printf("%s%zu", i ? "," : "", results[i].length);
  fputs("],\"digests\":[", stdout);
  for (size_t i = 0; i < count; i++) printf("%s\"%08x\"", i ? "," : "", crc32_of(results[i].data, results[i].length));
  fputs("]}\n", stdout);
  fflush(stdout);
  free_results(results, count);
  free(results);
}

/** Asks the bench to evict the files before a cold operation; 0 once it has, else -1 with `reason` set. */
static int await_eviction(int check_all, char **line, size_t *capacity, char *reason, size_t reason_size) {
  printf("{\"evict\":true,\"checkAll\":%s}\n", check_all ? "true" : "false");
  fflush(stdout);
  ssize_t n = getline(line, capacity, stdin);
  if (n < 0) {
    snprintf(reason, reason_size, "stdin ended while waiting for an eviction");
    return -1;
  }
  if (n > 0 && (*line)[n - 1] == '\n') (*line)[n - 1] = '\0';
  if (strcmp(*line, "evicted") == 0) return 0;
  snprintf(reason, reason_size, "%s", strncmp(*line, "stop ", 5) == 0 ? *line + 5 : *line);
  return -1;
}

struct samples {
  double *ms;
  size_t count;
  size_t capacity;
};

static void add_sample(struct samples *s, double ms) {
  if (s->count == s->capacity) {
    s->capacity = s->capacity ? s->capacity * 2 : 1024;
    s->ms = realloc(s->ms, s->capacity * sizeof *s->ms);
    if (s->ms == NULL) {
      fprintf(stderr, "c_read_loop: out of memory for the samples\n");
      exit(1);
    }
  }
  s->ms[s->count++] = ms;
}

// The watcher of a timed 'threads' run (see the top of this file): a thread that sleeps WATCH_MS
// at a time until told to stop, and the stalls it saw, in ms past each sleep.
struct watcher {
  pthread_t thread;
  int running;
  atomic_int stop;
  struct samples stalls;
};

// It wakes once more after being told to stop, as loop_stall.js's stop() lets the timer fire once
// more: a stall that ends the run is seen, and a run shorter than a sleep has one figure too.
static void *watch_main(void *arg) {
  struct watcher *w = arg;
  double last = now_ms();
  do {
    struct timespec pause = {0, WATCH_MS * 1000000L};
    nanosleep(&pause, NULL);
    double woke = now_ms();
    double stall = woke - last - WATCH_MS;
    add_sample(&w->stalls, stall > 0 ? stall : 0);
    last = woke;
  } while (!atomic_load_explicit(&w->stop, memory_order_relaxed));
  return NULL;
}

static void watch_start(struct watcher *w) {
  atomic_store(&w->stop, 0);
  w->running = pthread_create(&w->thread, NULL, watch_main, w) == 0;
}

static void watch_stop(struct watcher *w) {
  if (!w->running) return;
  atomic_store(&w->stop, 1);
  pthread_join(w->thread, NULL);
  w->running = 0;
}

static int compare_ms(const void *a, const void *b) {
  double x = *(const double *)a;
  double y = *(const double *)b;
  return (x > y) - (x < y);
}

/** The watcher's figures in loop_stall.js's shape (one stretch; no GC), or null without any. */
static void print_loop_stall(struct watcher *w) {
  size_t n = w->stalls.count;
  if (n == 0) {
    fputs("null", stdout);
    return;
  }
  qsort(w->stalls.ms, n, sizeof *w->stalls.ms, compare_ms);
  size_t p99 = (n * 99 + 99) / 100;
  printf("{\"resolutionMs\":%d,\"maxMs\":%.6f,\"p99Ms\":%.6f,\"stretches\":1,\"intervals\":%zu,\"gcMaxMs\":null,\"gcPauses\":null}",
         WATCH_MS, w->stalls.ms[n - 1], w->stalls.ms[p99 - 1], n);
}

struct loop_state {
  const struct context *ctx;
  struct file_bytes *previous;  // the last operation's results, freed by the next one
  int have_previous;
  struct file_bytes *current;
  int cold;
  int first;                    // no operation has run yet: the first eviction checks every file
  char **line;
  size_t *line_capacity;
};

/**
 * Operations until their total time reaches `time_ms` and their count `iterations` (tinybench's
 * rule), each timed alone; recorded into `samples` when given. 0, or -1 after replying the error.
 */
static int run_phase(struct loop_state *st, double time_ms, double iterations, struct samples *samples) {
  double total = 0;
  size_t count = 0;
  size_t files = operation_files(st->ctx);
  while (total < time_ms || (double)count < iterations) {
    if (st->cold) {
      char reason[1024];
      int first = st->first;
      st->first = 0;
      if (await_eviction(first, st->line, st->line_capacity, reason, sizeof reason) != 0) {
        reply_error(reason);
        return -1;
      }
    }
    struct failure failure;
    double start = now_ms();
    if (st->have_previous) free_results(st->previous, files);
    st->have_previous = 0;
    int status = read_operation(st->ctx, st->current, &failure);
    if (status == 0) consume(st->current, files, st->ctx->consume_all);
    double elapsed = now_ms() - start;
    if (status != 0) {
      reply_failure(&failure);
      return -1;
    }
    struct file_bytes *done = st->current;
    st->current = st->previous;
    st->previous = done;
    st->have_previous = 1;
    total += elapsed;
    count++;
    if (samples) add_sample(samples, elapsed);
  }
  return 0;
}

static long resident_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0;
  long resident = 0;
  if (f == NULL) return 0;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
  fclose(f);
  return resident * sysconf(_SC_PAGESIZE);
}

// The peak RSS is a high-water mark for the whole process: writing 5 to clear_refs resets it.
static int reset_peak_rss(void) {
  int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  int ok = write(fd, "5", 1) == 1;
  close(fd);
  return ok;
}

static void command_time(struct context *ctx, char *args, char **line, size_t *line_capacity) {
  char *reader = strsep(&args, " ");
  if (check_reader(ctx, reader) != 0) return;
  double time_ms;
  double iterations;
  double warmup_ms;
  double warmup_iterations;
  int cold;
  if (args == NULL || sscanf(args, "%lf %lf %lf %lf %d", &time_ms, &iterations, &warmup_ms, &warmup_iterations, &cold) != 5) {
    reply_error("time: expected READER TIME ITERATIONS WARMUP_TIME WARMUP_ITERATIONS COLD");
    return;
  }
  size_t files = operation_files(ctx);
  struct loop_state st = {
    .ctx = ctx,
    .previous = allocate_or_exit(files * sizeof(struct file_bytes)),
    .current = allocate_or_exit(files * sizeof(struct file_bytes)),
    .cold = cold == 1,
    .first = 1,
    .line = line,
    .line_capacity = line_capacity,
  };
  struct samples samples = {0};
  struct watcher watcher = {0};
  int status = 0;
  if (warmup_iterations > 0) status = run_phase(&st, warmup_ms, warmup_iterations, NULL);
  int peak_rss_reset = 0;
  long rss_before = 0;
  struct rusage before;
  struct rusage after;
  if (status == 0) {
    peak_rss_reset = reset_peak_rss();
    rss_before = resident_bytes();
    getrusage(RUSAGE_SELF, &before);
    if (ctx->threads) watch_start(&watcher);
    status = run_phase(&st, time_ms, iterations, &samples);
    watch_stop(&watcher);
    getrusage(RUSAGE_SELF, &after);
  }
  if (st.have_previous) free_results(st.previous, files);
  free(st.previous);
  free(st.current);
  if (status == 0) {
    long minor = after.ru_minflt - before.ru_minflt;
    long major = after.ru_majflt - before.ru_majflt;
    fputs("{\"ok\":true,\"samples\":[", stdout);
    for (size_t i = 0; i < samples.count; i++) printf("%s%.6f", i ? "," : "", samples.ms[i]);
    printf("],\"resources\":{\"operations\":%zu,\"peakRssReset\":%s,\"rssBeforeBytes\":%ld,\"peakRssBytes\":%ld,"
           "\"minorFaults\":%ld,\"majorFaults\":%ld,\"faultsPerOperation\":%.6f},\"loopStall\":",
           samples.count, peak_rss_reset ? "true" : "false", rss_before, after.ru_maxrss * 1024L, minor, major,
           samples.count ? (double)(minor + major) / (double)samples.count : 0.0);
    print_loop_stall(&watcher);
    fputs("}\n", stdout);
    fflush(stdout);
  }
  free(samples.ms);
  free(watcher.stalls.ms);
}

int main(void) {
  make_crc_table();
  fputs("{\"ready\":true,\"runtime\":\"c\",\"version\":", stdout);
  print_json_string(__VERSION__);
  printf(",\"gc\":false,\"loopStall\":null,\"threads\":%zu}\n", crew_threads());
  fflush(stdout);
  struct context ctx = {0};
  char *line = NULL;
  size_t capacity = 0;
  ssize_t n;
  while ((n = getline(&line, &capacity, stdin)) >= 0) {
    if (n > 0 && line[n - 1] == '\n') line[n - 1] = '\0';
    char *args = line;
    char *command = strsep(&args, " ");
    if (strcmp(command, "context") == 0) {
      command_context(&ctx, args);
    } else if (strcmp(command, "verify") == 0) {
      command_verify(&ctx, args);
    } else if (strcmp(command, "time") == 0) {
      command_time(&ctx, args, &line, &capacity);
    } else {
      char message[256];
      snprintf(message, sizeof message, "unknown command: %.200s", command);
      reply_error(message);
    }
  }
  free(line);
  free_context(&ctx);
  return 0;
}
