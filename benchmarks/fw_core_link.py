"""The firmware's C protocol core (host build) against the Python simulated adapter, over a pty, in one run.

Both devices hold the same 16 KB o2_rally cartridge and serve a pty in their own process; this process
reads N bytes of the program area through the protocol (pipelined CART_READ_REPEAT, as many 3 KB
passes per request as the device's max_payload allows: 21 for the simulator's 65535, 10 for the
core's 32768) and then runs a full `dump_cartridge`. Reported per device: median wall ms per MB,
the device process's CPU ms per MB (what an adapter spends per byte, less disturbed by the shared
machine's load than wall time), and the core/simulator ratios of both, measured in alternating rounds.

Measured (2-core machine shared with other jobs, load ~8, `--megabytes 4 --rounds 3`): simulator
64.6 ms/MB wall, 9.9 ms/MB device CPU; C core 63.2 and 7.5; ratios wall 0.98, CPU 0.76, dump 0.62.
The wall time is the host's (Python) reading; of the core's CPU, 72 % is the byte-wise CRC-32 table
(zlib's is sliced) and 19 % COBS encoding (perf). On the RP2040 the link (USB full speed, ~1 MB/s)
is the limit, not the ~20 cycles per byte these cost there.

Run: python benchmarks/fw_core_link.py [--megabytes 8] [--rounds 5]   (needs make -C firmware host)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.adapter import Adapter
from hilbridge.link.transport import SerialTransport
from hilbridge.sim.demo import demo_image

ROOT = Path(__file__).resolve().parent.parent
FW_HOST = ROOT / "firmware" / "build" / "host" / "hilbridge-fw-host"
PROGRAM_AREA = 0xC00
BATCH = 2**20  # bytes per pipelined transact


def spawn(command: list[str], banner: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    line = process.stdout.readline()
    if not line.startswith(banner):
        raise SystemExit(f"{command[0]} did not start: {line!r}")
    return process, line.split()[3]  # "... on PATH"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(path: str, pid: int, total: int, folder: Path) -> tuple[float, float, float]:
    """Wall and device CPU seconds per MB of reads, and the seconds of one full dump."""
    adapter = Adapter(SerialTransport(path))
    passes = min(255, (adapter.info.max_payload - 2) // PROGRAM_AREA)
    request = (
        "CART_READ_REPEAT",
        {"p1": 0xFF, "p2": 0, "strobe": 0, "address": 0x400, "length": PROGRAM_AREA},
    )
    per_request = passes * PROGRAM_AREA
    cpu, start = cpu_seconds(pid), time.perf_counter()
    done = 0
    while done < total:
        count = max(1, min(total - done, BATCH) // per_request)
        replies = adapter.link.transact([(request[0], {**request[1], "count": passes})] * count)
        done += sum(len(reply["data"]) for reply in replies)
    wall, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu
    started = time.perf_counter()
    dump_cartridge(adapter, folder / f"dump-{pid}.bin")
    dump = time.perf_counter() - started
    (folder / f"dump-{pid}.bin").unlink()
    adapter.close()
    megabytes = done / 2**20
    return wall / megabytes, cpu / megabytes, dump


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    if not FW_HOST.exists():
        raise SystemExit(f"{FW_HOST} is missing: run make -C firmware host")
    total = int(options.megabytes * 2**20)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        cart = folder / "rally.bin"
        cart.write_bytes(demo_image("o2_rally", 16384))
        devices = {
            "simulator": spawn(
                [
                    sys.executable,
                    "-m",
                    "hilbridge",
                    "sim",
                    "serve",
                    "--pty",
                    "--cart",
                    str(cart),
                    "--type",
                    "o2_rally",
                ],
                "simulated adapter on ",
            ),
            "C core": spawn(
                [str(FW_HOST), "--pty", "--cart", str(cart), "--type", "o2_rally"], "firmware core on "
            ),
        }
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in devices}
        try:
            for round_number in range(options.rounds):
                order = list(devices) if round_number % 2 == 0 else list(reversed(devices))
                for name in order:
                    process, path = devices[name]
                    results[name].append(measure(path, process.pid, total, folder))
        finally:
            for process, _ in devices.values():
                process.terminate()
                process.wait(timeout=10)
    medians = {
        name: [statistics.median(run[i] for run in runs) for i in range(3)] for name, runs in results.items()
    }
    print(f"{options.rounds} rounds of {options.megabytes:g} MB reads + one dump each (medians)")
    for name, (wall, cpu, dump) in medians.items():
        print(
            f"  {name:10s} wall {wall * 1000:7.1f} ms/MB  device CPU {cpu * 1000:7.1f} ms/MB  "
            f"dump {dump:5.2f} s"
        )
    sim, core = medians["simulator"], medians["C core"]
    print(
        f"  core/simulator: wall {core[0] / sim[0]:.2f}, device CPU {core[1] / sim[1]:.2f}, "
        f"dump {core[2] / sim[2]:.2f}"
    )


if __name__ == "__main__":
    main()
