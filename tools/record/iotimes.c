/* iotimes: a preloadable shim that logs when a program closes one output file, on the clock SST
 * DUMPI stamps MPI calls with (CLOCK_MONOTONIC), so the lines a program writes to that file can be
 * placed on the trace's time axis.
 *
 *   gcc -shared -fPIC -O2 -o libiotimes.so tools/record/iotimes.c -ldl
 *   LD_PRELOAD=/opt/dumpi/lib/libdumpi.so:$PWD/libiotimes.so IOTIMES_MATCH=hpccoutf.txt program
 *
 * Each fclose or fflush of a file whose name ends with IOTIMES_MATCH appends
 * "<sec>.<nsec> <pid> <offset>" to IOTIMES_LOG (default iotimes.log), where offset is the file's
 * size at that moment. A line of the file was therefore written no later than the first logged
 * close or flush whose offset reaches past it. hpcc opens and closes its output file around every
 * line group it writes (BEGIN_IO/END_IO); LAMMPS keeps log.lammps open and flushes it after every
 * command echo and thermo output.
 *
 * Fortran programs write their output with write(2), not through stdio. With IOTIMES_WRITES=1 every
 * write(2) to a descriptor whose target ends with IOTIMES_MATCH is logged the same way, the offset
 * being the bytes this process has written to that descriptor so far (its own file or pipe
 * position); IOTIMES_MATCH=stdout names descriptor 1 (Quantum ESPRESSO's output, where only the
 * first rank writes; the others send their unit 6 to /dev/null); IOTIMES_MATCH=stderr names descriptor 2
 * (NetPIPE prints its results there; with IOTIMES_STDOUT_LINES=1 every line stdio writes to stderr
 * is dated, below). C and C++ programs that write stdout
 * through stdio and fflush it after each message (Meep's master_printf) are dated the same way: with
 * IOTIMES_WRITES=1 IOTIMES_MATCH=stdout each fflush(stdout) logs the bytes written to descriptor 1 so
 * far, counting what the flush empties from stdio's buffer (glibc's FILE fields) together with the
 * direct write(2)s (stdio's own write is internal to glibc and is not seen twice). Open MPI gives the
 * ranks a terminal as stdout, which stdio would flush by itself at every newline, unseen: the shim
 * therefore makes stdout fully buffered at start-up, so that every byte leaves through a fflush.
 * With IOTIMES_STDOUT_LINES=1 it instead dates every line stdio writes to stdout (below: ABySS).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>

#define MAX_TRACKED 16
static FILE *tracked[MAX_TRACKED];

static int matches(const char *path) {
  const char *want = getenv("IOTIMES_MATCH");
  if (!want || !*want) want = "hpccoutf.txt";
  size_t n = strlen(path), m = strlen(want);
  return n >= m && strcmp(path + n - m, want) == 0;
}

FILE *fopen(const char *path, const char *mode) {
  static FILE *(*real)(const char *, const char *);
  if (!real) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
  FILE *f = real(path, mode);
  if (f && path && matches(path)) {
    for (int i = 0; i < MAX_TRACKED; i++)
      if (!tracked[i]) { tracked[i] = f; break; }
  }
  return f;
}

FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }

static int tracked_file(FILE *f) {
  for (int i = 0; i < MAX_TRACKED; i++)
    if (f && tracked[i] == f) return i;
  return -1;
}

/* Appends one line to the log with open(2) and the real write(2), not stdio: a program may define
 * its own fopen (ABySS's ABYSS-P exports one that opens compressed files through a pipe), which
 * the dynamic linker prefers to libc's and to this shim's, so fopen(log, "a") here logged nothing. */
static void log_time(long offset) {
  static ssize_t (*real_write)(int, const void *, size_t);
  if (!real_write) real_write = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const char *log = getenv("IOTIMES_LOG");
  int fd = open(log && *log ? log : "iotimes.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    char line[96];
    int n = snprintf(line, sizeof line, "%ld.%09ld %ld %ld\n", (long)ts.tv_sec, ts.tv_nsec,
                     (long)getpid(), offset);
    if (n > 0) real_write(fd, line, (size_t)n);
    close(fd);
  }
}

#define MAX_FD 1024
static long written[MAX_FD]; /* bytes written so far per tracked descriptor */
static int tracked_fd(int fd);

