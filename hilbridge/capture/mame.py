"""`MameSource`: MAME 0.251 as the console of a bus capture.

MAME runs the cartridge headless (the same command line, BIOS and character ROM as the oracle runs,
`hilbridge.oracle.mame`), and `capture.lua` writes every fetch from 0400h-0FFFh and every MOVX access
with exact machine cycles to a file that this source reads while MAME runs (or, with the MAME-run
cache of `hilbridge.oracle.run_cache` switched on, reads back from a finished run). Here the lines become the
items a slot capture holds, stamped as our emulator stamps them: all fetches of an instruction at the
instruction's start (MAME fetches an operand after burning the cycles; the opcode table says how many
fetches belong to an instruction), a P1 record where P10/P11/P14 are first seen changed, a reset
marker at each fetch of 0400h and a frame sync at each fetch of 0406h.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import TextIO

from hilbridge.capture.stream import (
    BATCH_RECORDS,
    BatchItem,
    BatchStream,
    CaptureHeader,
    FrameSync,
    RecordBatch,
    ResetDetected,
)
from hilbridge.errors import HilbridgeError
from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.machine.bios import default_bios
from hilbridge.machine.cartridge import CART_P1_MASK, Cartridge
from hilbridge.machine.charset import charset_rom
from hilbridge.machine.inputs import InputMovie
from hilbridge.machine.timing import REGIONS
from hilbridge.mcs48.table import INSTRUCTIONS
from hilbridge.oracle.mame import SLOTS, SYSTEMS, _layout, find_mame, inputs_lua, mame_cycles_per_second
from hilbridge.oracle.run_cache import CacheEntry, Invocation, cache_entry, cache_folder

RESET_ADDRESS, VSYNC_HOOK = 0x400, 0x406
CAPTURE_FILE = "capture.txt"
CACHED_BYTES = 64 << 20
"""Capture files above this size are not kept in the MAME-run cache (an hour of capture is gigabytes)."""
POLL_SECONDS = 0.01
# fetches one instruction makes from the cartridge: its bytes, and the table byte of MOVP/JMPP
# (MOVP3 reads page 3, inside the console)
FETCHES = tuple(
    instruction.length + (1 if instruction.mnemonic in ("MOVP", "JMPP") else 0)
    for instruction in INSTRUCTIONS
)
_KINDS = {"F": CAPTURE_KINDS["FETCH"], "R": CAPTURE_KINDS["MOVX_READ"], "W": CAPTURE_KINDS["MOVX_WRITE"]}


class MameSource(BatchStream):
    """MAME running `cart` for `frames` frames (or `seconds` of emulated time) in `region` with `movie`."""

    def __init__(
        self,
        cart: Cartridge,
        *,
        frames: int | None,
        seconds: float | None,
        region: str,
        movie: InputMovie,
        kinds: tuple[str, ...],
        options: str = "mame",
        timeout: float = 600.0,
    ):
        if options != "mame":
            raise HilbridgeError(f"the mame device takes no options ({options!r})", hint="use -d mame")
        if cart.mapper not in SLOTS:
            raise HilbridgeError(f"MAME 0.251 has no cartridge type {cart.mapper!r}", hint=", ".join(SLOTS))
        if frames is None and seconds is None:
            raise HilbridgeError("the mame device needs --frames or --seconds")
        if frames is None:
            frames = max(1, int(Fraction(seconds or 0) * REGIONS[region].frame_rate_hz + 1))
        self.frames = frames
        self.cart = cart
        self.region = region
        self.movie = movie
        self.kinds = kinds
        self.timeout = timeout
        self.end_message = ""
        self._process: subprocess.Popen[str] | None = None
        self._stderr: TextIO | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._cache = ExitStack()
        self._entry: CacheEntry | None = None
        self._started = 0.0
        self.from_cache = False
        """True when the lines came from the MAME-run cache instead of a MAME process."""
        self._header = CaptureHeader(
            source="mame",
            adapter="MAME 0.251 (capture.lua)",
            cart_sha1=hashlib.sha1(cart.image).hexdigest(),
            mapper=cart.mapper,
            region=region,
            bios=default_bios().name,
            kinds=tuple(kinds),
            inputs=movie.text,
            ends_on_frame=True,  # it stops at its frame limit (--seconds is emulated time here)
        )

    def _start(self) -> Path:
        """Start MAME writing the capture file, or restore the file of the same run from the cache."""
        self._scratch = tempfile.TemporaryDirectory(prefix="hilbridge-mame-capture-")
        work = Path(self._scratch.name)
        system = SYSTEMS[self.region]
        cart_options = _layout(
            work, system, default_bios().image, charset_rom(), self.cart.image, self.cart.mapper
        )
        out = work / CAPTURE_FILE
        mame = find_mame()
        lua = resources.files(__package__).joinpath("capture.lua")
        with resources.as_file(lua) as lua_path, inputs_lua() as inputs_path:
            command = [
                mame, system, "-noreadconfig", *cart_options,
                "-video", "none", "-sound", "none", "-nothrottle", "-skip_gameinfo", "-nomouse",
                "-cfg_directory", str(work / "cfg"), "-nvram_directory", str(work / "nvram"),
                "-snapshot_directory", str(work / "snap"), "-homepath", str(work),
                "-autoboot_script", str(lua_path), "-autoboot_delay", "0",
                "-seconds_to_run", str(self.frames // 49 + 30),
            ]  # fmt: skip
            script_environment = {
                "CAPTURE_OUT": str(out),
                "CAPTURE_FRAMES": str(self.frames + 1),  # one more: every access of the last frame is out
                "CAPTURE_CYCLES_PER_SECOND": str(mame_cycles_per_second(self.region)),
                "CAPTURE_READS": "1" if "MOVX_READ" in self.kinds else "0",
                "CAPTURE_INPUTS": self.movie.mame_changes(),
                "HILBRIDGE_INPUTS_LUA": str(inputs_path),
                "SDL_VIDEODRIVER": "dummy",
            }
            scripts = (lua_path, inputs_path)
            invocation = Invocation(mame, command, script_environment, work, (CAPTURE_FILE,), scripts)
            self._entry = self._cache.enter_context(cache_entry(cache_folder(), invocation))
            if self._entry.restore():
                self.from_cache = True
                return out
            self._started = time.perf_counter()
            self._stderr = (work / "stderr.txt").open("w")
            self._process = subprocess.Popen(
                command,
                cwd=work,
                env={**os.environ, **script_environment},
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                text=True,
            )
        return out

    def _keep_run(self) -> None:
        """Store the capture file in the cache once it holds everything this capture read from it."""
        if self._entry is None or self._process is None or self._scratch is None:
            return
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        if (Path(self._scratch.name) / CAPTURE_FILE).stat().st_size <= CACHED_BYTES:
            self._entry.store(time.perf_counter() - self._started)

    def _lines(self, path: Path) -> Iterator[str]:
        """The script's lines as MAME writes them; ends when MAME has exited and all is read."""
        process = self._process
        if process is None:  # a finished run from the cache
            with path.open() as handle:
                for line in handle:
                    yield line.removesuffix("\n")
            return
        started = time.monotonic()
        while not path.exists():
            if process.poll() is not None:
                return
            time.sleep(POLL_SECONDS)
        with path.open() as handle:
            rest = ""
            while True:
                block = handle.read(1 << 16)
                if block:
                    lines = (rest + block).split("\n")
                    rest = lines.pop()
                    yield from lines
                    continue
                if process.poll() is not None:
                    block = handle.read()
                    if not block:
                        break
                    rest += block
                    continue
                if time.monotonic() - started > self.timeout:
                    process.kill()
                    raise HilbridgeError(
                        f"MAME did not finish {self.frames} frames within {self.timeout:.0f} s"
                    )
                time.sleep(POLL_SECONDS)
            if rest:
                yield rest

    def batches(self) -> Iterator[BatchItem]:
        from hilbridge.capture.sources import FrameLimit

        path = self._start()
        limit = FrameLimit(self._header, self.frames)
        end = limit.end_cycle if limit.end_cycle is not None else 1 << 62
        wanted = {CAPTURE_KINDS[kind] for kind in self.kinds}
        p1_code = CAPTURE_KINDS["P1"]
        p1_bits = 0xFF & CART_P1_MASK
        start = remaining = 0
        syncs = 0
        done = False
        run: list[tuple[int, int, int, int, int]] = []
        for line in self._lines(path):
            if not line or line[0] == "#":
                done = done or line.startswith("# done")
                continue
            kind, *fields = line.split()
            if kind == "E":
                continue
            stamp, address, value, p1 = (
                int(fields[0]),
                int(fields[1], 16),
                int(fields[2], 16),
                int(fields[3], 16),
            )
            if kind == "F":
                if remaining == 0:
                    start, remaining = stamp, FETCHES[value]
                remaining -= 1
                stamp = start
            if stamp >= end:
                if run:
                    yield RecordBatch.from_tuples(run)
                self.end_message = f"captured {self.frames} frames"
                self._keep_run()
                self.close()
                return
            if p1 & CART_P1_MASK != p1_bits:
                p1_bits = p1 & CART_P1_MASK
                if p1_code in wanted:
                    run.append((stamp, p1_code, 0, p1_bits, p1))
            code = _KINDS[kind]
            if code in wanted:
                run.append((stamp, code, address, value, p1))
            marker: ResetDetected | FrameSync | None = None
            if kind == "F" and address == RESET_ADDRESS:
                marker = ResetDetected(stamp)
            elif kind == "F" and address == VSYNC_HOOK:
                marker = FrameSync(syncs, stamp)
                syncs += 1
            if marker is not None or len(run) >= BATCH_RECORDS:
                if run:
                    yield RecordBatch.from_tuples(run)
                    run = []
                if marker is not None:
                    yield marker
        if run:
            yield RecordBatch.from_tuples(run)
        self._finish(done)

    def _finish(self, done: bool) -> None:
        process = self._process
        code = process.wait() if process is not None else None
        if done:
            self._keep_run()
        else:
            detail = ""
            if self._scratch is not None:
                errors = Path(self._scratch.name) / "stderr.txt"
                detail = " ".join(errors.read_text(errors="replace").split()[-40:]) if errors.exists() else ""
            self.close()
            raise HilbridgeError(f"MAME stopped before {self.frames} frames (exit status {code}): {detail}")
        self.end_message = f"captured {self.frames} frames"
        self.close()

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None
        self._entry = None
        self._cache.close()
