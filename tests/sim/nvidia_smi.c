/*
 * Fake nvidia-smi for the simulated fleet, installed as "nvidia-smi"
 * (setuid root, as the real tool sees every process through the driver).
 *
 * GPU state is computed from real process state on the simulated host:
 *   - a process uses GPU k while it holds an open descriptor on /dev/nvidiak;
 *     it is charged FAKEGPU_MIB (from its environment) on that GPU and is a
 *     compute app when FAKEGPU_MIB > 0 (daemons holding 0 MiB are not listed,
 *     like NVML-only clients on real hosts);
 *   - memory the "driver" leaked (no process) is read from
 *     /run/fakegpu/leaked/K and kept until --gpu-reset -i K.
 * Per-host settings live in /run/fakegpu: gpus (count), model, total_mib,
 * seed (for UUIDs and serials), mode: normal | missing (driver not loaded,
 * exit 9) | hang (blocks forever) | lost:K (GPU K fell off the bus: its error
 * line, then the other GPUs' rows, exit 15) | lost-only:K (the error line
 * alone, exit 15). Which of the two real drivers print is not settled.
 *
 * Supported: --query-gpu=, --query-compute-apps=, --format=csv[,noheader]
 * [,nounits], -i/--id, -L, -r/--gpu-reset [-i N], and the default table. Texts and exit codes follow
 * the captures in /work/shared/nvsmi-samples (see SOURCES.md there).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_GPUS 64
#define MAX_PROCS 4096

static const char *state_dir = "/run/fakegpu";

struct gpu {
  int index;
  long total, used, leaked;
  char uuid[48], bus_id[24], serial[16];
};

struct proc {
  int pid;
  long mib;
  unsigned long long gpus; /* bitmask of /dev/nvidiaK held */
  char name[256];
};

static struct gpu gpus[MAX_GPUS];
static int gpu_count;
static char model[128] = "NVIDIA H200";
static char timestamp[32];
static struct proc procs[MAX_PROCS];
static int proc_count;

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
    snprintf(g->uuid, sizeof g->uuid, "GPU-%08lx-%04lx-%04lx-%04lx-%012lx",
             h & 0xffffffffUL, (h >> 32) & 0xffff, (h >> 48) & 0xffff, h2 & 0xffff,
             (h2 >> 16) & 0xffffffffffffUL);
    snprintf(g->bus_id, sizeof g->bus_id, "00000000:%02X:00.0", i < 8 ? bus[i] : 0x10 + i);
    snprintf(g->serial, sizeof g->serial, "%013lu", h2 % 10000000000000UL);
    snprintf(buf, sizeof buf, "leaked/%d", i);
    char val[64];
    if (read_state(buf, val, sizeof val) > 0) g->leaked = atol(val);
    g->used = g->leaked;
  }
}

/* Returns K for "/dev/nvidiaK", -1 for anything else. */
static int device_gpu(const char *target) {
  if (strncmp(target, "/dev/nvidia", 11) != 0 || !isdigit((unsigned char)target[11])) return -1;
  for (const char *p = target + 11; *p; p++)
    if (!isdigit((unsigned char)*p)) return -1;
  return atoi(target + 11);
}

static long env_mib(int pid) {
  char path[64], buf[65536];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
    if (strncmp(buf + i, "FAKEGPU_MIB=", 12) == 0) return atol(buf + i + 12);
  return 0;
}

