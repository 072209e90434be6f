#!/usr/bin/env python3
"""The .deb and the .rpm, as a user gets them.

Usage: package_test.py BUILD_DIR (a built tree: CTest passes it).

Makes both packages from the build with CPack (cmake/packaging.cmake, the
same as `cmake --build BUILD_DIR --target package`, into a scratch
directory), unpacks each into a scratch root (dpkg-deb -x, rpm2cpio), and
checks there what is installed: the names Debian and RPM give packages, the
control fields and dependencies, `fleetreap --version` and `--help` run from
the unpacked root, the man pages (`man -l`, groff's warnings, `man fleetreap
merge`, every flag of --help documented), the bash and zsh completion (they
parse and complete), the docs with the JSON schema, and lintian with the
package's own overrides. Needs dpkg-deb, rpmbuild, rpm2cpio, cpio, man,
lintian, zsh (scripts/setup.sh installs them). Runs nothing as a service,
signals nothing.
"""
import fnmatch
import gzip
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAINTAINER = "fleetreap maintainers <fleetreap-maintainers@lists.fleetreap.dev>"


def run(argv, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 300)
    return subprocess.run(argv, **kwargs)


def must(argv, **kwargs):
    proc = run(argv, **kwargs)
    if proc.returncode != 0:
        raise AssertionError("%s exited %d:\n%s%s" % (" ".join(argv), proc.returncode,
                                                     proc.stdout, proc.stderr))
    return proc.stdout


