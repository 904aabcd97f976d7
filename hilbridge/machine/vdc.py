"""The Intel 8244 (NTSC) / 8245 (PAL) video and sound chip, timed as MAME 0.251 runs it.

Time. The CPU's clock is its only clock: every method takes the machine cycle of the access (an
access is stamped at the *end* of its instruction; docs/hardware.md, "Beam timing"). The beam position
of a cycle is computed the way MAME computes it, in integer attoseconds; the arithmetic is in
`timing.py` (`BeamTiming`, `Raster`, `Timeslices`), the VDC keeps the state it depends on:

* MAME runs the 8048 at ceil(clock / 15) cycles per second (`execute_clocks_to_cycles` rounds up), so
  one cycle lasts 10**18 // 357955 as (NTSC), a hair shorter than 15 / 5369317 s. After 300 frames a
  given cycle count is about 50 pixel clocks earlier on the beam than the exact ratio in `Region` says.
* A pixel clock lasts 10**18 // pixel_clock as; a frame is exactly htotal × vtotal of them, and at
  cycle 0 the beam is at (line 243, hpos 0).
* The screen rounds time to the *nearest* pixel (`screen_device::hpos`/`vpos`).
* Inside one scheduler timeslice MAME's CPU-local time advances by 15 clock periods per cycle
  (15 × (10**18 // clock) as, 4162 fs longer than a scheduler cycle on NTSC), and the slice starts
  where the last timer fired, or at the end of the last A1 read if that is later (the read calls
  MAME's irq callback with CLEAR_LINE, which synchronizes the scheduler and so ends the slice). An
  access's time is therefore slice start × T + cycles since × T_in (`Vdc._access_time`). (A timer's
  slice really starts at the first instruction boundary at or after its cycle; we take the cycle
  itself, up to one T_in − T early: no visible difference on any oracle cart.) This decides the
  pixel only when the beam is within ~0.001 pixel of a
  rounding edge, but over 300 frames of mid-frame colour changes that happens.
* Timer events (VBL at (242, 365), the hblank sound clock at hpos 366) take effect between MAME's CPU
  timeslices: an instruction sees an event at time t iff it *starts* at or after cycle t // T. Status
  reads therefore look at the MOVX's start, `cycle - 2`, while beam-derived bits (hstatus, A4/A5, T1)
  look at its end.

Drawing is lazy. MAME draws the picture up to the beam whenever A1/A2 is read or a video register
changes (`update_now`), using the registers as they are at that moment. We record the same spans
with a snapshot of the video registers, and turn them into pixels, collision bits and the
major-overlap bit only when someone needs them (end of frame, A1 or A2 read); see `video.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import numpy as np

from hilbridge.machine.sound import (
    NOISE,
    SHIFT_HIGH,
    SHIFT_LOW,
    SHIFT_MID,
    SHIFTS_PER_INTERRUPT,
    SOUND_INTERRUPT_ENABLE,
    AudioRecorder,
    SoundShifter,
    shift_many,
)
from hilbridge.machine.timing import (
    ATTOSECONDS_PER_SECOND,
    CHIP_TIMING,
    CLOCKS_PER_MACHINE_CYCLE,
    NEVER,
    BeamT1Edges,
    BeamTiming,
    Raster,
    Region,
    T1Edges,
    Timeslices,
)
from hilbridge.machine.video import (
    DRAWING_STATES,
    VISIBLE_LINES,
    VISIBLE_WIDTH,
    Picture,
    Renderer,
    drawing_bits,
    snapshot_of,
)

MOVX_CYCLES = 2
BULK_STATUS_READS = 16  # skipped status reads valued with array arithmetic from this many on
VISIBLE_AREA = VISIBLE_LINES * VISIBLE_WIDTH  # raster indices line * 360 + x end here
NO_SPAN = (0, 0, False)  # an empty `Vdc._t1_span`
IGNORED = ()  # `Vdc._plain_writes` of a write that does nothing before the frame end (falsy, as None)
# `Vdc._read_plan` for a register that reads 0, one computed at the read, a stored byte A0 locks
READS_ZERO, COMPUTED, LOCKED = -1, -2, -3

# A0 control bits
CONTROL_STROBE = 0x02
CONTROL_GRID = 0x08
CONTROL_DISPLAY = 0x20
# A1 status bits
STATUS_HSTATUS = 0x01
STATUS_SOUND = 0x04
STATUS_VBL = 0x08
STATUS_OVERLAP = 0x80  # major objects overlapped in a pixel drawn since the last read
STATUS_CLEARED_BY_READ = 0xCC  # sound, VBL, external overlap, major overlap

CONTROL = 0xA0
SHIFT_REGISTERS = (0xA7, 0xA8, 0xA9)
SOUND_CONTROL = 0xAA
SOUND_CLOCKED = frozenset((CONTROL, *SHIFT_REGISTERS, SOUND_CONTROL))  # writes that need the ticks up to date


# -- register map ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RegisterInfo:
    address: int
    canonical: int  # the address after mirror folding
    name: str
    write_mask: int | None  # None: writes are ignored
    read: str  # value | zero | status | collision | beam_y | beam_x
    lock: str  # objects | grid | "" (none)
    redraw: bool


def parse_register_map(text: str) -> tuple[RegisterInfo, ...]:
    """256 `RegisterInfo`, one per MOVX address, from the rows of `vdc_registers.tsv`."""
    rows: dict[int, tuple[str, int | None, str, str, bool, int]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        first, last, step, name, write_mask, read, lock, redraw, alias = line.split("\t")
        for address in range(int(first, 16), int(last, 16) + 1, int(step, 16)):
            if address in rows:
                raise ValueError(f"vdc_registers.tsv: address {address:02X} listed twice")
            mask = None if write_mask == "-" else int(write_mask, 16)
            rows[address] = (name, mask, read, "" if lock == "-" else lock, redraw == "yes", int(alias, 16))
    if sorted(rows) != list(range(256)):
        raise ValueError("vdc_registers.tsv must cover every address 00-FF exactly once")
    table = []
    for address in range(256):
        canonical = address & ~rows[address][5]
        name, mask, read, lock, redraw, _ = rows[canonical]
        table.append(RegisterInfo(address, canonical, name, mask, read, lock, redraw))
    return tuple(table)


@cache
def register_map() -> tuple[RegisterInfo, ...]:
    text = files("hilbridge.machine").joinpath("vdc_registers.tsv").read_text(encoding="utf-8")
    return parse_register_map(text)


LOCK_BITS = {"objects": CONTROL_DISPLAY, "grid": CONTROL_GRID, "": 0}  # the A0 bit that locks a register


@cache
def read_plan() -> tuple[tuple[int, ...], ...]:
    """Per A0 & DRAWING_STATES (the locks' bits), per address: the canonical address of a stored
    byte, LOCKED where A0 locks it, READS_ZERO for a register that reads 0 and COMPUTED for the
    others; a read of a stored byte (vdc_regs reads all 256 each frame) is one lookup."""
    return tuple(
        tuple(
            (LOCKED if control & LOCK_BITS[info.lock] else info.canonical)
            if info.read == "value"
            else READS_ZERO
            if info.read == "zero"
            else COMPUTED
            for info in register_map()
        )
        if control & DRAWING_STATES == control
        else ()  # never indexed: A0 & DRAWING_STATES has only the two bits
        for control in range(DRAWING_STATES + 1)
    )


class Vdc:
    """Registers, status, interrupt, T1, beam, sound clock and (lazy) picture of the VDC."""

    # Slots, not an instance dict: with its 56 attributes (past CPython 3.11's 30 shared keys) a
    # chip's dict is a plain one, on which attribute loads and method calls go unspecialized; the
    # MOVX paths make thousands of both a frame. (A test that replaces a method on one chip uses a
    # subclass, which has a dict.)
    __slots__ = (
        "_cycle_as",
        "_deferred_update",
        "_drift_least",
        "_drift_room",
        "_earlier_status_read_cycle",
        "_frame_end",
        "_frame_end_cycle",
        "_frame_pixels",
        "_htotal",
        "_info",
        "_last_frame_end_cycle",
        "_last_hpos",
        "_last_line",
        "_last_read_value",
        "_line0",
        "_line0_offset",
        "_line0_timer",
        "_next_irq_cache",
        "_next_vbl_frame",
        "_picture",
        "_pixel_as",
        "_plain_writes",
        "_plain_writes_now",
        "_quiet_until",
        "_read_plan",
        "_read_plan_now",
        "_skipped_status_read",
        "_slice_cycle_as",
        "_sound_irq_cycle",
        "_status_line",
        "_status_read_cycle",
        "_t1_next_span",
        "_t1_span",
        "_tick_offset",
        "_ticks_done",
        "_vbl_offset",
        "_write_plan",
        "audio",
        "chip",
        "collision_status",
        "control_status",
        "draw",
        "drawing_bits",
        "frames_completed",
        "irq_line",
        "latched_x",
        "latched_y",
        "lum_bright",
        "raster",
        "region",
        "registers",
        "renderer",
        "slices",
        "sound",
        "timing",
    )

    def __init__(self, region: Region, *, draw: bool = True, audio: bool = False) -> None:
        self.region = region
        self.chip = CHIP_TIMING[region.name]
        self.timing = BeamTiming.for_region(region)
        self.draw = draw
        self.registers = bytearray(256)
        self.sound = SoundShifter(self.registers)
        self.audio: AudioRecorder | None = AudioRecorder() if audio else None
        self.renderer = Renderer(hides_high_characters=region.hides_high_characters)
        # per A0 & DRAWING_STATES, per address: the bits whose change can change the picture (a
        # write that changes none skips the redraw; tests swap in all ones, "always")
        self.drawing_bits = tuple(
            drawing_bits(control & DRAWING_STATES) for control in range(DRAWING_STATES + 1)
        )
        self._info = register_map()
        # per address, what a write needs, in one tuple (canonical address, write mask or None, lock
        # bit, redraw, sound-clocked, short: not sound-clocked, so `write`'s short paths may take
        # it): the register table decided once, not at each of the thousands of writes a frame
        # some carts make
        self._write_plan = tuple(
            (
                info.canonical,
                mask,
                LOCK_BITS[info.lock] | (0xFF if info.canonical >= 0xF0 else 0),
                info.redraw,
                info.canonical in SOUND_CLOCKED,
                info.canonical not in SOUND_CLOCKED,
            )
            for info in self._info
            for mask in [info.write_mask if info.canonical < 0xF0 else None]
        )
        self._read_plan = read_plan()  # shared by every chip: the register map's
        self._plan_writes()
        self.raster = Raster(self.timing, self.chip)
        self.slices = Timeslices(self.raster)
        self._cycle_as = self.timing.cycle_as
        self._pixel_as = self.timing.pixel_as
        self._slice_cycle_as = self.timing.slice_cycle_as
        self._htotal = region.htotal
        self._frame_pixels = self.raster.frame_pixels
        self._line0_offset = self.raster.line0_offset
        self._vbl_offset = self.raster.vbl_offset
        self._tick_offset = self.raster.tick_offset
        # `_beam_pixel` tests both ends of the drift with one big-int division: the least end's
        # remainder in its pixel leaves room for the rest of the drift
        least, most = self._drift_bounds()
        self._drift_least = least
        self._drift_room = self._pixel_as - (most - least)
        self._status_line = (NEVER, 0, 0)  # `_status_value`'s last line: none yet
        self._last_frame_end_cycle = (-1, 0)  # `frame_end_cycle`'s last (frame, answer): none yet
        self.reset()

    def _plan_writes(self) -> None:
        """`_plain_writes` from `_write_plan` and `drawing_bits` (tests that swap either plan again).

        Per A0 & DRAWING_STATES, per address: (canonical address, write mask, the bits whose change
        can change the picture, redraw) of a plain register (stored under a mask, not
        sound-clocked) that A0 so does not lock; IGNORED for a write that does nothing before the
        frame end (a locked or unmapped register, or a read-only or unused one without a redraw,
        which vdc_regs writes some forty times a frame); else None. The locks and the drawing
        bits depend on the same two A0 bits, so `write`'s short paths (most writes) look up one
        entry instead of testing the lock, the mask and the kind."""

        def entry(control: int, bits: bytes, plan: tuple) -> tuple[int, int, int, bool] | tuple[()] | None:
            a, mask, lock, redraw, _sound_clocked, short = plan
            if not short:
                return None
            if control & lock or (mask is None and not redraw):
                return IGNORED
            return None if mask is None else (a, mask, bits[a], redraw)

        self._plain_writes = tuple(
            tuple(entry(control, bits, plan) for plan in self._write_plan)
            if control & DRAWING_STATES == control
            else ()  # never indexed: A0 & DRAWING_STATES has only the two bits
            for control in range(DRAWING_STATES + 1)
            for bits in [self.drawing_bits[control]]
        )
        self._plan_control()

    def _plan_control(self) -> None:
        """Take the write and read plans of A0's display and grid bits as they are now (after every
        change of A0): each MOVX then indexes one tuple by its address (vdc_regs makes some 500 a
        frame) instead of first reading A0 to choose the tuple."""
        drawing_state = self.registers[CONTROL] & DRAWING_STATES
        self._plain_writes_now = self._plain_writes[drawing_state]
        self._read_plan_now = self._read_plan[drawing_state]

    # -- life cycle -------------------------------------------------------------------------------
    def reset(self) -> None:
        """Power-on state at cycle 0. (MAME has no VDC reset: the console's reset key leaves it alone.)"""
        self.registers[:] = bytes(256)
        self._plan_control()
        self.sound.reset()
        self.control_status = 0
        self.collision_status = 0
        self.irq_line = False
        self.latched_x = 0
        self.latched_y = 0
        self.lum_bright = False
        self.frames_completed = 0
        self._next_vbl_frame = 0
        self._ticks_done = 0
        self._sound_irq_cycle: int | None = None
        self._set_frame_end(self._frame_pixels)
        self._last_line = 0  # MAME m_last_partial_scan
        self._last_hpos = 0  # MAME m_partial_scan_hpos
        self._picture: Picture | None = None
        self.slices.reset()
        self._quiet_until = 0  # instruction starts below this see no new timer event
        self._next_irq_cache: tuple[int, int] | None = None  # (asked at, answer) until CPU action
        self._last_read_value = 0  # what the last A1/A2 read returned (bits it may have cleared)
        self._status_read_cycle = 0  # end of the last A1 read: MAME starts a new timeslice there
        self._earlier_status_read_cycle = 0  # the one before: what the last read's own time depends on
        self._t1_span = NO_SPAN  # (first, last + 1) cycle over which T1 is known, its value
        self._t1_next_span = NO_SPAN  # the same for T1's next value
        self._deferred_update = -1  # end cycle of a redraw with the current picture not yet recorded
        self._skipped_status_read = (-1, 0)  # (cycle, value) of the last skipped A1 read (`peek`)
        self.renderer.reset()
        if self.audio is not None:
            self.audio = AudioRecorder()

    def _set_frame_end(self, pixel: int) -> None:
        """The current frame ends at global pixel `pixel` (243, 0); what follows from it, worked out
        once a frame instead of at each access or redraw."""
        self._frame_end = pixel
        # Accesses ending before this cycle are before the frame end: their time is at most a few
        # hundred picoseconds later than cycle × T (15 clock periods per cycle for at most the ~12
        # cycles since the last hblank timer), far less than a cycle. So reads and writes there end
        # no frame and need not be placed on the beam.
        self._frame_end_cycle = self.timing.first_cycle_at_pixel(pixel) - 1
        self._line0 = pixel - self._frame_pixels + self._line0_offset  # global pixel of (0, 0)
        # instructions starting before this cycle have not seen MAME's scanline-0 timer
        self._line0_timer = self._line0 * self._pixel_as // self._cycle_as

    # -- beam -------------------------------------------------------------------------------------
    def _beam_pixel(self, cycle: int) -> int:
        """Global pixel (nearest) at `cycle` as MAME's CPU-local time places an access there.

        Every redraw, status read, beam read and traced access asks. The access time is the
        scheduler's, `cycle × cycle_as`, plus a drift that grows with the cycles since the slice
        start, which is at least a MOVX and at most about a line back (`_drift_bounds`). Where both
        ends of that range round to one pixel (all but a few accesses in a thousand), the slice
        start (`_access_time`) is not looked up."""
        time = cycle * self._cycle_as + self._drift_least
        pixel_as = self._pixel_as
        pixel = time // pixel_as
        if time - pixel * pixel_as < self._drift_room:  # time + most (see __init__) is in that pixel too
            return pixel
        return (self._access_time(cycle) + pixel_as // 2) // pixel_as

    def _drift_bounds(self) -> tuple[int, int]:
        """For `_beam_pixel`: the least and most access time past the scheduler's (plus half a
        pixel) that a slice start from 2 (`MOVX_CYCLES`) to a line's cycles (plus the MOVX and
        rounding) before the access gives. No slice start is further back: power-on starts one,
        and from the first line on the line timer starts one every line; a later one (another
        timer, an A1 read) is nearer."""
        period = self.slices.line_timer[1]
        cycle_as, drift = self._cycle_as, self._slice_cycle_as - self._cycle_as
        furthest = period // cycle_as + MOVX_CYCLES + 2
        least, most = sorted((MOVX_CYCLES * drift, furthest * drift))
        half = self._pixel_as // 2
        return least + half, most + half

    def position(self, cycle: int) -> tuple[int, int]:
        """(line, hpos) of the beam at `cycle` (line 0 = first visible line)."""
        return self.raster.position_of(self._beam_pixel(cycle))

    def t1(self, cycle: int) -> bool:
        """The T1 input (vblank OR hblank) sampled at `cycle`: `raster.t1(*position(cycle))`.

        Games poll T1 every few cycles (JT1/JNT1 loops too short to skip), so the answer is kept
        with the span of cycles over which it holds (`_t1_sample`)."""
        low, high, value = self._t1_span
        if low <= cycle < high:
            return value
        return self._t1_sample(cycle)

    def _t1_sample(self, cycle: int) -> bool:
        """T1 at `cycle`, and the span from `cycle` on over which it keeps that value, and the span
        of the next value (a poll that left one span mostly asks in the next).

        The spans are computed with this cycle's slice start: the first cycle at which the access
        time so reckoned reaches the raster's next T1 change pixel ends one. Later cycles have the
        same or a later slice start (with the A1 reads as they are), so their access time is at
        most that (15 clock periods per cycle exceed a scheduler cycle, `slice_cycle_as` >
        `cycle_as`) and at least their scheduler time, `cycle × cycle_as`, which starts the next
        span; a slice's drift is far below a cycle. An A1 read can give earlier cycles an earlier
        slice start again: it drops the spans (`_note_status_read`)."""
        low, high, value = self._t1_next_span
        if low <= cycle < high:
            self._t1_span = self._t1_next_span
            return value
        begun = self._slice_start(cycle - MOVX_CYCLES)
        pixel_as, slice_cycle_as = self._pixel_as, self._slice_cycle_as
        base = begun * self._cycle_as - begun * slice_cycle_as + pixel_as // 2  # time + half a pixel
        raster = self.raster
        value, change = raster.t1_run((base + cycle * slice_cycle_as) // pixel_as)
        following, next_change = raster.t1_run(change)
        # first cycles at which the access time so reckoned reaches those pixels
        self._t1_span = (cycle, -((base - change * pixel_as) // slice_cycle_as), value)
        next_high = -((base - next_change * pixel_as) // slice_cycle_as)
        self._t1_next_span = (self.timing.first_cycle_at_pixel(change), next_high, following)
        return value

    def t1_edges(self) -> T1Edges:
        return BeamT1Edges(self.t1, self.raster)

    # -- timer events (VBL, sound clock) -----------------------------------------------------------
    def _sync_events(self, start: int) -> None:
        """Apply every timer event an instruction starting at cycle `start` has seen.

        The hblank sound clock fires every line, but with the sound interrupt off (A0 b2) and no
        audio recorded its ticks only move the sound shift register, which nothing reads back (A7-A9
        read as 0): they are then run when a write to A0 or A7-AA needs them (`_sync_ticks`)."""
        if start < self._quiet_until:
            return
        next_vbl = self.raster.vbl_cycle(self._next_vbl_frame)
        while next_vbl <= start:
            self.control_status |= STATUS_VBL
            self.irq_line = True
            self._next_vbl_frame += 1
            next_vbl = self.raster.vbl_cycle(self._next_vbl_frame)
        if self.audio is None and not self.registers[CONTROL] & SOUND_INTERRUPT_ENABLE:
            self._quiet_until = next_vbl
            return
        next_tick = self._sync_ticks(start)
        # nothing fires before the next VBL or hblank tick
        self._quiet_until = next_vbl if next_vbl < next_tick else next_tick

    def _sync_ticks(self, start: int) -> int:
        """Run the hblank ticks an instruction starting at `start` has seen; the first instruction
        start that sees the next one."""
        next_tick = self.raster.tick_cycle(self._ticks_done)
        if next_tick <= start:
            self._run_ticks(self.raster.ticks_before(start))
            next_tick = self.raster.tick_cycle(self._ticks_done)
        return next_tick

    def _run_ticks(self, target: int) -> None:
        sound = self.sound
        audio = self.audio
        self._sound_irq_cycle = None
        while self._ticks_done < target:
            if not (sound.pending or sound.written):
                mask = 3 if self.registers[SOUND_CONTROL] & 0x20 else 15
                phase = (sound.prescaler + 1) & mask
                idle = 0 if phase == 0 else mask + 1 - phase
                if idle > target - self._ticks_done:
                    idle = target - self._ticks_done
                if audio is None and idle < target - self._ticks_done:
                    self._run_shifts(mask, target)
                    continue
                sound.prescaler = (sound.prescaler + idle) & 0xFF
                self._ticks_done += idle
                if self._ticks_done >= target:
                    break
            if sound.tick():
                self.control_status |= STATUS_SOUND
                self.irq_line = True
            if audio is not None:
                tick_pixel = self._tick_offset + self._ticks_done * self._htotal
                audio.set_level(tick_pixel * self.timing.pixel_as, sound.level())
            self._ticks_done += 1

    def _run_shifts(self, mask: int, target: int) -> None:
        """Ticks up to `target` with nothing pending or written and no audio recorded, through the
        last one that shifts, in one go: each prescaler rollover (every mask + 1 ticks) shifts the
        register once and nothing else happens (what `SoundShifter.tick` does one tick at a time;
        a game with sound runs two loop passes and a call per shift otherwise)."""
        sound = self.sound
        registers = self.registers
        period = mask + 1
        phase = (sound.prescaler + 1) & mask
        first = 1 if phase == 0 else period - phase + 1  # ticks up to and with the first rollover
        shifts = (target - self._ticks_done - first) // period + 1
        noise = bool(registers[SOUND_CONTROL] & NOISE)
        signal = registers[SHIFT_HIGH] << 16 | registers[SHIFT_MID] << 8 | registers[SHIFT_LOW]
        signal, sound.output = shift_many(signal, noise, shifts)
        registers[SHIFT_HIGH] = signal >> 16
        registers[SHIFT_MID] = (signal >> 8) & 0xFF
        registers[SHIFT_LOW] = signal & 0xFF
        count = sound.count + shifts
        if count >= SHIFTS_PER_INTERRUPT:
            if registers[CONTROL] & SOUND_INTERRUPT_ENABLE:
                self.control_status |= STATUS_SOUND
                self.irq_line = True
            count %= SHIFTS_PER_INTERRUPT
        sound.count = count
        ticks = first + (shifts - 1) * period
        sound.prescaler = (sound.prescaler + ticks) & 0xFF
        self._ticks_done += ticks

    def irq(self, cycle: int) -> bool:
        """/INT as an instruction starting at `cycle` sees it (MAME checks before each instruction)."""
        self._sync_events(cycle)
        return self.irq_line

    def next_irq_event(self, cycle: int) -> int:
        """First instruction-start cycle > `cycle` at which /INT can rise without CPU action.
        (T1, which changes three times a line, has its own: `next_t1_change`.)"""
        cached = self._next_irq_cache
        if cached is not None and cached[0] <= cycle < cached[1]:
            return cached[1]
        self._sync_events(cycle)
        event = self.raster.vbl_cycle(self._next_vbl_frame)
        if self.registers[CONTROL] & SOUND_INTERRUPT_ENABLE:
            if self._sound_irq_cycle is None:
                tick = self._ticks_done + self.sound.ticks_to_24th_shift() - 1
                self._sound_irq_cycle = self.raster.tick_cycle(tick)
            event = min(event, self._sound_irq_cycle)
        event = max(event, cycle + 1)
        self._next_irq_cache = (cycle, event)
        return event

    def read_horizon(self, address: int, cycle: int, mask: int = 0xFF) -> int:
        """First end-of-MOVX cycle after a read of `address` ending at `cycle` at which reading it
        again (with no write in between) might return another value in the bits of `mask`.

        The CPU skips polling loops up to here; the reads it skips would only have drawn more of an
        unchanged picture, which the next real read does in one go. A loop that does not look at A1's
        hstatus bit (which changes three times a line) may leave bit 0 out of `mask` and get each
        skipped read's value from `peek()`; bits a read clears always end the horizon."""
        info = self._info[address & 0xFF]
        kind = info.read
        if kind in ("value", "zero"):
            return NEVER
        if kind in ("beam_y", "beam_x"):
            return NEVER if not self.registers[CONTROL] & CONTROL_STROBE else cycle + 1
        cleared = STATUS_CLEARED_BY_READ if kind == "status" else 0xFF
        if kind == "status" and not mask & STATUS_OVERLAP:
            # skipped reads take and clear the overlap bit one by one (`peek`): a loop that does not
            # look at it goes on through the lines where overlapping objects set it again
            cleared &= ~STATUS_OVERLAP
        if self._last_read_value & cleared:
            return cycle + 1  # that read cleared bits: the next one reads them as 0
        picture = self._current_picture()
        pixel = self._beam_pixel(cycle)
        # Neither horizon goes past the end of the read's frame, where the rest of it is drawn at
        # once. (After the read, that end is `_frame_end`; derived from the pixel, it also holds for
        # a horizon asked without a read.)
        frame_end = pixel - pixel % self._frame_pixels + self._frame_pixels
        if kind == "collision":
            if not picture.enable or not picture.objects_on:
                return NEVER
            marked = min(frame_end, self._next_marked_pixel(pixel, picture.collision_positions()))
            return self._cycle_past(marked, cycle)
        # status: events (bits a read clears, so a skipped read would have changed what the next
        # one returns: never skipped, whatever the mask), hstatus and, if the loop looks at it, the
        # major-overlap bit
        horizon = self.next_irq_event(cycle - MOVX_CYCLES) + MOVX_CYCLES
        if mask & STATUS_HSTATUS:
            hstatus = self.raster.next_hstatus_change(pixel)
            horizon = min(horizon, max(cycle + 1, self.timing.first_cycle_at_pixel(hstatus) - 1))
        if mask & STATUS_OVERLAP and picture.objects_on and picture.overlap_positions().size:
            overlap = min(frame_end, self._next_marked_pixel(pixel, picture.overlap_positions()))
            horizon = min(horizon, self._cycle_past(overlap, cycle))
        return max(horizon, cycle + 1)

    def peek(self, address: int, cycle: int) -> int:
        """What a read of `address` ending at `cycle`, one the CPU skipped under `read_horizon(...,
        mask)`, returns. Its side effects are those of the read (MAME made it): under the horizon
        they clear nothing but a status read's overlap bit, which the next skipped read may see set
        again. Asked again for the same cycle (the CPU's `peek_read` after the board was told of the
        skipped reads), the same answer, without a second read."""
        info = self._info[address & 0xFF]
        if info.read == "collision":
            self._draw_to_beam(cycle)
            return self._collect_collisions()
        if info.read != "status":
            return self.read(address, cycle)  # no side effects for the other kinds
        done, value = self._skipped_status_read
        if cycle == done:
            return value
        self._sync_events(cycle - MOVX_CYCLES)
        value = self._status_read(cycle)
        self._skipped_status_read = (cycle, value)
        return value

    def skip_reads(self, address: int, first: int, period: int, count: int) -> None:
        """`count` reads skipped under `read_horizon` (every `period` cycles from `first`) that no one
        is told of: what the last one, which the CPU then `peek`s, depends on. A status read's
        timeslice starts at the read before it, and its overlap bit is what was drawn since that
        read, whose beam position depends on the read before that one."""
        if count < 2 or self._info[address & 0xFF].read != "status":
            return
        last_but_one = first + (count - 2) * period
        picture = self._current_picture()
        if picture.objects_on and picture.overlap_positions().size:
            self._note_status_read(last_but_one - period)
            self.peek(address, last_but_one)
        else:
            self._note_status_read(last_but_one)

    def peek_reads(self, address: int, first: int, period: int, count: int) -> list[int]:
        """What `count` reads skipped under `read_horizon` (every `period` cycles from `first`) would
        return, as `peek` one by one would. Where no pixel of the picture can set the overlap bit, a
        status read's value is its beam's hstatus over bits the horizon keeps unchanged, so the
        skipped reads are not drawn: the CPU's `peek_read` after the skip draws up to the last one
        in one go. Where cells overlap, each read's overlap bit is looked up in the picture's
        overlap positions (`_overlap_status_reads`)."""
        if self._info[address & 0xFF].read != "status":
            return [self.peek(address, first + index * period) for index in range(count)]
        picture = self._current_picture()
        if picture.objects_on and picture.overlap_positions().size:
            if count >= BULK_STATUS_READS:
                return self._overlap_status_reads(address, first, period, count)
            return [self.peek(address, first + index * period) for index in range(count)]
        if count >= BULK_STATUS_READS:
            found = self._status_reads(first, period, count)
            if found is not None:
                return found
        values = []
        for cycle in range(first, first + count * period, period):
            self._sync_events(cycle - MOVX_CYCLES)
            pixel = self._beam_pixel(cycle)
            self._note_status_read(cycle)
            values.append(self._status_value(pixel))
        return values

    def read_positions(
        self, address: int, first: int, period: int, count: int
    ) -> tuple[list[int], list[int]] | None:
        """Lines and hpos of the beam at `count` reads skipped under `read_horizon` (every `period`
        cycles from `first`), as `position` gives them right after each read's `peek`, asked before
        they are peeked (a bus trace places every read; `peek_reads` then values them in bulk).
        Status reads only: each one's timeslice starts at the read before, which is what
        `_read_pixels` reckons; None for other reads, or where it gives none."""
        if self._info[address & 0xFF].read != "status" or period < MOVX_CYCLES:
            return None
        self._sync_events(first - MOVX_CYCLES)
        pixels = self._read_pixels(first, period, count)
        if pixels is None:
            return None
        lines, hpos = self.raster.positions_of(pixels)
        return lines.tolist(), hpos.tolist()

    def _status_reads(self, first: int, period: int, count: int) -> list[int] | None:
        """`peek_reads` of the status register with array arithmetic, when no timer event reaches
        the VDC among the reads (None otherwise)."""
        last = first + (count - 1) * period
        self._sync_events(first - MOVX_CYCLES)
        if period < MOVX_CYCLES or last - MOVX_CYCLES >= self._quiet_until:
            return None
        pixels = self._read_pixels(first, period, count)
        if pixels is None:
            return None
        self._status_read_cycle = last - period  # as the reads before the last one leave it
        self._note_status_read(last)
        steady = self.control_status | (self.registers[CONTROL] & CONTROL_STROBE)
        return (self.raster.hstatus_of(pixels) * STATUS_HSTATUS | steady).tolist()

    def _read_pixels(self, first: int, period: int, count: int) -> np.ndarray | None:
        """Beam pixels of `count` status reads every `period` (>= 2) cycles from `first`, the first
        one's timeslice as `_slice_start` says now, each later one's starting at the later of the
        scheduler's (`Timeslices.starts`) and the read before's end; None where `starts` gives
        none. Attoseconds are counted from the first read's slice, so that they fit 64 bits."""
        scheduled = self.slices.starts(first - MOVX_CYCLES, period, count)
        if scheduled is None:
            return None
        cycles = np.arange(count, dtype=np.int64) * period + first
        begun = scheduled
        begun[1:] = np.maximum(scheduled[1:], cycles[:-1])  # the read before ended a slice
        begun[0] = self._slice_start(first - MOVX_CYCLES)
        base = int(begun[0])
        cycle_as, slice_cycle_as, pixel_as = self._cycle_as, self._slice_cycle_as, self._pixel_as
        pixel_base, rest = divmod(base * cycle_as + pixel_as // 2, pixel_as)
        since = begun - base
        return pixel_base + (rest + since * cycle_as + (cycles - begun) * slice_cycle_as) // pixel_as

    def _overlap_status_reads(self, address: int, first: int, period: int, count: int) -> list[int]:
        """`peek_reads` of the status register where cells overlap: one read made as `peek` makes
        it, then the reads after it valued in bulk (`_overlap_run`) up to the first that sees a
        timer event or the frame end, which is again made by `peek`, and so on."""
        values: list[int] = []
        done = 0
        while done < count:
            values.append(self.peek(address, first + done * period))
            done += 1
            run = self._overlap_run(first + done * period, period, count - done)
            values += run
            done += len(run)
        return values

    def _overlap_run(self, first: int, period: int, count: int) -> list[int]:
        """Up to `count` status reads every `period` cycles from `first`, right after a `peek`, as
        `peek` one by one would value them and leave the chip, while they see no timer event and
        end before the frame end; [] where that is fewer than `BULK_STATUS_READS` or the slice
        arithmetic cannot say (the caller then peeks the next read).

        Within a frame a read draws the raster from where the drawing stopped up to its beam
        (raster index line * 360 + min(hpos, 360), nothing in the VBLANK lines above line 0 or on
        line 0 before MAME's scanline-0 timer, as `_draw_to_beam`), all with the current picture,
        and the peek before left the overlap cursor there and the latch clear: so a read's
        overlap bit is whether an overlap position lies between the previous read's raster index
        and its own. The last read is then drawn to, as it would be, in one go."""
        if period < MOVX_CYCLES:
            return []
        # reads that start before the next timer event and end before the frame end's cycle
        n = min(
            count,
            (self._quiet_until + MOVX_CYCLES - 1 - first) // period + 1,
            (self._frame_end_cycle - first) // period + 1,
        )
        if n < BULK_STATUS_READS:
            return []
        pixels = self._read_pixels(first, period, n)
        if pixels is None or (pixels[1:] < pixels[:-1]).any():
            return []
        past = np.flatnonzero(pixels >= self._frame_end)
        if past.size:
            pixels = pixels[: past[0]]
            n = len(pixels)
            if n < BULK_STATUS_READS:
                return []
        cycles = np.arange(n, dtype=np.int64) * period + first
        htotal = self._htotal
        into = pixels - self._line0
        line, hpos = np.divmod(into, htotal)
        raster = line * VISIBLE_WIDTH + np.minimum(hpos, VISIBLE_WIDTH)
        drawn = self._last_line * VISIBLE_WIDTH + min(self._last_hpos, VISIBLE_WIDTH)
        undrawn = (into < 0) | ((into < htotal) & (cycles - MOVX_CYCLES < self._line0_timer))
        raster[undrawn] = drawn
        positions = self._current_picture().overlap_positions()
        # the pixels rise (checked above), so each read reaches at least as far as the one before
        before = np.searchsorted(positions, raster)  # overlap positions below each read's reach
        overlaps = np.diff(before, prepend=np.searchsorted(positions, drawn)) > 0
        steady = self.control_status | (self.registers[CONTROL] & CONTROL_STROBE)
        status = self.raster.hstatus_of(pixels) * STATUS_HSTATUS | overlaps * STATUS_OVERLAP | steady
        values = status.tolist()
        last = int(cycles[-1])
        self._draw_to_beam(last, int(pixels[-1]))
        self.renderer.resolve(collisions=False)  # the overlap bits taken, as the reads took them
        self.irq_line = False
        self._last_read_value = values[-1]
        self._status_read_cycle = last - period  # as the reads before the last one leave it
        self._note_status_read(last)
        self._skipped_status_read = (last, values[-1])
        return values

    def _cycle_past(self, pixel: int, cycle: int) -> int:
        """A cycle > `cycle` no later than the first read whose drawing reaches global `pixel`."""
        if pixel >= NEVER:
            return NEVER
        return max(cycle + 1, self.timing.first_cycle_at_pixel(pixel + 1) - 1)

    def _next_marked_pixel(self, pixel: int, positions: np.ndarray) -> int:
        """First global pixel >= `pixel` whose visible raster index (line * 360 + x) is in `positions`
        (sorted), assuming the picture stays as it is."""
        if not positions.size:
            return NEVER
        frame_start = pixel - pixel % self._frame_pixels
        for base in (frame_start, frame_start + self._frame_pixels):
            line0 = base + self._line0_offset
            raster = pixel - line0
            line, x = divmod(max(raster, 0), self._htotal)
            index = line * VISIBLE_WIDTH + min(x, VISIBLE_WIDTH) if raster >= 0 else 0
            found = int(np.searchsorted(positions, index))
            if found < positions.size:
                y, x = divmod(int(positions[found]), VISIBLE_WIDTH)
                return line0 + y * self._htotal + x
        return NEVER

    def next_t1_change(self, cycle: int) -> int:
        """A cycle > `cycle` not later than the first one at which t1() differs from t1(cycle)."""
        timing = self.timing
        # one cycle early: the local time of an access can be a hair later than cycle × T
        change = timing.first_cycle_at_pixel(self.raster.next_t1_change_pixel(self._beam_pixel(cycle))) - 1
        return max(change, cycle + 1)

    # -- drawing bookkeeping (MAME screen_device::update_now / update_partial) ---------------------
    def _current_picture(self) -> Picture:
        if self._picture is None:
            r = self.registers
            self._picture = self.renderer.picture(snapshot_of(r))
        return self._picture

    def _draw_since_update(self, end: int) -> None:
        """Record the raster range (line * 360 + x, the visible area only) from where the last
        update stopped up to `end` with the current picture and LUM: MAME's update_partial of the
        rest of that line, the whole lines after it and update_now's part of the line it reaches,
        which are consecutive raster ranges drawn with the same registers, so one range
        (`tests/machine/test_vdc_update_ranges.py` checks it against those three steps)."""
        hpos = self._last_hpos  # min(hpos, VISIBLE_WIDTH) without the builtin call, each redraw
        start = self._last_line * VISIBLE_WIDTH + (hpos if hpos < VISIBLE_WIDTH else VISIBLE_WIDTH)
        if end > VISIBLE_AREA:
            end = VISIBLE_AREA
        if start < end:
            picture = self._picture  # `_current_picture` without the call while it is known
            if picture is None:
                picture = self._current_picture()
            self.renderer.add_range(start, end, picture, self.lum_bright)

    def _update_now(self, line: int, hpos: int) -> None:
        """MAME update_now with the beam at (`line`, `hpos`): draw up to the pixel before it and
        note where drawing stopped (even when that is left of where it was on the same line)."""
        if line < self._last_line or (line == self._last_line and hpos == self._last_hpos):
            return
        self._draw_since_update(line * VISIBLE_WIDTH + (hpos if hpos < VISIBLE_WIDTH else VISIBLE_WIDTH))
        self._last_line, self._last_hpos = line, hpos

    def _record_deferred_update(self) -> None:
        """Record the redraw a write with no effect on the picture deferred (see `write`)."""
        cycle = self._deferred_update
        if cycle >= 0:
            self._deferred_update = -1
            self._draw_to_beam(cycle)

    def _catch_up(self, pixel: int) -> None:
        """End every frame whose end (line 243, hpos 0) is at or before global pixel `pixel`."""
        if self._deferred_update >= 0:
            self._record_deferred_update()
        while pixel >= self._frame_end:
            # A line an update left half drawn is finished from where it stopped, as MAME 0.251
            # does (not redrawn from x = 0 with the final registers: fixtures wait_timer, frame 55
            # NTSC, frames 10, 12, 17, 21, 47 and 58 PAL).
            self._draw_since_update(VISIBLE_AREA)
            self.renderer.end_frame(self.draw)
            self.frames_completed += 1
            self._set_frame_end(self._frame_end + self._frame_pixels)
            self._last_line = 0
            self._last_hpos = 0

    def _draw_to_beam(self, cycle: int, pixel: int | None = None) -> None:
        if pixel is None:
            pixel = self._beam_pixel(cycle)
        if pixel >= self._frame_end or self._deferred_update >= 0:  # `_catch_up` has work to do
            self._catch_up(pixel)
        into_frame = pixel - self._line0
        if into_frame < 0:  # lines 243-262 (VBLANK) have nothing to draw
            return
        if into_frame < self._htotal and cycle - MOVX_CYCLES < self._line0_timer:
            # MAME's scanline-0 timer (which resets the partial-update line from 243 to 0) has not
            # fired yet for an instruction that started before it: update_now skips line 0
            return
        self._update_now(into_frame // self._htotal, into_frame % self._htotal)

    def run_to(self, cycle: int) -> None:
        """Catch up timer events, finished frames and sound to `cycle`."""
        self._sync_events(cycle)
        self._catch_up(self.timing.pixel_at(cycle))

    def frame_end_cycle(self, frame: int) -> int:
        """First cycle at which frame `frame` (0-based from power-on) is complete: line 243 reached.

        The console asks after every run of CPU blocks, nearly always for the same frame: the last
        answer is kept (it depends on `frame` alone)."""
        asked, cycle = self._last_frame_end_cycle
        if frame != asked:
            cycle = self.timing.frame_end_cycle(frame)
            self._last_frame_end_cycle = (frame, cycle)
        return cycle

    def _access_time(self, cycle: int) -> int:
        """MAME's CPU-local time (attoseconds) of an access at the end of a MOVX ending at `cycle`."""
        begun = self._slice_start(cycle - MOVX_CYCLES)
        return begun * self._cycle_as + (cycle - begun) * self._slice_cycle_as

    def _slice_start(self, start: int) -> int:
        """Cycle at which the timeslice of an instruction starting at `start` began: the last
        slice-ending timer or the latest A1 read that ended by then (never less for a later start)."""
        low, high, begun = self.slices.cache
        if not low <= start < high:
            begun = self.slices.start(start)
        # the latest A1 read that ended by this instruction's start; the last read's own time (asked
        # by a bus listener after the read) depends on the read before it
        read = (
            self._status_read_cycle if self._status_read_cycle <= start else self._earlier_status_read_cycle
        )
        if begun < read <= start:
            begun = read
        return begun

    def _note_status_read(self, cycle: int) -> None:
        if cycle != self._status_read_cycle:
            self._earlier_status_read_cycle = self._status_read_cycle
        self._status_read_cycle = cycle
        self._t1_span = self._t1_next_span = NO_SPAN

    def mame_trace_cycle(self, cycle: int) -> int:
        """The stamp MAME's trace script gives an access at our `cycle`: round(time × clock / 15)."""
        numerator = self._access_time(cycle) * self.region.cpu_clock_hz
        denominator = CLOCKS_PER_MACHINE_CYCLE * ATTOSECONDS_PER_SECOND
        return (2 * numerator + denominator) // (2 * denominator)

    def frame(self) -> np.ndarray:
        """The last completed frame: (243, 360) uint8 palette indices (all zero before the first)."""
        return self.renderer.last_frame

    def audio_samples(self, rate: int, cycle: int) -> np.ndarray:
        """Speaker samples (float32, -1…1) from power-on to `cycle` at `rate` Hz (needs audio=True)."""
        if self.audio is None:
            raise ValueError("this Vdc was created without audio=True")
        self.run_to(cycle)
        return self.audio.samples(rate, self.timing.time_of_cycle(cycle))

    # -- bus --------------------------------------------------------------------------------------
    def _status_value(self, pixel: int) -> int:
        """The status byte at `pixel`. Placing the pixel on its line and working out hstatus there was
        a tenth of a status read's cost, so the line's hstatus pixels are kept (`_status_line`): games
        poll A1 several times a line, and lines start at multiples of htotal, which divides a frame,
        so a kept line depends on no state that changes."""
        first, hstatus_from, hstatus_to = self._status_line
        if not first <= pixel < first + self._htotal:
            line, hpos = self.raster.position_of(pixel)
            first = pixel - hpos
            low, high = self.raster.hstatus_span(line)
            hstatus_from, hstatus_to = first + low, first + high
            self._status_line = (first, hstatus_from, hstatus_to)
        data = self.control_status | (self.registers[CONTROL] & CONTROL_STROBE)
        if hstatus_from <= pixel < hstatus_to:
            data |= STATUS_HSTATUS
        return data

    def _beam_value(self, kind: str, cycle: int) -> int:
        """A4/A5: the beam position, live while A0 b1 is set, else as latched when it was cleared."""
        strobe_live = self.registers[CONTROL] & CONTROL_STROBE
        if kind == "beam_y":
            return (self.raster.y_beam(*self.position(cycle)) if strobe_live else self.latched_y) & 0xFF
        return (self.position(cycle)[1] >> 1) if strobe_live else self.latched_x

    def read(self, address: int, cycle: int) -> int:
        """MOVX read while the VDC is selected; `cycle` is the end of the MOVX instruction."""
        address &= 0xFF
        canonical = self._read_plan_now[address]
        if canonical >= 0:  # a stored byte
            if cycle >= self._frame_end_cycle:
                self._catch_up(self._beam_pixel(cycle))
            return self.registers[canonical]
        if canonical == READS_ZERO:
            return 0
        if canonical == LOCKED:
            if cycle >= self._frame_end_cycle:
                self._catch_up(self._beam_pixel(cycle))
            return 0
        kind = self._info[address].read
        if kind not in ("status", "collision"):
            return self._beam_value(kind, cycle)
        start = cycle - MOVX_CYCLES
        if start >= self._quiet_until:
            self._sync_events(start)
        if kind == "status":
            return self._status_read(cycle)
        self._draw_to_beam(cycle)
        data = self._collect_collisions()
        self.collision_status = 0
        self._last_read_value = data
        return data

    def _status_read(self, cycle: int) -> int:
        """An A1 read ending at `cycle` (timer events seen): draws to the beam, takes the overlap
        bit, clears what a read clears, ends MAME's timeslice."""
        pixel = self._beam_pixel(cycle)
        self._draw_to_beam(cycle, pixel)
        major, _ = self.renderer.resolve(collisions=False)
        self.control_status |= major
        data = self._status_value(pixel)
        self.irq_line = False
        self.control_status &= ~STATUS_CLEARED_BY_READ
        self._last_read_value = data
        self._note_status_read(cycle)
        return data

    def _collect_collisions(self) -> int:
        """A2 bits drawn so far (MAME m_collision_status), kept until a read clears them."""
        major, collisions = self.renderer.resolve(collisions=True)
        self.control_status |= major
        self.collision_status |= collisions
        return self.collision_status

    def write(self, address: int, value: int, cycle: int) -> None:
        """MOVX write while the VDC is selected; `cycle` is the end of the MOVX instruction: what
        MAME's write handler does, each case."""
        plain = self._plain_writes_now[address & 0xFF]
        if cycle < self._frame_end_cycle:
            # Most writes (a game setting up its objects, vdc_regs' hundreds a frame) take a short
            # path: they neither read nor write anything the timer events (VBL, sound ticks) touch,
            # so the events are left to the next access that needs them (`_sync_events`).
            if plain:
                # a plain register, not locked: if the write changes no bit that can change the
                # picture, what the steps below come to, without the steps that cannot apply
                a, mask, bits, redraw = plain
                registers = self.registers
                old = registers[a]
                new = value & mask
                if not (old ^ new) & bits:
                    if redraw and value != old:
                        self._deferred_update = cycle
                    registers[a] = new
                    return
            elif plain is IGNORED:
                return  # what the steps below come to for a locked, read-only or unused register
        registers = self.registers
        start = cycle - MOVX_CYCLES
        if start >= self._quiet_until:  # _sync_events' own early-out, without the call
            self._sync_events(start)
        a, mask, lock, redraw, sound_clocked, _short = self._write_plan[address & 0xFF]
        if registers[CONTROL] & lock or lock == 0xFF:  # locked, or unmapped (F0-FF: lock 0xFF)
            if cycle >= self._frame_end_cycle:
                self._catch_up(self._beam_pixel(cycle))
            return
        old = registers[a]
        new = old if mask is None else value & mask
        changes_picture = (old ^ new) & self.drawing_bits[registers[CONTROL] & DRAWING_STATES][a]
        if redraw and value != old:
            # MAME redraws up to the beam, even when the picture stays the same: where its last
            # update stopped decides where the frame end goes on drawing. Consecutive
            # redraws with one picture within a frame draw what the last of them alone would (the
            # spans join), so a write that leaves the picture as it is only notes its cycle; the
            # next redraw, picture change, status read or frame end records it.
            if changes_picture or cycle >= self._frame_end_cycle:
                self._draw_to_beam(cycle)
            else:
                self._deferred_update = cycle
        elif cycle >= self._frame_end_cycle:
            self._catch_up(self._beam_pixel(cycle))
        if mask is None:
            return
        self._next_irq_cache = None
        if sound_clocked:
            if a != CONTROL or self._control_write_clocks_sound(old, new):
                self._write_sound_clocked(a, start)
                old = registers[a]  # the ticks just run may have shifted A7-A9 since
            if a == CONTROL and old & CONTROL_STROBE and not new & CONTROL_STROBE:
                self._latch_beam(cycle)
        if new != old:
            if changes_picture:
                if self._deferred_update >= 0:  # a grid write (no redraw of its own) ends the picture
                    self._record_deferred_update()
                self._picture = None
            registers[a] = new
            if a == CONTROL:
                self._plan_control()
        if a == SOUND_CONTROL and self.audio is not None:
            self.audio.set_level(self.timing.time_of_cycle(cycle), self.sound.level())

    def _write_sound_clocked(self, a: int, start: int) -> None:
        """What a write to A0 or A7-AA does to the sound, before the register takes its value."""
        self._sync_ticks(start)
        if self._sound_write_ends_quiet(a):
            self._quiet_until = 0
        self._sound_irq_cycle = None
        if a in SHIFT_REGISTERS:
            self.sound.written = True

    @staticmethod
    def _sound_write_ends_quiet(a: int) -> bool:
        """Must the next access look for timer events again (`_sync_events`) after a sound-clocked
        write to `a`? Only A0 b2 changes whether the hblank ticks wait; a write to A7-AA leaves the
        next VBL and the next tick where they were, and so the quiet span. (Tests make this always
        True: the plain path.)"""
        return a == CONTROL

    @staticmethod
    def _control_write_clocks_sound(old: int, new: int) -> bool:
        """Does an A0 write from `old` to `new` need the sound ticks run up to it? Of A0 the ticks
        see only the sound interrupt enable (b2): while it stays as it was, ticks that wait go on
        waiting and ticks that run (interrupt on, audio) are already up to date, and the next sound
        interrupt stays where it was. (Tests make this always True: the plain path.)"""
        return bool((old ^ new) & SOUND_INTERRUPT_ENABLE)

    def _latch_beam(self, cycle: int) -> None:
        """A0 b1 fell: A4/A5 keep the beam position of this write."""
        line, hpos = self.position(cycle)
        self.latched_x = hpos >> 1
        self.latched_y = self.raster.y_beam(line, hpos) & 0xFF

    def set_lum(self, bright: bool, cycle: int) -> None:
        """P17 changed (0 = bright). MAME draws up to the beam first when LUM changes."""
        bright = bool(bright)
        if bright != self.lum_bright:
            self._draw_to_beam(cycle)
            self.lum_bright = bright

    # -- state ------------------------------------------------------------------------------------
    def state(self) -> dict:
        self._record_deferred_update()
        return {
            "region": self.region.name,
            "registers": self.registers.hex(),
            "control_status": self.control_status,
            "collision_status": self.collision_status,
            "irq_line": self.irq_line,
            "latched_x": self.latched_x,
            "latched_y": self.latched_y,
            "lum_bright": self.lum_bright,
            "frames_completed": self.frames_completed,
            "next_vbl_frame": self._next_vbl_frame,
            "ticks_done": self._ticks_done,
            "frame_end": self._frame_end,
            "last_line": self._last_line,
            "last_hpos": self._last_hpos,
            "status_read_cycle": self._status_read_cycle,
            "earlier_status_read_cycle": self._earlier_status_read_cycle,
            "sound": self.sound.state(),
            "renderer": self.renderer.state(),
        }

    def state_problems(self, state: dict, frame: int) -> list[str]:
        """Why `state` cannot be this chip at the end of console frame `frame` (its frame counters and
        frame end must be next to it)."""
        problems = []
        for name in ("frames_completed", "next_vbl_frame"):
            if abs(state[name] - frame) > 1:
                problems.append(f"vdc.{name} = {state[name]} is not next to frame {frame}")
        pixels = self._frame_pixels
        if not frame * pixels <= state["frame_end"] <= (frame + 2) * pixels:
            problems.append(f"vdc.frame_end = {state['frame_end']} is not at the end of frame {frame}")
        return problems

    def load_state(self, state: dict) -> None:
        if state["region"] != self.region.name:
            raise ValueError(f"state is for {state['region']}, this VDC is {self.region.name}")
        self.registers[:] = bytes.fromhex(state["registers"])
        self._plan_control()
        self.control_status = int(state["control_status"])
        self.collision_status = int(state["collision_status"])
        self.irq_line = bool(state["irq_line"])
        self.latched_x = int(state["latched_x"])
        self.latched_y = int(state["latched_y"])
        self.lum_bright = bool(state["lum_bright"])
        self.frames_completed = int(state["frames_completed"])
        self._next_vbl_frame = int(state["next_vbl_frame"])
        self._ticks_done = int(state["ticks_done"])
        self._set_frame_end(int(state["frame_end"]))
        self._last_line = int(state["last_line"])
        self._last_hpos = int(state["last_hpos"])
        self._status_read_cycle = int(state.get("status_read_cycle", 0))
        self._earlier_status_read_cycle = int(state.get("earlier_status_read_cycle", 0))
        self._t1_span = self._t1_next_span = NO_SPAN
        self._deferred_update = -1
        self._skipped_status_read = (-1, 0)
        self.sound.load_state(state["sound"])
        self.renderer.load_state(state["renderer"])
        self._picture = None
        self._sound_irq_cycle = None
        self._next_irq_cache = None
        self.slices.reset()
        self._quiet_until = 0
