/*
 * gpuload: a fake GPU workload for the simulated fleet.
 *
 * A process "uses GPU k" while it holds an open descriptor on /dev/nvidiak;
 * the fake nvidia-smi charges it FAKEGPU_MIB MiB there (taken from the
 * process's environment). gpuload never allocates real memory, so hundreds
 * of simulated hosts fit on a small machine.
 *
 * Shapes (all settings come from FAKEGPU_* environment variables; the flags
 * below only set those variables, so argv can be made to look like anything):
 *   parent + workers   --gpus 0-7 --mib 96844 --title 'VLLM::Worker_TP%d'
 *                      one worker per GPU, each in its own process group,
 *                      each re-executed with argv = [title] and comm = title.
 *   daemon             --hold-all: this process itself holds nvidiactl,
 *                      nvidia-uvm and every /dev/nvidiaN (0 MiB), like
 *                      nvidia-persistenced. Install a copy under the daemon's
 *                      real name to get a real exe, argv[0] and comm.
 * Behaviour:
 *   --on-term exit|ignore|delay:MS   what workers do on SIGTERM
 *   --respawn-once [--respawn-delay MS] [--respawn-init MS]  parent restarts
 *                      each worker once after it dies of a signal; the new
 *                      worker runs at once but opens its GPU only after the
 *                      init time (PyTorch's import and CUDA init: 5 s on H200)
 *   --detach           parent exits once workers are up (workers orphaned)
 *   --daemonize        the launching process returns once everything is up
 *   --pidfile FILE     "parent PID" then "gpu PID" lines, PIDs as seen here
 *   FAKEGPU_COMM=NAME  the parent's comm (its argv is set by whoever execs it)
 *   FAKEGPU_HOLD_GPUS=2  the parent itself holds nvidiactl, nvidia-uvm and
 *                      these GPUs (a single-process server, the main process
 *                      of a unit); with FAKEGPU_MEM_GPUS in its environment
 *                      the fake nvidia-smi charges FAKEGPU_MIB there
 *   FAKEGPU_OWN_PIDFILE=/var/run/NAME/NAME.pid  the parent writes its PID
 *                      there (directory 0755, file 0644), as a daemon does
 *
 * Worker shape (set per workload by host_setup.py):
 *   FAKEGPU_VISIBLE=0-7   devices a worker opens besides nvidiactl/nvidia-uvm
 *                      (a tensor-parallel engine with CUDA_VISIBLE_DEVICES=0-7
 *                      opens every peer for P2P); unset: only its own GPU.
 *   FAKEGPU_MEM_GPUS   set by gpuload in each worker's environment to the
 *                      worker's own GPU: the fake nvidia-smi charges
 *                      FAKEGPU_MIB there only, not on the peers it holds.
 *   FAKEGPU_TITLE_PAD=nul|space|none  how the worker's title is set:
 *                      nul (py-setproctitle on Linux): the worker is exec'd
 *                      with the parent's argv (as a forked Python child) and
 *                      then writes the title over that argv area, padding the
 *                      rest with NULs, so /proc/PID/cmdline is the title then
 *                      NULs up to the original argv length; space: the same
 *                      padded with spaces (last byte kept NUL); none (old
 *                      shape): exec'd with argv = [title].
 *   FAKEGPU_WORKER_ARGV_HEX, FAKEGPU_WORKER_COMM_HEX  exact bytes (hex) of a
 *                      worker's argv (NUL-separated) and comm, for hostile
 *                      names; they override the title and its padding.
 *   FAKEGPU_HOLD=fd|map|threads  how a worker holds its devices: open fds
 *                      (default); map: it maps each device file and closes
 *                      its fds (seen on an H200: only /proc/PID/maps shows
 *                      it); threads: a thread opens them and the main thread
 *                      exits (state Z, /proc/PID/fd empty, the fds under
 *                      /proc/PID/task/TID/fd; seen on an H200).
 *   FAKEGPU_SHM=PREFIX  each worker maps /dev/shm/PREFIX<gpu> (made 0600 if
 *                      missing) and closes its fd, as NCCL's SHM transport;
 *                      FAKEGPU_SHM_FD=1 keeps the fd open too.
 *   FAKEGPU_REAP_MS=N  the parent reaps a dead worker N ms after it died
 *                      (-1: never), as a slow or missing init does orphans.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_GPUS 64

static volatile sig_atomic_t got_term;
static volatile sig_atomic_t got_chld;

static void on_term(int sig) {
  (void)sig;
  got_term = 1;
}
static void on_chld(int sig) {
  (void)sig;
  got_chld = 1;
}

static char **saved_argv; /* main's argv: a forked child's argv area */

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v && *v ? v : fallback;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/* Parses "0-7" or "0,2,5" into gpus[]; returns the count. */
static int parse_gpus(const char *spec, int *gpus) {
  int n = 0;
  char *copy = strdup(spec), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && n < MAX_GPUS;
       tok = strtok_r(NULL, ",", &save)) {
    int a, b;
    if (sscanf(tok, "%d-%d", &a, &b) == 2) {
      for (int i = a; i <= b && n < MAX_GPUS; i++) gpus[n++] = i;
    } else if (sscanf(tok, "%d", &a) == 1) {
      gpus[n++] = a;
    }
  }
  free(copy);
  return n;
}

