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
from typing import BinaryIO, TextIO

import numpy as np

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
from hilbridge.link.capture_codec import RECORD_DTYPE
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
FETCH_COUNTS = np.array(FETCHES, dtype=np.int64)
LINE_KINDS = {"F": CAPTURE_KINDS["FETCH"], "R": CAPTURE_KINDS["MOVX_READ"], "W": CAPTURE_KINDS["MOVX_WRITE"]}
"""capture.lua's access lines, "KIND cycle addr data p1", by their first letter."""
_KIND_CODES = np.full(256, -1, dtype=np.int16)
_KIND_CODES[[ord(letter) for letter in LINE_KINDS]] = list(LINE_KINDS.values())
_DIGITS = np.full(256, 99, dtype=np.uint8)
"""A byte's value as a digit (99: none); the cycle is written in decimal, the rest in hexadecimal."""
_DIGITS[np.frombuffer(b"0123456789", np.uint8)] = range(10)
_DIGITS[np.frombuffer(b"ABCDEF", np.uint8)] = range(10, 16)
_DIGITS[np.frombuffer(b"abcdef", np.uint8)] = range(10, 16)
NEWLINE, RETURN, SPACE = ord("\n"), ord("\r"), ord(" ")
FIELDS = 5
MOST_DIGITS = (18, 8, 8, 8)
"""Longest cycle, address, data and P1 fields read (int64 holds 18 decimal digits)."""
READ_BYTES = 1 << 20