/* Scans /proc for holders of /dev/nvidiaK and charges their memory. */
static void scan_processes(void) {
  DIR *proc = opendir("/proc");
  struct dirent *e;
  while (proc && (e = readdir(proc)) && proc_count < MAX_PROCS) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    int pid = atoi(e->d_name);
    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *fds = opendir(path);
    if (!fds) continue;
    unsigned long long held = 0;
    struct dirent *fe;
    while ((fe = readdir(fds))) {
      char link[300];
      snprintf(link, sizeof link, "/proc/%d/fd/%s", pid, fe->d_name);
      ssize_t n = readlink(link, target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      int k = device_gpu(target);
      if (k >= 0 && k < gpu_count) held |= 1ULL << k;
    }
    closedir(fds);
    if (!held) continue;
    struct proc *p = &procs[proc_count++];
    p->pid = pid;
    p->gpus = held;
    p->mib = env_mib(pid);
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    if (read_file(path, p->name, sizeof p->name) <= 0) strcpy(p->name, "[Unknown Error]");
    for (int k = 0; k < gpu_count; k++)
      if (held & (1ULL << k)) gpus[k].used += p->mib;
  }
  if (proc) closedir(proc);
}

static void make_timestamp(void) {
  struct timeval tv;
  struct tm tm;
  gettimeofday(&tv, NULL);
  localtime_r(&tv.tv_sec, &tm);
  size_t n = strftime(timestamp, sizeof timestamp, "%Y/%m/%d %H:%M:%S", &tm);
  snprintf(timestamp + n, sizeof timestamp - n, ".%03ld", (long)(tv.tv_usec / 1000));
}

/* One queryable field: accepted names, header text, and a value printer. */
struct field {
  const char *names[3];
  const char *header;
  const char *unit; /* appended as " [unit]" to the header, " unit" to values */
};

static const struct field gpu_fields[] = {
    {{"timestamp"}, "timestamp", NULL},
    {{"driver_version"}, "driver_version", NULL},
    {{"count"}, "count", NULL},
    {{"name", "gpu_name"}, "name", NULL},
    {{"serial", "gpu_serial"}, "serial", NULL},
    {{"uuid", "gpu_uuid"}, "uuid", NULL},
    {{"pci.bus_id", "gpu_bus_id"}, "pci.bus_id", NULL},
    {{"index"}, "index", NULL},
    {{"persistence_mode"}, "persistence_mode", NULL},
    {{"pstate"}, "pstate", NULL},
    {{"memory.total"}, "memory.total", "MiB"},
    {{"memory.reserved"}, "memory.reserved", "MiB"},
    {{"memory.used"}, "memory.used", "MiB"},
    {{"memory.free"}, "memory.free", "MiB"},
    {{"utilization.gpu"}, "utilization.gpu", "%"},
    {{"utilization.memory"}, "utilization.memory", "%"},
    {{"temperature.gpu"}, "temperature.gpu", NULL},
    {{"power.draw"}, "power.draw", "W"},
};

static const struct field app_fields[] = {
    {{"timestamp"}, "timestamp", NULL},
    {{"gpu_name"}, "gpu_name", NULL},
    {{"gpu_bus_id"}, "gpu_bus_id", NULL},
    {{"gpu_serial"}, "gpu_serial", NULL},
    {{"gpu_uuid"}, "gpu_uuid", NULL},
    {{"pid"}, "pid", NULL},
    {{"process_name", "name"}, "process_name", NULL},
    {{"used_gpu_memory", "used_memory"}, "used_gpu_memory", "MiB"},
};

