"""The bus-trace record format shared by MAME runs and our emulator, with its parser and comparison.

A trace is a text file, one record per line, written by `trace.lua` inside MAME (or by
`hilbridge.oracle.emulator` for our own emulator), so that both sides can be diffed line by line:

    W <cycle> <p1> <addr> <data> <frame> <vpos> <hpos>   a MOVX write
    R <cycle> <p1> <addr> <data> <frame> <vpos> <hpos>   a MOVX read (only when reads are traced)
    F <frame> <cycle> <pc>                                the end of a frame (MAME: beam at 243, 0)
    S <frame> <vdc> <xram> <iram> <p1> <p2>               per-frame state: 256 + 128 + 64 bytes hex
    P <frame> <index>                                     frame's pixels = stored pixel frame <index>
    # ...                                                  comment / header

`cycle` counts 8048 machine cycles since power-on; an access is stamped at the end of its
instruction, as MAME does. The comparison key is (kind, cycle, addr, data): `frame`, `vpos` and
`hpos` are derived from the cycle and kept only to make a trace readable. Numbers are decimal except
p1, addr, data, pc and the state dumps, which are hex.
"""

from __future__ import annotations

import gc
import io
import json
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import itemgetter, ne
from typing import NamedTuple

import numpy as np

from hilbridge.errors import HilbridgeError, SourceLocation


class Access(NamedTuple):
    """One MOVX access; `kind` is "W" or "R". A named tuple, not a dataclass: a traced run makes
    hundreds of thousands, and a tuple is built several times faster than a frozen dataclass."""

    kind: str
    cycle: int
    p1: int
    addr: int
    data: int
    frame: int = 0
    vpos: int = 0
    hpos: int = 0

    @property
    def key(self) -> tuple[str, int, int, int]:
        """What must match between two traces: the beam fields are derived data."""
        return access_key(self)

    @property
    def target(self) -> str:
        """Who the access selects, from P1 (docs/hardware.md, "Glue logic"): VDC, external RAM, or other."""
        if not self.p1 & 0x08:
            return "VDC"
        if not self.p1 & 0x50 and self.addr < 0x80:
            return "RAM"
        return "EXT"

    def line(self) -> str:
        return (
            f"{self.kind} {self.cycle} {self.p1:02X} {self.addr:02X} {self.data:02X} "
            f"{self.frame} {self.vpos} {self.hpos}"
        )


access_key = itemgetter(0, 1, 3, 4)
"""`Access.key` as a C-level function of the tuple (kind, cycle, addr, data): the comparison maps
it over whole traces."""


@dataclass(frozen=True, slots=True)
class FrameEnd:
    frame: int
    cycle: int
    pc: int

    def line(self) -> str:
        return f"F {self.frame} {self.cycle} {self.pc:03X}"


@dataclass(frozen=True, slots=True)
class FrameState:
    """Registers at a frame end: 256 VDC registers, 128 B external RAM, 64 B internal RAM, P1, P2."""

    frame: int
    vdc: bytes
    xram: bytes
    iram: bytes
    p1: int
    p2: int

    def line(self) -> str:
        return (
            f"S {self.frame} {self.vdc.hex().upper()} {self.xram.hex().upper()} "
            f"{self.iram.hex().upper()} {self.p1:02X} {self.p2:02X}"
        )


