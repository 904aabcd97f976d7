"""Dump throughput over a pty, as a ratio of raw pty throughput measured in the same run.

Both sides run in separate processes, as with a real adapter on /dev/ttyACM0:
- raw: a writer process pushes N bytes into a pty as fast as it can; we read them with pyserial;
- protocol: `hilbridge sim serve --pty` holds a 16 KB o2_rally cartridge; we read its program area
  through the protocol (COBS framing, CRC, sequence numbers, 16 requests of 3 KB in flight) until
  N bytes have been read;
- a full `dump_cartridge` (detection + 2 passes + verification) of the same 16 KB cartridge, over the
  pty and in-process, timed against the 2 s target.

Run: python benchmarks/link_throughput.py [--megabytes 4]   (prints ratios; aim: dump/raw >= 0.8)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.adapter import Adapter
from hilbridge.link.discovery import open_adapter
from hilbridge.link.transport import SerialTransport

RAW_WRITER = r"""
import os, sys, tty
master, slave = os.openpty()
tty.setraw(slave)
print(os.ttyname(slave), flush=True)
total = int(sys.argv[1])
os.read(master, 1)  # wait for the reader's go
block = bytes(range(256)) * 16
sent = 0
while sent < total:
    sent += os.write(master, block[: min(len(block), total - sent)])
os.read(master, 1)  # keep the pty open until the reader is done
"""


def _spawn(arguments: list[str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        arguments, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    line = process.stdout.readline().split()
    return process, line[3] if line[:3] == ["simulated", "adapter", "on"] else line[0]


def raw_pty(total: int) -> float:
    """Bytes per second pyserial reads from a pty fed by another process."""
    process, path = _spawn([sys.executable, "-c", RAW_WRITER, str(total)])
    transport = SerialTransport(path)
    try:
        started = time.perf_counter()
        transport.write(b"g")
        received = 0
        while received < total:
            received += len(transport.read(1.0))
        elapsed = time.perf_counter() - started
        transport.write(b"q")
    finally:
        transport.close()
        process.wait(timeout=10)
    return total / elapsed


def protocol_pty(total: int) -> tuple[float, float, float]:
    """Bytes per second of cartridge reads over the protocol via a pty, and full 16K dump times."""
    process, path = _spawn(
        [sys.executable, "-m", "hilbridge", "sim", "serve", "--pty", "--type", "o2_rally", "--size", "16384"]
    )
    try:
        adapter = Adapter(SerialTransport(path))
        request = ("CART_READ", {"p1": 0xFF, "p2": 0, "strobe": 0, "address": 0x400, "length": 0xC00})
        batch = [request] * 64
        started = time.perf_counter()
        received = 0
        while received < total:
            received += sum(len(reply["data"]) for reply in adapter.link.transact(batch))
        rate = received / (time.perf_counter() - started)
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            dump_cartridge(adapter, Path(folder) / "pty.bin")
            pty_dump = time.perf_counter() - started
            with open_adapter("sim?type=o2_rally&size=16384") as local:
                started = time.perf_counter()
                dump_cartridge(local, Path(folder) / "local.bin")
                local_dump = time.perf_counter() - started
        adapter.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    return rate, pty_dump, local_dump


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=4.0)
    total = int(parser.parse_args().megabytes * 1024 * 1024)
    raw = raw_pty(total)
    dumped, pty_dump, local_dump = protocol_pty(total)
    print(f"raw pty:                {raw / 1e6:8.2f} MB/s")
    print(f"protocol reads via pty: {dumped / 1e6:8.2f} MB/s")
    print(f"ratio dump/raw:         {dumped / raw:8.2f}   (aim >= 0.8)")
    print(f"16 KB dump, 2 passes, over pty:     {pty_dump:6.3f} s   (target < 2 s)")
    print(f"16 KB dump, 2 passes, in-process:   {local_dump:6.3f} s   (target < 2 s)")


if __name__ == "__main__":
    main()
