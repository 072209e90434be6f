/*
 * nvidia_smi_output.c: how the fake nvidia-smi prints what nvidia_smi.c read:
 * CSV queries with the real headers, units and separators, the reset texts
 * and exit codes, and the default table. See nvidia_smi.c for the model.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvidia_smi.h"

/* One queryable field: accepted names, header text and unit. */
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
    {{"gpu_recovery_action"}, "gpu_recovery_action", NULL},
    {{"ecc.mode.current"}, "ecc.mode.current", NULL},
    {{"ecc.mode.pending"}, "ecc.mode.pending", NULL},
    {{"ecc.errors.uncorrected.volatile.total"}, "ecc.errors.uncorrected.volatile.total", NULL},
    {{"ecc.errors.uncorrected.aggregate.total"}, "ecc.errors.uncorrected.aggregate.total", NULL},
    {{"remapped_rows.correctable"}, "remapped_rows.correctable", NULL},
    {{"remapped_rows.uncorrectable"}, "remapped_rows.uncorrectable", NULL},
    {{"remapped_rows.pending"}, "remapped_rows.pending", NULL},
    {{"remapped_rows.failure"}, "remapped_rows.failure", NULL},
    {{"retired_pages.pending"}, "retired_pages.pending", NULL},
    {{"retired_pages.single_bit_ecc.count"}, "retired_pages.single_bit_ecc.count", NULL},
    {{"retired_pages.double_bit.count"}, "retired_pages.double_bit.count", NULL},
    {{"fabric.state"}, "fabric.state", NULL},
    {{"fabric.status"}, "fabric.status", NULL},
    {{"pcie.link.gen.current"}, "pcie.link.gen.current", NULL},
    {{"pcie.link.gen.max"}, "pcie.link.gen.max", NULL},
    {{"pcie.link.width.current"}, "pcie.link.width.current", NULL},
    {{"pcie.link.width.max"}, "pcie.link.width.max", NULL},
};

/* The readiness fields as an idle H200 of driver 580 prints them
 * (tests/testdata/device-h200/readiness/query-ready.csv); a line "FIELD
 * VALUE" in /run/fakegpu/health/K overrides one for GPU K. */
static const char *const health_defaults[][2] = {
    {"persistence_mode", "Enabled"},
    {"ecc.mode.current", "Enabled"},
    {"ecc.mode.pending", "Enabled"},
    {"ecc.errors.uncorrected.volatile.total", "0"},
    {"ecc.errors.uncorrected.aggregate.total", "0"},
    {"remapped_rows.correctable", "0"},
    {"remapped_rows.uncorrectable", "0"},
    {"remapped_rows.pending", "No"},
    {"remapped_rows.failure", "No"},
    {"retired_pages.pending", "[N/A]"},
    {"retired_pages.single_bit_ecc.count", "[N/A]"},
    {"retired_pages.double_bit.count", "[N/A]"},
    {"fabric.state", "N/A"},
    {"fabric.status", "N/A"},
    {"pcie.link.gen.current", "5"},
    {"pcie.link.gen.max", "5"},
    {"pcie.link.width.current", "16"},
    {"pcie.link.width.max", "16"},
};