@dataclass(slots=True)
class Trace:
    header: dict[str, str] = field(default_factory=dict)
    accesses: list[Access] = field(default_factory=list)
    frames: list[FrameEnd] = field(default_factory=list)
    states: list[FrameState] = field(default_factory=list)
    pixel_frames: list[int] = field(default_factory=list)  # per frame: index of its stored pixel frame
    complete: bool = False  # the "# done" line was seen: the run was not cut short

    def truncate(self, frames: int) -> None:
        """Keep the first `frames` frames: their records and the accesses up to the last frame end."""
        last = self.frames[frames - 1].cycle
        self.accesses = [access for access in self.accesses if access.cycle <= last]
        self.frames = self.frames[:frames]
        self.states = [state for state in self.states if state.frame < frames]
        self.pixel_frames = self.pixel_frames[:frames]

    def writes(self) -> list[Access]:
        return [access for access in self.accesses if access.kind == "W"]

    def reads(self) -> list[Access]:
        return [access for access in self.accesses if access.kind == "R"]

    def text(self) -> str:
        """The trace as text in the same format the parser reads (frames in order of their end)."""
        lines = [f"# {' '.join(f'{k}={v}' for k, v in self.header.items())}"] if self.header else []
        records: list[tuple[int, int, str]] = [(a.cycle, 0, a.line()) for a in self.accesses]
        records += [(f.cycle, 1, f.line()) for f in self.frames]
        by_frame = {f.frame: f.cycle for f in self.frames}
        records += [(by_frame.get(s.frame, 0), 2, s.line()) for s in self.states]
        records += [(by_frame.get(i, 0), 3, f"P {i} {p}") for i, p in enumerate(self.pixel_frames)]
        records.sort(key=lambda record: (record[0], record[1]))
        lines += [text for _, _, text in records]
        if self.complete:
            lines.append(f"# done frames={len(self.frames)}")
        return "\n".join(lines) + "\n"


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a trace's hundreds of thousands of records are made
    (parsed or recorded): they hold no cycles, and it would otherwise run hundreds of times over
    every object of the process (a third of a parse, a seventh of a traced emulator run)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def accesses_of(fields: Iterable[tuple]) -> Iterator[Access]:
    """Accesses made from tuples of their eight fields by tuple.__new__ mapped over them (in C),
    not by the class's Python __new__: traced runs and parsed traces make hundreds of thousands."""
    return map(tuple.__new__, repeat(Access), fields)


HEX = {f"{value:02X}": value for value in range(256)}
"""p1, addr and data as the trace writes them: a look-up is a few times faster than int(text, 16)."""
SMALL = {str(value): value for value in range(-1, 1 << 12)}
"""frame, vpos and hpos as the trace writes them (from -1, which MAME's vpos can be). With HEX and
the access built by tuple.__new__, not its class's Python __new__, an access line parses in half
the time."""


class _RecordError(Exception):
    """A malformed record, raised inside the parse loop; `parse_trace` adds the line's location."""


def _fields(line: str, count: int) -> list[str]:
    parts = line.split()
    if len(parts) != count:
        raise _RecordError(f"trace record needs {count} fields, found {len(parts)}: {line!r}")
    return parts


def parse_trace(text: str, name: str = "<trace>") -> Trace:
    """Parse trace text; a malformed line raises `HilbridgeError` naming its line.

    A traced MAME run has hundreds of thousands of access lines, so their case comes first and
    builds nothing else (the location is made only for an error), and the cyclic garbage collector
    is off meanwhile (`collector_paused`).
    """
    with collector_paused():
        return _parse_records(text, name)