static void gpu_value(const char *h, const struct gpu *g, char *out, size_t n) {
  static const int temps[8] = {34, 36, 33, 35, 37, 34, 36, 35};
  long reserved = 616;
  if (!strcmp(h, "timestamp")) snprintf(out, n, "%s", timestamp);
  else if (!strcmp(h, "driver_version")) snprintf(out, n, "550.127.05");
  else if (!strcmp(h, "count")) snprintf(out, n, "%d", gpu_count);
  else if (!strcmp(h, "name")) snprintf(out, n, "%s", model);
  else if (!strcmp(h, "serial")) snprintf(out, n, "%s", g->serial);
  else if (!strcmp(h, "uuid")) snprintf(out, n, "%s", g->uuid);
  else if (!strcmp(h, "pci.bus_id")) snprintf(out, n, "%s", g->bus_id);
  else if (!strcmp(h, "index")) snprintf(out, n, "%d", g->index);
  else if (!strcmp(h, "persistence_mode")) snprintf(out, n, "Enabled");
  else if (!strcmp(h, "pstate")) snprintf(out, n, g->used ? "P0" : "P0");
  else if (!strcmp(h, "memory.total")) snprintf(out, n, "%ld", g->total);
  else if (!strcmp(h, "memory.reserved")) snprintf(out, n, "%ld", reserved);
  else if (!strcmp(h, "memory.used")) snprintf(out, n, "%ld", g->used);
  else if (!strcmp(h, "memory.free")) {
    long free_mib = g->total - reserved - g->used;
    snprintf(out, n, "%ld", free_mib < 0 ? 0 : free_mib);
  } else if (!strcmp(h, "utilization.gpu")) snprintf(out, n, "%d", g->used ? 97 : 0);
  else if (!strcmp(h, "utilization.memory")) snprintf(out, n, "%d", g->used ? 41 : 0);
  else if (!strcmp(h, "temperature.gpu")) snprintf(out, n, "%d", temps[g->index % 8] + (g->used ? 20 : 0));
  else if (!strcmp(h, "power.draw")) snprintf(out, n, "%.2f", g->used ? 512.37 : 85.12);
}

static void app_value(const char *h, const struct gpu *g, const struct proc *p, char *out,
                      size_t n) {
  if (!strcmp(h, "timestamp")) snprintf(out, n, "%s", timestamp);
  else if (!strcmp(h, "gpu_name")) snprintf(out, n, "%s", model);
  else if (!strcmp(h, "gpu_bus_id")) snprintf(out, n, "%s", g->bus_id);
  else if (!strcmp(h, "gpu_serial")) snprintf(out, n, "%s", g->serial);
  else if (!strcmp(h, "gpu_uuid")) snprintf(out, n, "%s", g->uuid);
  else if (!strcmp(h, "pid")) snprintf(out, n, "%d", p->pid);
  else if (!strcmp(h, "process_name")) snprintf(out, n, "%s", p->name);
  else if (!strcmp(h, "used_gpu_memory")) snprintf(out, n, "%ld", p->mib);
}

/* Resolves the comma-separated query into field pointers; 0 on success. */
static int resolve(const char *query, const struct field *table, size_t size,
                   const struct field **out, int *count) {
  char *copy = strdup(query), *save = NULL;
  *count = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    const struct field *found = NULL;
    for (size_t i = 0; i < size && !found; i++)
      for (int a = 0; a < 3 && table[i].names[a]; a++)
        if (!strcmp(tok, table[i].names[a])) found = &table[i];
    if (!found) {
      printf("Field \"%s\" is not a valid field to query.\n\n", tok);
      free(copy);
      return 2;
    }
    out[(*count)++] = found;
  }
  free(copy);
  return 0;
}

static void print_header(const struct field **f, int n) {
  for (int i = 0; i < n; i++) {
    printf("%s%s", i ? ", " : "", f[i]->header);
    if (f[i]->unit) printf(" [%s]", f[i]->unit);
  }
  printf("\n");
}

static void print_cell(int i, const struct field *f, const char *value, int units) {
  printf("%s%s", i ? ", " : "", value);
  if (f->unit && units) printf(" %s", f->unit);
}

static int lost_gpu = -1;

static void print_lost(void) {
  if (lost_gpu >= 0 && lost_gpu < gpu_count)
    printf("Unable to determine the device handle for GPU %s: GPU is lost. "
           "Reboot the system to recover this GPU\n", gpus[lost_gpu].bus_id + 4);
}

