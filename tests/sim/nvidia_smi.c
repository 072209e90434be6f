/*
 * Fake nvidia-smi for the simulated fleet, installed as "nvidia-smi"
 * (setuid root, as the real tool sees every process through the driver).
 *
 * GPU state is computed from real process state on the simulated host:
 *   - a process uses GPU k while any of its threads holds an open
 *     descriptor on /dev/nvidiak (found by readlink of
 *     /proc/PID/task/TID/fd/N, so a container's own "/dev/nvidia3", another
 *     inode, counts too) or it maps /dev/nvidiak (/proc/PID/maps); it is charged FAKEGPU_MIB
 *     (from its environment) on that GPU, or, when its environment has
 *     FAKEGPU_MEM_GPUS ("5", "0,3", "0-7"), only on the held GPUs named
 *     there (a tensor-parallel worker holds every peer, uses its own); it is
 *     a compute app on each GPU where it is charged > 0 (daemons holding
 *     0 MiB are not listed, like NVML-only clients on real hosts), except
 *     one that holds only mappings: as on an H200 (tests/testdata/
 *     device-h200/checks-2026-12-02/mapped.txt) its memory counts in
 *     memory.used and no process is named;
 *   - /run/fakegpu/charged, lines "PID GPU MIB": memory the driver charges to
 *     a live PID that holds no device descriptor (it mapped memory and
 *     closed its fds); listed in compute-apps, counted in memory.used; a
 *     zombie whose every thread has exited is not charged (its memory is
 *     free), one whose leader exited while threads run still is;
 *   - /run/fakegpu/recovery/K: gpu_recovery_action of GPU K ("None" without);
 *   - /run/fakegpu/minors: one device minor per index (/dev/nvidiaM is the
 *     GPU of index I where the I-th number is M; the identity without);
 *   - memory the "driver" leaked (no process) is read from
 *     /run/fakegpu/leaked/K and kept until --gpu-reset -i K (which first sleeps
 *     the seconds in /run/fakegpu/reset_sleep, when there is one).
 * Per-host settings live in /run/fakegpu: gpus (count), model, total_mib,
 * seed (for UUIDs and serials), mode: normal | missing (driver not loaded,
 * exit 9) | hang (blocks forever) | lost:K (GPU K fell off the bus: its error
 * line, then the other GPUs' rows, exit 15) | lost-only:K (the error line
 * alone, exit 15) | unknown-error:K (every command prints only "Unable to
 * determine the device handle for GPU <bus id of K>: Unknown Error", exit
 * 15; sample 06). Which of the two real drivers print is not settled.
 * shown:N: only the first N GPUs exist for nvidia-smi, exit 0 (a GPU the
 * driver failed to initialise, still in /proc/driver/nvidia/gpus).
 * flood:KIND:AMOUNT: hostile volume (nvidia_smi_flood.c).
 *
 * Supported: --query-gpu=, --query-compute-apps=, --format=csv[,noheader]
 * [,nounits], -i/--id, -L, -r/--gpu-reset [-i N], and the default table. Texts and exit codes
 * follow the captures in /work/shared/nvsmi-samples (see SOURCES.md there).
 */
#define _GNU_SOURCE
#include "nvidia_smi.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *state_dir = "/run/fakegpu";

struct gpu gpus[MAX_GPUS];
int gpu_count;
char model[128] = "NVIDIA H200";
char timestamp[32];
struct proc procs[MAX_PROCS];
int proc_count;
int lost_gpu = -1;

static int read_file(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[n] = '\0';
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
  return (int)n;
}

static int read_state(const char *name, char *buf, size_t size) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", state_dir, name);
  return read_file(path, buf, size);
}

static unsigned long hash(const char *s, unsigned long h) {
  while (*s) h = h * 1099511628211UL ^ (unsigned char)*s++;
  h ^= h >> 30; /* splitmix64 finalizer: nearby seeds give unrelated UUIDs */
  h *= 0xbf58476d1ce4e5b9UL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebUL;
  return h ^ (h >> 31);
}