def _parse_records(text: str, name: str) -> Trace:
    trace = Trace()
    accesses = trace.accesses
    number = 0
    try:
        for number, line in enumerate(text.splitlines(), start=1):  # noqa: B007 (the error's line)
            kind = line[:1]
            if kind == "W" or kind == "R":
                parts = line.split()
                if len(parts) != 8:
                    raise _RecordError(f"trace record needs 8 fields, found {len(parts)}: {line!r}")
                _, cycle, p1, addr, data, frame, vpos, hpos = parts
                try:
                    fields = (
                        kind,
                        int(cycle),
                        HEX[p1],
                        HEX[addr],
                        HEX[data],
                        SMALL[frame],
                        SMALL[vpos],
                        SMALL[hpos],
                    )
                except KeyError:  # spelt otherwise, or larger: int reads it or raises the error
                    fields = (
                        kind,
                        int(cycle),
                        int(p1, 16),
                        int(addr, 16),
                        int(data, 16),
                        int(frame),
                        int(vpos),
                        int(hpos),
                    )
                accesses.append(tuple.__new__(Access, fields))
            elif kind == "F":
                _, frame, cycle, pc = _fields(line, 4)
                trace.frames.append(FrameEnd(int(frame), int(cycle), int(pc, 16)))
            elif kind == "#":
                words = line[1:].split()
                if words[:1] == ["done"]:
                    trace.complete = True
                else:
                    trace.header.update(w.split("=", 1) for w in words if "=" in w)
            elif kind == "S":
                _, frame, vdc, xram, iram, p1, p2 = _fields(line, 7)
                state = FrameState(
                    int(frame),
                    bytes.fromhex(vdc),
                    bytes.fromhex(xram),
                    bytes.fromhex(iram),
                    int(p1, 16),
                    int(p2, 16),
                )
                if (len(state.vdc), len(state.xram), len(state.iram)) != (256, 128, 64):
                    raise _RecordError("state record must hold 256 + 128 + 64 bytes")
                trace.states.append(state)
            elif kind == "P":
                _, frame, index = _fields(line, 3)
                if int(frame) != len(trace.pixel_frames):
                    raise _RecordError(f"pixel record for frame {frame} out of order")
                trace.pixel_frames.append(int(index))
            elif line.strip():
                raise _RecordError(f"unknown trace record {kind!r}")
    except _RecordError as error:
        raise HilbridgeError(str(error), SourceLocation(name, number, 1)) from None
    except ValueError as error:
        raise HilbridgeError(
            f"bad number in trace record: {error}", SourceLocation(name, number, 1)
        ) from None
    return trace


PARSED_FORMAT = 1
"""Version of the layout `parsed_trace_bytes` writes; another version is not read."""
ACCESS_FIELDS = ("cycle", "p1", "addr", "data", "frame", "vpos", "hpos")
STATE_SIZES = {"vdc": 256, "xram": 128, "iram": 64}


def _narrow(values: Sequence[int]) -> np.ndarray:
    """`values` in the smallest signed integer type that holds them: a traced run's columns are
    mostly bytes, and a narrow column is several times quicker to decompress."""
    wide = np.array(values, dtype=np.int64)
    if not wide.size:
        return wide
    low, high = int(wide.min()), int(wide.max())
    for kind in (np.int8, np.int16, np.int32):
        limits = np.iinfo(kind)
        if limits.min <= low and high <= limits.max:
            return wide.astype(kind)
    return wide


def parsed_trace_bytes(trace: Trace, source: str) -> bytes | None:
    """`trace` as compressed numpy columns (an .npz file) that `trace_from_parsed` reads back in a
    fraction of a parse; `source` names the text it was parsed from (its hash), so a reader can tell
    that the columns still belong to that text. None when a number does not fit in 64 bits."""
    accesses = trace.accesses
    columns: dict[str, np.ndarray] = {
        "format": np.array(PARSED_FORMAT),
        "source": np.array(source),
        "header": np.array(json.dumps(trace.header)),
        "complete": np.array(trace.complete),
        "kind": np.frombuffer("".join(access.kind for access in accesses).encode("ascii"), np.uint8),
        "pixel_frames": _narrow(trace.pixel_frames),
    }
    try:
        for index, name in enumerate(ACCESS_FIELDS, start=1):
            columns[name] = _narrow([access[index] for access in accesses])
        for name in ("frame", "cycle", "pc"):
            columns[f"end_{name}"] = _narrow([getattr(end, name) for end in trace.frames])
        for name in ("frame", "p1", "p2"):
            columns[f"state_{name}"] = _narrow([getattr(state, name) for state in trace.states])
    except OverflowError:
        return None
    for name in STATE_SIZES:
        columns[f"state_{name}"] = np.frombuffer(b"".join(getattr(s, name) for s in trace.states), np.uint8)
    out = io.BytesIO()
    np.savez_compressed(out, **columns)
    return out.getvalue()


