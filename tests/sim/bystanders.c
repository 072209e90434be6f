/*
 * bystanders: the unrelated processes of a real GPU host (sshd sessions,
 * containerd, cron, a Python HTTP server, kworker-like names...), so that
 * fleetreap's scans and the fake nvidia-smi walk a /proc as long as a real
 * host's. None of them touches an NVIDIA device; fleetreap must leave every
 * one of them alone.
 *
 *   bystanders COUNT [FIRST]
 *
 * forks COUNT sleeping children (profile FIRST, FIRST+1, ... of the table
 * below, wrapping), each in its own session, with the profile's comm
 * (PR_SET_NAME) and command line, and returns once all of them are up. The
 * children never exec: each points the kernel's argv range at its own heap
 * buffer (prctl PR_SET_MM_MAP with every other field unchanged; it needs no
 * CAP_SYS_RESOURCE, which this machine's root lacks, and the buffer must be
 * anonymous memory: the kernel reads cmdline with FOLL_ANON), so
 * /proc/PID/cmdline holds exactly "arg0\0arg1\0...\0" as for a freshly
 * exec'd program, while all children share the parent's pages (a few KiB of
 * private memory each).
 * Without that prctl the profile is written over the original argv area,
 * NUL-padded (what setproctitle leaves). SIGTERM and SIGKILL end them.
 *
 * Hostile volume (each child alike; none of these by default):
 *   FAKEGPU_BYSTANDER_HOLD=PATH       opens PATH and keeps it open (a
 *                                     holder of /dev/nvidiactl alone)
 *   FAKEGPU_BYSTANDER_FDS=N           dup()s that fd until N fds are open
 *                                     (RLIMIT_NOFILE's soft limit raised to
 *                                     the hard one; fewer if that is lower)
 *   FAKEGPU_BYSTANDER_THREADS=T       T-1 more threads, all sharing the fd
 *                                     table
 *   FAKEGPU_BYSTANDER_ARGV_BYTES=N    the command line is N bytes of
 *   FAKEGPU_BYSTANDER_ARG_LEN=L       arguments of L 'x's each (default
 *                                     64), NUL-ended, instead of the
 *                                     profile's
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/prctl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct profile {
  const char *comm;
  const char *argv[10];
};

static const struct profile profiles[] = {
    {"sshd", {"sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups"}},
    {"sshd", {"sshd: gpuops [priv]"}},
    {"sshd", {"sshd: gpuops@pts/0"}},
    {"bash", {"-bash"}},
    {"containerd", {"/usr/bin/containerd"}},
    {"containerd-shim",
     {"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id",
      "9f2c4b0e1d7a6c3b8e5f2a1d0c9b8a7f6e5d4c3b2a190817263544f3e2d1c0b", "-address",
      "/run/containerd/containerd.sock"}},
    {"dockerd",
     {"/usr/bin/dockerd", "-H", "fd://", "--containerd=/run/containerd/containerd.sock"}},
    {"kubelet",
     {"/usr/bin/kubelet", "--config=/var/lib/kubelet/config.yaml",
      "--kubeconfig=/etc/kubernetes/kubelet.conf",
      "--container-runtime-endpoint="
      "unix:///run/containerd/containerd.sock"}},
    {"cron", {"/usr/sbin/cron", "-f", "-P"}},
    {"rsyslogd", {"/usr/sbin/rsyslogd", "-n", "-iNONE"}},
    {"systemd-journal", {"/lib/systemd/systemd-journald"}},
    {"systemd-udevd", {"/lib/systemd/systemd-udevd"}},
    {"dbus-daemon",
     {"@dbus-daemon", "--system", "--address=systemd:", "--nofork", "--nopidfile",
      "--systemd-activation", "--syslog-only"}},
    {"python3", {"python3", "-m", "http.server", "8000"}},
    {"python3", {"/usr/bin/python3", "/usr/bin/networkd-dispatcher", "--run-startup-triggers"}},
    {"kworker/u16:2", {""}},
    {"kworker/3:1H", {""}},
    {"agetty", {"/sbin/agetty", "-o", "-p -- \\u", "--noclear", "tty1", "linux"}},
    {"node_exporter",
     {"/usr/local/bin/node_exporter",
      "--collector.textfile.directory=/var/lib/node_exporter/textfile"}},
    {"tmux: server", {"tmux", "new", "-s", "train"}},
    {"sleep", {"sleep", "infinity"}},
    {"jupyter-lab",
     {"/opt/conda/bin/python3.11", "/opt/conda/bin/jupyter-lab", "--no-browser", "--ip=0.0.0.0",
      "--port=8888"}},
    {"ray::IDLE", {"ray::IDLE"}},
    {"chronyd", {"/usr/sbin/chronyd", "-F", "1"}},
    {"irqbalance", {"/usr/sbin/irqbalance", "--foreground"}},
    {"snapd", {"/usr/lib/snapd/snapd"}},
    {"nginx", {"nginx: worker process"}},
    {"redis-server", {"/usr/bin/redis-server 127.0.0.1:6379"}},
};
#define PROFILES (sizeof profiles / sizeof *profiles)

/* The cgroup of each profile on a systemd host (same order as profiles[]);
 * "/" is the root, where kernel threads are. */
