"""Seeded deviations of the simulated console, to prove that the frame-by-frame check finds them.

The simulated adapter's console is our reference emulator, so a check of `sim` is equal by
construction. `sim?deviation=NAME&frame=F&seed=S` makes its console differ in one way from video
frame F on (the table `deviations.tsv` lists them); `Deviation.injected` then holds the video frame
and cycle where it took effect, for tests to compare with the check's first divergence.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import Cartridge
from hilbridge.machine.console import P1_EXTERNAL_DISABLE, P1_RAM_DISABLE, P1_VDC_DISABLE, Console

DAA_OPCODE = 0x57
C_FLAG, AC_FLAG = 0x80, 0x40


@dataclass(frozen=True, slots=True)
class DeviationInfo:
    name: str
    visible: bool  # the changed event is itself on the slot
    what: str


def _load_table() -> dict[str, DeviationInfo]:
    text = resources.files(__package__).joinpath("deviations.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    return {name: DeviationInfo(name, visible == "1", what) for name, visible, what in rows[1:]}


DEVIATIONS: dict[str, DeviationInfo] = _load_table()


@dataclass(slots=True)
class Deviation:
    """What to change (`name`), from which video frame, with which seed; `injected` once it happened."""

    name: str
    frame: int = 0
    seed: int = 0
    injected: tuple[int, int] | None = None  # (video frame, cycle)

    def __post_init__(self) -> None:
        if self.name not in DEVIATIONS:
            raise HilbridgeError(
                f"unknown deviation {self.name!r}", hint="deviations: " + ", ".join(DEVIATIONS)
            )
        if self.frame < 0 or self.seed < 0:
            raise HilbridgeError("deviation frame and seed must be >= 0")

    @classmethod
    def parse(cls, name: str, frame: str = "0", seed: str = "0") -> Deviation:
        try:
            return cls(name, int(frame or 0), int(seed or 0))
        except ValueError:
            raise HilbridgeError(f"deviation frame {frame!r} and seed {seed!r} must be numbers") from None

    @property
    def nth(self) -> int:
        """Which eligible event (from 1) a visible deviation changes."""
        return self.seed % 4 + 1

    @property
    def bit(self) -> int:
        return 1 << (self.seed % 8)

    @property
    def late_cycles(self) -> int:
        return self.seed % 8 + 1


class DeviantConsole(Console):
    """A console that deviates from the emulator as `deviation` says (and is otherwise the same)."""

    def __init__(self, cart: Cartridge, deviation: Deviation, **options) -> None:
        super().__init__(cart, **options)
        self.deviation = deviation
        self._seen = 0
        self._irq_late = 0
        self._daa_original = self.cpu.handlers[DAA_OPCODE]

    def _frame_of(self, cycle: int) -> int:
        frame = self.frame
        while frame and cycle < self.frame_end_cycle(frame - 1):
            frame -= 1
        while cycle >= self.frame_end_cycle(frame):
            frame += 1
        return frame

    def _inject(self, cycle: int) -> None:
        self.deviation.injected = (self._frame_of(cycle), cycle)

    def _eligible_write(self, address: int, cycle: int) -> bool:
        """Whether this write is the one a visible deviation changes."""
        deviation = self.deviation
        if deviation.injected or self._frame_of(cycle) < deviation.frame:
            return False
        p1 = self.p1
        if p1 & P1_EXTERNAL_DISABLE:
            return False  # copy mode: not on the slot
        if deviation.name == "vdc_bit_flip" and p1 & P1_VDC_DISABLE:
            return False
        if deviation.name == "ram_bit_flip" and (p1 & P1_RAM_DISABLE or address >= 0x80):
            return False
        self._seen += 1
        return self._seen == deviation.nth

    def movx_write(self, address: int, value: int, cycle: int) -> None:
        name = self.deviation.name
        if name in ("vdc_bit_flip", "write_dropped", "ram_bit_flip") and self._eligible_write(address, cycle):
            self._inject(cycle)
            if name == "write_dropped":
                return
            value ^= self.deviation.bit
        super().movx_write(address, value, cycle)

    # -- internal deviations, switched on at a frame start -------------------------------------------
    def run_frames(self, frames: int = 1) -> None:
        for _ in range(frames):
            self._switch_on()
            super().run_frames(1)

    def _switch_on(self) -> None:
        deviation = self.deviation
        if deviation.injected or self.frame < deviation.frame:
            return
        cpu = self.cpu
        if deviation.name == "timer_late" and cpu.timer_mode != 0:
            cpu.timer_base += 1
            cpu._update_timer_event()
            cpu.stop = 0
            self._inject(cpu.cycle)
        elif deviation.name == "irq_late":
            self._irq_late = deviation.late_cycles
            cpu.stop = 0
            self._inject(cpu.cycle)
        elif deviation.name == "daa_rule":
            cpu.replace_handler(DAA_OPCODE, self._daa_other_rule)

    def _daa_other_rule(self, pc: int, cycle: int) -> int:
        """DA A whose +06h step sets C from its own carry, clearing it when there is none."""
        cpu = self.cpu
        a, psw = cpu.a, cpu.psw
        if (a & 0x0F) > 9 or psw & AC_FLAG:
            psw = psw | C_FLAG if a > 0xF9 else psw & ~C_FLAG
            a = (a + 6) & 0xFF
        if (a & 0xF0) > 0x90 or psw & C_FLAG:
            a = (a + 0x60) & 0xFF
            psw |= C_FLAG
        mame_result = self._daa_original(pc, cycle), cpu.a, cpu.psw
        if (a, psw) != mame_result[1:]:
            cpu.a, cpu.psw = a, psw
            if not self.deviation.injected:
                self._inject(cycle)
        return mame_result[0]

    def irq(self, cycle: int) -> bool:
        late = self._irq_late
        return self.vdc.irq(cycle - late) if late and cycle >= late else self.vdc.irq(cycle)

    def next_irq_event(self, cycle: int) -> int:
        late = self._irq_late
        if not late:
            return self.vdc.next_irq_event(cycle)
        return self.vdc.next_irq_event(max(0, cycle - late)) + late


class DeviantConsoleFactory:
    """Makes the simulated adapter's capture console (`factory(cart, region=...)`); keeps the
    deviation so that whoever built the device can read `deviation.injected` afterwards."""

    def __init__(self, deviation: Deviation) -> None:
        self.deviation = deviation

    def __call__(self, cart: Cartridge, **options) -> Console:
        return DeviantConsole(cart, self.deviation, **options)


def deviant_console(deviation: Deviation) -> DeviantConsoleFactory:
    return DeviantConsoleFactory(deviation)
