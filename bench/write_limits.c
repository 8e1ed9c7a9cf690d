// SPDX-License-Identifier: MIT
// The machine's limits for the write bench's trials: the fewest syscalls each trial can be done
// in, from C, one thread or several, or on io_uring. bench/write.js runs it with --limits.
//
//   write_limits KIND MODE SCRATCH OPERATIONS FILES DIRS FILE_SIZE NESTED DEPTH LARGE
//     tree:   loop | threads2 | threads4 | uring64
//             (mkdir per directory, then open + write + close per file; io_uring: one MKDIRAT
//             for the top, one batch for the directories, then linked OPENAT -> WRITE -> CLOSE
//             chains on direct descriptors, 64 in flight)
//     nested: node-walk | top-down | threads2 | uring64
//             (node's walk: a failing mkdir per missing level up, then one per level down;
//             top-down: one mkdir per level from the known directory; io_uring: one hardlinked
//             MKDIRAT chain per path, 64 in flight)
//     large:  write (open, write in 1 GiB parts, close)
// Prints {"samples":[ms per operation...],"error":null}. Each operation's directory is set up
// and removed outside the timed region, as bench/write.js does.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int files, dirs, nested, depth;
static size_t file_size, large;
static char base[4096];
static unsigned char *data;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int remove_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st; (void)flag; (void)ftw;
  return remove(p);
}

static void remove_tree(void) { nftw(base, remove_entry, 64, FTW_DEPTH | FTW_PHYS); }

static void file_path(char *out, int i) { sprintf(out, "%s/d%d/f%d", base, i % dirs, i); }

static void nested_path(char *out, int i, int levels) {
  int n = sprintf(out, "%s/t%d", base, i);
  for (int l = 1; l < levels; l++) n += sprintf(out + n, "/%c", 'a' + l - 1);
}

static void write_file(const char *p) {
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) { perror(p); exit(1); }
  if (write(fd, data, file_size) != (ssize_t)file_size) { perror("write"); exit(1); }
  close(fd);
}

static void tree_dirs(void) {
  char p[4200];
  mkdir(base, 0777);
  for (int d = 0; d < dirs; d++) {
    sprintf(p, "%s/d%d", base, d);
    mkdir(p, 0777);
  }
}

static int stride;
static void *tree_thread(void *arg) {
  char p[4200];
  for (int i = (int)(long)arg; i < files; i += stride) {
    file_path(p, i);
    write_file(p);
  }
  return NULL;
}

static void top_down(int i) {
  char p[4200];
  for (int l = 1; l <= depth; l++) {
    nested_path(p, i, l);
    mkdir(p, 0777);
  }
}

static void *nested_thread(void *arg) {
  for (int i = (int)(long)arg; i < nested; i += stride) top_down(i);
  return NULL;
}

static void on_threads(int n, void *(*fn)(void *)) {
  pthread_t t[16];
  stride = n;
  for (long k = 0; k < n; k++) pthread_create(&t[k], NULL, fn, (void *)k);
  for (int k = 0; k < n; k++) pthread_join(t[k], NULL);
}

static void node_walk(int i) {
  char p[4200];
  int level = depth;
  for (; level > 0; level--) {
    nested_path(p, i, level);
    if (mkdir(p, 0777) == 0 || errno != ENOENT) break;
  }
  for (level++; level <= depth; level++) {
    nested_path(p, i, level);
    mkdir(p, 0777);
  }
}

static struct io_uring ring;

static void reap_all(unsigned count) {
  struct io_uring_cqe *cqe;
  io_uring_submit_and_wait(&ring, count);
  for (unsigned k = 0; k < count; k++) {
    io_uring_wait_cqe(&ring, &cqe);
    io_uring_cqe_seen(&ring, cqe);
  }
}

