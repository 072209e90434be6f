"""faults: FaultsMixin, the HostSetup verbs that break a host's access:
sudo taken away, no listener, a tarpit, a black hole, sshd options, a
refused key, a changed host key, sshd killed mid-run. Not thread-safe: one
HostSetup per host.
"""

import os
import subprocess
import time

from host_files import GROUP, SUDOERS, write_file
from hosts import SimError


class FaultsMixin:
    """HostSetup's sudo, network and sshd faults."""

    def set_sudo(self, allowed):
        """Gives gpuops passwordless sudo on this host, or takes it away."""
        self.host.spec.sudo = allowed
        d = self.host.dir
        rule = "gpuops ALL=(ALL) NOPASSWD: ALL\n" if allowed else ""
        write_file(f"{d}/etc/sudoers", SUDOERS.format(rule=rule), 0o440)
        write_file(f"{d}/etc/group", GROUP.format(sudoers="gpuops" if allowed else ""))

    def no_listener(self):
        """Nothing listens on the host's address (connection refused)."""
        self.fleet.kill_sshd(self.name)

    def tarpit(self):
        """A listener that accepts but never sends the SSH banner."""
        self.fleet.kill_sshd(self.name)
        started = self.fleet.exec(self.name, f"/usr/local/bin/tarpit {self.host.address} 22 "
                                             "</dev/null >/dev/null 2>&1 & echo $!")
        pid = started.stdout.strip()
        self.host.listener = "tarpit"
        # Ready only when the tarpit itself holds port 22 (not a dying sshd).
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            holders = self.fleet.exec(self.name, "fuser -n tcp 22 2>/dev/null").stdout.split()
            if pid in holders:
                return
            time.sleep(0.01)
        raise SimError(f"{self.name}: tarpit (pid {pid}) is not listening on port 22")

    def black_hole(self):
        """Port 22 neither answers nor refuses: a listener whose accept
        queue is full and never accepted, so the kernel drops new SYNs (a
        host behind a firewall that drops, or a wedged kernel): a connect
        times out."""
        self.fleet.kill_sshd(self.name)
        script = ("import socket,sys,time\n"
                  "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                  "for i in range(1000):\n"
                  "    try: s.bind((sys.argv[1], 22)); break\n"
                  "    except OSError: time.sleep(0.01)\n"
                  "s.listen(0); fill=[]\n"
                  "for i in range(3):\n"
                  "    c=socket.socket(); c.setblocking(False); fill.append(c)\n"
                  "    try: c.connect((sys.argv[1], 22))\n"
                  "    except BlockingIOError: pass\n"
                  "open('/run/fakegpu/black_hole', 'w').close()\n"
                  "while True: time.sleep(3600)\n")
        write_file(os.path.join(self.host.state, "black_hole.py"), script)
        self.fleet.exec(self.name, f"python3 /run/fakegpu/black_hole.py {self.host.address} "
                                   "</dev/null >/dev/null 2>&1 &")
        self.host.listener = "black_hole"
        deadline = time.monotonic() + 15
        while not os.path.exists(os.path.join(self.host.state, "black_hole")):
            if time.monotonic() > deadline:
                raise SimError(f"{self.name}: the black hole is not listening on port 22")
            time.sleep(0.01)

    def sshd_options(self, text):
        """Appends 'text' (sshd_config lines) to the host's sshd_config and
        has sshd re-read it (SIGHUP: it re-executes itself, same PID), as an
        administrator does; returns once it listens again."""
        d = self.host.dir
        with open(f"{d}/etc/sshd_config", "a") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        log = f"{d}/sshd.log"

        def listening():
            try:
                with open(log, errors="replace") as f:
                    return f.read().count("Server listening on")
            except OSError:
                return 0
        before = listening()
        self.fleet.exec(self.name, "kill -HUP $(cat /run/fakegpu/sshd.pid)")
        deadline = time.monotonic() + 15
        while listening() <= before:
            if time.monotonic() > deadline:
                raise SimError(f"{self.name}: sshd did not listen again after SIGHUP")
            time.sleep(0.01)

    def refuse_key(self):
        """The fleet's client key is not authorized for any user."""
        with open(os.path.join(self.fleet.workdir, "keys", "other_ed25519.pub")) as f:
            other = f.read()
        for user in ("root", "gpuops"):
            write_file(os.path.join(self.host.state, "authorized_keys", user), other)

    def change_host_key(self):
        """known_hosts will carry a different key than the host presents."""
        path = os.path.join(self.host.dir, "etc", "old_host_key")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "old",
                        "-f", path], check=True)
        self.host.host_key_override = path + ".pub"

    def kill_sshd_on_nvidia_smi(self, call=2):
        """The 'call'-th nvidia-smi from now kills the host's sshd (listener
        and sessions) before answering: with fleetreap's default playbook,
        call 1 is the first scan and call 2 comes after the kill wave."""
        write_file(os.path.join(self.host.state, "kill_sshd_on_nvsmi"), f"{call}\n")

    def on_apps_query(self, command):
        """The next `nvidia-smi --query-compute-apps` answers, then runs the
        shell 'command' as root inside the host before it exits: the host
        changes between the scan's apps query and its reading of /proc (a
        charged PID reused, say)."""
        write_file(os.path.join(self.host.state, "on_apps_query"), command + "\n")

    def kill_sshd_on_stop(self):
        """The first 'systemctl stop' kills the host's sshd mid-run."""
        write_file(os.path.join(self.host.state, "kill_sshd_on_stop"), "armed\n")
