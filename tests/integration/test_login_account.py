"""The login account cannot rewrite the answer: each host is reached as
gpuops with sudo (become), whose shell and dotfiles the test sets up inside
the host (as root, through Fleet.exec and the host's own /etc/passwd and
/home), never on this machine.

- ~/.bashrc functions and aliases named timeout and sudo, functions named
  /usr/bin/timeout and exec, an alias named exec and a PATH whose first
  directory holds a fake timeout are never run: the command goes out by
  absolute paths, through a quoted exec after `unset -f exec`, with a clean
  environment for the root script, and the host is cleaned;
- a ~/.bashrc that prints to stdout fails the host with a "login shell:"
  reason instead of being read as the host's answer;
- a login shell that rewrites backslashes inside single quotes (as fish
  does) and one that refuses a quoted newline (as csh and tcsh do) fail the
  host with a "login shell:" reason; both are small stand-ins that do only
  that (neither fish nor csh is installed here);
- in become mode the remote bound ends the root script: with a systemctl
  that hangs, the step times out and no process of it is left on the host.
stdlib unittest only; FLEETREAP_BIN names the binary.
"""

import os
import time
import unittest

from fleet_case import FleetCase, by_name, run_json
from simfleet import HostSpec

SHADOWS = r"""
timeout() { : > /home/gpuops/fr-intercepted-timeout; command timeout "$@"; }
sudo() { : > /home/gpuops/fr-intercepted-sudo; command sudo "$@"; }
function /usr/bin/timeout { : > /home/gpuops/fr-intercepted-abs; command /usr/bin/timeout "$@"; }
exec() { : > /home/gpuops/fr-intercepted-exec; builtin exec "$@"; }
shopt -s expand_aliases
alias exec='exec /home/gpuops/bin/timeout'
alias timeout='/home/gpuops/bin/timeout'
export PATH=/home/gpuops/bin:$PATH
"""

FAKE_TIMEOUT = """#!/bin/sh
: > /home/gpuops/fr-intercepted-path
exec /usr/bin/timeout "$@"
"""

# fish keeps single-quoted text but for \\ and \' (fish's manual, "Quotes").
FISH_LIKE = r"""#!/bin/sh
exec /bin/sh -c "$(printf '%s' "$2" | sed 's/\\\\/\\/g')"
"""

# csh and tcsh: "Unmatched '." for a newline inside single quotes.
CSH_LIKE = """#!/bin/sh
case $2 in *'
'*) echo "Unmatched '''." >&2; exit 1 ;;
esac
"""

HANG = "#!/bin/sh\nexec sleep 1000\n"