static void tree_uring(void) {
  static char (*paths)[4200];
  paths = realloc(paths, sizeof(*paths) * (files > dirs ? files : dirs));
  struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
  io_uring_prep_mkdirat(sqe, AT_FDCWD, base, 0777);
  reap_all(1);
  for (int d = 0; d < dirs; d += 64) {
    int n = dirs - d < 64 ? dirs - d : 64;
    for (int k = 0; k < n; k++) {
      sprintf(paths[d + k], "%s/d%d", base, d + k);
      io_uring_prep_mkdirat(io_uring_get_sqe(&ring), AT_FDCWD, paths[d + k], 0777);
    }
    reap_all(n);
  }
  for (int i = 0; i < files; i++) file_path(paths[i], i);
  int next = 0, done = 0, active = 0, free_slots[64], nfree = 0;
  for (int s = 0; s < 64; s++) free_slots[nfree++] = s;
  while (done < files) {
    while (active < 64 && next < files && io_uring_sq_space_left(&ring) >= 3) {
      int slot = free_slots[--nfree];
      sqe = io_uring_get_sqe(&ring);
      io_uring_prep_openat_direct(sqe, AT_FDCWD, paths[next], O_WRONLY | O_CREAT | O_TRUNC, 0666, slot);
      sqe->flags |= IOSQE_IO_LINK;
      sqe->user_data = 0;
      sqe = io_uring_get_sqe(&ring);
      io_uring_prep_write(sqe, slot, data, file_size, 0);
      sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
      sqe->user_data = 0;
      sqe = io_uring_get_sqe(&ring);
      io_uring_prep_close_direct(sqe, slot);
      sqe->user_data = 1 + slot;
      next++;
      active++;
    }
    io_uring_submit_and_wait(&ring, 1);
    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++;
      if (cqe->res < 0) { fprintf(stderr, "io_uring: %s\n", strerror(-cqe->res)); exit(1); }
      if (cqe->user_data > 0) {
        free_slots[nfree++] = (int)cqe->user_data - 1;
        done++;
        active--;
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
}

static void nested_uring(void) {
  static char (*paths)[10][4200];
  paths = realloc(paths, sizeof(*paths) * 64);
  int next = 0, done = 0, active = 0, free_lanes[64], nfree = 0;
  for (int s = 0; s < 64; s++) free_lanes[nfree++] = s;
  while (done < nested) {
    while (active < 64 && next < nested && io_uring_sq_space_left(&ring) >= (unsigned)depth) {
      int lane = free_lanes[--nfree];
      for (int l = 1; l <= depth; l++) {
        nested_path(paths[lane][l - 1], next, l);
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        io_uring_prep_mkdirat(sqe, AT_FDCWD, paths[lane][l - 1], 0777);
        if (l < depth) sqe->flags |= IOSQE_IO_HARDLINK;
        sqe->user_data = l == depth ? 1 + lane : 0;
      }
      next++;
      active++;
    }
    io_uring_submit_and_wait(&ring, 1);
    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++;
      if (cqe->user_data > 0) {
        free_lanes[nfree++] = (int)cqe->user_data - 1;
        done++;
        active--;
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
}

int main(int argc, char **argv) {
  if (argc != 11) {
    fprintf(stderr, "usage: write_limits KIND MODE SCRATCH OPERATIONS FILES DIRS FILE_SIZE NESTED DEPTH LARGE\n");
    return 2;
  }
  const char *kind = argv[1], *mode = argv[2], *scratch = argv[3];
  int operations = atoi(argv[4]);
  files = atoi(argv[5]);
  dirs = atoi(argv[6]);
  file_size = strtoull(argv[7], NULL, 10);
  nested = atoi(argv[8]);
  depth = atoi(argv[9]);
  large = strtoull(argv[10], NULL, 10);
  if (depth < 1 || depth > 10) { fprintf(stderr, "depth 1..10\n"); return 2; }
  size_t data_size = strcmp(kind, "large") == 0 ? large : file_size;
  data = malloc(data_size ? data_size : 1);
  for (size_t i = 0; i < data_size; i++) data[i] = (unsigned char)((i * 7 + 3) % 251);
  if (strncmp(mode, "uring", 5) == 0) {
    struct io_uring_params params = {0};
    params.flags = IORING_SETUP_COOP_TASKRUN;
    int err = io_uring_queue_init_params(256, &ring, &params);
    if (err == 0) err = io_uring_register_files_sparse(&ring, 64);
    if (err != 0) {
      printf("{\"samples\":[],\"error\":\"io_uring: %s\"}\n", strerror(-err));
      return 0;
    }
  }
  printf("{\"samples\":[");
  for (int k = 0; k < operations; k++) {
    snprintf(base, sizeof base, "%s/c-%d-%d", scratch, getpid(), k);
    if (strcmp(kind, "tree") != 0) mkdir(base, 0777);
    char file[4200];
    snprintf(file, sizeof file, "%s/large.bin", base);
    double started = now_ms();
    if (strcmp(kind, "tree") == 0) {
      if (strcmp(mode, "uring64") == 0) {
        tree_uring();
      } else {
        tree_dirs();
        if (strcmp(mode, "threads2") == 0) on_threads(2, tree_thread);
        else if (strcmp(mode, "threads4") == 0) on_threads(4, tree_thread);
        else on_threads(1, tree_thread);
      }
    } else if (strcmp(kind, "nested") == 0) {
      if (strcmp(mode, "node-walk") == 0) for (int i = 0; i < nested; i++) node_walk(i);
      else if (strcmp(mode, "threads2") == 0) on_threads(2, nested_thread);
      else if (strcmp(mode, "uring64") == 0) nested_uring();
      else for (int i = 0; i < nested; i++) top_down(i);
    } else {
      int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      for (size_t done = 0; done < large;) {
        size_t part = large - done < (1u << 30) ? large - done : (1u << 30);
        ssize_t n = write(fd, data + done, part);
        if (n <= 0) { perror("write"); return 1; }
        done += (size_t)n;
      }
      close(fd);
    }
    printf("%s%.4f", k == 0 ? "" : ",", now_ms() - started);
    remove_tree();
  }
  printf("],\"error\":null}\n");
  return 0;
}
