"""readiness_states: ReadinessMixin, the HostSetup verbs that make a simulated
host empty but not ready (docs/readiness.md): a GPU's readiness fields as the
fake nvidia-smi prints them (remap pending, ECC errors, a PCIe link at x8 of
x16), an NVSwitch system with or without its fabric manager, Xid lines in the
kernel log, and a GPU the driver lists that nvidia-smi does not. Not
thread-safe: one HostSetup per host.

The host's /dev is its own tmpfs (host_init.sh), so the kernel log's
stand-in is a plain /dev/kmsg there, root's and 0600 like a kernel log that
dmesg_restrict keeps from users, in /dev/kmsg's record format
("PRI,SEQ,USEC,FLAGS;TEXT"); the NVSwitch nodes are plain files too.
"""

import os
import shlex

from host_files import write_file

# The fake nvidia-smi's bus ids, by index (host_init.sh, nvidia_smi.c).
BUSES = ["19", "3b", "4c", "5d", "9b", "bb", "cb", "db"]


class ReadinessMixin:
    """Verbs for readiness states (self.fleet, self.host, self.name)."""

    def health(self, gpu, **fields):
        """GPU 'gpu' prints these readiness fields (keyword names with '__'
        for '.': remapped_rows__pending="Yes"); the others keep an idle
        H200's values (nvidia_smi_output.c)."""
        folder = os.path.join(self.host.state, "health")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, str(int(gpu)))
        lines = []
        if os.path.exists(path):
            with open(path) as f:
                lines = f.read().splitlines()
        for key, value in fields.items():
            name = key.replace("__", ".")
            lines = [l for l in lines if not l.startswith(name + " ")] + [f"{name} {value}"]
        write_file(path, "".join(line + "\n" for line in lines))

    def remap_pending(self, gpu, rows=2):
        """GPU 'gpu' has 'rows' uncorrectable rows remapped, pending a reset."""
        self.health(gpu, remapped_rows__uncorrectable=rows, remapped_rows__pending="Yes")

    def ecc_errors(self, gpu, volatile=3, aggregate=3):
        """GPU 'gpu' reads uncorrected ECC errors since the driver loaded."""
        self.health(gpu, ecc__errors__uncorrected__volatile__total=volatile,
                    ecc__errors__uncorrected__aggregate__total=aggregate)

    def pcie_link(self, gpu, width=8, max_width=16):
        """GPU 'gpu''s PCIe link reads x'width' of x'max_width'."""
        self.health(gpu, pcie__link__width__current=width, pcie__link__width__max=max_width)

    def nvswitch(self, switches=4, fabric_manager=True):
        """An NVSwitch system: /dev/nvidia-nvswitch0..N-1 and
        /dev/nvidia-nvswitchctl; with 'fabric_manager' nv-fabricmanager runs
        (root's, in its unit) and every GPU's fabric reads Completed/Success,
        else In Progress/N/A, as on a system whose fabric manager is down."""
        nodes = " ".join(f"/dev/nvidia-nvswitch{i}" for i in range(switches))
        made = self.fleet.exec(self.name, f": > /dev/nvidia-nvswitchctl; for n in {nodes}; "
                                          f"do : > \"$n\"; done")
        if made.returncode != 0:
            raise RuntimeError(f"{self.name}: nvswitch nodes: {made.stderr}")
        state, status = ("Completed", "Success") if fabric_manager else ("In Progress", "N/A")
        for gpu in range(self.gpus):
            self.health(gpu, fabric__state=state, fabric__status=status)
        if fabric_manager:
            return self.daemon("nv-fabricmanager")
        return None

    def kernel_log(self, lines, first_seq=0, readable_by_all=False):
        """/dev/kmsg holds a boot record (sequence 'first_seq'; not 0: the
        ring buffer has wrapped since boot) then 'lines', one record each."""
        records = []
        texts = ["Linux version 6.8.0-sim (root@sim) #1 SMP"] + list(lines)
        for i, text in enumerate(texts):
            seq = first_seq + i
            records.append(f"6,{seq},{1000000 + 1000 * seq},-;{text}")
        body = "".join(r + "\n" for r in records)
        mode = "0644" if readable_by_all else "0600"
        made = self.fleet.exec(self.name, f"printf %s {shlex.quote(body)} > /dev/kmsg && "
                                          f"chown root:root /dev/kmsg && chmod {mode} /dev/kmsg")
        if made.returncode != 0:
            raise RuntimeError(f"{self.name}: kernel log: {made.stderr}")

    def xid(self, gpu, code, text="pid=4242, name=python3, Ch 00000008"):
        """An Xid 'code' line for GPU 'gpu' in the kernel log (after a boot
        record, the log read from boot)."""
        self.kernel_log([f"NVRM: Xid (PCI:0000:{BUSES[gpu]}:00): {code}, {text}"])

    def driver_gpu(self, bus="ec"):
        """The driver lists one GPU more than nvidia-smi prints
        (/proc/driver/nvidia/gpus/0000:BUS:00.0): a GPU that fell off."""
        folder = f"/proc/driver/nvidia/gpus/0000:{bus}:00.0"
        made = self.fleet.exec(
            self.name, f"mkdir -p {folder} && printf 'Model: \\t\\t NVIDIA H200\\n"
                       f"Bus Location: \\t 0000:{bus}:00.0\\nDevice Minor: \\t {self.gpus}\\n' "
                       f"> {folder}/information")
        if made.returncode != 0:
            raise RuntimeError(f"{self.name}: driver GPU: {made.stderr}")