static void load_gpus(void) {
  static const int bus[8] = {0x19, 0x3B, 0x4C, 0x5D, 0x9B, 0xBB, 0xCB, 0xDB};
  char buf[256], seed[128] = "sim";
  long total = 143771;
  if (read_state("gpus", buf, sizeof buf) > 0) gpu_count = atoi(buf);
  if (gpu_count > MAX_GPUS) gpu_count = MAX_GPUS;
  if (read_state("total_mib", buf, sizeof buf) > 0) total = atol(buf);
  read_state("model", model, sizeof model);
  read_state("seed", seed, sizeof seed);
  for (int i = 0; i < gpu_count; i++) {
    struct gpu *g = &gpus[i];
    unsigned long h = hash(seed, 14695981039346656037UL + (unsigned long)i);
    unsigned long h2 = hash("uuid", h);
    g->index = i;
    g->total = total;
    snprintf(g->uuid, sizeof g->uuid, "GPU-%08lx-%04lx-%04lx-%04lx-%012lx", h & 0xffffffffUL,
             (h >> 32) & 0xffff, (h >> 48) & 0xffff, h2 & 0xffff, (h2 >> 16) & 0xffffffffffffUL);
    snprintf(g->bus_id, sizeof g->bus_id, "00000000:%02X:00.0", i < 8 ? bus[i] : 0x10 + i);
    snprintf(g->serial, sizeof g->serial, "%013lu", h2 % 10000000000000UL);
    snprintf(buf, sizeof buf, "leaked/%d", i);
    char val[64];
    if (read_state(buf, val, sizeof val) > 0) g->leaked = atol(val);
    g->used = g->leaked;
    snprintf(buf, sizeof buf, "recovery/%d", i);
    if (read_state(buf, g->recovery, sizeof g->recovery) <= 0) strcpy(g->recovery, "None");
  }
}

/* index_of_minor[M]: the nvidia-smi index of the GPU whose device file is
 * /dev/nvidiaM; the identity unless /run/fakegpu/minors lists one minor per
 * index ("6 1 2 3 4 5 0 7": index 0 is /dev/nvidia6), as on real hosts where
 * the minor follows the driver's probe order and the index the bus order. */
static int index_of_minor[MAX_GPUS];

static void load_minors(void) {
  char buf[512];
  for (int m = 0; m < MAX_GPUS; m++) index_of_minor[m] = m;
  if (read_state("minors", buf, sizeof buf) <= 0) return;
  char *p = buf;
  for (int i = 0; i < gpu_count; i++) {
    char *end;
    long m = strtol(p, &end, 10);
    if (end == p) break;
    if (m >= 0 && m < MAX_GPUS) index_of_minor[m] = i;
    p = end;
  }
}

/* A mask of device minors as a mask of nvidia-smi indexes. */
static unsigned long long minors_to_indexes(unsigned long long minors) {
  unsigned long long out = 0;
  for (int m = 0; m < MAX_GPUS; m++)
    if (minors & (1ULL << m)) out |= 1ULL << index_of_minor[m];
  return out;
}

/* Returns K for "/dev/nvidiaK", -1 for anything else. */
static int device_gpu(const char *target) {
  if (strncmp(target, "/dev/nvidia", 11) != 0 || !isdigit((unsigned char)target[11])) return -1;
  for (const char *p = target + 11; *p; p++)
    if (!isdigit((unsigned char)*p)) return -1;
  return atoi(target + 11);
}

/* Parses "0-7" / "0,3" into a bitmask of GPUs. */
static unsigned long long gpu_mask(const char *spec) {
  unsigned long long mask = 0;
  while (*spec) {
    char *end;
    long a = strtol(spec, &end, 10), b = a;
    if (end == spec) break;
    if (*end == '-') b = strtol(end + 1, &end, 10);
    for (long k = a; k <= b && k < MAX_GPUS; k++)
      if (k >= 0) mask |= 1ULL << k;
    spec = *end == ',' ? end + 1 : end;
    if (*end != ',') break;
  }
  return mask;
}

/* Where the host's processes are: /proc, or, inside a nested PID namespace
 * (Fleet.exec_nested_pidns: a pod without hostPID), the host's /proc bound
 * at /run/fakegpu-hostproc, because the real driver always reports the
 * host's PIDs, whatever PID namespace asks. */
static const char *proc_root = "/proc";

