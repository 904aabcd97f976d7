"""Link throughput to the emulated firmware (rp2040js, USB CDC bridged to TCP), as a ratio of a raw pty's
throughput measured in the same run.

- raw: a writer process pushes N bytes into a pty as fast as it can; this process reads them through
  `SerialTransport` (as from /dev/ttyACM0) and drops them.
- firmware: `firmware/harness/harness.mjs` runs the built UF2 through the real boot ROM with a 16 KB
  o2_rally cartridge in its slot; this process sends pipelined UPLOAD_DATA (1 KB each, 16 in flight:
  the host-to-adapter direction) and then pipelined CART_READs (1 KB each: adapter to host, including
  the dump engine's bus cycles) and counts the wire bytes (COBS framing included) per second.
The emulator runs the RP2040 at about a tenth of real time, so the ratio says how far the emulated
link is from the host's own ceiling, not what a board achieves; it tracks regressions of the USB
device code, the main loop and the harness bridge.

Run: python benchmarks/firmware_link.py [--seconds 5]   (needs arm-none-eabi-gcc, node, npm ci in
firmware/harness; the boot ROM is fetched into ~/.cache/hilbridge the first time)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hilbridge.firmware.bootrom import bootrom_image
from hilbridge.firmware.cart_table import cart_table
from hilbridge.link.adapter import Adapter
from hilbridge.link.transport import SerialTransport
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.sim.demo import demo_image

ROOT = Path(__file__).resolve().parent.parent
RAW_WRITER = """
import os, sys
fd = int(sys.argv[1]); total = int(sys.argv[2]); block = b"\\x55" * 4096
while total > 0:
    total -= os.write(fd, block[: min(total, 4096)])
"""


def raw_pty(megabytes: float) -> float:
    """Bytes per second through a pty, writer in another process."""
    master, slave = os.openpty()
    total = int(megabytes * 1e6)
    transport = SerialTransport(os.ttyname(slave))
    writer = subprocess.Popen([sys.executable, "-c", RAW_WRITER, str(master), str(total)], pass_fds=[master])
    start, received = time.perf_counter(), 0
    while received < total:
        received += len(transport.read(1.0))
    elapsed = time.perf_counter() - start
    writer.wait()
    transport.close()
    os.close(master)
    os.close(slave)
    return received / elapsed


def build_firmware(build_dir: Path) -> Path:
    subprocess.run(
        [
            "make",
            "-C",
            str(ROOT / "firmware"),
            "rp2040",
            f"BUILD_DIR={build_dir}",
            f"PYTHON={sys.executable}",
        ],
        check=True,
        capture_output=True,
    )
    return build_dir / "hilbridge-adapter.uf2"


def firmware_link(uf2: Path, cart: Path, seconds: float) -> dict[str, float]:
    """Wire bytes per second over emulated USB CDC, each direction."""
    command = ["node", str(ROOT / "firmware/harness/harness.mjs"), "--uf2", str(uf2)]
    command += ["--bootrom", str(bootrom_image()), "--cart-table", str(cart)]
    harness = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        url = None
        for line in harness.stdout:
            event = json.loads(line)
            url = event.get("url", url)
            if event["event"] == "usb-connected":
                break
        adapter = Adapter(SerialTransport(url))
        rates = {}
        # host -> adapter: UPLOAD_DATA of 1 KB pieces, 16 in flight (the reply is 6 bytes)
        adapter.link.request("UPLOAD_BEGIN", mapper=3, size=16384)
        upload = [("UPLOAD_DATA", {"offset": 1024 * i, "data": bytes([i]) * 1024}) for i in range(16)]
        start, before = time.perf_counter(), adapter.link.stats.bytes_out
        while time.perf_counter() - start < seconds:
            adapter.link.transact(upload)
        rates["upload (host to adapter)"] = (adapter.link.stats.bytes_out - before) / (
            time.perf_counter() - start
        )
        # adapter -> host: CART_READ of 1 KB, 16 in flight (includes the dump engine's bus cycles)
        fields = {"p1": 0xFF, "p2": 0, "strobe": 0, "address": 0x400, "length": 1024}
        start, before = time.perf_counter(), adapter.link.stats.bytes_in
        while time.perf_counter() - start < seconds:
            adapter.link.transact([("CART_READ", fields)] * 16)
        rates["cart read (adapter to host)"] = (adapter.link.stats.bytes_in - before) / (
            time.perf_counter() - start
        )
        adapter.close()
        return rates
    finally:
        harness.terminate()
        harness.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--megabytes", type=float, default=32.0, help="bytes through the raw pty")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        uf2 = build_firmware(Path(temporary) / "build")
        cart = Path(temporary) / "rally.tbl"
        cart.write_bytes(cart_table(load_cartridge(demo_image("o2_rally", 16384), "o2_rally")))
        raw = raw_pty(options.megabytes)
        rates = firmware_link(uf2, cart, options.seconds)
    print(f"raw pty:                                {raw / 1e6:10.2f} MB/s")
    for what, rate in rates.items():
        print(f"emulated firmware, {what:<28} {rate / 1e3:10.2f} KB/s   ratio to raw pty {rate / raw:.5f}")


if __name__ == "__main__":
    main()
