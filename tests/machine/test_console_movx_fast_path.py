"""The MOVX fast paths (`Console._select_movx`, `Vdc._write_plan`) equal the full decode.

A console whose fast paths are switched off (`FullDecodeConsole`) is the reference: both get the
same port writes, MOVX accesses, listener changes, direct P1 sets and state loads, and must answer,
notify and end up alike. The glue facts: docs/hardware.md, "Glue logic"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import hypothesis.strategies as st
import pytest
from fixture_runs import built_cart
from hypothesis import example, given, settings

from hilbridge.machine.bus import BusAccess
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.cpu import Cpu
from hilbridge.machine.timing import NTSC
from hilbridge.machine.vdc import CONTROL, CONTROL_DISPLAY, CONTROL_GRID, SHIFT_REGISTERS, Vdc, register_map
from hilbridge.oracle.carts import load_manifest

P1_VDC_DISABLE, P1_RAM_DISABLE, P1_EXTERNAL_DISABLE = 0x08, 0x10, 0x40
# mappers: one with neither, one whose slot drives reads (data ROM), one with a latch on writes
FIXTURE_CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
CARTS = {"o2_rom": 2048, "o2_4in1": 4096, "o2_rally": 16384}


class FullDecodeConsole(Console):
    """A console that always takes the whole MOVX decode."""

    def _select_movx(self) -> None:
        self._vdc_only_p1 = self._ram_only_p1 = -1


def consoles(mapper: str) -> tuple[Console, Console]:
    image = bytes(range(256)) * (CARTS[mapper] // 256)
    return Console(load_cartridge(image, mapper)), FullDecodeConsole(load_cartridge(image, mapper))


# P1 values: the decode bits (P13 VDC, P14 RAM, P16 external RD/WR) biased to the one-chip
# selections the fast paths take, the other bits random
decode_bits = st.sampled_from([0x10, 0x10, 0x10, 0x08, 0x08, 0x08, 0x00, 0x18, 0x40, 0x50, 0x48, 0x58])
p1_values = st.builds(lambda chips, rest: chips | (rest & ~0x58), decode_bits, st.integers(0, 255))
addresses = st.one_of(st.integers(0, 255), st.sampled_from([0x00, 0x7F, 0x80, 0xA0, 0xA1, 0xA2, 0xF0, 0xFF]))
operations = st.one_of(
    st.tuples(st.just("port"), p1_values),
    st.tuples(st.just("poke"), p1_values),  # P1 set directly, as tests and tools do
    st.tuples(st.just("write"), addresses, st.integers(0, 255)),
    st.tuples(st.just("read"), addresses),
    st.tuples(st.just("listen")),
    st.tuples(st.just("unlisten")),
    st.tuples(st.just("save")),
    st.tuples(st.just("load")),
)


def apply(console: Console, operation: tuple, cycle: int, log: list, saved: list) -> None:
    kind = operation[0]
    if kind == "port":
        console.port_write(1, operation[1], cycle)
    elif kind == "poke":
        console.p1 = operation[1]
    elif kind == "write":
        console.movx_write(operation[1], operation[2], cycle)
    elif kind == "read":
        log.append(("read", console.movx_read(operation[1], cycle)))
    elif kind == "listen":
        console.add_bus_listener(log.append)
    elif kind == "unlisten":
        console.remove_bus_listener(log.append)
    elif kind == "save":
        saved[:] = [console.state()]
    elif saved:
        console.load_state(saved[0])


# a listener attached and removed while P1 selects one chip alone; a state saved with another P1
LISTENED = [
    (("port", 0xB4), 4),  # VDC alone
    (("listen",), 4),
    (("write", 0x10, 0x22), 4),
    (("read", 0x10), 4),
    (("unlisten",), 4),
    (("write", 0x11, 0x33), 4),
    (("save",), 4),
    (("port", 0xAC), 4),  # RAM alone
    (("write", 0x91, 0x66), 4),  # A7 = 1: not the RAM
    (("read", 0x11), 4),
    (("read", 0x91), 4),
    (("listen",), 4),
    (("write", 0x90, 0x44), 4),
    (("read", 0x90), 4),
    (("unlisten",), 4),
    (("read", 0x10), 4),
    (("load",), 4),
    (("write", 0x12, 0x55), 4),
]


# each chip alone with no one listening: the fast paths themselves, and their CPU notifications
QUIET = [
    (("port", 0xB4), 4),  # VDC alone
    (("write", 0xA0, 0x08), 4),
    (("read", 0xA1), 4),
    (("port", 0xAC), 4),  # RAM alone
    (("write", 0x10, 0x22), 4),
    (("read", 0x10), 4),
]


def recording(name: str, notify: Callable[[Cpu, int], None], notified: dict[int, list]) -> Callable:
    """`notify` (a `Cpu` method), also appending (name, cycle) to the CPU's list in `notified`."""

    def recorded(cpu: Cpu, cycle: int) -> None:
        notified[id(cpu)].append((name, cycle))
        notify(cpu, cycle)

    return recorded


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    mapper=st.sampled_from(sorted(CARTS)),
    steps=st.lists(st.tuples(operations, st.integers(2, 60)), min_size=10, max_size=50),
    interrupts=st.booleans(),
)
@example(mapper="o2_rom", steps=LISTENED, interrupts=False)
@example(mapper="o2_rom", steps=QUIET, interrupts=True)
def test_fast_paths_answer_notify_and_leave_the_machine_as_the_full_decode(mapper, steps, interrupts) -> None:
    """Also the CPU's notifications (`Cpu.vdc_read`, and `Cpu.vdc_written` while the external
    interrupt is enabled): the fast loop's stop and idle skipping depend on them."""
    fast, full = consoles(mapper)
    for console in (fast, full):
        console.cpu.xirq_enabled = interrupts
    notified: dict[int, list[tuple[str, int]]] = {id(fast.cpu): [], id(full.cpu): []}
    fast_log: list[tuple | BusAccess] = []
    full_log: list[tuple | BusAccess] = []
    fast_saved: list[bytes] = []
    full_saved: list[bytes] = []
    cycle = 0
    with pytest.MonkeyPatch.context() as patch:
        for name in ("vdc_read", "vdc_written"):
            patch.setattr(Cpu, name, recording(name, getattr(Cpu, name), notified))
        for operation, gap in steps:
            cycle += gap
            apply(fast, operation, cycle, fast_log, fast_saved)
            apply(full, operation, cycle, full_log, full_saved)
            assert fast_log == full_log, operation
            assert notified[id(fast.cpu)] == notified[id(full.cpu)], operation
            assert fast.ram == full.ram and fast.vdc.registers == full.vdc.registers, operation
            assert fast.cart.latch == full.cart.latch and fast.prog == full.prog, operation
    assert fast.state() == full.state()


