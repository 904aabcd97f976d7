"""The frame-by-frame comparison: a capture against the reference emulator, first divergence wins.

Both sides are cut into frames (`hilbridge.check.frames`) and compared frame by frame: the events
(fetches, MOVX writes and reads, P1 changes, reset and frame markers; order, address, value, P1 and
cycle within the tolerance), the copy-mode accesses where the source reports them, and the picture
the captured VDC writes draw (`hilbridge.check.replay`) against the emulator's own. Only the
current frame and the last `WINDOW` events of each side are held, so a check runs in constant
memory however long the capture is.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from hilbridge.capture.stream import CaptureHeader, CaptureSource, source_batches
from hilbridge.check.compression import FETCH_MODES, FETCHES_COMPRESSED, FetchCompressor
from hilbridge.check.emulator import (
    COPY_FLAG,
    FETCH,
    KIND_NAMES,
    NO_ROWS,
    SYNC,
    EmulatedFrame,
    EmulatorSide,
    Event,
)
from hilbridge.check.frames import (
    IRQ_ENTRY,
    MARKERS,
    Block,
    CutFrame,
    Rows,
    as_events,
    as_rows,
    capture_blocks,
    cut_frames,
)
from hilbridge.check.replay import PictureReplay, classified_as_vdc
from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import CART_P1_MASK

WINDOW = 32
PROBE_FRAMES = 8  # emulator frames looked at to choose the frame marker
PICTURE_MODES = ("auto", "always", "never")


@dataclass(slots=True)
class Divergence:
    """The first place where the capture and the emulator differ."""

    frame: int
    cycle: int  # emulator cycle (the capture's shifted so that both resets coincide)
    frame_cycle: int  # cycles since the frame started
    kind: str  # fetch, branch, write, read, p1, reset, frame-sync, copy-mode, order, missing, extra, picture
    address: int | None
    expected: str  # the emulator's event (or picture summary)
    actual: str  # the capture's
    detail: str
    pc: int | None = None  # the emulator's PC at the divergence (None: not known)
    pc_source: str = ""
    expected_window: list[str] = field(default_factory=list)
    actual_window: list[str] = field(default_factory=list)
    expected_picture: np.ndarray | None = None
    actual_picture: np.ndarray | None = None
    picture_frame: int | None = None  # the video frame of the pictures
    program: bytes = b""  # the emulator's 4 KB program space (BIOS and the cart's current bank)


@dataclass(slots=True)
class FrameRanges:
    """Frame numbers with a reason, as merged ranges [first, last, reason]: small however long the run."""

    ranges: list[list] = field(default_factory=list)

    def add(self, frame: int, reason: str) -> None:
        if self.ranges and self.ranges[-1][2] == reason and self.ranges[-1][1] == frame - 1:
            self.ranges[-1][1] = frame
        else:
            self.ranges.append([frame, frame, reason])

    def count(self) -> int:
        return sum(last - first + 1 for first, last, _ in self.ranges)

    def text(self) -> list[str]:
        return [
            f"frame {first}: {reason}" if first == last else f"frames {first}–{last}: {reason}"
            for first, last, reason in self.ranges
        ]


@dataclass(slots=True)
class CheckResult:
    verdict: str  # "equal", "diverged" or "gap" (something could not be compared)
    frames_requested: int | None  # None: all the capture has
    frames_compared: int = 0
    first_frame: int = 0
    last_frame: int = -1
    marker: str = ""
    marker_text: str = ""
    tolerance: int = 0
    header: CaptureHeader | None = None
    region: str = "ntsc"
    kinds: tuple[str, ...] = ()
    pictures: str = "auto"
    pictures_compared: int = 0
    pictures_off: str = ""  # why pictures stopped being compared ("" = they were, where asked)
    divergence: Divergence | None = None
    gaps: FrameRanges = field(default_factory=FrameRanges)
    unseen: FrameRanges = field(default_factory=FrameRanges)
    input_free: FrameRanges = field(default_factory=FrameRanges)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict == "equal" else 1

    def summary(self) -> str:
        span = f"{self.first_frame}–{self.last_frame}"
        if self.verdict == "equal":
            return f"frames {span} equal ({self.frames_compared} frames, marker: {self.marker})"
        if self.verdict == "diverged" and self.divergence is not None:
            d = self.divergence
            where = f" at {d.address:03X}h" if d.address is not None else ""
            return (
                f"diverged in frame {d.frame} at cycle {d.cycle} (+{d.frame_cycle} in the frame): "
                f"{d.kind}{where}: expected {d.expected}, actual {d.actual}"
            )
        gaps = self.gaps.count()
        return (
            f"NOT all equal: frames {span}: {self.frames_compared} compared and equal, "
            f"{gaps} not compared (gap)"
        )


def _event_at(rows: Rows, index: int) -> Event | None:
    """The event at `index` as a tuple (None: past the end)."""
    return tuple(rows[index].tolist()) if index < len(rows) else None  # type: ignore[return-value]


def _window(earlier: deque[Event], rows: Rows, stop: int) -> list[Event]:
    """The last WINDOW events before `stop` in the frame's `rows`, after the `earlier` frames' ones."""
    return (list(earlier) + as_events(rows[max(0, stop - WINDOW) : stop]))[-WINDOW:]


def describe(event: Event | None) -> str:
    if event is None:
        return "(nothing)"
    cycle, kind, address, value, p1 = event
    name = KIND_NAMES.get(kind & ~COPY_FLAG, f"kind {kind}")
    if kind & COPY_FLAG:
        name += " (copy mode)"
    if kind in (FETCH,):
        return f"{name} {address:03X}h={value:02X} p1={p1:02X} @{cycle}"
    if kind & ~COPY_FLAG in (1, 2):
        return f"{name} {address:02X}h={value:02X} p1={p1:02X} [{target_class(address, p1)}] @{cycle}"
    if kind == 3:
        return f"p1 {value:02X} @{cycle}"
    return f"{name} @{cycle}"


def target_class(address: int, p1: int) -> str:
    """What a MOVX selects, as the slot can tell (docs/hardware.md): RAM, latch (A7 = 1, P14 = 0), VDC."""
    if not p1 & 0x10:
        return "RAM" if address < 0x80 else "latch"
    return "VDC" if classified_as_vdc(address, p1) else "EXT"


def first_difference(expected: Rows | list[Event], actual: Rows | list[Event], tolerance: int) -> int | None:
    """Index of the first pair that differs (beyond `tolerance` cycles); None when all agree."""
    expected, actual = as_rows(expected), as_rows(actual)
    if expected.shape == actual.shape and np.array_equal(expected, actual):
        return None
    common = min(len(expected), len(actual))
    mine, theirs = expected[:common], actual[:common]
    differs = (mine[:, 1:] != theirs[:, 1:]).any(axis=1) | (np.abs(mine[:, 0] - theirs[:, 0]) > tolerance)
    found = np.flatnonzero(differs)
    if found.size:
        return int(found[0])
    if len(expected) != len(actual):
        return common
    return None


def classify(expected: Event | None, actual: Event | None, previous_fetch: int | None) -> tuple[str, str]:
    """(kind, detail) of a differing pair of events."""
    if expected is None:
        return "extra", "the console did more than the emulator"
    if actual is None:
        return "missing", "the console did less than the emulator"
    kind = expected[1]
    if kind != actual[1]:
        mine, theirs = (KIND_NAMES.get(event[1] & ~COPY_FLAG, "event") for event in (expected, actual))
        if expected[0] <= actual[0]:
            return f"missing {mine}", f"the console has no {mine} here: its next event is a {theirs}"
        return f"extra {theirs}", f"the console has a {theirs} the emulator does not: its next is a {mine}"
    fields = [
        name
        for name, mine, theirs in zip(("cycle", "", "address", "value", "p1"), expected, actual, strict=False)
        if name and mine != theirs
    ]
    detail = "differs in " + ", ".join(fields)
    if kind == FETCH:
        if expected[2] != actual[2]:
            sequential = previous_fetch is not None and expected[2] in (
                previous_fetch + 1,
                previous_fetch + 2,
            )
            return ("fetch" if sequential else "branch"), detail + " (non-sequential target)" * (
                not sequential
            )
        return "fetch", detail
    if kind == SYNC:
        return "frame-sync", detail
    return KIND_NAMES.get(kind & ~COPY_FLAG, "event"), detail


def choose_marker(frames: list[EmulatedFrame], kinds: tuple[str, ...]) -> str:
    """The frame marker both sides are cut at: the VSYNC hook, else 0402h, else the frame time."""
    later = frames[2:] or frames
    syncs = sum(int(np.count_nonzero(frame.rows[:, 1] == SYNC)) for frame in later)
    if syncs >= len(later) // 2 and syncs <= 2 * len(later):
        return "vsync"
    if "FETCH" in kinds:
        entries = sum(
            int(np.count_nonzero((f.rows[:, 1] == FETCH) & (f.rows[:, 2] == IRQ_ENTRY))) for f in later
        )
        if len(later) // 2 <= entries <= len(later) + len(later) // 2:
            return "irq"
    return "time"


def reports_full_p1(header: CaptureHeader) -> bool:
    """Whether the source's records carry the whole P1 latch (P13, P16, P17) rather than the slot's
    P10/P11/P14: the simulated adapter and MAME know it; a real adapter cannot see it."""
    if header.source in ("sim", "mame", "emulator"):
        return True
    return header.source == "file" and (not header.adapter or "simulated" in header.adapter)


class Check:
    """One check of `source` against `side` (built for the source's kinds and P1 view)."""

    def __init__(
        self,
        side: EmulatorSide,
        source: CaptureSource,
        *,
        frames: int | None,
        tolerance: int = 0,
        pictures: str = "auto",
        progress: Callable[[int], None] | None = None,
    ) -> None:
        if pictures not in PICTURE_MODES:
            raise HilbridgeError(f"pictures must be one of {', '.join(PICTURE_MODES)}, not {pictures!r}")
        if frames is not None and frames < 1:
            raise HilbridgeError(f"frames must be at least 1, not {frames}")
        if tolerance < 0:
            raise HilbridgeError(f"the tolerance is a number of cycles >= 0, not {tolerance}")
        self.side = side
        self.source = source
        self.frames = frames
        self.tolerance = tolerance
        self.progress = progress
        self.full_p1 = reports_full_p1(source.header)
        fetches = source.header.fetches
        if fetches not in FETCH_MODES:
            raise HilbridgeError(
                f"the capture's fetches are {fetches!r}: this check knows {', '.join(FETCH_MODES)}"
            )
        self.compressor = FetchCompressor() if fetches == FETCHES_COMPRESSED else None
        self.meta: deque[EmulatedFrame] = deque()
        self.result = CheckResult(
            "equal",
            frames,
            tolerance=tolerance,
            header=source.header,
            region=side.region,
            kinds=source.header.kinds,
            pictures=pictures,
        )
        # "always" draws the capture's picture every frame through its own VDC from power-on; "auto"
        # draws it only at a divergence (a frame whose bus events are all equal feeds the VDC model
        # exactly what the emulator's VDC was fed, so it draws the same picture)
        self.replay = PictureReplay(side.region, self.full_p1) if pictures == "always" else None
        self.draws = pictures != "never" and "MOVX_READ" in source.header.kinds
        if pictures != "never" and not self.draws:
            self.result.pictures_off = (
                "MOVX reads are not captured, so a replay cannot draw as the console did"
            )
        self.recent: deque[EmulatedFrame] = deque(maxlen=4)
        self.previous_actual: CutFrame | None = None
        self.expected_pictures: dict[int, EmulatedFrame] = {}
        self.windows = (deque(maxlen=WINDOW), deque(maxlen=WINDOW))

    # -- the emulator's blocks, keeping each frame's pictures and inputs for the comparison --------
    def _expected_blocks(self, probe: list[EmulatedFrame]) -> Iterator[Block]:
        def emulated() -> Iterator[EmulatedFrame]:
            yield from probe
            probe.clear()
            yield from self.side.frames()

        compressor = self.compressor
        for frame in emulated():
            self.meta.append(frame)
            yield as_rows(compressor.compress(frame.events)) if compressor is not None else frame.rows

    def run(self) -> CheckResult:
        started = time.perf_counter()
        try:
            self._run()
        finally:
            self.result.seconds = time.perf_counter() - started
        return self.result

    def _run(self) -> None:
        result = self.result
        side = self.side
        probe = [side.next_frame() for _ in range(PROBE_FRAMES)]
        marker = choose_marker(probe, result.kinds) if side.fetches else "time"
        if not side.fetches:
            result.notes.append(
                "fetches are not captured: no fetch or branch trace, the frames are cut by time, and "
                "resets and VSYNC markers after the first reset are not compared"
            )
        result.marker = marker
        if self.compressor is not None and side.fetches:
            result.notes.append(
                "the capture leaves sequential fetches out (the adapter firmware's rule): the emulator's "
                "fetches are compressed the same way, and P1 changes seen at a left-out fetch are "
                "compared where the adapter reports them (the next access it records)"
            )
        result.marker_text = MARKERS[marker]
        frame_end = side.console.frame_end_cycle
        expected = cut_frames(self._expected_blocks(probe), marker, frame_end)

        def anchor() -> int:
            if side.reset_cycle is None:
                raise HilbridgeError("the emulator never fetched 0400h: the BIOS did not start the cartridge")
            return side.reset_cycle

        mask = 0xFF if self.full_p1 else CART_P1_MASK
        blocks = capture_blocks(
            source_batches(self.source), mask, anchor, copies=self.full_p1, markers=side.fetches
        )
        actual = cut_frames(blocks, marker, frame_end, ends_on_frame=self.source.header.ends_on_frame)
        compared = 0
        while self.frames is None or compared < self.frames:
            mine = next(expected)
            if not compared:
                result.first_frame = mine.index
            theirs = next(actual, None)
            if theirs is None:
                if compared == 0:
                    raise HilbridgeError(
                        "the capture has no reset fetch of 0400h: nothing to align the emulator to",
                        hint="start the capture first, then switch the console on or press RESET",
                    )
                if self.frames is not None:
                    self._stop(mine.index, "the capture ended before this frame")
                break
            if theirs.end is None:
                if self.frames is None and not theirs.gap:
                    result.notes.append(f"the capture ends inside frame {mine.index}: it is not compared")
                else:
                    self._stop(mine.index, theirs.gap or "the capture ended inside this frame")
                break
            if theirs.gap:
                while mine.end is not None and mine.end < theirs.end - self.tolerance:
                    self._gap(mine, theirs.gap)
                    compared += 1
                    mine = next(expected)
                self._gap(mine, theirs.gap)
                compared += 1
                continue
            self._note_frame(mine)
            if not self._compare(mine, theirs):
                return
            compared += 1
            result.frames_compared += 1
            result.last_frame = mine.index
            if self.progress:
                self.progress(1)
        if result.gaps.ranges and result.verdict == "equal":
            result.verdict = "gap"

    def _stop(self, frame: int, reason: str) -> None:
        """The capture ended at `frame` before all the frames asked for were compared."""
        result = self.result
        last = result.first_frame + self.frames - 1 if self.frames is not None else frame
        result.gaps.ranges.append([frame, max(frame, last), reason])
        result.verdict = "gap"

    def _gap(self, frame: CutFrame, reason: str) -> None:
        self.result.gaps.add(frame.index, reason)
        self.result.last_frame = frame.index
        self._note_frame(frame)
        if self.replay is not None and not self.result.pictures_off:
            self.result.pictures_off = f"from frame {frame.index}: VDC writes lost in a gap"

    def _note_frame(self, frame: CutFrame) -> None:
        """Keep the emulator's pictures of the video frames that end in this frame; input-free frames."""
        end = frame.end if frame.end is not None else frame.start
        while self.meta and self.meta[0].end_cycle <= end:
            emulated = self.meta.popleft()
            self.recent.append(emulated)
            if emulated.unseen:
                self.result.unseen.add(
                    emulated.number, f"MOVX accesses in copy mode (P16 = 1), {emulated.unseen_vdc} to the VDC"
                )
                if emulated.unseen_vdc and self.draws and not self.result.pictures_off:
                    self.result.pictures_off = (
                        f"from frame {emulated.number}: the slot cannot see VDC writes in copy mode (P16 = 1)"
                    )
                    self.draws = False
                    self.replay = None
            if not emulated.input_held:
                self.result.input_free.add(emulated.number, "no key or joystick input held")
            if self.replay is not None:
                self.expected_pictures[emulated.number] = emulated

    # -- one frame -------------------------------------------------------------------------------
    def _compare(self, mine: CutFrame, theirs: CutFrame) -> bool:
        """Compare one frame; False (and the divergence recorded) when it differs."""
        tolerance = self.tolerance
        if abs(mine.start - theirs.start) > tolerance:
            self._diverge(
                mine, theirs, None, "frame-sync", f"the frame starts at {theirs.start}, not {mine.start}"
            )
            return False
        index = first_difference(mine.rows, theirs.rows, tolerance)
        if index is not None:
            self._diverge(mine, theirs, index, "", "")
            return False
        for window, frame in zip(self.windows, (mine, theirs), strict=True):
            window.extend(as_events(frame.rows[-WINDOW:]))
        self.previous_actual = theirs
        return self._compare_pictures(mine, theirs)

    def _compare_pictures(self, mine: CutFrame, theirs: CutFrame) -> bool:
        replay = self.replay
        if replay is None:
            return True
        done = replay.apply(theirs.events)
        if theirs.end is not None:
            done += replay.pictures_until(theirs.end)
        if self.result.pictures_off:
            self.expected_pictures.clear()
            return True
        for number, picture in done:
            emulated = self.expected_pictures.pop(number, None)
            if emulated is None or emulated.picture is None:
                continue
            self.result.pictures_compared += 1
            if not np.array_equal(emulated.picture, picture):
                self._diverge_picture(mine, emulated, picture)
                return False
        return True

    # -- the divergence ----------------------------------------------------------------------------
    def _diverge(
        self,
        mine: CutFrame,
        theirs: CutFrame,
        index: int | None,
        kind: str,
        detail: str,
        copies: bool = False,
    ) -> None:
        expected_rows, actual_rows = mine.rows, theirs.rows  # only the rows needed become tuples
        if index is None:
            expected_event = actual_event = None
            cycle = mine.start
        else:
            expected_event, actual_event = _event_at(expected_rows, index), _event_at(actual_rows, index)
            cycle = min(event[0] for event in (expected_event, actual_event) if event is not None)
        # the last fetch among the first `index` events stamped at or before the divergence
        before = np.flatnonzero(expected_rows[:, 0] <= cycle)[: index if index is not None else None]
        fetches = before[expected_rows[before, 1] == FETCH]
        previous_fetch = int(expected_rows[fetches[-1], 2]) if fetches.size else None
        if not kind:
            kind, detail = classify(expected_event, actual_event, previous_fetch)
        event = expected_event or actual_event
        pc, pc_source = self._pc_at(mine, expected_event, cycle)
        stop = index if index is not None else 0
        divergence = Divergence(
            frame=mine.index,
            cycle=cycle,
            frame_cycle=cycle - mine.start,
            kind=kind,
            address=event[2] if event is not None and event[1] not in (3,) else None,
            expected=describe(expected_event) if index is not None else f"frame start @{mine.start}",
            actual=describe(actual_event) if index is not None else f"frame start @{theirs.start}",
            detail=detail,
            pc=pc,
            pc_source=pc_source,
            expected_window=[describe(e) for e in _window(self.windows[0], expected_rows, stop)],
            actual_window=[describe(e) for e in _window(self.windows[1], actual_rows, stop)],
        )
        self._attach_pictures(divergence, mine, theirs, stop)
        self._finish(divergence)

    def _pc_at(self, mine: CutFrame, event: Event | None, cycle: int) -> tuple[int | None, str]:
        """The emulator's PC at the divergence: the opcode fetch of the instruction, when fetches are
        captured; otherwise the PC at the end of the emulator's frame."""
        if event is not None and event[1] == FETCH:
            return event[2], "the fetch itself"
        rows = mine.rows
        fetches = np.flatnonzero((rows[:, 1] == FETCH) & (rows[:, 0] < cycle))
        if fetches.size:  # the first of the fetches stamped at the last such cycle
            cycles = rows[fetches, 0]
            first = fetches[int(np.argmax(cycles == cycles[-1]))]
            return int(rows[first, 2]), "the last opcode fetch before it"
        return self.side.console.cpu.pc, "the emulator's PC when its frame ended (no fetches captured)"

    def _attach_pictures(self, divergence: Divergence, mine: CutFrame, theirs: CutFrame, stop: int) -> None:
        """The pictures of the video frame the divergence is in: the emulator's, and the console's,
        drawn from the emulator's VDC at that frame's start (both sides were equal up to there) and
        the captured accesses of the frame."""
        if not self.draws:
            return
        frame_end = self.side.console.frame_end_cycle
        emulated = next(
            (
                frame
                for frame in (*self.recent, *self.meta)
                if frame.end_cycle > divergence.cycle
                and (frame.number == 0 or frame_end(frame.number - 1) <= divergence.cycle)
            ),
            None,
        )
        if emulated is None or emulated.picture is None:
            return
        state = self.side.vdc_state_at(emulated)
        if state is None:
            return
        start = frame_end(emulated.number - 1) if emulated.number else 0
        replay = PictureReplay(self.side.region, self.full_p1, state=state, frame=emulated.number)
        earlier = self.previous_actual.rows if self.previous_actual is not None else NO_ROWS
        rows = np.concatenate((earlier, theirs.rows))
        rows = rows[(start <= rows[:, 0]) & (rows[:, 0] < emulated.end_cycle)]
        replay.apply(as_events(rows[np.lexsort(rows.T[::-1])]))  # sorted as tuples are: by cycle first
        pictures = replay.pictures_until(emulated.end_cycle)
        if pictures:
            divergence.picture_frame = emulated.number
            divergence.expected_picture = emulated.picture
            divergence.actual_picture = pictures[-1][1]

    def _diverge_picture(self, mine: CutFrame, emulated: EmulatedFrame, picture: np.ndarray) -> None:
        differs = np.argwhere(emulated.picture != picture)
        line, column = (int(v) for v in differs[0])
        divergence = Divergence(
            frame=mine.index,
            cycle=emulated.end_cycle,
            frame_cycle=emulated.end_cycle - mine.start,
            kind="picture",
            address=None,
            expected=f"colour {int(emulated.picture[line, column])} at line {line}, x {column}",
            actual=f"colour {int(picture[line, column])}",
            detail=f"{len(differs)} pixels of video frame {emulated.number} differ",
            pc=emulated.pc,
            pc_source="the emulator's PC when the frame ended",
            expected_window=[describe(e) for e in self.windows[0]],
            actual_window=[describe(e) for e in self.windows[1]],
            expected_picture=emulated.picture,
            actual_picture=picture,
            picture_frame=emulated.number,
        )
        self._finish(divergence)

    def _finish(self, divergence: Divergence) -> None:
        divergence.program = bytes(self.side.console.prog)
        self.result.divergence = divergence
        self.result.verdict = "diverged"
        self.result.last_frame = divergence.frame
