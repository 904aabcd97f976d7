"""The dump engine (firmware/pio/dump.pio) in pioemu against a model cartridge that answers the
lines the program drives (reference mapper logic, a 450 ns EPROM): /PSEN reads of every bank of
every fixture mapper, MOVX reads of the o2_4in1 data ROM, and o2_rally latch writes followed by
reads, as CART_READ / CART_WRITE do them (two words per access, console side isolated)."""

from dataclasses import replace

import pytest
from cart_fixtures import QUICK_SERVED, SERVED, image
from conftest import quick_few
from hypothesis import given, settings
from hypothesis import strategies as st
from pio_harness import engine_options, require_module, tool

from hilbridge.machine.cartridge import Cartridge, load_cartridge

ACCESS_CYCLES = 56  # a 450 ns EPROM at 125 MHz: data valid this long after its strobe


class DumpRig:
    """The dump state machine plus the cartridge on the other side of the (isolated) slot."""

    def __init__(self, cart: Cartridge) -> None:
        self.pioemu = require_module("pioemu", "rp2040-pio-emulator")
        require_module("adafruit_pioasm", "adafruit-circuitpython-pioasm")
        self.program = tool("gen_pio").assemble("dump")
        gen_pins = tool("gen_pins")
        pins = gen_pins.load_pins()
        self.pin = gen_pins.pin_numbers(pins)
        self.out_mask = sum(1 << p.gpio for p in pins if p.dump == "out" and p.gpio < 26)
        self.data_mask = 0xFF << self.pin["D0"]
        self.cart = cart
        self.strobe_since: int | None = None
        self.last_clock = 0
        self.was_writing = False
        self.idle = 1 << self.pin["PSEN_N"] | 1 << self.pin["WR_N"]
        self.state = self.pioemu.State(pin_directions=self.out_mask, pin_values=self.idle)

    def _ports(self, p1: int) -> int:
        pin = self.pin
        return (p1 & 1) << pin["P10"] | (p1 >> 1 & 1) << pin["P11"] | (p1 >> 4 & 1) << pin["P14"]

    def _cartridge(self, state: object) -> int:
        """What the cartridge puts on D0-D7 for the lines driven now."""
        pin, driven = self.pin, state.pin_values & state.pin_directions
        address = driven & 0xFFF
        p1 = (driven >> pin["P10"] & 1) | (driven >> pin["P11"] & 1) << 1 | (driven >> pin["P14"] & 1) << 4
        fetch = not driven >> pin["PSEN_N"] & 1
        read = driven >> pin["E"] & 1
        writing = not driven >> pin["WR_N"] & 1
        if self.was_writing and not writing:  # /WR rising: the cartridge latches D0-D7
            self.cart.write(address & 0xFF, (driven >> pin["D0"]) & 0xFF, p1, address >> 8)
        self.was_writing = writing
        previous, self.last_clock = self.last_clock, state.clock
        if not (fetch or read):
            self.strobe_since = None
            return 0xFF << pin["D0"]
        if self.strobe_since is None:  # driven by the instruction of the previous step
            self.strobe_since = previous + 1
        if state.clock - self.strobe_since < ACCESS_CYCLES:
            return (address & 0xFF) << pin["D0"]  # not valid yet: whatever the bus held
        value = self.cart.fetch(address, p1, 0) if fetch else self.cart.read(address & 0xFF, p1, address >> 8)
        return value << pin["D0"]

    def _access(self, lines: int, active: int, clear: int) -> int:
        idle = lines | self.idle
        state = self.state
        State = self.pioemu.State  # pioemu wants the class itself as the annotation

        def cartridge(current: State) -> int:
            return self._cartridge(current)

        state.transmit_fifo.extend([idle, (idle & ~clear) | active, idle])
        start, began = self.program.wrap_target, state.clock
        for _before, after in self.pioemu.emulate(
            self.program.opcodes,
            stop_when=lambda _opcode, s: (
                bool(s.receive_fifo)
                and not s.transmit_fifo
                and s.program_counter == start
                and s.clock > began
            ),
            initial_state=state,
            input_source=cartridge,
            **engine_options(self.program),
        ):
            state = after
        self._cartridge(state)  # the cartridge sees the released strobe too
        word = state.receive_fifo.popleft()
        self.state = state
        return word

    def read(self, p1: int, p2: int, address: int, movx: bool) -> int:
        if movx:
            lines = self._ports(p1) | (address & 0xFF) | (p2 & 0x0F) << 8
            word = self._access(lines, 1 << self.pin["E"], 0)
        else:
            word = self._access(self._ports(p1) | address, 0, 1 << self.pin["PSEN_N"])
        return (word >> self.pin["D0"]) & 0xFF

    def write(self, p1: int, p2: int, address: int, value: int) -> None:
        """CART_WRITE: the C glue makes D0-D7 outputs around it (exec `out pindirs`)."""
        lines = self._ports(p1) | address | (p2 & 0x0F) << 8 | value << self.pin["D0"]
        self.state = replace(self.state, pin_directions=self.out_mask | self.data_mask)
        self._access(lines, 0, 1 << self.pin["WR_N"])
        self.state = replace(self.state, pin_directions=self.out_mask)


@pytest.mark.parametrize(("name", "mapper"), quick_few(SERVED, QUICK_SERVED))
def test_psen_reads_every_bank(name: str, mapper: str) -> None:
    data = image(name)
    rig = DumpRig(load_cartridge(data, mapper))
    reference = load_cartridge(data, mapper)
    for p1 in (0xFC, 0xFD, 0xFE, 0xFF):
        addresses = range(0x400 + p1 % 4, 0x1000, 13)
        got = [rig.read(p1, 0xFF, address, movx=False) for address in addresses]
        assert got == [reference.fetch(address, p1, 0xFF) for address in addresses]


def test_movx_reads_the_4in1_data_rom() -> None:
    data = image("bank_4in1")
    rig = DumpRig(load_cartridge(data, "o2_4in1"))
    for page in range(4):
        got = [rig.read(0xFF, 0xF0 | page, low, movx=True) for low in range(0, 256, 5)]
        assert got == [data[page * 256 + low] for low in range(0, 256, 5)]


@settings(max_examples=12, deadline=None)
@given(latch=st.integers(0, 255), addresses=st.lists(st.integers(0x400, 0xFFF), min_size=1, max_size=8))
def test_rally_latch_write_then_read(latch: int, addresses: list[int]) -> None:
    data = image("bank_rally")
    rig = DumpRig(load_cartridge(data, "o2_rally"))
    rig.write(0xEE, 0xFF, 0x80, latch)  # A7 = 1, P14 = 0, P10 = 0: the latch decides the bank
    reference = load_cartridge(data, "o2_rally")
    reference.latch = latch
    assert rig.cart.latch == latch
    assert [rig.read(0xEE, 0xFF, a, movx=False) for a in addresses] == [
        reference.fetch(a, 0xEE, 0xFF) for a in addresses
    ]
