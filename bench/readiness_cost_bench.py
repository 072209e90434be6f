#!/usr/bin/env python3
"""readiness_cost_bench: what the readiness checks add to a host's inspect,
measured on the host itself (run it on a GPU host, as root for the kernel
log): the scan's own --query-gpu against the same query with the readiness
fields beside it (remote/gpu_health_query.h), one non-blocking read of
/dev/kmsg (the Xid lines), and the listings of /proc/driver/nvidia/gpus and
/dev/nvidia-nvswitch*. Prints medians; asserts nothing.

Usage: bench/readiness_cost_bench.py [ROUNDS]   (default 40)
"""

import errno
import os
import statistics
import subprocess
import sys
import time

BASE = "index,uuid,name,pci.bus_id,memory.used,memory.total,gpu_recovery_action"
READY = BASE + (
    ",ecc.mode.current,ecc.mode.pending,ecc.errors.uncorrected.volatile.total,"
    "ecc.errors.uncorrected.aggregate.total,remapped_rows.correctable,"
    "remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure,"
    "retired_pages.pending,retired_pages.single_bit_ecc.count,"
    "retired_pages.double_bit.count,fabric.state,fabric.status,persistence_mode,"
    "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max")


def query(fields):
    return lambda: subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,nounits"],
                                  capture_output=True, check=True)


def read_kmsg():
    """Reads every record /dev/kmsg holds without waiting; returns (records,
    Xid records, the first record's sequence number)."""
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    records, xids, first = 0, 0, None
    try:
        while True:
            try:
                record = os.read(fd, 8192)
            except OSError as e:
                if e.errno == errno.EAGAIN:
                    break
                if e.errno == errno.EPIPE:  # overwritten while reading
                    continue
                raise
            if not record:
                break
            records += 1
            if first is None:
                first = record.split(b",")[1].decode()
            xids += b"NVRM: Xid" in record
    finally:
        os.close(fd)
    return records, xids, first


def listings():
    os.listdir("/proc/driver/nvidia/gpus")
    [name for name in os.listdir("/dev") if name.startswith("nvidia-nvswitch")]


def median_ms(step, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, min(times) * 1000, max(times) * 1000


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    steps = [("base query", query(BASE)), ("ready query", query(READY)),
             ("base query", query(BASE)), ("ready query", query(READY)),
             ("/dev/kmsg", read_kmsg), ("listings", listings)]
    for name, step in steps:
        median, low, high = median_ms(step, rounds)
        print(f"{name:12s} median {median:7.2f} ms  min {low:7.2f}  max {high:7.2f}")
    print("kmsg records, Xid records, first sequence:", read_kmsg())


if __name__ == "__main__":
    main()
