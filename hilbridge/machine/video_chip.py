"""What the console needs of a video chip: the `VideoChip` protocol (`Vdc` implements it; so do the
tests' scripted doubles).

Every method takes the machine cycle of the access (the end of its instruction); the chip owns the
beam, the interrupt and T1, and the console only routes bus accesses and asks for signals and
horizons. The CPU's side of the board is the `Board` protocol."""

from __future__ import annotations

from typing import Any, Protocol

from hilbridge.machine.timing import T1Edges


class VideoChip(Protocol):
    def read(self, address: int, cycle: int) -> int:
        """MOVX read while the chip is selected."""
        ...

    def write(self, address: int, value: int, cycle: int) -> None:
        """MOVX write while the chip is selected."""
        ...

    def peek(self, address: int, cycle: int) -> int:
        """A read the CPU skipped under `read_horizon`: its answer (the same when asked again for the
        same cycle); it clears nothing the horizon does not allow."""
        ...

    def skip_reads(self, address: int, first: int, period: int, count: int) -> None:
        """Reads skipped under `read_horizon` that no one is told of: what the `peek` of the last one
        depends on."""
        ...

    def peek_reads(self, address: int, first: int, period: int, count: int) -> list[int]:
        """`peek` of `count` reads skipped under `read_horizon`, every `period` cycles from `first`, in
        one call (a chip can value them without drawing each one)."""
        ...

    def read_horizon(self, address: int, cycle: int, mask: int = 0xFF) -> int:
        """First cycle after a read at `cycle` at which reading `address` again might differ in `mask`."""
        ...

    def set_lum(self, bright: bool, cycle: int) -> None:
        """P17 (luminance) changed."""
        ...

    def t1(self, cycle: int) -> bool:
        """The T1 input sampled at `cycle`."""
        ...

    def next_t1_change(self, cycle: int) -> int:
        """A cycle > `cycle` not later than the first one at which t1() differs from t1(cycle)."""
        ...

    def t1_edges(self) -> T1Edges:
        """T1 falling edges as the 8048's event counter counts them."""
        ...

    def irq(self, cycle: int) -> bool:
        """/INT as an instruction starting at `cycle` sees it."""
        ...

    def next_irq_event(self, cycle: int) -> int:
        """First instruction-start cycle > `cycle` at which /INT can rise without CPU action."""
        ...

    def run_to(self, cycle: int) -> None:
        """Catch up timer events and finished frames to `cycle`."""
        ...

    def frame_end_cycle(self, frame: int) -> int:
        """First cycle at which frame `frame` (0-based from power-on) is complete."""
        ...

    def state(self) -> dict[str, Any]: ...

    def load_state(self, state: dict[str, Any]) -> None: ...

    def state_problems(self, state: dict[str, Any], frame: int) -> list[str]:
        """Why `state` (from `state()`) cannot be the chip at the end of console frame `frame`."""
        ...
