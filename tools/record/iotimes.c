/* iotimes: a preloadable shim that logs when a program closes one output file, on the clock SST
 * DUMPI stamps MPI calls with (CLOCK_MONOTONIC), so the lines a program writes to that file can be
 * placed on the trace's time axis.
 *
 *   gcc -shared -fPIC -O2 -o libiotimes.so tools/record/iotimes.c -ldl
 *   LD_PRELOAD=/opt/dumpi/lib/libdumpi.so:$PWD/libiotimes.so IOTIMES_MATCH=hpccoutf.txt program
 *
 * Each fclose of a file whose name ends with IOTIMES_MATCH appends "<sec>.<nsec> <pid> <offset>" to
 * IOTIMES_LOG (default iotimes.log), where offset is the file's size at that moment. A line of the
 * file was therefore written no later than the first logged close whose offset reaches past it.
 * hpcc opens and closes its output file around every line group it writes (BEGIN_IO/END_IO).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int fclose(FILE *f) {
  static int (*real)(FILE *);
  if (!real) real = (int (*)(FILE *)) dlsym(RTLD_NEXT, "fclose");
  for (int i = 0; i < MAX_TRACKED; i++) {
    if (f && tracked[i] == f) {
      tracked[i] = NULL;
      fflush(f);
      fseek(f, 0, SEEK_END);
      long offset = ftell(f);
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      int rc = real(f);
      const char *log = getenv("IOTIMES_LOG");
      FILE *out = fopen(log && *log ? log : "iotimes.log", "a");
      if (out) {
        fprintf(out, "%ld.%09ld %ld %ld\n", (long)ts.tv_sec, ts.tv_nsec, (long)getpid(), offset);
        real(out);
      }
      return rc;
    }
  }
  return real(f);
}
