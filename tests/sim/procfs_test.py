"""The walks of /proc that the simulated fleet, the integration tests and the
benchmarks make tolerate processes and files vanishing under them (once a
FileNotFoundError '/proc/5159/task' in the PID budget check).

Two ways: a fake /proc tree whose entries are removed between the listing
and the reads (a process that exits in between), or whose reads fail with
ESRCH (a process that exits between open and read); and the real /proc,
walked over and over while short-lived children come and go. Needs no root.
"""

import builtins
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from types import SimpleNamespace
from unittest import mock

import ground_truth
import procfs
import reaper
import simfleet

HOST_NS = "pid:[4026532001]"
OTHER_NS = "pid:[4026531836]"


class FakeProc:
    """A /proc-like tree: PID/{status,stat,cmdline,environ,cgroup}, PID/task/TID,
    PID/fd/N, PID/exe and PID/ns/pid (symlinks whose text is all that counts)."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="fakeproc-")
        os.mkdir(os.path.join(self.root, "self"))   # not a PID: never listed

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def add(self, pid, ns=HOST_NS, inner=None, threads=1, cmdline=b"gpuload\0",
            fds=("/dev/null",)):
        d = os.path.join(self.root, str(pid))
        for sub in ("task", "fd", "ns"):
            os.makedirs(os.path.join(d, sub))
        files = {
            "status": f"Name:\tgpuload\nState:\tS (sleeping)\nPPid:\t1\nUid:\t0\t0\t0\t0\n"
                      f"Threads:\t{threads}\nNSpid:\t{pid}\t{inner or pid}\n",
            "stat": f"{pid} (gpu load) S 1 {pid} {pid} 0 -1 0 0 0 0 0 1 2 3 4 20 0 "
                    f"{threads} 0 {1000 + pid} 0 0\n",
            "cgroup": "0::/system.slice/job.service\n",
        }
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        for name, data in (("cmdline", cmdline), ("environ", b"FAKEGPU_MIB=512\0")):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        for t in range(threads):
            os.mkdir(os.path.join(d, "task", str(pid + t)))
        for n, target in enumerate(fds):
            os.symlink(target, os.path.join(d, "fd", str(n)))
        os.symlink("/usr/local/bin/gpuload", os.path.join(d, "exe"))
        os.symlink(ns, os.path.join(d, "ns", "pid"))

    def remove(self, pid):
        shutil.rmtree(os.path.join(self.root, str(pid)))


class Vanishing:
    """While active, listing the fake root returns every PID and then removes
    'gone' from the tree: those processes exit between listdir and open."""

    def __init__(self, fake, gone):
        self.fake, self.gone, self.listings = fake, set(gone), 0
        self.patch = mock.patch.object(procfs.os, "listdir", self.listdir)
        self.real = os.listdir

    def listdir(self, path):
        names = self.real(path)
        if os.path.abspath(path) == self.fake.root:
            self.listings += 1
            for pid in sorted(self.gone):
                self.fake.remove(pid)
            self.gone.clear()
        return names

    def __enter__(self):
        self.patch.start()
        return self

    def __exit__(self, *exc):
        self.patch.stop()


class Esrch:
    """While active, reading a file of the PIDs in 'dying' fails with ESRCH
    (ProcessLookupError), as /proc does when a process exits between open and
    read."""

    def __init__(self, fake, dying):
        prefixes = tuple(os.path.join(fake.root, str(p)) + os.sep for p in dying)
        real_open = builtins.open

        def fake_open(path, *args, **kwargs):
            f = real_open(path, *args, **kwargs)
            return _DyingFile(f) if str(path).startswith(prefixes) else f
        self.patch = mock.patch.object(builtins, "open", fake_open)

    def __enter__(self):
        self.patch.start()
        return self

    def __exit__(self, *exc):
        self.patch.stop()


class _DyingFile:
    """An open file of a process that has just exited."""

    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def read(self, *args):
        raise ProcessLookupError(3, "No such process")


class FakeTreeTest(unittest.TestCase):
    def setUp(self):
        self.fake = FakeProc()
        self.addCleanup(self.fake.close)
        proc_patch = mock.patch.object(procfs, "PROC", self.fake.root)
        proc_patch.start()
        self.addCleanup(proc_patch.stop)
        self.fake.add(100, threads=3)                                  # the host's init
        self.fake.add(101, inner=2, fds=("/dev/nvidia0", "/dev/nvidiactl"))
        self.fake.add(102, inner=3, fds=("/dev/nvidia1",))
        self.fake.add(103, inner=4, threads=2)
        self.fake.add(200, ns=OTHER_NS, threads=5)                     # not the host's

    def host_fleet(self):
        host = SimpleNamespace(name="gpu01", init_pid=100)
        return SimpleNamespace(hosts={"gpu01": host})

    def test_reads_of_a_gone_process_give_none(self):
        self.fake.remove(102)
        self.assertIsNone(procfs.read_proc_file(102, "status"))
        self.assertIsNone(procfs.read_proc_file(102, "cmdline", binary=True))
        self.assertIsNone(procfs.read_proc_link(102, "exe"))
        self.assertIsNone(procfs.stat_fields(102))
        self.assertIsNone(procfs.status_fields(102))
        self.assertIsNone(procfs.start_time(102))
        self.assertEqual(procfs.list_proc_dir(102, "task"), [])
        self.assertEqual(procfs.list_proc_dir(102, "fd"), [])
        self.assertIsNone(ground_truth._process(102))

    def test_a_pid_that_became_a_file_reads_as_gone(self):   # ENOTDIR
        self.fake.remove(103)
        with open(os.path.join(self.fake.root, "103"), "w") as f:
            f.write("x")
        self.assertIsNone(procfs.read_proc_file(103, "status"))
        self.assertEqual(procfs.list_proc_dir(103, "task"), [])
        self.assertIsNone(procfs.read_proc_link(103, "ns/pid"))

    def test_an_empty_cmdline_and_a_task_dir_gone(self):
        with open(os.path.join(self.fake.root, "101", "cmdline"), "wb"):
            pass                                          # a zombie's, or a kernel thread's
        shutil.rmtree(os.path.join(self.fake.root, "103", "task"))
        self.assertEqual(procfs.read_proc_file(101, "cmdline", binary=True), b"")
        self.assertEqual(ground_truth._process(101)["name"], "")
        self.assertEqual(procfs.task_count(), 3 + 1 + 1 + 0 + 5)

    def test_fields(self):
        self.assertEqual(procfs.list_pids(), [100, 101, 102, 103, 200])
        self.assertEqual(procfs.stat_fields(101)[:2], ["S", "1"])   # "(gpu load)" is one name
        self.assertEqual(procfs.start_time(101), 1101)
        self.assertEqual(procfs.status_fields(101)["NSpid"], "101\t2")

    def test_other_errors_still_raise(self):
        with self.assertRaises(IsADirectoryError):
            procfs.read_proc_file(101, "task")

    def test_a_process_we_may_not_inspect_is_left_out(self):   # EACCES
        with mock.patch.object(builtins, "open", side_effect=PermissionError(13, "denied")):
            self.assertIsNone(procfs.read_proc_file(103, "status"))

    def test_the_pid_budget_survives_processes_exiting_under_it(self):
        # The reported failure: /proc listed, then 102 and 103 exited before
        # their task folders were read.
        with Vanishing(self.fake, {102}) as v:
            simfleet._check_pid_budget([simfleet.HostSpec("gpu01", shape="simple")])
        self.assertEqual(v.listings, 1)
        with Vanishing(self.fake, {103}):
            self.assertEqual(procfs.task_count(), 3 + 1 + 5)

    def test_ground_truth_leaves_out_processes_that_exit_during_the_walk(self):
        with Vanishing(self.fake, {101}):
            procs = ground_truth.processes_by_host(self.host_fleet())["gpu01"]
        self.assertEqual(sorted(p["pid"] for p in procs), [3, 4, 100])
        by_pid = {p["pid"]: p for p in procs}
        self.assertEqual(by_pid[3]["gpus"], [1])
        self.assertEqual(by_pid[3]["mib"], 512)

    def test_esrch_between_open_and_read(self):
        with Esrch(self.fake, {102, 103}):
            self.assertIsNone(procfs.read_proc_file(102, "status"))
            self.assertIsNone(procfs.stat_fields(103))
            procs = ground_truth.processes_by_host(self.host_fleet())["gpu01"]
            self.assertEqual(sorted(p["pid"] for p in procs), [2, 100])

    def test_waiting_for_a_gone_pid_returns_at_once(self):
        self.fake.remove(103)
        start = time.monotonic()
        reaper.wait_gone([103], timeout=5)
        self.assertLess(time.monotonic() - start, 1)

    def test_fleet_files_removed_under_a_walk(self):
        d = tempfile.mkdtemp(prefix="fleetfiles-")
        self.addCleanup(shutil.rmtree, d, True)
        self.assertEqual(procfs.list_dir(os.path.join(d, "gone")), [])
        self.assertIsNone(procfs.read_file(os.path.join(d, "gone", "owner")))
        open(os.path.join(d, "f"), "w").close()
        self.assertEqual(procfs.list_dir(os.path.join(d, "f")), [])   # ENOTDIR


class RealProcTest(unittest.TestCase):
    """The real /proc, walked while a thread keeps starting and reaping
    short-lived children (each exits within about a millisecond)."""

    def test_walks_while_children_come_and_go(self):
        stop = threading.Event()
        spawned = [0]

        def churn():
            while not stop.is_set():
                subprocess.run(["true"], check=False)
                spawned[0] += 1
        thread = threading.Thread(target=churn, daemon=True)
        thread.start()
        walks, seen, deadline = 0, 0, time.monotonic() + 3
        try:
            while time.monotonic() < deadline:
                self.assertGreater(procfs.task_count(), 0)
                for pid in procfs.list_pids():
                    procfs.stat_fields(pid)
                    procfs.read_proc_link(pid, "ns/pid")
                    seen += ground_truth._process(pid) is not None
                walks += 1
        finally:
            stop.set()
            thread.join()
        print(f"procfs: {walks} walks of /proc ({seen} process reads) while "
              f"{spawned[0]} children came and went")
        self.assertGreater(walks, 0)
        self.assertGreater(spawned[0], 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
