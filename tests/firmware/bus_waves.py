"""What a real cartridge slot sees while the reference emulator runs a cartridge, as pin waveforms.

`slot_accesses` runs hilbridge.machine.console.Console with a bus listener and keeps what reaches
the slot (docs/hardware.md): fetches of 0400h-0FFFh, and MOVX reads and writes while P16 = 0 (the
console gates /WR, and we assume pin E, with P16). Each access is placed in the machine cycle its
strobe occupies: the emulator stamps every fetch of an instruction with the instruction's first
cycle (the second fetch, operand or MOVP/JMPP table, is one cycle later on the bus) and a MOVX with
the end of the instruction (its strobe is in the cycle before).

`waveform` turns accesses into GPIO levels with the 8048 timing of firmware/board/bus_timing.tsv:
address and P1 lines change early in each cycle, BUS carries the low address byte before the data,
read data turns valid only at the datasheet's worst-case delay.
"""

from __future__ import annotations

from dataclasses import dataclass

from pio_harness import Waveform, tool

from hilbridge.machine.bus import FETCH, READ, WRITE, BusAccess
from hilbridge.machine.cartridge import CART_P1_MASK, load_cartridge
from hilbridge.machine.console import Console

P16 = 0x40
IDLE_DATA = 0xFF


@dataclass(frozen=True, slots=True)
class SlotAccess:
    cycle: int  # machine cycle of the strobe
    kind: str  # FETCH, READ or WRITE
    address: int  # the 12 address lines (MOVX: A8-A11 carry P20-P23)
    value: int
    p1: int  # P10, P11, P14


def slot_accesses(image: bytes, mapper: str, region: str, cycles: int) -> list[SlotAccess]:
    """The slot's accesses during the first `cycles` machine cycles after reset."""
    console = Console(load_cartridge(image, mapper), region=region)
    accesses: list[SlotAccess] = []
    last_fetch_cycle = [-1]

    def listen(access: BusAccess) -> None:
        p1 = access.p1 & CART_P1_MASK
        if access.kind == FETCH:
            second = last_fetch_cycle[0] == access.cycle
            last_fetch_cycle[0] = access.cycle
            accesses.append(SlotAccess(access.cycle + second, FETCH, access.address, access.value, p1))
        elif not access.p1 & P16:
            address = (access.address & 0xFF) | (console.p2 & 0x0F) << 8
            accesses.append(SlotAccess(access.cycle - 1, access.kind, address, access.value, p1))

    console.add_bus_listener(listen, fetches=True)
    console.run_cycles(cycles)
    return accesses


@dataclass(frozen=True, slots=True)
class Layout:
    """GPIO numbers from pins.tsv and the strobe timing in PIO cycles for one region."""

    pins: dict[str, int]
    cycle: float  # machine cycle in PIO cycles
    osc: float  # oscillator period in PIO cycles
    strobes: dict[str, tuple[int, int]]
    delays: dict[str, float]  # PIO cycles

    @classmethod
    def load(cls, region: str) -> Layout:
        gen_pins, gen_timing = tool("gen_pins"), tool("gen_timing")
        timing = gen_timing.load_timing()
        cycle = timing.cycle_pio(region)
        ns = gen_timing.SYSTEM_HZ / 1e9
        delays = {name: timing.delay_ns(name, region) * ns for name in timing.delays}
        return cls(gen_pins.pin_numbers(gen_pins.load_pins()), cycle, cycle / 15, timing.strobes, delays)

    def idle(self) -> int:
        return 1 << self.pins["PSEN_N"] | 1 << self.pins["WR_N"] | IDLE_DATA << self.pins["D0"]

    def address_bits(self, access: SlotAccess) -> int:
        p1 = access.p1
        pins = self.pins
        return (
            access.address
            | (p1 & 1) << pins["P10"]
            | (p1 >> 1 & 1) << pins["P11"]
            | (p1 >> 4 & 1) << pins["P14"]
        )

    def strobe_window(self, access: SlotAccess, origin: float) -> tuple[int, int]:
        name = {FETCH: "psen", WRITE: "wr", READ: "rd"}[access.kind]
        start, end = self.strobes[name]
        base = origin + access.cycle * self.cycle
        return round(base + start * self.osc), round(base + end * self.osc)


def waveform(
    accesses: list[SlotAccess], layout: Layout, *, drive_fetch_data: bool = True, lead: int = 400
) -> tuple[Waveform, int, list[tuple[int, int]]]:
    """The pins for `accesses`; returns the waveform, the clock of the first machine cycle, and the
    strobe windows (start, end) in PIO clocks per access. `drive_fetch_data` False leaves D0-D7
    idle during fetches (the serve engine drives them)."""
    pins = layout.pins
    d0 = pins["D0"]
    address_mask = (1 << d0) - 1
    data_mask = 0xFF << d0
    strobe_bits = {FETCH: 1 << pins["PSEN_N"], WRITE: 1 << pins["WR_N"], READ: 1 << pins["E"]}
    origin = lead - accesses[0].cycle * layout.cycle
    changes: list[tuple[int, int, int]] = []  # (clock, mask, value)
    windows: list[tuple[int, int]] = []
    for access in accesses:
        base = origin + access.cycle * layout.cycle
        start, end = layout.strobe_window(access, origin)
        windows.append((start, end))
        changes.append(
            (
                round(base + layout.strobes["address"][0] * layout.osc),
                address_mask,
                layout.address_bits(access),
            )
        )
        changes.append((round(base), data_mask, (access.address & 0xFF) << d0))  # BUS: the low address byte
        strobe = strobe_bits[access.kind]
        active = strobe if access.kind == READ else 0
        changes.append((start, strobe, active))
        changes.append((end, strobe, strobe ^ active))
        if access.kind == FETCH:
            if drive_fetch_data:
                changes.append((round(start + layout.delays["tRD2"]), data_mask, access.value << d0))
            changes.append((round(end + layout.delays["tDR"] / 2), data_mask, IDLE_DATA << d0))
        elif access.kind == WRITE:
            changes.append((round(base + 4 * layout.osc), data_mask, access.value << d0))
            changes.append((round(end + layout.delays["tWD"]), data_mask, IDLE_DATA << d0))
        else:
            changes.append((start, data_mask, IDLE_DATA << d0))
            changes.append((round(start + layout.delays["tRD1"]), data_mask, access.value << d0))
            changes.append((end, data_mask, IDLE_DATA << d0))
    changes.sort(key=lambda change: change[0])
    times, values = [0], [layout.idle()]
    level = layout.idle()
    for clock, mask, value in changes:
        level = (level & ~mask) | value
        if times[-1] == clock:
            values[-1] = level
        else:
            times.append(clock)
            values.append(level)
    return Waveform(times, values), round(origin), windows
