"""Table-driven checks of the fake nvidia-smi against the real captures in
tests/testdata/nvsmi (headers, units, separators, error texts, exit
codes); a capture that is missing fails the test, never passes it. Runs the built binary in a private PID namespace, with FAKEGPU_STATE
pointing at a scratch state directory; no process holds a /dev/nvidia* there,
so memory comes only from the "leaked" files. Needs root (unshare).
"""

import os
import re
import subprocess
import tempfile
import unittest

BIN = os.path.join(os.environ.get("FLEETREAP_SIM_BIN_DIR", ""), "nvidia-smi")
SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "nvsmi")


def sample(name):
    """The capture "name" of tests/testdata/nvsmi; a missing one is an
    error (open raises), so no check passes without its sample."""
    with open(os.path.join(SAMPLES, name)) as f:
        return f.read()


class FakeNvidiaSmiTest(unittest.TestCase):
    def setUp(self):
        self.state = tempfile.mkdtemp(prefix="fakegpu-")
        os.makedirs(os.path.join(self.state, "leaked"))
        for name, value in (("gpus", "8"), ("mode", "normal"), ("seed", "gpu01")):
            self.put(name, value)

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.state], check=True)

    def put(self, name, value):
        with open(os.path.join(self.state, name), "w") as f:
            f.write(value + "\n")

    def run_smi(self, *args):
        # A private PID namespace: processes of fleets running right now on
        # this machine must not count as holders here.
        return subprocess.run(["unshare", "--pid", "--fork", "--mount", "--mount-proc",
                               BIN, *args], capture_output=True, text=True,
                              env={"FAKEGPU_STATE": self.state}, timeout=10)

    def test_query_gpu_shapes(self):
        self.put("leaked/2", "10151")
        cases = [  # (format, expected first two lines)
            ("csv", ["index, memory.used [MiB]", "0, 0 MiB"]),
            ("csv,noheader", ["0, 0 MiB", "1, 0 MiB"]),
            ("csv,nounits", ["index, memory.used [MiB]", "0, 0"]),
            ("csv,noheader,nounits", ["0, 0", "1, 0"]),
        ]
        for fmt, first in cases:
            with self.subTest(fmt=fmt):
                r = self.run_smi("--query-gpu=index,memory.used", f"--format={fmt}")
                self.assertEqual(r.returncode, 0)
                self.assertEqual(r.stdout.splitlines()[:2], first)
                self.assertTrue(r.stdout.endswith("\n"))
                self.assertIn("2, 10151", r.stdout)

    def test_field_names_and_values_look_real(self):
        r = self.run_smi("--query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.used",
                         "--format=csv")
        header, row = r.stdout.splitlines()[:2]
        self.assertEqual(header, "index, uuid, name, pci.bus_id, memory.total [MiB], "
                                 "memory.used [MiB]")
        self.assertRegex(row, r"^0, GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                              r"[0-9a-f]{12}, NVIDIA H200, 00000000:19:00\.0, 143771 MiB, 0 MiB$")
        # gpu_name is reported under the header "name", as in sample 09.
        r = self.run_smi("--query-gpu=gpu_name", "--format=csv")
        self.assertEqual(r.stdout.splitlines()[0], "name")

    def test_compute_apps_header_matches_capture(self):
        r = self.run_smi("--query-compute-apps=timestamp,gpu_name,gpu_bus_id,gpu_serial,"
                         "gpu_uuid,pid,process_name,used_gpu_memory", "--format=csv")
        expected = sample("04-h200-compute-apps-idle-header-only.txt")
        self.assertEqual(r.stdout, expected)
        r = self.run_smi("--query-compute-apps=pid,used_memory", "--format=csv,noheader")
        self.assertEqual(r.stdout, "")

    def test_driver_missing(self):
        self.put("mode", "missing")
        r = self.run_smi("--query-gpu=index,memory.used", "--format=csv,noheader")
        self.assertEqual(r.returncode, 9)
        self.assertEqual(r.stdout, sample("12-error-failed-to-communicate-with-driver.txt"))

    def test_lost_gpu(self):
        self.put("mode", "lost:6")
        r = self.run_smi("--query-gpu=index,memory.used", "--format=csv,noheader")
        self.assertEqual(r.returncode, 15)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^Unable to determine the device handle for GPU "
                                   r"0000:[0-9A-F]{2}:00\.0: GPU is lost\. Reboot the system "
                                   r"to recover this GPU$")
        self.assertEqual(len(lines), 8)
        self.assertNotIn("6, ", r.stdout)

    def test_lost_gpu_error_only(self):
        self.put("mode", "lost-only:6")
        r = self.run_smi("--query-gpu=index,memory.used", "--format=csv,noheader")
        self.assertEqual(r.returncode, 15)
        self.assertEqual(len(r.stdout.splitlines()), 1)
        self.assertIn("GPU is lost", r.stdout)

    def test_reset_clears_leaked_memory(self):
        self.put("leaked/2", "10151")
        r = self.run_smi("--gpu-reset", "-i", "2")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, "GPU 00000000:4C:00.0 was successfully reset.\nAll done.\n")
        shape = sample("26-reset-success.txt")
        self.assertEqual(re.sub(r"[0-9A-F]{8}:[0-9A-F]{2}", "X", r.stdout),
                         re.sub(r"[0-9A-F]{8}:[0-9A-F]{2}", "X", shape))
        r = self.run_smi("--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "2")
        self.assertEqual(r.stdout, "0\n")

    def test_bad_field(self):
        r = self.run_smi("--query-gpu=index,bogus", "--format=csv")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, 'Field "bogus" is not a valid field to query.\n\n')

    def test_list_gpus(self):
        r = self.run_smi("-L")
        self.assertEqual(len(r.stdout.splitlines()), 8)
        self.assertRegex(r.stdout.splitlines()[0], r"^GPU 0: NVIDIA H200 \(UUID: GPU-[0-9a-f-]+\)$")

    def test_a_missing_sample_fails(self):
        with self.assertRaises(FileNotFoundError):
            sample("no-such-capture.txt")

    def test_default_table(self):
        # Against the real table of driver 580.159.04 on an H200 (one GPU
        # there, eight here): the same frame and headers, byte for byte.
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "testdata", "device-h200", "table-idle.txt")) as f:
            real = f.read().splitlines()
        r = self.run_smi()
        self.assertEqual(r.returncode, 0)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}       $")
        self.assertEqual(lines[1:8], real[1:8])              # banner and column heads
        self.assertEqual(lines[-7:], real[-7:])              # no processes
        gpu_rows = lines[8:-8]
        self.assertEqual(len(gpu_rows), 8 * 4)
        # Numbers are right-aligned in their columns: compare with each
        # number and the padding before it folded into one "N".
        shape = re.compile(r" *(?:[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.0|\d+)")
        self.assertEqual({len(line) for line in lines[1:] if line}, {91})
        for k in range(8):
            for got, want in zip(gpu_rows[4 * k:4 * k + 4], real[8:12]):
                self.assertEqual(shape.sub("N", got), shape.sub("N", want))


if __name__ == "__main__":
    unittest.main(verbosity=2)
