"""ground_truth: what is really on each simulated host, read from the
machine's /proc and the host directories, independent of fleetreap's report
and of the fake nvidia-smi's mode (a hung or "missing" nvidia-smi does not
hide the truth).

collect(fleet) returns {host name: {
  "address": "127.0.N.X", "scenario": str,
  "listener": "sshd"|"tarpit"|"black_hole"|"none"  (what listens now: an sshd killed mid-run
      reads "none"),
  "gpu_processes": [{"pid", "name", "comm", "exe", "user_uid", "gpus",
      "charged_gpus", "mib"}],
      non-protected processes holding any /dev/nvidia* (PIDs as seen inside),
      or charged memory by the driver with no device held (state/charged);
      "gpus" are the devices held (a realistic worker holds every peer),
      "charged_gpus" where it is charged "mib" (its own, FAKEGPU_MEM_GPUS),
  "protected": [{"pid", "name", "original"}], protected holders alive now,
  "protected_missing": [name], protected daemons started by the scenario that
      are no longer alive with their original PID,
  "gpus": [{"index", "memory_used_mib", "ghost_mib"}], memory.used as the fake
      nvidia-smi computes it (FAKEGPU_MIB of holders charged there + charged
      lines of live PIDs + leaked),
  "bystanders": number of live processes started by the host's bystanders
      helper (none of them may go),
  "shm_remaining": [name], "shm_must_keep": [name], "shm_must_remove": [name],
  "nvidia_smi_mode": str,
  "recovery_actions": {gpu: action}, GPUs whose gpu_recovery_action is not
      "None" (state/recovery/K),
  "ghost_gpus": [index], GPUs with driver-leaked memory (only a reset helps),
  "daemons": {name: {"pid", "alive", "exe", "cgroup", "unit", "pidfile",
      "pidfile_pid"}}, every daemon a scenario started with h.daemon: "alive"
      is its original PID with its original exe; "pidfile_pid" what its PID
      file holds now (None: no file / none written),
  "jobs": {"41" | "docker:NAME" | "pod:NAME": {"cgroup", "gpus", "user",
      "workers", "workers_alive", "gpu_processes", "processes"}}: the PIDs
      recorded at setup and those alive in the job's cgroup subtree now
      ("the co-tenant was never touched": workers_alive == workers),
  "impostors": [{"pid", "named_like", "exe", "user", "gpus", "mode",
      "alive"}], jobs named like protected programs,
  "restart_units": {unit: {"first_pid", "main_pid", "main_alive",
      "restarts" (NRestarts), "state" (ActiveState), "result",
      "gpu_processes"}}, units made with h.restarting_service,
  gpu_processes entries also carry "cgroup": the path the host sees
      ("/system.slice/vllm.service"; "" without cgroups),
  "protected" lists genuine daemons only: root-owned, not group/other-
      writable executables under /usr, /opt, /bin, /sbin, /lib, /nix/store
      whose basename is protected; impostors are gpu_processes,
  "clean": bool  (no non-protected holder, every GPU at 0 MiB except ghost
      memory, every must_remove file gone, every must_keep file present, every
      protected daemon alive with its original PID),
}}
Not thread-safe with respect to a fleet that is being brought up or down.
"""

import os
import stat

import cgroups
import procfs
from daemons import DAEMONS

# Programs that are protected when they are the real thing: a root-owned
# executable, not group/other-writable, under a system directory. A copy of
# a job's program named like one of them elsewhere is an impostor (a job).
PROTECTED = {"nvidia-persistenced", "nv-hostengine", "dcgm-exporter", "nv-fabricmanager",
             "nvidia-fabricmanager", "nvidia-imex", "nvidia-smi", "fuser", "Xorg",
             "Xwayland", "nvidia-cuda-mps-control", "nvidia-cuda-mps-server"} | set(DAEMONS)
SYSTEM_DIRS = ("/usr/", "/opt/", "/bin/", "/sbin/", "/lib/", "/nix/store/")