class LoginAccountTest(FleetCase):
    PREFIX = "fleetreap-login-"
    SPECS = [HostSpec("shadow01", scenario="vllm_incident", user="gpuops", bystanders=10),
             HostSpec("noisy02", user="gpuops", bystanders=10),
             HostSpec("fish03", user="gpuops", bystanders=10),
             HostSpec("csh04", user="gpuops", bystanders=10),
             HostSpec("hang05", scenario="vllm_incident", user="gpuops", bystanders=10)]

    def write(self, host, path, text, mode=0o644, uid=1000):
        """Writes 'text' at 'path' of 'host' (under /home or /run/fakegpu,
        which the host bind-mounts from its directory) with 'mode' and owner."""
        sim = self.fleet.hosts[host]
        for inside, outside in (("/home/", os.path.join(sim.dir, "home") + "/"),
                                ("/run/fakegpu/", sim.state + "/")):
            if path.startswith(inside):
                real = outside + path[len(inside):]
                break
        else:
            raise ValueError(path)
        if not os.path.isdir(os.path.dirname(real)):
            os.makedirs(os.path.dirname(real))
            os.chown(os.path.dirname(real), uid, uid)
        with open(real, "w") as f:
            f.write(text)
        os.chmod(real, mode)
        os.chown(real, uid, uid)

    def login_shell(self, host, shell):
        """Makes 'shell' gpuops's login shell in the host's /etc/passwd."""
        path = os.path.join(self.fleet.hosts[host].dir, "etc", "passwd")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:   # in place: the host bind-mounts this file
            f.write(text.replace("/home/gpuops:/bin/bash", f"/home/gpuops:{shell}"))

    def run_on(self, host, playbook="default.yaml", command_timeout="8s"):
        code, report = run_json(self.fleet, "--limit", host, playbook=playbook,
                                command_timeout=command_timeout)
        return code, by_name(report)[host]

    def exists(self, host, path):
        return self.fleet.exec(host, f"test -e {path}").returncode == 0

    def test_dotfiles_cannot_shadow_the_command(self):
        for name, text in ((".bashrc", SHADOWS), ("bin/timeout", FAKE_TIMEOUT)):
            self.write("shadow01", f"/home/gpuops/{name}", text, mode=0o755)
        code, host = self.run_on("shadow01")
        for marker in ("timeout", "sudo", "abs", "exec", "path"):
            self.assertFalse(self.exists("shadow01", f"/home/gpuops/fr-intercepted-{marker}"),
                             marker)
        self.assertEqual((code, host["status"], host["outcome"]), (0, "clean", "cleaned"),
                         host.get("error_message"))
        self.assertEqual(self.fleet.ground_truth()["shadow01"]["gpu_processes"], [])

    def test_a_dotfile_that_prints_fails_the_host(self):
        self.write("noisy02", "/home/gpuops/.bashrc", 'echo "Welcome to noisy02"\n')
        code, host = self.run_on("noisy02", playbook="inspect.yaml")
        self.assertEqual((code & 2, host["status"], host["error_kind"]),
                         (2, "failed", "command_failed"))
        self.assertIn("login shell: 19 bytes came before the command's output",
                      host["error_message"])

    def test_a_shell_that_rewrites_backslashes_fails_the_host(self):
        self.write("fish03", "/run/fakegpu/fishlike", FISH_LIKE, mode=0o755, uid=0)
        self.login_shell("fish03", "/run/fakegpu/fishlike")
        code, host = self.run_on("fish03", playbook="inspect.yaml")
        self.assertEqual((code & 2, host["status"]), (2, "failed"))
        self.assertIn("login shell: the command's quoting came back changed",
                      host["error_message"])

    def test_a_shell_that_refuses_quoted_newlines_fails_the_host(self):
        self.write("csh04", "/run/fakegpu/cshlike", CSH_LIKE, mode=0o755, uid=0)
        self.login_shell("csh04", "/run/fakegpu/cshlike")
        code, host = self.run_on("csh04", playbook="inspect.yaml")
        self.assertEqual((code & 2, host["status"]), (2, "failed"))
        self.assertIn("login shell: the command did not start", host["error_message"])
        self.assertIn("Unmatched", host["error_message"])

    def test_the_remote_bound_ends_a_hung_root_script(self):
        # systemctl (the sim's, on /usr/local/sbin) hangs for this host only.
        self.write("hang05", "/run/fakegpu/hang-systemctl", HANG, mode=0o755, uid=0)
        mounted = self.fleet.exec("hang05", "mount --bind /run/fakegpu/hang-systemctl "
                                            "/usr/local/sbin/systemctl")
        self.assertEqual(mounted.returncode, 0, mounted.stderr)
        try:
            code, host = self.run_on("hang05", playbook="vllm.yaml", command_timeout="3s")
            self.assertEqual((host["status"], host["error_kind"]), ("failed", "command_timeout"))
            # timeout's KILL follows 1-2 s after its TERM; then nothing is left.
            deadline = time.monotonic() + 10
            while True:
                left = self.fleet.exec(
                    "hang05", "grep -l -a -x 'sleep.1000.' /proc/[0-9]*/cmdline 2>/dev/null")
                if not left.stdout.strip() or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            self.assertEqual(left.stdout.strip(), "", "the root script outlived its bound")
        finally:
            self.fleet.exec("hang05", "umount /usr/local/sbin/systemctl")


if __name__ == "__main__":
    unittest.main(verbosity=2)
