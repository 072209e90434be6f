"""owners: OwnersMixin, the HostSetup verbs for GPU processes that something
owns, each in the cgroup its owner makes: systemd units (service,
restarting_service), Slurm jobs, Docker containers, Kubernetes pods,
container jobs, and impostors (jobs named like a daemon). Not thread-safe:
one HostSetup per host.
"""

import os
import shlex

from cgroups import docker_cgroup, pod_cgroup, pod_uid, session_cgroup
from host_files import user_id, write_file


class OwnersMixin:
    """HostSetup's owned jobs (needs workload, sleeper)."""

    def _write_unit(self, unit, main, killmode="process", description="", timeout_stop_s=5,
                    cgroup=None, **props):
        """state/units/UNIT, read by the fake systemctl; props are more
        KEY=VALUE lines (Restart, RestartSec, ExecStart, PIDFile, ...)."""
        lines = [f"Description={description or unit}", f"MainPID={main}",
                 f"KillMode={killmode}", f"TimeoutStopSec={timeout_stop_s}",
                 f"ControlGroup={cgroup or '/system.slice/' + unit}"]
        lines += [f"{k}={v}" for k, v in props.items() if v is not None]
        write_file(os.path.join(self.host.state, "units", unit), "\n".join(lines) + "\n")

    def service(self, unit, killmode="process", description="", timeout_stop_s=5, **workload):
        """Starts a workload as systemd unit 'unit' (MainPID = its parent), in
        the unit's cgroup /system.slice/UNIT."""
        pids = self.workload(unit=unit, **workload)
        self._write_unit(unit, pids["parent"], killmode, description, timeout_stop_s,
                         cgroup=workload.get("cgroup"))
        return pids

    def restarting_service(self, unit, gpus="1", mib=30720, restart="always", restart_sec=0.5,
                           killmode="control-group", description="",
                           argv=("/usr/bin/python3", "-m", "embedding_server", "--port", "8080"),
                           comm="python3", start_limit_burst=5, start_limit_interval_s=10):
        """A unit with Restart=RESTART whose main process is itself a GPU
        holder (charged 'mib' on 'gpus'), in /system.slice/UNIT. When the main
        process dies, unitd (playing systemd, in /init.scope) starts a new one
        after RestartSec in the same cgroup, re-parented to the host's init
        (PPID 1), and counts NRestarts; systemctl stop ends the restarting.
        After StartLimitBurst starts within StartLimitIntervalSec the unit is
        "failed" (start-limit-hit) and no longer restarted, as systemd does.
        Returns the first main PID. Ground truth: "restart_units"."""
        cgroup = f"/system.slice/{unit}"
        pids = self.workload(gpus="", hold_gpus=gpus, mib=mib, argv=argv, comm=comm, unit=unit,
                             cgroup=cgroup, visible="")
        pidfile = f"/run/fakegpu/pids/{self._seq}"
        self._write_unit(unit, pids["parent"], killmode, description or unit, 5, cgroup=cgroup,
                         Restart=restart, RestartSec=restart_sec, NRestarts=0,
                         StartLimitBurst=start_limit_burst,
                         StartLimitIntervalSec=start_limit_interval_s, ActiveState="active",
                         PIDFile=pidfile, ExecStart=self.last_command)
        started = self.fleet.exec(self.name, "setsid /usr/local/bin/unitd "
                                  f"{shlex.quote(unit)} </dev/null >/dev/null 2>&1 &",
                                  cgroup="/init.scope")
        if started.returncode != 0:
            raise RuntimeError(f"{self.name}: unitd failed: {started.stderr}")
        self.host.restart_units[unit] = {"first_pid": pids["parent"], "gpus": str(gpus)}
        return pids["parent"]

    def slurm_job(self, job_id, gpus, user="gpuops", mib=70000, step="0", orphaned=True,
                  title="VLLM::Worker_TP%d", argv=("python3", "-m", "vllm.entrypoints.openai."
                                                   "api_server", "--tensor-parallel-size", "4"),
                  shm=None):
        """A Slurm job as slurmstepd (cgroup v2 plugin) lays it out: the job's
        tasks in /system.slice/slurmstepd.scope/job_ID/step_STEP/user/task_0,
        one 'slurmstepd: [ID.STEP]' and one 'slurmstepd: [ID.extern]' in
        .../step_*/slurm, owned by 'user'. One worker per GPU of 'gpus'
        (host indexes, "0-3"), charged 'mib' on its own GPU; each opens only
        the job's GPUs (visible=gpus: with ConstrainDevices=yes a job cannot
        open the node's other GPUs). orphaned: the launcher is gone, workers
        re-parented to init (the job ended, its workers did not). shm: each
        worker maps its NCCL-like /dev/shm/SHM<gpu> (workload). Recorded
        in host.jobs[str(job_id)] with the epilog's environment."""
        base = f"/system.slice/slurmstepd.scope/job_{job_id}"
        stepds = [self.sleeper(argv=(f"slurmstepd: [{job_id}.extern]",), comm="slurmstepd",
                               cgroup=f"{base}/step_extern/slurm", exe="/usr/sbin/slurmstepd"),
                  self.sleeper(argv=(f"slurmstepd: [{job_id}.{step}]",), comm="slurmstepd",
                               cgroup=f"{base}/step_{step}/slurm", exe="/usr/sbin/slurmstepd")]
        pids = self.workload(gpus=gpus, mib=mib, title=title, argv=argv, detach=orphaned,
                             user=user, visible=gpus, cgroup=f"{base}/step_{step}/user/task_0",
                             shm=shm)
        workers = sorted(pid for key, pid in pids.items() if key != "parent")
        indexes = sorted(k for k in pids if k != "parent")
        self.host.jobs[str(job_id)] = {
            "cgroup": base, "gpus": gpus, "user": user, "workers": workers,
            "parent": None if orphaned else pids["parent"], "slurmstepd": stepds,
            "epilog_env": {"SLURM_JOB_ID": str(job_id), "SLURM_JOB_USER": user,
                           "SLURM_JOB_UID": str(user_id(user)),
                           "SLURM_JOB_GPUS": ",".join(str(k) for k in indexes),
                           "CUDA_VISIBLE_DEVICES": ",".join(str(k) for k in indexes),
                           "SLURM_SCRIPT_CONTEXT": "epilog_slurmd"}}
        return pids

    def docker_container(self, name="trainer", gpus="2", mib=40960,
                         argv=("python3", "train.py")):
        """A Docker container's GPU process: /system.slice/docker-<64 hex>.scope,
        its own mount namespace and /dev (as container_job). Recorded in
        host.jobs["docker:NAME"]."""
        cgroup = docker_cgroup(self.name, name)
        pids = self.container_job(gpu=int(gpus), mib=mib, argv=argv, name=name, cgroup=cgroup)
        self.host.jobs[f"docker:{name}"] = {"cgroup": cgroup, "gpus": str(gpus),
                                            "user": "root", "workers": [pids[int(gpus)]],
                                            "parent": None}
        return pids

    def k8s_pod(self, pod="llm-serve-7d9f8b6c5-x2x4q", container="server", gpus="5", mib=61440,
                qos="besteffort", argv=("python3", "-m", "sglang.launch_server")):
        """A Kubernetes pod's GPU container: /kubepods.slice/kubepods-QOS.slice/
        kubepods-QOS-pod<uid>.slice/cri-containerd-<64 hex>.scope (pod_cgroup),
        its own mount namespace and /dev, plus the pod's /pause sandbox.
        Recorded in host.jobs["pod:POD"] with the pod UID."""
        cgroup = pod_cgroup(self.name, pod, container, qos)
        self.sleeper(argv=("/pause",), comm="pause", cgroup=pod_cgroup(self.name, pod, "pause",
                                                                       qos))
        pids = self.container_job(gpu=int(gpus), mib=mib, argv=argv, name=pod[:63],
                                  cgroup=cgroup)
        self.host.jobs[f"pod:{pod}"] = {"cgroup": cgroup.rsplit("/", 1)[0], "gpus": str(gpus),
                                        "user": "root", "workers": [pids[int(gpus)]],
                                        "parent": None, "pod_uid": pod_uid(self.name, pod)}
        return pids

    def pod_sandbox(self, pod):
        """The pod's pause process (/pause, in its own container cgroup)."""
        return self.sleeper(argv=("/pause",), comm="pause",
                            cgroup=pod_cgroup(self.name, pod, "pause"))

    def container_job(self, gpu=3, mib=40960, title="python3", argv=("python3", "train.py"),
                      name="job", cgroup=None):
        """A job in its own mount namespace, as a container runtime starts it:
        a private tmpfs /dev holding null/zero/urandom and its OWN plain files
        nvidiaK, nvidiactl and nvidia-uvm (other inodes than the host's, so
        fuser on the host's /dev/nvidiaK does not see it; readlink of its fds
        still reads "/dev/nvidiaK"). Same PID namespace as the host. Returns
        the workload's PIDs."""
        setup = ("mount -t tmpfs -o mode=755,size=64k ctrdev /dev && "
                 "mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 && "
                 "mknod -m 666 /dev/urandom c 1 9 && mkdir /dev/shm && "
                 f": > /dev/nvidia{int(gpu)} && : > /dev/nvidiactl && : > /dev/nvidia-uvm && "
                 f"chmod 666 /dev/nvidia* && hostname {shlex.quote(name)} && exec sh -c \"$1\"")
        wrap = f"unshare --mount --uts --propagation private sh -c {shlex.quote(setup)} sh"
        pids = self.workload(gpus=str(gpu), mib=mib, title=title, argv=argv, detach=True,
                             visible=str(gpu), wrap=wrap,
                             cgroup=cgroup or docker_cgroup(self.name, name))
        self.host.containers.append(pids[gpu])
        return pids

    def impostor(self, path, gpus="3", mib=90000, user="gpuops", mode=0o755,
                 args=("train.py",), private_tmp=None):
        """A job that runs a copy of gpuload at 'path', named like a protected
        daemon or sshd ("/home/gpuops/bin/sshd", "/root/bin/nv-hostengine"),
        owned by 'user' with 'mode', holding 'gpus' with 'mib' each: a job,
        not a daemon. A path under /tmp gets a private /tmp (own mount
        namespace with a tmpfs /tmp, as PrivateTmp=yes or a user namespace
        gives; the machine's /tmp is shared by every host and is never
        written to). Recorded in host.impostors; returns its PID."""
        if private_tmp is None:
            private_tmp = path.startswith("/tmp/")
        uid = user_id(user)
        install = (f"mkdir -p {shlex.quote(os.path.dirname(path))} && "
                   f"cp /usr/local/bin/gpuload {shlex.quote(path)} && "
                   f"chown {uid}:{uid} {shlex.quote(path)} && chmod {mode:o} {shlex.quote(path)}")
        wrap, run_as = None, user
        if private_tmp:
            setup = ("mount -t tmpfs -o mode=1777,size=1m privtmp /tmp && " + install +
                     f" && exec setpriv --reuid={uid} --regid={uid} --clear-groups "
                     "sh -c \"$1\"")
            wrap = f"unshare --mount --propagation private sh -c {shlex.quote(setup)} sh"
            run_as = None
        else:
            done = self.fleet.exec(self.name, install, user=user if uid else None)
            if done.returncode != 0:
                raise RuntimeError(f"{self.name}: impostor {path}: {done.stderr}")
        pids = self.workload(gpus="", hold_gpus=gpus, mib=mib, argv=(path,) + tuple(args),
                             exe=path, user=run_as, wrap=wrap, visible="",
                             cgroup=session_cgroup(uid))
        pid = pids["parent"]
        self.host.impostors.append({"pid": pid, "named_like": os.path.basename(path),
                                    "exe": path, "user": user, "gpus": str(gpus),
                                    "mode": f"{mode:04o}"})
        return pid
