"""Dump throughput over a pty, as a ratio of raw pty throughput measured in the same run.

All measurements have the same process layout, as with a real adapter on /dev/ttyACM0: a writer
process on the pty's master side, and this process reading the slave side through
`SerialTransport.read` (the same read calls and read sizes, at most 4095 bytes per read from a pty):
- raw: a Python writer process pushes N bytes into its pty as fast as it can; the reader drops them;
- protocol: `hilbridge sim serve --pty` holds a 16 KB o2_rally cartridge; we read N bytes of its
  program area through the protocol (COBS framing, CRC, sequence numbers) in pipelined `transact`s of
  4 MB (see BATCH): CART_READ_REPEAT of 21 passes (63 KB frames, the longest protocol version 3
  allows) and CART_READ of the 3 KB area (3 KB frames).
Each round runs all three, in rotating order; the machine's load drifts, so we report medians and the
median of the per-round ratios (each compares runs made back to back), and CPU time per MB of the
reading and the writing process, which the load disturbs less than wall time, with the raw/protocol
CPU ratios: the wall ratio tends to the reader's when only the host is CPU-bound, and to the ratio of
both when the two processes share one core.
Then a full `dump_cartridge` (detection + 2 passes + verification) of the same 16 KB cartridge, over the
pty and in-process, against the 2 s target.

Where the time goes, in ms of CPU per MB (2-core machine shared with other jobs; the parts measured
alone, the totals from benchmark runs):
- raw: reader 1.25-1.45 (one read syscall per 4095 bytes), writer 0.6-0.75.
- protocol reader, 63 KB frames: 3.0-3.7. The same read syscalls as raw (~1.3); COBS decode 0.39,
  CRC-32 0.19 (checked by residue, one pass) and copies: `decode_frame` 0.62, with the buffering of
  the ~16 reads a frame takes `FrameDecoder.feed` 0.8 (the floor of the C `cobs` package and zlib);
  Python per read and per frame (loop turn, request encoding, dispatch, unpack) ~0.3. That is ~2.4 in
  isolation; the other 0.6-1.3 is cache and scheduling cost of sharing cores with the writer, the
  pty's kernel worker and other jobs.
- protocol writer (the simulated adapter), 63 KB frames: 2.0-2.4. Answering a request 1.0-1.1 (COBS
  encode 0.55, CRC-32 0.2, copies and Python 0.25), the pty writes and wake-ups as raw ~0.65, and
  select/read of requests.
- 3 KB frames: Python per frame (~10 us host, ~10 us adapter, 333 frames per MB) adds ~3.5 each side:
  reader 6.5-7.7, writer 5.0-5.7.
So on one core (what the runs here mostly got: the other jobs kept the load at 2-4) wall time follows
reader + writer + kernel CPU, and the ratio is ~0.45 (63 KB frames) and ~0.2 (3 KB frames). With two
idle cores reader and writer overlap; the protocol then needs ~2.4-3.0 ms/MB of reader CPU against the
raw pty's ~2.9 ms/MB of wall time (a latency chain: writer, kernel worker, reader, with ~20 KB of pty
buffer), which is where >= 0.8 is possible; while the adapter computes a 63 KB reply (~65 us) the
reader can drain only the ~20 KB the pty buffers. Before this work (protocol version 2, 15 KB frames,
one 16 MB transact) runs at the same times gave reader 4.7-9.3, writer 3.3-4.4, ratio 0.19-0.36.

Run: python benchmarks/link_throughput.py [--megabytes 16] [--rounds 7]   (aim: protocol/raw >= 0.8)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.adapter import Adapter
from hilbridge.link.discovery import open_adapter
from hilbridge.link.protocol import MAX_PAYLOAD
from hilbridge.link.transport import SerialTransport

SIM_CART = ["--type", "o2_rally", "--size", "16384"]
PROGRAM_AREA = 0xC00  # CPU 0400h-0FFFh: the longest single CART_READ of program space
MOST_PASSES = (MAX_PAYLOAD - 2) // PROGRAM_AREA  # passes of the area that fill one reply frame
BATCH = 4 * 2**20
"""Bytes per pipelined `transact`: a dump keeps its image, not a list of every reply of the run. Holding
16 MB of replies costs the reader a page fault per 4 KB (~256/MB) that the raw reader, which drops what
it reads, never pays; a new batch costs one round trip (~0.2 ms)."""
RAW = "raw pty"
# What each round measures: name -> passes of the program area per request (0: the raw pty).
MEASURED = {
    RAW: 0,
    f"protocol, CART_READ_REPEAT {MOST_PASSES} x 3 KB": MOST_PASSES,
    "protocol, CART_READ 3 KB": 1,
}
SIDES = ("reader_cpu", "writer_cpu")
RAW_WRITER = r"""
import os, sys, tty
master, slave = os.openpty()
tty.setraw(slave)
print(os.ttyname(slave), flush=True)
total = int(sys.argv[1])
os.read(master, 1)  # wait for the reader's go
block = bytes(range(256)) * 64
view = memoryview(block)
sent = 0
while sent < total:
    sent += os.write(master, view[: min(len(block), total - sent)])
