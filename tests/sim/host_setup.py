"""host_setup: HostSetup, what a scenario function receives: the verbs that
stage one host, composed from one module per concern:

    workloads.py  processes (workload, sleeper, bystanders) and GPU state
                  (charge, leak, recovery_action, gpu_minors, nvidia_smi_mode, shm)
    owners.py     units, Slurm jobs, Docker containers, Kubernetes pods,
                  container jobs, impostors
    daemons.py    the protected daemons (DAEMONS, daemon, all_daemons)
    faults.py     sudo, network and sshd faults
    readiness_states.py  empty but not ready: remap pending, ECC errors, a
                  PCIe link at x8, NVSwitch without fabric manager, Xid lines
    host_files.py the files a host is built from (prepare_host_dir)
    cgroups.py    the cgroup paths inside a host (session_cgroup, pod_cgroup, ...)

Every process is started inside the host's namespaces with nsenter, so
fleetreap sees it over SSH with ps, fuser and /proc. PIDs returned here are
PIDs as seen inside the host. Not thread-safe: one HostSetup per host.
"""

from cgroups import docker_cgroup, pod_cgroup, pod_uid, session_cgroup  # noqa: F401
from daemons import DAEMON_UNIT_RESTART, DAEMONS, INSTALLED, DaemonsMixin  # noqa: F401
from faults import FaultsMixin
from host_files import (GROUP, PASSWD, SSHD_CONFIG, SUDOERS,  # noqa: F401
                        prepare_host_dir, user_id, write_file)
from owners import OwnersMixin
from readiness_states import ReadinessMixin
from workloads import WorkloadsMixin


class HostSetup(WorkloadsMixin, OwnersMixin, DaemonsMixin, FaultsMixin, ReadinessMixin):
    """What a scenario function receives: verbs that stage one host."""

    def __init__(self, fleet, host):
        self.fleet = fleet
        self.host = host
        self.name = host.name
        self.gpus = host.spec.gpus
        self._seq = 0
        self.last_command = None