static int held_fds[MAX_GPUS + 8];
static int held_count;

static void open_device(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT) fprintf(stderr, "gpuload: %s: %s\n", path, strerror(errno));
  if (fd >= 0 && held_count < (int)(sizeof held_fds / sizeof *held_fds))
    held_fds[held_count++] = fd;
}

/* FAKEGPU_HOLD=map: each device file opened so far is mapped, then its fd
 * closed (as a CUDA process that keeps only its mappings). */
static void map_and_close_devices(void) {
  for (int i = 0; i < held_count; i++) {
    if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, held_fds[i], 0) == MAP_FAILED)
      fprintf(stderr, "gpuload: mmap: %s\n", strerror(errno));
    close(held_fds[i]);
  }
  held_count = 0;
}

static void set_comm(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/* A daemon's own PID file: creates the directory (0755) and writes "PID\n"
 * (0644), as nvidia-persistenced or nv-fabricmanager do. */
static void write_own_pidfile(const char *file) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", file);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0755) == 0) chmod(dir, 0755);
    *p = '/';
  }
  FILE *f = fopen(file, "w");
  if (!f) {
    fprintf(stderr, "gpuload: %s: %s\n", file, strerror(errno));
    return;
  }
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  chmod(file, 0644);
}

/* Waits forever, applying the configured SIGTERM reaction. */
static void serve_until_term(void) {
  const char *mode = env_or("FAKEGPU_ON_TERM", "exit");
  if (strcmp(mode, "ignore") == 0) {
    signal(SIGTERM, SIG_IGN);
  } else if (strncmp(mode, "delay:", 6) == 0) {
    signal(SIGTERM, on_term);
  } else {
    signal(SIGTERM, SIG_DFL);
  }
  for (;;) {
    pause();
    if (got_term) {
      sleep_ms(atol(mode + 6));
      _exit(0);
    }
  }
}

/* Decodes hex text into buf (at most size - 1 bytes, NUL-terminated);
 * returns the byte count, or -1 on bad hex. */
static int unhex(const char *hex, char *buf, size_t size) {
  size_t n = 0;
  for (; hex[0] && hex[1] && n + 1 < size; hex += 2) {
    unsigned v;
    if (sscanf(hex, "%2x", &v) != 1) return -1;
    buf[n++] = (char)v;
  }
  buf[n] = '\0';
  return (int)n;
}

/* Writes 'title' over the argv area (argv[0] .. the NUL of the last
 * argument), padded with 'pad', as setproctitle does; the area's last byte
 * stays NUL so the kernel shows exactly this area as /proc/PID/cmdline. */
static void clobber_argv(int argc, char **argv, const char *title, char pad) {
  char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
  size_t area = (size_t)(end - start); /* bytes before the final NUL */
  size_t n = strlen(title);
  if (n > area) n = area;
  memcpy(start, title, n);
  memset(start + n, pad, area - n);
  if (pad) start[n] = '\0'; /* title, NUL, then spaces */
  *end = '\0';
}