def help_flags(binary, *sub):
    """Every flag of `binary [sub] --help`: its option lines start with two
    spaces and a dash."""
    flags = set()
    for line in must([binary, *sub, "--help"]).splitlines():
        if line.startswith("  -"):
            spec = line[2:].split("  ")[0]
            flags.update(w for w in spec.split() if w.startswith("-"))
    return flags


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [t for t in ("cpack", "dpkg-deb", "rpmbuild", "rpm2cpio", "cpio", "man",
                               "groff", "lintian", "zsh") if shutil.which(t) is None]
        if missing:
            raise AssertionError("missing %s: run scripts/setup.sh" % ", ".join(missing))
        cls.tmp = tempfile.mkdtemp(prefix="fleetreap-package-")
        out = os.path.join(cls.tmp, "out")
        must(["cpack", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B", out],
             timeout=540)
        with open(os.path.join(BUILD, "CPackConfig.cmake")) as f:
            cls.version = re.search(r'set\(CPACK_PACKAGE_VERSION "([^"]+)"\)', f.read()).group(1)
        arch = must(["dpkg", "--print-architecture"]).strip()
        cls.deb_name = "fleetreap_%s_%s.deb" % (cls.version, arch)
        cls.rpm_name = "fleetreap-%s-1.%s.rpm" % (cls.version, platform.machine())
        cls.made = sorted(n for n in os.listdir(out) if n.endswith((".deb", ".rpm")))
        cls.deb = os.path.join(out, cls.deb_name)
        cls.rpm = os.path.join(out, cls.rpm_name)
        cls.root = os.path.join(cls.tmp, "deb-root")
        if os.path.exists(cls.deb):
            must(["dpkg-deb", "-x", cls.deb, cls.root])
        cls.rpm_root = os.path.join(cls.tmp, "rpm-root")
        os.makedirs(cls.rpm_root)
        if os.path.exists(cls.rpm):
            must(["sh", "-c", 'rpm2cpio "$1" | cpio -idm --quiet', "sh", cls.rpm],
                 cwd=cls.rpm_root)
        cls.bin = os.path.join(cls.root, "usr/bin/fleetreap")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, relative):
        return os.path.join(self.root, relative)

    def test_names_follow_debian_and_rpm(self):
        self.assertEqual(self.made, sorted([self.deb_name, self.rpm_name]))

    def test_control_fields(self):
        fields = {}
        for name in ("Package", "Version", "Maintainer", "Depends", "Suggests", "Section",
                     "Priority", "Homepage", "Description"):
            fields[name] = must(["dpkg-deb", "-f", self.deb, name]).strip()
        self.assertEqual(fields["Package"], "fleetreap")
        self.assertEqual(fields["Version"], self.version)
        self.assertEqual(fields["Maintainer"], MAINTAINER)
        self.assertEqual(fields["Section"], "admin")
        self.assertTrue(fields["Homepage"].startswith("https://"), fields["Homepage"])
        depends = [d.strip().split()[0] for d in fields["Depends"].split(",")]
        for package in ("openssh-client", "libssh-4", "libc6", "libstdc++6"):
            self.assertIn(package, depends)
        for prefix in ("libboost-program-options", "libyaml-cpp"):
            self.assertTrue(any(d.startswith(prefix) for d in depends), (prefix, depends))
        self.assertIn("slurm-client", fields["Suggests"])
        self.assertIn("nvidia-smi", fields["Description"])

    def test_version_and_help_run_from_the_unpacked_root(self):
        lines = must([self.bin, "--version"]).splitlines()
        self.assertEqual(lines[0], "fleetreap " + self.version)
        self.assertRegex(lines[1], r"^commit ([0-9a-f]{12}(-dirty)?|unknown)$")
        for library in ("libssh", "yaml-cpp", "nlohmann/json", "spdlog", "Boost"):
            self.assertIn(library + " ", "\n".join(lines[2:]))
        for sub in ((), ("merge",)):
            text = must([self.bin, *sub, "--help"])
            for line in text.splitlines():
                self.assertLessEqual(len(line), 80, line)
            self.assertIn("See fleetreap", text.splitlines()[-1])

    def test_man_pages_render_without_warnings(self):
        env = dict(os.environ, MANWIDTH="80", MAN_DISABLE_SECCOMP="1", LC_ALL="C.UTF-8")
        for page, name in (("fleetreap.1.gz", "fleetreap"),
                           ("fleetreap-merge.1.gz", "fleetreap-merge")):
            path = self.path("usr/share/man/man1/" + page)
            proc = run(["man", "--warnings", "-l", path], env=env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(proc.stderr, "", page)
            self.assertRegex(proc.stdout, r"NAME\n\s+%s\s+-\s" % re.escape(name))
            with gzip.open(path, "rt") as f:
                source = f.read()
            self.assertIn('"fleetreap %s"' % self.version, source.split(".TH", 1)[1].split("\n")[0],
                          "the .TH line of %s names another version" % page)
            with open(os.path.join(SOURCE, "docs/man", page[:-3])) as f:
                self.assertEqual(source, f.read(), page)
        # `man fleetreap merge` finds fleetreap-merge(1), as `man git commit` does.
        proc = run(["man", "-M", self.path("usr/share/man"), "fleetreap", "merge"], env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"fleetreap-merge\s+-\s+join")

    def test_man_pages_document_every_flag(self):
        for sub, page in (((), "fleetreap.1"), (("merge",), "fleetreap-merge.1")):
            with open(os.path.join(SOURCE, "docs/man", page)) as f:
                text = f.read().replace("\\-", "-")
            missing = [flag for flag in sorted(help_flags(self.bin, *sub))
                       if not re.search(r"(?m)^\.(TP|B|BI|BR)\b.*%s\b" % re.escape(flag), text)]
            self.assertFalse(missing, "in `%s --help` but not in docs/man/%s: %s (add a .TP entry"
                             " in the flag's group)" % (" ".join(("fleetreap",) + sub), page,
                                                         " ".join(missing)))

    def bash_complete(self, *words):
        script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fleetreap; '
                  'printf "%s\\n" "${COMPREPLY[@]}"')
        return must(["bash", "-c", script, "bash",
                     self.path("usr/share/bash-completion/completions/fleetreap"), self.bin,
                     *words]).split()

    def test_bash_completion(self):
        path = self.path("usr/share/bash-completion/completions/fleetreap")
        must(["bash", "-n", path])
        self.assertEqual(self.bash_complete("--connect-t"), ["--connect-timeout"])
        self.assertEqual(self.bash_complete("--color", ""), ["auto", "always", "never"])
        self.assertEqual(self.bash_complete("--host-key-policy", "a"), ["accept-new"])
        self.assertEqual(self.bash_complete("me"), ["merge"])
        self.assertEqual(self.bash_complete("merge", "--exp"), ["--expect"])
        self.assertIn("--list-hosts", self.bash_complete("--li"))
        self.assertEqual(self.bash_complete("--forks", ""), [])
        self.assertEqual(self.bash_complete("-f", "8", "--q"), ["--quiet"])
        flags = set(self.bash_complete("-"))
        self.assertEqual(flags, help_flags(self.bin))
        # --limit: the host names of --hosts' inventory (--list-hosts).
        inventory = os.path.join(SOURCE, "inventory/fleet.yaml")
        self.assertEqual(self.bash_complete("--hosts", inventory, "--limit", "gpu-b1-0"),
                         ["gpu-b1-%02d" % i for i in range(1, 9)])
        self.assertEqual(self.bash_complete("--limit", "gpu"), [])

    def test_zsh_completion(self):
        path = self.path("usr/share/zsh/vendor-completions/_fleetreap")
        must(["zsh", "-n", path])
        with open(path) as f:
            self.assertEqual(f.readline(), "#compdef fleetreap\n")
        # _arguments stubbed: the specs the completion builds from --help.
        script = ('_arguments() { print -rl -- "$@"; }; _message() { :; }; '
                  'words=("$2" "$3"); CURRENT=2; source "$1"')
        specs = must(["zsh", "-f", "-c", script, "zsh", path, self.bin, "--"]).splitlines()
        hosts = [s for s in specs if s.startswith("(-i --hosts)--hosts[Ansible inventory")]
        self.assertEqual(len(hosts), 1, specs)
        self.assertTrue(hosts[0].endswith(
            ':_alternative "files:inventory:_files" "slurm:partition:(slurm\\:)"'), hosts)
        self.assertTrue(any(s.startswith("(--color)--color[") and s.endswith(":when:(auto always never)")
                            for s in specs), specs)
        self.assertTrue(any(s.startswith("*-v[") for s in specs), specs)
        self.assertIn("(-f --forks)--forks[hosts in flight at once]:n:_message n", specs)
        flags = {re.sub(r"^(\([^)]*\)|\*)", "", s).split("[")[0] for s in specs if "[" in s}
        self.assertEqual(flags, help_flags(self.bin))
        # --limit: the host names of --hosts' inventory (--list-hosts).
        hosts = ('_arguments() { :; }; compset() { return 1; }; '
                 'compadd() { print -rl -- ${(P)2}; }; _message() { print -r -- "$@"; }; '
                 'words=("$2" --hosts "$3" --limit gpu); CURRENT=5; source "$1"; _fleetreap_hosts')
        inventory = os.path.join(SOURCE, "inventory/fleet.yaml")
        names = must(["zsh", "-f", "-c", hosts, "zsh", path, self.bin, inventory]).split()
        listed = must([self.bin, "--hosts", inventory, "--list-hosts"]).splitlines()
        self.assertEqual(names, [line.split()[0] for line in listed])
        merge = must(["zsh", "-f", "-c", script.replace("words=(\"$2\" \"$3\"); CURRENT=2",
                                                        "words=(\"$2\" merge \"$3\"); CURRENT=3"),
                      "zsh", path, self.bin, "--"]).splitlines()
        self.assertTrue(any(s.startswith("(--expect)--expect[") for s in merge), merge)
        self.assertIn('*:report:_files -g "*.json(-.)"', merge)

    def test_contents(self):
        for relative in ("usr/bin/fleetreap",
                         "usr/libexec/fleetreap/fleetreap-epilog",
                         "usr/libexec/fleetreap/fleetreap-prolog",
                         "usr/libexec/fleetreap/fleetreap-sweep.sbatch",
                         "usr/libexec/fleetreap/fleetreap-drain",
                         "usr/share/fleetreap/contrib/ci/fleetreap-gate.sh"):
            self.assertTrue(os.access(self.path(relative), os.X_OK), relative)
        for name in os.listdir(os.path.join(SOURCE, "playbooks")):
            self.assertTrue(os.path.isfile(self.path("usr/share/fleetreap/playbooks/" + name)))
        for relative in ("usr/share/fleetreap/inventory/fleet.yaml",
                         "usr/share/fleetreap/contrib/k8s/fleetreap-daemonset.yaml",
                         "usr/share/fleetreap/contrib/k8s/Dockerfile",
                         "usr/share/fleetreap/contrib/k8s/fleetreap-sweep-daemonset.yaml",
                         "usr/share/fleetreap/contrib/systemd/fleetreap-sweep.service",
                         "usr/share/fleetreap/contrib/systemd/fleetreap-sweep.timer",
                         "usr/share/doc/fleetreap/README.md",
                         "usr/share/doc/fleetreap/report.md",
                         "usr/share/doc/fleetreap/copyright",
                         "usr/share/doc/fleetreap/changelog.gz",
                         "usr/share/lintian/overrides/fleetreap"):
            self.assertTrue(os.path.isfile(self.path(relative)), relative)
        with open(self.path("usr/share/doc/fleetreap/json-schema.json")) as f:
            schema = json.load(f)
        with open(os.path.join(SOURCE, "docs/json-schema.json")) as f:
            self.assertEqual(schema, json.load(f))
        with gzip.open(self.path("usr/share/doc/fleetreap/changelog.gz"), "rt") as f:
            self.assertTrue(f.readline().startswith("fleetreap (%s) " % self.version),
                            "cmake/packaging/changelog: add an entry for %s" % self.version)
        self.assertFalse(os.path.exists(self.path("usr/share/doc/fleetreap/man")))

    def test_lintian(self):
        proc = run(["lintian", "--fail-on", "error,warning", "--display-info", "--tag-display-limit",
                    "0", self.deb], timeout=540)
        lines = proc.stdout.splitlines()
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual([l for l in lines if re.match(r"^[EW]: ", l)], [], proc.stdout)
        # An override that no longer matches is harmless (lintian says so at
        # info level): shown here, for whoever edits cmake/packaging/.
        for line in lines:
            if "unused-override" in line or "mismatched-override" in line:
                print("package_test: stale lintian override: " + line, file=sys.stderr)

    def test_rpm(self):
        query = must(["rpm", "-qp", "--qf", "%{NAME} %{VERSION} %{RELEASE} %{URL}\\n", self.rpm])
        self.assertEqual(query.split()[:3], ["fleetreap", self.version, "1"])
        requires = must(["rpm", "-qp", "--requires", self.rpm]).splitlines()
        self.assertIn("openssh-clients", requires)
        self.assertTrue(any(r.startswith("libssh.so.4") for r in requires), requires)
        deb_files = {os.path.relpath(os.path.join(d, f), self.root)
                     for d, _, files in os.walk(self.root) for f in files}
        # rpmbuild adds usr/lib/.build-id/ links to the binary (for debuginfo).
        rpm_files = {os.path.relpath(os.path.join(d, f), self.rpm_root)
                     for d, _, files in os.walk(self.rpm_root) for f in files
                     if ".build-id" not in d}
        # The same files, but zsh's completion where RHEL's zsh looks and
        # no lintian overrides.
        expected = (deb_files - {"usr/share/lintian/overrides/fleetreap",
                                 "usr/share/zsh/vendor-completions/_fleetreap"}) | {
                                     "usr/share/zsh/site-functions/_fleetreap"}
        self.assertEqual(rpm_files, expected)
        version = must([os.path.join(self.rpm_root, "usr/bin/fleetreap"), "--version"])
        self.assertEqual(version.splitlines()[0], "fleetreap " + self.version)

    def test_commit_is_unknown_outside_a_checkout(self):
        # A release tarball, unpacked alone or inside another repository
        # (here: the build tree, inside this checkout).
        script = os.path.join(SOURCE, "cmake/git_commit.cmake")
        for parent in (self.tmp, BUILD):
            tree = tempfile.mkdtemp(prefix="tarball-", dir=parent)
            output = os.path.join(tree, "git_commit.cc")
            must(["cmake", "-DSOURCE_DIR=" + tree, "-DOUTPUT=" + output, "-P", script])
            with open(output) as f:
                self.assertIn('kGitCommit[] = "unknown";', f.read())
            shutil.rmtree(tree)

    def test_dockerfile_copies_the_real_package_name(self):
        with open(os.path.join(SOURCE, "contrib/k8s/Dockerfile")) as f:
            dockerfile = f.read()
        copy = re.search(r"^COPY (\S+) ", dockerfile, re.M).group(1)
        self.assertTrue(fnmatch.fnmatch(self.deb_name, copy), (copy, self.deb_name))
        self.assertIn("apt-get install -y --no-install-recommends /tmp/%s" % copy, dockerfile)


if __name__ == "__main__":
    unittest.main(verbosity=2)