/* FAKEGPU_MIB and FAKEGPU_MEM_GPUS (all GPUs when unset) of 'pid', read
 * through its task 'tid' (a leader that exited shows no environment). */
static long env_mib(int pid, int tid, unsigned long long *mem_gpus) {
  char path[96];
  static char buf[65536];
  long mib = 0;
  *mem_gpus = ~0ULL;
  snprintf(path, sizeof path, "%s/%d/task/%d/environ", proc_root, pid, tid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
    if (strncmp(buf + i, "FAKEGPU_MIB=", 12) == 0) mib = atol(buf + i + 12);
    if (strncmp(buf + i, "FAKEGPU_MEM_GPUS=", 17) == 0) *mem_gpus = gpu_mask(buf + i + 17);
  }
  return mib;
}

static int charges(const struct proc *p, int k) { return p->mib > 0 && (p->charged & (1ULL << k)); }

int nvsmi_charged(const struct proc *p, int k) { return !p->unlisted && charges(p, k); }

int nvsmi_holds(const struct proc *p, int k) { return ((p->gpus | p->charged) & (1ULL << k)) != 0; }

static void read_name(struct proc *p) {
  char path[64];
  snprintf(path, sizeof path, "%s/%d/cmdline", proc_root, p->pid);
  if (read_file(path, p->name, sizeof p->name) <= 0) strcpy(p->name, "[Unknown Error]");
}

/* The GPUs whose /dev/nvidiaK the fd table "dir" (/proc/PID/task/TID/fd)
 * holds open. */
static unsigned long long fd_gpus(const char *dir) {
  unsigned long long held = 0;
  char target[256];
  DIR *fds = opendir(dir);
  struct dirent *fe;
  while (fds && (fe = readdir(fds))) {
    char link[600];
    snprintf(link, sizeof link, "%s/%s", dir, fe->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    int k = device_gpu(target);
    if (k >= 0 && k < gpu_count) held |= 1ULL << k;
  }
  if (fds) closedir(fds);
  return held;
}

/* The GPUs whose /dev/nvidiaK "pid" maps (its fds may be closed: the
 * driver charges the mapping). */
static unsigned long long map_gpus(int pid) {
  unsigned long long held = 0;
  char path[64], line[1024];
  snprintf(path, sizeof path, "%s/%d/maps", proc_root, pid);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f)) {
    char *name = strstr(line, " /dev/nvidia");
    if (!name) continue;
    name[strcspn(name, "\n")] = '\0';
    int k = device_gpu(name + 1);
    if (k >= 0 && k < gpu_count) held |= 1ULL << k;
  }
  if (f) fclose(f);
  return held;
}

/* Whether "pid" is a zombie whose every thread has exited (state Z or X
 * and no task but the leader's). */
static int all_threads_exited(int pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "%s/%d/stat", proc_root, pid);
  if (read_file(path, buf, sizeof buf) <= 0) return 0;
  const char *close = strrchr(buf, ')');
  if (!close || (close[2] != 'Z' && close[2] != 'X')) return 0;
  snprintf(path, sizeof path, "%s/%d/task", proc_root, pid);
  DIR *tasks = opendir(path);
  int n = 0;
  struct dirent *te;
  while (tasks && (te = readdir(tasks)))
    if (isdigit((unsigned char)te->d_name[0])) n++;
  if (tasks) closedir(tasks);
  return n <= 1;
}

/* Scans /proc for holders of /dev/nvidiaK, by the fds of every thread (a
 * leader that exited keeps none; the driver charges the process by its
 * tgid) and by mappings, and charges their memory. */