def _process(pid):
    """What the machine's /proc says about outer PID 'pid', or None when it
    is gone (or a zombie whose every thread has exited; a leader in state Z
    whose threads run is alive, its fds under task/TID/fd). Every read
    tolerates the process exiting midway."""
    fields = procfs.status_fields(pid)
    if not fields or "NSpid" not in fields:
        return None
    tasks = sorted((t for t in procfs.list_proc_dir(pid, "task") if t.isdigit()), key=int)
    if fields.get("State", "").startswith("Z") and len(tasks) <= 1:
        return None
    gpus, holds_device, env_task = set(), False, pid
    # The leader's table (fd), then every thread's (task/TID/fd).
    for where in ["."] + [f"task/{tid}" for tid in tasks]:
        for fd in procfs.list_proc_dir(pid, f"{where}/fd"):
            target = procfs.read_proc_link(pid, f"{where}/fd/{fd}")
            if target is not None and target.startswith("/dev/nvidia"):
                if not holds_device and where != ".":
                    env_task = where[5:]
                holds_device = True
                if target[11:].isdigit():
                    gpus.add(int(target[11:]))
    for line in (procfs.read_proc_file(pid, "maps") or "").splitlines():
        words = line.split()
        target = words[5] if len(words) >= 6 else ""
        if target.startswith("/dev/nvidia"):
            holds_device = True
            if target[11:].isdigit():
                gpus.add(int(target[11:]))
    # A leader that exited shows no environment; a thread holding the fds does.
    where = "environ" if env_task == pid else f"task/{env_task}/environ"
    environ = procfs.read_proc_file(pid, where, binary=True) or b""
    mib, mem_gpus = 0, None
    for item in environ.split(b"\0"):
        if item.startswith(b"FAKEGPU_MIB="):
            mib = int(item[12:] or 0)
        elif item.startswith(b"FAKEGPU_MEM_GPUS="):
            mem_gpus = _gpu_set(item[17:].decode())
    cmdline = (procfs.read_proc_file(pid, "cmdline", binary=True) or b"").split(b"\0")
    exe = procfs.read_proc_link(pid, "exe") or ""
    try:
        st = os.stat(procfs.proc_path(pid, "exe"))
        genuine = (st.st_uid == 0 and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
                   and exe.startswith(SYSTEM_DIRS))
    except procfs.GONE:
        genuine = False
    cgroup = ""
    for line in (procfs.read_proc_file(pid, "cgroup") or "").splitlines():
        if line.startswith("0::"):
            cgroup = line[3:]
    return {"pid": int(fields["NSpid"].split()[-1]), "name": cmdline[0].decode(errors="replace"),
            "comm": fields["Name"], "exe": exe, "cgroup": cgroup,
            "ppid": int(fields["PPid"]), "genuine": genuine,
            "user_uid": int(fields["Uid"].split()[0]), "gpus": sorted(gpus),
            "charged_gpus": sorted(gpus if mem_gpus is None else gpus & mem_gpus), "mib": mib,
            "holds_device": holds_device,
            "bystander": exe.endswith("/bystanders")}


def _gpu_set(spec):
    """{0, 3} for "0,3"; {0..7} for "0-7" (FAKEGPU_MEM_GPUS)."""
    gpus = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        if a.strip().isdigit():
            gpus.update(range(int(a), int(b if b.strip().isdigit() else a) + 1))
    return gpus


def _charged(host):
    """{inner pid: [(gpu, mib)]} from state/charged ("PID GPU MIB" lines)."""
    charged = {}
    for line in (procfs.read_file(os.path.join(host.state, "charged")) or "").splitlines():
        words = line.split()
        if len(words) == 3 and all(w.isdigit() for w in words):
            charged.setdefault(int(words[0]), []).append((int(words[1]), int(words[2])))
    return charged


def processes_by_host(fleet):
    """{host name: [process dicts]} for every live process of every host.
    Processes that exit during the walk are left out."""
    ns_to_host = {}
    for host in fleet.hosts.values():
        ns = procfs.read_proc_link(host.init_pid, "ns/pid")
        if ns is not None:
            ns_to_host[ns] = host.name
    result = {name: [] for name in fleet.hosts}
    for pid in procfs.list_pids():
        name = ns_to_host.get(procfs.read_proc_link(pid, "ns/pid"))
        if name is None:
            continue
        proc = _process(pid)
        if proc is not None:
            result[name].append(proc)
    return result


def _is_protected(proc):
    return os.path.basename(proc["exe"]) in PROTECTED and proc["genuine"]


def _inner_cgroups(fleet, procs):
    """Rewrites each process's "cgroup" (as the machine sees it) to the path
    the host itself sees (/system.slice/...), when the fleet has cgroups."""
    mount = cgroups.cgroup2_mount() or ""
    for name, plist in procs.items():
        host = fleet.hosts[name]
        prefix = host.cgroup[len(mount):] if host.cgroup else None
        for p in plist:
            if prefix and _under(p["cgroup"], prefix):
                p["cgroup"] = p["cgroup"][len(prefix):] or "/"
            else:
                p["cgroup"] = ""