/* The readiness field "h" of GPU k into "out"; 0 when "h" is none. */
static int health_value(const char *h, int k, char *out, size_t n) {
  const char *value = NULL;
  for (size_t i = 0; i < sizeof health_defaults / sizeof *health_defaults; i++)
    if (!strcmp(h, health_defaults[i][0])) value = health_defaults[i][1];
  if (!value) return 0;
  snprintf(out, n, "%s", value);
  char path[512], line[256];
  snprintf(path, sizeof path, "%s/health/%d", state_dir, k);
  FILE *f = fopen(path, "r");
  if (!f) return 1;
  size_t len = strlen(h);
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strncmp(line, h, len) && line[len] == ' ') snprintf(out, n, "%s", line + len + 1);
  }
  fclose(f);
  return 1;
}

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
  if (health_value(h, g->index, out, n)) return;
  if (!strcmp(h, "timestamp"))
    snprintf(out, n, "%s", timestamp);
  else if (!strcmp(h, "driver_version"))
    snprintf(out, n, "580.159.04");
  else if (!strcmp(h, "count"))
    snprintf(out, n, "%d", gpu_count);
  else if (!strcmp(h, "name"))
    snprintf(out, n, "%s", model);
  else if (!strcmp(h, "serial"))
    snprintf(out, n, "%s", g->serial);
  else if (!strcmp(h, "uuid"))
    snprintf(out, n, "%s", g->uuid);
  else if (!strcmp(h, "pci.bus_id"))
    snprintf(out, n, "%s", g->bus_id);
  else if (!strcmp(h, "index"))
    snprintf(out, n, "%d", g->index);
  else if (!strcmp(h, "pstate"))
    snprintf(out, n, g->used ? "P0" : "P0");
  else if (!strcmp(h, "memory.total"))
    snprintf(out, n, "%ld", g->total);
  else if (!strcmp(h, "memory.reserved"))
    snprintf(out, n, "%ld", reserved);
  else if (!strcmp(h, "memory.used"))
    snprintf(out, n, "%ld", g->used);
  else if (!strcmp(h, "memory.free")) {
    long free_mib = g->total - reserved - g->used;
    snprintf(out, n, "%ld", free_mib < 0 ? 0 : free_mib);
  } else if (!strcmp(h, "utilization.gpu"))
    snprintf(out, n, "%d", g->used ? 97 : 0);
  else if (!strcmp(h, "utilization.memory"))
    snprintf(out, n, "%d", g->used ? 41 : 0);
  else if (!strcmp(h, "temperature.gpu"))
    snprintf(out, n, "%d", temps[g->index % 8] + (g->used ? 20 : 0));
  else if (!strcmp(h, "power.draw"))
    snprintf(out, n, "%.2f", g->used ? 512.37 : 85.12);
  else if (!strcmp(h, "gpu_recovery_action"))
    snprintf(out, n, "%s", g->recovery);
}

static void app_value(const char *h, const struct gpu *g, const struct proc *p, char *out,
                      size_t n) {
  if (!strcmp(h, "timestamp"))
    snprintf(out, n, "%s", timestamp);
  else if (!strcmp(h, "gpu_name"))
    snprintf(out, n, "%s", model);
  else if (!strcmp(h, "gpu_bus_id"))
    snprintf(out, n, "%s", g->bus_id);
  else if (!strcmp(h, "gpu_serial"))
    snprintf(out, n, "%s", g->serial);
  else if (!strcmp(h, "gpu_uuid"))
    snprintf(out, n, "%s", g->uuid);
  else if (!strcmp(h, "pid"))
    snprintf(out, n, "%d", p->pid);
  else if (!strcmp(h, "process_name"))
    snprintf(out, n, "%s", p->name);
  else if (!strcmp(h, "used_gpu_memory"))
    snprintf(out, n, "%ld", p->mib);
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

void nvsmi_print_lost(void) {
  if (lost_gpu >= 0 && lost_gpu < gpu_count)
    printf(
        "Unable to determine the device handle for GPU %s: GPU is lost. "
        "Reboot the system to recover this GPU\n",
        gpus[lost_gpu].bus_id + 4);
}

int nvsmi_query(const char *q, int apps, int header, int units, int only) {
  const struct field *f[64];
  int n;
  int rc = apps ? resolve(q, app_fields, sizeof app_fields / sizeof *app_fields, f, &n)
                : resolve(q, gpu_fields, sizeof gpu_fields / sizeof *gpu_fields, f, &n);
  if (rc) return rc;
  nvsmi_print_lost();
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
      if (!nvsmi_charged(&procs[p], k)) continue;
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
    if (nvsmi_holds(&procs[p], k)) n++;
  return n;
}

int nvsmi_reset(int only) {
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
    printf(
        "\n%d device%s currently being used by one or more other processes (e.g., Fabric "
        "Manager, CUDA application, graphics application such as an X server, or a "
        "monitoring application such as another instance of nvidia-smi). Please first kill "
        "all processes using this device and all compute applications running in the "
        "system.\n",
        busy, busy == 1 ? " is" : "s are");
    return 255;
  }
  /* /run/fakegpu/reset_sleep: seconds a reset takes (a slow reset, to cut). */
  snprintf(path, sizeof path, "%s/reset_sleep", state_dir);
  FILE *slow = fopen(path, "r");
  int seconds = 0;
  if (slow) {
    if (fscanf(slow, "%d", &seconds) != 1) seconds = 0;
    fclose(slow);
  }
  if (seconds > 0) sleep((unsigned)seconds);
  for (int k = 0; k < gpu_count; k++) {
    if (only >= 0 && k != only) continue;
    snprintf(path, sizeof path, "%s/leaked/%d", state_dir, k);
    unlink(path);
    printf("GPU %s was successfully reset.\n", gpus[k].bus_id);
  }
  printf("All done.\n");
  return 0;
}

