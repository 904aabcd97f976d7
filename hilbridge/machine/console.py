"""The console: 8048 + glue logic + VDC + cartridge + BIOS, and the scripting API.

The glue logic and its sources: docs/hardware.md, "Glue logic".

The console owns the bus. It keeps the P1/P2 latches, decodes MOVX by P1 (including the
read-from-RAM / write-to-VDC copy mode), holds the 128-byte external RAM, answers the keyboard
(P2 + the 74148 priority encoder) and the joysticks (`INS A,BUS`), and reports every MOVX access and,
on request, every cartridge fetch as a `BusAccess` to the listeners.

    console = Console(load_cartridge(image), region="ntsc")
    console.run_frames(60)
    console.set_key("A", True)
    snapshot = console.state()
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from importlib import resources
from os import PathLike
from typing import Any

from hilbridge.errors import HilbridgeError
from hilbridge.machine.bios import Bios, UnimplementedBiosRoutineWarning, check_bios, default_bios, read_bios
from hilbridge.machine.blocks import FetchTable
from hilbridge.machine.bus import FETCH, READ, WRITE, BusAccess
from hilbridge.machine.cartridge import PROGRAM_START, Cartridge, load_cartridge, read_cartridge
from hilbridge.machine.cpu import Cpu
from hilbridge.machine.timing import REGIONS, Region, T1Edges
from hilbridge.machine.video_chip import VideoChip

# Port 1 bits (docs/hardware.md, "Glue logic")
P1_BANK = 0x03  # P10, P11: cartridge bank
P1_KEYBOARD_DISABLE = 0x04  # P12: /enable of the keyboard/joystick decoder
P1_VDC_DISABLE = 0x08  # P13: VDC /CS
P1_RAM_DISABLE = 0x10  # P14: external RAM /CS
P1_EXTERNAL_DISABLE = 0x40  # P16: /enable of external RD/WR
P1_LUM = 0x80  # P17: 0 = bright picture
P2_ROW_SELECT = 0x07  # P20-P22: keyboard row / joystick select
EXTERNAL_RAM_SIZE = 128
NEVER = 1 << 62

JOYSTICK_BITS = {"up": 0x01, "right": 0x02, "down": 0x04, "left": 0x08, "fire": 0x10}

BusListener = Callable[[BusAccess], None]
BusRecorder = Callable[[int, str, int, int, int], None]
"""A listener told a MOVX access's `BusAccess` fields (cycle, kind, address, value, p1) as arguments:
a trace keeps them in its own records, so the console makes no `BusAccess` for it (a traced run
tells hundreds of thousands of accesses)."""


def _load_keyboard() -> dict[str, tuple[int, int]]:
    text = resources.files(__package__).joinpath("keyboard.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    return {key: (int(row), int(bit)) for row, bit, key in rows[1:]}


KEYBOARD: dict[str, tuple[int, int]] = _load_keyboard()
"""Key name → (row, bit) in the keyboard matrix."""


def _default_vdc(region: Region) -> VideoChip:
    from hilbridge.machine.vdc import Vdc

    return Vdc(region)


CHIP_SIGNALS = ("t1", "irq", "next_t1_change", "next_irq_event")
"""Board methods that only forward to the video chip (bound to it per console)."""


class Console:
    """An Odyssey² (NTSC) or Videopac G7000 (PAL) with one cartridge, cycle-exact to MAME 0.251."""

    def __init__(
        self,
        cart: Cartridge | bytes | str | PathLike[str],
        bios: Bios | bytes | str | PathLike[str] | None = None,
        region: str | Region = "ntsc",
        *,
        vdc: VideoChip | None = None,
    ) -> None:
        if isinstance(region, str):
            if region not in REGIONS:
                raise HilbridgeError(f"unknown region {region!r} (choose {', '.join(REGIONS)})")
            region = REGIONS[region]
        self.region: Region = region
        if isinstance(cart, bytes | bytearray):
            cart = load_cartridge(bytes(cart))
        elif not isinstance(cart, Cartridge):
            cart = read_cartridge(cart)
        if bios is None:
            bios = default_bios()
        elif isinstance(bios, bytes | bytearray):
            bios = check_bios(bytes(bios))
        elif not isinstance(bios, Bios):
            bios = read_bios(bios)
        self.bios: Bios = bios
        self._traps = dict(bios.traps)
        self._traps_reported: set[int] = set()
        self.cart = cart
        self.vdc: VideoChip = vdc if vdc is not None else _default_vdc(region)
        # MAME's frame end (raster at line 243, hpos 0); the VDC knows it to the attosecond
        self.frame_end_cycle: Callable[[int], int] = self.vdc.frame_end_cycle
        # The chip's signals answer the CPU directly, without the forwarding call (it samples T1
        # hundreds of times a frame); the chip is chosen here once. A subclass that answers a
        # signal itself (the simulator's deviant consoles) keeps its method.
        for name in CHIP_SIGNALS:
            if getattr(type(self), name) is getattr(Console, name):
                setattr(self, name, getattr(self.vdc, name))
        self.prog = bytearray(0x1000)
        self.prog[:PROGRAM_START] = bios.image
        self.ram = bytearray(EXTERNAL_RAM_SIZE)
        self.keys = [0] * 8  # pressed keys per keyboard row, bit set = down
        self.joysticks = [0, 0]  # per select line 0/1, bit set = pressed
        self.frame = 0
        self._listeners: list[BusListener] = []
        self._recorders: list[BusRecorder] = []
        self._tell: BusRecorder | None = None  # what a MOVX access is told to (`_listeners_changed`)
        self._fetch_listeners: list[BusListener] = []
        self._view: bytes | None = None
        self.p1 = 0xFF
        self.p2 = 0xFF
        self.bus = 0xFF
        self.t1_edges: T1Edges = self.vdc.t1_edges()
        self.cpu = Cpu(self, self.prog)
        self._refresh_program()
        self._select_movx()

    # -- the board interface the CPU calls --------------------------------------------------------
    def movx_read(self, address: int, cycle: int) -> int:
        p1 = self.p1
        if p1 == self._vdc_only_p1:  # only the VDC answers, no one listens (`_select_movx`)
            value = self.vdc.read(address, cycle)
            cpu = self.cpu
            if cpu.watch_read:  # else the CPU knows the call would do nothing (`Cpu.watch_read`)
                cpu.vdc_read(cycle)
            return value
        if p1 == self._ram_only_p1:  # only the external RAM answers, no one listens
            return self.ram[address] if address < EXTERNAL_RAM_SIZE else 0xFF
        value = self.cart.read(address, p1, self.p2) if self.cart.drives_reads else 0xFF
        if not p1 & P1_RAM_DISABLE and address < EXTERNAL_RAM_SIZE:
            value &= self.ram[address]
        if not p1 & (P1_VDC_DISABLE | P1_EXTERNAL_DISABLE):
            value &= self.vdc.read(address, cycle)
            cpu = self.cpu
            if cpu.watch_read:
                cpu.vdc_read(cycle)  # /INT may have moved; a polling loop may be skippable
        if self._tell is not None:
            self._tell(cycle, READ, address, value, p1)
        return value

    def movx_write(self, address: int, value: int, cycle: int) -> None:
        p1 = self.p1
        if p1 == self._vdc_only_p1:
            self.vdc.write(address, value, cycle)
            cpu = self.cpu
            if cpu.xirq_enabled and not cpu.irq_in_progress:
                cpu.vdc_written(cycle)
            return
        if p1 == self._ram_only_p1:
            if address < EXTERNAL_RAM_SIZE:
                self.ram[address] = value
            return
        if not p1 & P1_EXTERNAL_DISABLE:
            if not p1 & P1_RAM_DISABLE and address < EXTERNAL_RAM_SIZE:
                self.ram[address] = value
            if self.cart.takes_writes:
                self.cart.write(address, value, p1, self.p2)
                self._refresh_program()
        if not p1 & P1_VDC_DISABLE:
            self.vdc.write(address, value, cycle)
            cpu = self.cpu
            if cpu.xirq_enabled and not cpu.irq_in_progress:
                cpu.vdc_written(cycle)  # the write may have moved the next /INT (e.g. an enable)
        if self._tell is not None:
            self._tell(cycle, WRITE, address, value, p1)

    def port_write(self, port: int, value: int, cycle: int) -> None:
        if port == 1:
            changed = self.p1 ^ value
            self.p1 = value
            if changed & P1_LUM:
                self.vdc.set_lum(not value & P1_LUM, cycle)
            if changed:
                self._refresh_program()
                self._select_movx()
        else:
            self.p2 = value

    def port_read(self, port: int, cycle: int) -> int:
        if port == 2 and not self.p1 & P1_KEYBOARD_DISABLE:
            pressed = self.keys[self.p2 & P2_ROW_SELECT]
            if pressed:
                # 74148: P24 = 0 (a key is down), P25-P27 = 7 - number of the highest key down.
                return ((7 - (pressed.bit_length() - 1)) << 5) | 0x0F
        return 0xFF

    def bus_read(self, cycle: int) -> int:
        if not self.p1 & P1_KEYBOARD_DISABLE:
            select = self.p2 & P2_ROW_SELECT
            if select < 2:
                return ~self.joysticks[select] & 0xFF
        return 0xFF

    def bus_write(self, value: int, cycle: int) -> None:
        self.bus = value

    def t0(self, cycle: int) -> bool:
        return False  # cartridge T0 (The Voice, chess module) is not emulated

    def t1(self, cycle: int) -> bool:
        return self.vdc.t1(cycle)

    def irq(self, cycle: int) -> bool:
        return self.vdc.irq(cycle)

    def next_t1_change(self, cycle: int) -> int:
        return self.vdc.next_t1_change(cycle)

    def t1_falls(self, previous: int, first: int, last: int) -> int:
        return self.t1_edges.falls(previous, first, last)

    def t1_fall_sample(self, previous: int, first: int, count: int) -> int:
        return self.t1_edges.fall_sample(previous, first, count)

    def next_irq_event(self, cycle: int) -> int:
        return self.vdc.next_irq_event(cycle)

    def next_input_change(self, cycle: int) -> int:
        """Keys and joysticks change only between runs (`set_key`, `set_joystick`), never inside one."""
        return NEVER

    def read_horizon(self, address: int, cycle: int, mask: int = 0xFF) -> int:
        """First cycle after a MOVX read at `cycle` at which reading `address` again (with no write
        in between) might differ in the bits of `mask`, or have side effects. Cartridge and RAM
        answers only change with P1, P2 or a write, which a skippable polling loop never does."""
        if not self.vdc_selected():
            return NEVER
        return self.vdc.read_horizon(address, cycle, mask)

    def vdc_selected(self) -> bool:
        """Whether a MOVX now reaches the VDC (P13 and P16 low; `movx_read` works it out inline)."""
        return not self.p1 & (P1_VDC_DISABLE | P1_EXTERNAL_DISABLE)

    def _slot_and_ram_read(self, address: int) -> int:
        """What the cartridge and the external RAM put on the bus for a MOVX read of `address` (as
        `movx_read` works it out inline, on the hot path)."""
        p1 = self.p1
        value = self.cart.read(address, p1, self.p2) if self.cart.drives_reads else 0xFF
        if not p1 & P1_RAM_DISABLE and address < EXTERNAL_RAM_SIZE:
            value &= self.ram[address]
        return value

    def peek_read(self, address: int, cycle: int) -> int:
        """What `movx_read(address, cycle)` would return, without side effects or bus records."""
        value = self._slot_and_ram_read(address)
        if self.vdc_selected():
            value &= self.vdc.peek(address, cycle)
        return value

    def peek_reads(self, address: int, first: int, period: int, count: int) -> list[int]:
        """`peek_read` of `count` skipped polling reads, every `period` cycles from `first`, in one
        call: the cartridge and RAM answer as at the first (the loop writes nothing, P1 and P2 stay)."""
        value = self._slot_and_ram_read(address)
        if not self.vdc_selected():
            return [value] * count
        return [value & vdc for vdc in self.vdc.peek_reads(address, first, period, count)]

    def repeat_reads(self, address: int, first: int, period: int, count: int) -> None:
        """Report `count` skipped polling reads (every `period` cycles from `first`) to listeners, one
        by one: a listener may ask the chip about the read it is told of (`Vdc.mame_trace_cycle`
        depends on the last status read), so each read is peeked just before its notification. A
        board that only records the values takes them in one call (`peek_reads`). With no listener,
        the chip does what the last read, which the CPU peeks, depends on (`VideoChip.skip_reads`)."""
        tell = self._tell
        if tell is not None:
            p1 = self.p1
            for index in range(count):
                cycle = first + index * period
                tell(cycle, READ, address, self.peek_read(address, cycle), p1)
        elif self.vdc_selected():
            self.vdc.skip_reads(address, first, period, count)

    def program_fetch(self, address: int, cycle: int) -> None:
        if address >= PROGRAM_START and self._fetch_listeners:
            access = BusAccess(cycle, FETCH, address, self.prog[address], self.p1)
            for listener in self._fetch_listeners:
                listener(access)

    def program_fetches(self, fetches: FetchTable, cycle: int, ran: int) -> None:
        """A compiled block's fetches (`Board.program_fetches`), one `program_fetch` each."""
        fetch = self.program_fetch
        for offset, address, _ in fetches.entries:
            if offset >= ran:
                break
            fetch(address, cycle + offset)

    def repeat_fetches(self, fetches: FetchTable, cycle: int, period: int, count: int) -> None:
        """Skipped idle iterations' fetches (`Board.repeat_fetches`), one iteration at a time."""
        for number in range(count):
            self.program_fetches(fetches, cycle + number * period, period)

    def _select_movx(self) -> None:
        """Note the P1 values with which a MOVX reaches the VDC alone or the external RAM alone:
        that one selected, the other deselected, external RD/WR enabled, a cartridge that neither
        drives reads nor takes writes, no bus listener. With them, `movx_read`/`movx_write` make
        one or two comparisons instead of the whole decode (vdc_regs makes 500 MOVX to the VDC a
        frame, cpu_alu 300 to RAM). The answer depends only on the P1 value, the cartridge and the
        listeners, so a P1 set directly (a test, a loaded state) can never take a wrong fast path,
        only miss one until the next `port_write`; every listener change selects again."""
        p1 = self.p1
        quiet = not (self.cart.drives_reads or self.cart.takes_writes or self._tell is not None)
        chips = p1 & (P1_VDC_DISABLE | P1_RAM_DISABLE | P1_EXTERNAL_DISABLE)
        self._vdc_only_p1 = p1 if quiet and chips == P1_RAM_DISABLE else -1
        self._ram_only_p1 = p1 if quiet and chips == P1_VDC_DISABLE else -1

    def _refresh_program(self) -> None:
        view = self.cart.program_view(self.p1)
        if view is not self._view:
            self._view = view
            self.prog[PROGRAM_START:] = view
            cpu = getattr(self, "cpu", None)
            if cpu is not None:
                cpu.code_changed(view)

    def _notify(self, cycle: int, kind: str, address: int, value: int, p1: int) -> None:
        """Tell every listener (one `BusAccess` for them all) and every recorder of an access."""
        if self._listeners:
            access = BusAccess(cycle, kind, address, value, p1)
            for listener in self._listeners:
                listener(access)
        for recorder in self._recorders:
            recorder(cycle, kind, address, value, p1)

    def _listeners_changed(self) -> None:
        """Choose what an access is told to: nothing, a lone recorder itself (no call in between),
        or `_notify`; and the MOVX fast paths, which only a console no one listens to takes."""
        if self._listeners or len(self._recorders) > 1:
            self._tell = self._notify
        else:
            self._tell = self._recorders[0] if self._recorders else None
        self._select_movx()

    # -- bus listeners ----------------------------------------------------------------------------
    def add_bus_listener(self, listener: BusListener, *, fetches: bool = False) -> None:
        """Call `listener` with every MOVX access (and, with `fetches`, every cartridge fetch)."""
        self._listeners.append(listener)
        self._listeners_changed()
        if fetches:
            self._fetch_listeners.append(listener)
            self.cpu.trace_fetches = True

    def remove_bus_listener(self, listener: BusListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)
        if listener in self._fetch_listeners:
            self._fetch_listeners.remove(listener)
        self.cpu.trace_fetches = bool(self._fetch_listeners)
        self._listeners_changed()

    def add_bus_recorder(self, recorder: BusRecorder) -> None:
        """Call `recorder` with the fields of every MOVX access, as `add_bus_listener` would call a
        listener with their `BusAccess`, without making one."""
        self._recorders.append(recorder)
        self._listeners_changed()

    def remove_bus_recorder(self, recorder: BusRecorder) -> None:
        if recorder in self._recorders:
            self._recorders.remove(recorder)
        self._listeners_changed()

    # -- running ----------------------------------------------------------------------------------
    @property
    def cycle(self) -> int:
        return self.cpu.cycle

    def step(self) -> None:
        """Execute one instruction (after taking a pending interrupt, as MAME does)."""
        self.cpu.target = self.cpu.cycle + 1  # one instruction: no idle-loop skipping
        self.cpu.step()
        self._advance_frames()
        if self._traps:
            self._report_traps()

    def run_cycles(self, cycles: int) -> None:
        """Run whole instructions until at least `cycles` more machine cycles have passed."""
        target = self.cpu.cycle + cycles
        while self.cpu.cycle < target:
            self.cpu.run_until(min(target, self.frame_end_cycle(self.frame)))
            self._advance_frames()

    def run_frames(self, frames: int = 1) -> None:
        """Run to the end of the next `frames` frames (MAME's frame end: raster at line 243, hpos 0)."""
        last = self.frame + frames
        while self.frame < last:
            self.cpu.run_until(self.frame_end_cycle(self.frame))
            self._advance_frames()
            if self._traps:
                self._report_traps()

    def _report_traps(self) -> None:
        """Warn once per routine when the CPU sits in an unimplemented BIOS entry (`jmp $`) or an
        interrupt has been taken there: the PC and the live return addresses on the stack."""
        cpu = self.cpu
        addresses = [cpu.pc]
        for level in range(cpu.psw & 7):
            addresses.append(cpu.ram[8 + 2 * level] | (cpu.ram[9 + 2 * level] & 0x0F) << 8)
        for address in addresses:
            name = self._traps.get(address)
            if name is not None and address not in self._traps_reported:
                self._traps_reported.add(address)
                warnings.warn(
                    f"the cartridge called the BIOS routine {name} ({address:04X}h), which the "
                    f"{self.bios.name} does not implement; the program stops there (docs/bios.md)",
                    UnimplementedBiosRoutineWarning,
                    stacklevel=3,
                )

    def _advance_frames(self) -> None:
        cycle = self.cpu.cycle
        end = self.frame_end_cycle(self.frame)
        while cycle >= end:
            self.vdc.run_to(end)
            self.frame += 1
            end = self.frame_end_cycle(self.frame)

    # -- input ------------------------------------------------------------------------------------
    def set_key(self, key: str, pressed: bool) -> None:
        """Press or release a keyboard key by its name in `keyboard.tsv` (e.g. "A", "ENTER", "0")."""
        name = key.upper()
        if name not in KEYBOARD:
            raise HilbridgeError(f"unknown key {key!r}", hint="keys: " + " ".join(KEYBOARD))
        row, bit = KEYBOARD[name]
        if pressed:
            self.keys[row] |= 1 << bit
        else:
            self.keys[row] &= ~(1 << bit)

    def set_joystick(self, select: int, **directions: bool) -> None:
        """Set joystick `select` (0 or 1, the P20-P22 value that reads it): up/down/left/right/fire."""
        if select not in (0, 1):
            raise HilbridgeError(f"joystick select must be 0 or 1, not {select}")
        for name, pressed in directions.items():
            if name not in JOYSTICK_BITS:
                raise HilbridgeError(f"unknown joystick input {name!r}", hint=", ".join(JOYSTICK_BITS))
            if pressed:
                self.joysticks[select] |= JOYSTICK_BITS[name]
            else:
                self.joysticks[select] &= ~JOYSTICK_BITS[name]

    # -- save states ------------------------------------------------------------------------------
    def state(self) -> bytes:
        from hilbridge.machine.state import encode_state

        return encode_state(self._state_fields())

    def load_state(self, data: bytes) -> None:
        """Load a state from `state()`; every field is checked first, and a failed load changes nothing."""
        from hilbridge.machine.state import check_fields, decode_state

        fields = decode_state(data)
        if isinstance(fields, dict) and fields.get("cart_sha1") != self._cart_sha1():
            raise HilbridgeError("the save state belongs to a different cartridge")
        if isinstance(fields, dict) and fields.get("region") != self.region.name:
            raise HilbridgeError(
                f"the save state is for region {fields.get('region')}, not {self.region.name}"
            )
        check_fields(fields, self._state_fields())
        self._check_timing(fields)
        before = self._state_fields()
        try:
            self._apply_state(fields)
        except Exception as error:  # a value the checks let through that a component refuses
            self._apply_state(before)
            raise HilbridgeError(f"the save state could not be loaded: {error}") from None

    def _check_timing(self, fields: dict[str, Any]) -> None:
        """The CPU cycle, the frame number and the VDC's frame must describe the same moment."""
        frame, cycle = fields["frame"], fields["cpu"]["cycle"]
        end = self.vdc.frame_end_cycle(frame)
        length = end - self.vdc.frame_end_cycle(frame - 1)
        problems = []
        if not end - 2 * length <= cycle <= end + length:
            problems.append(f"the CPU cycle {cycle} is not in frame {frame}")
        problems += self.vdc.state_problems(fields["vdc"], frame)
        if problems:
            raise HilbridgeError(f"the save state is not valid: {problems[0]}")

    def _apply_state(self, fields: dict[str, Any]) -> None:
        self.cpu.load_state(fields["cpu"])
        self.ram[:] = fields["external_ram"]
        self.p1 = fields["p1"]
        self.p2 = fields["p2"]
        self.bus = fields["bus"]
        self.keys = list(fields["keys"])
        self.joysticks = list(fields["joysticks"])
        self.frame = fields["frame"]
        self.cart.load_state(fields["cart"])
        self.vdc.load_state(fields["vdc"])
        self._view = None
        self._refresh_program()
        self._select_movx()

    def _cart_sha1(self) -> str:
        return hashlib.sha1(self.cart.image).hexdigest()

    def _state_fields(self) -> dict[str, Any]:
        return {
            "cart_sha1": self._cart_sha1(),
            "region": self.region.name,
            "cpu": self.cpu.state(),
            "external_ram": bytes(self.ram),
            "p1": self.p1,
            "p2": self.p2,
            "bus": self.bus,
            "keys": list(self.keys),
            "joysticks": list(self.joysticks),
            "frame": self.frame,
            "cart": self.cart.state(),
            "vdc": self.vdc.state(),
        }