def _under(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


def _owned(host, procs):
    """The owner-aware keys: daemons, jobs, impostors, restart_units."""
    by_pid = {p["pid"]: p for p in procs}

    def alive(pid, exe=None):
        p = by_pid.get(pid)
        return p is not None and (exe is None or p["exe"] == exe)

    daemons = {}
    for name, d in host.daemons.items():
        pidfile_pid = None
        if d.get("pidfile"):
            # /var/run is a link to /run: an absolute link resolves against
            # the reader's root, so read the host's /run directly.
            inner = "/run/" + d["pidfile"][9:] if d["pidfile"].startswith("/var/run/") \
                else d["pidfile"]
            text = procfs.read_proc_file(host.init_pid, "root" + inner)
            if text and text.strip().isdigit():
                pidfile_pid = int(text.strip())
        daemons[name] = {"pid": d["pid"], "alive": alive(d["pid"], d["exe"]), "exe": d["exe"],
                         "cgroup": d["cgroup"], "unit": d["unit"], "pidfile": d["pidfile"],
                         "pidfile_pid": pidfile_pid}
    jobs = {}
    for job, j in host.jobs.items():
        inside = [p for p in procs if p["cgroup"] and _under(p["cgroup"], j["cgroup"])]
        jobs[job] = {"cgroup": j["cgroup"], "gpus": j["gpus"], "user": j["user"],
                     "workers": j["workers"],
                     "workers_alive": [w for w in j["workers"] if alive(w)],
                     "gpu_processes": sorted(p["pid"] for p in inside if p["holds_device"]),
                     "processes": sorted(p["pid"] for p in inside)}
    impostors = [dict(i, alive=alive(i["pid"], i["exe"])) for i in host.impostors]
    units = {}
    for unit, u in host.restart_units.items():
        props = {}
        for line in (procfs.read_file(os.path.join(host.state, "units", unit)) or "").splitlines():
            key, _, value = line.partition("=")
            props[key] = value
        main = int(props.get("MainPID") or 0)
        cg = props.get("ControlGroup", f"/system.slice/{unit}")
        units[unit] = {"first_pid": u["first_pid"], "main_pid": main,
                       "main_alive": bool(main) and alive(main),
                       "restarts": int(props.get("NRestarts") or 0),
                       "state": props.get("ActiveState", ""),
                       "result": props.get("Result", "success"),
                       "gpu_processes": sorted(p["pid"] for p in procs if p["holds_device"]
                                               and p["cgroup"] and _under(p["cgroup"], cg))}
    return {"daemons": daemons, "jobs": jobs, "impostors": impostors, "restart_units": units}


def collect(fleet):
    truth = {}
    all_procs = processes_by_host(fleet)
    _inner_cgroups(fleet, all_procs)
    for name, procs in all_procs.items():
        host = fleet.hosts[name]
        charged = _charged(host)
        by_pid = {p["pid"]: p for p in procs}
        extra = {k: 0 for k in range(host.spec.gpus)}  # charged lines of live PIDs
        for pid, lines in charged.items():
            p = by_pid.get(pid)
            if p is None:
                continue
            for gpu, mib in lines:
                if gpu in extra:
                    extra[gpu] += mib
            if not p["holds_device"]:
                p["charged_gpus"] = sorted({g for g, _ in lines})
                p["mib"] = max(m for _, m in lines)
                p["holds_device"] = "charged"
        holders = [p for p in procs if p["holds_device"]]
        gpu_processes = [p for p in holders if not _is_protected(p)]
        protected = [{"pid": p["pid"], "name": os.path.basename(p["exe"]),
                      "original": host.protected.get(p["pid"]) == os.path.basename(p["exe"])}
                     for p in holders if _is_protected(p)]
        alive = {(p["pid"], p["name"]) for p in protected}
        missing = [n for pid, n in sorted(host.protected.items()) if (pid, n) not in alive]
        gpus = []
        for k in range(host.spec.gpus):
            leaked = procfs.read_file(os.path.join(host.state, "leaked", str(k)))
            ghost = int((leaked or "0").strip())
            used = ghost + extra[k] + sum(p["mib"] for p in holders
                                          if p["holds_device"] is True and k in p["charged_gpus"])
            gpus.append({"index": k, "memory_used_mib": used, "ghost_mib": ghost})
        shm = sorted(procfs.list_dir(os.path.join(host.dir, "shm")))
        mode = (procfs.read_file(os.path.join(host.state, "mode")) or "normal").strip()
        recovery = {}
        for k in range(host.spec.gpus):
            action = procfs.read_file(os.path.join(host.state, "recovery", str(k)))
            if action and action.strip() != "None":
                recovery[k] = action.strip()
        if any(p["exe"] == "/usr/sbin/sshd" for p in procs):
            listener = "sshd"
        else:
            listener = host.listener if host.listener in ("tarpit", "black_hole") else "none"
        owned = _owned(host, procs)
        for p in gpu_processes:
            for key in ("holds_device", "bystander", "genuine", "ppid"):
                del p[key]
        clean = (not gpu_processes and not missing
                 and all(g["memory_used_mib"] == g["ghost_mib"] for g in gpus)
                 and not set(host.shm_remove) & set(shm)
                 and set(host.shm_keep) <= set(shm))
        truth[name] = {"address": host.address, "scenario": host.spec.scenario,
                       "listener": listener, "gpu_processes": gpu_processes,
                       "protected": protected, "protected_missing": missing, "gpus": gpus,
                       "shm_remaining": shm, "shm_must_keep": sorted(host.shm_keep),
                       "shm_must_remove": sorted(host.shm_remove),
                       "nvidia_smi_mode": mode, "clean": clean,
                       "bystanders": sum(1 for p in procs if p.get("bystander")),
                       "recovery_actions": recovery,
                       "ghost_gpus": [g["index"] for g in gpus if g["ghost_mib"]],
                       **owned}
    return truth