/* FAKEGPU_SHM=PREFIX: the worker's NCCL-like segment /dev/shm/PREFIX<gpu>
 * (opened, or made 0600 by this process's uid, sized and mapped shared); its
 * fd is closed after the mapping, as NCCL does, unless FAKEGPU_SHM_FD is
 * set. Cleanup must remove it when the worker is gone. */
static void open_shm_segment(void) {
  char path[256];
  const char *prefix = getenv("FAKEGPU_SHM");
  if (!prefix || !*prefix) return;
  snprintf(path, sizeof path, "/dev/shm/%s%s", prefix, env_or("FAKEGPU_GPU", "0"));
  int fd = open(path, O_RDWR | O_CLOEXEC); /* another user's (protected_regular) */
  if (fd < 0 && errno == ENOENT) fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    fprintf(stderr, "gpuload: %s: %s\n", path, strerror(errno));
    return;
  }
  if (ftruncate(fd, 4096) != 0 ||
      mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
    fprintf(stderr, "gpuload: %s: %s\n", path, strerror(errno));
  if (!getenv("FAKEGPU_SHM_FD")) close(fd);
}

/* Opens the worker's devices, tells the parent, and serves until TERM. */
static void *worker_thread(void *unused) {
  char path[64];
  (void)unused;
  open_device("/dev/nvidiactl");
  open_device("/dev/nvidia-uvm");
  snprintf(path, sizeof path, "/dev/nvidia%s", env_or("FAKEGPU_GPU", "0"));
  open_device(path);
  if (getenv("FAKEGPU_VISIBLE")) {
    int peers[MAX_GPUS], own = atoi(env_or("FAKEGPU_GPU", "0"));
    int n = parse_gpus(getenv("FAKEGPU_VISIBLE"), peers);
    for (int i = 0; i < n; i++) {
      if (peers[i] == own) continue;
      snprintf(path, sizeof path, "/dev/nvidia%d", peers[i]);
      if (access(path, F_OK) == 0) open_device(path);
    }
  }
  if (strcmp(env_or("FAKEGPU_HOLD", "fd"), "map") == 0) map_and_close_devices();
  open_shm_segment();
  const char *ready_fd = getenv("FAKEGPU_READY_FD");
  if (ready_fd) {
    int fd = atoi(ready_fd);
    if (write(fd, "w", 1) < 0) {
    }
    close(fd);
  }
  serve_until_term();
  return NULL;
}

/* A worker: re-executed image holding nvidiactl, nvidia-uvm, its own GPU
 * and, with FAKEGPU_VISIBLE, every peer GPU (charged only on its own). */
static int run_worker(int argc, char **argv) {
  char comm[64];
  const char *title = env_or("FAKEGPU_TITLE_NOW", "gpuload-worker");
  const char *pad = env_or("FAKEGPU_TITLE_PAD", "none");
  if (getenv("FAKEGPU_WORKER_COMM_HEX") &&
      unhex(getenv("FAKEGPU_WORKER_COMM_HEX"), comm, sizeof comm) >= 0) {
    set_comm(comm);
  } else {
    set_comm(title);
  }
  if (!getenv("FAKEGPU_WORKER_ARGV_HEX") && argc > 0 && strcmp(pad, "none") != 0)
    clobber_argv(argc, argv, title, strcmp(pad, "space") == 0 ? ' ' : '\0');
  long init_ms = atol(env_or("FAKEGPU_INIT_MS_NOW", "0"));
  if (init_ms > 0) sleep_ms(init_ms);
  if (strcmp(env_or("FAKEGPU_HOLD", "fd"), "threads") == 0) {
    /* The devices are opened by a thread; the main thread exits. */
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker_thread, NULL) != 0) return 1;
    pthread_exit(NULL);
  }
  worker_thread(NULL);
  return 0;
}

/* The argv a worker is exec'd with: exact bytes (FAKEGPU_WORKER_ARGV_HEX),
 * the parent's argv (to be clobbered by the title), or just the title. */