#define SESSION "/user.slice/user-1000.slice/session-3.scope"
static const char *const cgroups[] = {
    "/system.slice/ssh.service",
    SESSION,
    SESSION,
    SESSION,
    "/system.slice/containerd.service",
    "/system.slice/containerd.service",
    "/system.slice/docker.service",
    "/system.slice/kubelet.service",
    "/system.slice/cron.service",
    "/system.slice/rsyslog.service",
    "/system.slice/systemd-journald.service",
    "/system.slice/systemd-udevd.service",
    "/system.slice/dbus.service",
    SESSION,
    "/system.slice/networkd-dispatcher.service",
    "/",
    "/",
    "/system.slice/system-getty.slice/getty@tty1.service",
    "/system.slice/node_exporter.service",
    "/user.slice/user-1000.slice/user@1000.service/app.slice/tmux-spawn-1f0e.scope",
    SESSION,
    "/user.slice/user-1000.slice/session-5.scope",
    SESSION,
    "/system.slice/chrony.service",
    "/system.slice/irqbalance.service",
    "/system.slice/snapd.service",
    "/system.slice/nginx.service",
    "/system.slice/redis-server.service",
};
_Static_assert(sizeof cgroups / sizeof *cgroups == PROFILES, "one cgroup per profile");

/* Moves this process into FS/CGROUP (creating it) when FAKEGPU_CGROUP_FS
 * names the host's cgroup2 mount; no-op otherwise. */
static void join_cgroup(const char *cgroup) {
  const char *fs = getenv("FAKEGPU_CGROUP_FS");
  char path[512];
  if (!fs || !*fs) return;
  int n = snprintf(path, sizeof path, "%s%s", fs, strcmp(cgroup, "/") == 0 ? "" : cgroup);
  for (int i = (int)strlen(fs) + 1; i < n; i++) {
    if (path[i] != '/') continue;
    path[i] = '\0';
    mkdir(path, 0755);
    path[i] = '/';
  }
  mkdir(path, 0755);
  snprintf(path + n, sizeof path - (size_t)n, "/cgroup.procs");
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs("0\n", f);
  fclose(f);
}

/* Points the kernel's argv range at [start, end): PR_SET_MM_MAP with the
 * other fields as /proc/self/stat shows them. 0 on success. */
static int set_arg_range(char *start, char *end) {
  char stat[2048];
  FILE *f = fopen("/proc/self/stat", "r");
  if (!f) return -1;
  size_t n = fread(stat, 1, sizeof stat - 1, f);
  fclose(f);
  stat[n] = '\0';
  char *p = strrchr(stat, ')'), *save = NULL;
  if (!p) return -1;
  unsigned long long v[64] = {0};
  int field = 3;
  for (char *tok = strtok_r(p + 2, " ", &save); tok && field < 64; tok = strtok_r(NULL, " ", &save))
    v[field++] = strtoull(tok, NULL, 10);
  if (field <= 51) return -1;
  struct prctl_mm_map m;
  memset(&m, 0, sizeof m);
  m.start_code = v[26];
  m.end_code = v[27];
  m.start_stack = v[28];
  m.start_data = v[45];
  m.end_data = v[46];
  m.start_brk = v[47];
  m.brk = (unsigned long)syscall(SYS_brk, 0);
  m.arg_start = (unsigned long)start;
  m.arg_end = (unsigned long)end;
  m.env_start = v[50];
  m.env_end = v[51];
  m.exe_fd = (unsigned)-1;
  return prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&m, sizeof m, 0);
}