static void scan_processes(void) {
  load_minors();
  DIR *proc = opendir(proc_root);
  struct dirent *e;
  while (proc && (e = readdir(proc)) && proc_count < MAX_PROCS) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    int pid = atoi(e->d_name), env_tid = pid;
    char path[64];
    unsigned long long held = 0;
    snprintf(path, sizeof path, "%s/%d/task", proc_root, pid);
    DIR *tasks = opendir(path);
    if (!tasks) continue;
    struct dirent *te;
    /* Threads that share one fd table show the same fd count (the folder's
     * size): that table is read once (the real driver reads no /proc). */
    long long counts[64];
    int counted = 0;
    while ((te = readdir(tasks))) {
      if (!isdigit((unsigned char)te->d_name[0])) continue;
      char dir[300];
      snprintf(dir, sizeof dir, "%s/%d/task/%s/fd", proc_root, pid, te->d_name);
      struct stat st;
      if (stat(dir, &st) == 0 && st.st_size > 0) {
        int seen = 0;
        for (int i = 0; i < counted && !seen; i++) seen = counts[i] == (long long)st.st_size;
        if (seen) continue;
        if (counted < 64) counts[counted++] = (long long)st.st_size;
      }
      unsigned long long h = fd_gpus(dir);
      if (h && env_tid == pid) env_tid = atoi(te->d_name);
      held |= h;
    }
    closedir(tasks);
    unsigned long long mapped = map_gpus(pid);
    if (!held && !mapped) continue;
    struct proc *p = &procs[proc_count++];
    unsigned long long mem_gpus;
    p->pid = pid;
    p->unlisted = !held;
    held |= mapped;
    p->gpus = minors_to_indexes(held);
    p->mib = env_mib(pid, env_tid, &mem_gpus);
    p->charged = minors_to_indexes(held & mem_gpus);
    read_name(p);
  }
  if (proc) closedir(proc);
  /* Memory charged to live processes that hold no descriptor. */
  char path[600], line[256];
  snprintf(path, sizeof path, "%s/charged", state_dir);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f) && proc_count < MAX_PROCS) {
    int pid, k;
    long mib;
    char alive[600];
    if (sscanf(line, "%d %d %ld", &pid, &k, &mib) != 3 || k < 0 || k >= gpu_count) continue;
    snprintf(alive, sizeof alive, "%s/%d/stat", proc_root, pid);
    /* The driver frees a dead PID's memory, and a zombie's whose every
     * thread has exited (its files are closed); a zombie leader whose
     * threads still run keeps it. */
    if (access(alive, F_OK) != 0 || all_threads_exited(pid)) continue;
    struct proc *p = &procs[proc_count++];
    p->pid = pid;
    p->unlisted = 0;
    p->gpus = 0;
    p->mib = mib;
    p->charged = 1ULL << k;
    read_name(p);
  }
  if (f) fclose(f);
  for (int i = 0; i < proc_count; i++)
    for (int k = 0; k < gpu_count; k++)
      if (charges(&procs[i], k)) gpus[k].used += procs[i].mib;
}

static void make_timestamp(void) {
  struct timeval tv;
  struct tm tm;
  gettimeofday(&tv, NULL);
  localtime_r(&tv.tv_sec, &tm);
  size_t n = strftime(timestamp, sizeof timestamp, "%Y/%m/%d %H:%M:%S", &tm);
  snprintf(timestamp + n, sizeof timestamp - n, ".%03ld", (long)(tv.tv_usec / 1000));
}

/* "sshd dies in the middle of a run": when /run/fakegpu/kill_sshd_on_nvsmi
 * holds N, the Nth call from now SIGKILLs this host's sshd processes (the
 * listener and every session) before answering. */
static void maybe_kill_sshd(void) {
  char path[600], buf[32];
  snprintf(path, sizeof path, "%s/kill_sshd_on_nvsmi", state_dir);
  if (read_file(path, buf, sizeof buf) <= 0) return;
  int left = atoi(buf) - 1;
  if (left > 0) {
    FILE *f = fopen(path, "w");
    if (f) {
      fprintf(f, "%d\n", left);
      fclose(f);
    }
    return;
  }
  unlink(path);
  DIR *proc = opendir("/proc");
  struct dirent *e;
  while (proc && (e = readdir(proc))) {
    char link[300], exe[256];
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    snprintf(link, sizeof link, "/proc/%s/exe", e->d_name);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0) continue;
    exe[n] = '\0';
    if (strcmp(exe, "/usr/sbin/sshd") == 0) kill(atoi(e->d_name), SIGKILL);
  }
  if (proc) closedir(proc);
}

/* "the host changes right after nvidia-smi answered": when
 * /run/fakegpu/on_apps_query holds a shell command, the next
 * --query-compute-apps call removes the file, prints its answer, then runs
 * the command (as root) before it exits, while the scan that asked is
 * still running. */