/* IOTIMES_STDOUT_LINES=1 (with IOTIMES_WRITES=1 IOTIMES_MATCH=stdout): stdout becomes a stream of
 * this shim (fopencookie) that hands each buffer stdio empties to the real write(2) and logs it,
 * so a line is dated when stdio writes it, whatever the program's buffering. For programs that
 * neither flush after each message nor leave stdout fully buffered: ABySS's ABYSS-P calls
 * setvbuf(stdout, NULL, _IOLBF, 0) and writes its stage headings through std::cout with '\n', so
 * libc writes each line from inside itself, where neither the fflush nor the write hook sees it.
 * std::cout takes stdout when the program's static constructors run, after this one. */
static int stdout_lines;

static ssize_t stdout_lines_write(void *cookie, const char *buf, size_t n) {
  int fd = (int)(intptr_t)cookie;
  static ssize_t (*real)(int, const void *, size_t);
  if (!real) real = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
  size_t done = 0;
  while (done < n) {
    ssize_t rc = real(fd, buf + done, n - done);
    if (rc <= 0) break;
    done += (size_t)rc;
  }
  if (done > 0) {
    written[fd] += (long)done;
    log_time(written[fd]);
  }
  return done > 0 ? (ssize_t)done : -1;
}

__attribute__((constructor)) static void buffer_stdout(void) {
  const char *lines = getenv("IOTIMES_STDOUT_LINES");
  cookie_io_functions_t io = {.read = NULL, .write = stdout_lines_write, .seek = NULL, .close = NULL};
  if (tracked_fd(2) && lines && strcmp(lines, "1") == 0) {
    /* IOTIMES_MATCH=stderr: stdio writes stderr unbuffered from inside glibc, unseen by the write
     * hook; a line-buffered stream of this shim dates each line instead (NetPIPE). */
    FILE *f = fopencookie((void *)(intptr_t)2, "w", io);
    if (f) {
      setvbuf(f, NULL, _IOLBF, 1 << 16);
      stderr = f;
    }
    return;
  }
  if (!tracked_fd(1)) return;
  if (lines && strcmp(lines, "1") == 0) {
    FILE *f = fopencookie((void *)(intptr_t)1, "w", io);
    if (f) {
      setvbuf(f, NULL, _IOLBF, 1 << 16);
      fflush(stdout);
      stdout = f;
      stdout_lines = 1;
      return;
    }
  }
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
}

int fflush(FILE *f) {
  static int (*real)(FILE *);
  if (!real) real = (int (*)(FILE *)) dlsym(RTLD_NEXT, "fflush");
  if (f == stdout && tracked_fd(1) && !stdout_lines) {
    long pending = (long)(stdout->_IO_write_ptr - stdout->_IO_write_base);
    int rc = real(f);
    if (rc == 0 && pending > 0) {
      written[1] += pending;
      log_time(written[1]);
    }
    return rc;
  }
  int rc = real(f);
  if (tracked_file(f) >= 0) {
    long here = ftell(f);
    fseek(f, 0, SEEK_END);
    long offset = ftell(f);
    fseek(f, here, SEEK_SET);
    log_time(offset);
  }
  return rc;
}

int fclose(FILE *f) {
  static int (*real)(FILE *);
  if (!real) real = (int (*)(FILE *)) dlsym(RTLD_NEXT, "fclose");
  int i = tracked_file(f);
  if (i < 0) return real(f);
  tracked[i] = NULL;
  static int (*real_flush)(FILE *);
  if (!real_flush) real_flush = (int (*)(FILE *)) dlsym(RTLD_NEXT, "fflush");
  real_flush(f);
  fseek(f, 0, SEEK_END);
  long offset = ftell(f);
  int rc = real(f);
  log_time(offset);
  return rc;
}

static int tracked_fd(int fd) {
  const char *on = getenv("IOTIMES_WRITES");
  if (!on || strcmp(on, "1") != 0 || fd < 0 || fd >= MAX_FD) return 0;
  const char *want = getenv("IOTIMES_MATCH");
  if (want && strcmp(want, "stdout") == 0) return fd == 1;
  if (want && strcmp(want, "stderr") == 0) return fd == 2;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = 0;
  return matches(target);
}

ssize_t write(int fd, const void *buf, size_t count) {
  static ssize_t (*real)(int, const void *, size_t);
  if (!real) real = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
  ssize_t rc = real(fd, buf, count);
  if (rc > 0 && tracked_fd(fd)) {
    written[fd] += rc;
    log_time(written[fd]);
  }
  return rc;
}