static int query(const char *q, int apps, int header, int units, int only) {
  const struct field *f[64];
  int n;
  int rc = apps ? resolve(q, app_fields, sizeof app_fields / sizeof *app_fields, f, &n)
                : resolve(q, gpu_fields, sizeof gpu_fields / sizeof *gpu_fields, f, &n);
  if (rc) return rc;
  print_lost();
  if (header) print_header(f, n);
  char value[300];
  for (int k = 0; k < gpu_count; k++) {
    if ((only >= 0 && k != only) || k == lost_gpu) continue;
    if (!apps) {
      for (int i = 0; i < n; i++) {
        gpu_value(f[i]->header, &gpus[k], value, sizeof value);
        print_cell(i, f[i], value, units);
      }
      printf("\n");
      continue;
    }
    for (int p = 0; p < proc_count; p++) {
      if (!(procs[p].gpus & (1ULL << k)) || procs[p].mib <= 0) continue;
      for (int i = 0; i < n; i++) {
        app_value(f[i]->header, &gpus[k], &procs[p], value, sizeof value);
        print_cell(i, f[i], value, units);
      }
      printf("\n");
    }
  }
  return lost_gpu >= 0 ? 15 : 0;
}

static int holders_of(int k) {
  int n = 0;
  for (int p = 0; p < proc_count; p++)
    if (procs[p].gpus & (1ULL << k)) n++;
  return n;
}

static int reset(int only) {
  int busy = 0;
  char path[600];
  if (getuid() != 0) {
    printf("Insufficient Permissions\n");
    return 4;
  }
  for (int k = 0; k < gpu_count; k++)
    if ((only < 0 || k == only) && holders_of(k)) busy++;
  if (busy) {
    printf("The following GPUs could not be reset:\n");
    for (int k = 0; k < gpu_count; k++)
      if ((only < 0 || k == only) && holders_of(k))
        printf("  GPU %s: In use by another client\n", gpus[k].bus_id);
    printf("\n%d device%s currently being used by one or more other processes (e.g., Fabric "
           "Manager, CUDA application, graphics application such as an X server, or a "
           "monitoring application such as another instance of nvidia-smi). Please first kill "
           "all processes using this device and all compute applications running in the "
           "system.\n",
           busy, busy == 1 ? " is" : "s are");
    return 255;
  }
  for (int k = 0; k < gpu_count; k++) {
    if (only >= 0 && k != only) continue;
    snprintf(path, sizeof path, "%s/leaked/%d", state_dir, k);
    unlink(path);
    printf("GPU %s was successfully reset.\n", gpus[k].bus_id);
  }
  printf("All done.\n");
  return 0;
}

/* The default table (no query flags), in the layout of driver 550. No
 * byte-exact capture of it was available; fleetreap never parses it. */