static int answer_apps_then_hook(const char *fields, int header, int units, int only) {
  char path[600];
  snprintf(path, sizeof path, "%s/on_apps_query", state_dir);
  if (access(path, F_OK) != 0) return nvsmi_query(fields, 1, header, units, only);
  char hook[4096];
  int n = read_file(path, hook, sizeof hook);
  unlink(path);
  int rc = nvsmi_query(fields, 1, header, units, only);
  fflush(stdout);
  if (n > 0 && setuid(0) == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      execl("/bin/sh", "sh", "-c", hook, (char *)NULL);
      _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
  }
  return rc;
}

int main(int argc, char **argv) {
  const char *query_gpu = NULL, *query_apps = NULL, *format = "csv";
  int only = -1, do_reset = 0, list = 0;
  char mode[64] = "normal";

  if (getuid() == geteuid() && getenv("FAKEGPU_STATE")) state_dir = getenv("FAKEGPU_STATE");
  if (access("/run/fakegpu-hostproc/1/stat", F_OK) == 0) proc_root = "/run/fakegpu-hostproc";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "--query-gpu=", 12))
      query_gpu = a + 12;
    else if (!strncmp(a, "--query-compute-apps=", 21))
      query_apps = a + 21;
    else if (!strncmp(a, "--format=", 9))
      format = a + 9;
    else if (!strncmp(a, "--id=", 5))
      only = atoi(a + 5);
    else if ((!strcmp(a, "-i") || !strcmp(a, "--id")) && i + 1 < argc)
      only = atoi(argv[++i]);
    else if (!strncmp(a, "-i", 2) && isdigit((unsigned char)a[2]))
      only = atoi(a + 2);
    else if (!strcmp(a, "-r") || !strcmp(a, "--gpu-reset"))
      do_reset = 1;
    else if (!strcmp(a, "-L") || !strcmp(a, "--list-gpus"))
      list = 1;
    else {
      printf("\nERROR: Option %s is not recognized. Please run 'nvidia-smi -h'.\n\n", a);
      return 2;
    }
  }

  maybe_kill_sshd();
  read_state("mode", mode, sizeof mode);
  if (!strcmp(mode, "missing")) {
    printf(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.\n\n");
    return 9;
  }
  if (!strcmp(mode, "hang")) {
    open("/dev/nvidiactl", O_RDWR);
    for (;;) pause();
  }
  if (!strncmp(mode, "lost:", 5)) lost_gpu = atoi(mode + 5);
  if (!strncmp(mode, "unknown-error:", 14)) {
    int k = atoi(mode + 14);
    load_gpus();
    printf("Unable to determine the device handle for GPU %s: Unknown Error\n",
           k >= 0 && k < gpu_count ? gpus[k].bus_id + 4 : "0000:B1:00.0");
    return 15;
  }
  if (!strncmp(mode, "lost-only:", 10)) {
    lost_gpu = atoi(mode + 10);
    load_gpus();
    nvsmi_print_lost();
    return 15;
  }

  load_gpus();
  if (!strncmp(mode, "shown:", 6) && atoi(mode + 6) < gpu_count) gpu_count = atoi(mode + 6);
  if (!strncmp(mode, "flood:", 6)) {
    int rc = nvsmi_flood(mode, query_apps != NULL);
    if (rc >= 0) return rc;
  }
  if (only >= gpu_count) {
    printf("No devices were found\n");
    return 6;
  }
  scan_processes();
  make_timestamp();
  if (do_reset) return nvsmi_reset(only);
  if (list) {
    for (int k = 0; k < gpu_count; k++)
      if ((only < 0 || k == only) && k != lost_gpu)
        printf("GPU %d: %s (UUID: %s)\n", k, model, gpus[k].uuid);
    return 0;
  }
  int header = strstr(format, "noheader") == NULL;
  int units = strstr(format, "nounits") == NULL;
  if (query_gpu) return nvsmi_query(query_gpu, 0, header, units, only);
  if (query_apps) return answer_apps_then_hook(query_apps, header, units, only);
  return nvsmi_table();
}