static char **worker_argv(char *title) {
  static char buf[8192];
  static char *args[256];
  const char *hex = getenv("FAKEGPU_WORKER_ARGV_HEX");
  if (hex) {
    int n = unhex(hex, buf, sizeof buf - 1), count = 0;
    if (n >= 0) {
      buf[n] = '\0';
      for (int i = 0; i < n && count < 255; i += (int)strlen(buf + i) + 1) args[count++] = buf + i;
      if (n == 0) args[count++] = buf;
      args[count] = NULL;
      return args;
    }
  }
  if (strcmp(env_or("FAKEGPU_TITLE_PAD", "none"), "none") != 0 && saved_argv && saved_argv[0])
    return saved_argv;
  args[0] = title;
  args[1] = NULL;
  return args;
}

/* Starts the worker for "gpu"; returns its PID once it holds its devices. */
static pid_t start_worker(int gpu) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    char title[128], num[16], fdstr[16];
    const char *fmt = env_or("FAKEGPU_TITLE", "gpuload-worker-%d");
    close(ready[0]);
    setpgid(0, 0);
    snprintf(title, sizeof title, fmt, gpu);
    snprintf(num, sizeof num, "%d", gpu);
    snprintf(fdstr, sizeof fdstr, "%d", ready[1]);
    setenv("FAKEGPU_ROLE", "worker", 1);
    setenv("FAKEGPU_GPU", num, 1);
    setenv("FAKEGPU_MEM_GPUS", num, 1);
    setenv("FAKEGPU_TITLE_NOW", title, 1);
    setenv("FAKEGPU_READY_FD", fdstr, 1);
    unsetenv("FAKEGPU_PIDFILE");
    execv("/proc/self/exe", worker_argv(title));
    _exit(127);
  }
  close(ready[1]);
  char c;
  while (read(ready[0], &c, 1) < 0 && errno == EINTR) {
  }
  close(ready[0]);
  return pid;
}

static void write_pidfile(const int *gpus, const pid_t *pids, int n) {
  const char *file = getenv("FAKEGPU_PIDFILE");
  if (!file) return;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", file);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  fprintf(f, "parent %d\n", (int)getpid());
  for (int i = 0; i < n; i++) fprintf(f, "%d %d\n", gpus[i], (int)pids[i]);
  fclose(f);
  rename(tmp, file);
}

static void tell_launcher(int fd) {
  if (fd < 0) return;
  if (write(fd, "r", 1) < 0) {
  }
  close(fd);
}

static int run_parent(int launcher_fd) {
  int gpus[MAX_GPUS];
  pid_t pids[MAX_GPUS];
  int respawned[MAX_GPUS] = {0};
  int n = parse_gpus(env_or("FAKEGPU_GPUS", ""), gpus);
  int respawn = getenv("FAKEGPU_RESPAWN") != NULL;
  if (getenv("FAKEGPU_COMM")) set_comm(getenv("FAKEGPU_COMM"));
  long respawn_delay = atol(env_or("FAKEGPU_RESPAWN_DELAY_MS", "300"));

  if (getenv("FAKEGPU_HOLD_ALL")) {
    char path[64];
    open_device("/dev/nvidiactl");
    open_device("/dev/nvidia-uvm");
    for (int i = 0; i < MAX_GPUS; i++) {
      snprintf(path, sizeof path, "/dev/nvidia%d", i);
      if (access(path, F_OK) == 0) open_device(path);
    }
  } else if (getenv("FAKEGPU_HOLD_GPUS") && *getenv("FAKEGPU_HOLD_GPUS")) {
    char path[64];
    int held[MAX_GPUS], count = parse_gpus(getenv("FAKEGPU_HOLD_GPUS"), held);
    open_device("/dev/nvidiactl");
    open_device("/dev/nvidia-uvm");
    for (int i = 0; i < count; i++) {
      snprintf(path, sizeof path, "/dev/nvidia%d", held[i]);
      open_device(path);
    }
  }
  if (getenv("FAKEGPU_OWN_PIDFILE")) write_own_pidfile(getenv("FAKEGPU_OWN_PIDFILE"));
  signal(SIGCHLD, on_chld);
  for (int i = 0; i < n; i++) pids[i] = start_worker(gpus[i]);
  write_pidfile(gpus, pids, n);
  tell_launcher(launcher_fd);
  if (getenv("FAKEGPU_DETACH")) return 0;
  if (getenv("FAKEGPU_HOLD_ALL") || n == 0) {
    serve_until_term();
  }
  signal(SIGTERM, SIG_DFL);
  long reap_ms = atol(env_or("FAKEGPU_REAP_MS", "0"));
  for (;;) {
    pause();
    if (!got_chld || reap_ms < 0) continue;
    got_chld = 0;
    if (reap_ms > 0) sleep_ms(reap_ms);
    int status;
    pid_t dead;
    while ((dead = waitpid(-1, &status, WNOHANG)) > 0) {
      for (int i = 0; i < n; i++) {
        if (pids[i] != dead) continue;
        pids[i] = -1;
        if (respawn && !respawned[i] && WIFSIGNALED(status)) {
          respawned[i] = 1;
          sleep_ms(respawn_delay);
          setenv("FAKEGPU_INIT_MS_NOW", env_or("FAKEGPU_RESPAWN_INIT_MS", "0"), 1);
          pids[i] = start_worker(gpus[i]);
          write_pidfile(gpus, pids, n);
        }
      }
    }
  }
}

