"""host_files: the files a simulated host is built from: its accounts,
sudoers and sshd_config (etc/), the fake tools' state directory (state/,
bound at /run/fakegpu), shm/, root/, home/ and the rootfs/ lower layers that
hold every installed daemon (prepare_host_dir). Stateless functions.
"""

import os
import shutil
import subprocess

from daemons import INSTALLED

PASSWD = """root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
sshd:x:102:65534::/run/sshd:/usr/sbin/nologin
nvidia-persistenced:x:103:104:NVIDIA Persistence Daemon:/nonexistent:/usr/sbin/nologin
gpuops:x:1000:1000:GPU operator:/home/gpuops:/bin/bash
researcher:x:1001:1001:Slurm user:/home/researcher:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
"""
GROUP = """root:x:0:
daemon:x:1:
sudo:x:27:{sudoers}
nvidia-persistenced:x:104:
gpuops:x:1000:
researcher:x:1001:
nogroup:x:65534:
"""
SUDOERS = """Defaults env_reset
Defaults secure_path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
root ALL=(ALL:ALL) ALL
{rule}"""

SSHD_CONFIG = """ListenAddress {address}:22
HostKey {dir}/etc/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile /run/fakegpu/authorized_keys/%u
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
PrintMotd no
PrintLastLog no
MaxStartups 200:30:400
"""


def write_file(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def user_id(name):
    """The uid of account 'name' on every simulated host (PASSWD)."""
    for line in PASSWD.splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2])
    raise KeyError(f"no user {name!r} on simulated hosts")


def prepare_host_dir(host, fleet):
    """Creates host.dir: etc/ (accounts, sudo, sshd), state/ (read by the
    fake tools at /run/fakegpu), shm/, root/, home/, rootfs/ (the lower
    layers of the host's /etc, /usr/bin, /usr/sbin, /opt, /usr/local/bin
    overlays: every daemon of DAEMONS at its path, root-owned 0755)."""
    d = host.dir
    shutil.rmtree(d, ignore_errors=True)
    for sub in ("etc", "state/authorized_keys", "state/leaked", "state/units", "state/pids", "shm",
                "root", "home/gpuops", "home/researcher", "rootfs/etc", "rootfs/usr/bin",
                "rootfs/usr/sbin", "rootfs/opt", "rootfs/usr/local/bin"):
        os.makedirs(os.path.join(d, sub))
    os.chmod(os.path.join(d, "shm"), 0o1777)
    os.chmod(os.path.join(d, "root"), 0o700)
    os.chown(os.path.join(d, "home/gpuops"), 1000, 1000)
    os.chown(os.path.join(d, "home/researcher"), 1001, 1001)
    spec = host.spec
    write_file(f"{d}/etc/passwd", PASSWD)
    write_file(f"{d}/etc/shadow", "".join(f"{line.split(':')[0]}:*:19700:0:99999:7:::\n"
                                      for line in PASSWD.splitlines()), 0o640)
    write_file(f"{d}/etc/group", GROUP.format(sudoers="gpuops" if spec.sudo else ""))
    rule = "gpuops ALL=(ALL) NOPASSWD: ALL\n" if spec.sudo else ""
    write_file(f"{d}/etc/sudoers", SUDOERS.format(rule=rule), 0o440)
    write_file(f"{d}/etc/hosts", f"127.0.0.1 localhost\n{host.address} {spec.name}\n")
    write_file(f"{d}/etc/sshd_config", SSHD_CONFIG.format(address=host.address, dir=d))
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", spec.name,
                    "-f", f"{d}/etc/ssh_host_ed25519_key"], check=True)
    with open(fleet.key + ".pub") as f:
        pub = f.read()
    for user in ("root", "gpuops"):
        write_file(f"{d}/state/authorized_keys/{user}", pub)
    state = host.state
    write_file(f"{state}/gpus", f"{spec.gpus}\n")
    write_file(f"{state}/driver", "loaded\n")
    write_file(f"{state}/mode", "normal\n")
    write_file(f"{state}/seed", spec.name + "\n")
    os.chmod(f"{state}/pids", 0o777)
    for path in sorted(set(INSTALLED.values())):
        if fleet.real_slurm and path in ("/usr/sbin/slurmd", "/usr/sbin/slurmstepd"):
            continue   # the machine's real ones (slurm_cluster.py)
        target = f"{d}/rootfs{path}"
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.link(os.path.join(fleet.workdir, "daemons", os.path.basename(path)), target)
