"""readiness_scenarios: hosts that are empty but not ready (docs/readiness.md),
each with one reason, staged with readiness_states.py's verbs. Registered
with @scenario; scenarios.py imports this module. Every host runs
nvidia-persistenced, as a healthy idle host does; the one with an idle
workload also shows a dirty host's findings beside its dirt.
"""

from scenario_registry import scenario


@scenario
def ready_remap_pending(h):
    """GPU 3: 2 uncorrectable rows remapped, pending a GPU reset."""
    h.daemon("nvidia-persistenced")
    h.remap_pending(3, rows=2)


@scenario
def ready_ecc_errors(h):
    """GPU 1: 3 uncorrected ECC errors since the driver loaded."""
    h.daemon("nvidia-persistenced")
    h.ecc_errors(1, volatile=3, aggregate=3)


@scenario
def ready_fabric_manager_down(h):
    """An NVSwitch system (4 switches) whose fabric manager is not running:
    every GPU's fabric reads In Progress."""
    h.daemon("nvidia-persistenced")
    h.nvswitch(4, fabric_manager=False)


@scenario
def ready_nvswitch_ok(h):
    """An NVSwitch system whose fabric manager runs: ready."""
    h.daemon("nvidia-persistenced")
    h.nvswitch(4, fabric_manager=True)


@scenario
def ready_xid_79(h):
    """Xid 79 on GPU 5 in the kernel log since boot (the GPU fell off the bus
    and came back): a fatal Xid."""
    h.daemon("nvidia-persistenced")
    h.xid(5, 79, "pid=4242, name=python3, GPU has fallen off the bus.")


@scenario
def ready_xid_informational(h):
    """Xid 13 on GPU 2 (an application's fault): a warning, still ready."""
    h.daemon("nvidia-persistenced")
    h.xid(2, 13, "pid=4242, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0)")


@scenario
def ready_kernel_log_rotated(h):
    """The kernel log has wrapped since boot (no boot record): a warning."""
    h.daemon("nvidia-persistenced")
    h.kernel_log(["usb 1-1: new high-speed USB device"], first_seq=48211)


@scenario
def ready_pcie_x8(h):
    """GPU 6's PCIe link trained at x8 of x16."""
    h.daemon("nvidia-persistenced")
    h.pcie_link(6, width=8, max_width=16)


@scenario
def ready_driver_gpu_missing(h):
    """The driver lists a ninth GPU (0000:ec:00.0) that nvidia-smi does not
    print."""
    h.daemon("nvidia-persistenced")
    h.driver_gpu("ec")