static int print_table(void) {
  char line[128], left[64], right[64];
  const char *bar = "+-----------------------------------------+------------------------+"
                    "----------------------+";
  const char *wide = "+------------------------------------------------------------------"
                     "-----------------------+";
  time_t now = time(NULL);
  printf("%s", ctime(&now));
  printf("%s\n", wide);
  printf("| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     "
         "CUDA Version: 12.4     |\n");
  printf("|-----------------------------------------+------------------------+"
         "----------------------+\n");
  printf("| GPU  Name                 Persistence-M | Bus-Id          Disp.A | "
         "Volatile Uncorr. ECC |\n");
  printf("| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | "
         "GPU-Util  Compute M. |\n");
  printf("|                                         |                        |  "
         "             MIG M. |\n");
  printf("|=========================================+========================+"
         "======================|\n");
  for (int k = 0; k < gpu_count; k++) {
    const struct gpu *g = &gpus[k];
    snprintf(left, sizeof left, "%4d  %.24s", k, model);
    printf("|%-38sOn |   %s Off |%21s |\n", left, g->bus_id, "0");
    snprintf(left, sizeof left, " N/A   %2dC    P0", 34 + k % 4 + (g->used ? 20 : 0));
    snprintf(right, sizeof right, "%4dW /  700W", g->used ? 512 : 85);
    snprintf(line, sizeof line, "%s%*s", left, (int)(40 - strlen(left)), right);
    printf("|%s | %7ldMiB / %6ldMiB |%7d%%      Default |\n", line, g->used, g->total,
           g->used ? 97 : 0);
    printf("|                                         |                        |%21s |\n",
           "Disabled");
    printf("%s\n", bar);
  }
  printf("\n%s\n", wide);
  printf("| Processes:%78s|\n", "");
  printf("|  GPU   GI   CI        PID   Type   Process name                              "
         "GPU Memory |\n");
  printf("|        ID   ID                                                               "
         "Usage      |\n");
  printf("|=========================================================================="
         "===============|\n");
  int rows = 0;
  for (int k = 0; k < gpu_count; k++)
    for (int p = 0; p < proc_count; p++) {
      if (!(procs[p].gpus & (1ULL << k)) || procs[p].mib <= 0) continue;
      printf("|  %3d   N/A  N/A  %9d      C   %-38.38s %9ldMiB |\n", k, procs[p].pid,
             procs[p].name, procs[p].mib);
      rows++;
    }
  if (!rows) printf("|  No running processes found%61s|\n", "");
  printf("%s\n", wide);
  return 0;
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

int main(int argc, char **argv) {
  const char *query_gpu = NULL, *query_apps = NULL, *format = "csv";
  int only = -1, do_reset = 0, list = 0;
  char mode[64] = "normal";

  if (getuid() == geteuid() && getenv("FAKEGPU_STATE")) state_dir = getenv("FAKEGPU_STATE");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "--query-gpu=", 12)) query_gpu = a + 12;
    else if (!strncmp(a, "--query-compute-apps=", 21)) query_apps = a + 21;
    else if (!strncmp(a, "--format=", 9)) format = a + 9;
    else if (!strncmp(a, "--id=", 5)) only = atoi(a + 5);
    else if ((!strcmp(a, "-i") || !strcmp(a, "--id")) && i + 1 < argc) only = atoi(argv[++i]);
    else if (!strncmp(a, "-i", 2) && isdigit((unsigned char)a[2])) only = atoi(a + 2);
    else if (!strcmp(a, "-r") || !strcmp(a, "--gpu-reset")) do_reset = 1;
    else if (!strcmp(a, "-L") || !strcmp(a, "--list-gpus")) list = 1;
    else {
      printf("\nERROR: Option %s is not recognized. Please run 'nvidia-smi -h'.\n\n", a);
      return 2;
    }
  }

  maybe_kill_sshd();
  read_state("mode", mode, sizeof mode);
  if (!strcmp(mode, "missing")) {
    printf("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
           "Make sure that the latest NVIDIA driver is installed and running.\n\n");
    return 9;
  }
  if (!strcmp(mode, "hang")) {
    open("/dev/nvidiactl", O_RDWR);
    for (;;) pause();
  }
  if (!strncmp(mode, "lost:", 5)) lost_gpu = atoi(mode + 5);
  if (!strncmp(mode, "lost-only:", 10)) {
    lost_gpu = atoi(mode + 10);
    load_gpus();
    print_lost();
    return 15;
  }

  load_gpus();
  if (only >= gpu_count) {
    printf("No devices were found\n");
    return 6;
  }
  scan_processes();
  make_timestamp();
  if (do_reset) return reset(only);
  if (list) {
    for (int k = 0; k < gpu_count; k++)
      if ((only < 0 || k == only) && k != lost_gpu)
        printf("GPU %d: %s (UUID: %s)\n", k, model, gpus[k].uuid);
    return 0;
  }
  int header = strstr(format, "noheader") == NULL;
  int units = strstr(format, "nounits") == NULL;
  if (query_gpu) return query(query_gpu, 0, header, units, only);
  if (query_apps) return query(query_apps, 1, header, units, only);
  return print_table();
}