def trace_from_parsed(data: bytes, source: str) -> Trace | None:
    """The trace `parsed_trace_bytes` stored, or None when it was stored for other text than
    `source`, by another layout version, or is unreadable: the caller parses the text then."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            if int(stored["format"]) != PARSED_FORMAT or str(stored["source"]) != source:
                return None
            columns = {name: stored[name] for name in stored.files}
        with collector_paused():
            return _trace_from_columns(columns)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


def _trace_from_columns(columns: dict[str, np.ndarray]) -> Trace:
    """The accesses are made by `accesses_of` from whole columns turned into lists at once, so no
    Python loop runs per access."""
    kinds = list(columns["kind"].tobytes().decode("ascii"))
    fields = [columns[name].tolist() for name in ACCESS_FIELDS]
    accesses = list(accesses_of(zip(kinds, *fields, strict=True)))
    frames = [
        FrameEnd(*end)
        for end in zip(*(columns[f"end_{name}"].tolist() for name in ("frame", "cycle", "pc")), strict=True)
    ]
    count = len(columns["state_frame"])
    memory = {name: columns[f"state_{name}"].tobytes() for name in STATE_SIZES}
    if any(len(memory[name]) != size * count for name, size in STATE_SIZES.items()):
        raise ValueError("state columns of different lengths")
    states = [
        FrameState(
            frame,
            *(memory[name][index * size : (index + 1) * size] for name, size in STATE_SIZES.items()),
            p1,
            p2,
        )
        for index, (frame, p1, p2) in enumerate(
            zip(*(columns[f"state_{name}"].tolist() for name in ("frame", "p1", "p2")), strict=True)
        )
    ]
    header = json.loads(str(columns["header"]))
    if not isinstance(header, dict):
        raise ValueError("header is not a mapping")
    pixel_frames = columns["pixel_frames"].tolist()
    return Trace(header, accesses, frames, states, pixel_frames, bool(columns["complete"]))


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The first place where two access lists differ, with context for a readable report."""

    index: int
    ours: Access | None
    theirs: Access | None
    before: tuple[Access, ...]

    def report(self, our_name: str = "emulator", their_name: str = "MAME") -> str:
        lines = [f"access #{self.index} differs (kind cycle p1 addr data frame vpos hpos):"]
        lines += [f"  both:    {access.line()}" for access in self.before]
        lines.append(f"  {our_name}: {self.ours.line() if self.ours else '(no more accesses)'}")
        lines.append(f"  {their_name}: {self.theirs.line() if self.theirs else '(no more accesses)'}")
        return "\n".join(lines)


def first_mismatch(ours: Sequence[Access], theirs: Sequence[Access], context: int = 3) -> Mismatch | None:
    """Compare on (kind, cycle, addr, data) in order; None when the two lists are equal.

    The keys are compared pair by pair in C (map, compress): a traced run has hundreds of
    thousands of accesses, and a Python loop over their indices takes twice as long."""
    differing = map(ne, map(access_key, ours), map(access_key, theirs))
    index = next(compress(count(), differing), min(len(ours), len(theirs)))
    if index == len(ours) == len(theirs):
        return None
    mine = ours[index] if index < len(ours) else None
    other = theirs[index] if index < len(theirs) else None
    return Mismatch(index, mine, other, tuple(ours[max(0, index - context) : index]))


def up_to_cycle(accesses: Iterable[Access], last_cycle: int) -> list[Access]:
    """The accesses stamped at or before `last_cycle` (to cut two runs to the same length)."""
    return [access for access in accesses if access.cycle <= last_cycle]


def compare_runs(
    ours: Trace, theirs: Trace, frames: int | None = None
) -> tuple[list[Access], Mismatch | None]:
    """Two runs' accesses up to the end of their first `frames` frames (None: all), compared: the
    accesses of `theirs` that were compared, and the first mismatch (None: equal). The two count
    frame ends a few cycles apart (MAME's CPU runs 1.5 ppm fast), so both are cut at the earlier."""
    index = -1 if frames is None else frames - 1
    last = min(ours.frames[index].cycle, theirs.frames[index].cycle)
    compared = up_to_cycle(theirs.accesses, last)
    return compared, first_mismatch(up_to_cycle(ours.accesses, last), compared)