def _whole_lines(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """Blocks cut after their last newline (a line cut by a block's end comes with the next block)."""
    rest = b""
    for block in blocks:
        block = rest + block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield block[:cut]
    if rest:
        yield rest


class CaptureLines:
    """capture.lua's lines as capture items, a block of lines at a time.

    A 90-frame capture is some 700,000 lines, so a block is parsed as bytes by array operations
    (numpy) rather than line by line. Stamps follow our emulator's: all fetches of an instruction
    carry its opcode fetch's cycle (FETCHES says how many an opcode makes; an instruction may
    continue in the next block); a P1 record comes before the first access that shows P10/P11/P14
    changed; a fetch of 0400h is followed by `ResetDetected`, one of 0406h by `FrameSync`. Lines
    stamped at or after `end_cycle` end the capture (`ended`); "# done" (MAME finished writing) sets
    `done`.
    """

    def __init__(self, kinds: tuple[str, ...], end_cycle: int | None) -> None:
        self.wanted = np.zeros(256, dtype=bool)
        for kind in kinds:
            self.wanted[CAPTURE_KINDS[kind]] = True
        self.end_cycle = end_cycle
        self.ended = False
        self.done = False
        self._start = 0  # the opcode fetch's stamp of an instruction whose fetches go on in the next block
        self._remaining = 0  # and how many of its fetches are still to come
        self._p1_bits = 0xFF & CART_P1_MASK
        self._syncs = 0

    def items(self, block: bytes) -> list[BatchItem]:
        """The items of the next block of whole lines (nothing once `ended`)."""
        if self.ended or not block:
            return []
        if not block.endswith(b"\n"):
            block += b"\n"
        data = np.frombuffer(block, np.uint8)
        newlines = np.flatnonzero(data == NEWLINE)
        starts = np.concatenate(([0], newlines[:-1] + 1))
        ends = newlines - ((data[newlines - 1] == RETURN) & (newlines > starts))  # "\r\n" too
        access = _KIND_CODES[data[starts]] >= 0
        if not access.all():
            self._other_lines(block, starts[~access], ends[~access])
        if not access.any():
            return []
        kinds, stamps, addresses, values, p1 = _columns(data, newlines, access, starts, ends)
        fetches = np.flatnonzero(kinds == CAPTURE_KINDS["FETCH"])
        stamps[fetches] = self._instruction_stamps(stamps[fetches], values[fetches])
        beyond = stamps >= self.end_cycle if self.end_cycle is not None else None
        if beyond is not None and beyond.any():
            cut = int(np.argmax(beyond))
            kinds, stamps, addresses, values, p1 = (c[:cut] for c in (kinds, stamps, addresses, values, p1))
            fetches = fetches[fetches < cut]
            self.ended = True
        return self._batches(kinds, stamps, addresses, values, p1, fetches)

    def _other_lines(self, block: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        """Frame lines ("E"), comments and the closing "# done"; anything else is not capture.lua's."""
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            line = block[start:end].decode("ascii", "replace")
            if line[:1] not in ("", "E", "#"):
                raise HilbridgeError(f"capture.lua wrote a line this hilbridge does not know: {line[:80]!r}")
            self.done = self.done or line.startswith("# done")

    def _instruction_stamps(self, stamps: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Each fetch's stamp: the cycle of its instruction's opcode fetch (the fetches before this
        block's first opcode belong to the instruction the last block left open)."""
        count = len(stamps)
        counts = FETCH_COUNTS[values]
        opcodes = _opcode_fetches(counts, min(self._remaining, count))
        if len(opcodes):
            self._remaining = int(opcodes[-1] + counts[opcodes[-1]]) - count
        else:
            self._remaining -= count
        starts = np.concatenate(([self._start], stamps[opcodes]))
        self._start = int(starts[-1])
        opened = np.zeros(count, np.int64)  # how many instructions start at or before each fetch
        opened[opcodes] = 1
        return starts[np.cumsum(opened)]

    def _batches(self, kinds, stamps, addresses, values, p1, fetches) -> list[BatchItem]:
        """Records (a P1 record where the slot's P1 bits change, then the access) split at markers."""
        count = len(stamps)
        if not count:
            return []
        bits = p1 & CART_P1_MASK
        changed = bits != np.concatenate(([self._p1_bits], bits[:-1]))
        self._p1_bits = int(bits[-1])
        keep = np.empty(2 * count, dtype=bool)
        keep[0::2] = changed & self.wanted[CAPTURE_KINDS["P1"]]
        keep[1::2] = self.wanted[kinds]
        rows = np.empty(2 * count, RECORD_DTYPE)
        rows["cycle"] = np.repeat(stamps, 2)
        rows["kind"][0::2] = CAPTURE_KINDS["P1"]
        rows["kind"][1::2] = kinds
        rows["address"][0::2] = 0
        rows["address"][1::2] = addresses
        rows["value"][0::2] = bits
        rows["value"][1::2] = values
        rows["p1"] = np.repeat(p1, 2)
        rows = rows[keep]
        kept_through = np.cumsum(keep.reshape(count, 2).sum(axis=1))
        items: list[BatchItem] = []
        position = 0
        for line in fetches[np.isin(addresses[fetches], (RESET_ADDRESS, VSYNC_HOOK))].tolist():
            end = int(kept_through[line])
            items += _split(rows[position:end])
            position = end
            if addresses[line] == RESET_ADDRESS:
                items.append(ResetDetected(int(stamps[line])))
            else:
                items.append(FrameSync(self._syncs, int(stamps[line])))
                self._syncs += 1
        items += _split(rows[position:])
        return items


def _ends_done(path: Path) -> bool:
    """Whether capture.lua finished the file ("# done", its last line, is written after the last frame)."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 64))
        return handle.read().rstrip().endswith(b"# done")


def _columns(
    data: np.ndarray, newlines: np.ndarray, access: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Kind, cycle, address, data and P1 of the access lines (`access`) of a block of lines: each
    must be a kind letter and four numbers, one space apart."""
    spaces = np.flatnonzero(data == SPACE)
    per_line = np.diff(np.searchsorted(spaces, newlines), prepend=0)  # a line's spaces come together
    starts, ends = starts[access], ends[access]
    wrong = np.flatnonzero(per_line[access] != FIELDS - 1)
    if not wrong.size:
        cuts = spaces[np.repeat(access, per_line)].reshape(len(starts), FIELDS - 1)
        wrong = np.flatnonzero(cuts[:, 0] != starts + 1)
    if wrong.size:
        at = int(wrong[0])
        bad = data[starts[at] : ends[at]].tobytes().decode("ascii", "replace")
        raise HilbridgeError(f"capture.lua line needs 5 fields (KIND cycle addr data p1): {bad[:80]!r}")
    kinds = _KIND_CODES[data[starts]].astype(np.int64)
    firsts = cuts + 1
    lasts = np.column_stack((cuts[:, 1:], ends))
    stamps, addresses, values, p1 = (
        _numbers(data, firsts[:, column], lasts[:, column], 10 if column == 0 else 16, MOST_DIGITS[column])
        for column in range(FIELDS - 1)
    )
    if addresses.max() > 0xFFFF or max(values.max(), p1.max()) > 0xFF:
        raise HilbridgeError("capture.lua wrote an address above FFFFh or a data or P1 value above FFh")
    return kinds, stamps, addresses, values, p1


def _numbers(data: np.ndarray, firsts: np.ndarray, lasts: np.ndarray, base: int, most: int) -> np.ndarray:
    """The numbers written in data[firsts[i]:lasts[i]], a digit position of all of them at a time.

    Digits are looked up as bytes (`take`, clipped at the block's end, not a minimum and an int64
    gather), and the digit check is gathered over all positions and made once at the end."""
    lengths = lasts - firsts
    if lengths.min() < 1 or lengths.max() > most:
        raise HilbridgeError(f"capture.lua wrote a bad number (an empty one or one of over {most} digits)")
    numbers = _DIGITS.take(data.take(firsts)).astype(np.int64)
    bad = numbers >= base
    for position in range(1, int(lengths.max())):
        inside = position < lengths
        digits = _DIGITS.take(data.take(firsts + position, mode="clip"))
        bad |= (digits >= base) & inside
        numbers = np.where(inside, numbers * base + digits, numbers)
    if bad.any():
        raise HilbridgeError(f"capture.lua wrote a bad number (not base {base})")
    return numbers


def _opcode_fetches(counts: np.ndarray, first: int) -> np.ndarray:
    """Positions of the opcode fetches among fetches that make `counts` fetches each: `first`, the
    one its count further on, and so on to the end. A chain is sequential by nature; it is followed
    by doubling jumps (some log2(n) array steps instead of a Python step per instruction): after k
    steps, `chain` holds the first 2**k opcodes in order and `jump` leaps 2**k instructions."""
    count = len(counts)
    if first >= count:
        return np.zeros(0, np.int64)
    jump = np.append(np.minimum(np.arange(count) + counts, count), count)  # past the end stays there
    chain = np.array([first])
    while jump[first] < count:
        chain = np.concatenate((chain, jump[chain]))
        jump = jump[jump]
    return chain[chain < count]


def _split(rows: np.ndarray) -> list[BatchItem]:
    return [RecordBatch(rows[at : at + BATCH_RECORDS]) for at in range(0, len(rows), BATCH_RECORDS)]


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
            if self._entry.restore(streamed=(CAPTURE_FILE,)):
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

    def _finish_for_cache(self) -> None:
        """A capture closed before MAME finished (a check stops at its last frame, not the
        capture's): with the MAME-run cache on, let MAME finish and keep the whole run, so the same
        capture is read from the cache next time. Given up when the file passes CACHED_BYTES (it
        would not be kept) or the timeout."""
        process, entry, scratch = self._process, self._entry, self._scratch
        if process is None or entry is None or entry.folder is None or scratch is None:
            return
        path = Path(scratch.name) / CAPTURE_FILE
        while process.poll() is None:
            too_big = path.exists() and path.stat().st_size > CACHED_BYTES
            if too_big or time.perf_counter() - self._started > self.timeout:
                return
            time.sleep(POLL_SECONDS)
        if process.returncode == 0 and _ends_done(path):
            self._keep_run()

    def _line_blocks(self, path: Path) -> Iterator[bytes]:
        """The script's lines as MAME writes them, in blocks of whole lines; ends when MAME has exited
        and all is read."""
        process = self._process
        if process is None:  # a finished run, read straight from the cache
            assert self._entry is not None
            yield from _whole_lines(self._entry.blocks(CAPTURE_FILE, READ_BYTES))
            return
        started = time.monotonic()
        while not path.exists():
            if process.poll() is not None:
                return
            time.sleep(POLL_SECONDS)
        with path.open("rb") as handle:
            yield from _whole_lines(self._written(handle, started))

    def _written(self, handle: BinaryIO, started: float) -> Iterator[bytes]:
        """What MAME writes to the capture file, as it writes it, until it exits."""
        process = self._process
        assert process is not None
        while True:
            block = handle.read(READ_BYTES)
            if block:
                yield block
                continue
            if process.poll() is not None:
                block = handle.read()
                if not block:
                    return
                yield block
                continue
            if time.monotonic() - started > self.timeout:
                process.kill()
                raise HilbridgeError(f"MAME did not finish {self.frames} frames within {self.timeout:.0f} s")
            time.sleep(POLL_SECONDS)

    def batches(self) -> Iterator[BatchItem]:
        from hilbridge.capture.sources import FrameLimit

        path = self._start()
        limit = FrameLimit(self._header, self.frames)
        parser = CaptureLines(self.kinds, limit.end_cycle)
        for block in self._line_blocks(path):
            yield from parser.items(block)
            if parser.ended:
                self.end_message = f"captured {self.frames} frames"
                self._keep_run()
                self.close()
                return
        self._finish(parser.done)

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
            self._finish_for_cache()
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
