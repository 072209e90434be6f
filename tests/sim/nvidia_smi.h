/*
 * nvidia_smi.h: state shared by the fake nvidia-smi's two halves:
 * nvidia_smi.c (reading the simulated host: settings, holders, memory) and
 * nvidia_smi_output.c (printing it as the real tool does). Single-threaded.
 */
#ifndef FLEETREAP_SIM_NVIDIA_SMI_H
#define FLEETREAP_SIM_NVIDIA_SMI_H

#include <stddef.h>

#define MAX_GPUS 64
#define MAX_PROCS 4096

struct gpu {
  int index;
  long total, used, leaked;
  char recovery[32]; /* gpu_recovery_action: "None" unless state/recovery/K */
  char uuid[48], bus_id[24], serial[16];
};

struct proc {
  int pid;
  long mib;
  unsigned long long gpus;    /* bitmask of /dev/nvidiaK held */
  unsigned long long charged; /* bitmask of GPUs where mib is charged */
  int unlisted;               /* holds only mappings: in memory.used, not a compute app */
  char name[256];
};

extern const char *state_dir;
extern struct gpu gpus[MAX_GPUS];
extern int gpu_count;
extern char model[128];
extern char timestamp[32];
extern struct proc procs[MAX_PROCS];
extern int proc_count;
extern int lost_gpu; /* -1, or the GPU that "fell off the bus" */

/* Whether process p is a compute app charged on GPU k (0-MiB holders are
 * not, like NVML-only clients, nor is a process that holds only mappings,
 * as on an H200: its memory counts, nvidia-smi names no process) / holds
 * GPU k. */
int nvsmi_charged(const struct proc *p, int k);
int nvsmi_holds(const struct proc *p, int k);

/* --query-gpu= (apps == 0) or --query-compute-apps= (apps == 1); "only" is
 * -i's GPU or -1. Prints CSV; returns the exit code (2: unknown field). */
int nvsmi_query(const char *query, int apps, int header, int units, int only);
/* --gpu-reset [-i only]: refused (255) while any process holds the GPU. */
int nvsmi_reset(int only);
/* The default table. */
int nvsmi_table(void);
/* The hostile-volume modes of nvidia_smi_flood.c ("flood:KIND:AMOUNT"):
 * prints and returns the exit code, or -1 when "mode" is none of them (or
 * does not apply to this query: "apps" is 1 for --query-compute-apps). */
int nvsmi_flood(const char *mode, int apps);
/* The "GPU is lost" line for lost_gpu, if any. */
void nvsmi_print_lost(void);

#endif