/* Makes /proc/PID/cmdline read "arg0\0arg1\0...\0" for this process. */
static void set_cmdline(int argc, char **argv, const struct profile *p) {
  char *buf = malloc(1024);
  size_t n = 0;
  if (!buf) return;
  for (int i = 0; i < 10 && p->argv[i]; i++) {
    size_t len = strlen(p->argv[i]);
    if (n + len + 1 > 1024) break;
    memcpy(buf + n, p->argv[i], len + 1);
    n += len + 1;
  }
  if (set_arg_range(buf, buf + n) == 0) return;
  /* Fallback: over the original argv area, NUL-padded. */
  char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
  size_t area = (size_t)(end - start);
  memset(start, 0, area);
  memcpy(start, buf, n - 1 < area ? n - 1 : area);
}

static long env_long(const char *name) {
  const char *v = getenv(name);
  return v && *v ? atol(v) : 0;
}

static void *idle_thread(void *arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

/* The hostile-volume knobs (see the header), in the child. */
static void hostile_volume(int argc, char **argv) {
  long bytes = env_long("FAKEGPU_BYSTANDER_ARGV_BYTES");
  if (bytes > 0) {
    long len = env_long("FAKEGPU_BYSTANDER_ARG_LEN");
    if (len <= 0) len = 64;
    char *buf = malloc((size_t)bytes);
    if (buf) {
      memset(buf, 'x', (size_t)bytes);
      for (long i = len; i < bytes; i += len + 1) buf[i] = '\0';
      buf[bytes - 1] = '\0';
      if (set_arg_range(buf, buf + bytes) != 0) fprintf(stderr, "bystanders: argv range\n");
    }
  }
  (void)argc;
  (void)argv;
  const char *hold = getenv("FAKEGPU_BYSTANDER_HOLD");
  if (hold && *hold) {
    int fd = open(hold, O_RDONLY);
    long want = env_long("FAKEGPU_BYSTANDER_FDS");
    if (fd >= 0 && want > 1) {
      struct rlimit r;
      if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
      }
      for (long n = 1; n < want; n++)
        if (dup(fd) < 0) break;
    }
  }
  long threads = env_long("FAKEGPU_BYSTANDER_THREADS");
  for (long i = 1; i < threads; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, idle_thread, NULL) != 0) break;
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bystanders COUNT [FIRST]\n");
    return 2;
  }
  int count = atoi(argv[1]);
  int first = argc > 2 ? atoi(argv[2]) : 0;
  int ready[2];
  if (pipe(ready) != 0) return 1;
  for (int i = 0; i < count; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "bystanders: fork: %s\n", strerror(errno));
      return 1;
    }
    if (pid > 0) continue;
    const struct profile *p = &profiles[(size_t)(first + i) % PROFILES];
    setsid();
    join_cgroup(cgroups[(size_t)(first + i) % PROFILES]);
    signal(SIGTERM, SIG_DFL);
    prctl(PR_SET_NAME, p->comm, 0, 0, 0);
    set_cmdline(argc, argv, p);
    hostile_volume(argc, argv);
    if (write(ready[1], "b", 1) < 0) {
    }
    close(ready[0]);
    close(ready[1]);
    for (int fd = 0; fd < 3; fd++) close(fd);
    for (;;) pause();
  }
  close(ready[1]);
  char c;
  int up = 0;
  ssize_t got;
  while (up < count && ((got = read(ready[0], &c, 1)) > 0 || (got < 0 && errno == EINTR)))
    if (got > 0) up++;
  return up == count ? 0 : 1;
}
