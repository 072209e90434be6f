/*
 * nvidia_smi_flood.c: the fake nvidia-smi's hostile-volume modes,
 * for a host whose nvidia-smi prints far more than any real answer. Set in
 * /run/fakegpu/mode (HostSetup.nvidia_smi_mode):
 *   flood:text:BYTES    every call prints BYTES of the GPU query's rows over
 *                       and over (a wrapper stuck in a loop, a debug build)
 *   flood:binary:BYTES  every call prints BYTES of binary garbage, NULs and
 *                       control bytes included (a corrupted binary, a tty
 *                       capture)
 *   flood:line:BYTES    every call prints BYTES of a progress bar redrawn
 *                       with carriage returns: one line, never a newline
 *   flood:rows:N        --query-compute-apps prints its header and N rows
 *                       (the other queries answer normally)
 * then exits 0. Output goes through stdio in 64 KiB writes; a closed pipe
 * ends the process (SIGPIPE), as it ends the real tool. Single-threaded.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvidia_smi.h"

static void repeat(const char *unit, size_t unit_len, unsigned long long bytes) {
  static char block[65536];
  size_t filled = 0;
  while (filled + unit_len <= sizeof block) {
    memcpy(block + filled, unit, unit_len);
    filled += unit_len;
  }
  while (bytes > 0) {
    size_t n = bytes < filled ? (size_t)bytes : filled;
    if (fwrite(block, 1, n, stdout) != n) return;
    bytes -= n;
  }
}

static void garbage(unsigned long long bytes) {
  static unsigned char block[65536];
  unsigned long long x = 0x9e3779b97f4a7c15ULL;
  while (bytes > 0) {
    for (size_t i = 0; i < sizeof block; i++) { /* xorshift64 */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      block[i] = (unsigned char)(x >> 24);
    }
    size_t n = bytes < sizeof block ? (size_t)bytes : sizeof block;
    if (fwrite(block, 1, n, stdout) != n) return;
    bytes -= n;
  }
}

static void rows(long count) {
  printf("pid, gpu_uuid, gpu_bus_id, used_gpu_memory [MiB]\n");
  for (long i = 0; i < count && gpu_count > 0; i++) {
    const struct gpu *g = &gpus[i % gpu_count];
    if (printf("%ld, %s, %s, %ld\n", 1000 + i % 30000, g->uuid, g->bus_id, 512 + i % 4096) < 0)
      return;
  }
}

int nvsmi_flood(const char *mode, int apps) {
  if (strncmp(mode, "flood:", 6) != 0) return -1;
  const char *kind = mode + 6;
  const char *colon = strchr(kind, ':');
  unsigned long long amount = colon ? strtoull(colon + 1, NULL, 10) : 0;
  if (!strncmp(kind, "text:", 5)) {
    char row[256];
    int n = snprintf(row, sizeof row, "%d, %s, %s, %s, %ld, %ld, %s\n", 0,
                     gpu_count ? gpus[0].uuid : "GPU-0", model,
                     gpu_count ? gpus[0].bus_id : "00000000:19:00.0", 0L,
                     gpu_count ? gpus[0].total : 143771L, "None");
    repeat(row, (size_t)n, amount);
  } else if (!strncmp(kind, "binary:", 7)) {
    garbage(amount);
  } else if (!strncmp(kind, "line:", 5)) {
    char bar[128];
    int n = snprintf(bar, sizeof bar, "\rQuerying GPU %s ... [%-40s]",
                     gpu_count ? gpus[0].bus_id : "00000000:19:00.0", "####################");
    repeat(bar, (size_t)n, amount);
  } else if (!strncmp(kind, "rows:", 5)) {
    if (!apps) return -1; /* the other queries answer as usual */
    rows((long)amount);
  } else {
    return -1;
  }
  fflush(stdout);
  return 0;
}