/* The default table (no query flags), byte for byte in the layout of driver
 * 580.159.04 (tests/testdata/device-h200/table-*.txt, captured on an H200).
 * fleetreap never parses it; people read it. */
int nvsmi_table(void) {
  char left[64], right[64];
  const char *bar =
      "+-----------------------------------------+------------------------+"
      "----------------------+";
  const char *wide =
      "+------------------------------------------------------------------"
      "-----------------------+";
  time_t now = time(NULL);
  char stamp[64];
  strftime(stamp, sizeof stamp, "%a %b %e %H:%M:%S %Y", localtime(&now));
  printf("%s       \n", stamp);
  printf("%s\n", wide);
  printf(
      "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     "
      "CUDA Version: 13.0     |\n");
  printf("%s\n", bar);
  printf(
      "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | "
      "Volatile Uncorr. ECC |\n");
  printf(
      "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | "
      "GPU-Util  Compute M. |\n");
  printf(
      "|                                         |                        |  "
      "             MIG M. |\n");
  printf(
      "|=========================================+========================+"
      "======================|\n");
  for (int k = 0; k < gpu_count; k++) {
    const struct gpu *g = &gpus[k];
    printf("|%4d  %-31.31sOn  |   %s Off |%21s |\n", k, model, g->bus_id, "0");
    snprintf(left, sizeof left, " N/A   %2dC    P0", 34 + k % 4 + (g->used ? 20 : 0));
    snprintf(right, sizeof right, "%3dW /  700W ", g->used ? 512 : 83);
    printf("|%s%*s%s|%8ldMiB / %6ldMiB |%7d%%      Default |\n", left,
           (int)(41 - strlen(left) - strlen(right)), "", right, g->used, g->total,
           g->used ? 97 : 0);
    printf("|                                         |                        |%21s |\n",
           "Disabled");
    printf("%s\n", bar);
  }
  printf("\n%s\n", wide);
  printf("| Processes:%78s|\n", "");
  printf(
      "|  GPU   GI   CI              PID   Type   Process name                        "
      "GPU Memory |\n");
  printf(
      "|        ID   ID                                                               "
      "Usage      |\n");
  printf(
      "|=========================================================================="
      "===============|\n");
  int rows = 0;
  for (int k = 0; k < gpu_count; k++)
    for (int p = 0; p < proc_count; p++) {
      char mem[32];
      if (!nvsmi_charged(&procs[p], k)) continue;
      snprintf(mem, sizeof mem, "%ldMiB", procs[p].mib);
      printf("|%5d   N/A  N/A  %14d      C   %-36.36s %9s |\n", k, procs[p].pid, procs[p].name,
             mem);
      rows++;
    }
  if (!rows) printf("|  No running processes found%61s|\n", "");
  printf("%s\n", wide);
  return 0;
}
