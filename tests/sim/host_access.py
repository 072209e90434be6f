"""host_access: FleetAccessMixin, how the tests reach a running host: a
command in the host's namespaces and cgroup, without SSH (exec), in a
nested PID namespace (exec_nested_pidns), as a Slurm epilog (exec_epilog),
the plain OpenSSH argv for a command (ssh_argv), the PID-namespace counter
(pid_counter), and ending the host's sshd (kill_sshd). exec and its
variants may run for different hosts from several threads at once (up()
stages hosts in parallel); pid_counter keeps counts per host and is not
thread-safe.
"""

import os
import shlex
import subprocess

import ground_truth
from cgroups import pod_cgroup, session_cgroup
from host_files import user_id


class FleetAccessMixin:
    """Fleet's verbs on running hosts (needs self.hosts, self.key,
    self.known_hosts, self.probe_cost, self._pid_reads)."""

    def host(self, name):
        return self.hosts[name]

    def exec(self, name, command, user=None, timeout=30, check=False, cgroup=None):
        """Runs 'command' with /bin/sh inside the host's namespaces (as root,
        or as 'user': "gpuops", "researcher"), in the host's cgroup 'cgroup'
        (a path inside the host, made if missing; default the user's login
        session, session_cgroup: root's is
        /user.slice/user-0.slice/session-1.scope). Returns
        subprocess.CompletedProcess (text)."""
        host = self.hosts[name]
        uid = 0 if user in (None, "root") else user_id(user)
        argv = []
        if host.cgroup:
            target = host.cgroup + (cgroup or session_cgroup(uid)).rstrip("/")
            os.makedirs(target, exist_ok=True)
            argv = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', target]
        argv += ["nsenter", "-t", str(host.init_pid), "-p", "-m", "-u"]
        argv += ["-C", "--wd=/"] if host.cgroup else ["--wd=/"]
        if uid:
            argv += ["-S", str(uid), "-G", str(uid)]
        argv += ["--", "/usr/bin/env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:"
                 "/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "/bin/sh", "-c", command]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=check)

    def exec_nested_pidns(self, name, command, user=None, timeout=30, check=False,
                          cgroup=None):
        """Runs 'command' inside host 'name' in a new PID namespace nested in
        the host's, with its own /proc (unshare --pid --fork --mount, then a
        new proc mount), as in a Kubernetes pod without hostPID:
        /proc/self/ns/pid is neither the initial namespace nor the one
        /etc/fleetreap/host-pid-namespace names, and the host's PIDs, which
        the fake nvidia-smi still reports as the real driver does (it reads
        the host's /proc, bound at /run/fakegpu-hostproc in the nested mount
        namespace only), name other processes or none.
        Default cgroup: a pod container's (pod "fleetreap-agent"). As root,
        or as 'user' (setpriv after the unshare)."""
        if user not in (None, "root"):
            uid = user_id(user)
            command = (f"exec setpriv --reuid={uid} --regid={uid} --clear-groups "
                       f"/bin/sh -c {shlex.quote(command)}")
        inner = ("mount --bind /proc /run/fakegpu-hostproc && mount -t proc proc /proc && "
                 'exec /bin/sh -c "$1"')
        wrapped = ("mkdir -p /run/fakegpu-hostproc && exec unshare --pid --fork --mount "
                   f"--propagation private /bin/sh -c {shlex.quote(inner)} sh "
                   f"{shlex.quote(command)}")
        if cgroup is None:
            cgroup = pod_cgroup(name, "fleetreap-agent", "fleetreap")
        return self.exec(name, wrapped, timeout=timeout, check=check, cgroup=cgroup)

    def exec_epilog(self, name, job_id, command, timeout=120):
        """Runs 'command' on host 'name' as Slurm runs a job's epilog: as
        root, in slurmd's cgroup (/system.slice/slurmd.service, outside every
        job cgroup), with the job's environment (SLURM_JOB_ID, SLURM_JOB_GPUS
        as host indexes, SLURM_JOB_USER, SLURM_JOB_UID, CUDA_VISIBLE_DEVICES,
        SLURM_SCRIPT_CONTEXT=epilog_slurmd) from h.slurm_job."""
        env = self.hosts[name].jobs[str(job_id)]["epilog_env"]
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        return self.exec(name, f"export {assignments}; {command}", timeout=timeout,
                         cgroup="/system.slice/slurmd.service")

    def ssh_argv(self, name, command, user="root", key=None):
        """The plain OpenSSH client command line for 'command' on host 'name'."""
        host = self.hosts[name]
        return ["ssh", "-T", "-i", key or self.key, "-o", f"UserKnownHostsFile={self.known_hosts}",
                "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
                "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR",
                f"{user}@{host.address}", command]

    def ground_truth(self):
        return ground_truth.collect(self)

    def _read_ns_last_pid(self, name):
        host = self.hosts[name]
        r = subprocess.run(["nsenter", "-t", str(host.init_pid), "-p", "--",
                            "cat", "/proc/sys/kernel/ns_last_pid"],
                           capture_output=True, text=True, timeout=30, check=True)
        self._pid_reads[name] = self._pid_reads.get(name, 0) + 1
        return int(r.stdout)

    def pid_counter(self, name):
        """The host's PID-namespace counter: /proc/sys/kernel/ns_last_pid as
        read by a 'cat' that nsenter forks into the namespace (the file
        answers for the reader's PID namespace, whatever /proc is mounted).
        Every read costs the probe's own PIDs (1: the cat); the result
        subtracts all reads made on this host so far, so that
        pid_counter(h) after - pid_counter(h) before = PIDs (processes and
        threads) allocated in the host by whatever ran in between. The cost
        is measured on the first call (the smallest difference of three pairs
        of back-to-back reads) and kept in self.probe_cost."""
        if self.probe_cost is None:
            costs = []
            for _ in range(3):
                first = self._read_ns_last_pid(name)
                costs.append(self._read_ns_last_pid(name) - first)
            self.probe_cost = min(costs)
        raw = self._read_ns_last_pid(name)
        return raw - self.probe_cost * self._pid_reads[name]

    def kill_sshd(self, name):
        """Ends the host's sshd listener now (the host stays up)."""
        # Returns once the listener is closed: the kernel closes a killed
        # process's sockets before it turns zombie.
        self.exec(name, "p=$(cat /run/fakegpu/sshd.pid); kill -KILL $p 2>/dev/null; "
                        "for i in $(seq 500); do "
                        "  s=$(cut -d')' -f2 /proc/$p/stat 2>/dev/null | cut -d' ' -f2); "
                        "  [ -z \"$s\" ] || [ \"$s\" = Z ] && break; sleep 0.01; done")
        self.hosts[name].listener = "none"

    # ---- tear-down ------------------------------------------------------
