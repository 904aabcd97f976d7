"""What the CPU needs of the machine around it, as two declared interfaces.

`Pins` is the 8048's view of the world: every access is stamped with the machine cycle at which it
happens. `FastForward` are the hints that let the CPU skip time exactly (idle loops, the event
counter) without asking `Pins` once per cycle; a board that gave wrong hints would make skipping
differ from stepping, which the differential tests in tests/machine catch. The console is a `Board`.
"""

from __future__ import annotations

from typing import Protocol

from hilbridge.machine.blocks import FetchTable


class Pins(Protocol):
    """The 8048's buses and pins."""

    def movx_read(self, address: int, cycle: int) -> int: ...
    def movx_write(self, address: int, value: int, cycle: int) -> None: ...
    def port_write(self, port: int, value: int, cycle: int) -> None: ...
    def port_read(self, port: int, cycle: int) -> int: ...
    def bus_read(self, cycle: int) -> int: ...
    def bus_write(self, value: int, cycle: int) -> None: ...
    def t0(self, cycle: int) -> bool: ...
    def t1(self, cycle: int) -> bool: ...
    def irq(self, cycle: int) -> bool:
        """The /INT line (level), true when an interrupt is requested."""
        ...

    def program_fetch(self, address: int, cycle: int) -> None:
        """A program memory fetch; only called while the CPU traces fetches."""
        ...

    def program_fetches(self, fetches: FetchTable, cycle: int, ran: int) -> None:
        """The fetches of a compiled block that ran `ran` cycles from `cycle`: each entry of
        `fetches` at an offset below `ran`, at `cycle` + its offset, in order, as `program_fetch`
        calls would report them. The block's accesses were reported while it ran, before this call:
        the CPU makes it only when told the board orders them by cycle itself (`Cpu.trace_blocks`;
        at one cycle the accesses of the instruction ending there come before the next fetch)."""
        ...


class FastForward(Protocol):
    """Horizons and replays for skipping time exactly."""

    def next_irq_event(self, cycle: int) -> int:
        """The first cycle > `cycle` at which irq() can change by itself."""
        ...

    def next_t1_change(self, cycle: int) -> int:
        """A cycle > `cycle` no later than the first at which t1() differs from t1(cycle)."""
        ...

    def t1_falls(self, previous: int, first: int, last: int) -> int:
        """Falling T1 edges seen sampling once per cycle at first..last, the sample before `previous`."""
        ...

    def t1_fall_sample(self, previous: int, first: int, count: int) -> int:
        """The sample cycle of the count-th such edge from `first` (or an earlier cycle: the counter
        is then re-checked there)."""
        ...

    def next_input_change(self, cycle: int) -> int:
        """A cycle > `cycle` no later than the first at which port_read() or bus_read() may answer
        otherwise with the ports as they are (keys, joysticks)."""
        ...

    def read_horizon(self, address: int, cycle: int, mask: int = 0xFF) -> int:
        """The first cycle at which re-reading `address` after a MOVX read ending at `cycle` may
        differ in the bits of `mask` (or a read would have side effects)."""
        ...

    def peek_read(self, address: int, cycle: int) -> int:
        """What a MOVX read ending at `cycle` would return, without side effects."""
        ...

    def repeat_reads(self, address: int, first: int, period: int, count: int) -> None:
        """Report `count` reads skipped in a polling loop, every `period` cycles from `first`."""
        ...

    def repeat_fetches(self, fetches: FetchTable, cycle: int, period: int, count: int) -> None:
        """The fetches of `count` idle-loop iterations skipped while fetches are traced: the
        iteration's `fetches` again every `period` cycles from `cycle`, as `program_fetches` would
        report them one iteration after the other (only for a board that merges by cycle)."""
        ...


class Board(Pins, FastForward, Protocol):
    """Pins plus fast-forward hints: what `Cpu` is given."""