/* Maps flags onto FAKEGPU_* variables; returns 0 or prints usage. */
static int apply_flags(int argc, char **argv) {
  static const char *const with_value[][2] = {
      {"--gpus", "FAKEGPU_GPUS"},
      {"--mib", "FAKEGPU_MIB"},
      {"--title", "FAKEGPU_TITLE"},
      {"--on-term", "FAKEGPU_ON_TERM"},
      {"--pidfile", "FAKEGPU_PIDFILE"},
      {"--respawn-delay", "FAKEGPU_RESPAWN_DELAY_MS"},
      {"--respawn-init", "FAKEGPU_RESPAWN_INIT_MS"},
  };
  static const char *const switches[][2] = {
      {"--respawn-once", "FAKEGPU_RESPAWN"},
      {"--detach", "FAKEGPU_DETACH"},
      {"--hold-all", "FAKEGPU_HOLD_ALL"},
      {"--daemonize", "FAKEGPU_DAEMONIZE"},
  };
  for (int i = 1; i < argc; i++) {
    int matched = 0;
    for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++) {
      if (strcmp(argv[i], with_value[k][0]) == 0 && i + 1 < argc) {
        setenv(with_value[k][1], argv[++i], 1);
        matched = 1;
      }
    }
    for (size_t k = 0; k < sizeof switches / sizeof *switches; k++) {
      if (strcmp(argv[i], switches[k][0]) == 0) {
        setenv(switches[k][1], "1", 1);
        matched = 1;
      }
    }
    if (!matched && strncmp(argv[i], "--", 2) == 0) {
      fprintf(stderr, "gpuload: unknown flag %s (see the header of gpuload.c)\n", argv[i]);
      return 2;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *role = getenv("FAKEGPU_ROLE");
  saved_argv = argv;
  if (role && strcmp(role, "worker") == 0) return run_worker(argc, argv);
  if (!getenv("FAKEGPU_NO_FLAGS") && apply_flags(argc, argv) != 0) return 2;
  if (!getenv("FAKEGPU_DAEMONIZE")) return run_parent(-1);

  int ready[2];
  if (pipe(ready) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(ready[0]);
    (void)fcntl(ready[1], F_SETFD, FD_CLOEXEC);
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
    }
    unsetenv("FAKEGPU_DAEMONIZE");
    return run_parent(ready[1]);
  }
  close(ready[1]);
  char c;
  ssize_t got;
  (void)fcntl(ready[0], F_SETFD, FD_CLOEXEC);
  while ((got = read(ready[0], &c, 1)) < 0 && errno == EINTR) {
  }
  return got == 1 ? 0 : 1;
}