os.read(master, 1)  # keep the pty open until the reader is done
"""


def _spawn(arguments: list[str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        arguments, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    line = process.stdout.readline().split()
    return process, line[3] if line[:3] == ["simulated", "adapter", "on"] else line[0]


@dataclass
class Run:
    """One measurement: bytes per second, and CPU seconds per MB spent by the reader and the writer."""

    rate: float
    reader_cpu: float
    writer_cpu: float


def _cpu_seconds(pid: int | None = None) -> float:
    """CPU time of this process, or of child `pid` (Linux /proc schedstat, in ns; 0 where there is none)."""
    if pid is None:
        return time.process_time()
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _timed(pid: int, transfer: Callable[[], int]) -> Run:
    reader, writer = _cpu_seconds(), _cpu_seconds(pid)
    started = time.perf_counter()
    moved = transfer()
    elapsed = time.perf_counter() - started
    megabytes = moved / 1e6
    return Run(
        moved / elapsed, (_cpu_seconds() - reader) / megabytes, (_cpu_seconds(pid) - writer) / megabytes
    )


def raw_pty(total: int) -> Run:
    """Reading a pty that another process fills as fast as it can."""
    process, path = _spawn([sys.executable, "-c", RAW_WRITER, str(total)])
    transport = SerialTransport(path)

    def transfer() -> int:
        transport.write(b"g")
        received = 0
        while received < total:
            received += len(transport.read(1.0))
        return received

    try:
        run = _timed(process.pid, transfer)
        transport.write(b"q")
    finally:
        transport.close()
        process.wait(timeout=10)
    return run


def protocol_reads(adapter: Adapter, server: int, total: int, passes: int) -> Run:
    """Pipelined reads of the program area from the simulated adapter process `server`: CART_READ
    (passes = 1, 3 KB frames) or CART_READ_REPEAT (`passes` reads of the area per request and frame)."""
    fields = {"p1": 0xFF, "p2": 0, "strobe": 0, "address": 0x400, "length": PROGRAM_AREA}
    request = ("CART_READ", fields) if passes == 1 else ("CART_READ_REPEAT", {**fields, "count": passes})
    count = -(-total // (PROGRAM_AREA * passes))
    per_batch = max(1, BATCH // (PROGRAM_AREA * passes))

    def transfer() -> int:
        moved = 0
        for start in range(0, count, per_batch):
            replies = adapter.link.transact([request] * min(per_batch, count - start))
            moved += sum(len(reply["data"]) for reply in replies)
        return moved

    return _timed(server, transfer)


def dump_seconds(adapter: Adapter, folder: Path) -> float:
    started = time.perf_counter()
    dump_cartridge(adapter, folder / "dump.bin")
    return time.perf_counter() - started


def _spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    low, middle, high = (value / scale for value in (min(values), statistics.median(values), max(values)))
    return f"median {middle:8.{digits}f}  (min {low:.{digits}f}, max {high:.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=16.0, help="megabytes moved per run")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of raw and protocol runs")
    arguments = parser.parse_args()
    total = int(arguments.megabytes * 1024 * 1024)
    process, path = _spawn([sys.executable, "-m", "hilbridge", "sim", "serve", "--pty", *SIM_CART])
    runs: dict[str, list[Run]] = {name: [] for name in MEASURED}
    pty_dumps: list[float] = []
    local_dumps: list[float] = []
    try:
        adapter = Adapter(SerialTransport(path))
        for passes in MEASURED.values():  # warm up: let timeouts settle
            if passes:
                protocol_reads(adapter, process.pid, 256 * 1024, passes)
        retransmits = adapter.link.stats.retransmits
        for number in range(arguments.rounds):
            names = list(MEASURED)
            for name in names[number % len(names) :] + names[: number % len(names)]:
                passes = MEASURED[name]
                run = protocol_reads(adapter, process.pid, total, passes) if passes else raw_pty(total)
                runs[name].append(run)
        retransmits = adapter.link.stats.retransmits - retransmits
        with tempfile.TemporaryDirectory() as folder:
            for _ in range(arguments.rounds):
                pty_dumps.append(dump_seconds(adapter, Path(folder)))
            with open_adapter("sim?type=o2_rally&size=16384") as local:
                for _ in range(arguments.rounds):
                    local_dumps.append(dump_seconds(local, Path(folder)))
        adapter.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    raw = runs[RAW]
    print(f"{arguments.rounds} rounds of {total / 2**20:g} MiB each; rotating order; MB/s")
    for name, measured in runs.items():
        print(f"{name:36} {_spread([run.rate for run in measured], 1e6)}")
    for name, measured in runs.items():
        if name != RAW:
            ratios = [run.rate / base.rate for run, base in zip(measured, raw, strict=True)]
            print(f"ratio to raw, {name:23} {_spread(ratios)}   (aim >= 0.8)")
    print("CPU ms per MB (median)               reader (host)  writer (pty side)  raw/this: reader  both")
    cpu = {
        name: tuple(statistics.median(getattr(run, side) for run in measured) * 1e3 for side in SIDES)
        for name, measured in runs.items()
    }
    for name, (reader, writer) in cpu.items():
        raw_reader, raw_writer = cpu[RAW]
        share = f"{raw_reader / reader:16.2f}  {(raw_reader + raw_writer) / (reader + writer):4.2f}"
        print(f"{name:36} {reader:13.2f}  {writer:17.2f}  {'' if name == RAW else share}")
    print(f"protocol retransmissions: {retransmits}")
    print(f"16 KB dump, 2 passes, over pty s:   {_spread(pty_dumps, digits=3)}   (target < 2 s)")
    print(f"16 KB dump, 2 passes, in-process s: {_spread(local_dumps, digits=3)}   (target < 2 s)")


if __name__ == "__main__":
    main()