def selects_alone(console: Console) -> tuple[bool, bool]:
    """(VDC alone, RAM alone), worked out from the glue rules (docs/hardware.md, "Glue logic")."""
    p1, cart = console.p1, console.cart
    quiet = not cart.drives_reads and not cart.takes_writes and console._tell is None
    external = not p1 & P1_EXTERNAL_DISABLE
    vdc = not p1 & P1_VDC_DISABLE
    ram = not p1 & P1_RAM_DISABLE
    return quiet and external and vdc and not ram, quiet and external and ram and not vdc


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    mapper=st.sampled_from(sorted(CARTS)),
    steps=st.lists(operations.filter(lambda operation: operation[0] != "poke"), min_size=5, max_size=30),
)
@example(mapper="o2_rom", steps=[operation for operation, _ in LISTENED])
def test_every_p1_listener_and_state_change_selects_the_fast_path_again(mapper, steps) -> None:
    """Without direct P1 sets, the fast path is taken exactly when the P1 value selects one chip
    alone (a stale selection would miss it, or take it with a listener attached)."""
    console, _ = consoles(mapper)
    log: list = []
    saved: list[bytes] = []
    for number, operation in enumerate(steps):
        apply(console, operation, 10 + 7 * number, log, saved)
        vdc_alone, ram_alone = selects_alone(console)
        assert (console._vdc_only_p1 == console.p1) == vdc_alone, operation
        assert (console._ram_only_p1 == console.p1) == ram_alone, operation


@pytest.mark.parametrize("name", ["vdc_regs", "cpu_alu", "xram", "video_midframe"])
def test_running_carts_draw_and_end_alike_with_and_without_the_fast_paths(name) -> None:
    [spec] = [spec for spec in load_manifest(FIXTURE_CARTS) if spec.name == name]
    image = built_cart(spec)
    fast = Console(load_cartridge(image, spec.slot))
    full = FullDecodeConsole(load_cartridge(image, spec.slot))
    for _ in range(8):
        fast.run_frames(3)
        full.run_frames(3)
        assert (fast.vdc.frame() == full.vdc.frame()).all()
    assert fast.state() == full.state()


# -- Vdc.write's per-address plan against the register table ----------------------------------------
TABLE = register_map()
LOCKS = {"objects": CONTROL_DISPLAY, "grid": CONTROL_GRID, "": 0}


def table_write(model: bytearray, address: int, value: int) -> None:
    """A write as vdc_registers.tsv describes it: F0-FF are never written, a locked register
    ignores the write, the mask keeps the connected bits of the canonical register."""
    info = TABLE[address]
    if info.canonical >= 0xF0 or model[CONTROL] & LOCKS[info.lock] or info.write_mask is None:
        return
    model[info.canonical] = value & info.write_mask


def table_read(model: bytearray, address: int) -> int:
    info = TABLE[address]
    return 0 if info.read == "zero" or model[CONTROL] & LOCKS[info.lock] else model[info.canonical]


control_values = st.sampled_from([0x00, CONTROL_DISPLAY, CONTROL_GRID, CONTROL_DISPLAY | CONTROL_GRID, 0x02])
register_steps = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 255), st.integers(0, 255)),
    st.tuples(st.just("control"), st.sampled_from([0xA0, 0xB0, 0xBF]), control_values),
    st.tuples(
        st.just("read"), st.sampled_from([info.address for info in TABLE if info.read in ("value", "zero")])
    ),
)


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(register_steps, max_size=80))
def test_register_writes_and_reads_follow_the_table(steps) -> None:
    vdc = Vdc(NTSC)
    model = bytearray(256)
    for number, step in enumerate(steps):
        cycle = 20 + 3 * number  # within the first frame's top lines: the picture has no say
        if step[0] == "read":
            assert vdc.read(step[1], cycle) == table_read(model, step[1]), step
            continue
        vdc.write(step[1], step[2], cycle)
        table_write(model, step[1], step[2])
        ticked = set(SHIFT_REGISTERS)  # the sound clock shifts these on its own
        assert [r for a, r in enumerate(vdc.registers) if a not in ticked] == [
            r for a, r in enumerate(model) if a not in ticked
        ], step
